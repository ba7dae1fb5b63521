"""The suite's watchdog and its failure lines: a pytest plugin (tests/conftest.py loads it).

A test may not run for ever.  Its setup, call and teardown together, the collection, and the
session's finish (without xdist: till the process ends) each have :envvar:`GCTOOL_TEST_TIMEOUT`
seconds (:data:`SECONDS` by default; ``0`` turns the watchdog off, as ``--pdb`` and ``--trace``
do).  Past them, the process writes a line that names what it was running to the session's
stderr, then the stack of every thread (faulthandler), kills its child processes (a child left
would hold the log's pipe open) and exits with status 1.  pytest-xdist's controller then
reports the test as failed ("worker 'gw0' crashed while running ...") and starts another worker,
so the run goes on to its end; without xdist the run ends there.  The deadline is watched twice:
by a Python thread (the line, the stacks, the children), and :data:`BACKSTOP` seconds later by
faulthandler's own C thread (the stacks and the exit alone), for a thread that holds the GIL and
never lets the Python one run.

faulthandler has one such timer: ``faulthandler_timeout`` (pytest's ini option) stays unset.  A
test that forks ends its child with ``os._exit`` (as the suite's do): a forked child that
finalises normally waits for the timer's thread, which it has not got (CPython 3.11).

In the controller (or the one process of ``-n 0``), a failed test writes its line at once,
``FAILED <nodeid> (gw0): <first line of the error>`` (``ERROR`` and the phase for a setup or a
teardown), and a phase of a test that takes more than a fifth of the deadline writes ``SLOW
<nodeid> (gw0): call took 131 s``: a log cut short (CI's time limit) still names them."""

from __future__ import annotations

import faulthandler
import os
import threading
import time
from collections.abc import Generator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import pytest

#: the environment variable that sets the deadline, in seconds
ENV = "GCTOOL_TEST_TIMEOUT"
#: the deadline by default: many times the slowest test's 24 s (mypy's setup), above the 300 s
#: that most tests give a process they wait for
SECONDS = 600.0
#: faulthandler's own exit comes this much later than the Python thread's
BACKSTOP = 60.0


def _descendants(pid: int) -> list[int]:
    """The processes below ``pid`` (Linux's /proc; none where it has no children lists)."""
    found: list[int] = []
    for children in Path(f"/proc/{pid}/task").glob("*/children"):
        try:
            kids = [int(k) for k in children.read_text().split()]
        except OSError:
            continue
        for kid in kids:
            found += [kid, *_descendants(kid)]
    return found


class Watchdog:
    """One process's deadline: :meth:`watching` a stretch of work (a test, a collection) arms
    it; at :meth:`watching` 's end it is cancelled."""

    def __init__(self, seconds: float, out: IO[str]) -> None:
        self.seconds = seconds
        self.out = out
        self._lock = threading.Lock()
        self._running: tuple[str, float] | None = None
        self._thread: threading.Thread | None = None

    def arm(self, what: str) -> None:
        with self._lock:
            self._running = (what, time.monotonic() + self.seconds)
        if self._thread is None:
            self._thread = threading.Thread(target=self._watch, name="test-watchdog", daemon=True)
            self._thread.start()
        faulthandler.dump_traceback_later(self.seconds + BACKSTOP, exit=True, file=self.out)

    def cancel(self) -> None:
        faulthandler.cancel_dump_traceback_later()
        with self._lock:
            self._running = None

    @contextmanager
    def watching(self, what: str) -> Iterator[None]:
        self.arm(what)
        try:
            yield
        finally:
            self.cancel()

    def _watch(self) -> None:
        """Wakes at the deadline of the work running (a deadline is never earlier than the
        one this thread sleeps to: each is ``seconds`` after its arming)."""
        while True:
            with self._lock:
                running = self._running
            now = time.monotonic()
            if running is not None and now >= running[1]:
                self._fire(running[0])
            time.sleep(self.seconds if running is None else max(running[1] - now, 0.01))

    def _fire(self, what: str) -> None:
        self.out.write(f"\n{'=' * 8} watchdog: {what} still running after {self.seconds:g} s "
                       f"({ENV}); every thread's stack follows, then process {os.getpid()} "
                       f"kills its children and exits {'=' * 8}\n")
        self.out.flush()
        faulthandler.dump_traceback(self.out, all_threads=True)
        self.out.flush()
        for pid in _descendants(os.getpid()):
            try:
                os.kill(pid, 9)
            except OSError:
                pass
        os._exit(1)


