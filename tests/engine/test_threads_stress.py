"""Randomized runs of the thread pools (:func:`run_threads`, :class:`Ahead` with and without
``after``) against the fold a single thread gives: tasks that sleep, end the run, raise, wait for
their turn (:func:`in_task_order`), stop at their flag (:class:`Cancelled`), folds that raise.
Each run is made in a daemon thread joined with a bound, so a lost wake-up fails the test
instead of hanging the suite."""

from __future__ import annotations

import random
import threading
import time
from dataclasses import dataclass
from typing import Any

from gctool.engine.threads import (
    Ahead,
    ends_run_here,
    halt_flag,
    in_task_order,
    raise_if_halted,
    run_threads,
)

#: how long one run (a few tens of milliseconds) may take before it counts as a deadlock
BOUND_S = 20.0
#: the kinds of task and their weights
KINDS = {"ok": 10, "order": 4, "halted": 3, "end": 2, "end_here": 1, "raise": 1}
SLEEPS = (0.0, 0.0, 0.0003, 0.001, 0.003, 0.015)


@dataclass(frozen=True)
class Result:
    index: int
    fail_set: Any = None  # (not None: the result ends the run, gctool.engine.parallel.ends_run)


class Failed(Exception):
    pass


class FoldFailed(Exception):
    pass


@dataclass(frozen=True)
class Task:
    index: int
    kind: str
    sleep: float


class Worker:
    def run(self, task: Task) -> Result:
        time.sleep(task.sleep)
        if task.kind == "order":
            in_task_order()
        elif task.kind == "halted":
            raise_if_halted(halt_flag())  # (Cancelled once the task is no longer wanted)
        elif task.kind == "end_here":
            ends_run_here()
            return Result(task.index, fail_set=(task.index,))
        elif task.kind == "end":
            return Result(task.index, fail_set=(task.index,))
        elif task.kind == "raise":
            raise Failed(task.index)
        return Result(task.index)


def _tasks(rng: random.Random, offset: int = 0) -> list[Task]:
    kinds, weights = list(KINDS), list(KINDS.values())
    count = rng.choice([1, 2, 3, rng.randint(4, 12), rng.randint(13, 40)])
    return [Task(offset + i, rng.choices(kinds, weights)[0], rng.choice(SLEEPS))
            for i in range(count)]


class Fold:
    """The fold of a run: the results in order; raises at ``raise_at``; stops at a result
    that ends the run."""

    def __init__(self, raise_at: int | None, slow: bool) -> None:
        self.raise_at, self.slow = raise_at, slow
        self.folded: list[int] = []
        self.outcome: str = "unset"

    def __call__(self, i: int, result: Result) -> bool:
        assert result.index == i or result.index >= 1000, (i, result)
        if self.slow:
            time.sleep(0.0005)
        if i == self.raise_at:
            raise FoldFailed(i)
        self.folded.append(i)
        return result.fail_set is not None


def _expected(tasks: list[Task], raise_at: int | None) -> tuple[list[int], str]:
    """The folded indices and the outcome a single thread gives."""
    folded: list[int] = []
    for i, task in enumerate(tasks):
        if task.kind == "raise":
            return folded, f"Failed({task.index})"
        if i == raise_at:
            return folded, f"FoldFailed({i})"
        folded.append(i)
        if task.kind in ("end", "end_here"):
            return folded, "ended"
    return folded, "done"


def _outcome(call: Any) -> str:
    try:
        call()
    except (Failed, FoldFailed) as exc:
        return f"{type(exc).__name__}({exc.args[0]})"
    return "ran"


def _fold_for(rng: random.Random, tasks: list[Task]) -> Fold:
    raise_at = rng.randrange(len(tasks)) if rng.random() < 0.1 else None
    return Fold(raise_at, slow=rng.random() < 0.3)


def _check(fold: Fold, tasks: list[Task], what: str) -> None:
    folded, outcome = _expected(tasks, fold.raise_at)
    got = fold.outcome if fold.outcome != "ran" else ("ended" if outcome == "ended" else "done")
    assert (fold.folded, got) == (folded, outcome), (what, tasks, fold.raise_at)


def _bounded(run: Any, what: str) -> None:
    """Run ``run`` in a daemon thread (the pool's caller); a run still going after
    :data:`BOUND_S` is a deadlock."""
    errors: list[BaseException] = []

    def call() -> None:
        try:
            run()
        except BaseException as exc:  # (reported in the test's thread)
            errors.append(exc)

    thread = threading.Thread(target=call, daemon=True, name="stress-caller")
    thread.start()
    thread.join(BOUND_S)
    assert not thread.is_alive(), f"deadlock: {what}"
    if errors:
        raise errors[0]


