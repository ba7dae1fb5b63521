"""Exception hierarchy of the gctool library.

The library never prints and never exits; it raises these.  The CLI maps them to exit codes
(see :mod:`gctool.cli.exit_codes`): every :class:`InvalidInput` is a usage error (exit 2),
:class:`SearchInterrupted` is exit 130 (129/143 after SIGHUP/SIGTERM).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager

#: a parameter named in a message: in backquotes, as the library's caller spells it
#: (```max_sets``` ); :func:`name_params` renders them in another caller's terms (the CLI's flags)
PARAM = re.compile(r"(?<!`)`([a-z_][a-z0-9_]*)`(?!`)")


def name_params(text: str, name: Callable[[str], str]) -> str:
    """``text`` with each parameter in backquotes replaced by ``name(parameter)``, its name in
    the caller's terms (the command line passes the one that spells its flags)."""
    return PARAM.sub(lambda m: name(m.group(1)), text)


class GctoolError(Exception):
    """Base class of every error the library raises on purpose.

    Messages name parameters in backquotes (```max_sets` must be ...``), so that a caller can
    render them in its own terms (:func:`name_params`); ``param`` is the parameter at fault,
    when there is one."""

    def __init__(self, message: str = "", *, param: str | None = None) -> None:
        super().__init__(message)
        self.param = param


class InvalidInput(GctoolError):
    """The caller gave something gctool cannot work with (bad option, file, or parameter)."""


class FieldError(InvalidInput):
    """A field spec could not be parsed, or an entry does not belong to the field."""


class CodeFileError(InvalidInput):
    """A code or export file is unreadable, malformed, or of the wrong format/version."""


class DesignError(InvalidInput):
    """A scheme cannot be built with the requested parameters."""


class BudgetExceeded(InvalidInput):
    """A requested computation is larger than the allowed budget (raise it explicitly).

    ``kind``: the budget ("work" in seconds, "memory" in bytes, "sets", or another count such
    as "patterns"); ``needed`` and ``budget`` in its unit (``needed`` None when unknown);
    ``param``: the parameter that sets it (None: only the environment does); ``remedy``: what
    the message suggests after its last "; " (a caller may suggest its own instead:
    :meth:`with_remedy`); ``proved``: what a threshold search had proved when it stopped (no
    straggler set smaller than this exceeds), or None."""

    def __init__(self, message: str = "", proved: int | None = None, *,  # noqa: PLR0913 (the fields of a refusal)
                 kind: str = "work", needed: float | None = None, budget: float | None = None,
                 param: str | None = "max_work", remedy: str | None = None) -> None:
        super().__init__(message, param=param)
        self.proved, self.kind, self.needed, self.budget = proved, kind, needed, budget
        self.remedy = remedy

    def with_remedy(self, remedy: str) -> BudgetExceeded:
        """The same refusal suggesting ``remedy`` instead of its own."""
        text = str(self)
        head = text[: -len(self.remedy) - 2] if self.remedy and text.endswith(
            f"; {self.remedy}") else text
        return type(self)(f"{head}; {remedy}", self.proved, kind=self.kind, needed=self.needed,
                          budget=self.budget, param=self.param, remedy=remedy)


class IncompleteRun(GctoolError):
    """An enumeration ended without merging every range of its space exactly once (tasks lost
    with the workers or the scheduler of a cluster, a dead worker process): there is no verdict
    (exit 2).  ``checked``: the sets merged; ``lost``: the rank ranges ``(start, stop)`` never
    merged."""

    def __init__(self, message: str, checked: int = 0,
                 lost: list[tuple[int, int]] | None = None) -> None:
        super().__init__(message)
        self.checked = checked
        self.lost = list(lost or [])


class OutputError(GctoolError):
    """An output could not be written (a full disk, a closed stdout): exit 2, no partial file."""


class Terminated(KeyboardInterrupt):
    """SIGINT, SIGTERM or SIGHUP arrived under the CLI; SIGTERM and SIGHUP are handled like
    Ctrl-C (see :mod:`gctool._signals`)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


class SearchInterrupted(GctoolError):
    """A long search was interrupted (Ctrl-C); carries how far it got."""

    def __init__(self, summary: str) -> None:
        super().__init__(summary)
        self.summary = summary


@contextmanager
def summarised(summary: str) -> Iterator[None]:
    """Inside the block, an interrupt that no search summarised (it came before the search
    started, or between searches) becomes :class:`SearchInterrupted` with ``summary``, so the
    interrupted line always says what was done."""
    try:
        yield
    except KeyboardInterrupt:
        raise SearchInterrupted(summary) from None


def printable(text: object, limit: int = 500) -> str:
    """``text`` made safe for a terminal, on one line of at most ``limit`` characters.

    The one sanitiser for every string that may come from a file or an argument (a scheme name,
    a file name, a value in an error message): whitespace runs become one space; control and
    format characters (escape sequences, bidi overrides) and lone surrogates are shown escaped
    (``\\x1b``), so they cannot move the cursor, recolour or retitle the terminal, or break the
    encoding of stdout."""
    out = []
    for ch in " ".join(str(text).split()):
        out.append(ch if ch.isprintable() else
                   ch.encode("unicode_escape", "backslashreplace").decode("ascii"))
        if len(out) > limit:
            break
    line = "".join(out)
    return line if len(line) <= limit else line[: max(limit - 3, 0)] + "..."


def did_you_mean(name: str, choices: list[str] | tuple[str, ...]) -> str:
    """" (did you mean 'x'?)" for the closest of ``choices``, or "" (every "unknown NAME"
    message of the library and the CLI uses it)."""
    import difflib

    close = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""
