"""The enumeration engine: sources of straggler sets x kernels -> summaries, folded in task
order by a runner.

A *task* is ``(index, start, stop)``: a rank range of a source.  A *source* turns a task into a
batch of straggler sets and the number of sets each one stands for:

* :class:`LexSource` - every set, by lexicographic rank (weight 1);
* :class:`SampleSource` - uniformly random sets (seeded per task, so the sample does not depend
  on the number of processes);
* :class:`ListSource` - given sets, in the given order;
* :class:`gctool.audit.sweep.OrbitSource` - rotation-orbit representatives (the audits).

A *worker* (picklable: it runs in a worker process or on a Dask worker) evaluates one task with
a *kernel* and returns a small summary; a *fold* merges the summaries in task order with strict
comparisons, so ties resolve to the earliest set and results do not depend on ``jobs`` or on
the executor.  The generic worker/summary/fold triples, over a kernel with
``errors(S) -> values`` (:class:`ErrorKernel`):

=====================  ==============  =================================================
worker                 summary         fold
=====================  ==============  =================================================
:class:`PeakWorker`    PeakSummary     :class:`WorstFold`: the largest value, first set
:class:`ExceedWorker`  ExceedSummary   :class:`ExceedFold`: the first set over a limit
:class:`SumWorker`     SumSummary      :class:`SumFold`: the (weighted) sum of the values
=====================  ==============  =================================================

:class:`ExceedSearch` is the one threshold search: sizes 0, 1, 2, ... through an
:class:`ExceedWorker` each, up to the first set over the limit, with a budget, progress and an
interrupt summary.

``verify``'s worker and fold (:class:`gctool.audit.sweep.SweepWorker`,
:class:`gctool.audit.sweep.Accumulator`) are a fourth triple.  Users: ``verify``, ``attack``'s
worst case, threshold and random-set means (:mod:`gctool.audit`), ``design``'s worst condition
number (:mod:`gctool.codes.conditioning`), the real cyclic-MDS search
(:mod:`gctool.codes.cyclic_mds`), the exact check of a GF(q) cyclic draw
(:mod:`gctool.codes.cyclic`), the exact values of the approximate-code table
(:mod:`gctool.bounds.approx`) and the worst spectrum of encoded frames
(:mod:`gctool.audit.spectrum`).

A *runner* has the signature of :func:`gctool.engine.parallel.run_ordered`
(``runner(worker, tasks, jobs, on_result)``): local processes by default, or
:class:`gctool.audit.distributed.DaskRunner`; :func:`run_folded` runs a worker's tasks with one
and feeds the fold.  A summary with a non-None ``fail_set`` ends the run (:func:`stops`): the
runner may cancel every later task, never an earlier one.

A kernel may walk a task's rank range itself (compiled kernels): when it has
``peak_range(task, n, s)`` (resp. ``exceed_range(task, n, s, limit)``, or for verify
``summarise_range``) and the source is a :class:`LexSource`, the worker calls it instead of
unranking the sets; it returns the same summary, or None to fall back to ``errors(S)``.

This package sits below :mod:`gctool.codes` and :mod:`gctool.audit` (it imports neither).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple, Protocol

import numpy as np

from gctool.engine.enumeration import (
    MAX_RANKABLE,
    count_sets,
    rank_ranges,
    straggler_mask,
    unrank_lex,
)
from gctool.engine.records import Checked, Record, SetWorker, Summary, rank_holds
from gctool.limits import TIE_RTOL
from gctool.numerics import beats, first_max, tied_records
from gctool.wording import counted

if TYPE_CHECKING:
    from gctool.engine.parallel import Started
    from gctool.engine.threads import Ahead

Task = tuple[int, int, int]  # (index, start, stop)
#: ``runner(worker, tasks, jobs, on_result)``; ``on_result(index, summary)`` returns True to stop
Runner = Callable[[Any, Sequence[Task], int, Callable[[int, Any], bool]], None]
Best = tuple[float, list[int]]


class Source(Protocol):
    #: one set per rank (every rank of a task's range is a set of its batch: see Coverage)
    dense: ClassVar[bool]

    @property
    def n(self) -> int: ...

    @property
    def s(self) -> int: ...

    def sets(self, task: Task) -> tuple[np.ndarray, np.ndarray]: ...

    def holds(self, task: Task, S: list[int]) -> bool:
        """Is S one of the task's sets?  (Checkpoint records are checked with it.)"""
        ...


