"""Communication in ``gctool simulate --link latency=A,bandwidth=BW``: CodedReduce against a
parameter server and ring all-reduce under one model.

Model (gctool's; the CodedReduce paper's exact cost model was not available):

* every message is one gradient vector (ring all-reduce: 1/n of one) and crosses a link in
  ``latency + size / bandwidth`` seconds (units of the delay model); a node receives its
  incoming messages one after another, so a receiver's link is busy ``size / bandwidth`` per
  message: with children ready at r_1 <= r_2 <= ..., message k arrives at
  ``a_k = max(a_{k-1}, r_k + latency) + 1/bandwidth``;
* compute: the nodes the design gives work to draw their times from the delay model with
  their load (CodedReduce: the leaves, load prod(s_l + 1)/n; parameter server: the same leaves
  and leaf code, flat; ring all-reduce: n nodes with load 1/n), so stragglers hit every node
  with work; internal CodedReduce nodes only decode and forward (no compute time);
* CodedReduce: every parent stops at the earliest arrival after which its children's messages
  decode its level code, level by level up to the root;
* parameter server ("ps"): the master receives the n leaves' messages over its one link and
  stops at the earliest decodable arrival (or the (n - s)-th, approximate);
* ring all-reduce: waits for every node, then 2(n - 1) synchronous steps of
  ``latency + 1/(n bandwidth)`` (reduce-scatter and all-gather; no straggler tolerance).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from gctool.errors import InvalidInput
from gctool.model import GradientCode
from gctool.sim.contenders import Contender, Run, level_stop


@dataclass(frozen=True)
class Link:
    latency: float  # seconds (delay-model units) per message
    bandwidth: float  # vectors per second

    @property
    def label(self) -> str:
        return f"latency={self.latency:g},bandwidth={self.bandwidth:g}"


def parse_link(spec: str) -> Link:
    values = {"latency": 0.0, "bandwidth": float("inf")}
    for item in filter(None, (x.strip() for x in spec.split(","))):
        key, eq, value = item.partition("=")
        if not eq or key.strip() not in values:
            raise InvalidInput(f"--link: expected latency=A,bandwidth=BW, got {item!r}")
        try:
            values[key.strip()] = float(value)
        except ValueError:
            raise InvalidInput(f"--link: {key} must be a number") from None
    if not (np.isfinite(values["latency"]) and values["latency"] >= 0):
        raise InvalidInput("--link: latency must be a finite number >= 0")
    if not values["bandwidth"] > 0:  # inf allowed: no transfer time
        raise InvalidInput("--link: bandwidth must be > 0")
    return Link(values["latency"], values["bandwidth"])


def arrivals(ready: np.ndarray, link: Link, size: float = 1.0) -> np.ndarray:
    """Arrival times at one receiver of messages ready at ``ready`` (..., m), same order.

    ``a_k = max(a_{k-1}, r_k + latency) + size/bandwidth`` over the messages sorted by
    readiness, i.e. ``a_k = (k + 1) t + max_{j <= k} (r_j + latency - j t)`` with
    ``t = size/bandwidth``."""
    t = size / link.bandwidth
    order = np.argsort(ready, axis=-1, kind="stable")
    r = np.asarray(np.take_along_axis(ready, order, axis=-1) + link.latency, np.float64)
    k = np.arange(ready.shape[-1])
    if t == 0:
        a_sorted = r
    else:
        a_sorted = np.asarray((k + 1) * t + np.maximum.accumulate(r - k * t, axis=-1), np.float64)
    out = np.empty_like(a_sorted)
    np.put_along_axis(out, order, a_sorted, axis=-1)
    return out


def tree_with_link(c: Contender, times: np.ndarray, link: Link) -> Run:
    from gctool.sequential.coded_reduce import levels_of
    from gctool.sim.stopping import StopRule

    assert c.code is not None
    levels = levels_of(c.code)
    f, R = levels[0].n, len(times)
    ready = times.astype(np.float64)
    done, used_msgs = [], []
    for lv in reversed(levels):  # deepest parents first
        kids = arrivals(ready.reshape(-1, f), link)
        first, q = level_stop(StopRule(lv, meter=c.meter), kids, c.mu)
        ready = first.reshape(R, -1)
        finite = np.where(np.isfinite(ready), ready, np.nan)
        done.append(float(np.nanmean(finite)) if np.isfinite(
            finite).any() else None)
        used_msgs.append(float(np.mean(q.reshape(R, -1).sum(axis=1))))
    durations = ready[:, 0]
    run = Run(durations, [np.flatnonzero(times[t] <= durations[t]) for t in range(R)],
              np.isfinite(durations))
    run.info = {"levels": [
        {"level": len(levels) - i, "messages": int(f ** (len(levels) - i)),
         "messages_used_mean": used_msgs[i], "finished_mean": done[i]}
        for i in range(len(levels))][::-1]}
    return run


def ps_contender(code: GradientCode, label: str, link: Link) -> Contender:
    """The CodedReduce file's leaf code on a parameter server (flat master-worker GC)."""
    c = Contender(f"ps {label} (flat, same leaves)", "ps", code.n,
                  (code.loads / code.k).astype(np.float64), 0, code.s, code)
    c.extra["link"] = link
    return c


