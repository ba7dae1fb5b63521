"""The exit-code contract of every gctool command (pinned by tests/cli/test_exit_codes.py), and
the one place that turns reports into exit statuses (:func:`exit_code`)."""

import signal
from collections.abc import Iterable
from enum import IntEnum
from typing import Any


class ExitCode(IntEnum):
    OK = 0  #: the command ran and the audited property holds
    FINDING = 1  #: the command ran and found that a property does not hold
    USAGE = 2  #: usage error or invalid input (bad option, file, field, parameters, budget)
    INTERNAL = 3  #: a bug in gctool (please report it; GCTOOL_DEBUG=1 shows the traceback)
    HANGUP = 129  #: SIGHUP (terminal closed); handled like Ctrl-C, no partial output
    INTERRUPTED = 130  #: interrupted (Ctrl-C / SIGINT); no partial output is left behind
    TERMINATED = 143  #: SIGTERM (timeout, CI cancellation, systemd, kill); handled like Ctrl-C


def exit_code(report: Any, *, gate: bool = True) -> ExitCode:
    """Exit status of one report: OK when the audited property holds (``report.ok``; reports
    of commands that audit nothing, such as ``show`` and ``design``, are always ok) and every CI
    gate recorded in ``report.gates`` (``verify --max-condition``, ``--strict``) passed;
    FINDING otherwise.  ``gate=False`` marks an informational run whose findings are printed
    but do not fail it (``bound`` without ``--check``)."""
    from gctool.gates import passed

    holds = bool(getattr(report, "ok", True)) and passed(report)
    return ExitCode.OK if holds or not gate else ExitCode.FINDING


def worst(codes: Iterable[int]) -> ExitCode:
    """Exit status of a run over several files: the worst (largest) of theirs."""
    return ExitCode(max((int(c) for c in codes), default=int(ExitCode.OK)))


def for_signal(signum: int | None) -> ExitCode:
    """The exit code after the termination signal ``signum`` (None or SIGINT: 130)."""
    if signum == signal.SIGHUP:
        return ExitCode.HANGUP
    return ExitCode.TERMINATED if signum == signal.SIGTERM else ExitCode.INTERRUPTED
