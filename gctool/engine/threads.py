"""Ordered evaluation of independent tasks in threads of this process.

:func:`run_threads` has the signature and the guarantees of
:func:`gctool.engine.parallel.run_ordered` (results handed to the callback in task order, the
same for any number of jobs; the callback stops the run by returning True), for workers whose
tasks spend their time in compiled code that releases the GIL (the compiled audit walks of
:mod:`gctool.audit.kernels`): the threads share the loaded kernels, so there is nothing to start
or to load again, and it pays off on runs of a fraction of a second.  Any other worker would run
one task at a time; those keep the process pool.

* The threads run at most :data:`AHEAD` tasks each ahead of the fold: on an early stop the
  later ones never start, and the running ones end at their compiled walk's next check of
  its stop flag (:func:`halt_flag`), or a numpy route at its next batch (attack's oracles,
  verify's kernel, an encoded frame's spectra: :data:`HALT_BATCH_NS`; other work finishes
  its task).  A task whose result
  ends the run (:func:`gctool.engine.sweep.stops`: a counterexample) stops the tasks after
  it at once, before the fold reaches it (:meth:`TaskOrder.cut`), and so does one that
  raises (a refusal over the budget, an error); those before it still run, so the result
  is the one of a single thread.
* Work charged to a run-wide budget waits for its turn (:func:`in_task_order`):
  task i charges once tasks 0..i-1 are folded, so the budget runs out at the same set as with
  one job, and a run that stops charges nothing after the stopping task.
* The caller's thread is one of the ``jobs`` threads: it runs tasks with ``jobs - 1``
  others, so no thread is woken to start the pool's work in its place and none to end it
  (each wake-up waits for a core, long on a shared host).  The callback runs in the pool's
  threads: the thread whose result is the next in order folds it, and the results after it
  that have come back (:meth:`_Threads.fold`), one thread at a time; once no task is left
  the caller waits for the end of the fold.  A caller woken per result would be a third
  thread on two cores, and the pool would wait for it whenever it is not scheduled (with
  other processes on the cores: tens of milliseconds in a run of 0.6 s).
* An exception in a task or in the callback is raised in the caller at that task's place in
  the order, once the running tasks have finished.
* Signals reach the caller's (main) thread only: an interrupt there stops the run and waits at
  most :data:`ABANDON_S` for the running tasks (the threads are daemons; the compiled tasks are
  a few milliseconds each).  A compiled walk of a task the caller runs ends on the signal as
  the main thread's walks do (:data:`gctool._signals.TASK_FLAGS`: the watcher sets its
  flag), and its interrupt is raised in the caller.
* The threads outlive their pool: idle, they wait for the next pool's work
  (:class:`Carrier`), so a run of a fraction of a second does not pay for starting threads
  (a forked child starts its own).
"""

from __future__ import annotations

import functools
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from gctool import _signals
from gctool.engine import parallel
from gctool.engine.parallel import Worker, ends_run, run_ordered

T = TypeVar("T")

class Cancelled(BaseException):
    """Raised in a pool thread waiting for its turn when the run stops (never reaches a caller:
    the pool discards that task)."""


