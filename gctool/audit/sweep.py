"""The enumeration engine: sources of straggler sets x kernels -> chunk summaries, folded in
task order by a runner.  ``verify``, ``attack``'s worst case and its threshold all run on it.

A *task* is ``(index, start, stop)``: a rank range of a source.  A *source* turns a task into a
batch of straggler sets and the number of sets each one stands for:

* :class:`LexSource` - every set, by lexicographic rank (weight 1);
* :class:`OrbitSource` - rotation-orbit representatives among the candidate prefix, each
  weighted by its orbit size;
* :class:`SampleSource` - uniformly random sets (seeded per task, so the sample does not depend
  on the number of processes);
* :class:`ListSource` - given sets, in the given order.

A *worker* (picklable: it runs in a worker process or on a Dask worker) evaluates one task with
a *kernel* and returns a small summary; a *fold* merges the summaries in task order with strict
comparisons, so ties resolve to the earliest set and results do not depend on ``jobs`` or on
the executor.  The three worker/summary/fold triples:

=====================  ====================  ==============  ===================================
worker                 kernel                summary         fold
=====================  ====================  ==============  ===================================
:class:`SweepWorker`   :class:`Kernel`       ChunkSummary    :class:`Accumulator` (verify)
:class:`PeakWorker`    :class:`ErrorKernel`  PeakSummary     :class:`WorstFold` (attack -s)
:class:`ExceedWorker`  :class:`ErrorKernel`  ExceedSummary   :class:`ExceedFold` (threshold)
:class:`SumWorker`     :class:`ErrorKernel`  SumSummary      :class:`SumFold` (mean errors)
=====================  ====================  ==============  ===================================

Other enumerations use the same pieces: ``design``'s worst condition number
(:mod:`gctool.codes.conditioning`: a PeakWorker over condition numbers), the real cyclic-MDS
search (:mod:`gctool.codes.cyclic_mds`: a SweepWorker over a :class:`ListSource`) and the
exact values of the approximate-code table (:mod:`gctool.codes.approx_bounds`, through the
attack engine).

A *runner* has the signature of :func:`gctool.audit.parallel.run_ordered`
(``runner(worker, tasks, jobs, on_result)``): local processes by default, or
:class:`gctool.audit.distributed.DaskRunner`; :func:`run_folded` runs a worker's tasks with one
and feeds the fold.  A summary with a non-None ``fail_set`` ends the run (:func:`stops`): the
runner may cancel every later task, never an earlier one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from gctool.audit.enumeration import MAX_RANKABLE, count_sets, rank_ranges, unrank_lex
from gctool.audit.nullspace import ChunkEval
from gctool.audit.symmetry import Rotation, canonical_mask, count_candidates, orbit_sizes
from gctool.numerics import beats, first_max

#: number of weakest sets (by the nullspace screen) re-evaluated directly for diagnostics
WEAKEST = 16

Task = tuple[int, int, int]  # (index, start, stop)
#: ``runner(worker, tasks, jobs, on_result)``; ``on_result(index, summary)`` returns True to stop
Runner = Callable[[Any, Sequence[Task], int, Callable[[int, Any], bool]], None]


class Kernel(Protocol):
    name: str

    def evaluate(self, S: np.ndarray) -> ChunkEval: ...


@dataclass
class LexSource:
    n: int
    s: int

    def sets(self, task: Task) -> tuple[np.ndarray, np.ndarray]:
        _, a, b = task
        if self.s == 0:
            return np.zeros((1, 0), dtype=np.intp), np.ones(1, dtype=np.int64)
        return unrank_lex(self.n, self.s, np.arange(a, b)), np.ones(b - a, dtype=np.int64)


@dataclass
class OrbitSource:
    """Canonical sets among the candidate ranks (sets containing a worker < rot.t); with
    ``weighted`` each one weighs its orbit size, else 1 (the weights are not computed)."""

    n: int
    s: int
    rot: Rotation
    weighted: bool = True

    def sets(self, task: Task) -> tuple[np.ndarray, np.ndarray]:
        _, a, b = task
        C = unrank_lex(self.n, self.s, np.arange(a, b))
        C = C[canonical_mask(C, self.rot)]
        if not self.weighted:
            return C, np.ones(C.shape[0], dtype=np.int64)
        return C, orbit_sizes(C, self.rot)


@dataclass
class SampleSource:
    n: int
    s: int
    seed: int

    def sets(self, task: Task) -> tuple[np.ndarray, np.ndarray]:
        i, a, b = task
        rng = np.random.default_rng([self.seed, i])
        count = b - a
        if count_sets(self.n, self.s) <= MAX_RANKABLE:
            ranks = rng.integers(0, count_sets(self.n, self.s), size=count)
            return unrank_lex(self.n, self.s, ranks), np.ones(count, dtype=np.int64)
        keys = rng.random((count, self.n))
        S = np.sort(np.argpartition(keys, self.s - 1, axis=1)[:, : self.s], axis=1)
        return S.astype(np.intp), np.ones(count, dtype=np.int64)


@dataclass
class ListSource:
    """Given sets (an (N, s) array, any order): a task ``(i, a, b)`` is its rows a..b-1."""

    n: int
    rows: np.ndarray

    @property
    def s(self) -> int:
        return int(self.rows.shape[1])

    def sets(self, task: Task) -> tuple[np.ndarray, np.ndarray]:
        _, a, b = task
        return self.rows[a:b], np.ones(b - a, dtype=np.int64)


class Source(Protocol):
    @property
    def n(self) -> int: ...

    @property
    def s(self) -> int: ...

    def sets(self, task: Task) -> tuple[np.ndarray, np.ndarray]: ...


def exhaustive_source(n: int, s: int, rot: Rotation | None, weighted: bool = True
                      ) -> tuple[Source, int]:
    """(source, number of ranks to walk) for every set of size s, or one per rotation orbit."""
    if rot is None or s == 0:
        return LexSource(n, s), count_sets(n, s)
    return OrbitSource(n, s, rot, weighted), count_candidates(n, s, rot.t)


def rank_tasks(stop: int, size: int, start: int = 0, first: int = 0) -> list[Task]:
    """The rank range ``[start, stop)`` as tasks of at most ``size`` ranks, numbered from
    ``first``."""
    return [(first + i, a, b) for i, (a, b) in enumerate(rank_ranges(start, stop, size))]


class Fold(Protocol):
    def merge(self, summary: Any) -> bool: ...


def run_folded(worker: Any, tasks: Sequence[Task], fold: Fold, *, jobs: int = 1,
               runner: Runner | None = None,
               after: Callable[[], None] | None = None) -> None:
    """Run ``worker`` on ``tasks`` with ``runner`` (default: local processes) and merge the
    summaries into ``fold`` in task order; ``after()`` is called after each merge (progress).
    Stops at the first summary the fold says ends the run."""
    from gctool.audit.parallel import run_ordered

    def on_result(_: int, summary: Any) -> bool:
        stop = fold.merge(summary)
        if after is not None:
            after()
        return stop

    (runner or run_ordered)(worker, tasks, jobs, on_result)


def stops(summary: Any) -> bool:
    """Does this summary end the run (a counterexample, a set over the limit)?  Runners use it
    to cancel the tasks after it before the fold has seen it."""
    return getattr(summary, "fail_set", None) is not None


Best = tuple[float, list[int]]


@dataclass
class ChunkSummary:
    """What one chunk contributes to the verdict and to the diagnostics."""

    index: int
    evaluated: int = 0
    weight: int = 0
    fail_set: list[int] | None = None
    direct: int = 0
    max_norm: Best | None = None
    max_cond: Best | None = None
    max_resid: Best | None = None
    min_fail_err: float | None = None
    min_screen: float | None = None
    weakest: list[Best] = field(default_factory=list)


def _argbest(values: np.ndarray, S: np.ndarray, largest: bool = True) -> Best | None:
    if values.size == 0 or not np.isfinite(values).any():
        return None
    v = np.where(np.isfinite(values), values, -np.inf if largest else np.inf)
    i = int(np.argmax(v) if largest else np.argmin(v))
    return float(v[i]), S[i].tolist()


def summarise(index: int, S: np.ndarray, w: np.ndarray, r: ChunkEval,
              numeric: bool) -> ChunkSummary:
    """Cut the chunk at its first failing set and summarise it."""
    bad = np.flatnonzero(~r.ok)
    end = int(bad[0]) + 1 if bad.size else S.shape[0]
    out = ChunkSummary(index, end, int(w[:end].sum()))
    out.direct = int(r.direct[:end].sum())
    if bad.size:
        out.fail_set = S[bad[0]].tolist()
    if not numeric:
        return out
    S, ok, direct = S[:end], r.ok[:end], r.direct[:end]
    good_direct = ok & direct
    out.max_norm = _argbest(np.where(ok, r.norm[:end], np.nan), S)
    out.max_cond = _argbest(np.where(good_direct, r.cond[:end], np.nan), S)
    out.max_resid = _argbest(np.where(good_direct, np.sqrt(r.error[:end]), np.nan), S)
    if (~ok).any():
        out.min_fail_err = float(np.nanmin(np.where(~ok, r.error[:end], np.nan)))
    screened = ok & ~direct
    if screened.any():
        lb = np.where(screened, r.screen[:end], np.inf)
        out.min_screen = float(lb.min())
        order = np.argsort(lb, kind="stable")[:WEAKEST]
        out.weakest = [(float(lb[i]), S[i].tolist()) for i in order if np.isfinite(lb[i])]
    return out


@dataclass
class SweepWorker:
    """Evaluates one task: build the sets, run the kernel, summarise (picklable)."""

    source: Source
    kernel: Kernel
    numeric: bool

    def run(self, task: Task) -> ChunkSummary:
        ranged = getattr(self.kernel, "summarise_range", None)
        if ranged is not None and isinstance(self.source, LexSource):  # compiled: walks ranks
            out = ranged(task, self.source.n, self.source.s, self.numeric)
            if out is not None:
                return out
        S, w = self.source.sets(task)
        if S.shape[0] == 0:
            return ChunkSummary(task[0])
        return summarise(task[0], S, w, self.kernel.evaluate(S), self.numeric)


def _better(new: Best | None, old: Best | None, largest: bool = True) -> Best | None:
    if new is None:
        return old
    if old is None:
        return new
    return new if (new[0] > old[0] if largest else new[0] < old[0]) else old


@dataclass
class Accumulator:
    """In-order merge of chunk summaries."""

    evaluated: int = 0
    weight: int = 0
    direct: int = 0
    fail_set: list[int] | None = None
    max_norm: Best | None = None
    max_cond: Best | None = None
    max_resid: Best | None = None
    min_fail_err: float | None = None
    min_screen: float | None = None
    weakest: list[Best] = field(default_factory=list)

    def merge(self, c: ChunkSummary) -> bool:
        """Fold in the next chunk; True when it holds a counterexample (stop)."""
        self.evaluated += c.evaluated
        self.weight += c.weight
        self.direct += c.direct
        self.max_norm = _better(c.max_norm, self.max_norm)
        self.max_cond = _better(c.max_cond, self.max_cond)
        self.max_resid = _better(c.max_resid, self.max_resid)
        if c.min_fail_err is not None:
            self.min_fail_err = (c.min_fail_err if self.min_fail_err is None
                                 else min(self.min_fail_err, c.min_fail_err))
        if c.min_screen is not None:
            self.min_screen = (c.min_screen if self.min_screen is None
                               else min(self.min_screen, c.min_screen))
        if c.weakest:
            merged = sorted(self.weakest + c.weakest, key=lambda b: b[0])
            self.weakest = merged[:WEAKEST]
        if c.fail_set is not None:
            self.fail_set = c.fail_set
            return True
        return False

    def as_dict(self) -> dict[str, Any]:
        return {"evaluated": self.evaluated, "weight": self.weight, "direct": self.direct}


# -- attack: errors of straggler sets -------------------------------------------------------
class ErrorKernel(Protocol):
    """Raw decoding errors of straggler sets (an attack oracle, :mod:`gctool.audit.decoders`)."""

    def errors(self, S: np.ndarray) -> np.ndarray: ...


@dataclass
class OracleKernel:
    """An attack oracle as a picklable kernel: it travels as its recipe (code, decoder, weights,
    tol) and is rebuilt where it runs; in this process (and in forked workers) the oracle it
    was made from is used as is."""

    code: Any
    kind: str
    weights: Any
    tol: float
    _oracle: Any = field(default=None, repr=False, compare=False)

    @staticmethod
    def of(oracle: Any) -> OracleKernel:
        return OracleKernel(oracle.code, oracle.kind, getattr(oracle, "user", None),
                            oracle.decoder.tol, oracle)

    def __getstate__(self) -> dict[str, Any]:
        return dict(self.__dict__, _oracle=None)

    def errors(self, S: np.ndarray) -> np.ndarray:
        if self._oracle is None:
            from gctool.audit.decoders import make_oracle

            self._oracle = make_oracle(self.code, self.kind, self.weights, self.tol)
        return self._oracle.errors(S)


@dataclass
class PeakSummary:
    """One task of the worst-case search: its sets' (max error, first argmax set)."""

    index: int
    checked: int = 0
    peaks: list[Best] = field(default_factory=list)  # one per non-empty batch, in order


