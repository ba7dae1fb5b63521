"""The enumeration engine (gctool.engine): generic worker/fold pairs against direct loops,
the same results for any number of processes, and kernels that walk rank ranges themselves."""

from __future__ import annotations

import itertools
import time
from typing import Any

import numpy as np

from gctool.engine.enumeration import straggler_mask, survivors_of, unrank_lex
from gctool.engine.sweep import (
    ExceedFold,
    ExceedWorker,
    FirstMaxFold,
    LexSource,
    ListSource,
    PeakSummary,
    PeakWorker,
    RangeWalker,
    SumFold,
    SumWorker,
    WorstFold,
    rank_tasks,
    run_folded,
)
from gctool.limits import TIE_RTOL

from helpers import joined

N, S = 9, 3
WEIGHT = np.array([0.3, 1.0, 0.2, 0.9, 0.5, 0.1, 0.8, 0.4, 0.8])  # {1,3,6} ties {1,3,8}


class Quadratic:
    """A value per set with exact ties: the squared sum of the members' weights, rounded."""

    def errors(self, sets: np.ndarray) -> np.ndarray:
        return np.round(WEIGHT[sets].sum(axis=1) ** 2, 6)


class Walking(Quadratic, RangeWalker):
    """The same values, computed by walking the rank range (as a compiled kernel would)."""

    def __init__(self) -> None:
        self.walked = 0

    def peak_range(self, task: Any, n: int, s: int) -> PeakSummary | None:
        i, a, b = task
        if i % 2:  # falls back to errors(S) for odd tasks
            return None
        self.walked += 1
        sets = unrank_lex(n, s, np.arange(a, b))
        err = self.errors(sets)
        j = int(np.flatnonzero(err == err.max())[0])
        return PeakSummary(i, b - a, [(float(err[j]), sets[j].tolist())])


def brute() -> list[tuple[tuple[int, ...], float]]:
    return [(c, round(float(WEIGHT[list(c)].sum()) ** 2, 6))
            for c in itertools.combinations(range(N), S)]


def test_masks_and_survivors() -> None:
    sets = np.array([[0, 2, 5], [1, 3, 8]])
    mask = straggler_mask(sets, N)
    assert mask.sum() == 6 and mask[0, 2] and not mask[0, 1]
    assert survivors_of(sets, N).tolist() == [[1, 3, 4, 6, 7, 8], [0, 2, 4, 5, 6, 7]]


def test_worst_exceed_and_sum_match_direct_loops() -> None:
    rows = brute()
    tasks = rank_tasks(len(rows), 10)
    worst = WorstFold()
    run_folded(PeakWorker(LexSource(N, S), Quadratic()), tasks, worst)
    top = max(v for _, v in rows)
    assert worst.error == top and tuple(worst.stragglers or ()) == next(
        c for c, v in rows if v == top)  # the first of the tied maxima
    over = ExceedFold()
    run_folded(ExceedWorker(LexSource(N, S), Quadratic(), 4.0), tasks, over)
    first = next(i for i, (_, v) in enumerate(rows) if v > 4.0)
    assert tuple(over.fail_set or ()) == rows[first][0] and over.checked == first + 1
    total = SumFold()
    run_folded(SumWorker(LexSource(N, S), Quadratic()), tasks, total)
    assert np.isclose(total.total, sum(v for _, v in rows))
    p = np.linspace(0.1, 0.6, N)
    weighted = SumFold()
    run_folded(SumWorker(LexSource(N, S), Quadratic(), p), tasks, weighted)
    want = sum(v * np.prod([p[i] if i in c else 1 - p[i] for i in range(N)]) for c, v in rows)
    assert np.isclose(weighted.total, want)


def _kept_in_full(kept: list[Any], peaks: list[Any]) -> list[Any]:
    """The peaks a :class:`FirstMaxFold` keeps, worked out again over all of them."""
    kept = kept + peaks
    top = max((e for e, _ in kept if not np.isnan(e)), default=-np.inf)
    if np.isfinite(top):
        cut = top - TIE_RTOL * max(1.0, abs(top))
        return [(e, S) for e, S in kept if e >= cut]
    return [(e, S) for e, S in kept if e == np.inf][:1] if top == np.inf else kept[:1]