class TaskOrder:
    """The order of a thread pool's tasks for the work whose *total* is budgeted: task i's turn
    comes once tasks 0..i-1 have been folded by the caller, so such work is charged in task
    order, exactly as one thread would charge it (a run that stops does not charge later
    tasks)."""

    def __init__(self, held: bool = False) -> None:
        self._cond = threading.Condition()
        self.folded = 0
        self.stopped = False
        #: set to 1 with ``stopped``: the compiled walks of the run's tasks read it
        #: (:func:`halt_flag`)
        self.halt = np.zeros(1, dtype=np.uint8)
        self.held = held  # no task's turn yet (a pool started ahead, :class:`Ahead`)
        #: the first task whose result ends the run (:meth:`cut`): later ones are not wanted
        self.last: int | None = None
        #: the stop flags of the running tasks, by index (:meth:`flag`)
        self.flags: dict[int, np.ndarray] = {}

    def wanted(self, index: int) -> bool:
        """Is task ``index`` still wanted (the run not stopped, no result before it ending
        it)?  Under the lock."""
        return not self.stopped and (self.last is None or index <= self.last)

    def wait(self, index: int) -> None:
        with self._cond:
            while (self.held or self.folded < index) and self.wanted(index):
                self._cond.wait()
            if not self.wanted(index):
                raise Cancelled

    def flag(self, index: int) -> np.ndarray:
        """The stop flag of task ``index`` (set now if it is no longer wanted), which its
        compiled walks read (:func:`halt_flag`) until :meth:`unflag`."""
        with self._cond:
            flag = np.zeros(1, dtype=np.uint8)
            flag[0] = not self.wanted(index)
            self.flags[index] = flag
            return flag

    def unflag(self, index: int) -> None:
        with self._cond:
            self.flags.pop(index, None)

    def cut(self, index: int) -> None:
        """Task ``index``'s result ends the run (:func:`gctool.engine.sweep.stops`: a
        counterexample, a set over the limit): the fold stops there at the latest, so the
        tasks after it are not wanted: the running ones stop (their flags are set), the others
        never start.  Those before it still run (an earlier one may end the run first: the
        result is the one a single thread gives)."""
        with self._cond:
            if self.last is not None and self.last <= index:
                return
            self.last = index
            for i, flag in self.flags.items():
                if i > index:
                    flag[0] = 1
            self._cond.notify_all()

    def release(self) -> None:
        with self._cond:
            self.held = False
            self._cond.notify_all()

    def advance(self, folded: int) -> None:
        with self._cond:
            self.folded = folded
            self._cond.notify_all()

    def stop(self) -> None:
        with self._cond:
            self.stopped = True
            self.halt[0] = 1
            for flag in self.flags.values():
                flag[0] = 1
            self._cond.notify_all()


_current = threading.local()


def set_task(order: TaskOrder | None, index: int = 0) -> None:
    """Record the task this pool thread runs (None: none), with its stop flag."""
    task = getattr(_current, "task", None)
    if task is not None:
        task[0].unflag(task[1])
    _current.task = None if order is None else (order, index, order.flag(index))
    if threading.current_thread() is threading.main_thread():  # the caller's task (run_threads)
        _signals.TASK_FLAGS[:] = [] if order is None else [_current.task[2]]


#: the flag of a walk outside any pool, in a thread other than the main one: never set
_NEVER = np.zeros(1, dtype=np.uint8)
#: the flag of a walk of the main thread outside any pool: set while a signal is on its way
#: to its handler (:data:`gctool._signals.PENDING`, which this array views)
_MAIN = np.frombuffer(_signals.PENDING, dtype=np.uint8)


def halt_flag() -> np.ndarray:
    """The stop flag of the run whose task this pool thread runs (one element, 1 once the run
    has stopped: an early stop, an error, a pool started ahead and dropped); in the main
    thread of a process of :func:`gctool.engine.parallel.run_ordered`, the one of the task it
    runs (:data:`gctool.engine.parallel.TASK_FLAG`, in memory the parent shares: 1 once the
    task is no longer wanted); in the main thread, outside a pool, the one a signal sets
    while its handler waits for the main thread (Python runs it between bytecodes only:
    :mod:`gctool._signals`); elsewhere one that is never set.  A compiled walk reads it
    every few thousand sets and ends, and its caller raises (:func:`raise_if_halted`): the
    task's result would be dropped, and a dropped task of 65,536 sets takes a second or
    more."""
    task = getattr(_current, "task", None)
    if task is not None:
        return task[2]
    if threading.current_thread() is not threading.main_thread():
        return _NEVER
    return _MAIN if parallel.TASK_FLAG is None else parallel.TASK_FLAG


#: the estimated work of a batch of a numpy route between two reads of its task's stop flag
#: (verify's compensated residual and QR certificate, an encoded frame's spectra), in ns: a
#: stopped run's task ends within about that much of it
HALT_BATCH_NS = 20_000_000


def raise_if_halted(flag: np.ndarray) -> None:
    """After a compiled walk that read ``flag`` (:func:`halt_flag`): when it is set (the walk
    may have ended early; its results are not to be read), raise the signal's interrupt (the
    main thread's flag: :func:`gctool._signals.raise_pending`), else :class:`Cancelled` (also
    in a pool process, whose main thread has no signal pending: its task's flag was set)."""
    if flag[0]:
        if flag is _MAIN or threading.current_thread() is threading.main_thread():
            _signals.raise_pending()  # (a task of the caller: its flag is set by a signal too)
        raise Cancelled


def ends_run_here() -> None:
    """In a pool thread: the running task's result will end its run (its kernel has found a
    counterexample and only summarises the sets up to it): the tasks after it stop now
    (:meth:`TaskOrder.cut`) instead of when the result comes back.  Elsewhere nothing."""
    task = getattr(_current, "task", None)
    if task is not None:
        task[0].cut(task[1])


