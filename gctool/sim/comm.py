"""``gctool bound`` with ``link``, of a CodedReduce file: the time per round of CodedReduce, a
parameter server with the same leaves and ring all-reduce, by the contenders and network of
``gctool simulate`` with ``link`` (:mod:`gctool.sim.network`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from gctool.model import GradientCode
from gctool.sim.network import Link

if TYPE_CHECKING:
    from gctool.sequential.reports import SequentialBoundReport

#: rounds and seed of the time per round of ``gctool bound`` with ``link`` (a fixed Monte-Carlo
#: run)
BOUND_ROUNDS = 2000
BOUND_SEED = 0


def add_time_per_round(report: Any, code: GradientCode, link: Link, delay: Any = None,
                       rounds: int = BOUND_ROUNDS, seed: int = BOUND_SEED
                       ) -> SequentialBoundReport:
    """``gctool bound`` with ``link``, of a CodedReduce file: each row of ``report``
    (:func:`gctool.sequential.bounds.tree_bounds`) gains ``time_per_round``, the mean time per
    round with its 95% interval under this module's model (compute with stragglers at every
    leaf, per-message latency and bandwidth), estimated by running the very contenders of
    ``gctool simulate`` with ``link`` on ``rounds`` draws of ``delay`` (default shifted-exp) with a
    fixed seed: the ranking is simulate's, not a second model's."""
    from gctool.sim import stats
    from gctool.sim.contenders.base import Contender, Setting
    from gctool.sim.contenders.code import CodeFile
    from gctool.sim.contenders.ring import RingAllReduce
    from gctool.sim.contenders.tree import Tree
    from gctool.sim.delays import parse_delay

    delay = parse_delay("shifted-exp") if delay is None else delay
    racers: dict[str, Contender] = {
        "coded-reduce": Tree(code, "coded-reduce"), "gc": CodeFile(code, "gc"),
        "ring-all-reduce": RingAllReduce(code.n)}
    draws = delay.draws(rounds, code.n, np.random.default_rng(seed))
    setting = Setting(link=link)
    means = {}
    for row in report.rows:
        c = racers[row["scheme"]]
        mean = stats.summary(c.run(delay.times(draws, c.loads), setting).durations)["mean"]
        row["time_per_round"] = float(mean["value"])
        row["time_per_round_ci95"] = (None if mean["low"] is None else
                                      [float(mean["low"]), float(mean["high"])])
        means[row["scheme"]] = float(mean["value"])
    ranked = sorted(means, key=means.__getitem__)
    report.params.update(link=link.label, delay=delay.label, rounds=rounds, seed=seed)
    report.statements += [
        f"time per round (`link` {link.label}, `delay` {delay.label}; mean of {rounds} rounds, "
        f"seed {seed}, the model and contenders of gctool simulate `link`): "
        + ", ".join(f"{name} {means[name]:.4g}" for name in ranked),
        "model: the leaves (every node with work) draw their compute times from the delay "
        "model with their load, so stragglers hit every leaf; a message takes latency + "
        "1/bandwidth and a receiver takes its messages one after another; CodedReduce parents "
        "stop at the earliest decodable set of children, level by level; the parameter server "
        "(gc row: same leaves and leaf code, flat) at the earliest decodable arrival at the "
        "master; ring all-reduce waits for all n nodes (load 1/n), then 2(n-1) steps of "
        "latency + 1/(n bandwidth); internal CodedReduce nodes do not compute",
    ]
    return report
