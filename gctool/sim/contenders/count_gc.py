"""The count-based GC model: a gradient code at any s that decodes from *any* n - s arrivals,
with Tandon's load (s + 1)/n per worker, and no matrix behind it.

This is the baseline of the sequential-GC authors' simulator
(``GradientCoding`` in mamaj/Sequential-Gradient-Coding-2): it exists for every s, where the
designed codes do not (FRC needs (s + 1) | n), and it is what a search of the best GC over
every s races.  It is a model, not a code: the report says so.  gctool's rule stops at the
(n - s)-th arrival; the authors' rule waits (1 + μ) x the first arrival and waits for everyone
when more than s workers are late.  (The authors' own check, ``is_straggler.sum() < s``,
allows one straggler fewer: at their parameter s it is this model at s - 1 with the load of
s.)  In training the master gets the exact gradient, as the model promises.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from gctool.sim.contenders.base import Contender, Run, Setting, authors_wait

if TYPE_CHECKING:
    from gctool.sim.estimators import Estimator


class CountGC(Contender):
    kind = "gc-model"

    def __init__(self, n: int, s: int, strict: bool = False) -> None:
        """``strict``: the authors' check (fewer than s late workers) instead of at most s."""
        name = f"gc-model s={s}" + (" (authors' count)" if strict else "")
        super().__init__(name, n, np.full(n, (s + 1) / n), s=s)
        self.tolerated = s - 1 if strict else s
        self.role = "gc-model"

    def ready(self, times: np.ndarray) -> np.ndarray | None:
        return times

    def run(self, times: np.ndarray, setting: Setting) -> Run:
        at = setting.deliver(times)
        R, n = at.shape
        exact = np.ones(R, bool)
        if setting.mu is not None:
            wait = authors_wait(at, setting.mu)
            arrived = at <= wait[:, None]
            inside = (~arrived).sum(axis=1) <= self.tolerated
            slowest = at.max(axis=1)
            everyone = np.arange(n)
            return Run(np.where(inside, np.minimum(wait, slowest), slowest),
                       [np.flatnonzero(arrived[t]) if inside[t] else everyone for t in range(R)],
                       exact)
        keep = n - max(self.tolerated, 0)
        order = np.argsort(at, axis=1, kind="stable")[:, :keep]
        durations = np.take_along_axis(at, order[:, -1:], axis=1)[:, 0]
        return Run(durations, list(order), exact)

    def theory(self, delay: Any, setting: Setting) -> float | None:
        if setting.link is not None or setting.mu is not None:
            return None
        return delay.order_statistic(self.n, self.n - max(self.tolerated, 0), self.load)

    def lazy_rule(self) -> str | None:
        return None

    def estimator(self, problem: Any, run: Run, lazy: float | None, sparsifier: Any,
                  seed: int) -> Estimator:
        from gctool.sim.estimators import ExactEstimator

        return ExactEstimator(self.name, self.n, problem, None, sparsifier, seed)