def in_pool_task() -> bool:
    """Does this thread run a task of a pool (:func:`run_threads`, :class:`Ahead`)?"""
    return getattr(_current, "task", None) is not None


def in_task_order() -> None:
    """Wait, in a pool thread, until every earlier task has been folded (elsewhere: return at
    once).  Called before charging a budget shared by the whole run."""
    task = getattr(_current, "task", None)
    if task is not None:
        task[0].wait(task[1])


@dataclass
class PoolTimes:
    """Where the threads' time went, summed over the pools run since :meth:`reset` (read by
    ``benchmarks/bench_scaling.py``): a pool's capacity is the time each of its threads held
    a core for it, from the pool's start (or, for a pool that follows another,
    :class:`Ahead`, from the moment the thread took over a core of that pool) to the pool's
    end (or, for a pool that another follows, to the moment the thread found no task left
    and handed its core on); ``busy`` the time its threads spent in tasks, ``start`` the time
    before each thread's first task and ``tail`` the time after each thread's last one (idle
    at the start and the end of the pool); ``tasks`` the tasks the pools' threads started."""

    pools: int = 0
    tasks: int = 0
    #: CPU seconds of the folds run in the pools' threads (:meth:`_Threads.fold`: serial
    #: work, as the caller's)
    fold: float = 0.0
    #: CPU seconds of the tasks run in the callers' threads (:func:`run_threads`: parallel
    #: work, not the caller's serial part)
    caller_tasks: float = 0.0
    capacity: float = 0.0
    busy: float = 0.0
    start: float = 0.0
    tail: float = 0.0

    def reset(self) -> None:
        self.pools, self.tasks, self.fold, self.caller_tasks = 0, 0, 0.0, 0.0
        self.capacity, self.busy, self.start, self.tail = 0.0, 0.0, 0.0, 0.0

    @property
    def idle(self) -> float:
        """The share of the capacity not spent in tasks."""
        return 1.0 - self.busy / self.capacity if self.capacity > 0 else 0.0


#: the pools' times in this process (a few clock reads per task)
TIMES = PoolTimes()

#: tasks a pool may run ahead of the fold, per thread
AHEAD = 2
#: after an interrupt or an error in the caller, how long the running tasks are waited for
ABANDON_S = 0.5


class Carrier:
    """A daemon thread that runs one job after another (:meth:`start`), idle in between: the
    threads of the pools are carriers taken from those left idle by earlier pools, so a pool
    starts in microseconds instead of the time a new thread takes to be scheduled."""

    _idle: list[Carrier] = []
    _lock = threading.Lock()

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._job: tuple[Callable[[], None], threading.Event] | None = None
        self._thread = threading.Thread(target=self._loop, name="gctool-job", daemon=True)
        self._thread.start()

    @classmethod
    def start(cls, job: Callable[[], None], name: str) -> threading.Event:
        """Run ``job`` in an idle carrier (a new one when none is idle), named ``name``;
        the event is set when it has ended (and the carrier is idle again)."""
        with cls._lock:
            carrier = cls._idle.pop() if cls._idle else None
        if carrier is None:
            carrier = cls()
        done = threading.Event()
        with carrier._cond:
            carrier._thread.name = name
            carrier._job = (job, done)
            carrier._cond.notify()
        return done

    @classmethod
    def _idle_idents(cls) -> list[int]:
        """The thread idents of the idle carriers (tests)."""
        with cls._lock:
            return [c._thread.ident or 0 for c in cls._idle]

    def _loop(self) -> None:
        while True:
            with self._cond:
                while self._job is None:
                    self._cond.wait()
                (job, done), self._job = self._job, None
            try:
                job()
            except BaseException:  # a job reports its own errors; the carrier stays
                pass
            self._thread.name = "gctool-job"
            with Carrier._lock:
                Carrier._idle.append(self)
            done.set()  # idle first: the next pool of the caller finds it


def _forked() -> None:
    """In a forked child: the parent's carriers are not there (and the lock may have been
    held by one of them)."""
    Carrier._idle, Carrier._lock = [], threading.Lock()


os.register_at_fork(after_in_child=_forked)


