"""The console entry point (``gctool`` and ``python -m gctool``): termination signals are
handled before anything else is imported.

Importing the command line (click, numpy through the commands, ...) takes tens of
milliseconds; a SIGINT in that time would print a KeyboardInterrupt traceback, and a SIGTERM or
SIGHUP would kill the process without a word (exit -15/-1 instead of 143/129).  So the first
thing :func:`main` does is install one handler for SIGINT, SIGTERM and SIGHUP, using only the
``signal`` module (built into the interpreter); the handler raises :class:`StartupInterrupt`,
which ends the run with exit 130/143/129 and one line, as an interrupt does later.  Once the
command line has loaded, :func:`gctool._signals.handled` replaces the handler with the one of
the run (which reports how far a search got).

What stays uncovered is the interpreter's own start-up and what the console script runs before
calling :func:`main` (``import re``, ``import sys`` and the import of the ``gctool`` package,
which stays minimal for this reason): there the signal has Python's default effect.
docs/hardening.md states the measured length of that window.

This module imports nothing from gctool at import time, and nothing but ``signal`` and
``sys`` before the handler is in place.
"""

from __future__ import annotations

import signal
import sys

#: the termination signals handled like Ctrl-C (also :data:`gctool._signals.HANDLED`)
_NAMES = ("SIGINT", "SIGTERM", "SIGHUP")
_first: list[int] = []


class StartupInterrupt(KeyboardInterrupt):
    """A termination signal before the command line's own handling was installed (a subclass,
    never a plain KeyboardInterrupt: see :mod:`gctool._signals`)."""


def _early(signum: int, frame: object) -> None:
    if not _first:  # later signals: the first one's exit is already on its way
        _first.append(signum)
        raise StartupInterrupt(signum)


def install() -> None:
    """Handle SIGINT, SIGTERM and SIGHUP with :func:`_early` (main thread only)."""
    for name in _NAMES:
        sig = getattr(signal, name, None)
        if sig is not None:
            signal.signal(sig, _early)


def _stop(signum: int) -> int:
    """Ignore further signals, write the one line, return the exit code of ``signum``."""
    for name in _NAMES:
        sig = getattr(signal, name, None)
        if sig is not None:
            signal.signal(sig, signal.SIG_IGN)
    from gctool.cli.exit_codes import for_signal

    line = "gctool: interrupted" + ("" if signum == signal.SIGINT
                                    else f" ({signal.Signals(signum).name})")
    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):  # no stderr: the exit code still tells
        pass
    return int(for_signal(signum))


def main() -> None:
    """Console-script entry point: install the early handler, then run the command line
    (:func:`gctool.cli.main.run`)."""
    try:
        install()
        from gctool.cli.main import run

        run()
    except KeyboardInterrupt:  # StartupInterrupt, or Python's own before install() ran
        sys.exit(_stop(_first[0] if _first else signal.SIGINT))
    except Exception:
        if not _first:
            raise
        # the interrupt was raised where Python wraps it: in a class body's __set_name__
        # ("RuntimeError: Error calling __set_name__", platform.uname_result while click loads)
        sys.exit(_stop(_first[0]))
