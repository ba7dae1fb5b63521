"""Partial work in ``gctool simulate``: multi-message codes (files with an ``order``).

Timing model (gctool's): worker i's time for a round, T_i, is drawn by the delay model for its
whole load exactly as for the one-message code, and split evenly over its d_i partitions in its
processing order, so the message ending after its e-th partition is ready at ``T_i e / d_i``.
Every message is 1/m of a gradient and pays the run's link (the messages of a worker, and of
all workers, reach the master one after another).

Waiting rule: the master stops at the earliest message arrival after which the delivered
messages decode exactly (:class:`gctool.sim.stopping.StopRule` on the code whose rows are the
messages, :func:`gctool.audit.partial.message_code`), but never later than the one-message code
would stop (its earliest decodable arrival, or its (n - s)-th arrival with the least-squares
decoder); by then every finished worker's messages span its row, so waiting longer never
helps.  The gain over the one-message code is measured on the same draws.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from gctool.model import GradientCode
from gctool.sim.contenders.base import Contender, Run, Setting, authors_wait, distinct_sizes
from gctool.sim.contenders.code import CodeFile

if TYPE_CHECKING:
    from gctool.sim.estimators import Estimator


class Partial(Contender):
    """The multi-message version of a code file with an order."""

    kind = "partial"
    decodes = True
    what = "partial-work"

    def __init__(self, code: GradientCode, label: str, messages: GradientCode,
                 owner: np.ndarray, fractions: np.ndarray, suffix: str = "partial work"
                 ) -> None:
        super().__init__(f"{label} ({suffix})", code.n, code.loads / code.k, s=code.s,
                         code=messages)
        self.messages = messages
        self.reference: CodeFile = CodeFile(code, label)
        self.owner, self.fractions = owner, fractions

    @classmethod
    def of(cls, code: GradientCode, label: str) -> Partial:
        from gctool.audit.partial import message_code

        assert code.order is not None
        mcode, _ = message_code(code, code.order)
        fractions, owner = [], []
        for i, groups in enumerate(code.order):
            d = sum(len(g) for g in groups)
            end = 0
            for g in groups:
                end += len(g)
                fractions.append(end / d)
                owner.append(i)
        return cls(code, label, mcode, np.array(owner, dtype=np.intp), np.array(fractions))

    def message_times(self, times: np.ndarray, setting: Setting) -> np.ndarray:
        """(rounds, messages) arrival times at the master: ready at T_i e / d_i."""
        ready = np.asarray(times[:, self.owner] * self.fractions[None, :])
        return setting.deliver(ready, 1.0 / self.messages.m)

    def ready(self, times: np.ndarray) -> np.ndarray | None:
        return np.asarray(times[:, self.owner] * self.fractions[None, :])

    def run(self, times: np.ndarray, setting: Setting) -> Run:
        mt = self.message_times(times, setting)
        if setting.mu is not None:
            return self._run_mu(times, mt, setting)
        one = self.reference.run(times, setting)
        order, p, exact = setting.rule(self.messages).earliest(mt, mt.shape[1])
        R = len(times)
        t_exact = np.where(exact, mt[np.arange(R), order[np.arange(R), np.maximum(p, 1) - 1]],
                           np.inf)
        use = t_exact <= one.durations
        durations = np.where(use, t_exact, one.durations)
        used = []
        for r in range(R):
            if use[r]:
                used.append(order[r, :p[r]])
            else:  # the one-message stop: every message delivered by then
                used.append(np.flatnonzero(mt[r] <= one.durations[r]))
        done = exact & use
        if one.exact is not None:
            done = done | (~use & one.exact)
        return Run(durations, used, done)

    def _run_mu(self, times: np.ndarray, mt: np.ndarray, setting: Setting) -> Run:
        """The authors' rule on messages: at (1 + mu) x the first worker's finish (the arrival
        of its last message) the master holds every message delivered by then; if they decode
        exactly the round ends there, else it waits for everyone (every message)."""
        from gctool.sequential.model import from_bits

        assert setting.mu is not None
        rule = setting.rule(self.messages)
        wait = authors_wait(mt[:, self.fractions == 1.0], setting.mu)
        durations, used = mt.max(axis=1), []
        everything = np.arange(mt.shape[1])
        exact = np.full(len(times), rule.decodes_mask(from_bits(np.ones(mt.shape[1], bool))))
        for r in range(len(times)):
            got = mt[r] <= wait[r]
            if rule.decodes_mask(from_bits(got)):
                durations[r], exact[r] = min(wait[r], durations[r]), True
                used.append(np.flatnonzero(got))
            else:
                used.append(everything)
        return Run(durations, used, exact)

    def probes(self, rounds: int, setting: Setting) -> int | np.ndarray:
        """Single-set decodability checks per run beyond the stopping prefixes: under the
        authors' rule, the sets of messages delivered by each round's wait (:meth:`_run_mu`),
        the sizes of the distinct ones (every message, then each round's) when the run's
        times are known, else ``rounds`` sets of unknown size."""
        if setting.mu is None:
            return 0
        if setting.times is None:
            return rounds
        mt = self.message_times(setting.times(self.loads), setting)
        got = mt <= authors_wait(mt[:, self.fractions == 1.0], setting.mu)[:, None]
        return distinct_sizes(np.vstack([np.ones((1, mt.shape[1]), bool), got]))

    def stops(self, setting: Setting) -> np.ndarray | None:
        """Where the messages' rule walking down from the cap (every message) stops, on a
        sample of the run's draws (:func:`gctool.sim.stopping.rule.walk_stops`; a walk whose
        rule costs too much to set up here is taken to go to its end, the most work); None
        under the authors' rule (no walk) or without the times."""
        from gctool.sim.stopping.dual import WALK
        from gctool.sim.stopping.rule import walk_stops

        if setting.times is None or setting.mu is not None:
            return None
        M = self.messages.n
        return walk_stops(self.messages, self.message_times(setting.times(self.loads), setting),
                          M, M - WALK)

    def cost(self, rounds: int, setting: Setting) -> float:
        from gctool.sim.stopping.rule import rule_cost

        mu = setting.mu is not None
        # gctool's rule runs the one-message code too (the stop is never later than its)
        return (super().cost(rounds, setting)
                + (0.0 if mu else self.reference.cost(rounds, setting))
                + rule_cost(self.messages, 0 if mu else rounds, self.messages.n,
                            self.probes(rounds, setting), self.stops(setting)))

    def lazy_rule(self) -> str | None:
        return self.reference.lazy_rule()

    def estimator(self, problem: Any, run: Run, lazy: float | None, sparsifier: Any,
                  seed: int) -> Estimator:
        from gctool.sim.estimators import CodedEstimator

        return CodedEstimator(self.name, self.messages, problem, lazy, sparsifier, seed,
                              workers=self.n)
