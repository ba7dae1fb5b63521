"""Ring all-reduce: every one of n nodes computes its 1/n of the data (stragglers hit every
node), then 2(n - 1) synchronous steps of ``latency + 1/(n bandwidth)`` (reduce-scatter and
all-gather; no straggler tolerance).  Without a link the steps are free and it is uncoded."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from gctool.sim.contenders.base import Contender, Run, Setting

if TYPE_CHECKING:
    from gctool.sim.estimators import Estimator


class RingAllReduce(Contender):
    kind = "ring"
    mu_not_applied = "waits for every worker under both rules"

    def __init__(self, n: int) -> None:
        super().__init__(f"ring all-reduce n={n}", n, np.full(n, 1.0 / n))
        self.role = "ring all-reduce"

    def run(self, times: np.ndarray, setting: Setting) -> Run:
        link = setting.link
        steps = 0.0 if link is None else 2 * (self.n - 1) * (
            link.latency + 1.0 / (self.n * link.bandwidth))
        everyone = np.arange(self.n)
        return Run(times.max(axis=1) + steps, [everyone] * len(times), np.ones(len(times), bool))

    def lazy_rule(self) -> str | None:
        return "LAG"

    def estimator(self, problem: Any, run: Run, lazy: float | None, sparsifier: Any,
                  seed: int) -> Estimator:
        from gctool.sim.estimators import SumEstimator

        return SumEstimator(self.name, self.n, problem, lazy, sparsifier, seed)
