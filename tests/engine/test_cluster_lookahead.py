"""A threshold search on a Dask session starts its next size ahead (``ExceedSearch._launch``,
``DaskRunner.start``): the reports are those of one local thread, the budget refuses what it
refuses there (and the look-ahead starts nothing it has not admitted), and what a look-ahead
started is cancelled when a size finds its set, on the scheduler and on the workers."""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass
from math import comb
from typing import Any

import numpy as np
import pytest
from distributed import Client, LocalCluster

from gctool.algebra.fields import parse_field
from gctool.audit.attack import threshold
from gctool.audit.distributed import DaskRunner, _run_tasks, local_cluster_options
from gctool.budget import Budget
from gctool.errors import BudgetExceeded
from gctool.model import GradientCode

import helpers
from helpers import same_report as same
from helpers import tied_code


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    helpers.small_chunks(monkeypatch, 64)  # several tasks per size on a code of n = 14


@pytest.fixture(scope="module")
def cluster() -> Any:
    with LocalCluster(**local_cluster_options(2, processes=False), protocol="tcp://") as c:
        yield c


def generic() -> GradientCode:
    """Any 6 of its 14 rows span R^6: the threshold is 9 (5 rows left), every size below it
    is searched whole."""
    B = np.random.default_rng(1).standard_normal((14, 6))
    return GradientCode(B, parse_field("real"), 4)


def ours(cluster: Any, key: str) -> list[str]:
    """The run's Dask tasks the scheduler or a worker still holds."""
    prefix = f"gctool-{key[:12]}-"
    held = [str(k) for k in cluster.scheduler.tasks if str(k).startswith(prefix)]
    for w in cluster.workers.values():
        held += [str(k) for k in w.state.tasks if str(k).startswith(prefix)]
    return held


def settled(cluster: Any, key: str) -> list[str]:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and ours(cluster, key):
        time.sleep(0.05)
    return ours(cluster, key)


@pytest.mark.parametrize(("make", "symmetry", "epsilon"),
                         [(generic, False, 0.0), (generic, False, 0.5), (tied_code, True, 0.0)])
def test_the_next_size_starts_ahead_and_the_report_is_the_local_one(
        cluster: Any, make: Any, symmetry: bool, epsilon: float) -> None:
    """Every size after 0 (which runs in the client) is started ahead and taken over by its
    call, the threshold's size among them; the size after the threshold (if the search has
    one) is started and then dropped, and nothing of it is left on the cluster."""
    code = make()
    kw: dict[str, Any] = dict(method="exhaustive", symmetry=symmetry,
                              budget=Budget(max_sets=10**6))
    one = threshold(code, epsilon, jobs=1, **kw)
    two = threshold(code, epsilon, jobs=2, **kw)
    key = f"ahead-{make.__name__[:5]}"
    runner = DaskRunner(scheduler=cluster.scheduler_address, key=key, batch=2, guided=True)
    with runner:
        dsk = threshold(code, epsilon, jobs=2, runner=runner, **kw)
    assert same(dsk) == same(one) == same(two)
    t = one.threshold
    assert t is not None and t >= 3 and dsk.exact
    assert runner.totals["ahead_taken"] == t  # sizes 1..t, each started while the last ran
    if make is generic:  # size t + 1, dropped when t found its set
        assert runner.totals["ahead_tasks_dropped"] > 0
    else:  # (the holders of a partition cap the sizes at t: nothing after it)
        assert runner.totals.get("ahead_tasks_dropped", 0) == 0
    assert not settled(cluster, key)


def test_without_a_session_nothing_starts_ahead(cluster: Any) -> None:
    code = generic()
    kw: dict[str, Any] = dict(method="exhaustive", symmetry=False)
    runner = DaskRunner(scheduler=cluster.scheduler_address, key="no-session")
    assert same(threshold(code, 0.0, runner=runner, **kw)) == same(threshold(code, 0.0, **kw))
    assert "ahead_taken" not in runner.totals and runner.totals["dask_tasks"] > 0


