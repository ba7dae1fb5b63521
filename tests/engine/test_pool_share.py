"""A pool of forked processes charges a share of the run's meter whose charges, in every
process, are added up in shared memory (gctool.budget.pool_share): each process is held to
their total, and the run's meter gets it when the pool is done, so it counts the same work for
any number of processes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from gctool.audit.exhaustive import worst
from gctool.audit.oracles import make_oracle
from gctool.budget import Budget, Meter, pool_share
from gctool.codes import design
from gctool.engine.parallel import run_ordered


@dataclass
class _Charger:
    """A worker whose task ``(i, a, b)`` charges ``b - a`` ns to ``holder.meter`` (the
    holder's meter at the time: in a forked process, its copy of the share)."""

    holder: Any

    def run(self, task: tuple[int, int, int]) -> int:
        self.holder.meter.charge(float(task[2] - task[1]))
        return task[0]


@dataclass
class _Holder:
    meter: Meter


@pytest.mark.parametrize("jobs", [1, 2, 3])
def test_the_shares_charges_are_added_back_to_the_meter(jobs: int) -> None:
    whole = Budget(max_work=10.0).meter("test", "raise it", spent=5.0)
    holder = _Holder(whole)
    tasks = [(i, 10 * i, 10 * i + i + 1) for i in range(12)]  # 1 + 2 + ... + 12 = 78 ns
    seen: list[int] = []
    with pool_share(holder, jobs):
        assert (holder.meter is whole) == (jobs == 1)
        run_ordered(_Charger(holder), tasks, jobs, lambda i, r: seen.append(r) and False)
    assert holder.meter is whole and seen == list(range(12))
    assert whole.spent == 5.0 + 78.0


def test_an_attacks_meter_counts_its_processes_exact_decisions(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """FRC(12, 2) at tolerance 1/4 on the numpy route, tasks of 64 sets: the 144 sets float64
    cannot decide are charged their exact decisions' time (a clock that advances 10 ms at each
    reading) in whichever process decides them; the oracle's meter ends with the same total
    with two processes as with one (the shares' charges used to stay in the forked copies:
    the meter showed a fraction of it).  The threshold search of the same code is found at
    32 s with two processes as with one (each held to half of what was left, one of them ran
    out)."""
    from gctool import exactls
    from gctool.audit import exhaustive
    from gctool.audit.oracles.optimal import OptimalOracle
    from gctool.engine import parallel

    monkeypatch.setenv("GCTOOL_COMPILED", "never")
    monkeypatch.setattr(exhaustive, "PARALLEL_MIN_SETS", 0)
    monkeypatch.setattr(parallel, "PARALLEL_MIN_S", 0.0)
    monkeypatch.setattr(OptimalOracle, "chunk_size", lambda self, s: 64)
    code = design("frc", 12, 2)
    spent = {}
    for jobs in (1, 2):
        monkeypatch.setattr(exactls, "time", _Clock(0.01))
        oracle = make_oracle(code, tol=0.25, budget=Budget(max_work=64.0))
        before = oracle.meter.spent
        worst(oracle, 5, symmetry=False, jobs=jobs)
        spent[jobs] = oracle.meter.spent - before
    assert spent[1] > 1e9  # seconds of exact decisions (this clock's)
    assert spent[2] == pytest.approx(spent[1], rel=1e-3)  # (a few decoder calls differ)
    monkeypatch.setattr(exactls, "time", _Clock(0.01))
    oracle = make_oracle(code, tol=0.25, budget=Budget(max_work=32.0))
    assert exhaustive.threshold(oracle, 3.5, symmetry=False, jobs=2).threshold == 6
    assert 30e9 < oracle.meter.spent < 32e9


class _Clock:
    """A thread clock that advances ``step`` seconds at each reading."""

    def __init__(self, step: float) -> None:
        self.now, self.step = 0.0, step

    def thread_time(self) -> float:
        self.now += self.step
        return self.now
