"""A pool of forked processes (gctool.engine.parallel) charges a share of the run's meter
whose charges, in every process, are added up in shared memory (gctool.budget.pool_share):
each process is held to their total, and the run's meter gets it when the pool is done, so it
counts the same work for any number of processes.  A result that ends the run cancels the
tasks after it that have not started."""

from __future__ import annotations

import multiprocessing
from dataclasses import dataclass
from typing import Any

import pytest

from gctool.audit.chunks import ChunkSummary
from gctool.audit.exhaustive import worst
from gctool.audit.oracles import make_oracle
from gctool.budget import Budget, Meter, pool_share
from gctool.codes import design
from gctool.engine import parallel
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
    the meter showed a fraction of it).  (Held to their total, not each to half of what was
    left, two processes find the threshold of this code at 32 s as one does:
    tests/audit/test_budget_estimates.py.)"""
    from gctool import exactls
    from gctool.audit import exhaustive
    from gctool.audit.oracles.optimal import OptimalOracle
    from gctool.engine import parallel

    monkeypatch.setenv("GCTOOL_COMPILED", "never")
    monkeypatch.setattr(exhaustive, "PARALLEL_MIN_SETS", 0)
    monkeypatch.setattr(parallel, "PARALLEL_MIN_S", 0.0)
    monkeypatch.setattr(OptimalOracle, "chunk_size", lambda self, s, given=False: 64)
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


class _Clock:
    """A thread clock that advances ``step`` seconds at each reading."""

    def __init__(self, step: float) -> None:
        self.now, self.step = 0.0, step

    def thread_time(self) -> float:
        self.now += self.step
        return self.now


@dataclass
class _Settled:
    """A worker for a pool of forked processes: task 1's result holds a counterexample; every
    other task waits (up to 20 s) until the parent has seen that result, then counts itself in
    ``ran`` (shared memory)."""

    settled: Any
    ran: Any

    def run(self, task: tuple[int, int, int]) -> ChunkSummary:
        out = ChunkSummary(task[0], task[2] - task[1], task[2] - task[1])
        if task[0] == 1:
            out.fail_set = [0, 1]
            return out
        self.settled.wait(20)
        with self.ran.get_lock():
            self.ran.value += 1
        return out


def test_a_process_pool_drops_the_tasks_after_a_counterexample(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Two processes, 40 tasks, 20 of them submitted ahead of the fold: task 1 reports a
    counterexample while task 0 still runs (it waits until the parent has seen that result).
    The tasks after task 1 that had not started are cancelled then: besides task 0, only the
    few the executor had handed to its processes' queue run (without the cancel, the 18
    others of the window ran too, and every task waited its 20 s out)."""
    ctx = multiprocessing.get_context("fork")
    settled, ran = ctx.Event(), ctx.Value("i", 0)
    ends_run = parallel.ends_run

    def seen(result: Any) -> bool:
        out = ends_run(result)
        if out:
            settled.set()
        return out

    monkeypatch.setattr(parallel, "ends_run", seen)
    monkeypatch.setattr(parallel, "AHEAD", 10)
    tasks = [(i, 10 * i, 10 * i + 10) for i in range(40)]
    folded: list[int] = []
    run_ordered(_Settled(settled, ran), tasks, 2,
                lambda i, r: folded.append(i) or r.fail_set is not None)
    assert folded == [0, 1] and settled.is_set()
    assert 1 <= ran.value <= 5  # task 0, and what the processes had taken or queued