def _one_threads(rng: random.Random, what: str) -> None:
    tasks, jobs = _tasks(rng), rng.randint(2, 4)
    fold = _fold_for(rng, tasks)

    def run() -> None:
        fold.outcome = _outcome(lambda: run_threads(Worker(), tasks, jobs, fold))

    _bounded(run, f"{what}: run_threads jobs={jobs} {tasks}")
    _check(fold, tasks, what)


def _one_ahead(rng: random.Random, what: str) -> None:
    """An Ahead run alone, or two, the second following the first (``after``), as the sizes
    of a threshold search are: the first folded (or dropped), then the second folded; both
    cancelled at the end."""
    first, jobs1 = _tasks(rng), rng.randint(2, 4)
    second, jobs2 = _tasks(rng, offset=0), rng.randint(2, 4)
    follow = rng.random() < 0.6
    drop_first = follow and rng.random() < 0.2
    pause = rng.choice([0.0, 0.0, 0.002])
    fold1, fold2 = _fold_for(rng, first), _fold_for(rng, second)

    def run() -> None:
        a = Ahead(Worker(), first, jobs1)
        b = Ahead(Worker(), second, jobs2, after=a) if follow else None
        try:
            time.sleep(pause)
            if drop_first:
                a.cancel()
            else:
                fold1.outcome = _outcome(lambda: a.run(Worker(), first, jobs1, fold1))
            if b is not None:
                fold2.outcome = _outcome(lambda: b.run(Worker(), second, jobs2, fold2))
        finally:
            for pool in (a, b):
                if pool is not None:
                    pool.cancel()

    _bounded(run, f"{what}: Ahead jobs={jobs1} {first} then "
                  f"{'dropped ' if drop_first else ''}{'after: ' if follow else ''}"
                  f"jobs={jobs2} {second}")
    if not drop_first:
        _check(fold1, first, what)
    if follow:
        _check(fold2, second, what)


def test_run_threads_folds_as_one_thread_in_random_runs() -> None:
    rng = random.Random(20261205)
    for n in range(120):
        _one_threads(rng, f"run {n}")


def test_ahead_pools_fold_as_one_thread_in_random_runs() -> None:
    rng = random.Random(5122026)
    for n in range(60):
        _one_ahead(rng, f"run {n}")


def _followed_after_an_early_stop(end_first: bool) -> None:
    tasks = [Task(i, "order", 0.0) for i in range(20)]  # (held: each waits for the fold)
    if end_first:
        tasks[0] = Task(0, "end", 0.0)
    first = Ahead(Worker(), tasks, 2)
    second = Ahead(Worker(), [Task(i, "ok", 0.0) for i in range(6)], 2, after=first)
    fold = Fold(None, slow=False)

    def run() -> None:
        try:
            if end_first:  # the fold ends at task 0, before the tasks are handed out
                first.run(Worker(), tasks, 2, Fold(None, slow=False))
            else:  # dropped (a size whose plan is not the one started ahead)
                first.cancel()
            fold.outcome = _outcome(lambda: second.run(Worker(), second.tasks, 2, fold))
        finally:
            first.cancel()
            second.cancel()

    _bounded(run, "the pool after one stopped early")
    assert fold.folded == list(range(6))


def test_a_pool_after_one_dropped_or_ended_early_runs() -> None:
    """A pool that follows another (``Ahead(after=...)``) starts its threads when that one has
    handed out every task; one dropped, or whose fold ended, before it did hands out no more:
    the follower runs.  (It once waited for ever: its threads waited at their gate for
    ``next`` to reach the end, and the caller for its fold.)"""
    _followed_after_an_early_stop(end_first=False)
    _followed_after_an_early_stop(end_first=True)


def test_a_pool_after_one_dropped_before_its_threads_started_runs() -> None:
    """Three pools in a row (sizes started ahead, each after the one before): the middle one
    dropped while its threads still waited for the first's cores leaves with none of them
    counted as left; the third, folded, runs.  (It once waited for ever: its threads waited
    for threads of the middle pool to leave, which had left at their gate uncounted.)"""
    held = [Task(i, "order", 0.0) for i in range(20)]  # (each waits for its fold)
    first = Ahead(Worker(), held, 2)
    middle = Ahead(Worker(), [Task(i, "ok", 0.0) for i in range(6)], 2, after=first)
    last = Ahead(Worker(), [Task(i, "ok", 0.0) for i in range(6)], 2, after=middle)
    fold = Fold(None, slow=False)

    def run() -> None:
        try:
            middle.cancel()  # (its threads wait at their gate: first has tasks to hand out)
            first.cancel()
            fold.outcome = _outcome(lambda: last.run(Worker(), last.tasks, 2, fold))
        finally:
            for pool in (first, middle, last):
                pool.cancel()

    _bounded(run, "the pool after one dropped before its threads started")
    assert fold.folded == list(range(6))
