"""Nested gradient codes in ``gctool simulate``: decode at the level the stragglers allow.

A nested file (``gctool design nested``, :mod:`gctool.codes.nested`) has levels
s_1 < ... < s_L; worker i computes its s_L + 1 partitions in order and sends its level-ℓ
message (row i of B_ℓ) once it has s_ℓ + 1 of them.  Timing model (gctool's, the one of
partial work, :mod:`gctool.sim.contenders.partial`): the worker's time T_i for the round is
drawn for its whole load (s_L + 1)/n and split evenly over its partitions, so its level-ℓ
message is ready at ``T_i (s_ℓ + 1) / (s_L + 1)``.  The master stops at the earliest message
after which the messages received decode (never later than the fixed-s_L code, the file
itself, which is raced next to it on the same delays; the gain is reported).  The *level
reached* in a round is the smallest ℓ such that the messages of levels <= ℓ received by then
decode.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gctool.model import GradientCode
from gctool.sim.contenders.base import Run, Setting, authors_wait
from gctool.sim.contenders.partial import Partial


class Nested(Partial):
    kind = "nested"
    what = "nested"
    level: np.ndarray  # the level of every message
    levels: list[int]  # s_1 < ... < s_L

    @classmethod
    def of(cls, code: GradientCode, label: str) -> Nested:
        from gctool.codes.nested_profile import level_matrices

        mats = level_matrices(code)
        levels = [int(x) for x in code.params["levels"]]
        L, n = len(mats), code.n
        rows = np.concatenate([np.stack([M[i] for M in mats]) for i in range(n)])  # (n L, k)
        mcode = GradientCode(rows, code.field, code.s, "nested-messages")
        level = np.tile(np.arange(1, L + 1), n)
        fractions = np.array([(levels[lv - 1] + 1) / (levels[-1] + 1) for lv in level])
        out = cls(code, label, mcode, np.repeat(np.arange(n), L), fractions, "nested levels")
        out.level, out.levels = level, levels
        return out

    def run(self, times: np.ndarray, setting: Setting) -> Run:
        from gctool.sequential.model import from_bits

        run = super().run(times, setting)
        rule = setting.rule(self.messages)
        mt = self.message_times(times, setting)
        L = len(self.levels)
        reached = np.zeros(len(times), dtype=np.int64)  # 0: not decoded exactly
        for r in range(len(times)):
            got = mt[r] <= run.durations[r]
            for lv in range(1, L + 1):
                if rule.decodes_mask(from_bits(got & (self.level <= lv))):
                    reached[r] = lv
                    break
        run.levels = reached
        return run

    def probes(self, rounds: int, setting: Setting) -> int | np.ndarray:
        """The sets the run asks beyond the stopping prefixes, read off the run's draws when
        they are known (else ``rounds`` x (L, plus one under the authors' rule) of unknown
        size), each distinct set once: under the authors' rule the messages delivered by the
        wait (:meth:`Partial.probes`); and every round, the levels up to each l of the
        messages delivered by its stop (at most L of them: the search ends at the first
        that decodes), the stop taken at its latest, the wait under the authors' rule (or
        every message), else the one-message code's cap (its (n - s)-th arrival)."""
        from gctool.sim.contenders.base import distinct_sizes

        mu = setting.mu is not None
        if setting.times is None:
            return rounds * (len(self.levels) + (1 if mu else 0))
        times = setting.times(self.loads)
        mt = self.message_times(times, setting)
        if mu:
            assert setting.mu is not None
            stop = authors_wait(mt[:, self.fractions == 1.0], setting.mu)
        else:
            at = self.reference.arrivals(times, setting)
            stop = np.sort(at, axis=1)[:, self.n - self.s - 1]
        got = mt <= stop[:, None]
        every = np.ones((1, mt.shape[1]), bool)
        sets = [got & (self.level <= lv) for lv in range(1, len(self.levels) + 1)]
        sets += [every & (self.level <= lv) for lv in range(1, len(self.levels) + 1)]
        return distinct_sizes(np.vstack(sets))

    def figures(self, run: Run, setting: Setting) -> dict[str, Any]:
        assert run.levels is not None
        # fraction of rounds decoded at level 1, 2, ..., L (index 0: not exactly)
        return {"level_fractions": [float(np.mean(run.levels == lv))
                                    for lv in range(len(self.levels) + 1)]}