@dataclass
class PeakWorker:
    """Errors of one task's sets; keeps the first (tied) maximum, the lexicographically
    smallest worst set of the task."""

    source: Source
    kernel: ErrorKernel

    def run(self, task: Task) -> PeakSummary:
        out = PeakSummary(task[0])
        S, _ = self.source.sets(task)
        if S.shape[0]:
            err = self.kernel.errors(S)
            i = first_max(err)
            out.peaks.append((float(err[i]), S[i].tolist()))
            out.checked = S.shape[0]
        return out


@dataclass
class WorstFold:
    """The worst set over every task, by the tie rule of :func:`gctool.numerics.beats` applied
    peak by peak in task order (that rule is not associative, so peaks are never pre-folded)."""

    error: float = -np.inf
    stragglers: list[int] | None = None
    checked: int = 0
    evaluated: int = 0  # sets given to the oracle

    def merge(self, r: PeakSummary) -> bool:
        for e, S in r.peaks:
            if self.stragglers is None or beats(e, self.error):
                self.error, self.stragglers = e, S
        self.checked += r.checked
        self.evaluated += r.checked
        return False


@dataclass
class ExceedSummary:
    index: int
    checked: int = 0  # sets up to and including the first one over the limit
    fail_set: list[int] | None = None  # first set (in enumeration order) with error > limit
    fail_err: float | None = None
    evaluated: int = 0  # sets given to the oracle (the whole batch)


