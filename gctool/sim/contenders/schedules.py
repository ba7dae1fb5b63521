"""SR-SGC and M-SGC schedules: a round ends at the earliest arrival (at least one) after which
declaring every worker still running a straggler keeps the pattern inside the (B, W, λ) model;
the jobs decoded and the deadlines missed are recorded round by round."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from gctool.sim.contenders.base import Contender, Run


def _replay(scheme: Any, times: np.ndarray,
           choose: Callable[[int, np.ndarray, tuple[int, ...], Any], tuple[float, np.ndarray, int]]
           ) -> Run:
    """Run ``scheme`` round by round; ``choose(r, row, history, model)`` gives round r's
    duration, the workers used and the straggler mask declared to the scheme."""
    model = scheme.model
    state: Any = scheme.initial()
    history: tuple[int, ...] = ()
    run = Run(np.empty(len(times)), exact=np.ones(len(times), bool))
    for r, row in enumerate(times):
        run.durations[r], used, S = choose(r, row, history, model)
        run.used.append(used)
        state, done = scheme.step(r, state, history, S)
        history = model.push(history, S)
        for job, ok, entry in done:
            run.jobs.append((job, r, ok, entry))
            run.deadline_misses += not ok
    return run


def _fast_scheme(c: Contender, rounds: int) -> Any:
    """The schedule of ``c``'s file on the fast decodability oracle, held to the budget."""
    from gctool.sequential.schedule import scheme_of
    from gctool.sim.stopping import StopRule

    assert c.code is not None
    scheme = scheme_of(c.code, StopRule(c.code, meter=c.meter).decodes_mask)
    check_schedule_work(c, scheme, rounds)
    return scheme


def run_sgc(c: Contender, times: np.ndarray) -> Run:
    """gctool's rule: the earliest arrival after which the pattern stays in the model."""
    from gctool.sequential.model import earliest_admissible_sorted, from_bits

    order = np.argsort(times, axis=1, kind="stable")

    def choose(r: int, row: np.ndarray, history: tuple[int, ...], model: Any
               ) -> tuple[float, np.ndarray, int]:
        p = max(1, earliest_admissible_sorted(model, history, order[r]))
        late = np.ones(c.n, bool)
        late[order[r, :p]] = False
        return float(row[order[r, p - 1]]), order[r, :p], from_bits(late)

    return _replay(_fast_scheme(c, len(times)), times, choose)


def check_schedule_work(c: Contender, scheme: Any, rounds: int) -> None:
    """Charge, before it starts, the schedule's updates to the run's meter (or check them alone
    against the work budget): every round updates the entries of the jobs in flight (the delay
    T + 1 of them) for every worker, in Python (:func:`gctool.sim.budget.schedule_cost`)."""
    from gctool.limits import check_work
    from gctool.sim.budget import REMEDY, schedule_cost

    delay = int(getattr(scheme, "delay", 0))
    what = (f"simulating the {c.name} schedule ({rounds:,} rounds x {c.n} workers x "
            f"{delay + 1:,} jobs in flight)")
    if c.meter is not None:
        c.meter.charge(schedule_cost(rounds, c.n, delay), what)
    else:
        check_work(what, schedule_cost(rounds, c.n, delay), REMEDY)


def run_sgc_mu(c: Contender, times: np.ndarray) -> Run:
    """The authors' rule: the workers slower than (1 + mu) x the fastest straggle, unless that
    pattern leaves the model (then the round waits for everyone)."""
    from gctool.sequential.model import from_bits

    assert c.mu is not None
    mu, everyone = c.mu, np.arange(c.n)

    def choose(r: int, row: np.ndarray, history: tuple[int, ...], model: Any
               ) -> tuple[float, np.ndarray, int]:
        wait = float(row.min()) * (1.0 + mu)
        late = row > wait
        S = from_bits(late)
        if model.allows(history, S):
            return wait, np.flatnonzero(~late), S
        return float(row.max()), everyone, 0  # the pattern would leave the model

    return _replay(_fast_scheme(c, len(times)), times, choose)


def run_sgc_naive(c: Contender, times: np.ndarray) -> Run:
    """The reference path: the model checked arrival by arrival, the generic decoder."""
    from gctool.sequential.model import earliest_admissible, to_mask
    from gctool.sequential.schedule import gc_decodes, scheme_of

    assert c.code is not None

    def choose(r: int, row: np.ndarray, history: tuple[int, ...], model: Any
               ) -> tuple[float, np.ndarray, int]:
        order = np.argsort(row, kind="stable")
        p = max(1, earliest_admissible(model, history, order.tolist()))
        return float(row[order[p - 1]]), order[:p], model.full & ~to_mask(order[:p].tolist())

    return _replay(scheme_of(c.code, gc_decodes(c.code, c.code.s, verified=False)), times,
                   choose)
