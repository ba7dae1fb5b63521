"""The audits' part of the enumeration engine (:mod:`gctool.engine.sweep`).

* :class:`OrbitSource` - rotation-orbit representatives among the candidate prefix, each
  weighted by its orbit size (:mod:`gctool.audit.symmetry`); :func:`exhaustive_source` picks
  it or :class:`gctool.engine.sweep.LexSource`;
* ``verify``'s worker and fold: :class:`SweepWorker` evaluates a task with a verify kernel
  (:mod:`gctool.audit.nullspace`) and returns a :class:`ChunkSummary` (cut at the first
  failing set, with diagnostics); :class:`Accumulator` merges them in task order;
* :class:`OracleKernel` - an attack oracle (:mod:`gctool.audit.oracles`) as a picklable
  kernel of :class:`gctool.engine.sweep.PeakWorker` (worst case),
  :class:`~gctool.engine.sweep.ExceedWorker` (threshold) and
  :class:`~gctool.engine.sweep.SumWorker` (random-set means);
* :func:`summary_record` / :func:`summary_from_record` - every summary type, for checkpoints.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

import numpy as np

from gctool.audit.nullspace import ChunkEval
from gctool.audit.symmetry import Rotation, canonical_mask, count_candidates, orbit_sizes
from gctool.budget import Budget
from gctool.engine.enumeration import count_sets, unrank_lex, unrank_one
from gctool.engine.records import Record, rank_holds, record
from gctool.engine.sweep import (
    Best,
    ExceedSummary,
    LexSource,
    PeakSummary,
    Runner,
    Source,
    SumSummary,
    Task,
)
from gctool.numerics import first_max

#: number of weakest sets (by the nullspace screen) re-evaluated directly for diagnostics
WEAKEST = 16


class Kernel(Protocol):
    name: str

    def evaluate(self, S: np.ndarray) -> ChunkEval: ...

    def chunk_size(self, s: int) -> int: ...


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

    def holds(self, task: Task, S: list[int]) -> bool:
        """Is S one of the task's sets (a canonical set of its rank range)?"""
        return (rank_holds(self.n, self.s, task, S)
                and bool(canonical_mask(np.array([S], dtype=np.intp), self.rot)[0]))


def exhaustive_source(n: int, s: int, rot: Rotation | None, weighted: bool = True
                      ) -> tuple[Source, int]:
    """(source, number of ranks to walk) for every set of size s, or one per rotation orbit."""
    if rot is None or s == 0:
        return LexSource(n, s), count_sets(n, s)
    return OrbitSource(n, s, rot, weighted), count_candidates(n, s, rot.t)


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

    @classmethod
    def from_record(cls, r: Record) -> ChunkSummary:
        """A chunk read back from a checkpoint, every field checked against its task."""
        r.expect("index", "evaluated", "weight", "fail_set", "direct", "max_norm",
                 "max_cond", "max_resid", "min_fail_err", "min_screen", "weakest")
        evaluated = r.count("evaluated")
        n = int(r.source.n)
        out = cls(r.index(), evaluated, r.count("weight", most=evaluated * max(1, n)),
                  r.straggler_set("fail_set", optional=True), r.count("direct", most=evaluated),
                  r.best("max_norm", optional=True), r.best("max_cond", optional=True),
                  r.best("max_resid", optional=True),
                  r.number("min_fail_err", optional=True), r.number("min_screen", optional=True),
                  r.bests("weakest", most=WEAKEST))
        if out.weight < out.evaluated or (out.fail_set is not None and out.evaluated == 0):
            raise ValueError("'evaluated', 'weight' and 'fail_set' do not agree")
        return out


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


class Unsettled(Protocol):
    """A chunk whose last few sets the worker left to the fold, which decides them in task
    order in its own thread (:func:`settle`): threads walking compiled code then never wait
    for the GIL held by numpy (``SweepWorker(defer=True)``, in-process runners only)."""

    def settle(self) -> ChunkSummary: ...


def settle(chunk: ChunkSummary | Unsettled) -> ChunkSummary:
    """The summary of a chunk, deciding what its worker left undecided."""
    return chunk if isinstance(chunk, ChunkSummary) else chunk.settle()


@dataclass
class SweepWorker:
    """Evaluates one task: build the sets, run the kernel, summarise (picklable).  With
    ``defer`` a compiled walk may return an :class:`Unsettled` chunk (for the threads of this
    process, whose fold settles it)."""

    source: Source
    kernel: Kernel
    numeric: bool
    defer: bool = False
    summary_type: ClassVar[type] = ChunkSummary

    def run(self, task: Task) -> ChunkSummary | Unsettled:
        ranged = getattr(self.kernel, "summarise_range", None)
        if ranged is not None and isinstance(self.source, LexSource):  # compiled: walks ranks
            out = ranged(task, self.source.n, self.source.s, self.numeric, self.defer)
            if out is not None:
                return out
        S, w = self.source.sets(task)
        if S.shape[0] == 0:
            return ChunkSummary(task[0])
        return summarise(task[0], S, w, self.kernel.evaluate(S), self.numeric)