def below(t: int) -> int:
    """The sets of sizes 0..t of n = 14."""
    return sum(comb(14, u) for u in range(t + 1))


def calibrated_probe(walk: Any, stop: int, size: int, over: float, least: int = 0,
                     expected: float = 0.0, dense: int | None = None
                     ) -> tuple[float, int, bool] | None:
    """Stands in for the timed probe of a threshold search's sizes
    (``gctool.budget.probe_rate``): the calibrated rate ``expected`` as if timed, so that the
    three runs of a test see the same estimates whatever the machine's load (the sizes of n =
    14 that run in this process are timed, and the budget of 0.07 s falls between sizes 7 and
    8: on a loaded machine the runs' timed rates differed and so did the size they stopped
    at).  The walk is not run; no size below the threshold has a failing set to find."""
    return (expected, max(1, stop // 32), False) if expected > 0 else None


@pytest.mark.parametrize("budget", [Budget(max_sets=below(4) + 1), Budget(max_work=0.02),
                                    Budget(max_work=0.07)])
def test_a_run_refused_by_one_local_job_is_refused_on_dask(
        cluster: Any, budget: Budget, monkeypatch: pytest.MonkeyPatch) -> None:
    """The look-ahead asks the budget before it starts a size, in size order: a search refused
    with --jobs 1 is refused on a Dask session too, in the same words as on Dask without one
    (which does not time the sizes it sends to the cluster, so a time budget may stop it at
    another size than --jobs 1: here by the estimate, where --jobs 1 is stopped by its charges
    as it runs), and the refused size is never started.  The sizes timed in this process take
    the calibrated rate (:func:`calibrated_probe`), and the SVD decoder's sets are charged
    theirs (its timed rate fixed at 1: ``Oracle.errors``, which times the decoder's first
    batches on the thread's CPU clock): the runs compare refusals, not timings.  (With a
    session, a worker's copy of the oracle counts every size's charges on one meter: timed at
    1.3 times the calibrated rate, as on a slower or loaded core, they pass the budget in size
    7, before the estimate refuses size 8 as it does without a session.)"""
    from gctool.audit import exhaustive
    from gctool.audit.oracles import base

    monkeypatch.setattr(exhaustive, "probe_rate", calibrated_probe)
    monkeypatch.setattr(base, "TIMED_RANGE", (1.0, 1.0))
    code = generic()
    kw: dict[str, Any] = dict(method="exhaustive", symmetry=False, budget=budget, jobs=1)
    with pytest.raises(BudgetExceeded) as local:
        threshold(code, 0.0, **kw)
    alone = DaskRunner(scheduler=cluster.scheduler_address, key="refused-1", batch=2,
                       guided=True)
    with pytest.raises(BudgetExceeded) as plain:
        threshold(code, 0.0, runner=alone, **kw)
    runner = DaskRunner(scheduler=cluster.scheduler_address, key="refused-2", batch=2,
                        guided=True)
    with runner, pytest.raises(BudgetExceeded) as remote:
        threshold(code, 0.0, runner=runner, **kw)
    assert str(remote.value) == str(plain.value)
    proved = remote.value.proved
    assert proved is not None and 2 <= proved < 9 and plain.value.proved == proved
    if budget.max_sets is not None:
        assert str(remote.value) == str(local.value) and local.value.proved == proved == 5
    # sizes 1 .. proved - 1 started ahead and taken over; the refused size never started
    assert runner.totals["ahead_taken"] == proved - 1
    assert runner.totals.get("ahead_tasks_dropped", 0) == 0


def test_a_size_refused_after_the_threshold_is_not_reported(cluster: Any) -> None:
    """Size 10 does not fit the budget, size 9 (the threshold) does: the look-ahead asks about
    size 10 while size 9 runs, starts nothing of it, and the report is the local one."""
    code = generic()
    kw: dict[str, Any] = dict(method="exhaustive", symmetry=False,
                              budget=Budget(max_sets=below(9)), jobs=1)
    one = threshold(code, 0.0, **kw)
    runner = DaskRunner(scheduler=cluster.scheduler_address, key="after", batch=2, guided=True)
    with runner:
        assert same(threshold(code, 0.0, runner=runner, **kw)) == same(one)
    assert one.threshold == 9
    assert runner.totals["ahead_taken"] == 9
    assert runner.totals.get("ahead_tasks_dropped", 0) == 0


RAN: list[int] = []  # the engine tasks Slow ran (the cluster's workers are threads here)


class Slow:
    def run(self, task: Any) -> Any:
        RAN.append(task[0])
        time.sleep(0.05)
        return task[0]


def cancelled_once_started(future: Any, done: list[Any]) -> None:
    """Cancel the Dask ``future`` once its task has appended to ``done``, then wait (10 s at
    most in all) until ``done`` has not grown for 0.5 s: what the task ran after its cancel."""
    deadline = time.monotonic() + 10
    while not done and time.monotonic() < deadline:
        time.sleep(0.01)
    assert done
    future.cancel()
    count, stable = len(done), time.monotonic()
    while time.monotonic() - stable < 0.5 and time.monotonic() < deadline:
        time.sleep(0.02)
        if len(done) != count:
            count, stable = len(done), time.monotonic()


def test_a_cancelled_dask_task_stops_before_its_next_engine_task(cluster: Any) -> None:
    """Dask cannot interrupt a running task; a cancelled one of gctool's stops before its next
    engine task (``_still_wanted``) instead of running them all (40 x 50 ms here)."""
    RAN.clear()
    with Client(cluster, set_as_default=False) as client:
        f = client.submit(_run_tasks, Slow(), [(i, 0, 1) for i in range(40)], pure=False,
                          key="gctool-stopping-1")
        cancelled_once_started(f, RAN)
    assert 1 <= len(RAN) < 10, RAN
    assert not settled(cluster, "stopping")


@dataclass
class Tagged:
    """Every task's summary carries the kernel's value."""

    kernel: Any

    def run(self, task: Any) -> Any:
        from gctool.engine.sweep import PeakSummary

        return PeakSummary(task[0], task[2] - task[1], [(float(self.kernel), [task[1]])])


def test_a_call_takes_over_only_what_computes_its_results(cluster: Any) -> None:
    """A call takes over the tasks started ahead only when its worker pickles to the same
    bytes (else they are dropped and the call runs its own); outside a session nothing
    starts; cancelling what a call took over does nothing."""
    tasks = [(i, 10 * i, 10 * i + 10) for i in range(6)]
    runner = DaskRunner(scheduler=cluster.scheduler_address, key="fits")
    assert runner.start(Tagged(1.0), tasks, 1) is None  # no session
    got: list[float] = []

    def fold(i: int, r: Any) -> bool:
        got.append(r.peaks[0][0])
        return False

    with runner:
        assert runner.start(Tagged(1.0), tasks, 1) is not None
        runner(Tagged(2.0), tasks, 1, fold)
        assert got == [2.0] * 6
        assert "ahead_taken" not in runner.totals and runner.totals["ahead_tasks_dropped"] > 0
        started = runner.start(Tagged(3.0), tasks, 1)
        assert started is not None
        got.clear()
        runner(Tagged(3.0), tasks, 1, fold)
        assert got == [3.0] * 6 and runner.totals["ahead_taken"] == 1
        dropped = runner.totals["ahead_tasks_dropped"]
        started.cancel()
        assert runner.totals["ahead_tasks_dropped"] == dropped
    assert not settled(cluster, "fits")


def test_the_estimate_left_on_the_oracle_counts_the_sizes_searched(cluster: Any) -> None:
    """The threshold search leaves on its oracle the estimate of the sizes it searched (bound
    reports it in its table); the sizes a look-ahead asked the budget about after the
    threshold's do not count: the estimate is that of the same search without a session."""
    from gctool.audit import exhaustive
    from gctool.audit.attack.options import AttackOptions, oracle_for

    code = generic()
    estimates = []
    for session in (False, True):
        oracle = oracle_for(code, AttackOptions.of(None, budget=Budget(max_sets=10**6)))
        runner = DaskRunner(scheduler=cluster.scheduler_address, key="estimate")
        with runner if session else contextlib.nullcontext():
            out = exhaustive.threshold(oracle, oracle.limit, symmetry=False, runner=runner)
        assert out.threshold == 9
        estimates.append(oracle.estimated)
    assert estimates[0] == estimates[1] > 0
    assert runner.totals["ahead_tasks_dropped"] > 0  # (size 10 was asked about, and started)


def test_a_look_ahead_behind_another_submits_one_small_task_per_thread(cluster: Any) -> None:
    """The first enumeration started ahead fills the window (the cluster has nothing else to
    do); one started behind it submits one Dask task of ``batch`` engine tasks per worker
    thread (all a search loses when the one before finds its set)."""
    tasks = [(i, 10 * i, 10 * i + 10) for i in range(40)]
    runner = DaskRunner(scheduler=cluster.scheduler_address, key="small", batch=2, guided=True)
    with runner:
        first = runner.start(Tagged(1.0), tasks, 1)
        second = runner.start(Tagged(2.0), tasks[:30], 1)
        assert first is not None and second is not None
        assert first.window is not None and second.window is not None
        assert first.window.stats["dask_tasks"] == 4  # 2 x the 2 worker threads
        assert first.window.stats["submitted"] > 8
        assert (second.window.stats["dask_tasks"], second.window.stats["submitted"]) == (2, 4)
        first.cancel()
        second.cancel()
    assert runner.totals["ahead_dropped"] == 6
    assert not settled(cluster, "small")


def test_a_worker_under_dask_s_nanny_keeps_its_heap(monkeypatch: pytest.MonkeyPatch) -> None:
    """Dask's nanny sets MALLOC_TRIM_THRESHOLD_ in its workers (glibc's adaptive mmap
    threshold off: every array of 128 KB or more a fresh mapping); the first engine task of a
    process keeps the heap as the command line does (gctool._memory.keep_heap, once), and
    nothing is done where the variable is not set."""
    import sys

    import gctool.audit.distributed as dist
    from gctool import _memory

    monkeypatch.setattr(_memory, "_HEAP_KEPT", [])
    monkeypatch.delenv("MALLOC_TRIM_THRESHOLD_", raising=False)
    assert dist._keep_heap() is False and _memory._HEAP_KEPT == []
    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "65536")
    for name in _memory.OWN_SETTINGS + ("GLIBC_TUNABLES",):
        monkeypatch.delenv(name, raising=False)
    calls: list[int] = []
    real = dist._keep_heap

    def spy() -> bool:
        calls.append(1)
        return real()

    monkeypatch.setattr(dist, "_keep_heap", spy)
    _run_tasks(_Square(), [(0, 0, 3), (1, 3, 5)])
    _run_tasks(_Square(), [(2, 5, 6)])
    assert len(calls) == 2 and len(_memory._HEAP_KEPT) == 1  # set once per process
    assert _memory._HEAP_KEPT[0] is sys.platform.startswith("linux")


@dataclass
class _Square:
    def run(self, task: Any) -> int:
        return task[2] - task[1]


HALTED: list[bool] = []  # how each Walking engine task ended: True when its stop flag was set


class Walking:
    """An engine task that stands for a compiled walk of 20 s: it reads its stop flag
    (halt_flag) as such a walk does, and ends when it is set."""

    def run(self, task: Any) -> Any:
        from gctool.engine.threads import halt_flag, raise_if_halted

        flag = halt_flag()
        RAN.append(task[0])
        deadline = time.monotonic() + 20
        while not flag[0] and time.monotonic() < deadline:
            time.sleep(0.01)
        HALTED.append(bool(flag[0]))
        raise_if_halted(flag)
        return task[0]


def test_a_cancelled_dask_task_stops_its_running_walk(cluster: Any) -> None:
    """A compiled walk inside a cancelled Dask task ends at its next check of its stop flag,
    which a watcher sets (_halted_when_cancelled), instead of walking its whole range: the
    walk ends with its flag set, not at its 20 s deadline, and the next engine task never
    starts."""
    RAN.clear()
    HALTED.clear()
    with Client(cluster, set_as_default=False) as client:
        f = client.submit(_run_tasks, Walking(), [(i, 0, 1) for i in range(3)], pure=False,
                          key="gctool-walking-1")
        deadline = time.monotonic() + 10
        while not RAN and time.monotonic() < deadline:
            time.sleep(0.01)
        assert RAN == [0]
        f.cancel()
        while not HALTED and time.monotonic() < deadline + 20:
            time.sleep(0.01)
    assert HALTED == [True] and RAN == [0]
    assert not settled(cluster, "walking")


def test_a_cancelled_dask_task_stops_its_numpy_batches(cluster: Any,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The numpy route inside a cancelled Dask task (an attack oracle's batches, no compiled
    kernel) stops between its batches once the watcher sets its stop flag
    (_halted_when_cancelled), not at the end of its engine task: one engine task of 501
    batches (each made to take 20 ms: 10 s) decides a few of them.  Batches are counted."""
    from gctool.audit.oracles import OptimalOracle
    from gctool.audit.oracles.kernel import OracleKernel
    from gctool.engine.sweep import LexSource, PeakWorker

    monkeypatch.setenv("GCTOOL_COMPILED", "0")  # (the cluster's worker threads read it)
    batches = helpers.slowed_hat_batches(monkeypatch)
    code, s = generic(), 4
    worker = PeakWorker(LexSource(14, s), OracleKernel.of(OptimalOracle(code)), ties=True)
    with Client(cluster, set_as_default=False) as client:
        f = client.submit(_run_tasks, worker, [(0, 0, comb(14, s))], pure=False,
                          key="gctool-numpybatch-1")
        cancelled_once_started(f, batches)
    assert 1 <= len(batches) < 60, len(batches)  # of 501
    assert not settled(cluster, "numpybatch")


class FailsAt:
    """Engine tasks of 50 ms; task 5's result is a counterexample (a set over the limit)."""

    def run(self, task: Any) -> Any:
        from gctool.engine.sweep import ExceedSummary

        RAN.append(task[0])
        if task[0] == 5:
            return ExceedSummary(task[0], 1, [task[1]], 1.0, 1)
        time.sleep(0.05)
        return ExceedSummary(task[0], 1, None, None, 1)


def test_a_dask_task_ends_at_its_counterexample(cluster: Any) -> None:
    """A Dask task whose engine task finds a counterexample runs none of its engine tasks
    after it (the run ends there at the latest, and the client waits for the Dask task that
    holds it): one Dask task of 40 engine tasks, the sixth failing, runs six; the fold gets
    the counterexample, after the five before it."""
    from gctool.engine.sweep import ExceedFold

    RAN.clear()
    fold, seen = ExceedFold(), []

    def on_result(i: int, r: Any) -> bool:
        seen.append(i)
        return fold.merge(r)

    runner = DaskRunner(scheduler=cluster.scheduler_address, key="failsat", batch=40)
    runner(FailsAt(), [(i, 10 * i, 10 * i + 10) for i in range(40)], 1, on_result)
    assert seen == list(range(6)) and fold.fail_set == [50] and fold.checked == 6
    assert runner.stats["dask_tasks"] == 1
    assert RAN == list(range(6)), RAN
