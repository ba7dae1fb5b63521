"""A heterogeneous code (one-step decoding: the master sums what arrived).

Under a delay model with straggler flags (``bernoulli``, ``markov``) the master waits until
every worker that does not straggle this round has arrived and sums the messages received by
then; the error of that round is ``||sum_i W_i - 1||^2 / k`` over the received rows.  Under
the authors' rule the late workers (after (1 + μ) x the first arrival) are the stragglers.
Under other models there are no flags and the file is raced as an ordinary code.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from gctool.limits import DEFAULT_TOL
from gctool.sim.contenders.base import Run, Setting, authors_wait
from gctool.sim.contenders.code import CodeFile

if TYPE_CHECKING:
    from gctool.sim.estimators import Estimator


class HeteroCode(CodeFile):
    kind = "hetero"

    def run(self, times: np.ndarray, setting: Setting) -> Run:
        at = self.arrivals(times, setting)
        R = len(at)
        if setting.mu is not None:
            stop = np.minimum(authors_wait(at, setting.mu), at.max(axis=1))
        elif setting.flags is None:
            return super().run(times, setting)
        else:
            good = ~setting.flags[:, : self.n]
            stop = np.where(good.any(axis=1), np.where(good, at, -np.inf).max(axis=1),
                            at.min(axis=1))
        W = np.asarray(self.matrix.B, dtype=np.float64)
        used = [np.flatnonzero(at[t] <= stop[t]) for t in range(R)]
        error = np.array([float(np.sum((W[u].sum(axis=0) - 1.0) ** 2)) / self.matrix.k
                          for u in used])
        return Run(stop, used, error <= DEFAULT_TOL, error=error)

    def cost(self, rounds: int, setting: Setting) -> float:
        from gctool.sim.budget import cell_cost
        from gctool.sim.stopping.rule import rule_cost

        return (float(cell_cost(rounds, self.n)) + rounds * self.n * self.columns
                + rule_cost(self.matrix, rounds, self.n - self.s))

    def figures(self, run: Run, setting: Setting) -> dict[str, Any]:
        """The expected one-step error of the design and the workers' probabilities, when the
        round decodes in one step."""
        if run.error is None:
            return {}
        out: dict[str, Any] = {"one_step_error": setting.intervals.summary(run.error)}
        if setting.flags is not None:
            expect = self.matrix.params.get("expected_error")
            out["expected_error"] = None if expect is None else float(expect) / self.matrix.k
        if setting.worker_p is not None:
            out["worker_p"] = [float(x) for x in setting.worker_p[: self.n]]
        return out

    def estimator(self, problem: Any, run: Run, lazy: float | None, sparsifier: Any,
                  seed: int) -> Estimator:
        from gctool.sim.estimators import OneStepEstimator

        if run.error is None:
            return super().estimator(problem, run, lazy, sparsifier, seed)
        return OneStepEstimator(self.name, self.matrix, problem, lazy, sparsifier, seed)
