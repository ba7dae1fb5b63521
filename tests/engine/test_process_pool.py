"""A pool of forked processes (gctool.engine.parallel) charges a share of the run's meter
whose charges, in every process, are added up in shared memory (gctool.budget.pool_share):
each process is held to their total, and the run's meter gets it when the pool is done, so it
counts the same work for any number of processes.  A result that ends the run cancels the
tasks after it that have not started, and those a process holds stop at their next batch
(their stop flags, in memory shared with the processes: gctool.engine.threads.halt_flag),
their results dropped."""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from gctool.audit.chunks import ChunkSummary
from gctool.audit.exhaustive import worst
from gctool.audit.oracles import make_oracle
from gctool.budget import Budget, Meter, pool_share
from gctool.codes import design
from gctool.engine import parallel
from gctool.engine.parallel import run_ordered
from gctool.engine.threads import halt_flag, raise_if_halted

from helpers import same_report, small_chunks


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


def test_a_verify_pool_shares_the_meter_of_the_kernel_that_judges_doubtful_sets() -> None:
    """verify's pool shares the meter of the kernel that decides sets exactly and charges
    their time (``Kernel.judge``): the direct decoder, which is the numpy null-space screen's
    judge; the kernels over GF(q) and the rationals charge none."""
    from gctool.audit import nullspace as ns
    from gctool.audit.rational import RationalKernel, reduce_rational

    real, gf = design("frc", n=6, s=2), design("frc", n=6, s=2, field="GF(7)")
    direct = ns.DirectKernel(real, 1e-9)
    screen = ns.FloatNullKernel(real, 1e-9, ns.reduce_float(real, 1e-9))
    assert direct.judge() is direct and screen.judge() is screen.direct
    assert ns.GFDirectKernel(gf).judge() is None
    assert ns.GFNullKernel(gf, ns.reduce_gf(gf)).judge() is None
    assert RationalKernel(real, reduce_rational(real)).judge() is None


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


def _until(done: Callable[[], bool], within: float = 20.0) -> None:
    """Wait (polling) until ``done()``, at most ``within`` s (then go on: the test's counts
    fail it, instead of a wait for ever)."""
    end = time.monotonic() + within
    while not done() and time.monotonic() < end:
        time.sleep(0.001)


#: batches of every task of :class:`_Batches`
BATCHES = 50


@dataclass
class _Batches:
    """A worker for three processes whose tasks run :data:`BATCHES` batches, each after a
    read of the task's stop flag (:func:`halt_flag`, as a numpy route reads it), counted in
    ``ran`` (shared memory, per task).  Task 1 reports a counterexample once task 2 has run a
    batch; from task 2 on, a task waits after its first batch until its stop flag is set (up
    to 20 s); task 0 waits until task 2 has ended (``ended``), then runs its batches."""

    ran: Any
    ended: Any

    def run(self, task: tuple[int, int, int]) -> ChunkSummary:
        i = task[0]
        out = ChunkSummary(i, task[2] - task[1], task[2] - task[1])
        if i == 1:
            _until(lambda: self.ran[2] >= 1)
            out.fail_set = [0, 1]
            return out
        if i == 0:
            _until(lambda: bool(self.ended[2]))
        flag = halt_flag()
        try:
            for b in range(BATCHES):
                raise_if_halted(flag)
                self.ran[i] += 1
                if b == 0 and i >= 2:
                    _until(lambda: bool(flag[0]))
        finally:
            self.ended[i] = 1
        return out


def test_a_process_stops_the_task_it_runs_at_its_next_batch() -> None:
    """Three processes: task 1 reports a counterexample while task 0 runs (it waits until task
    2 has ended) and task 2 runs (it waits after its first batch until its stop flag is set).
    Task 2 stops at its next batch and its result is dropped: one batch of 50 (it ran them
    all: a process was never told to stop the task it runs); task 0, which the fold needs,
    runs all of its batches, and the fold takes tasks 0 and 1 only.  The tasks after task 2
    run a batch at most (those handed to a process's queue do not start, unless one starts
    before the parent has seen task 1's result)."""
    ctx = multiprocessing.get_context("fork")
    tasks = [(i, 10 * i, 10 * i + 10) for i in range(8)]
    ran, ended = ctx.RawArray("i", len(tasks)), ctx.RawArray("b", len(tasks))
    folded: list[int] = []
    run_ordered(_Batches(ran, ended), tasks, 3,
                lambda i, r: folded.append(i) or r.fail_set is not None)
    assert folded == [0, 1]
    assert list(ran)[:3] == [BATCHES, 0, 1]
    assert max(ran[3:]) <= 1