@dataclass
class LexSource:
    n: int
    s: int
    dense: ClassVar[bool] = True  # one set per rank (see Coverage)

    def sets(self, task: Task) -> tuple[np.ndarray, np.ndarray]:
        _, a, b = task
        if self.s == 0:
            return np.zeros((1, 0), dtype=np.intp), np.ones(1, dtype=np.int64)
        return unrank_lex(self.n, self.s, np.arange(a, b)), np.ones(b - a, dtype=np.int64)

    def holds(self, task: Task, S: list[int]) -> bool:
        """Is S one of the task's sets?  (Checkpoint records are checked with it.)"""
        return rank_holds(self.n, self.s, task, S)


@dataclass
class SampleSource:
    n: int
    s: int
    seed: int
    dense: ClassVar[bool] = True

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

    def holds(self, task: Task, S: list[int]) -> bool:
        return _among(self.sets(task)[0], S)


@dataclass
class ListSource:
    """Given sets (an (N, s) array, any order): a task ``(i, a, b)`` is its rows a..b-1."""

    n: int
    rows: np.ndarray
    dense: ClassVar[bool] = True

    @property
    def s(self) -> int:
        return int(self.rows.shape[1])

    def sets(self, task: Task) -> tuple[np.ndarray, np.ndarray]:
        _, a, b = task
        return self.rows[a:b], np.ones(b - a, dtype=np.int64)

    def holds(self, task: Task, S: list[int]) -> bool:
        return _among(self.rows[task[1]:task[2]], S)


def _among(rows: np.ndarray, S: list[int]) -> bool:
    """Is S a row of ``rows``?"""
    return bool(rows.shape[0]) and bool((np.asarray(rows) == np.asarray(S)).all(axis=1).any())


def rank_tasks(stop: int, size: int, start: int = 0, first: int = 0) -> list[Task]:
    """The rank range ``[start, stop)`` as tasks of at most ``size`` ranks, numbered from
    ``first``."""
    return [(first + i, a, b) for i, (a, b) in enumerate(rank_ranges(start, stop, size))]


class Fold(Protocol):
    def merge(self, summary: Any) -> bool: ...


def run_folded(worker: SetWorker, tasks: Sequence[Task], fold: Fold, *, jobs: int = 1,
               runner: Runner | None = None,
               after: Callable[[], None] | None = None,
               coverage: Coverage | None = None) -> None:
    """Run ``worker`` on ``tasks`` with ``runner`` (default: local processes) and merge the
    summaries into ``fold`` in task order; ``after()`` is called after each merge (progress).
    Stops at the first summary the fold says ends the run.

    Completeness is proved, whatever the runner: every merge is recorded in ``coverage`` (a
    :class:`Coverage` of the tasks' ranks by default; pass one that already holds earlier
    ranges of the same space), which refuses a summary that is not the next range's, and
    when the runner returns, :meth:`Coverage.require` raises
    :class:`~gctool.errors.IncompleteRun` unless the whole space was merged or the fold
    stopped the run.  A runner that gives up on tasks raises
    :class:`~gctool.engine.parallel.LostTasks`, which becomes IncompleteRun too."""
    from gctool.engine.parallel import LostTasks, run_ordered

    for prev, nxt in zip(tasks, tasks[1:], strict=False):
        if nxt[1] != prev[2] or nxt[1] > nxt[2]:
            raise ValueError(f"tasks must be consecutive rank ranges, got {prev} then {nxt}")
    if coverage is None:
        start = tasks[0][1] if tasks else 0
        coverage = Coverage.of(worker.source, start,
                               tasks[-1][2] if tasks else start)
    elif tasks and tasks[0][1] != coverage.end:
        raise ValueError(f"tasks start at rank {tasks[0][1]}, the coverage at {coverage.end}")

    def on_result(i: int, summary: Summary) -> bool:
        coverage.check(tasks[i], summary)
        stop = fold.merge(summary)
        coverage.merged(tasks[i], summary, stop)
        if after is not None:
            after()
        return stop

    try:
        (runner or run_ordered)(worker, tasks, jobs, on_result)
    except LostTasks as exc:
        raise coverage.incomplete(exc.reason, [(tasks[i][1], tasks[i][2]) for i in exc.indices],
                                  exc.hint) from None
    coverage.require()


#: lost ranges named in an IncompleteRun message (the rest are counted)
SHOWN_RANGES = 3


