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

#: rounds of the run's draws on which the estimate finds where the messages' dual walk stops
#: (:meth:`Partial.stops`)
STOP_SAMPLE = 16


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
        """The earliest decodable prefixes of the messages' arrival orders on a sample of
        :data:`STOP_SAMPLE` of the run's rounds (drawn before the estimate), where the
        messages' rule walks down from the cap (all messages) with the dual residual
        (:func:`gctool.sim.stopping.rule.rule_cost`'s ``stops``); None where it does not (no
        times, the authors' rule, a code over C or GF(q), of the group shape, or fewer
        messages than :data:`~gctool.sim.stopping.dual.DUAL_FROM`).

        A round whose prefix :data:`~gctool.sim.stopping.dual.WALK` messages below the cap
        decodes walks to its end, wherever it stops; the others stop within the walk, found
        by bisection.  The messages' rule decides (its set-up, the SVD of the messages, made
        here when it costs at most :data:`~gctool.sim.stopping.rule.FULL_CHECK_NS`; above,
        every round is taken to walk to its end, the most work); a prefix whose missing
        messages are those of at most s workers decodes without asking (the others' messages
        span their rows)."""
        from gctool.budget import solve_cost
        from gctool.sequential.model import from_bits
        from gctool.sim.budget import alone
        from gctool.sim.stopping import StopRule, group_labels
        from gctool.sim.stopping.dual import DUAL_FROM, WALK
        from gctool.sim.stopping.rule import FULL_CHECK_NS

        code = self.messages
        M, K = code.n, int(code.B.shape[1])
        if (setting.times is None or setting.mu is not None or M < DUAL_FROM
                or code.field.is_finite or np.iscomplexobj(np.asarray(code.B))
                or group_labels(code) is not None):
            return None
        mt = self.message_times(setting.times(self.loads), setting)
        rows = np.unique(np.linspace(0, len(mt) - 1, min(len(mt), STOP_SAMPLE)).astype(np.intp))
        order = np.argsort(mt[rows], axis=1, kind="stable")
        out = np.full(len(rows), M - WALK, np.int64)
        if solve_cost(M, K) > FULL_CHECK_NS:
            return out
        rule = StopRule(code, meter=alone(f"estimating the walks of {self.name}"))

        def decodes(r: int, p: int) -> bool:
            if len(set(self.owner[order[r, p:]].tolist())) <= self.s:
                return True
            prefix = np.zeros(M, bool)
            prefix[order[r, :p]] = True
            return rule.decodes_mask(from_bits(prefix))

        for r in range(len(rows)):
            if decodes(r, M - WALK):
                continue
            lo, hi = M - WALK + 1, M + 1  # the earliest decodable prefix lies in [lo, hi]
            while lo < hi:
                mid = (lo + hi) // 2
                if decodes(r, mid):
                    hi = mid
                else:
                    lo = mid + 1
            out[r] = lo
        return out

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
