"""The exit-code contract of every gctool command (pinned by tests/test_exit_codes.py)."""

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0  #: the command ran and the audited property holds
    FINDING = 1  #: the command ran and found that a property does not hold
    USAGE = 2  #: usage error or invalid input (bad option, file, field, parameters, budget)
    INTERNAL = 3  #: a bug in gctool (please report it; GCTOOL_DEBUG=1 shows the traceback)
    INTERRUPTED = 130  #: interrupted (Ctrl-C / SIGINT); no partial output is left behind
