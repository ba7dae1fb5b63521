"""Ordered parallel evaluation of independent tasks over worker processes.

:func:`run_ordered` applies ``worker.run`` to every task and hands the results to a callback
*in task order*, whatever the number of processes, so a run with ``jobs = 1`` and one with
``jobs = 8`` see the same sequence of results: merged verdicts, counterexamples and
diagnostics are identical.  The callback returns True to stop early; the remaining tasks are
then cancelled (the pool is terminated).

* A worker process that dies (killed, or by the out-of-memory killer) breaks the pool
  (:class:`concurrent.futures.ProcessPoolExecutor` reports it at once; a plain
  ``multiprocessing.Pool`` would wait for its task forever): the tasks not yet folded run again
  on a new pool, at most :data:`RETRIES` times, then the runner gives up
  (:class:`LostTasks`: the fold ends the run incomplete, exit 2).
* At most :data:`AHEAD` tasks per process are submitted ahead of the fold.  A result that
  ends the run (:func:`ends_run`: a counterexample) drops the tasks after it as soon as it
  arrives, before the fold reaches it: those not started are cancelled, and each task has a
  stop flag in memory shared with the processes (one byte a task, :data:`TASK_FLAG`), set
  then: a task that the executor had already handed to a process's queue does not start,
  and a running one ends as a pool thread's does (:func:`gctool.engine.threads.halt_flag`:
  a compiled walk at its next check, a numpy route at its next batch, about
  :data:`~gctool.engine.threads.HALT_BATCH_NS` of work; other work finishes its task).  Its
  result is dropped.  When the fold stops (or on Ctrl-C) the pool is terminated: its
  processes are killed whatever they run.

* Worker processes are forked where the platform allows it (the worker object is inherited,
  not pickled); elsewhere they are spawned and the worker object is pickled once per process.
* Workers ignore SIGINT (:func:`gctool._signals.worker_init`): Ctrl-C (and SIGTERM/SIGHUP under
  the CLI) raises KeyboardInterrupt in the parent only, which terminates the pool it started and
  re-raises (the caller turns it into SearchInterrupted).
* Memory: tasks are small descriptors and results small summaries; each process holds one
  chunk at a time, so peak memory is about ``jobs`` times the chunk memory.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Protocol, TypeVar, runtime_checkable

import numpy as np

from gctool._signals import worker_init

T = TypeVar("T")

#: the worker of *this* pool process, set once by the pool's initializer (:func:`_init`) in each
#: child process and read by :func:`_call` for every task; never set in the parent.  It is the
#: per-process state multiprocessing offers: passing the worker with every task instead would
#: pickle it (B, decoders, kernels) once per task rather than once per process.
_WORKER: Any = None
#: in a pool process, the stop flags of its run's tasks (one byte each, 1 once the task is no
#: longer wanted: :func:`_fold` sets them), a view of the memory :func:`run_ordered` shares
#: with its processes; set by :func:`_init`
_FLAGS: np.ndarray | None = None
#: in a pool process, the stop flag of the task it runs (a one-byte view of its slot of
#: ``_FLAGS``), else None: :func:`gctool.engine.threads.halt_flag` returns it in the process's
#: main thread, so the compiled walks and the numpy routes read it as a pool thread's flag
TASK_FLAG: np.ndarray | None = None


class Worker(Protocol):
    """Anything with ``run(task) -> result`` (picklable when processes are spawned)."""

    def run(self, task: Any) -> object: ...


class Started(Protocol):
    """Tasks a runner started before their turn (:class:`StartsAhead`)."""

    def cancel(self) -> None:
        """Drop them: nothing more of them starts, and what runs stops (its results are
        dropped); a no-op once a call of the runner took them over."""


@runtime_checkable
class StartsAhead(Protocol):
    """A runner (``runner(worker, tasks, jobs, on_result)``) that can also start tasks
    before the caller asks for them: ``start(worker, tasks, jobs)`` submits the first of
    them and returns a :class:`Started` (None: not started), and a later call with the same
    worker and tasks takes over what was started, with the results a call alone would give.
    A threshold search starts its next size on a Dask session this way
    (:class:`gctool.engine.sweep.ExceedSearch`,
    :meth:`gctool.audit.distributed.DaskRunner.start`)."""

    def start(self, worker: Any, tasks: Sequence[Any], jobs: int) -> Started | None: ...

    def __call__(self, worker: Any, tasks: Sequence[Any], jobs: int,
                 on_result: Callable[[int, Any], bool]) -> None: ...


class LostTasks(Exception):  # noqa: N818 (a signal between runner and fold, never shown)
    """Raised by a runner that gave up on some tasks (their workers, scheduler or process are
    gone and none is left to run them): ``indices`` are their positions in the task list,
    ``reason`` says why and ``hint`` how to resume.  :func:`gctool.engine.sweep.run_folded`
    turns it into :class:`~gctool.errors.IncompleteRun`."""

    def __init__(self, indices: Sequence[int], reason: str, hint: str = "") -> None:
        super().__init__(reason)
        self.indices = sorted(set(indices))
        self.reason = reason
        self.hint = hint


def available_cores() -> int:
    """Cores this process may run on (the default for ``jobs``)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def resolve_jobs(jobs: int | None) -> int:
    """``None`` or 0 -> every available core; otherwise at least 1."""
    return available_cores() if not jobs else max(1, int(jobs))


