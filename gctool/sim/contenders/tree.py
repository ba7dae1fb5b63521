"""CodedReduce trees: every parent stops at the earliest arrival of its children that decodes
its level code (or, under the authors' rule, at (1 + μ) x its first child's arrival, else when
all its children have arrived); the master is the root.  The leaves compute (load
prod(s_l + 1)/n); internal nodes only decode and forward one gradient vector to their
parent, and every message pays the run's link, received one after another by its parent."""

from __future__ import annotations

from typing import Any

import numpy as np

from gctool.model import GradientCode
from gctool.sim.contenders.base import Contender, Run, Setting


def level_stop(rule: Any, kids: np.ndarray, mu: float | None) -> tuple[np.ndarray, np.ndarray]:
    """(ready, used) per row of ``kids`` (arrival times of one parent's children, inf: a child
    that never delivered): when the parent has decoded its level code and how many children it
    used; inf when it cannot.  ``mu`` None: the earliest decodable arrival; else the authors'
    rule (wait (1 + mu) x the first arrival, then everyone if that does not decode)."""
    from gctool.sequential.model import from_bits

    rows, f = kids.shape
    if mu is None:
        order, q, ok = rule.earliest(kids, f)
        first = kids[np.arange(rows), order[np.arange(rows), q - 1]]
        return np.where(ok, first, np.inf), np.asarray(q)
    finite = np.isfinite(kids)
    ready, used = np.full(rows, np.inf), np.zeros(rows, np.int64)
    for r in range(rows):
        if not finite[r].any():
            continue
        last = float(kids[r][finite[r]].max())
        wait = float(kids[r][finite[r]].min()) * (1.0 + mu)
        got = kids[r] <= wait
        if rule.decodes_mask(from_bits(got)):
            ready[r], used[r] = min(wait, last), int(got.sum())
        elif rule.decodes_mask(from_bits(finite[r])):
            ready[r], used[r] = last, int(finite[r].sum())
    return ready, used


class Tree(Contender):
    kind = "tree"
    decodes = True

    def __init__(self, code: GradientCode, label: str) -> None:
        super().__init__(label, code.n, code.loads / code.k, s=code.s, code=code)
        self.matrix = code

    def run(self, times: np.ndarray, setting: Setting) -> Run:
        from gctool.sequential.trees import levels_of

        levels = levels_of(self.matrix)
        f, R = levels[0].n, len(times)
        ready = times.astype(np.float64)
        done, used_msgs = [], []
        for lv in reversed(levels):  # deepest parents first
            kids = setting.deliver(ready.reshape(-1, f))  # one vector per child
            first, q = level_stop(setting.rule(lv), kids, setting.mu)
            ready = first.reshape(R, -1)
            finite = ready[np.isfinite(ready)]
            done.append(float(finite.mean()) if finite.size else None)
            used_msgs.append(float(np.mean(q.reshape(R, -1).sum(axis=1))))
        durations = ready[:, 0]
        run = Run(durations, [np.flatnonzero(times[t] <= durations[t]) for t in range(R)],
                  np.isfinite(durations))
        if setting.link is not None:
            L = len(levels)
            run.info = {"levels": [
                {"level": L - i, "messages": int(f ** (L - i)),
                 "messages_used_mean": used_msgs[i], "finished_mean": done[i]}
                for i in range(L)][::-1]}
        return run

    def probes(self, rounds: int, depth: int, f: int, deepest: bool, setting: Setting
               ) -> int | np.ndarray:
        """The sets the parents at ``depth`` (0: the master) ask under the authors' rule
        (:func:`level_stop`: the f children arrived by the wait, then all of them), each
        distinct set once (one rule per level, which caches its verdicts): the deepest
        parents' read off the run's draws at their sizes (every leaf's time is drawn before
        the estimate); above, whose children's times are their own stops, at most two a parent
        and one per subset of the f children, of unknown size."""
        from gctool.sim.contenders.base import distinct_sizes

        if setting.mu is None:
            return 0
        if deepest and setting.times is not None:
            kids = setting.deliver(setting.times(self.loads)).reshape(-1, f)
            got = kids <= kids.min(axis=1, keepdims=True) * (1.0 + setting.mu)
            return distinct_sizes(np.vstack([np.ones((1, f), bool), got]))
        return min(2 * rounds * f**depth, 2**f)

    def cost(self, rounds: int, setting: Setting) -> float:
        from gctool.sequential.trees import levels_of
        from gctool.sim.stopping.rule import rule_cost

        work = super().cost(rounds, setting)
        levels = levels_of(self.matrix)
        f = levels[0].n
        mu = setting.mu is not None  # (the authors' rule asks sets, no arrival prefixes)
        for depth, lv in enumerate(levels):
            parents = rounds * f**depth
            deepest = depth == len(levels) - 1
            work += rule_cost(lv, 0 if mu else parents, f,
                              self.probes(rounds, depth, f, deepest, setting))
        return work
