"""The baselines every code file is raced against: uncoded (wait for all n workers, k = n
partitions, one each) and ignore-stragglers (the fastest n - s workers, their sum rescaled by
n/(n - s); under the authors' rule inside the model when at most s workers are late)."""

from __future__ import annotations

import numpy as np

from gctool.sim.contenders.base import Contender, Run


def uncoded(n: int) -> Contender:
    return Contender("uncoded", "uncoded", n, np.full(n, 1.0 / n))


def ignore_stragglers(n: int, s: int) -> Contender:
    return Contender(f"ignore-stragglers s={s}", "ignore", n, np.full(n, 1.0 / n), s=s)


def run_uncoded(c: Contender, times: np.ndarray) -> Run:
    everyone = np.arange(c.n)
    return Run(times.max(axis=1), [everyone] * len(times), np.ones(len(times), bool))


def run_ignore(c: Contender, times: np.ndarray) -> Run:
    keep = c.n - c.s
    order = np.argsort(times, axis=1, kind="stable")[:, :keep]
    durations = np.take_along_axis(times, order[:, -1:], axis=1)[:, 0]
    return Run(durations, list(order), np.zeros(len(times), bool))


def run_ignore_mu(c: Contender, times: np.ndarray) -> Run:
    assert c.mu is not None
    wait = times.min(axis=1) * (1.0 + c.mu)
    arrived = times <= wait[:, None]
    inside = (~arrived).sum(axis=1) <= c.s
    everyone = np.arange(c.n)
    return Run(np.where(inside, wait, times.max(axis=1)),
               [np.flatnonzero(arrived[t]) if inside[t] else everyone for t in range(len(times))],
               np.zeros(len(times), bool))