class Dropped:
    """What a pool process returns for a task that was no longer wanted (its stop flag set
    before it started, or while it ran): the parent has already dropped its future."""


def _init(worker: Any, flags: Any) -> None:
    global _WORKER, _FLAGS
    worker_init()
    _WORKER = worker
    _FLAGS = np.frombuffer(flags, dtype=np.uint8)


def _call(index: int, task: Any) -> object:
    """Task ``index`` in a pool process, under its stop flag (:data:`TASK_FLAG`)."""
    global TASK_FLAG
    assert _FLAGS is not None
    flag = _FLAGS[index:index + 1]
    if flag[0]:
        return Dropped()
    TASK_FLAG = flag
    try:
        return _WORKER.run(task)
    except BaseException:  # (Cancelled: it read its flag, set, in a walk or between batches)
        if flag[0]:  # no longer wanted: dropped, whatever it raised
            return Dropped()
        raise
    finally:
        TASK_FLAG = None


def _context() -> multiprocessing.context.BaseContext:
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn")


#: below this time of the tasks left after the first (at the first one's pace, in one
#: process), :func:`run_paced` runs them in this process: a pool of forked processes costs
#: tens of milliseconds to start, and the tasks a few milliseconds each
PARALLEL_MIN_S = 0.25
#: new pools after a worker process died, before the run ends incomplete
RETRIES = 2
#: tasks submitted ahead of the fold, per process
AHEAD = 4


def run_ordered(
    worker: Worker,
    tasks: Sequence[T],
    jobs: int,
    on_result: Callable[[int, Any], bool],
) -> None:
    """Run ``worker.run`` on every task (in ``jobs`` processes) and feed the results to
    ``on_result(index, result)`` in task order; stop when it returns True."""
    if jobs <= 1 or len(tasks) <= 1:
        for i, task in enumerate(tasks):
            if on_result(i, worker.run(task)):
                return
        return
    done, broken = [0], 0  # tasks folded (updated as they are); pools lost with a process
    context = _context()
    shared = context.RawArray("B", len(tasks))  # the tasks' stop flags (every pool's)
    stops = np.frombuffer(shared, dtype=np.uint8)
    while done[0] < len(tasks):
        pool = ProcessPoolExecutor(min(jobs, len(tasks) - done[0]), mp_context=context,
                                   initializer=_init, initargs=(worker, shared))
        try:
            if _fold(pool, tasks, done, jobs, on_result, stops):
                return  # stopped by the callback
        except BrokenProcessPool:
            broken += 1
            if broken > RETRIES:
                raise LostTasks(range(done[0], len(tasks)),
                                f"a worker process died {broken} times (killed, or out of "
                                "memory)", "rerun with fewer `jobs` (less memory)") from None
        finally:
            _terminate(pool)