def _seconds(config: pytest.Config) -> float:
    if config.getoption("usepdb", False) or config.getoption("trace", False):
        return 0.0
    return float(os.environ.get(ENV) or SECONDS)


_watchdog: list[Watchdog] = []


def pytest_configure(config: pytest.Config) -> None:
    seconds = _seconds(config)
    controller = (getattr(config.option, "dist", "no") != "no"
                  and not hasattr(config, "workerinput"))
    if seconds <= 0 or controller:
        return  # off, or xdist's controller: its workers run the tests
    if float(config.getini("faulthandler_timeout") or 0) > 0:
        raise pytest.UsageError(f"faulthandler_timeout would cancel {ENV}'s watchdog "
                                "(faulthandler has one timer)")
    # the session's stderr, not the one pytest captures while a test runs (then a file)
    out = os.fdopen(os.dup(2), "w", encoding="utf-8", errors="replace")
    _watchdog.append(Watchdog(seconds, out))


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_collection() -> Generator[None, object, object]:
    if not _watchdog:
        return (yield)
    with _watchdog[0].watching("the collection"):
        return (yield)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, object, object]:
    if not _watchdog:
        return (yield)
    with _watchdog[0].watching(item.nodeid):
        return (yield)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_sessionfinish(session: pytest.Session) -> Generator[None, object, object]:
    """Watched, and without xdist till the process ends: an ``atexit`` function that waits, or
    a thread left running that Python joins at its exit, would keep pytest for ever.  (A worker
    idles after it, till the controller ends the session; then xdist kills it if it has not
    ended within 10 s.)"""
    if not _watchdog:
        return (yield)
    _watchdog[0].arm("the end of the session (after its last test)")
    try:
        return (yield)
    finally:
        if hasattr(session.config, "workerinput"):
            _watchdog[0].cancel()


def _first_line(report: pytest.TestReport) -> str:
    crash = getattr(report.longrepr, "reprcrash", None)
    text = str(crash.message if crash is not None else report.longrepr or "").strip()
    return text.splitlines()[0] if text else ""


def failure_line(report: pytest.TestReport) -> str | None:
    """The line that a failed report, or a slow phase, writes at once; else None."""
    worker = getattr(getattr(report, "node", None), "gateway", None)
    where = [worker.id] if worker is not None else []
    if report.failed:
        word = "FAILED" if report.when in ("call", "???") else "ERROR"
        if word == "ERROR":
            where.append(report.when)
        place = f" ({', '.join(where)})" if where else ""
        return f"{word} {report.nodeid}{place}: {_first_line(report)}"
    seconds = float(os.environ.get(ENV) or SECONDS)
    if seconds > 0 and report.duration > seconds / 5:
        place = f" ({where[0]})" if where else ""
        return f"SLOW {report.nodeid}{place}: {report.when} took {report.duration:.0f} s"
    return None


@pytest.hookimpl(trylast=True)
def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """After the terminal's letter for the report."""
    if not _terminal:
        return
    line = failure_line(report)
    if line is not None:
        reporter = _terminal[0]
        if reporter._tw.width_of_current_line:  # after -q's letters
            reporter.write("\n")
        reporter.write_line(line, red=report.failed, yellow=not report.failed)
        reporter.flush()


_terminal: list[Any] = []


@pytest.hookimpl(trylast=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    """The terminal of the controller, or of the one process of ``-n 0`` (not a worker's)."""
    config = session.config
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None and not hasattr(config, "workerinput"):
        _terminal.append(reporter)