@dataclass
class ExceedWorker:
    """The first set of one task whose error exceeds ``limit`` (threshold search)."""

    source: Source
    kernel: ErrorKernel
    limit: float

    def run(self, task: Task) -> ExceedSummary:
        out = ExceedSummary(task[0])
        S, _ = self.source.sets(task)
        if not S.shape[0]:
            return out
        err = self.kernel.errors(S)
        out.evaluated = S.shape[0]
        over = np.flatnonzero(err > self.limit)
        if over.size:
            i = int(over[0])
            out.checked, out.fail_set, out.fail_err = i + 1, S[i].tolist(), float(err[i])
        else:
            out.checked = S.shape[0]
        return out


@dataclass
class ExceedFold:
    """The first set over the limit in task order (the run stops there)."""

    checked: int = 0
    evaluated: int = 0
    fail_set: list[int] | None = None
    fail_err: float | None = None

    def merge(self, r: ExceedSummary) -> bool:
        self.checked += r.checked
        self.evaluated += r.evaluated
        if r.fail_set is not None:
            self.fail_set, self.fail_err = r.fail_set, r.fail_err
            return True
        return False


# -- means: weighted sums of errors -------------------------------------------------------------
@dataclass
class SumSummary:
    index: int
    checked: int = 0
    total: float = 0.0


