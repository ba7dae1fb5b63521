"""IS-GC files (:mod:`gctool.codes.isgc`) decoded as IS-GC decodes them: the master sums a
largest set of arrived workers whose partitions do not overlap (every partition once) and
rescales by k / covered.

Waiting rule (gctool's): stop at the earliest arrival after which that set covers every
partition, or at the cap (the (n - s)-th arrival, s the file's exact IS tolerance, so the
cap is always exact; ``erasurehead`` K adds the contender stopping at the K-th arrival, which
ignores more stragglers and loses partitions).  Under the authors' rule the master stops at
the wait or at the cap, whichever is first (approximate, no model to leave).  The report gives
the fraction of rounds decoded exactly and the mean fraction of partitions lost.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from gctool.model import GradientCode
from gctool.sim.contenders.base import Run, Setting, arrival_stop, authors_wait
from gctool.sim.contenders.code import CodeFile

if TYPE_CHECKING:
    from gctool.sim.estimators import Estimator

Chooser = Callable[[np.ndarray], np.ndarray]


class ISDecoding(CodeFile):
    kind = "is-gc"
    decodes = False  # the IS sum, no least-squares decoder

    def __init__(self, code: GradientCode, label: str, choose: Chooser,
                 arrivals: int | None = None) -> None:
        """``choose``: the family's IS decoder, arrived workers -> the disjoint set it sums
        (``IS*Family.chooser`` in :mod:`gctool.codes.isgc`)."""
        super().__init__(code, label if arrivals is None else f"{label} (IS stop={arrivals})")
        self.label = label
        self.cap = code.n - code.s if arrivals is None else int(arrivals)
        self.choose = choose
        self.support = np.asarray(code.B) != 0
        if arrivals is not None:
            self.role = f"{label} (IS stop=K)"

    def stopping_at(self, arrivals: int) -> ISDecoding:
        """The same decoder stopping at the ``arrivals``-th arrival (``erasurehead``)."""
        return ISDecoding(self.matrix, self.label, self.choose, arrivals)

    def covered(self, chosen: np.ndarray) -> int:
        return int(self.support[chosen].sum())

    def run(self, times: np.ndarray, setting: Setting) -> Run:
        at = self.arrivals(times, setting)
        R, k = len(at), self.matrix.k
        order = np.argsort(at, axis=1, kind="stable")
        cap = np.full(R, self.cap)
        durations = arrival_stop(at, order, cap)
        if setting.mu is not None:
            durations = np.minimum(durations, authors_wait(at, setting.mu))
        used, lost = [], np.empty(R)
        for r in range(R):
            got = int((at[r] <= durations[r]).sum())
            if setting.mu is None:
                got = self._earliest(order[r], got)
                durations[r] = at[r, order[r, got - 1]]
            chosen = self.choose(order[r, :got])
            used.append(chosen)
            lost[r] = 1.0 - self.covered(chosen) / k
        return Run(durations, used, lost == 0.0, lost=lost)

    def _earliest(self, order: np.ndarray, cap: int) -> int:
        """The earliest prefix (at most ``cap``) whose disjoint set covers every partition;
        ``cap`` when none does (coverage only grows with the prefix: binary search)."""
        k = self.matrix.k
        if self.covered(self.choose(order[:cap])) < k:
            return cap
        lo, hi = 1, cap
        while lo < hi:
            mid = (lo + hi) // 2
            if self.covered(self.choose(order[:mid])) >= k:
                hi = mid
            else:
                lo = mid + 1
        return lo

    def cost(self, rounds: int, setting: Setting) -> float:
        from gctool.sim.budget import cell_cost

        n = self.n
        return float(cell_cost(rounds, n)) + rounds * n * max(n.bit_length(), 1) * n

    def figures(self, run: Run, setting: Setting) -> dict[str, Any]:
        assert run.lost is not None
        return {"lost_fraction": float(np.mean(run.lost))}

    def lazy_rule(self) -> str | None:
        return "LAGC"

    def estimator(self, problem: Any, run: Run, lazy: float | None, sparsifier: Any,
                  seed: int) -> Estimator:
        from gctool.sim.estimators import ISEstimator

        return ISEstimator(self.name, self.matrix, problem, lazy, sparsifier, seed)