class _Threads:
    """The state of one :func:`run_threads`: tasks handed out in order, results by index."""

    def __init__(self, worker: Worker, tasks: Sequence[Any], jobs: int,
                 ahead: int | None = None, held: bool = False,
                 after: _Threads | None = None, caller: bool = False) -> None:
        self.worker, self.tasks = worker, tasks
        #: the caller runs tasks as thread 0 (:meth:`run_caller`), so ``jobs - 1`` are started
        self.caller = caller
        self.caller_cpu = 0.0  # CPU seconds of the caller's tasks (TIMES.caller_tasks)
        self.cond = threading.Condition()
        #: the caller waits on this one (the same lock) until the fold is over (:meth:`wait`)
        self.over = threading.Condition(self.cond._lock)  # type: ignore[attr-defined]
        #: the fold (:meth:`fold`): its callback (None until the caller gives it), the next
        #: task to fold, whether it has ended (every task folded, a result that stops the
        #: run, an error: ``error``, raised in the caller) or been abandoned by the caller
        self.on_result: Callable[[int, Any], bool] | None = None
        self.fold_lock = threading.Lock()
        self.fold_next = 0
        self.fold_over = False
        self.abandoned = False
        self.error: BaseException | None = None
        self.fold_cpu = 0.0  # CPU seconds of the folds in this pool's threads (TIMES.fold)
        self.order = TaskOrder(held)
        self.next = 0
        self.ahead = AHEAD * jobs if ahead is None else ahead
        self.results: dict[int, tuple[bool, Any]] = {}
        self.jobs = jobs
        self.threads: list[threading.Event] = []  # set when each thread's loop has ended
        self.began = time.perf_counter()
        #: per thread that ran: when it got its core, first task, last task, busy, loop left
        self.spans: list[tuple[float, float, float, float, float]] = []
        self.recorded = False  # in TIMES
        #: the pool whose cores this one takes over, one per thread of it that finds no task
        #: left (:meth:`_gate`), and whether another pool takes over this one's
        self.after, self.followed = after, False
        self.left = 0  # threads whose loop has ended
        if after is not None:
            with after.cond:
                after.followed = True

    def start(self) -> None:
        """Start the pool's threads (idle carriers first), all but the caller's."""
        self.threads = [Carrier.start(functools.partial(self._loop, j), f"gctool-job-{j}")
                        for j in range(1 if self.caller else 0, self.jobs)]

    def run_caller(self) -> None:
        """The caller's share of the tasks (thread 0 of a pool started with ``caller``): it
        runs tasks until none is left, folding as the others do; an interrupt leaves at once
        (raised here, not at its task's place)."""
        self._loop(0, caller=True)

    def _take(self) -> int | None:
        with self.cond:
            while not self._none_left() and self.next >= self.order.folded + self.ahead:
                self.cond.wait()
            if self._none_left():
                return None
            self.next += 1
            if self.next == len(self.tasks) and self.followed:
                self.cond.notify_all()  # (the pool that follows may start)
            return self.next - 1

    def _none_left(self) -> bool:
        """No task is left to hand out (under ``cond``): every one handed out, the fold over,
        or the next one not wanted (the run stopped, or cut before it)."""
        return (self.fold_over or self.next >= len(self.tasks)
                or not self.order.wanted(self.next))

    def _gate(self, j: int) -> float | None:
        """For thread ``j`` of a pool that follows another (``after``): wait until that pool
        has no task left to hand out (:meth:`_none_left`: also when it was stopped or cut
        before it handed out every one) and one of its threads has left (or it has fewer
        threads than this one); when it may start (None: this pool was stopped first).  The
        pools of consecutive sizes of a threshold search run so on ``jobs`` cores as one pool
        would, each thread going on to the next size when the size before has no task left."""
        before = self.after
        if before is None:
            return self.began
        spare = max(0, self.jobs - before.jobs)  # cores the pool before does not hold
        with before.cond:
            while not self.order.stopped and not (
                    before._none_left() and j < before.left + spare):
                before.cond.wait()
        return None if self.order.stopped else time.perf_counter()

    def _loop(self, j: int, caller: bool = False) -> None:
        first = last = -1.0
        busy = 0.0
        got = self._gate(j)
        if got is None:
            self._leave()  # (stopped at its gate: it has left too)
            return
        try:
            while (i := self._take()) is not None:
                set_task(self.order, i)
                t0, c0 = time.perf_counter(), time.thread_time() if caller else 0.0
                first = t0 if first < 0 else first
                try:
                    out: tuple[bool, Any] = (True, self.worker.run(self.tasks[i]))
                    if ends_run(out[1]):
                        self.order.cut(i)
                except Cancelled:
                    return
                except BaseException as exc:  # raised in the caller, at this task's place
                    if caller and isinstance(exc, KeyboardInterrupt):
                        raise  # (an interrupt of the caller: the run stops now)
                    out = (False, exc)
                    self.order.cut(i)  # (the fold ends there at the latest, as with a result
                    # that ends the run: a refusal over the budget, an error)
                finally:
                    set_task(None)
                    last = time.perf_counter()
                    busy += last - t0
                    if caller:
                        self.caller_cpu += time.thread_time() - c0
                with self.cond:
                    self.results[i] = out
                if i == self.fold_next:  # (read without the lock: fold() checks again)
                    self.fold(caller=caller)
        finally:
            self._leave((got, first, last, busy, time.perf_counter()))

    def _leave(self, span: tuple[float, float, float, float, float] | None = None) -> None:
        """A thread's loop has ended (``span``: its times, when it got its core): a pool that
        follows waits for this pool's threads to leave (:meth:`_gate`)."""
        with self.cond:
            if span is not None:
                self.spans.append(span)
            self.left += 1
            if self.followed:
                self.cond.notify_all()

    def fold(self, caller: bool = False) -> None:
        """Hand the results that have come back, from the next one to fold on, to the fold's
        callback in task order, then let the pool run that much further (:data:`AHEAD`):
        called by the thread whose result is the next one (and by the caller when it gives
        the callback), so that the fold never waits for a thread to be scheduled (the
        caller's thread would be a third one on two cores, woken per result).  One thread
        folds at a time; a thread that finds another folding leaves its result to it (the
        folding thread looks again before it leaves).  The callback runs in a pool thread
        with no task of its own (:func:`in_task_order` returns at once there).  ``caller``:
        called by the caller (its CPU time is the caller's, not counted in TIMES.fold)."""
        while self.fold_lock.acquire(blocking=False):
            c0 = time.thread_time()
            try:
                self._fold_ready()
            finally:
                if not caller:
                    self.fold_cpu += time.thread_time() - c0  # (under the fold's lock)
                self.fold_lock.release()
            with self.cond:  # a result that came back while this thread folded
                if (self.fold_over or self.abandoned or self.on_result is None
                        or self.fold_next not in self.results):
                    return

    def _fold_ready(self) -> None:
        on_result, i, end = self.on_result, self.fold_next, None
        if on_result is None:
            return
        try:
            while not (self.fold_over or self.abandoned):
                with self.cond:
                    item = self.results.pop(i, None)
                if item is None:
                    break
                ok, value = item
                if not ok:
                    raise value
                if on_result(i, value):
                    end = True
                    break
                i += 1
                if i == len(self.tasks):
                    end = True
                    break
        except BaseException as exc:  # raised in the caller, at this task's place
            self.error, end = exc, True
        with self.cond:
            self.fold_next = i
            if end:
                self.fold_over = True
                self.over.notify_all()
                # (and the threads waiting for the window, the caller's among them: no fold
                # wakes them again, and the caller is the one that stops the pool)
                self.cond.notify_all()
        if end:
            self.order.stop()  # (the fold is over: no task after it is wanted)
        else:
            self.folded(i)

    def wait(self) -> None:
        """Wait until the fold is over (timed waits: an interrupt reaches the caller at
        once); a fold that waits for a task after the one whose result was to end the run
        (which never starts) is an error."""
        with self.cond:
            while not self.fold_over:
                last, i = self.order.last, self.fold_next
                if last is not None and i > last and not self.order.stopped:
                    raise RuntimeError(f"task {last}'s result was to end the run, and the "
                                       f"fold asked for task {i}")  # (never started)
                self.over.wait(0.1)

    def abandon(self) -> None:
        """The caller leaves (an interrupt): no result is folded from now on, and a fold
        under way has ended when this returns (the caller may read the fold's state), unless
        another interrupt cuts the wait short."""
        with self.cond:
            self.abandoned = True
        if self.fold_lock.acquire(timeout=ABANDON_S):
            self.fold_lock.release()

    def folded(self, count: int) -> None:
        self.order.advance(count)
        with self.cond:
            self.cond.notify_all()

    def stop(self, wait: float | None) -> None:
        self.order.stop()
        with self.cond:
            self.cond.notify_all()
        if self.after is not None:  # threads waiting for their core (:meth:`_gate`)
            with self.after.cond:
                self.after.cond.notify_all()
        deadline = None if wait is None else time.monotonic() + wait
        for t in list(self.threads):
            t.wait(None if deadline is None else max(0.0, deadline - time.monotonic()))
        self._record()

    def _record(self) -> None:
        end = time.perf_counter()
        with self.cond:
            if self.recorded:  # stopped again (an Ahead folded, then cancelled)
                return
            self.recorded = True
            spans = list(self.spans)
        TIMES.pools += 1
        TIMES.tasks += self.next
        TIMES.fold += self.fold_cpu
        TIMES.caller_tasks += self.caller_cpu
        for got, first, last, busy, left in spans:
            until = left if self.followed else end  # its core handed on, or the pool's end
            TIMES.capacity += until - got
            TIMES.busy += busy
            TIMES.start += (first if first >= 0 else until) - got
            TIMES.tail += until - (last if last >= 0 else until)


