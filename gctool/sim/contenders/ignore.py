"""Ignore-stragglers: k = n partitions, one per worker; the master uses the fastest n - s
messages and rescales their sum by n/(n - s).  Under the authors' rule the round is inside
the model when at most s workers are late; it then uses every worker that arrived by the wait
(rescaled), else it waits for everyone."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from gctool.sim.contenders.base import Contender, Run, Setting, authors_wait

if TYPE_CHECKING:
    from gctool.sim.estimators import Estimator


class IgnoreStragglers(Contender):
    kind = "ignore"

    def __init__(self, n: int, s: int) -> None:
        super().__init__(f"ignore-stragglers s={s}", n, np.full(n, 1.0 / n), s=s)
        self.role = "ignore-stragglers"

    def ready(self, times: np.ndarray) -> np.ndarray | None:
        return times

    def run(self, times: np.ndarray, setting: Setting) -> Run:
        at = setting.deliver(times)
        R = len(at)
        if setting.mu is not None:
            wait = authors_wait(at, setting.mu)
            arrived = at <= wait[:, None]
            inside = (~arrived).sum(axis=1) <= self.s
            everyone = np.arange(self.n)
            slowest = at.max(axis=1)
            return Run(np.where(inside, np.minimum(wait, slowest), slowest),
                       [np.flatnonzero(arrived[t]) if inside[t] else everyone for t in range(R)],
                       np.zeros(R, bool))
        keep = self.n - self.s
        order = np.argsort(at, axis=1, kind="stable")[:, :keep]
        durations = np.take_along_axis(at, order[:, -1:], axis=1)[:, 0]
        return Run(durations, list(order), np.zeros(R, bool))

    def theory(self, delay: Any, setting: Setting) -> float | None:
        if setting.link is not None or setting.mu is not None:
            return None
        return delay.order_statistic(self.n, self.n - self.s, 1.0 / self.n)

    def lazy_rule(self) -> str | None:
        return "LAG"

    def estimator(self, problem: Any, run: Run, lazy: float | None, sparsifier: Any,
                  seed: int) -> Estimator:
        from gctool.sim.estimators import RescaledEstimator

        return RescaledEstimator(self.name, self.n, problem, lazy, sparsifier, seed)
