"""The state of one ``verify`` run (:class:`Run`): the request, the counters, the reduction of B
computed once, the kernel choice, the fold of chunk summaries and the report builder.  The
stages (:mod:`~gctool.audit.verify.shortcuts`, :mod:`~gctool.audit.verify.classes`,
:mod:`~gctool.audit.verify.enumeration`, :mod:`~gctool.audit.verify.diagnostics`) are
functions of the run; :mod:`~gctool.audit.verify.pipeline` calls them in order."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from math import comb
from typing import Any

import numpy as np

from gctool.algebra.linalg import elimination_cost, rank_bound
from gctool.audit import certificates as cert
from gctool.audit import nullspace as ns
from gctool.audit.checks import Progress
from gctool.audit.chunks import Accumulator, Kernel
from gctool.budget import RATIONAL_OP_COST, START_NS, Budget, Meter
from gctool.decode import Decoder
from gctool.decode.cost import spectral_cost
from gctool.engine.enumeration import survivors_of
from gctool.engine.sweep import Runner
from gctool.model import GradientCode
from gctool.reports import VerifyReport
from gctool.request import VerifyRequest


@dataclass
class State:
    """Progress of a run, for the interrupt summary."""

    total: int
    s: int
    checked: int = 0
    represented: int = 0

    def summary(self) -> str:
        return (f"interrupted after checking {self.checked:,} of {self.total:,} straggler sets "
                f"(size {self.s}; {self.represented:,} covered); no verdict")


@dataclass
class Run:
    """One run: the code, the request (:class:`gctool.request.VerifyRequest`), the s and the
    number of processes it resolved to, and the run's state."""

    code: GradientCode
    request: VerifyRequest
    s: int
    jobs: int
    start: float = field(default_factory=time.perf_counter)
    notes: list[str] = field(default_factory=list)
    #: symmetry reductions not used because they hold only up to round-off (the report's notes)
    symmetry_notes: list[str] = field(default_factory=list)
    #: the structural certificates' stage (:func:`gctool.audit.verify.shortcuts.certificate`):
    #: None before it runs (or when it does not), "tried" once every certificate that applies
    #: was tried or did not fit, "deferred" when over R/C the class certificate waits for the
    #: reduction of B to be over the budget (:func:`~gctool.audit.verify.shortcuts.
    #: deferred_certificate`); the reduction's refusal words what was tried from it
    certificates: str | None = None
    #: the code's row classes with their note (:func:`gctool.row_classes.find_row_classes`),
    #: found once per run (:meth:`row_classes`): by the class certificate, else by the class
    #: patterns (:func:`~gctool.audit.verify.classes.try_classes`), which reuse them
    classes: tuple[list[list[int]], str | None] | None = None

    def __post_init__(self) -> None:
        r = self.request
        self.tol, self.method, self.kernel_name = r.tolerance, r.method, r.kernel
        #: what the run may spend (within a shared run: what its earlier parts left)
        self.budget: Budget = r.effective_budget.current()
        self.progress: Progress | None = r.progress
        self.sample, self.seed, self.exact = r.sample, r.seed, r.exact
        self.runner: Runner | None = r.runner
        self.total = comb(self.code.n, self.s)
        self.state = State(self.total, self.s)
        self.finite = self.code.field.is_finite
        self.numeric = not self.finite and not self.exact
        self._decoder: Decoder | None = None
        #: the run's work meter (an enumeration's from its admission on, see
        #: :func:`~gctool.audit.verify.enumeration.enumerate_sets`): its decoders charge it the
        #: time of the sets float64 cannot decide
        self.meter: Meter = self.budget.meter(self.what, "raise `max_work`")
        self.red: ns.Reduction | None = None
        #: the bound on B's rank that the GF(q) reduction's estimate uses, read once
        #: (:meth:`reduction_work`)
        self._pivots: int | None = None
        self.used_jobs = 1  # processes actually used (1 unless the enumeration is split)
        #: what the enumeration costs besides its sets, in ns on no job's share
        #: (:func:`gctool.budget.start_ns`, set when its kernel is made: loading compiled
        #: kernels in a process that has run none counts too, in every check of the run)
        self.fixed: float = START_NS
        #: what ``fixed`` counts for a Dask runner's start, in words for a refusal
        #: (:func:`gctool.audit.distributed.start_words`; "": nothing)
        self.started = ""
        #: the full set's Undecided (R/C, s > 0): only a counterexample the direct decoder
        #: confirms may then answer (:func:`gctool.audit.verify.pipeline.settle`)
        self.undecided_full: Exception | None = None
        self.progress_total = self.sample if self.sample is not None else self.total

    @property
    def what(self) -> str:
        """The run, as its refusals name it."""
        return f"verify (n={self.code.n}, s={self.s})"

    def spend(self, work: float) -> None:
        """A stage admitted at ``work`` (ns of one core: its estimate) spends it, with what the
        run's meter charged since the last stage (the exact decisions of sets float64 cannot
        decide, their CPU time): the stages after it get what that leaves of the run's budget
        (:meth:`gctool.budget.Budget.rest`; their refusals name what the earlier stages
        used), and a meter held to it."""
        self.budget = self.budget.rest(work + self.meter.spent)
        self.meter = self.budget.meter(self.what, "raise `max_work`")

    def row_classes(self) -> list[list[int]]:
        """The code's row classes, found once per run (:attr:`classes`); the stage that finds
        them first is charged their estimate (the class certificate's,
        :func:`gctool.audit.certificates.class_cost`, or the class patterns',
        :func:`~gctool.audit.certificates.row_classes_cost`)."""
        if self.classes is None:
            from gctool.row_classes import find_row_classes

            self.classes = find_row_classes(self.code)
        return self.classes[0]

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
        self._decoder.meter = self.meter
        return self._decoder

    def finding(self, f: cert.Finding) -> VerifyReport:
        self.state.checked, self.state.represented = 1, 1
        return self.report(False, f.method, f.reason, counterexample=f.stragglers, kernel="direct")

    def fold(self, acc: Accumulator, chunk: Any) -> bool:
        """Merge a chunk summary into ``acc``; update the counters and the progress."""
        from gctool._signals import checkpoint

        checkpoint()  # an interrupt a library swallowed stops the run here
        stop = acc.merge(chunk)
        self.state.checked, self.state.represented = acc.evaluated, acc.weight
        if self.progress is not None:
            self.progress(min(acc.weight, self.progress_total), self.progress_total)
        return stop

    # -- the reduction of B and the kernel -----------------------------------------------------
    def reduction_work(self) -> int:
        """Estimated work of the reduction of B: one SVD in float64 with its square U
        (:func:`~gctool.decode.cost.spectral_cost`),
        one Gauss-Jordan elimination of Python fractions with ``exact`` (:data:`RATIONAL_OP_COST`
        each), and over GF(q) the one elimination of :func:`~gctool.audit.nullspace.reduce_gf`
        ([B^T | T^T], K x (n + m): the null space and W) at
        :func:`~gctool.algebra.linalg.elimination_cost` with the pivots bounded by B's distinct
        rows and columns (:func:`~gctool.algebra.linalg.rank_bound`)."""
        n, K = self.code.B.shape
        if self.exact:
            return (n + 1) * K * max(1, min(n, K)) * RATIONAL_OP_COST
        if self.finite:
            if self._pivots is None:
                self._pivots = rank_bound(np.asarray(self.code.B))
            fld, pivots = self.code.field, self._pivots
            return int(elimination_cost(K, n + self.code.m, fld, pivots))
        return int(spectral_cost(n, K, self.code.field.kind == "complex"))

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

    def make_kernel(self, red: ns.Reduction) -> Kernel:
        if self.exact:
            from gctool.audit.rational import RationalKernel

            return RationalKernel(self.code, red)
        direct = (ns.GFDirectKernel(self.code) if self.finite
                  else ns.DirectKernel(self.code, self.tol, meter=self.meter))
        if self.kernel_name == "direct" or red.d < self.s:
            return direct
        cheaper = ns.cost_nullspace(red, self.s, self.code.m) < ns.cost_direct(self.code, self.s)
        if self.kernel_name == "auto" and not cheaper:
            return direct
        if self.finite:
            return ns.GFNullKernel(self.code, red)
        kernel = ns.FloatNullKernel(self.code, self.tol, red, run_floors=True)  # this run's
        kernel.direct.meter = self.meter  # the judge of its doubtful sets
        return kernel

    def sample_seed(self) -> int:
        """The seed of ``sample`` (a fresh one, recorded, when none was given)."""
        if self.seed is None:
            from gctool.seeds import fresh_seed

            self.seed = fresh_seed()
        return self.seed