def run_threads(
    worker: Worker,
    tasks: Sequence[T],
    jobs: int,
    on_result: Callable[[int, Any], bool],
) -> None:
    """:func:`gctool.engine.parallel.run_ordered` in ``jobs`` threads of this process: the
    caller's and ``jobs - 1`` others."""
    if jobs <= 1 or len(tasks) <= 1:
        run_ordered(worker, tasks, 1, on_result)
        return
    # (a caller that runs a task of another pool keeps that task's record: it only folds)
    pool = _Threads(worker, tasks, min(jobs, len(tasks)), caller=not in_pool_task())
    pool.start()
    _fold(pool, on_result)


def _fold(pool: _Threads, on_result: Callable[[int, Any], bool]) -> None:
    """Hand the pool's results to ``on_result`` in task order (:meth:`_Threads.fold`: in the
    pool's threads as they come back, those already back here), the caller running its share
    of the tasks first when it is one of the pool's threads, then stop the pool; raise in the
    caller what a task or the fold raised."""
    try:
        with pool.cond:
            pool.on_result = on_result
        pool.fold(caller=True)
        if pool.caller:
            pool.run_caller()
        pool.wait()
    except BaseException as exc:  # an interrupt waits briefly, anything else for every task
        pool.abandon()
        pool.stop(ABANDON_S if isinstance(exc, KeyboardInterrupt) else None)
        raise
    pool.stop(None)
    if pool.error is not None:
        raise pool.error


