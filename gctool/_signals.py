"""Termination signals and worker processes (the library side; the CLI installs the handlers).

Under the CLI (:func:`handled`) SIGINT, SIGTERM and SIGHUP share one handler: the first of them
raises :class:`~gctool.errors.Terminated`, a :class:`KeyboardInterrupt`, so every search stops
with its summary, every temporary output file is removed (``gctool._files.atomic_stream``) and
every worker pool is shut down by the code that already handles Ctrl-C.  :func:`received` tells
the CLI which signal ended the run, so it can exit 130 (SIGINT), 129 (SIGHUP) or 143 (SIGTERM).

* Later signals (Ctrl-C pressed twice, SIGTERM after SIGINT) are recorded but raise nothing:
  the cleanup of the first one finishes, and the exit code is the first signal's.
* The exception is a subclass, never a plain KeyboardInterrupt: CPython (3.11, 3.12) marks the
  process for "exit by SIGINT" whenever a plain KeyboardInterrupt leaves code run by
  ``exec``/``eval`` of a string (numba's generated code, ``namedtuple``, ...), and then kills
  itself with SIGINT at exit instead of exiting 130, even after the CLI handled the interrupt.
* An interrupt that Python swallows (raised inside a fork hook, a ctypes callback of the
  compiler or a ``__del__``: "Exception ignored in ...") is delivered again to the main thread
  instead of being lost with a traceback on stderr.
* :func:`checkpoint` (called between the batches of every search) raises an interrupt again
  when a library swallowed it without a trace (a bare ``except``).
* :func:`settle`: once the outcome is known, signals raise nothing (the outcome is reported as
  it is); :func:`ending`: before the process exits they are ignored, so a late Ctrl-C cannot
  kill it (Python restores the default actions while finalizing, which would exit -2).
* Python runs the handler between bytecodes of the main thread only, so a compiled loop there
  (a walk of the audit kernels: a pilot, a budget probe, a task of one job; the simulator's
  rounds) would delay it until the loop returns.  While the handlers are installed, the
  signal's wake-up byte (``signal.set_wakeup_fd``) reaches a watcher thread at once, which
  sets :data:`PENDING` when the handler will raise: the compiled loops of the main thread read
  it (:func:`gctool.engine.threads.halt_flag`) and end, and :func:`raise_pending` raises the
  interrupt in place of their incomplete result.

Worker processes call :func:`worker_init` first: they ignore SIGINT (the parent decides), die
quietly on SIGTERM/SIGHUP (no traceback from a pool that is being torn down), and on Linux ask
the kernel to kill them when the parent dies (a SIGKILLed parent leaves no orphans).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from gctool.errors import Terminated

#: signals handled like Ctrl-C by the CLI
HANDLED = ("SIGINT", "SIGTERM", "SIGHUP")
_received: list[int] = []
_raised: list[int] = []  # the signal whose exception is on its way (at most one)
#: the signal number while a handled signal is on its way to the main thread and its handler
#: will raise (set by the watcher thread, cleared by the handler), else 0: the stop flag of the
#: main thread's compiled loops (as a numpy view: :func:`gctool.engine.threads.halt_flag`)
PENDING = bytearray(1)
#: the stop flags (one-element arrays) of the pool task the main thread runs, if any
#: (:func:`gctool.engine.threads.set_task`): set with :data:`PENDING`, so its compiled walk ends
TASK_FLAGS: list[Any] = []
_pipe: list[int] = []  # the watched pipe (read end, write end) while there is one


def received() -> int | None:
    """The first termination signal received under :func:`handled` (None: none)."""
    return _received[0] if _received else None


def _signals() -> list[signal.Signals]:
    return [s for s in (getattr(signal, name, None) for name in HANDLED) if s is not None]


def _handler(signum: int, frame: Any) -> None:
    if not _received:
        _received.append(signum)
    if not _raised:  # later signals: let the cleanup of the first one finish
        _raised.append(signum)
        PENDING[0] = 0  # (after _raised: see _watch)
        raise Terminated(_received[0])


def _watch(fd: int) -> None:
    """The watcher thread: reads the wake-up bytes (one signal number each) until the write end
    is closed, and sets :data:`PENDING` for a handled signal whose handler will raise."""
    try:
        while data := os.read(fd, 64):
            for signum in data:
                if signum in _numbers() and not _raised:
                    PENDING[0] = signum
                    for flag in list(TASK_FLAGS):
                        flag[0] = 1
                    if _raised:  # the handler ran meanwhile (it clears PENDING after _raised)
                        PENDING[0] = 0
    except OSError:  # pragma: no cover - the descriptor went away
        pass
    finally:
        os.close(fd)


def _numbers() -> set[int]:
    """The handled signals whose handler is this module's now."""
    return {int(s) for s in _signals() if signal.getsignal(s) is _handler}