def local_runner(kernel: Any, source: Source) -> Runner | None:
    """The runner of the tasks of ``kernel`` on ``source`` on this machine: threads
    (:func:`gctool.engine.threads.run_threads`) when every task is a compiled walk of a rank
    range (it releases the GIL), else None (the engine's process pool)."""
    walks = getattr(kernel, "walks_compiled", None)
    if walks is None or not isinstance(source, LexSource) or not walks(source.s):
        return None
    from gctool.engine.threads import run_threads

    return run_threads


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

    def merge(self, chunk: ChunkSummary | Unsettled) -> bool:
        """Fold in the next chunk; True when it holds a counterexample (stop)."""
        c = settle(chunk)
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


@dataclass
class OracleKernel:
    """An attack oracle as a picklable kernel: it travels as its recipe (code, decoder, weights,
    tol, and whether the oracle had planned its compiled path) and is rebuilt where it runs,
    taking the same path, so every executor computes the same floats; in this process (and in
    forked workers) the oracle it was made from is used as is.  The rebuilt oracle keeps the
    original's :class:`~gctool.budget.Budget` (a Dask worker does not see the client's
    ``max_work``)."""

    code: Any
    kind: str
    weights: Any
    tol: float
    _oracle: Any = field(default=None, repr=False, compare=False)
    compiled: bool = False  # the original oracle planned its compiled path (set when pickled)
    budget: Budget | None = None  # the original oracle's budget (set when pickled)

    @staticmethod
    def of(oracle: Any) -> OracleKernel:
        return OracleKernel(oracle.code, oracle.kind, getattr(oracle, "user", None),
                            oracle.decoder.tol, oracle)

    def __getstate__(self) -> dict[str, Any]:
        planned = self.compiled or getattr(self._oracle, "compiled", None) is not None
        budget = getattr(self._oracle, "budget", self.budget)
        return dict(self.__dict__, _oracle=None, compiled=planned, budget=budget)

    @property
    def oracle(self) -> Any:
        if self._oracle is None:
            from gctool.audit.oracles import make_oracle

            self._oracle = make_oracle(self.code, self.kind, self.weights, self.tol,
                                       budget=self.budget)
        return self._oracle

    def _for(self, s: int) -> Any:
        """The oracle, on the path the original one took for sets of size s."""
        oracle = self.oracle
        if self.compiled and getattr(oracle, "compiled", None) is None:
            oracle.plan_compiled(s)
        return oracle

    def walks_compiled(self, s: int) -> bool:
        """Does the oracle walk rank ranges of sets of size s in compiled code?"""
        walks = getattr(self._for(s), "walks_compiled", None)
        return walks is not None and bool(walks(s))

    def errors(self, S: np.ndarray) -> np.ndarray:
        return self._for(S.shape[1]).errors(S)

    def _range(self, task: Task, n: int, s: int, limit: float = np.inf) -> np.ndarray | None:
        walk = getattr(self._for(s), "errors_range", None)
        return None if walk is None else walk(n, s, task[1], task[2], limit)

    def peak_range(self, task: Task, n: int, s: int) -> PeakSummary | None:
        """The worst set of a rank range walked by a compiled oracle (None: not compiled)."""
        err = self._range(task, n, s)
        out = PeakSummary(task[0])
        if err is None:
            return None
        if err.size:
            i = first_max(err)
            worst = unrank_one(n, s, task[1] + i)
            out.peaks.append((float(err[i]), worst))
            out.checked = err.size
        return out

    def exceed_range(self, task: Task, n: int, s: int, limit: float) -> ExceedSummary | None:
        """The first set over ``limit`` of a rank range walked by a compiled oracle (the walk
        stops there)."""
        err = self._range(task, n, s, limit)
        if err is None:
            return None
        out = ExceedSummary(task[0], evaluated=err.size, checked=err.size)
        over = np.flatnonzero(err > limit)
        if over.size:
            i = int(over[0])
            out.checked, out.fail_err = i + 1, float(err[i])
            out.fail_set = unrank_one(n, s, task[1] + i)
        return out


#: summary types by name (checkpoints record them as JSON); an engine whose summaries are
#: defined elsewhere adds them (the frames' spectra: :mod:`gctool.audit.spectrum`)
SUMMARIES: dict[str, type] = {c.__name__: c for c in (ChunkSummary, PeakSummary, ExceedSummary,
                                                      SumSummary)}


def summary_record(summary: Any) -> dict[str, Any]:
    """The checkpoint record of a summary (:func:`gctool.engine.records.record`)."""
    settle_it = getattr(summary, "settle", None)  # an Unsettled chunk
    return record(summary if settle_it is None else settle_it())


def summary_from_record(blob: Any, task: Task, worker: Any) -> object:
    """The summary a checkpoint recorded for ``task`` of ``worker``'s run, rebuilt by its
    type's ``from_record`` after checking every field against the task (ValueError says what
    does not fit); the type must be one the worker returns."""
    if not isinstance(blob, dict) or set(blob) != {"type", "data"}:
        raise ValueError("an entry must be an object with 'type' and 'data'")
    cls = SUMMARIES.get(blob["type"]) if isinstance(blob["type"], str) else None
    if cls is None:
        raise ValueError(f"unknown summary type {str(blob['type'])[:40]!r}")
    expected = getattr(worker, "summary_type", None)
    if expected is not None and cls is not expected:
        raise ValueError(f"a {cls.__name__} where this run records {expected.__name__}")
    rebuild: Any = cls.from_record  # type: ignore[attr-defined]
    i, a, b = task
    return rebuild(Record(blob["data"], (int(i), int(a), int(b)), getattr(worker, "source", None)))