def run_ps(c: Contender, times: np.ndarray) -> Run:
    """The parameter server: a code file's waiting rule on the arrivals at the master."""
    from gctool.sim.contenders.codes import run_code, run_code_mu

    return (run_code if c.mu is None else run_code_mu)(c, arrivals(times, c.extra["link"]))


def ring_contender(n: int, link: Link) -> Contender:
    c = Contender(f"ring all-reduce n={n}", "ring", n, np.full(n, 1.0 / n))
    c.extra["link"] = link
    return c


def run_ring(c: Contender, times: np.ndarray) -> Run:
    link: Link = c.extra["link"]
    steps = 2 * (c.n - 1) * (link.latency + 1.0 / (c.n * link.bandwidth))
    everyone = np.arange(c.n)
    return Run(times.max(axis=1) + steps, [everyone] * len(times), np.ones(len(times), bool))


#: rounds and seed of ``gctool bound --link``'s time per round (a fixed Monte-Carlo run)
BOUND_ROUNDS = 2000
BOUND_SEED = 0


def add_time_per_round(report: Any, code: GradientCode, link: Link, delay: Any = None,
                       rounds: int = BOUND_ROUNDS, seed: int = BOUND_SEED) -> Any:
    """``gctool bound --link`` of a CodedReduce file: each row of ``report``
    (:func:`gctool.sequential.bounds.tree_bounds`) gains ``time_per_round``, the mean time per
    round with its 95% interval under this module's model (compute with stragglers at every
    leaf, per-message latency and bandwidth), estimated by running the very contenders of
    ``gctool simulate --link`` on ``rounds`` draws of ``delay`` (default shifted-exp) with a
    fixed seed: the ranking is simulate's, not a second model's."""
    from gctool.sim import stats
    from gctool.sim.contenders import from_code
    from gctool.sim.delays import parse_delay

    delay = parse_delay("shifted-exp") if delay is None else delay
    tree = from_code(code, "coded-reduce")
    tree.extra["link"] = link
    racers = {"coded-reduce": tree, "gc": ps_contender(code, "gc", link),
              "ring-all-reduce": ring_contender(code.n, link)}
    base = delay.base(rounds, code.n, np.random.default_rng(seed))
    means = {}
    for row in report.rows:
        c = racers[row["scheme"]]
        mean = stats.summary(c.run(delay.times(base, c.loads)).durations)["mean"]
        row["time_per_round"] = float(mean["value"])
        row["time_per_round_ci95"] = (None if mean["low"] is None else
                                      [float(mean["low"]), float(mean["high"])])
        means[row["scheme"]] = float(mean["value"])
    ranked = sorted(means, key=means.__getitem__)
    report.params.update(link=link.label, delay=delay.label, rounds=rounds, seed=seed)
    report.statements += [
        f"time per round (--link {link.label}, --delay {delay.label}; mean of {rounds} rounds, "
        f"seed {seed}, the model and contenders of gctool simulate --link): "
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


def bound_tree(code: GradientCode, request: Any) -> Any:
    """``bounder`` hook of coded-reduce: the communication bounds of
    :func:`gctool.sequential.hooks.bound_tree` and, with ``--link``, each row's time per round
    (:func:`add_time_per_round`)."""
    from gctool.sequential.hooks import bound_tree as tree_report

    report = tree_report(code, request)
    if request.link is None:
        if request.delay is not None:
            raise InvalidInput("--delay needs --link (the time per round of CodedReduce)")
        report.statements.append("compute time and stragglers: --link latency=A,bandwidth=BW "
                                 "(and --delay MODEL) adds each scheme's time per round under "
                                 "gctool simulate --link's model")
        return report
    return add_time_per_round(report, code, request.link, request.delay)