@dataclass
class Coverage:
    """The proof that a fold saw its whole space: the rank ranges it merged and the sets each
    covered.  Merges come in task order, so the merged ranks are one range ``[start, end)``:
    a summary is accepted only for the next range (no gap, no range twice), only when it is
    its task's (same index), and only with a count of sets that fits its range (exactly
    ``stop - start`` sets from a ``dense`` source, one set per rank, unless it ends the run).
    :meth:`require` raises :class:`~gctool.errors.IncompleteRun` unless the merged range is
    the whole space ``[start, stop)`` or the fold stopped the run (a counterexample, a set
    over the limit: a search cut on purpose, which the fold reports as such)."""

    s: int
    start: int
    stop: int
    dense: bool = False
    end: int = -1  # ranks [start, end) merged (set to start)
    sets: int = 0
    stopped: bool = False

    def __post_init__(self) -> None:
        if self.end < self.start:
            self.end = self.start

    @classmethod
    def of(cls, source: Source, start: int, stop: int) -> Coverage:
        """The coverage of ranks ``[start, stop)`` of ``source``."""
        return cls(source.s, start, stop, source.dense)

    def check(self, task: Task, summary: Summary) -> None:
        """Raise IncompleteRun unless ``summary`` may be merged as the result of ``task``."""
        problem = self.problem(task, summary)
        if problem is not None:
            raise self.incomplete(problem)

    def problem(self, task: Task, summary: Summary) -> str | None:
        """Why ``summary`` may not be merged as the result of ``task`` (None: it may)."""
        i, a, b = task
        sets = summary.covered
        if self.stopped:
            return f"ranks {_span(a, b)} arrived after the run had stopped"
        if a != self.end:
            return (f"ranks {_span(a, b)} arrived where rank {self.end:,} was next"
                    if a > self.end else f"ranks {_span(a, b)} arrived twice")
        if summary.index != i:
            return f"the result for ranks {_span(a, b)} is another task's"
        if sets is not None and (not 0 <= sets <= b - a or (
                self.dense and sets != b - a and not stops(summary))):
            return f"the result for ranks {_span(a, b)} counts {sets:,} sets"
        return None

    def merged(self, task: Task, summary: Summary, stop: bool) -> None:
        """Record the merge of ``summary`` (checked) as ``task``'s; ``stop``: it ended the run."""
        sets = summary.covered
        self.sets += (task[2] - task[1]) if sets is None else sets
        self.end = task[2]
        self.stopped = self.stopped or stop

    @property
    def complete(self) -> bool:
        return self.stopped or self.end == self.stop

    def require(self) -> None:
        """Raise IncompleteRun unless the run is complete (the space merged, or stopped)."""
        if not self.complete:
            raise self.incomplete("the runner returned before every range was merged")

    def incomplete(self, reason: str, lost: Sequence[tuple[int, int]] | None = None,
                   hint: str = "") -> Exception:
        """The IncompleteRun saying what was checked, which ranks were lost and why."""
        from gctool.errors import IncompleteRun

        if lost is None:
            lost = [(self.end, self.stop)] if self.end < self.stop else []
        spans: list[tuple[int, int]] = []
        for a, b in sorted(lost):
            if spans and a <= spans[-1][1]:
                spans[-1] = (spans[-1][0], max(spans[-1][1], b))
            else:
                spans.append((a, b))
        named = ", ".join(_span(a, b) for a, b in spans[:SHOWN_RANGES])
        if len(spans) > SHOWN_RANGES:
            named += f" and {counted(len(spans) - SHOWN_RANGES, 'more range')}"
        merged = (f"ranks {_span(self.start, self.end)} merged" if self.end > self.start
                  else "nothing merged")
        lost_text = f"; lost: ranks {named}" if spans else ""
        message = (f"incomplete run, no verdict: checked {self.sets:,} straggler sets of size "
                   f"{self.s} ({merged} of {_span(self.start, self.stop)}){lost_text} "
                   f"({reason})")
        if hint:
            message += f"; {hint}"
        return IncompleteRun(message, self.sets, spans)


def _span(a: int, b: int) -> str:
    """The ranks ``[a, b)`` as text."""
    return f"{a:,}" if b == a + 1 else f"{a:,}-{b - 1:,}" if b > a else "none"


def stops(summary: Summary) -> bool:
    """Does this summary end the run (a counterexample, a set over the limit)?  Runners use it
    to cancel the tasks after it before the fold has seen it
    (:func:`gctool.engine.parallel.ends_run`)."""
    from gctool.engine.parallel import ends_run

    return ends_run(summary)


