"""The audits' part of the enumeration engine (:mod:`gctool.engine.sweep`).

* :class:`OrbitSource` - rotation-orbit representatives among the candidate prefix, each
  weighted by its orbit size (:mod:`gctool.audit.symmetry`); :func:`exhaustive_source` picks
  it or :class:`gctool.engine.sweep.LexSource`;
* ``verify``'s worker: :class:`SweepWorker` evaluates a task with a verify kernel
  (:class:`gctool.audit.chunks.Kernel`: :mod:`gctool.audit.nullspace`,
  :mod:`gctool.audit.rational`) and returns a :class:`~gctool.audit.chunks.ChunkSummary` (cut
  at the first failing set, with diagnostics), which :class:`~gctool.audit.chunks.Accumulator`
  merges in task order;
* :func:`local_runner` - threads for a kernel that walks rank ranges in compiled code (and
  verify's one set per rotation orbit, decided by the same compiled kernels).

Attack oracles as kernels of the engine's workers are :mod:`gctool.audit.oracles.kernel`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from gctool.audit.chunks import ChunkSummary, Kernel, summarise
from gctool.audit.symmetry import Rotation, canonical_mask, canonical_sets, count_candidates
from gctool.engine.enumeration import count_sets
from gctool.engine.records import rank_holds
from gctool.engine.sweep import LexSource, RangeWalker, Runner, Source, Task


@dataclass
class OrbitSource:
    """Canonical sets among the candidate ranks (sets containing a worker < rot.t); with
    ``weighted`` each one weighs its orbit size, else 1 (the weights are not computed)."""

    n: int
    s: int
    rot: Rotation
    weighted: bool = True
    dense: ClassVar[bool] = False  # canonical sets only: fewer sets than ranks

    def sets(self, task: Task) -> tuple[np.ndarray, np.ndarray]:
        _, a, b = task
        return canonical_sets(self.n, self.s, self.rot, a, b, self.weighted)

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
class SweepWorker:
    """Evaluates one task: build the sets, run the kernel, summarise (picklable)."""

    source: Source
    kernel: Kernel
    numeric: bool
    summary_type: ClassVar[type[ChunkSummary]] = ChunkSummary

    def run(self, task: Task) -> ChunkSummary:
        if isinstance(self.source, LexSource):  # a compiled kernel walks the ranks itself
            out = self.kernel.summarise_range(task, self.source.n, self.source.s, self.numeric)
            if out is not None:
                return out
        S, w = self.source.sets(task)
        if S.shape[0] == 0:
            return ChunkSummary(task[0])
        return summarise(task[0], S, w, self.kernel.evaluate(S), self.numeric)


def local_runner(kernel: Kernel | RangeWalker, source: Source, given: bool = False
                 ) -> Runner | None:
    """The runner of the tasks of ``kernel`` on ``source`` on this machine: threads
    (:func:`gctool.engine.threads.run_threads`) when every task is a compiled walk of a rank
    range (it releases the GIL), else None (the engine's process pool).  ``given``: the
    kernel decides given sets with the compiled kernels of its walk (``verify``'s
    :meth:`~gctool.audit.chunks.Kernel.evaluate`: the screen, its second stage and direct
    decoder over R/C, the test over GF(q), each without the GIL), so that the tasks of one
    set per rotation orbit (:class:`OrbitSource`: the orbit filter, compiled for the sizes
    where it costs, then those sets) take threads too: in a pool of processes each run
    forks them (20-50 ms before the first task, on two cores) for no work they do faster."""
    if not (isinstance(source, LexSource) or (given and isinstance(source, OrbitSource))) \
            or not kernel.walks_compiled(source.s):
        return None
    from gctool.engine.threads import run_threads

    return run_threads


