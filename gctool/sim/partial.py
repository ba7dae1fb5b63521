"""Partial work in ``gctool simulate``: multi-message codes (files with an ``order``).

Timing model (gctool's): worker i's time for a round, T_i, is drawn by the delay model for its
whole load exactly as for the one-message code, and split evenly over its d_i partitions in its
processing order, so the message ending after its e-th partition arrives at ``T_i e / d_i``.
Communication time per message is not modelled (the trace times include one upload).

Waiting rule: the master stops at the earliest message arrival after which the delivered
messages decode exactly (:class:`gctool.sim.stopping.StopRule` on the code whose rows are the
messages, :func:`gctool.audit.partial.message_code`), but never later than the one-message code
would stop (its earliest decodable arrival, or its (n - s)-th arrival with the least-squares
decoder); by then every finished worker's messages span its row, so waiting longer never
helps.  The gain over the one-message code is measured on the same draws.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from gctool.model import GradientCode
from gctool.sim.contenders import Contender, Run, from_code


def partial_contender(code: GradientCode, label: str) -> Contender:
    """The multi-message version of a code file with an order (kind ``partial``)."""
    from gctool.audit.partial import message_code

    assert code.order is not None
    mcode, first = message_code(code, code.order)
    c = Contender(f"{label} (partial work)", "partial", code.n, (code.loads / code.k).astype(
        np.float64), 0, code.s, mcode)
    fractions, owner = [], []
    for i, groups in enumerate(code.order):
        d = sum(len(g) for g in groups)
        end = 0
        for g in groups:
            end += len(g)
            fractions.append(end / d)
            owner.append(i)
    c.extra = {"full": from_code(code, label), "owner": np.array(owner, dtype=np.intp),
               "fractions": np.array(fractions)}
    return c


def message_times(c: Contender, times: np.ndarray) -> np.ndarray:
    """(rounds, messages) arrival times: T_i e / d_i."""
    return np.asarray(times[:, c.extra["owner"]] * c.extra["fractions"][None, :])


def run_partial(c: Contender, times: np.ndarray) -> Run:
    from gctool.sim.stopping import StopRule

    assert c.code is not None
    mt = message_times(c, times)
    if c.mu is not None:
        return _partial_mu(c, times, mt)
    full: Contender = c.extra["full"]
    one = replace(full, meter=c.meter).run(times)
    order, p, exact = StopRule(c.code, meter=c.meter).earliest(mt, mt.shape[1])
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


def _partial_mu(c: Contender, times: np.ndarray, mt: np.ndarray) -> Run:
    """The authors' rule on messages: at (1 + mu) x the fastest worker's time the master holds
    every message sent by then; if they decode exactly the round ends there, else it waits for
    everyone (every message)."""
    from gctool.sequential.model import from_bits
    from gctool.sim.stopping import StopRule

    assert c.code is not None and c.mu is not None
    rule = StopRule(c.code, meter=c.meter)
    wait = times.min(axis=1) * (1.0 + c.mu)
    durations, used = times.max(axis=1), []
    everything = np.arange(mt.shape[1])
    exact = np.full(len(times), rule.decodes_mask(from_bits(np.ones(mt.shape[1], bool))))
    for r in range(len(times)):
        got = mt[r] <= wait[r]
        if rule.decodes_mask(from_bits(got)):
            durations[r], exact[r] = wait[r], True
            used.append(np.flatnonzero(got))
        else:
            used.append(everything)
    return Run(durations, used, exact)


def add_gains(contenders: list[Contender], runs: list[Run], rows: list[dict[str, Any]]
              ) -> list[str]:
    """Speed-up of each partial-work contender over its one-message code (row key and notes)."""
    from gctool.sim import stats

    by_name = {c.name: r for c, r in zip(contenders, runs, strict=True)}
    notes = []
    for c, row in zip(contenders, rows, strict=True):
        if c.kind not in ("partial", "nested"):
            continue
        base = by_name.get(c.extra["full"].name)
        if base is None:
            continue
        gain = stats.ratio_ci(base.durations, by_name[c.name].durations)
        row["gain_vs_one_message"] = gain
        what = "nested" if c.kind == "nested" else "partial-work"
        notes.append(f"{c.name}: one-message mean / {what} mean = {_fmt(gain)} (same "
                     "delays; per-partition times = worker time x position / load)")
    return notes


def _fmt(gain: dict[str, Any]) -> str:
    value, lo, hi = gain["value"], gain["low"], gain["high"]
    return f"{value:.4g}" if lo is None else f"{value:.4g} (95% CI {lo:.4g}-{hi:.4g})"