@dataclass
class SumWorker:
    """The sum of one task's errors; with ``p`` (per-worker straggling probabilities) each set
    weighs ``prod_(i in S) p_i prod_(i not in S) (1 - p_i)`` and sets of weight 0 are skipped."""

    source: Source
    kernel: ErrorKernel
    p: np.ndarray | None = None

    def run(self, task: Task) -> SumSummary:
        from gctool.audit.enumeration import straggler_mask

        out = SumSummary(task[0])
        S, _ = self.source.sets(task)
        out.checked = S.shape[0]
        if not S.shape[0]:
            return out
        if self.p is None:
            out.total = float(self.kernel.errors(S).sum())
            return out
        w = np.prod(np.where(straggler_mask(S, self.source.n), self.p, 1 - self.p), axis=1)
        keep = w > 0
        if keep.any():
            out.total = float(w[keep] @ self.kernel.errors(S[keep]))
        return out


@dataclass
class SumFold:
    """The sum over every task, added in task order (the same float for any ``jobs``)."""

    total: float = 0.0
    checked: int = 0

    def merge(self, r: SumSummary) -> bool:
        self.total += r.total
        self.checked += r.checked
        return False


#: summary types by name (checkpoints record them as JSON)
SUMMARIES: dict[str, type] = {c.__name__: c for c in (ChunkSummary, PeakSummary, ExceedSummary,
                                                      SumSummary)}


def summary_from_dict(kind: str, data: dict[str, Any]) -> Any:
    """Rebuild a summary from :func:`dataclasses.asdict` output (pairs come back as lists)."""
    d = dict(data)
    for k in ("max_norm", "max_cond", "max_resid"):
        if d.get(k) is not None:
            d[k] = (float(d[k][0]), list(d[k][1]))
    for k in ("weakest", "peaks"):
        if k in d:
            d[k] = [(float(v), list(S)) for v, S in d[k]]
    return SUMMARIES[kind](**d)