def test_the_first_max_fold_keeps_what_a_full_pass_keeps() -> None:
    """A merge that does not raise the largest value filters only the new peaks: after every
    merge the fold keeps the very peaks (and so the set) a pass over all of them keeps, with
    nan, infinities and values within the tie tolerance among them."""
    values = [np.nan, -np.inf, np.inf, 0.0, 1.0, 1 + 0.6 * TIE_RTOL, 1 + 1.3 * TIE_RTOL, -1.0,
              2.0, -1e300, 5e-17]
    odds = np.array([10, 10, 3, 10, 20, 15, 12, 5, 5, 5, 5]) / 100
    rng = np.random.default_rng(5)
    for trial in range(3000):
        fold, kept = FirstMaxFold(), []
        for t in range(int(rng.integers(1, 8))):
            vals = rng.choice(values, size=int(rng.integers(0, 5)), p=odds)
            peaks = [(float(v), [t, j]) for j, v in enumerate(vals)]
            fold.merge(PeakSummary(t, len(peaks), peaks))
            kept = _kept_in_full(kept, peaks)
            assert repr(fold._kept) == repr(kept), (trial, t)  # (repr: nan equals nan)
            if kept:
                assert repr((fold.error, fold.stragglers)) == repr(kept[0])


def test_same_results_over_processes_and_given_sets() -> None:
    tasks = rank_tasks(84, 5)
    folds = []
    for jobs in (1, 2):
        fold = SumFold()
        run_folded(SumWorker(LexSource(N, S), Quadratic()), tasks, fold, jobs=jobs)
        peak = WorstFold()
        run_folded(PeakWorker(LexSource(N, S), Quadratic()), tasks, peak, jobs=jobs)
        folds.append((fold.total, peak.error, peak.stragglers))
    assert folds[0] == folds[1]  # bit for bit: summaries are folded in task order
    given = np.array([c for c, _ in brute()])[::-1].copy()  # reversed order: another first
    rev = WorstFold()
    run_folded(PeakWorker(ListSource(N, given), Quadratic()), rank_tasks(84, 7), rev)
    assert rev.error == folds[0][1] and rev.stragglers != folds[0][2]


def test_a_kernel_may_walk_rank_ranges_itself() -> None:
    tasks = rank_tasks(84, 8)
    plain, walked = WorstFold(), WorstFold()
    run_folded(PeakWorker(LexSource(N, S), Quadratic()), tasks, plain)
    kernel = Walking()
    run_folded(PeakWorker(LexSource(N, S), kernel), tasks, walked)
    assert (walked.error, walked.stragglers, walked.checked) == (
        plain.error, plain.stragglers, plain.checked)
    assert kernel.walked == (len(tasks) + 1) // 2
    listed = Walking()  # given sets: never walked (ranks are not lexicographic ranks)
    sets = np.array([c for c, _ in brute()])
    run_folded(PeakWorker(ListSource(N, sets), listed), tasks, WorstFold())
    assert listed.walked == 0


def test_a_rebuilt_oracle_takes_the_path_of_the_original() -> None:
    """An oracle kernel sent to another process computes the floats of the original, also
    when the original planned the compiled path (which depends on the process's history)."""
    import pickle

    from gctool.algebra.fields import parse_field
    from gctool.audit.oracles import make_oracle
    from gctool.audit.oracles.kernel import OracleKernel
    from gctool.model import GradientCode

    B = np.random.default_rng(5).standard_normal((12, 7))
    oracle = make_oracle(GradientCode(B, parse_field("real"), 3))
    oracle.plan_compiled(3)
    assert oracle.compiled is not None
    kernel = OracleKernel.of(oracle)
    copy = pickle.loads(pickle.dumps(kernel))
    assert copy._oracle is None and copy.compiled
    sets = unrank_lex(12, 3, np.arange(220))
    assert np.array_equal(copy.errors(sets), kernel.errors(sets))
    assert copy.oracle.compiled is not None
    plain = pickle.loads(pickle.dumps(OracleKernel.of(make_oracle(oracle.code))))
    assert not plain.compiled and plain.oracle.compiled is None