def ends_run(result: Any) -> bool:
    """Does a task's result end its run (a summary with a ``fail_set``: a counterexample, a
    set over the limit; results that are no summaries never do)?  Every fold stops at that
    task at the latest, so runners drop the tasks after it before the fold reaches it
    (:func:`gctool.engine.sweep.stops`)."""
    return getattr(result, "fail_set", None) is not None


def _fold(pool: ProcessPoolExecutor, tasks: Sequence[Any], done: list[int], jobs: int,
          on_result: Callable[[int, Any], bool], stops: np.ndarray) -> bool:
    """Fold the tasks from ``done[0]`` on through ``pool``, counting them in ``done[0]``;
    True when the callback stopped the run.  While it waits for the next task, a later one
    whose result ends the run (:func:`ends_run`) drops the tasks after it and ends the
    submissions there: their stop flags (``stops``, shared with the processes) are set, so
    that those a process holds end (:func:`_call`), and those not started are cancelled."""
    window: dict[int, Future[Any]] = {}
    nxt, last = done[0], len(tasks)  # tasks from ``last`` on are not wanted
    stops[done[0]:] = 0  # (a new pool: every task not folded is wanted)
    while done[0] < len(tasks):
        if done[0] >= last:  # (the fold did not stop where the result said: go on)
            stops[last:] = 0
            last = len(tasks)
        while nxt < last and nxt - done[0] < AHEAD * jobs:
            window[nxt] = pool.submit(_call, nxt, tasks[nxt])
            nxt += 1
        head = window[done[0]]
        while not head.done():
            wait([f for f in window.values() if not f.done()], return_when=FIRST_COMPLETED)
            for i, f in sorted(window.items()):
                if done[0] < i < last - 1 and f.done() and not f.cancelled() and (
                        f.exception() is None and ends_run(f.result())):
                    last = nxt = i + 1
                    stops[last:] = 1  # (before the cancel: a task it misses ends on its flag)
                    for j in [j for j in window if j > i]:
                        window.pop(j).cancel()
                    break
        result = window.pop(done[0]).result()
        if isinstance(result, Dropped):  # (never: only tasks after ``last`` are dropped)
            raise RuntimeError(f"task {done[0]} was dropped, and the fold asked for it")
        done[0] += 1
        if on_result(done[0] - 1, result):
            return True
    return False


def _terminate(pool: ProcessPoolExecutor) -> None:
    """Stop ``pool`` now: pending tasks cancelled, running ones killed (early stop, Ctrl-C)."""
    procs = dict(getattr(pool, "_processes", None) or {})  # (the executor has no public way)
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in procs.values():  # SIGKILL: a worker forked while its parent ignored SIGTERM
        with contextlib.suppress(Exception):  # ignores it until worker_init runs, then waits
            proc.kill()  # on the call queue forever, and the parent's exit waits for it
    for proc in procs.values():
        with contextlib.suppress(Exception):
            proc.join(5)


def run_paced(
    worker: Worker,
    tasks: Sequence[T],
    jobs: int,
    on_result: Callable[[int, Any], bool],
) -> None:
    """:func:`run_ordered`, with the first task run in this process and timed: the others go
    to ``jobs`` processes only when, at that pace, they would take :data:`PARALLEL_MIN_S` or
    more in one (so a search of a fraction of a second never waits for processes to start).
    Same results in the same order either way."""
    if jobs <= 1 or len(tasks) <= 1:
        run_ordered(worker, tasks, 1, on_result)
        return
    t0 = time.perf_counter()
    first = worker.run(tasks[0])
    if on_result(0, first):
        return
    rest = tasks[1:]
    if (time.perf_counter() - t0) * len(rest) < PARALLEL_MIN_S:
        jobs = 1

    def shifted(i: int, result: Any) -> bool:
        return on_result(i + 1, result)

    try:
        run_ordered(worker, rest, jobs, shifted)
    except Exception as exc:
        if isinstance(exc, LostTasks):  # positions in ``tasks``, not in ``rest``
            raise LostTasks([i + 1 for i in exc.indices], exc.reason, exc.hint) from None
        raise