def raise_pending() -> None:
    """In the main thread, after a compiled loop that read :data:`PENDING` and may have ended
    early: raise the interrupt now when one is on its way (its handler has not raised yet: it
    will then raise nothing), or again when a library swallowed it (:func:`checkpoint`)."""
    signum = PENDING[0]
    PENDING[0] = 0
    if signum and not _raised:
        _raised.append(signum)  # (a handler that runs now raises first, or nothing after)
        if not _received:
            _received.append(signum)
        raise Terminated(_received[0])
    checkpoint()


@contextmanager
def _watched() -> Iterator[None]:
    """Watch the wake-up bytes of signals for the block (see the module docs); nothing when
    another part of the process has its own wake-up descriptor (an event loop)."""
    import threading

    r, w = os.pipe()
    os.set_blocking(w, False)
    try:
        old = signal.set_wakeup_fd(w, warn_on_full_buffer=False)
    except ValueError:  # not the main thread
        old = None
    if old is None or old != -1:
        if old is not None:
            signal.set_wakeup_fd(old)
        os.close(r)
        os.close(w)
        yield
        return
    PENDING[0] = 0
    _pipe[:] = [r, w]
    threading.Thread(target=_watch, args=(r,), name="gctool-signals", daemon=True).start()
    try:
        yield
    finally:
        if signal.set_wakeup_fd(-1) != w:  # someone else's now: theirs stays
            signal.set_wakeup_fd(w)  # pragma: no cover
        _pipe.clear()
        os.close(w)  # the watcher reads the end of the pipe and ends
        PENDING[0] = 0


def _unwatched_child() -> None:
    """A forked child does not write its signals into its parent's watcher, nor hold its pipe
    open (the watcher ends when the parent closes it)."""
    if not _pipe:
        return
    try:
        signal.set_wakeup_fd(-1)
    except ValueError:  # pragma: no cover - forked from a thread that is not the main one
        pass
    for fd in _pipe:
        with contextlib.suppress(OSError):
            os.close(fd)
    _pipe.clear()
    PENDING[0] = 0


def _redeliver(unraisable: Any) -> bool:
    """Deliver again an interrupt that Python swallowed (True: it was one)."""
    if not (isinstance(unraisable.exc_value, Terminated) and _raised and _raised[0]
            and signal.getsignal(_raised[0]) is _handler):
        return False
    import _thread
    import threading

    # the handler runs again in the main thread, a moment later: now it would run inside the
    # code that swallowed it (and be swallowed again)
    threading.Timer(0.01, _thread.interrupt_main, (_raised.pop(),)).start()
    return True


@contextmanager
def handled(standalone: bool = False) -> Iterator[None]:
    """Handle SIGINT, SIGTERM and SIGHUP as the module docs say for the duration of the block.

    ``standalone``: the process exits after the block, so the handlers are not restored
    (see :func:`ending`); otherwise (an embedding application, tests) they are.  A no-op
    outside the main thread."""
    _received.clear()
    _raised.clear()
    previous: dict[signal.Signals, Any] = {}
    try:
        for sig in _signals():
            previous[sig] = signal.signal(sig, _handler)
    except ValueError:  # not the main thread (e.g. an embedding application)
        pass
    hook = sys.unraisablehook

    def unraisable(info: Any) -> None:
        if not _redeliver(info):
            hook(info)

    if previous:
        sys.unraisablehook = unraisable
    watched = _watched() if previous else contextlib.nullcontext()
    try:
        with watched:
            yield
    finally:
        if previous and sys.unraisablehook is unraisable:
            sys.unraisablehook = hook
        if not standalone:
            for sig, action in previous.items():
                signal.signal(sig, action if action is not None else signal.SIG_DFL)


def checkpoint() -> None:
    """Between batches of every search: raise again an interrupt that was raised but never
    reached the CLI (a library that catches BaseException swallowed it, as numba's compiler
    can), so that the run stops as interrupted instead of finishing with a verdict."""
    if _raised and _raised[0] and signal.getsignal(_raised[0]) is _handler:
        raise Terminated(_received[0])


def settle() -> None:
    """The outcome of the run is known: from now on signals are recorded but raise nothing."""
    if not _raised:
        _raised.append(0)


def ending() -> None:
    """The process is about to exit with its outcome: ignore further termination signals."""
    try:
        for sig in _signals():
            signal.signal(sig, signal.SIG_IGN)
    except ValueError:  # not the main thread
        pass


def worker_init() -> None:
    """First call of every worker process (see the module docs)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for sig in _signals():
        if sig != signal.SIGINT:
            signal.signal(sig, signal.SIG_DFL)
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):  # pragma: no cover - exotic libc
            pass


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_unwatched_child)