class _Square:
    def run(self, task: int) -> int:
        return task * task


def test_paced_runner_starts_processes_only_when_the_first_task_says_they_pay(
        monkeypatch: Any) -> None:
    """run_paced runs and times the first task here; the rest go to processes only when, at
    that pace, they take PARALLEL_MIN_S or more; results arrive in task order either way, and
    the tasks a runner gives up on are named by their place in the whole list."""
    import pytest

    from gctool.engine import parallel
    from gctool.engine.parallel import LostTasks

    jobs: list[int] = []
    real = parallel.run_ordered

    def spy(worker: Any, tasks: Any, j: int, on_result: Any) -> None:
        jobs.append(j)
        real(worker, tasks, j, on_result)

    monkeypatch.setattr(parallel, "run_ordered", spy)
    tasks = list(range(6))
    for floor, used in ((3600.0, 1), (0.0, 2)):
        monkeypatch.setattr(parallel, "PARALLEL_MIN_S", floor)
        got: list[tuple[int, int]] = []

        def keep(i: int, r: int, got: list[tuple[int, int]] = got) -> bool:
            got.append((i, r))
            return False

        parallel.run_paced(_Square(), tasks, 2, keep)
        assert got == [(i, i * i) for i in tasks] and jobs[-1] == used
    stopped: list[int] = []
    parallel.run_paced(_Square(), tasks, 2, lambda i, r: stopped.append(i) is None)
    assert stopped == [0]  # the first result stopped the run

    def lose(worker: Any, rest: Any, j: int, on_result: Any) -> None:
        raise LostTasks([0, 2], "gone")

    monkeypatch.setattr(parallel, "run_ordered", lose)
    with pytest.raises(LostTasks) as info:
        parallel.run_paced(_Square(), tasks, 2, lambda i, r: False)
    assert info.value.indices == [1, 3]


def test_thread_pools_record_where_their_time_went() -> None:
    """run_threads adds each pool's capacity (threads x wall), task time and idle start and tail
    to TIMES (a started-ahead pool, folded and then cancelled, once), for the scaling
    benchmark; results still arrive in task order."""
    from gctool.engine.threads import TIMES, Ahead, run_threads

    TIMES.reset()
    got: list[int] = []
    run_threads(_Square(), list(range(8)), 2, lambda i, r: got.append(r) is not None)
    assert got == [i * i for i in range(8)]
    assert TIMES.pools == 1 and TIMES.capacity > 0
    assert 0 <= TIMES.busy <= TIMES.capacity and 0 <= TIMES.idle <= 1
    assert TIMES.start >= 0 and TIMES.tail >= 0
    assert TIMES.start + TIMES.tail <= TIMES.capacity - TIMES.busy + 1e-9
    TIMES.reset()
    assert (TIMES.pools, TIMES.capacity, TIMES.idle) == (0, 0.0, 0.0)
    ahead = Ahead(_Square(), list(range(4)), 2)  # folded, then cancelled: one pool
    ahead.run(_Square(), list(range(4)), 2, lambda i, r: False)
    ahead.cancel()
    assert TIMES.pools == 1
    TIMES.reset()