# -- per-set values: errors, condition numbers ------------------------------------------------
class ErrorKernel(Protocol):
    """A per-set value of straggler sets: raw decoding errors (an attack oracle,
    :mod:`gctool.audit.oracles`), condition numbers, ..."""

    def errors(self, S: np.ndarray) -> np.ndarray: ...


class RangeWalker:
    """An :class:`ErrorKernel` that walks lexicographic rank ranges itself, in compiled code
    (an attack oracle's compiled path, :class:`gctool.audit.oracles.kernel.OracleKernel`):
    :class:`PeakWorker` and :class:`ExceedWorker` give it the task's range of a
    :class:`LexSource`, and its ``None`` sends them back to :meth:`errors` of the task's sets.
    A kernel declares the capability by subclassing (and overrides what it walks: by default
    nothing); plain kernels only have ``errors``."""

    def errors(self, S: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def walks_compiled(self, s: int) -> bool:
        """Are rank ranges of sets of size s walked in compiled code (which releases the GIL,
        so ``jobs`` run in threads)?"""
        return False

    def errors_upto(self, S: np.ndarray, limit: float) -> np.ndarray:
        """The errors of the rows of S up to the first over ``limit`` (inclusive; every row
        when none is): :class:`ExceedWorker`'s batch (a kernel may leave the rows after it
        undecided)."""
        return self.errors(S)

    def peak_range(self, task: Task, n: int, s: int) -> PeakSummary | None:
        """The worst set of the rank range ``task`` (None: not walked)."""
        return None

    def exceed_range(self, task: Task, n: int, s: int, limit: float) -> ExceedSummary | None:
        """The first set over ``limit`` of the rank range ``task`` (None: not walked)."""
        return None


def _walker(kernel: ErrorKernel, source: Source) -> RangeWalker | None:
    """``kernel`` when it walks the rank ranges of ``source`` itself, else None."""
    return kernel if isinstance(kernel, RangeWalker) and isinstance(source, LexSource) \
        else None


@dataclass
class PeakSummary(Checked):
    """One task of the worst-case search: its sets' (max error, first argmax set)."""

    index: int
    checked: int = 0
    peaks: list[Best] = field(default_factory=list)  # one per non-empty batch, in order

    @classmethod
    def from_record(cls, r: Record) -> PeakSummary:
        r.expect("index", "checked", "peaks")
        return cls(r.index(), r.count("checked"), r.bests("peaks", most=r.size))


@dataclass
class PeakWorker:
    """Errors of one task's sets; keeps the first (tied) maximum, the lexicographically
    smallest worst set of the task."""

    source: Source
    kernel: ErrorKernel
    #: each batch's :func:`~gctool.numerics.tied_records` for a :class:`FirstMaxFold` (else
    #: its first max alone, for a :class:`WorstFold`)
    ties: bool = False
    summary_type: ClassVar[type] = PeakSummary

    def run(self, task: Task) -> PeakSummary:
        walker = _walker(self.kernel, self.source)
        walked = None if walker is None else walker.peak_range(task, self.source.n,
                                                               self.source.s)
        if walked is not None:
            return walked
        out = PeakSummary(task[0])
        S, _ = self.source.sets(task)
        if S.shape[0]:
            err = self.kernel.errors(S)
            for i in tied_records(err) if self.ties else [first_max(err)]:
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
    #: stop once the largest value exceeds this (None: never; a kernel may mark a failing set
    #: by +inf and stop at the first one with ``stop_above=float_max``)
    stop_above: float | None = None

    def merge(self, r: PeakSummary) -> bool:
        for e, S in r.peaks:
            if self.stragglers is None or beats(e, self.error):
                self.error, self.stragglers = e, S
        self.checked += r.checked
        self.evaluated += r.checked
        return self.stop_above is not None and self.error > self.stop_above


@dataclass
class FirstMaxFold(WorstFold):
    """The worst set over every task by :func:`gctool.numerics.first_max` of all the values
    in enumeration order (the first within the tie tolerance of the largest), whatever the
    tasks: their summaries carry :func:`~gctool.numerics.tied_records` (``PeakWorker(...,
    ties=True)``, or a walker's ``peak_range``).

    With a ``limit`` (an attack's decoding limit ``tol * k``: a value above it is a set that
    fails), a value above the limit is never tied with one at or below it: when the largest
    value is above the limit, the cut is at least the float after the limit, so a set that
    fails is never passed over for a tied one that decodes (errors of 2e-9 both sides of a
    limit of 2e-9 are within the tie tolerance of 1e-12 of each other).

    Proof.  Let M be the largest value of the whole sequence, C = cut(M) with
    cut(x) = x - TIE_RTOL max(1, |x|), raised to the float after the limit when x is above
    it, and g the first index with a value >= C (first_max's answer without a limit; +inf:
    the first +inf, nan counting as -inf).  In g's task, with largest value m <= M,
    C >= cut(m) >= m - TIE_RTOL max(1, |m|) (cut grows with x) and every value before g is
    below C <= err[g]: g is that task's first max or a later value above every one before it,
    so its summary holds g.  The fold keeps the peaks merged so far, in order, that are at
    least C' (cut of the largest value merged so far, never above C): g is never dropped,
    and every peak before g is below C, dropped once the last task is merged.  So the first
    peak kept is g for any split of the sequence into tasks (any ``jobs``, any chunk
    size)."""

    _kept: list[Best] = field(default_factory=list)
    #: the largest value merged so far (nan aside), and its cut C' while it is finite: the
    #: kept peaks are all at least the cut, and the largest of them is ``_top``
    _top: float = -np.inf
    _cut: float = -np.inf
    #: values above it are never tied with values at or below it (None: no limit)
    limit: float | None = None

    def merge(self, r: PeakSummary) -> bool:
        top = max((e for e, _ in r.peaks if e == e), default=-np.inf)  # (e == e: not nan)
        if -np.inf < self._top < np.inf and top <= self._top:  # the cut stands: only the
            # new peaks are filtered (a code with many tied sets keeps dozens of peaks, which
            # every merge re-read, one fold at a time: the serial part of the run)
            cut = self._cut
            self._kept.extend(p for p in r.peaks if p[0] >= cut)
            return self._merged(r)
        self._kept.extend(r.peaks)
        top = self._top = max(top, self._top)
        if np.isfinite(top):
            cut = self._cut = self._cut_of(top)
            self._kept = [(e, S) for e, S in self._kept if e >= cut]
        elif top == np.inf:
            self._kept = [(e, S) for e, S in self._kept if e == np.inf][:1]
        else:  # nan or -inf only: the first
            self._kept = self._kept[:1]
        return self._merged(r)

    def _cut_of(self, top: float) -> float:
        """The least value tied with the finite largest value ``top`` (the proof's cut)."""
        cut = top - TIE_RTOL * max(1.0, abs(top))
        if self.limit is not None and top > self.limit:
            cut = max(cut, float(np.nextafter(self.limit, np.inf)))
        return cut

    def _merged(self, r: PeakSummary) -> bool:
        if self._kept:
            self.error, self.stragglers = self._kept[0]
        self.checked += r.checked
        self.evaluated += r.checked
        return self.stop_above is not None and self.error > self.stop_above


@dataclass
class ExceedSummary:
    index: int
    checked: int = 0  # sets up to and including the first one over the limit
    fail_set: list[int] | None = None  # first set (in enumeration order) with error > limit
    fail_err: float | None = None
    evaluated: int = 0  # sets given to the oracle (the whole batch)

    @property
    def covered(self) -> int:
        return self.checked

    @classmethod
    def from_record(cls, r: Record) -> ExceedSummary:
        r.expect("index", "checked", "fail_set", "fail_err", "evaluated")
        out = cls(r.index(), r.count("checked"), r.straggler_set("fail_set", optional=True),
                  r.number("fail_err", optional=True), r.count("evaluated"))
        if (out.fail_set is None) != (out.fail_err is None) or (
                out.fail_set is not None and not 1 <= out.checked <= out.evaluated):
            raise ValueError("'fail_set', 'fail_err' and the counts do not agree")
        return out


@dataclass
class ExceedWorker:
    """The first set of one task whose error exceeds ``limit`` (threshold search)."""

    source: Source
    kernel: ErrorKernel
    limit: float
    summary_type: ClassVar[type] = ExceedSummary

    def run(self, task: Task) -> ExceedSummary:
        walker = _walker(self.kernel, self.source)
        walked = None if walker is None else walker.exceed_range(
            task, self.source.n, self.source.s, self.limit)
        if walked is not None:
            return walked
        out = ExceedSummary(task[0])
        S, _ = self.source.sets(task)
        if not S.shape[0]:
            return out
        err = (self.kernel.errors_upto(S, self.limit) if isinstance(self.kernel, RangeWalker)
               else self.kernel.errors(S))
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


# -- the threshold search: sizes 0, 1, 2, ... until a set exceeds the limit -------------------
#: sizes a threshold search starts ahead in threads while a size runs in the caller's thread
#: (the next one alone leaves the threads idle once it is done, when it is much smaller than
#: the caller's size on the numpy route: 9,880 sets of size 3 against 91,390 compiled of size
#: 4 for n=40)
AHEAD_SIZES = 2
#: ... when the size in the caller's thread is estimated at this many seconds or more
#: (``ExceedSearch.seconds``): the look-ahead saves at most that size's time, and a size that
#: finds a set over the limit drops the sizes started ahead with the probes that admitted
#: them (corpus.late_fail(200, 1, 20): size 1, 200 sets, fails in 50 ms; starting sizes 2
#: and 3 ahead cost 0.4 s of CPU, 12 s while their tasks walked whole ranges)
AHEAD_MIN_S = 0.05

class SizePlan(NamedTuple):
    """How one size is enumerated: the source, its tasks, and the processes and runner."""

    source: Source
    tasks: Sequence[Task]
    jobs: int = 1
    runner: Runner | None = None


def lex_plan(n: int, chunk: Callable[[int], int]) -> Callable[[int], SizePlan]:
    """Every set of size s by lexicographic rank, ``chunk(s)`` ranks per task, in this
    process."""

    def plan(s: int) -> SizePlan:
        return SizePlan(LexSource(n, s), rank_tasks(count_sets(n, s), chunk(s)))

    return plan


#: ``budget(s, used, need)``: before size s, with ``used`` sets checked so far and ``need``
#: planned at s, the reason the search stops there, or None to go on
SearchBudget = Callable[[int, int, int], str | None]


@dataclass
class Exceeded:
    """What a threshold search found.  ``size`` is the threshold T = min{|S| : value > limit}
    and ``stragglers``/``error`` its witness, or None when no set up to the top size exceeds
    the limit (``complete``) or when the budget stopped the search (not ``complete``, with
    ``refusal`` saying why).  Every size below ``lower`` was searched without a set over."""

    size: int | None
    stragglers: list[int] | None
    error: float | None
    complete: bool
    lower: int
    checked: int
    total: int
    refusal: str = ""


@dataclass
class ExceedSearch:
    """The one exhaustive threshold search: sizes s = 0, 1, ..., ``top`` (default n) in
    increasing order, every set of size s as ``plan(s)`` enumerates it through an
    :class:`ExceedWorker` of ``kernel``, folded in task order; the search stops at the first set
    whose value exceeds ``limit`` (the runner cancels every later task).  The witness is the
    first set over the limit in the plan's rank order (lexicographic, or the first orbit
    representative), so it does not depend on the processes or the executor.

    * ``count(s)``: the sets evaluated at size s (default C(n, s)), for the budget and
      ``total``;
    * ``budget``: a :data:`SearchBudget`, asked before each size; a reason ends the search
      incomplete (``Exceeded.complete`` False);
    * ``progress(search)``: after each task, with ``checked`` (sets up to the first one over
      the limit), ``evaluated`` (sets given to the kernel) and ``total`` up to date;
    * Ctrl-C becomes :class:`gctool.errors.SearchInterrupted` saying how many sets were checked
      (``name`` says which search);
    * ``ahead(s)``: size s planned with a kernel of its own, ``(plan, kernel)``, which may run
      while the sizes before it are still searched (it must leave ``kernel`` and everything
      they use as they are), or None.  When size s - 1 runs in this thread and sizes s, s + 1
      (up to :data:`AHEAD_SIZES`) in threads (:func:`gctool.engine.threads.run_threads`),
      they start in threads at once (:class:`gctool.engine.threads.Ahead`), so the threads
      do not wait for the caller; a size's results are folded only once the sizes before it
      are done without a set over the limit and the budget allows it, and only when
      ``plan(s)`` gives the same tasks: the same results as without it.
    * ``seconds(s)``: the estimated time of size s (asked once the budget has admitted it),
      or None: a size that runs in this thread starts no size ahead when it is estimated
      below :data:`AHEAD_MIN_S`.
    * ``launch``: the search's runner can start tasks ahead
      (:class:`~gctool.engine.parallel.StartsAhead`: a Dask session).  Then the nearest later
      size whose plan runs on it is started while the sizes before it run (:meth:`_launch`):
      after the budget has admitted it and every size before it, and cancelled when a size
      before it finds a set over the limit; its call takes over what was started and folds it
      in its turn.

    The budget is asked once per size, in increasing order (:meth:`_admit`); a size started
    ahead is asked before it starts, as if the sizes before it found nothing (when one does,
    the search ends there and the answer is not used), so the refusals are those of a search
    without look-ahead.

    Users: ``attack threshold method exhaustive`` (:func:`gctool.audit.exhaustive.threshold`,
    an attack oracle and rotation orbits; also the thresholds of ``gctool bound``'s table) and
    :func:`gctool.bounds.approx.exact_threshold` (optimal decoding, a set budget: the
    factor thresholds of ``kron`` designs and the table's default below the audits)."""

    n: int
    kernel: ErrorKernel
    limit: float
    plan: Callable[[int], SizePlan]
    top: int | None = None
    count: Callable[[int], int] | None = None
    budget: SearchBudget | None = None
    progress: Callable[[ExceedSearch], None] | None = None
    name: str = ""
    ahead: Callable[[int], tuple[SizePlan, ErrorKernel] | None] | None = None
    seconds: Callable[[int], float] | None = None
    launch: bool = False
    checked: int = field(default=0, init=False)  # sets up to the first one over the limit
    evaluated: int = field(default=0, init=False)  # sets given to the kernel
    #: the budget's answer for each size asked so far, with the sets it was told were used
    _answers: dict[int, tuple[int, str | None]] = field(default_factory=dict, init=False)
    #: no later size can be started on its runner (:meth:`_launch` found none)
    _no_launch: bool = field(default=False, init=False)

    def need(self, s: int) -> int:
        return count_sets(self.n, s) if self.count is None else self.count(s)

    @property
    def last(self) -> int:
        return self.n if self.top is None else self.top

    @cached_property
    def total(self) -> int:
        """Sets of every size up to the top (what a search that finds nothing checks)."""
        return sum(self.need(s) for s in range(self.last + 1))

    def run(self) -> Exceeded:
        self.checked = self.evaluated = 0
        self._answers, self._no_launch = {}, not self.launch
        started: dict[int, Ahead] = {}  # later sizes, started ahead in threads
        launched: dict[int, Started] = {}  # a later size, started ahead on its runner
        try:
            for s in range(self.last + 1):
                refusal = self._admit(s, self.checked)
                if refusal is not None:
                    return Exceeded(None, None, None, False, s, self.checked, self.total,
                                    refusal)
                plan, mine = self.plan(s), launched.pop(s, None)
                self._start_next(s, plan, started)
                self._launch(s, launched)
                try:
                    fold = self._size(s, plan, started.pop(s, None))
                finally:
                    if mine is not None:  # taken over by its call (else dropped)
                        mine.cancel()
                if fold.fail_set is not None:
                    return Exceeded(s, fold.fail_set, fold.fail_err, True, s, self.checked,
                                    self.total)
        except KeyboardInterrupt:
            from gctool.errors import SearchInterrupted

            what = f"{self.name} " if self.name else ""
            raise SearchInterrupted(f"{what}interrupted after checking {self.checked:,} "
                                    "straggler sets; no verdict") from None
        finally:
            pending = sys.exc_info()[1]  # e.g. the summary of a Ctrl-C
            for later in [*started.values(), *launched.values()]:  # not folded: dropped
                try:
                    later.cancel()
                except KeyboardInterrupt:  # a second Ctrl-C: the first one decides
                    if pending is None:
                        raise
        return Exceeded(None, None, None, True, self.last + 1, self.checked, self.total)

    def _admit(self, s: int, used: int) -> str | None:
        """The budget's answer for size s (None: admitted) after ``used`` sets, asked once."""
        if self.budget is None:
            return None
        if s not in self._answers:
            self._answers[s] = (used, self.budget(s, used, self.need(s)))
        asked, refusal = self._answers[s]
        if asked != used:  # (a size searched whole checks every set the budget counted)
            raise AssertionError(f"size {s} was admitted after {asked:,} sets and reached "
                                 f"after {used:,}")
        return refusal

    def _launch(self, s: int, launched: dict[int, Started]) -> None:
        """While size s runs: start the nearest later size whose plan runs on a runner that
        can start tasks ahead (:class:`~gctool.engine.parallel.StartsAhead`), once the budget
        has admitted it and each size before it (as if none of them found a set over the
        limit), unless a later size is started already.  A size the budget refuses stops the
        look-ahead (the search refuses it when it gets there)."""
        from gctool.engine.parallel import StartsAhead

        if self.ahead is None or launched or self._no_launch:
            return
        used = self.checked + self.need(s)
        for t in range(s + 1, self.last + 1):
            nxt = self.ahead(t) if self._admit(t, used) is None else None
            if nxt is None:
                self._no_launch = True
                return
            plan, kernel = nxt
            if isinstance(plan.runner, StartsAhead):
                handle = plan.runner.start(ExceedWorker(plan.source, kernel, self.limit),
                                           plan.tasks, plan.jobs)
                if handle is None:
                    self._no_launch = True  # (e.g. a Dask runner outside a session)
                else:
                    launched[t] = handle
                return
            used += self.need(t)
        self._no_launch = True

    def _start_next(self, s: int, plan: SizePlan, started: dict[int, Ahead]) -> None:
        """Before size s runs: the later sizes that run in threads started ahead
        (:class:`gctool.engine.threads.Ahead`), added to ``started`` unless there already.
        When size s runs in this thread: sizes s + 1, ..., s + :data:`AHEAD_SIZES` (up to
        the first that would not run in threads), started at once, unless size s is
        estimated below :data:`AHEAD_MIN_S` (``seconds``).  When size s runs in
        threads itself: size s (on the search's kernel) and size s + 1, whose threads take
        over the cores of size s's as they find no task of it left, so that consecutive sizes
        run as one pool (no thread waits for the fold of size s, nor for the caller to start
        the next pool).  Each size started ahead after the budget admitted it and every size
        before it (as if none of them found a set over the limit), like :meth:`_launch`."""
        from gctool.engine.threads import Ahead

        if self.ahead is None:
            return
        threaded = _in_threads(plan)
        if threaded and s not in started:
            started[s] = Ahead(ExceedWorker(plan.source, self.kernel, self.limit), plan.tasks,
                               plan.jobs)
        if not threaded and self.seconds is not None and self.seconds(s) < AHEAD_MIN_S:
            return  # (when it runs in threads, the next size waits for its cores)
        before = started.get(s)
        used = self.checked + self.need(s)
        for t in range(s + 1, min(s + (1 if threaded else AHEAD_SIZES), self.last) + 1):
            if t in started:
                before = started[t]
                used += self.need(t)
                continue
            nxt = self.ahead(t)  # (the budget is asked only about a size to start)
            if nxt is None or not _in_threads(nxt[0]) or self._admit(t, used) is not None:
                return
            ahead_plan, kernel = nxt
            started[t] = before = Ahead(ExceedWorker(ahead_plan.source, kernel, self.limit),
                                        ahead_plan.tasks, ahead_plan.jobs, after=before)
            used += self.need(t)

    def _size(self, s: int, plan: SizePlan, started: Ahead | None = None) -> ExceedFold:
        """Every set of size s, up to the first one over the limit (``started``: the tasks
        of size s started ahead, used when they are the plan's)."""
        fold = ExceedFold()
        checked, evaluated = self.checked, self.evaluated
        runner = plan.runner
        if started is not None:
            if list(started.tasks) == list(plan.tasks):
                runner = started.run
            else:
                started.cancel()

        def after() -> None:
            self.checked, self.evaluated = checked + fold.checked, evaluated + fold.evaluated
            if self.progress is not None:
                self.progress(self)

        try:
            run_folded(ExceedWorker(plan.source, self.kernel, self.limit), plan.tasks, fold,
                       jobs=plan.jobs, runner=runner, after=after)
        finally:
            if started is not None:  # folded, or dropped on an error: its threads end
                started.cancel()
        return fold


def _in_threads(plan: SizePlan) -> bool:
    """Does ``plan`` run in two threads or more (:func:`gctool.engine.threads.run_threads`)?"""
    from gctool.engine.threads import run_threads

    return plan.runner is run_threads and min(plan.jobs, len(plan.tasks)) >= 2


# -- means: weighted sums of errors -------------------------------------------------------------
@dataclass
class SumSummary(Checked):
    index: int
    checked: int = 0
    total: float = 0.0

    @classmethod
    def from_record(cls, r: Record) -> SumSummary:
        r.expect("index", "checked", "total")
        total = r.number("total")
        assert total is not None
        return cls(r.index(), r.count("checked"), total)


@dataclass
class SumWorker:
    """The sum of one task's errors; with ``p`` (per-worker straggling probabilities) each set
    weighs ``prod_(i in S) p_i prod_(i not in S) (1 - p_i)`` and sets of weight 0 are skipped."""

    source: Source
    kernel: ErrorKernel
    p: np.ndarray | None = None
    summary_type: ClassVar[type] = SumSummary

    def run(self, task: Task) -> SumSummary:
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
