"""What a verify kernel hands the enumeration engine, and how ``verify`` folds it: the layer
below the kernels (:mod:`gctool.audit.nullspace`, :mod:`gctool.audit.rational`, the compiled
walks of :mod:`gctool.audit.kernels`) and the worker that runs them (:mod:`gctool.audit.sweep`).

* :class:`ChunkEval` - per-set results of a kernel on a chunk of straggler sets;
* :class:`Kernel` - the base class of verify kernels: ``evaluate`` and ``chunk_size``, and the
  declared capabilities of a kernel that walks rank ranges in compiled code
  (``walks_compiled``, ``will_compile``, ``summarise_range``; by default it does not);
* :class:`ChunkSummary` (what one chunk contributes; :func:`summarise` cuts a chunk at its first
  failing set) and :class:`Accumulator` (their merge, in task order: small summaries, every
  set decided by the worker).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from gctool.engine.records import Record
from gctool.engine.sweep import Best, Task

if TYPE_CHECKING:
    from gctool.compiled import Kind

#: number of weakest sets (by the nullspace screen) re-evaluated directly for diagnostics
WEAKEST = 16


@dataclass
class ChunkEval:
    """Per-set results of a kernel on a chunk of straggler sets (arrays indexed by set)."""

    ok: np.ndarray
    direct: np.ndarray  # decided by the direct decoder
    error: np.ndarray  # squared error where direct, else nan
    cond: np.ndarray  # exact cond(B_F) where direct, else nan
    norm: np.ndarray  # ||a|| (exact where known), else nan
    screen: np.ndarray  # nullspace lower bound on sigma_min(N[:, S]) (R/C), else nan

    @staticmethod
    def blank(b: int) -> ChunkEval:
        nan = np.full(b, np.nan)
        return ChunkEval(np.zeros(b, bool), np.zeros(b, bool), nan, nan.copy(), nan.copy(),
                         nan.copy())


class Kernel:
    """A verify kernel: decides chunks of straggler sets (:meth:`evaluate`), in batches of
    :meth:`chunk_size`.  A kernel that walks rank ranges in compiled code overrides the three
    capabilities below; the base class declares that it does not."""

    name: ClassVar[str] = ""

    def evaluate(self, S: np.ndarray) -> ChunkEval:
        raise NotImplementedError

    def chunk_size(self, s: int, given: bool = False) -> int:
        """Sets per task of size s; ``given``: the run decides given sets (:meth:`evaluate`:
        one per rotation orbit, or a sample), never rank ranges, so a kernel that plans
        compiled code for it loads only the entry points of given sets."""
        raise NotImplementedError

    def set_time(self, s: int, sets: int) -> float:
        """Estimated time per set of size s in an enumeration of ``sets`` (ranks walked), in
        ns."""
        raise NotImplementedError

    def given_time(self, s: int, sets: int) -> float:
        """Estimated time per set of size s given as explicit batches (one per rotation
        orbit: :meth:`evaluate`, never a walk of rank ranges), in ns: :meth:`set_time`
        unless the kernel's walk is cheaper than its batches."""
        return self.set_time(s, sets)

    def walks_compiled(self, s: int) -> bool:
        """Are rank ranges of sets of size s walked in compiled code (which releases the GIL,
        so ``jobs`` run in threads)?"""
        return False

    def will_compile(self, s: int) -> bool:
        """Will sets of size s be walked in compiled code (known before compiling anything)?"""
        return False

    def walk_kind(self, s: int, given: bool = False) -> Kind | bool:
        """:meth:`will_compile`, naming the kind of kernels the walk loads
        (:class:`gctool.compiled.Kind`, which the workers of a Dask runner are charged loading
        until they have: :func:`gctool.audit.distributed.kernels_load_ns`), or with ``given``
        those a run of given sets loads (:meth:`chunk_size` with ``given``); False when sets
        of size s are not walked compiled."""
        return self.will_compile(s)

    def judge(self) -> Kernel | None:
        """The kernel that decides this kernel's doubtful sets exactly and charges their time
        to the run's work meter (its ``meter``, which a process pool shares:
        :func:`gctool.budget.pool_share`); None: no kernel of this one charges a meter."""
        return None

    def summarise_range(self, task: Task, n: int, s: int, numeric: bool
                        ) -> ChunkSummary | None:
        """The summary of the lexicographic rank range ``task``, walked in compiled code (None:
        not walked; the worker evaluates the task's sets)."""
        return None

    def second_time(self, s: int) -> float:
        """Estimated time, in ns, of the compiled second stage on one set of size s that the
        compiled walk leaves doubtful (0: none; the set goes to :meth:`evaluate`'s numpy
        route directly)."""
        return 0.0

    def spread_time(self, s: int) -> float:
        """Estimated time per set of size s, in ns, of the work that the compiled walk hands
        on to its later stages, read from random sets: those sets cluster along the lex order,
        so a timed window of consecutive ranks may hold few of them, and part of this is a
        floor of its rate (:data:`gctool.audit.verify.enumeration.SPREAD_FLOOR`; 0: none
        known)."""
        return 0.0