def test_thread_pools_fold_in_their_threads_and_count_it() -> None:
    """run_threads folds in the pool's threads (the caller's, which runs tasks as one of
    them, and the others), one result at a time and in task order, and adds the CPU of the
    other threads' folds to TIMES.fold (the serial part the scaling benchmark reports with
    the caller's thread)."""
    import threading
    import time

    from gctool.engine.threads import TIMES, run_threads

    ran: list[str] = []
    both = threading.Barrier(2, timeout=20)  # tasks 0 and 1 run in two threads at once

    class Slow:
        def run(self, task: int) -> int:
            ran.append(threading.current_thread().name)
            if task < 2:
                both.wait()
            time.sleep(0.002)
            return task

    where: list[str] = []
    inside = [0]

    def fold(i: int, r: int) -> bool:
        inside[0] += 1
        assert inside[0] == 1  # never two folds at once
        where.append(threading.current_thread().name)
        t0 = time.thread_time()
        while time.thread_time() - t0 < 0.001:  # CPU the fold spends
            pass
        got.append(r)
        inside[0] -= 1
        return False

    TIMES.reset()
    got: list[int] = []
    run_threads(Slow(), list(range(12)), 2, fold)
    assert got == list(range(12))
    main = threading.current_thread().name
    assert set(ran) == {main, "gctool-job-1"}, ran  # --jobs 2: the caller and one other
    pooled = [w for w in where if w.startswith("gctool-job")]
    assert set(where) <= {main, "gctool-job-1"}, where
    # the other thread's folds, not the caller's (its CPU is the caller's thread's)
    assert 0.001 * len(pooled) * 0.9 <= TIMES.fold < 0.0015 * len(pooled) + 0.0005
    TIMES.reset()
    assert TIMES.fold == 0.0


class _Charging:
    """Records the tasks that reached their turn to charge (threads.in_task_order)."""

    def __init__(self) -> None:
        self.charged: list[int] = []

    def run(self, task: int) -> int:
        from gctool.engine.threads import in_task_order

        in_task_order()
        self.charged.append(task)
        return task * task


def test_tasks_started_ahead_charge_nothing_before_their_fold() -> None:
    """threads.Ahead runs tasks before their turn, but no task charges the budget until the
    fold takes them (then in task order); dropped, its threads are idle again (carriers for
    the next pool: no thread more); it folds only its own tasks."""
    import threading

    import pytest

    from gctool.engine.threads import Ahead

    Ahead(_Charging(), list(range(2)), 2).cancel()  # two idle carriers at least
    before = threading.active_count()
    worker = _Charging()
    dropped = Ahead(worker, list(range(5)), 2)
    dropped.cancel()
    assert worker.charged == [] and threading.active_count() == before
    worker = _Charging()
    ahead = Ahead(worker, list(range(6)), 2)
    with pytest.raises(ValueError):
        ahead.run(worker, list(range(5)), 2, lambda i, r: False)
    ahead = Ahead(worker, list(range(6)), 2)
    assert worker.charged == []
    got: list[int] = []

    def keep(i: int, r: int) -> bool:
        got.append(r)
        return False

    ahead.run(worker, list(range(6)), 2, keep)
    assert got == [i * i for i in range(6)] and sorted(worker.charged) == list(range(6))
    assert threading.active_count() == before


class _Logged:
    """Sleeps (the GIL released, as a compiled walk) and records when each task ran."""

    def __init__(self, name: str, log: list[tuple[str, int, float, float]], lock: Any,
                 pause: float = 0.01) -> None:
        self.name, self.log, self.lock, self.pause = name, log, lock, pause

    def run(self, task: int) -> int:
        import time

        t0 = time.perf_counter()
        time.sleep(self.pause)
        with self.lock:
            self.log.append((self.name, task, t0, time.perf_counter()))
        return task * task


