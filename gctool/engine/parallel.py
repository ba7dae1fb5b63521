"""Ordered parallel evaluation of independent tasks over worker processes.

:func:`run_ordered` applies ``worker.run`` to every task and hands the results to a callback
*in task order*, whatever the number of processes, so a run with ``jobs = 1`` and one with
``jobs = 8`` see the same sequence of results: merged verdicts, counterexamples and
diagnostics are identical.  The callback returns True to stop early; the remaining tasks are
then cancelled (the pool is terminated).

* Worker processes are forked where the platform allows it (the worker object is inherited,
  not pickled); elsewhere they are spawned and the worker object is pickled once per process.
* Workers ignore SIGINT (:func:`gctool._signals.worker_init`): Ctrl-C (and SIGTERM/SIGHUP under
  the CLI) raises KeyboardInterrupt in the parent only, which terminates the pool it started and
  re-raises (the caller turns it into SearchInterrupted).
* Memory: tasks are small descriptors and results small summaries; each process holds one
  chunk at a time, so peak memory is about ``jobs`` times the chunk memory.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar

from gctool._signals import worker_init

T = TypeVar("T")

#: the worker of *this* pool process, set once by the pool's initializer (:func:`_init`) in each
#: child process and read by :func:`_call` for every task; never set in the parent.  It is the
#: per-process state multiprocessing offers: passing the worker with every task instead would
#: pickle it (B, decoders, kernels) once per task rather than once per process.
_WORKER: Any = None


class Worker(Protocol):
    """Anything with ``run(task) -> result`` (picklable when processes are spawned)."""

    def run(self, task: Any) -> object: ...


def available_cores() -> int:
    """Cores this process may run on (the default for ``--jobs``)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def resolve_jobs(jobs: int | None) -> int:
    """``None`` or 0 -> every available core; otherwise at least 1."""
    return available_cores() if not jobs else max(1, int(jobs))


def _init(worker: Any) -> None:
    global _WORKER
    worker_init()
    _WORKER = worker


def _call(task: Any) -> object:
    return _WORKER.run(task)


def _context() -> multiprocessing.context.BaseContext:
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn")


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
    pool = _context().Pool(min(jobs, len(tasks)), initializer=_init, initargs=(worker,))
    try:
        for i, result in enumerate(pool.imap(_call, tasks, chunksize=1)):
            if on_result(i, result):
                return
    finally:
        pool.terminate()
        pool.join()
