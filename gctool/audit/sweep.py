"""One enumeration pass of ``verify``: sources of straggler sets, the per-chunk worker (runs
in a worker process), and the in-order merge of chunk summaries.

A *source* turns a task ``(index, start, stop)`` into a batch of straggler sets and the number
of sets each one stands for:

* :class:`LexSource` - every set, by lexicographic rank (weight 1);
* :class:`OrbitSource` - rotation-orbit representatives among the candidate prefix, each
  weighted by its orbit size;
* :class:`SampleSource` - uniformly random sets (seeded per task, so the sample does not depend
  on the number of processes).

The worker evaluates a batch with a kernel (:mod:`gctool.audit.nullspace`) and returns a
small :class:`ChunkSummary`; :class:`Accumulator` merges them in task order with strict
comparisons, so ties resolve to the earliest set and results do not depend on ``--jobs``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from gctool.audit.enumeration import MAX_RANKABLE, count_sets, unrank_lex
from gctool.audit.nullspace import ChunkEval
from gctool.audit.symmetry import Rotation, canonical_mask, orbit_sizes

#: number of weakest sets (by the nullspace screen) re-evaluated directly for diagnostics
WEAKEST = 16

Task = tuple[int, int, int]  # (index, start, stop)


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
    n: int
    s: int
    rot: Rotation

    def sets(self, task: Task) -> tuple[np.ndarray, np.ndarray]:
        _, a, b = task
        C = unrank_lex(self.n, self.s, np.arange(a, b))
        C = C[canonical_mask(C, self.rot)]
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


class Source(Protocol):
    def sets(self, task: Task) -> tuple[np.ndarray, np.ndarray]: ...


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
