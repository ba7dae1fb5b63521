"""BLAS thread pinning for the command line.

gctool's dense linear algebra is many small factorisations (straggler sets, batched SVDs), and
its parallelism is processes or threads (``--jobs``).  Multi-threaded OpenBLAS/MKL on top of
that, on a loaded machine, makes small SVDs many times slower, so the CLI starts BLAS with
``GCTOOL_BLAS_THREADS`` threads (default 1) unless ``OPENBLAS_NUM_THREADS``,
``OMP_NUM_THREADS``, ``MKL_NUM_THREADS`` or ``BLIS_NUM_THREADS`` is already set (then that
setting wins).  The variables must be set before numpy loads BLAS, which is why this happens at
CLI start; library users set them in their own environment.

The compiled audit walks run ``--jobs`` in threads
(:func:`gctool.engine.threads.run_threads`); :class:`TaskOrder` keeps the work charged to a
run-wide budget in task order there."""

from __future__ import annotations

import os
import threading
from collections.abc import MutableMapping

ENV = "GCTOOL_BLAS_THREADS"
BLAS_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS")


def pin_blas_threads(environ: MutableMapping[str, str] | None = None) -> None:
    """Set every BLAS thread variable that is not set already to ``GCTOOL_BLAS_THREADS``
    (default 1; a value that is not a positive integer counts as 1)."""
    env = os.environ if environ is None else environ
    value = env.get(ENV, "1").strip()
    if not (value.isdigit() and int(value) >= 1):
        value = "1"
    for name in BLAS_VARS:
        env.setdefault(name, value)


# -- task order for the threads of a pool --------------------------------------------------------
class Cancelled(BaseException):
    """Raised in a pool thread waiting for its turn when the run stops (never reaches a caller:
    the pool discards that task)."""


class TaskOrder:
    """The order of a thread pool's tasks for the work whose *total* is budgeted: task i's turn
    comes once tasks 0..i-1 have been folded by the caller, so such work is charged in task
    order, exactly as one thread would charge it (a run that stops does not charge later
    tasks)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self.folded = 0
        self.stopped = False

    def wait(self, index: int) -> None:
        with self._cond:
            while self.folded < index and not self.stopped:
                self._cond.wait()
            if self.stopped:
                raise Cancelled

    def advance(self, folded: int) -> None:
        with self._cond:
            self.folded = folded
            self._cond.notify_all()

    def stop(self) -> None:
        with self._cond:
            self.stopped = True
            self._cond.notify_all()


_current = threading.local()


def set_task(order: TaskOrder | None, index: int = 0) -> None:
    """Record the task this pool thread runs (None: none)."""
    _current.task = None if order is None else (order, index)


def in_task_order() -> None:
    """Wait, in a pool thread, until every earlier task has been folded (elsewhere: return at
    once).  Called before charging a budget shared by the whole run."""
    task = getattr(_current, "task", None)
    if task is not None:
        task[0].wait(task[1])
