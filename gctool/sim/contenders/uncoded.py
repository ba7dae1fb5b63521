"""Uncoded: k = n partitions, one per worker; the master waits for all n messages (under both
waiting rules)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from gctool.sim.contenders.base import Contender, Run, Setting

if TYPE_CHECKING:
    from gctool.sim.estimators import Estimator


class Uncoded(Contender):
    kind = "uncoded"
    mu_not_applied = "waits for every worker under both rules"

    def __init__(self, n: int) -> None:
        super().__init__("uncoded", n, np.full(n, 1.0 / n))

    def ready(self, times: np.ndarray) -> np.ndarray | None:
        return times

    def run(self, times: np.ndarray, setting: Setting) -> Run:
        at = setting.deliver(times)
        everyone = np.arange(self.n)
        return Run(at.max(axis=1), [everyone] * len(at), np.ones(len(at), bool))

    def theory(self, delay: Any, setting: Setting) -> float | None:
        if setting.link is not None:
            return None
        return delay.order_statistic(self.n, self.n, 1.0 / self.n)

    def lazy_rule(self) -> str | None:
        return "LAG"

    def estimator(self, problem: Any, run: Run, lazy: float | None, sparsifier: Any,
                  seed: int) -> Estimator:
        from gctool.sim.estimators import SumEstimator

        return SumEstimator(self.name, self.n, problem, lazy, sparsifier, seed)
