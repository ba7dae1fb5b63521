"""Spectral audit of encoded-optimization frames (scheme ``encoded``, :mod:`gctool.codes.encoded`):
the spectrum of one straggler set, the worst over s stragglers and the curve over s
(``verify`` and ``bound`` on top of them: :mod:`gctool.audit.frames`).

For a straggler set with survivors F, the audited matrix is ``M_F = (k/|F|) S_F^T S_F``
(= S_F^T S_F / (beta eta) with beta = n/k, eta = |F|/n; mean eigenvalue 1 for unit-norm rows),
and ``eps_F = max(1 - lambda_min(M_F), lambda_max(M_F) - 1)``.  The worst case over all sets of
s stragglers is found by enumerating them with :mod:`gctool.engine.enumeration` (ranked, chunked,
lexicographic; the first set reaching the maximum is the witness): **exact** when every set was
evaluated, **heuristic** when only ``sample`` random sets were (then the result is a lower bound
on the worst epsilon, reported with a proved upper bound).

Per batch, eigenvalues come from one of two identities: ``S_F^T S_F = G - S_S^T S_S`` with
G = S^T S.  When G = cI up to float64 round-off (tight frames) and s < k, the eigenvalues are c
(k - s times) and c minus the eigenvalues of the s x s Gram matrix of the straggling rows, so a
batch costs s x s eigenproblems; otherwise the k x k matrices are formed.

Proved upper bound (Weyl + Gershgorin, any frame): ``S_F^T S_F <= G`` gives
``lambda_max <= lambda_max(G)``, and ``lambda_min >= lambda_min(G) - mu`` with mu bounding the
largest eigenvalue of any s x s Gram matrix of rows: ``max_i (||s_i||^2 + sum of the s - 1
largest |<s_i, s_j>|)`` (Gershgorin), or the sum of the s largest ``||s_i||^2`` (trace).  For an
ETF with unit rows and coherence mu_c this is ``beta - 1 - (s - 1) mu_c``.

Large enumerations (:func:`gctool.audit.kernels.wanted`: C(n, s) of at least
:data:`~gctool.audit.kernels.MIN_SETS` sets, or ``GCTOOL_COMPILED=1``) are walked by the compiled
kernel of :mod:`gctool.audit.kernels.spectra`: each worker thread (or Dask worker) forms each
set's matrix, takes its eigenvalues (:mod:`gctool.audit.kernels.symeig`'s loops, LAPACK's
``syevd`` for large sides) and keeps only its chunk's three picks, without the GIL; the
caller's fold merges three picks per chunk.  Smaller ones
take numpy's batched ``eigvalsh`` (the s x s Grams gathered from S S^T).

**One route states the numbers.**  Eigenvalues from different routes (the compiled walk,
numpy's batches, a Gram gathered from S S^T or formed from the rows) differ in the last bits.
So an enumeration only *chooses* the sets (the first in lexicographic order reaching the
largest epsilon, the smallest lambda_min and the largest lambda_max, in its route's
arithmetic), and the report's epsilon, lambda_min and lambda_max are recomputed for those
three sets by :meth:`Frame.eigenvalues`, one set at a time, exactly as :func:`set_spectrum`
computes a set: ``attack --set`` of the worst set shows the reported epsilon bit for bit.
Every route is backward stable (the eigenvalues of a matrix within a small multiple of
k eps ||G||_2 of the exact S_F^T S_F: tests/audit/test_frame_spectra.py checks 4 k eps ||G||_2
against rational arithmetic), so a stated epsilon is within twice that bound of the largest
over the sets, whichever route chose; among sets tied to within rounding (an ETF's sets tie
exactly) the compiled and the numpy route may name different, equally worst, sets.  The picks,
and so the report, are the same for every ``jobs`` and executor (the route depends on C(n, s)
and ``GCTOOL_COMPILED`` only, and is chosen in the caller; chunks do not change a pick).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from dataclasses import field as dc_field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from gctool.audit.checks import check_s, curve_sizes
from gctool.audit.distributed import ran_on, start_words, with_start, workers_start_ns
from gctool.audit.kernels import SPECTRA, private
from gctool.audit.outcome import WorstOutcome
from gctool.budget import Budget, eigvalsh_cost, start_ns
from gctool.codes.frame_spectra import Analysis, epsilon_of
from gctool.codes.frame_spectra import epsilon_upper_bound as epsilon_upper_bound  # re-exported
from gctool.engine.enumeration import count_sets, sample_sets, unrank_one
from gctool.engine.records import Checked, Record
from gctool.engine.sweep import LexSource, ListSource, Task, rank_tasks, run_folded
from gctool.engine.threads import HALT_BATCH_NS, halt_flag, raise_if_halted, run_threads
from gctool.errors import BudgetExceeded, InvalidInput, SearchInterrupted
from gctool.limits import DEFAULT_SAMPLES, SPECTRUM_MAX_SETS
from gctool.model import GradientCode
from gctool.numerics import EPS
from gctool.reports import Report

if TYPE_CHECKING:
    from gctool.engine.sweep import Runner

Progress = Callable[[int, int], None]
#: float entries handled per batch (b x k x k or b x s x s)
_BATCH_ENTRIES = 1 << 21
#: estimated work of one task of the compiled walk, in ns (a few ms: the fold's and a Dask
#: task's overheads stay small beside it, and threads finish together) ...
COMPILED_TASK_NS = 20_000_000
#: ... in at least this many sets
COMPILED_CHUNK_MIN = 256
#: a set's share of numpy's batched route besides its multiply-adds and eigenvalues
#: (:meth:`Frame.set_work`), in ns: its rows gathered, the batch's calls.  With
#: :func:`gctool.budget.eigvalsh_cost`, measured / estimated CPU time per set (best of 3, one
#: BLAS thread, one core of the 2-core development machine under load): Gaussian k = 10-400,
#: s = 1-3 (6 us-8.2 ms) 0.70-1.2; tight (s x s Grams) k = 20-200, s = 2-30 (1-75 us)
#: 0.4-0.9.  FAST_SET_COST (2.5 us) and an SVD's time for the eigenvalues read 0.16-0.6 on
#: the tight frames' sets and 0.34-0.37 from k = 100 on (2.2 at k = 20)
NUMPY_SET_NS = 500


#: largest sum of squared row norms of an audited frame: it bounds every entry and eigenvalue
#: of S^T S and of each S_F^T S_F, which then stay far inside float64's range
MAX_GRAM = 2.0**1000


def frame_matrix(code: GradientCode) -> np.ndarray:
    """S as float64, refused (one line) when it is not a real frame or when S^T S would leave
    float64's range (the spectra of M_F are not scale-free: a frame has rows of norm about 1)."""
    if code.field.kind != "real" or code.m != 1:
        raise InvalidInput("the spectral audit needs a real frame (scheme 'encoded')")
    S = np.asarray(code.B, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        total = float(np.einsum("ij,ij->", S, S))
    if not total <= MAX_GRAM:  # also inf (and NaN, which the readers refuse anyway)
        size = "beyond float64's range" if not np.isfinite(total) else f"{total:.3g}"
        raise InvalidInput(f"the frame's squared row norms sum to {size}: the eigenvalues of "
                           f"S_F^T S_F (up to that sum) leave float64's range, above "
                           f"{MAX_GRAM:.3g}; the spectra of M_F = (k/|F|) S_F^T S_F are not "
                           "scale-free, so rescale S (an encoded frame has rows of norm about 1)")
    return S


def kappa(eps: float) -> float | None:
    """(1 + eps) / (1 - eps), None when eps >= 1 (no guarantee)."""
    return None if eps >= 1.0 else (1.0 + eps) / (1.0 - eps)


@dataclass
class Frame:
    """A frame S with its analysis (:class:`~gctool.codes.frame_spectra.Analysis`: G = S^T S and its
    eigenvalues, on demand the row Gram of the upper bound), shared by every straggler size
    of one audit."""

    S: np.ndarray
    analysis: Analysis
    c: float
    tight: bool
    #: the audit's budget (:meth:`check`)
    budget: Budget
    #: the compiled walk (:class:`gctool.audit.kernels.spectra.FrameWalk`) once :meth:`plan`
    #: chose it; a copy of the frame (a Dask worker's) walks as the caller planned
    compiled: Any = dc_field(default=None, repr=False)

    @property
    def G(self) -> np.ndarray:
        return self.analysis.G

    @classmethod
    def of(cls, S: np.ndarray, budget: Budget | None = None, rows: bool = False) -> Frame:
        """The frame, its analysis refused above ``budget`` (default :meth:`Budget.default`)
        before it starts (``rows``: the upper bound on epsilon will be needed)."""
        k = S.shape[1]
        budget = Budget.default() if budget is None else budget
        analysis = Analysis.of(S, budget, rows=rows)
        c = float(np.trace(analysis.G)) / k
        ev = analysis.ev
        dev = max(abs(float(ev[-1]) - c), abs(float(ev[0]) - c))  # ||G - cI||_2, G symmetric
        # eigvalsh is backward stable: errors of order k * eps * ||G||; below that scale the
        # deviation from cI cannot be told from round-off, so the s x s route is as accurate
        tight = dev <= 64 * k * EPS * max(c, 1.0)
        return cls(S, analysis, c, tight, budget)

    def _small(self, s: int) -> bool:
        """Do sets of size s take the s x s route (tight frames, 0 < s < k)?"""
        return self.tight and 0 < s < self.S.shape[1]

    def plan(self, s: int, sets: int) -> None:
        """Choose the compiled walk for an enumeration of ``sets`` sets of size s when
        :func:`gctool.audit.kernels.wanted` says so, and compile or load it now (the tight
        frames' s x s Grams are gathered from the row Gram when it exists: :func:`worst_spectrum`
        computes it first; else the walk forms them from the rows)."""
        if self.compiled is None and self.will_compile(s, sets):
            from gctool.audit.kernels.spectra import FrameWalk

            P = self.analysis.rows()[0] if self.analysis.has_rows else None
            self.compiled = FrameWalk(self.S, self.G, P, self.c)
        if self.walks(s):
            self.compiled.warm(s, self._small(s))

    def will_compile(self, s: int, sets: int) -> bool:
        """Will :meth:`plan` choose the compiled walk for ``sets`` sets of size s (decided as
        it does, without compiling anything)?"""
        from gctool.audit.kernels import wanted

        return s > 0 and (self.compiled is not None or wanted(sets))

    def walks(self, s: int) -> bool:
        """Are sets of size s walked by the compiled kernel (planned, s > 0)?"""
        return self.compiled is not None and s > 0

    def eigenvalues(self, St: Sequence[int], norm: float) -> np.ndarray:
        """The ascending eigenvalues of one straggler set's S_F^T S_F times ``norm``: the
        numbers every report states (:func:`set_spectrum`, and the sets an enumeration
        picks, :func:`_restated`).  One set at a time by :meth:`spectra`, its Gram from the
        rows whether S S^T exists or not: the same floats in every audit of the frame."""
        one = np.array([list(St)], dtype=np.intp).reshape(1, len(St))
        return self.spectra(one, gather=False)[0] * norm

    def spectra(self, S_sets: np.ndarray, gather: bool = True) -> np.ndarray:
        """Ascending eigenvalues of S_F^T S_F (un-normalised) for each straggler set, (b, k);
        ``gather``: the tight frames' s x s Grams from S S^T when it exists (else from the
        rows)."""
        n, k = self.S.shape
        b, s = S_sets.shape
        if s == 0:
            return np.broadcast_to(self.analysis.ev, (b, k)).copy()
        if self._small(s):  # the s x s Gram of the straggling rows: from S S^T when known
            if gather and self.analysis.has_rows:
                P = self.analysis.rows()[0]
                gram = P[S_sets[:, :, None], S_sets[:, None, :]]
            else:
                R = self.S[S_sets]  # (b, s, k)
                gram = np.einsum("bik,bjk->bij", R, R)
            mu = np.linalg.eigvalsh(gram)  # ascending (b, s)
            out = np.empty((b, k))
            out[:, :s] = self.c - mu[:, ::-1]
            out[:, s:] = self.c
            return out
        R = self.S[S_sets]  # (b, s, k)
        M = self.G[None, :, :] - np.einsum("bsi,bsj->bij", R, R)
        return np.linalg.eigvalsh(M)

    def _per_set(self, s: int) -> int:
        """Float entries one set of size s holds in a batch: its s x k rows (unless its Gram
        comes from S S^T), its s x s Gram or k x k matrix, and the output row of k
        eigenvalues."""
        k = self.S.shape[1]
        if self._small(s):
            return s * s * 2 + k + (0 if self.analysis.has_rows else s * k)
        return s * k + 2 * k * k + k

    def chunk(self, s: int) -> int:
        """Straggler sets per batch: at most :data:`_BATCH_ENTRIES` float entries (one set at
        least); on the compiled walk, about :data:`COMPILED_TASK_NS` of work."""
        if self.walks(s):
            return max(COMPILED_CHUNK_MIN, int(COMPILED_TASK_NS / self.walk_time(s)))
        return max(1, _BATCH_ENTRIES // self._per_set(s))

    def batch(self, s: int) -> int:
        """Sets of size s per call of :meth:`spectra` in a task of numpy's route: about
        :data:`gctool.engine.threads.HALT_BATCH_NS` of work (:meth:`set_work`), a stopped
        run's task ending between them."""
        return max(1, int(HALT_BATCH_NS // self.set_work(s, self.analysis.has_rows)))

    def walk_time(self, s: int) -> float:
        """Estimated time of the planned compiled walk per set of size s, in ns
        (:func:`gctool.audit.kernels.spectra.walk_cost`)."""
        from gctool.audit.kernels.spectra import walk_cost

        return walk_cost(s, self.S.shape[1], self._small(s), self.compiled.rows)

    def set_work(self, s: int, rows: bool, compiled: bool = False) -> int:
        """Work of one set of size s in a batch (:data:`NUMPY_SET_NS` plus
        its Gram, from S S^T with ``rows``, or its k x k matrix, a multiply-add a ns, and
        LAPACK's eigenvalues, :func:`~gctool.budget.eigvalsh_cost`); with ``compiled``, of the
        compiled walk (:meth:`walk_time`)."""
        k = self.S.shape[1]
        if compiled and s > 0:
            from gctool.audit.kernels.spectra import walk_cost

            return int(walk_cost(s, k, self._small(s), rows))
        if s == 0:
            return NUMPY_SET_NS + k
        if self._small(s):
            return int(NUMPY_SET_NS + k + eigvalsh_cost(s) + (s * s if rows else s * k * (s + 1)))
        return int(NUMPY_SET_NS + s * k * (k + 1) + k * k + eigvalsh_cost(k))

    def batch_memory(self, s: int) -> int:
        """Bytes of one batch at size s (its arrays and the eigen solver's copy)."""
        return 8 * 2 * self.chunk(s) * self._per_set(s)

    def jobs(self, s: int, sets: int, jobs: int | None, runner: Runner | None) -> int:
        """The jobs that will walk ``sets`` sets of size s (the matrix codes' rule,
        :func:`gctool.audit.exhaustive.used_jobs`: every requested one for the compiled walk or
        a runner, and for :data:`~gctool.audit.exhaustive.PARALLEL_MIN_SETS` sets or more;
        else 1)."""
        from gctool.audit.exhaustive import used_jobs

        return used_jobs(sets, jobs or 0, runner, self.will_compile(s, sets))

    def check(self, what: str, sets: dict[int, int], remedy: str, bound: bool = True,  # noqa: PLR0913 (the run's jobs)
              extra_work: int = 0, jobs: int | None = 1, runner: Runner | None = None
              ) -> None:
        """Refuse (one line, before any set is evaluated) an audit of ``sets[s]`` straggler
        sets of each size s whose work or memory is above the budget; ``bound``: the proved
        upper bound on epsilon is computed too (the row Gram, unless it exists).  The sets of
        each size are divided by the jobs that will walk them (:meth:`jobs`, for ``jobs`` and
        ``runner``); the run's start (:func:`~gctool.budget.start_ns`), the analysis and
        ``extra_work`` are on no job's share (:meth:`Budget.check_work`)."""
        n, k = self.S.shape
        rows = bound and any(s > 0 for s in sets) and not self.analysis.has_rows
        with_rows = bound or self.analysis.has_rows
        compiled = any(self.will_compile(s, count) for s, count in sets.items())
        kind = compiled and SPECTRA
        # (a Dask runner's workers load their own kernels: workers_start_ns)
        alone = start_ns(kind) + workers_start_ns(runner, kind) + extra_work
        shared, alone, used = 0.0, float(alone), 1
        for s, count in sets.items():
            work = count * self.set_work(s, with_rows, self.will_compile(s, count))
            on = self.jobs(s, count, jobs, runner)
            if on > 1:
                shared, used = shared + work, on
            else:
                alone += work
        alone += Analysis.work(n, k) - Analysis.work(n, k, rows=False) if rows else 0
        total = sum(sets.values())
        sizes = ", ".join(str(s) for s in sorted(sets)) if len(sets) <= 4 else \
            f"{min(sets)}..{max(sets)}"
        head = f"{what} (n={n}, k={k}, s={sizes}): {total:,} straggler sets"
        self.budget.check_work(with_start(head, start_words(runner, kind)), shared,
                               remedy + ", or raise `max_work`", used, alone)
        memory = max((self.batch_memory(s) for s in sets), default=0)
        memory += Analysis.memory(n, k, rows=rows)
        self.budget.check_memory(head, memory, remedy)


@dataclass
class SpectrumReport(Report):
    """Spectrum of M_F for one straggler set, or the worst case over all sets of a size."""

    mode: str  # "set" or "worst"
    scheme: str
    frame: str | None
    n: int
    k: int
    s: int
    survivors: int
    normalization: float  # beta * eta = |F| / k; M_F = S_F^T S_F / normalization
    stragglers: list[int] | None  # the set (mode set) or the worst set (mode worst)
    epsilon: float
    kappa: float | None
    lambda_min: float
    lambda_max: float
    exact: bool
    method: str  # "direct", "exhaustive" or "sampled"
    checked: int
    total: int
    eigenvalues: list[float] | None = None  # mode set: all k normalised eigenvalues
    lambda_min_stragglers: list[int] | None = None
    lambda_max_stragglers: list[int] | None = None
    upper_bound: float | None = None  # proved: epsilon(true worst) <= upper_bound
    upper_bound_source: str = "Weyl + Gershgorin"
    arithmetic: str = "float64 eigenvalues (numpy.linalg.eigvalsh)"
    seed: int | None = None
    elapsed_s: float = 0.0
    notes: list[str] = dc_field(default_factory=list)
    ok: bool = True  # an audit of a frame measures; it has no verdict to fail

    @property
    def reason(self) -> str:
        if self.mode == "verify":
            if self.ok:
                return (f"every set of {self.s} stragglers keeps the eigenvalues of M_F in "
                        f"[{self.lambda_min:.6g}, {self.lambda_max:.6g}]: epsilon <= "
                        f"{self.epsilon:.6g} < 1, kappa <= {self.kappa:.6g}")
            return "; ".join(self.notes) or "not certified"
        what = "epsilon" if self.mode == "set" else "worst epsilon"
        label = "exact" if self.exact else "heuristic"
        return (f"{what} {self.epsilon:.6g} for stragglers {self.stragglers} "
                f"({label}, {self.checked:,}/{self.total:,} sets)")


@dataclass
class SpectrumCurveReport(Report):
    """:class:`SpectrumReport` (worst mode) for s = 0..max_s."""

    scheme: str
    frame: str | None
    n: int
    k: int
    curve: list[SpectrumReport]
    mode: str = "curve"
    ok: bool = True

    @property
    def reason(self) -> str:
        last = self.curve[-1]
        return f"worst epsilon for s = 0..{last.s}; at s = {last.s}: {last.epsilon:.6g}"


def _base(code: GradientCode, s: int) -> dict[str, Any]:
    f = code.n - s
    return {"scheme": code.scheme, "frame": code.params.get("frame"), "n": code.n, "k": code.k,
            "s": s, "survivors": f, "normalization": f / code.k}


def set_spectrum(code: GradientCode, stragglers: list[int], budget: Budget | None = None
                 ) -> SpectrumReport:
    """The normalised spectrum of S_F^T S_F for the survivors of ``stragglers``."""
    S = frame_matrix(code)
    n = code.n
    st = sorted(set(int(i) for i in stragglers))
    if len(st) != len(stragglers) or any(not 0 <= i < n for i in st):
        raise InvalidInput(f"`straggler_set` must be distinct worker indices in 0..{n - 1}, "
                           f"got {list(stragglers)}", param="straggler_set")
    check_s(len(st), n, "the number of stragglers")
    t0 = time.perf_counter()
    fr = Frame.of(S, budget)
    fr.check("the spectrum of one straggler set", {len(st): 1}, "use a smaller frame",
             bound=False)
    ev = fr.eigenvalues(st, code.k / (n - len(st)))
    eps = float(epsilon_of(ev[0], ev[-1]))
    return SpectrumReport(
        mode="set", **_base(code, len(st)), stragglers=st, epsilon=eps, kappa=kappa(eps),
        lambda_min=float(ev[0]), lambda_max=float(ev[-1]), exact=True, method="direct",
        checked=1, total=1, eigenvalues=[float(x) for x in ev],
        elapsed_s=time.perf_counter() - t0)


@dataclass
class _SpectrumSummary(Checked):
    """One task's extreme sets: (value, set) for the largest epsilon (with its lambda_min and
    lambda_max), the smallest lambda_min and the largest lambda_max (first in the task)."""

    index: int
    checked: int = 0
    picks: list[tuple[str, float, list[int], tuple[float, float]]] = dc_field(
        default_factory=list)

    @classmethod
    def from_record(cls, r: Record) -> _SpectrumSummary:
        """A task read back from a checkpoint, every field checked against the task."""
        r.expect("index", "checked", "picks")
        picks = r.data["picks"]
        if not isinstance(picks, list) or len(picks) > 3:
            raise ValueError("'picks' must be a list of at most 3 picks")
        out = cls(r.index(), r.count("checked"))
        for pick in picks:
            if (not isinstance(pick, list) or len(pick) != 4 or pick[0] not in _PICKS
                    or not isinstance(pick[3], list) or len(pick[3]) != 2):
                raise ValueError("a pick must be [eps|lmin|lmax, value, set, [lmin, lmax]]")
            value, S = r.number("picks", pick[1]), r.straggler_set("picks", pick[2])
            lo, hi = r.number("picks", pick[3][0]), r.number("picks", pick[3][1])
            assert value is not None and S is not None and lo is not None and hi is not None
            out.picks.append((pick[0], value, S, (lo, hi)))
        return out


_PICKS = ("eps", "lmin", "lmax")


@dataclass
class _SpectrumWorker:
    """Normalised spectra of S_F^T S_F for one task's sets (a worker of the enumeration
    engine, :mod:`gctool.engine.sweep`): the compiled walk's picks when the frame planned it
    (:meth:`Frame.plan`), else numpy's batched spectra.  The frame is the worker's ``kernel``:
    what every task (and every size of a curve) shares, which a Dask run ships once per worker
    (:func:`gctool.audit.distributed._split`)."""

    source: Any
    kernel: Frame
    norm: float
    summary_type: ClassVar[type[_SpectrumSummary]] = _SpectrumSummary

    def run(self, task: Task) -> _SpectrumSummary:
        s = self.source.s
        if self.kernel.walks(s):
            return self._walk(task, s)
        out = _SpectrumSummary(task[0])
        batch, _ = self.source.sets(task)
        out.checked = batch.shape[0]
        if not batch.shape[0]:
            return out
        # a batch of about HALT_BATCH_NS of work at a time: a stopped run's task ends between
        # them (halt_flag); each set's eigenvalues are the same floats in any batch
        step, halt, parts = self.kernel.batch(s), halt_flag(), []
        for lo in range(0, batch.shape[0], step):
            raise_if_halted(halt)
            parts.append(self.kernel.spectra(batch[lo:lo + step]))
        ev = np.concatenate(parts) * self.norm
        lmin, lmax = ev[:, 0], ev[:, -1]
        eps = epsilon_of(lmin, lmax)
        for key, arr, pick in (("eps", eps, np.argmax), ("lmin", lmin, np.argmin),
                               ("lmax", lmax, np.argmax)):
            i = int(pick(arr))
            out.picks.append((key, float(arr[i]), batch[i].tolist(),
                              (float(lmin[i]), float(lmax[i]))))
        return out

    def _walk(self, task: Task, s: int) -> _SpectrumSummary:
        """The task's picks from the compiled walk (its rank range walked in place, or the
        given sets), without the GIL; the summary holds the walk's values (the caller
        restates the final picks: :func:`_restated`)."""
        index, start, stop = task
        out = _SpectrumSummary(index, checked=stop - start)
        if stop <= start:
            return out
        walk, small, n = self.kernel.compiled, self.kernel._small(s), self.source.n
        if isinstance(self.source, LexSource):
            vals, at, pairs = walk.walk(s, small, self.norm, private.current(
                unrank_one(n, s, start)), stop - start)
            sets = [unrank_one(n, s, start + a) for a in at]
        else:
            batch, _ = self.source.sets(task)
            vals, at, pairs = walk.sets(batch, small, self.norm)
            sets = [batch[a].tolist() for a in at]
        for pick in zip(_PICKS, vals, sets, pairs, strict=True):
            out.picks.append(pick)
        return out



@dataclass
class _SpectrumFold:
    """The worst epsilon, smallest lambda_min and largest lambda_max over the tasks, in
    order (strict comparisons: the first set reaching each)."""

    best: dict[str, Any] = dc_field(
        default_factory=lambda: {"eps": -np.inf, "lmin": np.inf, "lmax": -np.inf})
    checked: int = 0

    def merge(self, r: _SpectrumSummary) -> bool:
        for key, value, where, pair in r.picks:
            cur = self.best[key]
            if (value > cur) if key != "lmin" else (value < cur):
                self.best[key], self.best[key + "_set"] = value, where
                if key == "eps":
                    self.best["eps_l"] = pair
        self.checked += r.checked
        return False


def _restated(fr: Frame, best: dict[str, Any], norm: float) -> dict[str, Any]:
    """The picks of an enumeration with the values :meth:`Frame.eigenvalues` gives them (the
    route of :func:`set_spectrum`): the report states what ``attack --set`` of each set
    shows, whichever route (the compiled walk, numpy's batches with their Grams gathered
    from S S^T) picked them."""
    out = dict(best)
    for key in _PICKS:
        ev = fr.eigenvalues(best[key + "_set"], norm)
        lo, hi = float(ev[0]), float(ev[-1])
        out[key] = {"eps": float(epsilon_of(lo, hi)), "lmin": lo, "lmax": hi}[key]
        if key == "eps":
            out["eps_l"] = (lo, hi)
    return out


def worst_spectrum(code: GradientCode, s: int, *, max_sets: int = SPECTRUM_MAX_SETS,  # noqa: PLR0913 (the enumeration's options)
                   sample: int | None = None, seed: int = 0,
                   progress: Progress | None = None, jobs: int | None = 1,
                   runner: Runner | None = None, frame: Frame | None = None,
                   extra_work: int = 0, budget: Budget | None = None) -> SpectrumReport:
    """Worst eps_F over every set of s stragglers (exhaustive), or over ``sample`` random sets.

    Without ``sample``, more than ``max_sets`` sets is refused (BudgetExceeded, exit 2), and so
    is a run whose estimated work or memory (the sets, and the upper bound's row Gram; plus
    ``extra_work`` that the caller adds) is above the budget (:meth:`Frame.check`), before any
    set is evaluated.  ``frame``: the :class:`Frame` of the code when the caller has it (a
    curve shares one; it carries the budget), else one held to ``budget``.  The enumeration
    runs in ``jobs`` local threads (None or 0: every core; :meth:`Frame.jobs`: fewer than
    :data:`~gctool.audit.exhaustive.PARALLEL_MIN_SETS` sets off the compiled walk run in one)
    or with ``runner`` (a :class:`~gctool.audit.distributed.DaskRunner`), and the budget
    divides its sets' work by those jobs; the report does not depend on either.
    """
    S = frame_matrix(code)
    n, k = S.shape
    check_s(s, n)
    total = count_sets(n, s)
    fr = Frame.of(S, budget) if frame is None else frame
    norm = k / (n - s)
    t0 = time.perf_counter()
    source: Any
    if sample is None:
        if total > max_sets:
            raise BudgetExceeded(
                f"the exhaustive spectral audit of C({n}, {s}) = {total:,} straggler sets is "
                f"above the set budget `max_sets` = {max_sets:,}; raise `max_sets`, or check "
                "a random `sample`", kind="sets", needed=total, budget=max_sets,
                param="max_sets")
        planned = total
    else:
        if sample < 1:
            raise InvalidInput("sample must be a positive number of sets")
        planned = min(sample, total)
    fr.check("the spectral audit of the frame", {s: planned},
             "use a smaller s or fewer (sampled) sets", extra_work=extra_work, jobs=jobs,
             runner=runner)
    used = fr.jobs(s, planned, jobs, runner)  # as the check divided the sets
    if s > 0:
        fr.analysis.rows()  # for the upper bound, and the tight frames' s x s Grams
    fr.plan(s, planned)  # the compiled walk for large enumerations, loaded here
    size = fr.chunk(s)
    if sample is None:
        source = LexSource(n, s)
        method, exact = "exhaustive", True
    else:
        sets = sample_sets(n, s, sample, np.random.default_rng(seed))
        source, planned = ListSource(n, sets), sets.shape[0]
        exact = sets.shape[0] == total
        method = "exhaustive" if exact else "sampled"
    fold = _SpectrumFold()

    def after() -> None:
        if progress is not None:
            progress(fold.checked, planned)

    try:
        # locally, the spectra are decided in ``jobs`` threads sharing the frame (the compiled
        # walk without the GIL; numpy's batched route holds it for its gathers and picks);
        # the caller's thread is one of them (run_threads); the fold keeps three picks a task
        run_folded(_SpectrumWorker(source, fr, norm), rank_tasks(planned, size), fold,
                   jobs=used, runner=runner or run_threads,
                   after=after)
        ran_on(runner, fr.walks(s) and SPECTRA)
    except KeyboardInterrupt:
        raise SearchInterrupted(f"interrupted after {fold.checked:,} of {planned:,} straggler "
                                f"sets (size {s}); worst epsilon so far "
                                f"{fold.best['eps']:.6g}") from None
    best, checked = fold.best, fold.checked
    best = _restated(fr, best, norm)
    upper = fr.analysis.upper_bound(s)
    eps = float(best["eps"])
    # the attack sandwich: found <= true worst <= proved bound; closed when they meet
    sandwich = WorstOutcome(best["eps_set"], eps, exact, method)
    sandwich.tighten(upper, "Weyl + Gershgorin")
    notes = list(sandwich.notes)
    if not sandwich.exact:
        notes.append(f"{checked:,} random sets of {total:,}: the worst epsilon is at least the "
                     f"value found and at most the proved bound {upper:.6g}")
    exact = sandwich.exact
    if n - s < k:
        notes.append(f"{n - s} survivors < k = {k}: S_F^T S_F is singular, no guarantee")
    lmin_w, lmax_w = best["eps_l"]
    return SpectrumReport(
        mode="worst", **_base(code, s), stragglers=best["eps_set"], epsilon=eps,
        kappa=kappa(eps), lambda_min=float(best["lmin"]), lambda_max=float(best["lmax"]),
        exact=exact, method=method, checked=checked, total=total,
        lambda_min_stragglers=best["lmin_set"], lambda_max_stragglers=best["lmax_set"],
        upper_bound=upper, seed=None if sample is None else seed,
        elapsed_s=time.perf_counter() - t0, notes=notes)


def spectrum_curve(code: GradientCode, max_s: int | None = None, *,  # noqa: PLR0913 (the enumeration's options)
                   max_sets: int = SPECTRUM_MAX_SETS, sample: int | None = None, seed: int = 0,
                   progress: Progress | None = None,
                   sizes: Sequence[int] | None = None, jobs: int | None = 1,
                   runner: Runner | None = None, budget: Budget | None = None
                   ) -> SpectrumCurveReport:
    """:func:`worst_spectrum` for s = 0..max_s (default: the largest s with n - s >= k), or
    for the given ``sizes`` only, each on ``jobs`` local threads or ``runner``.  The whole
    curve's work and memory (every size's sets, one analysis of the frame) are checked before
    the first set is evaluated."""
    S = frame_matrix(code)
    n, k = S.shape
    chosen = curve_sizes(n, max_s, sizes, n - k if n > k else 0, allow_all=False)
    samples = sample or DEFAULT_SAMPLES
    if samples < 1:
        raise InvalidInput("sample must be a positive number of sets")
    plan = {s: (None if count_sets(n, s) <= max_sets else samples) for s in chosen}
    fr = Frame.of(S, budget)
    fr.check("the spectral curve of the frame",
             {s: count_sets(n, s) if got is None else min(got, count_sets(n, s))
              for s, got in plan.items()},
             "use a smaller `max_s`, fewer sizes or fewer sampled sets", jobs=jobs, runner=runner)
    out = [worst_spectrum(code, s, max_sets=max_sets, sample=got, seed=seed, progress=progress,
                          jobs=jobs, runner=runner, frame=fr)
           for s, got in plan.items()]
    return SpectrumCurveReport(code.scheme, code.params.get("frame"), n, k, out)
