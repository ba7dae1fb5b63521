"""Contenders of single-round code files: the earliest exactly decodable arrival (capped at
the (n - s)-th, then the optimal approximate decoder), the authors' (1 + μ) rule, the naive
reference path, ErasureHead on codes of the group shape and one-step decoding of heterogeneous
codes.  The decodability oracles are :mod:`gctool.sim.stopping`'s."""

from __future__ import annotations

import numpy as np

from gctool.errors import InvalidInput
from gctool.limits import DEFAULT_TOL
from gctool.model import GradientCode
from gctool.sim.contenders.base import Contender, Run


def run_code(c: Contender, times: np.ndarray) -> Run:
    from gctool.sim.stopping import StopRule

    assert c.code is not None
    order, p, exact = StopRule(c.code, meter=c.meter).earliest(times, c.n - c.s)
    R = len(times)
    durations = times[np.arange(R), order[np.arange(R), p - 1]]
    return Run(durations, [order[t, :p[t]] for t in range(R)], exact)


def erasurehead(code: GradientCode, label: str, arrivals: int) -> Contender:
    """ErasureHead (Wang et al. 2019) on a code of the group shape (FRC): the master stops at
    the exact decoding or at the ``arrivals``-th arrival, whichever comes first, and sums one
    message per group that arrived (the least-squares decoder gives exactly that sum); the
    partitions of the groups with no arrival are lost that round."""
    from gctool.sim.stopping import group_labels

    if group_labels(code) is None:
        raise InvalidInput(f"{label}: ErasureHead needs a code of the group shape (FRC: rows "
                           "constant on disjoint supports that cover every partition)")
    if not 1 <= arrivals <= code.n:
        raise InvalidInput(f"ErasureHead arrivals must be between 1 and n = {code.n}")
    loads = (code.loads / code.k).astype(np.float64)
    return Contender(f"erasurehead {label} stop={arrivals}", "erasurehead", code.n, loads, 0,
                     code.n - arrivals, code)


def run_erasurehead(c: Contender, times: np.ndarray) -> Run:
    from gctool.sim.stopping import StopRule

    assert c.code is not None
    rule = StopRule(c.code, meter=c.meter)
    order, p_exact, _ = rule.earliest(times, c.n)
    stop = c.n - c.s
    p = np.minimum(p_exact, stop)
    R = len(times)
    if c.mu is not None:  # the authors' rule: the wait or the K-th arrival, whichever is first
        kth = times[np.arange(R), order[np.arange(R), stop - 1]]
        durations = np.minimum(times.min(axis=1) * (1.0 + c.mu), kth)
        p = (times <= durations[:, None]).sum(axis=1)
    else:
        durations = times[np.arange(R), order[np.arange(R), p - 1]]
    used = [order[t, :p[t]] for t in range(R)]
    assert rule.labels is not None
    B = np.asarray(c.code.B) != 0
    lost = np.empty(R)
    for t in range(R):
        covered = B[used[t]].any(axis=0)
        lost[t] = 1.0 - covered.mean()
    return Run(durations, used, lost == 0.0, lost=lost)


def run_hetero(c: Contender, times: np.ndarray) -> Run:
    """A heterogeneous code (one-step decoding: the master sums what arrived).

    Under a delay model with straggler flags (``bernoulli``, ``markov``) the master waits until
    every worker that does not straggle this round has arrived and sums the messages received
    by then; the error of that round is ``||sum_i W_i - 1||^2 / k`` over the received rows.
    Under other models there are no flags and the file is raced as an ordinary code.
    """
    assert c.code is not None
    bad = c.extra.get("bad")
    R = len(times)
    if c.mu is not None:  # the authors' rule: the late workers are the stragglers
        stop = times.min(axis=1) * (1.0 + c.mu)
    elif bad is None:
        return run_code(c, times)
    else:
        good = ~bad[:, : c.n]
        stop = np.where(good.any(axis=1), np.where(good, times, -np.inf).max(axis=1),
                        times.min(axis=1))
    W = np.asarray(c.code.B, dtype=np.float64)
    used = [np.flatnonzero(times[t] <= stop[t]) for t in range(R)]
    error = np.array([float(np.sum((W[u].sum(axis=0) - 1.0) ** 2)) / c.code.k for u in used])
    return Run(stop, used, error <= DEFAULT_TOL, error=error)


def run_code_mu(c: Contender, times: np.ndarray) -> Run:
    from gctool.sequential.model import from_bits
    from gctool.sim.stopping import StopRule

    assert c.code is not None and c.mu is not None
    rule = StopRule(c.code, meter=c.meter)
    wait = times.min(axis=1) * (1.0 + c.mu)
    durations = times.max(axis=1)
    used: list[np.ndarray] = []
    everyone = np.arange(c.n)
    for t, row in enumerate(times):
        arrived = row <= wait[t]
        if rule.decodes_mask(from_bits(arrived)):
            durations[t] = wait[t]
            used.append(np.flatnonzero(arrived))
        else:
            used.append(everyone)
    return Run(durations, used, np.ones(len(times), bool))


def run_code_naive(c: Contender, times: np.ndarray) -> Run:
    """The reference path: binary search with the generic decoder, round by round."""
    from gctool.sim.stopping import PrefixDecoder

    assert c.code is not None
    pd = PrefixDecoder(c.code, meter=c.meter)
    cap = c.n - c.s
    durations = np.empty(len(times))
    used, exact = [], np.empty(len(times), bool)
    for t, row in enumerate(times):
        order = np.argsort(row, kind="stable")
        p, ok = pd.earliest(order, cap)
        durations[t], exact[t] = row[order[p - 1]], ok
        used.append(order[:p])
    return Run(durations, used, exact)
