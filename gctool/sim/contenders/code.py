"""The contender of a single-round code file: the earliest exactly decodable arrival at the
master (capped at the (n - s)-th, then the optimal approximate decoder), or the authors'
(1 + μ) rule; the naive reference path.  The decodability oracles are
:mod:`gctool.sim.stopping`'s.  Every worker sends one message of 1/m gradient (m pieces of a
communication-efficient code), which pays the run's link."""

from __future__ import annotations

import numpy as np

from gctool.model import GradientCode
from gctool.sim.contenders.base import (
    Contender,
    Run,
    Setting,
    arrival_stop,
    authors_arrived,
    authors_wait,
    distinct_sizes,
    traits,
)


class CodeFile(Contender):
    kind = "code"
    decodes = True

    def __init__(self, code: GradientCode, label: str) -> None:
        super().__init__(label, code.n, code.loads / code.k, s=code.s, code=code)
        self.matrix = code

    @property
    def message_size(self) -> float:
        """Gradients per message: 1/m."""
        return 1.0 / self.matrix.m

    def arrivals(self, times: np.ndarray, setting: Setting) -> np.ndarray:
        return setting.deliver(times, self.message_size)

    def ready(self, times: np.ndarray) -> np.ndarray | None:
        return times

    def run(self, times: np.ndarray, setting: Setting) -> Run:
        at = self.arrivals(times, setting)
        if setting.mu is not None:
            return self._run_mu(at, setting)
        order, p, exact = setting.rule(self.matrix).earliest(at, self.n - self.s)
        R = len(at)
        return Run(arrival_stop(at, order, p), [order[t, :p[t]] for t in range(R)], exact)

    def _run_mu(self, at: np.ndarray, setting: Setting) -> Run:
        """The authors' rule: the workers arrived by (1 + mu) x the first arrival, if they
        decode exactly; else everyone (exact only if all n workers decode)."""
        from gctool.sequential.model import from_bits

        assert setting.mu is not None
        rule = setting.rule(self.matrix)
        wait = authors_wait(at, setting.mu)
        durations = at.max(axis=1)
        used: list[np.ndarray] = []
        everyone = np.arange(self.n)
        exact = np.full(len(at), rule.decodes_mask(from_bits(np.ones(self.n, bool))))
        for t, arrived in enumerate(authors_arrived(at, setting.mu)):
            if rule.decodes_mask(from_bits(arrived)):
                durations[t], exact[t] = min(wait[t], durations[t]), True
                used.append(np.flatnonzero(arrived))
            else:
                used.append(everyone)
        return Run(durations, used, exact)

    def cost(self, rounds: int, setting: Setting) -> float:
        from gctool.sim.stopping.rule import rule_cost

        if setting.mu is None:
            return super().cost(rounds, setting) + rule_cost(
                self.matrix, rounds, self.n - self.s, stops=self.stops(setting))
        return super().cost(rounds, setting) + rule_cost(self.matrix, 0, self.n - self.s,
                                                         self.probes(rounds, setting))

    def stops(self, setting: Setting) -> np.ndarray | None:
        """Where gctool's rule stops on a sample of the run's draws, when it walks down from
        the cap with the dual residual (:func:`gctool.sim.stopping.rule.walk_stops`: a code
        that decodes well below its cap walks to the end and leaves the round to the QR or
        the generic decoder); None without the times, under the authors' rule, or where no
        walk runs."""
        from gctool.sim.stopping.rule import walk_stops

        if setting.times is None or setting.mu is not None:
            return None
        return walk_stops(self.matrix, self.arrivals(setting.times(self.loads), setting),
                          self.n - self.s)

    def probes(self, rounds: int, setting: Setting) -> int | np.ndarray:
        """The sets the authors' rule asks about (:meth:`_run_mu`), before it runs: the
        sizes of the distinct ones (all n workers, then each round's arrived set) when the
        run's times are known, else ``rounds`` sets of unknown size."""
        if setting.times is None or setting.mu is None:
            return rounds
        arrived = authors_arrived(self.arrivals(setting.times(self.loads), setting), setting.mu)
        return distinct_sizes(np.vstack([np.ones((1, self.n), bool), arrived]))

    def lazy_rule(self) -> str | None:
        return traits(self.matrix).lazy_rule