def _one_failing_set() -> Any:
    """A real code of 12 workers whose only straggler set of size 2 that does not decode is
    {3, 6} (lexicographic rank 32): every other row lies in a plane of dimension 3 that misses
    the all-ones vector, rows 3 and 6 are generic."""
    from gctool.algebra.fields import parse_field
    from gctool.model import GradientCode

    rng = np.random.default_rng(3)
    V = rng.standard_normal((3, 4))
    V -= np.outer(V.sum(axis=1) / 4, np.ones(4))  # rows orthogonal to the all-ones vector
    B = rng.standard_normal((12, 3)) @ V
    B[[3, 6]] = rng.standard_normal((2, 4))
    return GradientCode(B, parse_field("real"), 2)


def test_verify_over_processes_stops_the_task_after_a_counterexample(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """verify of :func:`_one_failing_set` over three processes, numpy's direct kernel, tasks of
    16 sets (the pilot ranks 0-15, then ranks 16-31, 32-47 with the counterexample at 32,
    48-63 and 64-65), each set one batch of the kernel (its read of the stop flag first):
    the task of ranks 16-31 runs until the one of ranks 48-63 has ended, which waits after its
    first set until its stop flag is set; the counterexample's task reports once that one
    has started.  The task after the counterexample decides one set of its 16 (it decided
    all 16: nothing stopped it), and the report is the one of one job."""
    from gctool.audit import nullspace as ns
    from gctool.audit.verify import verify
    from gctool.engine.enumeration import rank_lex

    monkeypatch.setenv("GCTOOL_COMPILED", "0")
    small_chunks(monkeypatch, 16, processes=True)
    code = _one_failing_set()
    one = verify(code, 2, jobs=1, kernel="direct", method="exhaustive")
    assert one.counterexample == [3, 6] and one.checked == 33
    ctx = multiprocessing.get_context("fork")
    ran, ended = ctx.RawArray("i", 4), ctx.RawArray("b", 4)
    fill = ns.DirectKernel.fill

    def one_set_a_batch(self: Any, S: np.ndarray, idx: np.ndarray, out: Any) -> None:
        i = (int(rank_lex(12, S[:1])[0]) - 16) // 16  # its task among the processes' (0-3)
        if i < 0:  # the pilot, in this process
            fill(self, S, idx, out)
            return
        if i == 0:
            _until(lambda: bool(ended[2]))
        if i == 1:
            _until(lambda: ran[2] >= 1)
        flag = halt_flag()
        try:
            for a in range(idx.size):
                fill(self, S, idx[a:a + 1], out)  # (reads its task's stop flag first)
                ran[i] += 1
                if a == 0 and i >= 2:
                    _until(lambda: bool(flag[0]))
        finally:
            ended[i] = 1

    monkeypatch.setattr(ns.DirectKernel, "fill", one_set_a_batch)
    three = verify(code, 2, jobs=3, kernel="direct", method="exhaustive")
    assert list(ran)[:3] == [16, 16, 1]
    assert same_report(three) == same_report(one)


def test_verify_whose_worker_processes_die_ends_incomplete(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    """verify over two processes whose every task kills its process (as the out-of-memory
    killer would), on the code of :func:`_one_failing_set`: after the pools given to the
    retries the run ends incomplete, exit 2 and one line naming what was checked (the
    pilot's 16 sets, in this process); never a verdict."""
    import os
    import signal

    from gctool.audit import nullspace as ns
    from gctool.io import write_code

    from helpers import run

    monkeypatch.setenv("GCTOOL_COMPILED", "0")
    small_chunks(monkeypatch, 16, processes=True)
    path = tmp_path / "code.json"
    write_code(_one_failing_set(), path)
    parent, fill = os.getpid(), ns.DirectKernel.fill

    def dying(self: Any, S: np.ndarray, idx: np.ndarray, out: Any) -> None:
        if os.getpid() != parent:
            os.kill(os.getpid(), signal.SIGKILL)
        fill(self, S, idx, out)

    monkeypatch.setattr(ns.DirectKernel, "fill", dying)
    res = run("verify", str(path), "--jobs", "2", "--kernel", "direct",
              "--method", "exhaustive")
    assert res.exit_code == 2 and res.stdout == ""
    (line,) = res.stderr.strip().splitlines()
    assert line.startswith("gctool: error: incomplete run, no verdict: checked 16 "), line
