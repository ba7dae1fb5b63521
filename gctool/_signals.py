"""Termination signals and worker processes (the library side; the CLI installs the handlers).

The CLI (:func:`install`) makes SIGTERM and SIGHUP behave like Ctrl-C: the handler raises
:class:`~gctool.errors.Terminated`, a :class:`KeyboardInterrupt`, so every search stops with its
summary, every temporary output file is removed (``gctool._files.atomic_stream``) and every
worker pool is shut down by the code that already handles Ctrl-C.  :func:`received` tells the
CLI which signal ended the run, so it can exit 130 (SIGINT), 129 (SIGHUP) or 143 (SIGTERM).

Worker processes call :func:`worker_init` first: they ignore SIGINT (the parent decides), die
quietly on SIGTERM/SIGHUP (no traceback from a pool that is being torn down), and on Linux ask
the kernel to kill them when the parent dies (a SIGKILLed parent leaves no orphans).
"""

from __future__ import annotations

import signal
import sys
from typing import Any

from gctool.errors import Terminated

#: signals handled like Ctrl-C by the CLI
HANDLED = ("SIGTERM", "SIGHUP")
_received: list[int] = []


def received() -> int | None:
    """The first termination signal received since :func:`install` (None: none, or SIGINT)."""
    return _received[0] if _received else None


def _handler(signum: int, frame: Any) -> None:
    _received.append(signum)
    if len(_received) == 1:  # later signals: let the cleanup of the first one finish
        raise Terminated(signum)


def install() -> None:
    """Handle SIGTERM and SIGHUP like SIGINT (main thread only; a no-op elsewhere)."""
    _received.clear()
    for name in HANDLED:
        sig = getattr(signal, name, None)
        if sig is None:  # pragma: no cover - not POSIX
            continue
        try:
            signal.signal(sig, _handler)
        except ValueError:  # not the main thread (e.g. an embedding application)
            return


def worker_init() -> None:
    """First call of every worker process (see the module docs)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for name in HANDLED:
        sig = getattr(signal, name, None)
        if sig is not None:
            signal.signal(sig, signal.SIG_DFL)
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):  # pragma: no cover - exotic libc
            pass