class Ahead:
    """Tasks started before their turn: ``jobs`` threads run all of them (no window) while the
    caller still works on what comes first, such as the sizes of a threshold search that run
    in the caller's thread, or the size before, in threads: with ``after`` (the Ahead of
    that size) each thread starts when one of ``after``'s finds no task left, so that the
    two run on ``jobs`` cores as one pool would, and at most the window of
    :func:`run_threads` of tasks run before the fold takes them.  Work charged to the run's
    budget waits (:func:`in_task_order`) until :meth:`run` folds the results, with the
    window of :func:`run_threads` from then on; :meth:`cancel` drops them (the running tasks
    finish, no other starts).  The worker must not share state with the caller's work."""

    def __init__(self, worker: Worker, tasks: Sequence[Any], jobs: int,
                 after: Ahead | None = None) -> None:
        jobs = max(1, min(jobs, len(tasks)))  # (behind another pool: run_threads' window)
        self.pool: _Threads = _Threads(worker, tasks, jobs,
                                       ahead=len(tasks) if after is None else None, held=True,
                                       after=None if after is None else after.pool)
        self.pool.start()

    @property
    def tasks(self) -> Sequence[Any]:
        return self.pool.tasks

    def run(self, worker: Worker, tasks: Sequence[Any], jobs: int,
            on_result: Callable[[int, Any], bool]) -> None:
        """A runner (the signature of :func:`run_threads`) of these very tasks, whose results
        are those ``worker`` gives (the pool's worker computes the same)."""
        if list(tasks) != list(self.pool.tasks):
            self.cancel()
            raise ValueError("the tasks started ahead are not these")
        with self.pool.cond:  # folded from now on: run_threads' window (an early stop
            self.pool.ahead = AHEAD * self.pool.jobs  # leaves few tasks started after it)
        self.pool.order.release()
        _fold(self.pool, on_result)

    def cancel(self) -> None:
        """Stop: no other task starts, the running ones finish (a Ctrl-C while they finish
        is raised once they have)."""
        interrupted = False
        while True:
            try:
                self.pool.stop(None)
                break
            except KeyboardInterrupt:
                interrupted = True
        if interrupted:
            raise KeyboardInterrupt
