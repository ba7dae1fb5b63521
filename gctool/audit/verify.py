"""``verify``: does every set of s stragglers leave survivors that decode exactly?

Order of work (``method="auto"``):

1. cheap checks: column support, all n workers, rank bound (each counterexample is confirmed
   by the direct decoder);
2. structural certificate (BCH bound for cyclic codes over GF(q));
3. a reduced enumeration: row classes (FRC groups), rotation orbits, or every set;
4. each enumerated set is decided by the left-null-space kernel (s x d systems) or the direct
   decoder, whichever is cheaper, in chunks over ``jobs`` processes.

``method="exhaustive"`` skips 1-3 and checks every set in lexicographic order (the
counterexample is then the lexicographically first failing set); ``method="structural"``
only accepts a certificate.  ``sample=N`` checks N random sets: a failure is a real
counterexample, but no failure is only "inconclusive" (never ok).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from math import comb, nan
from typing import Any

import numpy as np

from gctool.audit import certificates as cert
from gctool.audit import nullspace as ns
from gctool.audit.checks import Progress, check_s
from gctool.audit.sweep import Accumulator, OrbitSource, SweepWorker
from gctool.audit.symmetry import Rotation, count_candidates, count_orbits, find_rotation
from gctool.decode import DEFAULT_TOL, Decoder
from gctool.engine.enumeration import MAX_RANKABLE, rank_ranges, survivors_of
from gctool.engine.parallel import resolve_jobs
from gctool.engine.sweep import LexSource, Runner, SampleSource, run_folded
from gctool.errors import BudgetExceeded, InvalidInput, SearchInterrupted
from gctool.limits import (
    DEFAULT_MAX_SETS,
    RATIONAL_OP_COST,
    check_work,
    max_work,
    solve_cost,
)
from gctool.model import GradientCode
from gctool.numerics import check_tol
from gctool.reports import Diagnostics, VerifyReport

METHODS = ("auto", "exhaustive", "structural")
#: default budget (gctool.limits.DEFAULT_MAX_SETS, also the CLI's --max-sets default): about
#: a minute on two cores with the direct decoder at n ~ 30, seconds with the nullspace kernel
KERNELS = ("auto", "nullspace", "direct")
PILOT = 512  # sets in the first (timed) chunk
PARALLEL_MIN_S = 1.0  # below this estimated single-process time, do not start processes


@dataclass
class _State:
    """Progress of a run, for the interrupt summary."""

    total: int
    s: int
    checked: int = 0
    represented: int = 0

    def summary(self) -> str:
        return (f"interrupted after checking {self.checked:,} of {self.total:,} straggler sets "
                f"(size {self.s}; {self.represented:,} covered); no verdict")


def verify(  # noqa: PLR0913 (the options of gctool verify)
    code: GradientCode,
    s: int | None = None,
    *,
    tol: float = DEFAULT_TOL,
    max_sets: int = DEFAULT_MAX_SETS,
    progress: Progress | None = None,
    method: str = "auto",
    kernel: str = "auto",
    jobs: int | None = 1,
    sample: int | None = None,
    seed: int | None = None,
    exact: bool = False,
    runner: Runner | None = None,
) -> VerifyReport:
    """Decide whether ``code`` tolerates any ``s`` stragglers (default: the code's own s).

    ``jobs`` processes share the enumeration (``None`` or 0: every core); the result does
    not depend on it.  ``runner`` runs the enumeration elsewhere instead (a
    :class:`gctool.audit.distributed.DaskRunner`; same results).  ``exact=True`` decides
    real codes with integer or rational entries in exact rational arithmetic.  Over GF(q)
    every decision is exact; over R/C it follows the tolerance policy of
    :mod:`gctool.decode` and reports diagnostics."""
    s = code.s if s is None else s
    check_s(s, code.n)
    if method not in METHODS:
        raise InvalidInput(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    if kernel not in KERNELS:
        raise InvalidInput(f"kernel must be one of {', '.join(KERNELS)}, got {kernel!r}")
    if sample is not None and (sample < 1 or method != "auto"):
        raise InvalidInput("--sample N needs N >= 1 and the default method")
    run = _Run(code, s, tol, max_sets, progress, method, kernel, resolve_jobs(jobs),
               sample, seed, exact, runner)
    try:
        return run.execute()
    except KeyboardInterrupt:
        raise SearchInterrupted(run.state.summary()) from None


@dataclass
class _Fold:
    """The run's fold: the accumulator, plus the run's counters and progress."""

    run: _Run
    acc: Accumulator

    def merge(self, chunk: Any) -> bool:
        return self.run.fold(self.acc, chunk)


@dataclass
class _Run:
    code: GradientCode
    s: int
    tol: float
    max_sets: int
    progress: Progress | None
    method: str
    kernel_name: str
    jobs: int
    sample: int | None
    seed: int | None
    exact: bool
    runner: Runner | None = None
    start: float = field(default_factory=time.perf_counter)
    notes: list[str] = field(default_factory=list)
    #: symmetry reductions not used because they hold only up to round-off (the report's notes)
    symmetry_notes: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.total = comb(self.code.n, self.s)
        self.state = _State(self.total, self.s)
        check_tol(self.tol)
        self.finite = self.code.field.is_finite
        self.numeric = not self.finite and not self.exact
        self._decoder: Decoder | None = None
        self.red: ns.Reduction | None = None
        self.used_jobs = 1  # processes actually used (1 unless the enumeration is split)
        self.progress_total = self.sample if self.sample is not None else self.total

    # -- report helpers ----------------------------------------------------------------------
    def report(self, ok: bool, method: str, reason: str, **kw: Any) -> VerifyReport:
        kw.setdefault("checked", self.state.checked)
        kw.setdefault("represented", self.state.represented)
        kw.setdefault("exact", True)
        kw.setdefault("verdict", "ok" if ok else "fail")
        kw.setdefault("counterexample", None)
        kw.setdefault("notes", list(self.symmetry_notes))
        c = self.code
        exact_arith = self.finite or self.exact
        return VerifyReport(
            ok=ok, s=self.s, n=c.n, k=c.k, field=str(c.field), scheme=c.scheme,
            total=self.total, method=method, reason=reason, jobs=self.used_jobs,
            arithmetic="exact" if self.finite else ("rational" if self.exact
                                                             else "float64"),
            tolerance=None if exact_arith else float(self.tol),
            elapsed_s=time.perf_counter() - self.start, **kw)

    def fails(self, S: list[int]) -> bool:
        """Confirm that straggling S breaks decoding (direct decoder; rational if exact)."""
        arr = np.array([S], dtype=np.intp).reshape(1, len(S))
        if self.exact:
            return not bool(self.make_kernel(self.reduction()).evaluate(arr).ok[0])
        if self.finite:
            return not bool(ns.GFDirectKernel(self.code).evaluate(arr).ok[0])
        return not bool(self.decoder.evaluate(survivors_of(arr, self.code.n)).ok[0])

    @property
    def decoder(self) -> Decoder:
        """The direct floating-point decoder (R/C only; GF(q) never builds a galois field)."""
        if self._decoder is None:
            self._decoder = Decoder(self.code, self.tol)
        return self._decoder

    def finding(self, f: cert.Finding) -> VerifyReport:
        self.state.checked, self.state.represented = 1, 1
        return self.report(False, f.method, f.reason, counterexample=f.stragglers, kernel="direct")

    # -- the pipeline ------------------------------------------------------------------------
    def execute(self) -> VerifyReport:
        cheap = self.method != "exhaustive"
        if self.exact:
            from gctool.audit.rational import check_exact_input

            check_exact_input(self.code)
        rot = None
        if cheap:  # a partition all of whose holders straggle: no linear algebra needed
            early = self.lost_partition()
            if early is not None:
                return early
        if cheap and self.finite:  # the BCH certificate needs the rotation
            rot, note = find_rotation(self.code)
            self.symmetry_notes.extend([note] if note else [])
        if cheap and self.s > 0 and self.sample is None:  # a structural proof first: it
            # needs no O(n^3) reduction (a requested sample is a sample: never "ok")
            early = self.certificate(rot)
            if early is not None:
                return early
        if cheap and not self.finite:  # O(n K) per candidate: after the certificates
            rot, note = find_rotation(self.code)
            self.symmetry_notes.extend([note] if note else [])
        self.check_work()
        early = self.first_checks(cheap)
        if early is not None:
            return early
        red = self.reduction()
        if cheap:
            early = self.shortcuts(red)
            if early is not None:
                return early
        if self.method == "structural":
            raise InvalidInput(
                f"no structural certificate applies to this code at s = {self.s}; use "
                "--method auto (enumeration with symmetry) or --method exhaustive")
        if self.sample is not None:
            return self.enumerate(red, None)
        if cheap:
            from gctool.audit.classes import try_classes

            rep = try_classes(self, red, rot)
            if rep is not None:
                return rep
        return self.enumerate(red, rot)

    def lost_partition(self) -> VerifyReport | None:
        """The column-support counterexample when every holder of a partition straggles: its
        m pieces are then zero columns of B_F, so each target keeps an error of at least 1 on
        them, a failure over GF(q) and over R/C whenever the tolerance tol * k is below 1 (no
        decoder needed; checked before the work budget, so huge codes get it too)."""
        f = cert.column_support(self.code, self.s)
        if f is None:
            return None
        j = int(np.argmin(self.code.replication))
        if int(self.code.replication[j]) > self.s:
            return None  # fewer than m pieces left: the decoder decides (first_checks)
        if not (self.finite or self.exact or self.tol * self.code.k < 1):
            return None
        return self.finding(f)

    def first_checks(self, cheap: bool) -> VerifyReport | None:
        """Column support, all n workers, and s = 0."""
        if cheap:
            f = cert.column_support(self.code, self.s)
            if f is not None and self.fails(f.stragglers):
                return self.finding(f)
        if self.exact or self.finite:
            full = self.reduction().consistent
        else:
            full = bool(self.decoder.evaluate(np.arange(self.code.n)[None]).ok[0])
        if not full:
            return self.finding(cert.Finding(
                "full-set" if cheap else "exhaustive", list(range(self.s)),
                "even all n workers cannot decode (a target is outside the row space of B), "
                "so every straggler set fails"))
        if self.s == 0:
            self.state.checked = self.state.represented = 1
            return self.report(True, "full-set", "all n workers decode (s = 0)", kernel="direct")
        return None

    def shortcuts(self, red: ns.Reduction) -> VerifyReport | None:
        """Rank bound (a counterexample)."""
        f = cert.rank_bound(self.code, self.s, red.rank)
        if f is not None and self.fails(f.stragglers):
            return self.finding(f)
        return None

    def certificate(self, rot: Rotation | None) -> VerifyReport | None:
        """Structural certificates (proofs that also show that all n workers decode), tried
        before anything that costs O(n^3): the BCH bound (a 4095-worker cyclic-MDS code answers
        at once) and disjoint row classes (FRC groups: a 4096-worker FRC code too)."""
        name, statement = "bch", None if self.exact else cert.bch_certificate(
            self.code, self.s, rot)
        if statement is None and (not self.numeric or self.method == "structural"
                                  or self.reduction_work() > max_work()):
            # over R/C the enumeration also reports the decoding systems' condition numbers
            # (gates need them): the class certificate stands in for it only when the
            # reduction is over the work budget, or when a certificate is asked for
            name, statement = "classes", cert.class_certificate(self.code, self.s)
        if statement is None:
            return None
        return self.report(True, f"certificate:{name}", f"structural certificate: {statement}",
                           certificate=statement, represented=self.total, kernel="none")

    def reduction_work(self) -> int:
        """Estimated work of the reduction of B: one O(n K min(n, K)) factorisation in float64,
        two eliminations over GF(q) (null space, then W), one Gauss-Jordan elimination of
        Python fractions with ``--exact`` (:data:`gctool.limits.RATIONAL_OP_COST` each)."""
        n, K = self.code.B.shape
        if self.exact:
            return (n + 1) * K * max(1, min(n, K)) * RATIONAL_OP_COST
        return solve_cost(n, K, self.finite) * (2 if self.finite else 1)

    def check_work(self) -> None:
        """Refuse, before it starts, a reduction of B (which every method but a certificate
        needs) above the work budget."""
        n, K = self.code.B.shape
        check_work(f"verify (n={n}, k*m={K}, {self.code.field}): reducing B",
                   self.reduction_work(),
                   "no structural certificate (BCH bound, disjoint row classes) applies; "
                   "verify a smaller code, or raise --max-work")
        from gctool.limits import check_memory

        # B and its factors (U, V^T, the null space and W): about five n x K arrays (objects
        # of ~100 bytes per fraction with --exact)
        item = 100 if self.exact else np.dtype(self.code.field.dtype).itemsize
        check_memory(f"verify (n={n}, k*m={K}, {self.code.field}): reducing B",
                     5 * n * K * item, "verify a smaller code")

    def reduction(self) -> ns.Reduction:
        """W and the left null space N, computed once."""
        if self.red is None:
            if self.exact:
                from gctool.audit.rational import reduce_rational

                self.red = reduce_rational(self.code)
            elif self.finite:
                self.red = ns.reduce_gf(self.code)
            else:
                self.red = ns.reduce_float(self.code, self.tol)
        return self.red

    def make_kernel(self, red: ns.Reduction) -> Any:
        if self.exact:
            from gctool.audit.rational import RationalKernel

            return RationalKernel(self.code, red)
        direct = (ns.GFDirectKernel(self.code) if self.finite
                  else ns.DirectKernel(self.code, self.tol))
        if self.kernel_name == "direct" or red.d < self.s:
            return direct
        cheaper = ns.cost_nullspace(red, self.s, self.code.m) < ns.cost_direct(self.code, self.s)
        if self.kernel_name == "auto" and not cheaper:
            return direct
        if self.finite:
            return ns.GFNullKernel(self.code, red)
        return ns.FloatNullKernel(self.code, self.tol, red)

    # -- enumeration ---------------------------------------------------------------------------
    def enumerate(self, red: ns.Reduction, rot: Rotation | None) -> VerifyReport:
        n, s = self.code.n, self.s
        kernel = self.make_kernel(red)
        size = kernel.chunk_size(s)
        source: Any
        if self.sample is not None:
            source, stop, evaluations = SampleSource(n, s, self._seed()), self.sample, self.sample
        elif rot is not None:
            source, size = OrbitSource(n, s, rot), size * max(1, min(s, 8))
            stop, evaluations = count_candidates(n, s, rot.t), count_orbits(n, s, rot.t)
        else:
            source, stop, evaluations = LexSource(n, s), self.total, self.total
        worker = SweepWorker(source, kernel, self.numeric)
        pilot = min(stop, PILOT, size)  # the first chunk is timed for the estimate
        ntasks = 1 + -(-(stop - pilot) // size)
        if evaluations > self.max_sets:  # time a few sets (when they can be ranked), refuse
            per_set = self.time_probe(worker, min(pilot, 8)) if stop <= MAX_RANKABLE else nan
            self.check_budget(evaluations, self.estimate(evaluations, per_set, ntasks), rot)
        tasks = [(0, 0, pilot)]
        tasks += [(i + 1, a, b) for i, (a, b) in enumerate(rank_ranges(pilot, stop, size))]
        acc = Accumulator()
        t0 = time.perf_counter()
        first = worker.run(tasks[0])
        per_set = (time.perf_counter() - t0) / max(1, first.evaluated)
        estimate = self.estimate(evaluations, per_set, len(tasks))
        self.fold(acc, first)
        self.used_jobs = estimate["jobs"]
        if acc.fail_set is None and len(tasks) > 1:
            run_folded(worker, tasks[1:], _Fold(self, acc), jobs=self.used_jobs,
                       runner=self.runner)
        reduction = None
        if rot is not None:
            reduction = {"kind": "rotation", "t": rot.t, "column_shift": rot.c,
                         "group_order": rot.order, "unimodular": rot.unimodular,
                         "checked": evaluations, "represents": self.total,
                         "factor": round(self.total / max(1, evaluations), 2)}
        return self.enumeration_report(acc, red, rot, kernel, estimate, reduction)

    @staticmethod
    def time_probe(worker: SweepWorker, count: int) -> float:
        t0 = time.perf_counter()
        probe = worker.run((0, 0, count))
        return (time.perf_counter() - t0) / max(1, probe.evaluated)

    def _seed(self) -> int:
        if self.seed is None:
            from gctool.seeds import fresh_seed

            self.seed = fresh_seed()
        return self.seed

    def fold(self, acc: Accumulator, chunk: Any) -> bool:
        stop = acc.merge(chunk)
        self.state.checked, self.state.represented = acc.evaluated, acc.weight
        if self.progress is not None:
            self.progress(min(acc.weight, self.progress_total), self.progress_total)
        return stop

    def estimate(self, evaluations: int, per_set: float, tasks: int) -> dict[str, Any]:
        jobs = max(1, min(self.jobs, tasks - 1))  # the pilot task runs alone
        if per_set * evaluations < PARALLEL_MIN_S:
            jobs = 1  # starting processes would cost more than it saves
        return {"sets": evaluations, "seconds": round(per_set * evaluations / jobs, 3),
                "jobs": jobs, "seconds_per_set": per_set}

    def check_budget(self, evaluations: int, est: dict[str, Any], rot: Rotation | None) -> None:
        """Refuse a run above the budget, with the estimate and the options."""
        what = f"{evaluations:,} straggler sets" + (
            f" (one per rotation orbit of the {self.total:,})" if rot is not None else "")
        sec = est["seconds"]
        when = (f", estimated {sec:.3g} s on {est['jobs']} process(es)" if sec == sec
                else " (too many to time)")
        raise BudgetExceeded(
            f"verify (n={self.code.n}, s={self.s}) needs {what}{when}, above the budget of "
            f"{self.max_sets:,} sets; options: raise --max-sets, check a random sample with "
            "--sample N (heuristic, never 'ok'), or --method structural when a certificate "
            "applies")

    def enumeration_report(self, acc: Accumulator, red: ns.Reduction, rot: Rotation | None,
                           kernel: Any, estimate: dict[str, Any] | None,
                           reduction: dict[str, Any] | None, method: str | None = None
                           ) -> VerifyReport:
        from gctool.audit.diagnostics import finish_diagnostics

        diag, warnings = (finish_diagnostics(self, acc, red, rot) if self.numeric
                          else (Diagnostics(), []))
        if method is None:
            method = ("sample" if self.sample is not None else "exhaustive"
                      if self.method == "exhaustive" else "symmetry" if rot is not None
                      else "enumeration")
        kw: dict[str, Any] = dict(diagnostics=diag, warnings=warnings, reduction=reduction,
                                  kernel=kernel.name, estimate=estimate)
        if self.sample is not None:
            kw["sample"] = {"requested": self.sample, "seed": self.seed}
        S = acc.fail_set
        if S is not None:
            return self.report(False, method, f"straggler set {S} leaves survivors that cannot "
                               "decode", counterexample=S, **kw)
        if self.sample is not None:
            return self.report(False, method, f"no counterexample among {acc.evaluated:,} random "
                               f"straggler sets out of {self.total:,}; this is not a certificate",
                               exact=False, verdict="inconclusive", **kw)
        if reduction is not None:
            return self.report(True, method, f"{acc.evaluated:,} checked set(s) standing for all "
                               f"{self.total:,} straggler sets of size {self.s} leave decodable "
                               "survivors", **kw)
        return self.report(True, method, f"all {self.total:,} straggler sets of size {self.s} "
                           "leave decodable survivors", **kw)
