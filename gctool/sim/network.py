"""The network of ``gctool simulate`` with ``link`` latency=A,bandwidth=BW: one model for every
contender (gctool's; the CodedReduce paper's exact cost model was not available).

* A message of ``size`` gradient vectors crosses a link in ``latency + size / bandwidth``
  seconds (units of the delay model); a receiver takes its incoming messages one after
  another, so its link is busy ``size / bandwidth`` per message: with messages ready at
  r_1 <= r_2 <= ..., message k arrives at ``a_k = max(a_{k-1}, r_k + latency) + size/bandwidth``
  (:func:`arrivals`).
* What each scheme sends (its contender says, :mod:`gctool.sim.contenders`): a gradient code
  one vector per worker, 1/m of one for a communication-efficient code with m pieces, one per
  message of partial work and nested levels, one per mini-task slot of a sequential round;
  CodedReduce one vector per node to its parent (every parent is a receiver); ring all-reduce
  2(n - 1) synchronous steps of ``latency + 1/(n bandwidth)``.  Training with ``sparsify``
  or ``lazy`` charges each round's messages by what they carry (the non-zeros of a sparsified
  message; nothing for a skipped upload): :mod:`gctool.sim.training`.
* Compute times come from the delay model with each node's load, so stragglers hit every node
  with work; the master's waiting rule (gctool's or the authors') applies to the arrivals.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gctool.errors import InvalidInput


@dataclass(frozen=True)
class Link:
    latency: float  # seconds (delay-model units) per message
    bandwidth: float  # vectors per second

    @property
    def label(self) -> str:
        return f"latency={self.latency:g},bandwidth={self.bandwidth:g}"


def parse_link(spec: str) -> Link:
    from gctool.sim.specs import parse_pairs

    values = {"latency": 0.0, "bandwidth": float("inf"),
              **parse_pairs(spec, "`link`", ("latency", "bandwidth"), "latency=A,bandwidth=BW")}
    if not (np.isfinite(values["latency"]) and values["latency"] >= 0):
        raise InvalidInput("`link`: latency must be a finite number >= 0")
    if not values["bandwidth"] > 0:  # inf allowed: no transfer time
        raise InvalidInput("`link`: bandwidth must be > 0")
    return Link(values["latency"], values["bandwidth"])


def arrivals(ready: np.ndarray, link: Link, size: float | np.ndarray = 1.0) -> np.ndarray:
    """Arrival times at one receiver of messages ready at ``ready`` (..., m), same order;
    ``size``: gradients per message (one for all, or one per message, broadcast to ready).

    ``a_k = max(a_{k-1}, r_k + latency) + t_k`` over the messages sorted by readiness, with
    ``t_k = size_k / bandwidth``; i.e. ``a_k = S_k + max_{j <= k} (r_j + latency - S_{j-1})``
    with ``S_k = t_0 + ... + t_k``."""
    order = np.argsort(ready, axis=-1, kind="stable")
    r = np.asarray(np.take_along_axis(ready, order, axis=-1) + link.latency, np.float64)
    if np.isinf(link.bandwidth):
        a_sorted = r
    else:
        t = np.broadcast_to(np.asarray(size, np.float64) / link.bandwidth, ready.shape)
        S = np.cumsum(np.take_along_axis(t, order, axis=-1), axis=-1)
        a_sorted = np.asarray(S + np.maximum.accumulate(r - (S - np.take_along_axis(
            t, order, axis=-1)), axis=-1), np.float64)
    out = np.empty_like(a_sorted)
    np.put_along_axis(out, order, a_sorted, axis=-1)
    return out
