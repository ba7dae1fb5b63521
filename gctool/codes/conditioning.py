"""Worst-case condition number of the decoding systems of a real or complex design.

For survivors F the master solves ``a^T B_F = targets``; its sensitivity is measured by
``cond(B_F) = sigma_max / sigma_min`` of the row-normalised B_F on its numerical rank
(:func:`gctool.numerics.normalise_rows`, :func:`gctool.numerics.numerical_rank`), the quantity
the verifier's diagnostics report and the one float64 decoding depends on, so the numbers are
the same as ``gctool verify``'s.  (B_F may be rank-deficient and still decode,
e.g. ``rs`` codes whose mask repeats a column support.)

``design`` records the worst value over every straggler set of size s when that is cheap (at
most ``EXACT_LIMIT`` sets and ``EXACT_WORK`` multiply-adds, or set classes for cyclic codes, whose
rotations have the same singular values; the value at the worst set is the direct decoder's
float, the one ``gctool verify`` reports for it).  Otherwise it *screens* every set with
``gctool verify``'s own enumeration (:func:`_verified`: the matrix verify, given from above by
:func:`screened_by`, on the jobs of :func:`screen_jobs`) when its estimate fits what the run's
budget left: the record is the worst condition verify reports, with the bound it proves
(``condition_bound``; the nullspace kernel's ``kappa(B) / sigma_s(N_S)``, CS decomposition,
:mod:`gctool.audit.nullspace`).  Above the budget (or without a verify) the record is an
*estimate*: the maximum over the s-blocks of consecutive workers (clustered missing nodes are
the bad cases of Vandermonde-type codes) plus pseudo-random sets (fixed seed 0, so the estimate is
reproducible).  An estimate is a lower bound on the true worst case; the record labels it
(:meth:`Worst.params`: ``worst_condition_kind`` exact or estimate, ``worst_condition_sets``) and
the CLI says so on stderr (:func:`estimate_note`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from math import comb
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from gctool.algebra.fields import Field
from gctool.algebra.spectral import Spectral
from gctool.budget import Budget, format_count
from gctool.engine.records import Checked
from gctool.limits import CONDITION_EXACT_SETS
from gctool.numerics import condition, normalise_rows, numerical_rank

if TYPE_CHECKING:
    from gctool.engine.sweep import LexSource, Task

EXACT_LIMIT = CONDITION_EXACT_SETS  # straggler sets evaluated for an exact worst case
# work caps in multiply-adds, the unit of gctool.budget.solve_cost (about 1 ns each, one core)
EXACT_WORK = 2e9  # ... and multiply-adds spent on it (sum of SVD costs), else an estimate
WORK_LIMIT = 5e7  # multiply-adds spent on an estimate (sum of SVD costs; at least 8 sets ...)
ESTIMATE_MAX_WORK = 1e9  # ... unless 8 sets cost more than this: then fewer, or none at all
SCREEN_WORK = 2e9  # multiply-adds of the null-space screen over every set (sum of s x d LU costs)
SCREEN_SVD = 1e6  # sets whose inverse-norm bound exceeds this get the sharp (SVD) bound
NOT_ESTIMATED = "not estimated"
CHUNK = 2048  # straggler sets per batch of SVDs

# -- what the record costs (ns of one core), checked before each step against the budget:
#: the screen of one straggler set by numpy (:class:`ScreenKernel`: a batched inverse of s x s
#: or of N_S N_S^H), complex codes SVD_COMPLEX times it (measured 0.7-1.2 us on real cyclic
#: n=30-36 s=4-5 and real rs n=30-36 d=24-30, 2.7 us on complex rs n=40 d=20)
SCREEN_NUMPY_NS = 1000
#: ... and by the compiled walk, with d = s (each prefix's LU shared: 116-208 ns on real
#: cyclic n=30-40 s=4-6, 163 complex) ...
SCREEN_WALK_NS = 150
#: ... and with d > s (450-520 ns on real rs n=30-36, 1 us complex rs n=40); complex codes
#: SVD_COMPLEX times either
SCREEN_BLOCKS_NS = 500
#: loading numba and the cached walk, the first time a process walks (about half a second
#: of CPU)
WALK_LOAD_NS = 500_000_000


def _set_time(f: int, cols: int, complex_: bool) -> float:
    """One straggler set's cond(B_F) in a batch (:class:`ConditionKernel`: the singular
    values of f x cols, without vectors), in ns (measured 0.56-1.4x of this, real f x cols
    = 6 x 10 to 60 x 60; one 850 x 1000 set, 1.3x)."""
    from gctool.budget import VALUES_ONLY
    from gctool.decode.cost import svd_time

    return svd_time(f, cols, complex_) / VALUES_ONLY


def _check(budget: Budget | None, what: str, work: float, jobs: int = 1,
           fixed: float = 0.0) -> None:
    """Refuse a step of the record above what the budget leaves (a design's parts share it:
    :meth:`gctool.family.Family.design`), before it starts (``jobs``, ``fixed``: as
    :meth:`~gctool.budget.Budget.check_work`'s)."""
    (Budget.default() if budget is None else budget).check_work(
        f"the conditioning record of the design ({what})", work,
        "use a smaller n or s, a finite field (`field`=auto), or raise `max_work`", jobs, fixed)


class ConditionKernel:
    """cond(B_F) of the row-normalised B_F on its numerical rank, per straggler set (inf when
    B_F is 0); a kernel of the enumeration engine (:class:`gctool.engine.sweep.PeakWorker`
    folds its largest value)."""

    def __init__(self, B: np.ndarray, vectors: bool = False) -> None:
        self.B = normalise_rows(B)[0]  # rows of B_F are rows of B: B_F normalised is (D B)_F
        #: the SVD with its vectors, as the direct decoder factors B_F (gctool.decode.Decoder):
        #: the same floats as verify's (without them: faster, equal to round-off)
        self.vectors = vectors

    def errors(self, S: np.ndarray) -> np.ndarray:
        from gctool.engine.enumeration import survivors_of

        F = survivors_of(S, self.B.shape[0])
        out = []
        for start in range(0, F.shape[0], CHUNK):
            BF = self.B[F[start:start + CHUNK]]
            sv = (np.linalg.svd(BF, full_matrices=False)[1] if self.vectors
                  else np.linalg.svd(BF, compute_uv=False))
            out.append(condition(sv, numerical_rank(sv, BF.shape)))
        return np.concatenate(out) if out else np.zeros(0)


def _worst_enumerated(B: np.ndarray, s: int, count: int) -> float:
    """Largest cond(B_F) over the first ``count`` straggler sets of size s in lexicographic
    order (all of them, or the C(n-1, s-1) sets containing worker 0), its value at the worst
    set by the direct decoder's SVD (the float ``gctool verify`` reports for that set)."""
    from gctool.engine.sweep import LexSource, PeakWorker, WorstFold, rank_tasks, run_folded

    fold = WorstFold()
    worker = PeakWorker(LexSource(B.shape[0], s), ConditionKernel(B))
    run_folded(worker, rank_tasks(count, CHUNK), fold)
    if fold.stragglers is None or not np.isfinite(fold.error):
        return fold.error
    worst = np.array([fold.stragglers], dtype=np.intp)
    return float(ConditionKernel(B, vectors=True).errors(worst)[0])


def _sample(n: int, s: int, n_blocks: int, count: int) -> np.ndarray:
    starts = np.unique(np.linspace(0, n, num=min(n, n_blocks), endpoint=False).astype(int))
    blocks = np.array([[(i + t) % n for t in range(s)] for i in starts], dtype=np.intp)
    rng = np.random.default_rng(0)
    rand = np.array([np.sort(rng.choice(n, s, replace=False)) for _ in range(count)],
                    dtype=np.intp).reshape(count, s)
    return np.concatenate([blocks, rand])


class ScreenKernel:
    """The proved bound ``kappa(B) / sigma_s(N_S)`` on cond(B_F) per straggler set S (inf when
    N_S is singular), from the left null basis N (n x d, d >= s) of the row-normalised B.

    ``1 / ||G^-1||_F`` with ``G = N_S`` (``N_S N_S^H`` when d > s, then its square root) is at
    most sigma_s and at least ``sigma_s / sqrt(s)``: ``kappa * ||G^-1||_F`` is a bound within a
    factor sqrt(s) of the sharp one, at the cost of one batched inverse.  The sets where it
    exceeds ``SCREEN_SVD`` (the nearly singular ones, where the inverse also loses accuracy)
    get the SVD and the sharp bound."""

    def __init__(self, sp: Spectral) -> None:
        self.N, self.kappa = sp.null_basis.T, sp.kappa

    def errors(self, S: np.ndarray) -> np.ndarray:
        out = np.empty(S.shape[0])
        for start in range(0, S.shape[0], CHUNK):
            M = self.N[S[start:start + CHUNK]]
            square = M.shape[1] == M.shape[2]
            G = M if square else M @ np.conj(np.swapaxes(M, 1, 2))
            try:
                norm = np.sqrt(np.sum(np.abs(np.linalg.inv(G)) ** 2, axis=(1, 2)))
                bound = self.kappa * (norm if square else np.sqrt(norm))
            except np.linalg.LinAlgError:  # an exactly singular G: every set gets the SVD
                bound = np.full(M.shape[0], np.inf)
            sharp = np.flatnonzero(~(bound <= SCREEN_SVD))
            if sharp.size:
                smin = np.linalg.svd(M[sharp], compute_uv=False)[:, S.shape[1] - 1]
                with np.errstate(divide="ignore"):
                    bound[sharp] = np.where(smin > 0, self.kappa / np.where(smin > 0, smin, 1),
                                            np.inf)
            out[start:start + M.shape[0]] = bound
        return out


def _screened(B: np.ndarray, sp: Spectral, s: int, total: int, budget: Budget | None = None
              ) -> tuple[float, float, list[int]]:
    """(cond(B_F) at the set with the largest screen bound, that bound, the set); the screen
    is checked against ``budget`` before it starts."""
    walks, d = _walks(total), sp.null_basis.shape[0]
    per: float = (SCREEN_WALK_NS if d == s else SCREEN_BLOCKS_NS) if walks else SCREEN_NUMPY_NS
    if np.iscomplexobj(sp.null_basis):
        from gctool.decode.cost import SVD_COMPLEX

        per *= SVD_COMPLEX
    jobs, load = 1, 0
    if walks:
        from gctool.engine.parallel import resolve_jobs

        jobs = resolve_jobs(_JOBS.get())
        key = ("square" if d == s else "blocks", sp.null_basis.dtype.str)
        load = 0 if key in _WARM else WALK_LOAD_NS  # on the caller's thread: no job shares it
    _check(budget, f"the screen of {total:,} straggler sets", total * per, jobs, load)
    found = _screen_walked(sp, s, total) if walks else None
    if found is None:
        found = _screen_numpy(sp, s, total)
    bound, worst = found
    value = float(ConditionKernel(B).errors(np.array([worst], dtype=np.intp))[0])
    return value, bound, worst


def _screen_numpy(sp: Spectral, s: int, total: int) -> tuple[float, list[int]]:
    """(the largest bound of :class:`ScreenKernel`, the first set with it) over the ``total``
    sets in lexicographic order, in tasks of ``CHUNK`` sets folded in order."""
    from gctool.engine.sweep import LexSource, PeakWorker, WorstFold, rank_tasks, run_folded

    fold = WorstFold()
    worker = PeakWorker(LexSource(sp.U.shape[0], s), ScreenKernel(sp))
    run_folded(worker, rank_tasks(total, CHUNK), fold)
    assert fold.stragglers is not None  # total >= 1 sets were screened
    return float(fold.error), sorted(int(i) for i in fold.stragglers)


#: screens of at least this many sets walk compiled first (:func:`_screen_walked`): below,
#: loading numba and the cached walk (0.5 to 1 s of CPU) costs more than the numpy screen
WALK_SETS = 300_000
#: sets per task of the compiled walk (whole tasks of ``CHUNK``; on the threads of
#: :func:`screen_jobs`, and an interrupt waits for the running ones)
WALK_CHUNK = 32 * CHUNK
#: the walk hands the screen back to numpy when more than this share of its tasks could hold
#: the worst set (as costly as numpy's screen, and numpy decides)
WALK_SHARE = 0.25


def _walks(total: int) -> bool:
    """Compiled walk for this many sets?  ``GCTOOL_COMPILED`` (:func:`gctool.compiled.mode`)
    as for the audit kernels (0: never, 1: always, else from ``WALK_SETS`` sets)."""
    from gctool.compiled import mode

    m = mode()
    return m == "always" or (m == "auto" and total >= WALK_SETS)


#: walks compiled or loaded in this process (by kind and dtype)
_WARM: set[tuple[str, str]] = set()

#: jobs of the compiled screen's walk in this context (:func:`screen_jobs`; 0 or None: every
#: core)
_JOBS: ContextVar[int | None] = ContextVar("gctool_screen_jobs", default=1)


#: the matrix verify that screens every straggler set in this context (``(code, request) ->
#: report``: :func:`gctool.family.matrix_verify`, set by :meth:`gctool.family.Family.design`
#: through :func:`screened_by`, since the constructions sit below the audits); None: no
#: screen, so beyond the exact enumeration the record is an estimate
_VERIFY: ContextVar[Callable[[Any, Any], Any] | None] = ContextVar("gctool_screen_verify",
                                                                   default=None)


@contextmanager
def screened_by(verify: Callable[[Any, Any], Any] | None) -> Iterator[None]:
    """Screen every straggler set of the records made inside with ``verify`` (the matrix
    verify, :func:`_verified`)."""
    token = _VERIFY.set(verify)
    try:
        yield
    finally:
        _VERIFY.reset(token)


@contextmanager
def screen_jobs(jobs: int | None) -> Iterator[None]:
    """Walk the screens run inside on ``jobs`` threads (0 or None: every core; the engine's
    :func:`gctool.engine.threads.run_threads`).  :meth:`gctool.family.Family.design` wraps a
    design's construction and self-check in it, so the screens of every scheme (recorded by
    the construction, by ``best_of`` or by the self-check) use the design's ``jobs``; the
    records do not depend on it."""
    token = _JOBS.set(jobs)
    try:
        yield
    finally:
        _JOBS.reset(token)


@dataclass
class WalkBounds(Checked):
    """The bounds of the blocks of ``CHUNK`` sets of one walked task (from block ``first``
    on), and its sets (``checked``)."""

    index: int
    first: int
    checked: int
    hi: np.ndarray
    lo: np.ndarray
    doubt: np.ndarray


@dataclass
class ScreenWalker:
    """The compiled walk (:mod:`gctool.codes._screen_walk`) of one task, a rank range of
    ``source`` that starts on a block of ``CHUNK`` sets: the bounds of its blocks.  A task
    starts from its own first set (unranked) with scratch of its own and computes everything
    it uses (the walk shares work only between the sets of one call), so its bounds are the
    same in any thread and in any order; the walk releases the GIL."""

    source: LexSource
    NT: np.ndarray  # the null basis N (n x d, contiguous)
    kappa: float
    summary_type: ClassVar[type] = WalkBounds  # (never checkpointed: a design runs locally)

    @property
    def square(self) -> bool:
        """d = s: the walk that shares the LU of each prefix (``screen_square``)."""
        return bool(self.NT.shape[1] == self.source.s)

    def run(self, task: Task) -> WalkBounds:
        from gctool.codes import _screen_walk as walk
        from gctool.engine.enumeration import unrank_lex

        i, a, b = task
        blocks = -(-b // CHUNK) - a // CHUNK
        out = WalkBounds(i, a // CHUNK, b - a, np.empty(blocks), np.empty(blocks),
                         np.zeros(blocks, dtype=np.bool_))
        S = unrank_lex(self.source.n, self.source.s, np.array([a])).astype(np.int64)[0]
        args = (self.kappa, SCREEN_SVD, CHUNK, bool(np.iscomplexobj(self.NT)), out.hi, out.lo,
                out.doubt)
        if self.square:
            scratch = walk.square_scratch(self.NT)
            walk.screen_square(S, b - a, self.NT, scratch[0], *args, *scratch[1:])
        else:
            walk.screen_blocks(S, b - a, self.NT, *args, *walk.scratch(self.NT, self.source.s))
        return out


@dataclass
class BoundsFold:
    """The walked bounds of every block, each task's written at its own blocks."""

    hi: np.ndarray
    lo: np.ndarray
    doubt: np.ndarray

    def merge(self, r: WalkBounds) -> bool:
        end = r.first + r.hi.shape[0]
        self.hi[r.first:end], self.lo[r.first:end], self.doubt[r.first:end] = r.hi, r.lo, r.doubt
        return False


def _screen_walked(sp: Spectral, s: int, total: int) -> tuple[float, list[int]] | None:
    """:func:`_screen_numpy`'s result (the same floats and set), from the compiled walk
    (:mod:`gctool.codes._screen_walk`) and numpy's values on the few tasks that could hold the
    worst set; None when too many could (then numpy screens every set).

    The walk bounds numpy's value of every set: per task of ``CHUNK`` sets (the tasks of
    :func:`_screen_numpy`) an upper bound ``hi`` on all of its values, and ``lo``, a value of
    one set at least; doubtful tasks (a set near singular) have ``hi = inf``.  It runs on the
    threads of :func:`screen_jobs` (:class:`ScreenWalker`: each call's bounds depend on its own
    sets only, so they are the same for any number of threads).  With
    ``L = max lo`` (at most the largest value), a task with ``hi < L`` cannot hold the worst
    set.  The others get numpy's exact task peaks (:class:`ScreenKernel`, the same task, so
    the same floats).  :class:`~gctool.engine.sweep.WorstFold`'s tie rule is not associative,
    so the fold is replayed exactly: every value before the first task whose peak beats (by that
    rule) all the bounds and peaks before it is below that peak, so the fold over all tasks
    takes that task, and no skipped task (``hi`` at most that ceiling) ever wins after it:
    folding the kept tasks from there on gives the same worst set and bound."""
    from gctool.compiled import compile_notice
    from gctool.engine.parallel import resolve_jobs
    from gctool.engine.sweep import LexSource, PeakWorker, WorstFold, rank_tasks, run_folded
    from gctool.engine.threads import run_threads
    from gctool.numerics import beats

    NT = np.ascontiguousarray(sp.null_basis.T)
    walker = ScreenWalker(LexSource(NT.shape[0], s), NT, float(sp.kappa))
    key = ("square" if walker.square else "blocks", NT.dtype.str)
    if key not in _WARM:  # compile (or load from the cache) on one set, with the notice
        with compile_notice("design"):
            walker.run((0, 0, 1))
        _WARM.add(key)
    tasks = -(-total // CHUNK)
    bounds = BoundsFold(np.empty(tasks), np.empty(tasks), np.zeros(tasks, dtype=np.bool_))
    run_folded(walker, rank_tasks(total, WALK_CHUNK), bounds, jobs=resolve_jobs(_JOBS.get()),
               runner=run_threads)
    hi, lo, doubt = bounds.hi, bounds.lo, bounds.doubt
    keep = np.flatnonzero(doubt | (hi >= np.max(lo)))
    if keep.size > WALK_SHARE * tasks:
        return None
    skipped = np.ones(tasks, dtype=np.bool_)
    skipped[keep] = False
    ceiling = float(np.max(hi[skipped])) if skipped.any() else -np.inf
    worker = PeakWorker(walker.source, ScreenKernel(sp))
    fold: WorstFold | None = None
    for t in keep:
        summary = worker.run((int(t), int(t) * CHUNK, min((int(t) + 1) * CHUNK, total)))
        if fold is not None:
            fold.merge(summary)
            continue
        ((peak, _),) = summary.peaks
        if np.isnan(peak):  # never a worst set after the first task: numpy decides
            return None
        if beats(peak, ceiling):
            fold = WorstFold()
            fold.merge(summary)
        ceiling = max(ceiling, peak)
    if fold is None or fold.stragglers is None:
        return None
    return float(fold.error), sorted(int(i) for i in fold.stragglers)


@dataclass(frozen=True)
class Worst:
    """A design's worst-case condition record: the figure (None: infinite, or not estimated),
    how it was obtained, a proved upper bound (or None), and how many of the ``total``
    straggler sets of size s it covers (``screened``: all of them, or a sample)."""

    value: float | None
    method: str
    bound: float | None
    screened: int
    total: int

    @property
    def exact(self) -> bool:
        """Every straggler set was screened (directly, by rotation, or by verify's
        enumeration): the figure is the one ``gctool verify`` reports; else an
        estimate on a sample (a lower bound)."""
        return self.screened >= self.total

    def params(self) -> dict[str, Any]:
        """The label the file records beside ``worst_condition``."""
        return {"worst_condition_kind": "exact" if self.exact else "estimate",
                "worst_condition_sets": [self.screened, self.total]}


#: the last results of :func:`worst_case` (a seeded design made again, ``best_of`` prefixes)
_SEEN: dict[tuple[Any, ...], Worst] = {}
_SEEN_MAX = 32


def conditioning(B: np.ndarray, s: int, cyclic: bool = False, budget: Budget | None = None,
                 m: int = 1) -> tuple[float | None, str, float | None]:
    """(worst cond(B_F) over straggler sets of size s or a lower bound on it, how it was
    obtained, a proved upper bound or None): :func:`worst_case`'s."""
    w = worst_case(B, s, cyclic, budget, m)
    return w.value, w.method, w.bound


def worst_case(B: np.ndarray, s: int, cyclic: bool = False, budget: Budget | None = None,
               m: int = 1) -> Worst:
    """The worst cond(B_F) over the straggler sets of size s of B (``m`` pieces per partition:
    the targets verify decodes), or a lower bound on it (:class:`Worst` says which); each step
    is checked against ``budget`` (default :meth:`Budget.default`) before it starts (refused:
    :class:`~gctool.errors.BudgetExceeded`; a result already made in this process costs
    nothing)."""
    import hashlib

    B = np.ascontiguousarray(B)
    key = (B.shape, B.dtype.str, s, cyclic, m, hashlib.sha256(B.tobytes()).hexdigest())
    if key not in _SEEN:
        if len(_SEEN) >= _SEEN_MAX:
            _SEEN.pop(next(iter(_SEEN)))
        _SEEN[key] = _conditioning(B, s, cyclic, budget, m)
    return _SEEN[key]


def _finite(value: float | None) -> float | None:
    return value if value is not None and np.isfinite(value) else None


def _conditioning(B: np.ndarray, s: int, cyclic: bool, budget: Budget | None, m: int = 1
                  ) -> Worst:
    from gctool.budget import solve_cost

    n, cols = B.shape
    cx = bool(np.iscomplexobj(B))
    svd = f"the SVD of B ({n} x {cols})"
    if s == 0:  # one system, B itself (on its numerical rank, as for every B_F)
        _check(budget, svd, solve_cost(n, cols))
        return Worst(_finite(Spectral.of(B).kappa), "exact (no stragglers)", None, 1, 1)
    total = comb(n - 1, s - 1) if cyclic else comb(n, s)
    f = n - s
    per_set = f * cols * min(f, cols)
    if total <= EXACT_LIMIT and total * per_set <= EXACT_WORK:
        _check(budget, f"cond(B_F) of {total:,} straggler sets", total * _set_time(f, cols, cx))
        value = _worst_enumerated(B, s, total)  # sets containing 0 come first in lex order
        what = "straggler sets containing worker 0 (rotations have equal conditioning)" \
            if cyclic else "straggler sets"
        method = f"exact: maximum over all {total:,} {what}"
        return Worst(_finite(value), method, None, comb(n, s), comb(n, s))
    verified = _verified(B, s, m, budget)
    if verified is not None:
        return verified
    count = int(min(512, max(8, WORK_LIMIT // max(per_set, 1))))  # the sample's sets
    count = int(min(count, ESTIMATE_MAX_WORK // max(per_set, 1)))
    if count == 0:  # one SVD alone is above the cap (n near 4096): say so, fast
        return Worst(None, (f"{NOT_ESTIMATED}: one decoding system ({f} x {cols}) costs about "
                            f"{per_set:.2g} multiply-adds, above the design cap of "
                            f"{ESTIMATE_MAX_WORK:.2g}; 'gctool verify' reports conditioning"),
                     None, 0, comb(n, s))
    S = _sample(n, s, max(1, count // 2), count - max(1, count // 2))
    _check(budget, f"cond(B_F) of {S.shape[0]:,} straggler sets",
           S.shape[0] * _set_time(f, cols, cx))
    value = float(np.max(ConditionKernel(B).errors(S)))
    where = " containing worker 0" if cyclic else ""
    method = (f"estimate (lower bound): maximum over {S.shape[0]:,} of the {format_count(total)} "
              f"straggler sets{where} (blocks of consecutive workers and seeded random sets); "
              "'gctool verify' reports the worst case")
    return Worst(_finite(value), method, None, S.shape[0], comb(n, s))


def _verified(B: np.ndarray, s: int, m: int, budget: Budget | None) -> Worst | None:
    """The worst condition that ``gctool verify`` reports for B (its enumeration of every
    straggler set of size s: the verify of :func:`screened_by`, on the jobs of
    :func:`screen_jobs`), with its proved bound; None when no verify is given, when the run's
    budget refuses it (or float64 cannot decide some set, or verify answered without screening
    every set): the caller then estimates on a sample."""
    from gctool.algebra.fields import parse_field
    from gctool.errors import BudgetExceeded
    from gctool.exactls import Undecided
    from gctool.model import GradientCode
    from gctool.request import VerifyRequest

    verify = _VERIFY.get()
    if verify is None:
        return None
    field = parse_field("complex" if np.iscomplexobj(B) else "real")
    code = GradientCode(B, field, s, params={"m": m} if m > 1 else {})
    try:
        report = verify(code, VerifyRequest(s=s, jobs=_JOBS.get(), budget=budget))
    except (BudgetExceeded, Undecided):
        return None
    total, d = report.total, report.diagnostics
    if report.verdict == "fail" and report.counterexample is not None:
        return Worst(None, (f"exact: gctool verify finds that stragglers "
                            f"{report.counterexample} leave survivors that do not decode in "
                            "float64 (condition infinite)"), None, total, total)
    if not report.ok or report.represented < total or d is None or d.max_condition is None:
        return None
    value, bound = d.max_condition, d.condition_bound
    proved = f" (proved bound {bound:.4g})" if bound is not None else ""
    method = (f"screened: every one of the {format_count(total)} straggler sets by gctool "
              f"verify's enumeration{proved}; its worst condition is at stragglers "
              f"{d.max_condition_stragglers}, where cond(B_F) is {value:.4g} (the figure "
              "'gctool verify' reports; attained, a lower bound on the worst case)")
    return Worst(_finite(value), method, _finite(bound), total, total)


def worst_condition(B: np.ndarray, s: int, cyclic: bool = False) -> tuple[float | None, str]:
    """(worst cond(B_F) over straggler sets of size s, how it was obtained): see
    :func:`conditioning`."""
    value, method, _ = conditioning(B, s, cyclic)
    return value, method


def record(B: np.ndarray, field: Field, s: int, cyclic: bool = False,
           budget: Budget | None = None, m: int = 1) -> dict[str, Any]:
    """Params recording the worst-case condition number (real and complex designs only),
    within ``budget`` (:func:`worst_case`), with its label (:meth:`Worst.params`)."""
    if field.is_finite:
        return {}
    w = worst_case(np.asarray(B), s, cyclic, budget, m)
    method = w.method
    if w.value is None and not method.startswith((NOT_ESTIMATED, "exact: gctool verify")):
        method += "; some B_F is singular (condition infinite)"
    out: dict[str, Any] = {"worst_condition": w.value, "worst_condition_method": method,
                           **w.params()}
    if w.bound is not None:
        out["condition_bound"] = w.bound
    return out


def estimate_note(params: dict[str, Any]) -> str | None:
    """The one line that says a recorded worst condition is an estimate on a sample (None: it
    is exact, or none is recorded), naming verify's ``strict`` gate for the exact figure."""
    if params.get("worst_condition_kind") != "estimate":
        return None
    screened, total = params.get("worst_condition_sets", [0, 0])
    value = params.get("worst_condition")
    figure = "not estimated" if value is None else f"{value:.3g}"
    return (f"the worst-case condition number ({figure}) is an estimate on {screened:,} of the "
            f"{total:,} straggler sets (a lower bound); 'gctool verify' with `strict` screens "
            "every set for the exact figure")