@dataclass
class ChunkSummary:
    """What one chunk contributes to the verdict and to the diagnostics.

    Under the real walk's carried norm floor (:data:`gctool.audit.kernels.ranges.CARRY`, a
    kernel with ``run_floors``) ``max_norm`` is what the range's walk kept, not necessarily the
    range's own largest decoder norm: at least it whenever that is at least the floor the walk
    started from (the largest norm of ranges that end before this one and were summarised in
    the same process), else possibly smaller or None.  Every other field is the range's own.
    A floor is always the norm of a set before the range, so the range holding the run's first
    largest norm records it and that set exactly; merged in any combination with ranges
    recomputed later (a checkpoint resumed in another process, with other jobs, or without
    the carry), the report is the uninterrupted run's: a record needs nothing else."""

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

    @property
    def covered(self) -> int:
        return self.evaluated

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
    """The first best value with its set; nan (not computed) never counts, inf does (a decoder
    norm beyond float64 is the largest, not left out)."""
    known = ~np.isnan(values)
    if values.size == 0 or not known.any():
        return None
    v = np.where(known, values, -np.inf if largest else np.inf)
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
        out.weakest = [(float(lb[i]), S[i].tolist()) for i in weakest(lb) if np.isfinite(lb[i])]
    return out


def weakest(lb: np.ndarray) -> np.ndarray:
    """The indices of the :data:`WEAKEST` smallest of ``lb``, smallest first, ties in index
    order: ``np.argsort(lb, kind="stable")[:WEAKEST]``, from those at or below the
    WEAKEST-th smallest alone (a chunk's full sort took 0.6 ms of 10,000 sets' 7)."""
    if lb.size > WEAKEST:
        kth = lb[np.argpartition(lb, WEAKEST - 1)[:WEAKEST]].max()
        if not np.isnan(kth):
            low = np.flatnonzero(lb <= kth)  # every tie of the kth too, in index order
            return low[np.argsort(lb[low], kind="stable")[:WEAKEST]]
    return np.argsort(lb, kind="stable")[:WEAKEST]


def _better(new: Best | None, old: Best | None, largest: bool = True) -> Best | None:
    if new is None:
        return old
    if old is None:
        return new
    return new if (new[0] > old[0] if largest else new[0] < old[0]) else old


def _kept(weakest: list[Best], new: list[Best]) -> bool:
    """Would merging ``new`` into the full, sorted ``weakest`` leave it as it is (every new
    value at or above its last: the stable sort puts the old ones first)?  Most chunks of a
    long run: the fold then sorts nothing."""
    return len(weakest) >= WEAKEST and min(new)[0] >= weakest[-1][0]


@dataclass
class Accumulator(ChunkSummary):
    """In-order merge of chunk summaries: the summary of the chunks merged so far, with the
    fields of one (``index`` unused)."""

    index: int = -1

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
        if c.weakest and not _kept(self.weakest, c.weakest):
            merged = sorted(self.weakest + c.weakest, key=lambda b: b[0])
            self.weakest = merged[:WEAKEST]
        if c.fail_set is not None:
            self.fail_set = c.fail_set
            return True
        return False
