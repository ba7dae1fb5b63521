"""Exception hierarchy of the gctool library.

The library never prints and never exits; it raises these.  The CLI maps them to exit codes
(see :mod:`gctool.cli.exit_codes`): every :class:`InvalidInput` is a usage error (exit 2),
:class:`SearchInterrupted` is exit 130.
"""

from __future__ import annotations


class GctoolError(Exception):
    """Base class of every error the library raises on purpose."""


class InvalidInput(GctoolError):
    """The caller gave something gctool cannot work with (bad option, file, or parameter)."""


class FieldError(InvalidInput):
    """A field spec could not be parsed, or an entry does not belong to the field."""


class CodeFileError(InvalidInput):
    """A code or export file is unreadable, malformed, or of the wrong format/version."""


class DesignError(InvalidInput):
    """A scheme cannot be built with the requested parameters."""


class BudgetExceeded(InvalidInput):
    """A requested computation is larger than the allowed budget (raise it explicitly)."""


class SearchInterrupted(GctoolError):
    """A long search was interrupted (Ctrl-C); carries how far it got."""

    def __init__(self, summary: str) -> None:
        super().__init__(summary)
        self.summary = summary
