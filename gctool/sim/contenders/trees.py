"""CodedReduce trees: every parent stops at the earliest arrival of its children that decodes
its level code (or, under the authors' rule, at (1 + μ) x its first child's arrival, else when
all its children have arrived); the master is the root."""

from __future__ import annotations

from typing import Any

import numpy as np

from gctool.sim.contenders.base import Contender, Run


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
        wait = float(kids[r][finite[r]].min()) * (1.0 + mu)
        got = kids[r] <= wait
        if rule.decodes_mask(from_bits(got)):
            ready[r], used[r] = wait, int(got.sum())
        elif rule.decodes_mask(from_bits(finite[r])):
            ready[r], used[r] = float(kids[r][finite[r]].max()), int(finite[r].sum())
    return ready, used


def run_tree(c: Contender, times: np.ndarray) -> Run:
    from gctool.sequential.coded_reduce import levels_of
    from gctool.sim.stopping import StopRule

    assert c.code is not None
    levels = levels_of(c.code)
    rules = [StopRule(lv, meter=c.meter) for lv in levels]
    f = levels[0].n
    R = len(times)
    ready = times.astype(np.float64)
    for rule in reversed(rules):  # deepest parents first
        kids = ready.reshape(-1, f)  # (rounds x parents, f); inf: a child that never decoded
        ready = level_stop(rule, kids, c.mu)[0].reshape(R, -1)
    durations = ready[:, 0]
    exact = np.isfinite(durations)
    used = [np.flatnonzero(times[t] <= durations[t]) for t in range(R)]
    return Run(durations, used, exact)