def test_a_pool_that_follows_another_takes_over_its_cores() -> None:
    """threads.Ahead(after=...): the follower's threads start only as the pool before finds no
    task left, one per thread of it that left, so the two never run more tasks at once than
    their jobs; each folds its own results in order; the times of the two pools count each
    core once; a follower cancelled before its turn runs nothing and leaves only idle
    carriers."""
    import threading

    from gctool.engine.threads import TIMES, Ahead, Carrier

    log: list[tuple[str, int, float, float]] = []
    lock = threading.Lock()
    TIMES.reset()
    first = Ahead(_Logged("a", log, lock), list(range(7)), 2)
    second = Ahead(_Logged("b", log, lock), list(range(6)), 2, after=first)
    got: list[tuple[str, int]] = []
    first.run(first.pool.worker, list(range(7)), 2,
              lambda i, r: got.append(("a", r)) is None and False)
    second.run(second.pool.worker, list(range(6)), 2,
               lambda i, r: got.append(("b", r)) is None and False)
    second.cancel()
    first.cancel()
    assert got == [("a", i * i) for i in range(7)] + [("b", i * i) for i in range(6)]
    last_a = max(t0 for name, _, t0, _ in log if name == "a")
    assert min(t0 for name, _, t0, _ in log if name == "b") >= last_a
    events = sorted([(t0, 1) for *_, t0, _ in log] + [(t1, -1) for *_, t1 in log])
    running = list(itertools.accumulate(d for _, d in events))
    assert max(running) <= 2
    assert TIMES.pools == 2 and 0 <= TIMES.idle < 1
    assert TIMES.busy <= TIMES.capacity
    TIMES.reset()
    before = {t.ident for t in threading.enumerate()}
    log.clear()
    slow = Ahead(_Logged("slow", log, lock), list(range(100)), 2)
    waiting = Ahead(_Logged("c", log, lock), list(range(4)), 2, after=slow)
    waiting.cancel()
    slow.cancel()
    assert not [e for e in log if e[0] == "c"] and len(log) < 100
    assert {t.ident for t in threading.enumerate()} - before <= set(Carrier._idle_idents())
    TIMES.reset()


def _ended_by_the_other_thread(jobs: int) -> None:
    """One run of 40 tasks whose first task run outside the caller's thread ends it, once the
    caller has filled its window and waits for the fold."""
    import threading

    from gctool.engine.threads import AHEAD, run_threads

    caller: list[threading.Thread] = []
    by_caller: dict[int, threading.Event] = {}
    waited: list[bool] = []

    class EndsInTheOtherThread:
        def run(self, task: int) -> str:
            if threading.current_thread() is caller[0]:
                time.sleep(0.002)  # (the other thread takes a task meanwhile)
                by_caller.setdefault(task, threading.Event()).set()
                return "ok"
            # the caller fills its window (tasks up to this one + AHEAD * jobs - 1), then
            # waits for this result, which ends the run
            last = task + AHEAD * jobs - 1
            waited.append(by_caller.setdefault(last, threading.Event()).wait(10))
            time.sleep(0.1)  # (the caller is in its wait by now)
            return "end"

    folded: list[str] = []

    def fold(i: int, r: str) -> bool:
        folded.append(r)
        return r == "end"

    def call() -> None:
        caller.append(threading.current_thread())
        run_threads(EndsInTheOtherThread(), list(range(40)), jobs, fold)

    thread = threading.Thread(target=call, daemon=True)
    thread.start()
    thread.join(30)
    assert not thread.is_alive(), "the caller still waits for a fold that has ended"
    assert folded[-1] == "end" and waited == [True], (folded, waited)


def test_a_run_ended_by_another_thread_while_the_caller_waits_for_the_window_returns() -> None:
    """The caller runs tasks as one of the pool's threads and waits for the fold when its
    window is full (run_threads: AHEAD tasks per thread ahead of the fold); when another
    thread's result ends the run then (a counterexample), the caller leaves at once.  (It
    once waited for ever: the end of the fold did not wake a thread waiting for the window.)"""
    for _ in range(5):
        _ended_by_the_other_thread(2)


def test_a_pool_that_follows_a_cancelled_one_runs_when_its_turn_comes() -> None:
    """The pool before a follower is cancelled with tasks it never handed out: its threads
    leave finding no task wanted, and the follower's take over their cores, so the
    follower's run folds all its tasks (its threads waited for the last task of the pool
    before to be handed out, and its run for ever)."""
    import threading

    from gctool.engine.threads import Ahead

    log: list[tuple[str, int, float, float]] = []
    lock = threading.Lock()
    slow = Ahead(_Logged("slow", log, lock), list(range(10_000)), 2)  # 10 ms a task
    follower = Ahead(_Logged("d", log, lock), list(range(4)), 2, after=slow)
    slow.cancel()
    got: list[int] = []
    run = threading.Thread(target=follower.run, daemon=True, args=(
        follower.pool.worker, list(range(4)), 2, lambda i, r: got.append(r) is None and False))
    run.start()
    try:
        joined(run, 60)
    finally:
        follower.cancel()
    assert got == [i * i for i in range(4)]
