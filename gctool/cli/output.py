"""Shared output helpers of every command: the stdout console, JSON documents, status lines
on stderr, ``-q/--quiet``, and number formatting.

Results go to stdout.  Status ("wrote ... to FILE", parameter lines) and progress bars go to
stderr only when stderr is a terminal, and ``--quiet`` silences them there too: a run whose
stderr is a file or a pipe (CI, scripts) has an empty stderr on success, so anything on it is
an error, a warning or a note that needs action (:func:`note`).  When stdout is not a terminal,
text is never wrapped (a CI log or a pipe gets whole lines and whole table cells, whatever its
width).
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from rich.console import Console

#: width of the stdout console when stdout is not a terminal (no wrapping in logs and pipes)
UNWRAPPED_WIDTH = 10_000


def quiet() -> bool:
    """True when the invocation asked for ``-q/--quiet`` (root option)."""
    ctx = click.get_current_context(silent=True)
    root = ctx.find_root() if ctx is not None else None
    return bool(root is not None and isinstance(root.obj, dict) and root.obj.get("quiet"))


def stderr_is_terminal() -> bool:
    """Is stderr a terminal?  Status lines and progress bars are drawn only then."""
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # replaced or closed stream
        return False


def status(message: str) -> None:
    """A status line on stderr ("wrote ... to FILE"): only on a terminal, and not with --quiet."""
    if stderr_is_terminal() and not quiet():
        click.echo(message, err=True)


def note(message: str) -> None:
    """A note that asks for action (a deprecated option) on stderr, terminal or not, unless
    --quiet."""
    if not quiet():
        click.echo(message, err=True)


def writes_stdout(path: str | None) -> bool:
    """Is the output ``path`` stdout: '-', /dev/stdout (and its aliases), or the very file or
    pipe that stdout is?  (Two outputs on stdout at once would mix, e.g. SVG and JSON.)"""
    import os

    if path is None:
        return False
    if path == "-" or os.path.realpath(path) in ("/dev/stdout", "/proc/self/fd/1", "/dev/fd/1"):
        return True
    if path in ("/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"):
        return True
    try:
        mine = os.fstat(sys.stdout.fileno())
        theirs = os.stat(path)
    except (OSError, ValueError, AttributeError):
        return False
    return (mine.st_dev, mine.st_ino) == (theirs.st_dev, theirs.st_ino) and not os.path.samefile(
        path, os.devnull)


def emit_json(doc: Any) -> None:
    click.echo(json.dumps(doc, indent=2, allow_nan=False))


def stdout_console() -> Console:
    """The rich console of stdout: terminal width on a terminal, no wrapping otherwise."""
    import os

    from rich.console import Console

    class StdoutConsole(Console):
        def on_broken_pipe(self) -> None:
            """The reader went away: the CLI exits 0 (rich would exit 1)."""
            raise BrokenPipeError

    tty = sys.stdout.isatty()
    width = None if tty or os.environ.get("COLUMNS") else UNWRAPPED_WIDTH
    return StdoutConsole(highlight=False, soft_wrap=True, width=width)


def fmt(x: float | None, digits: int = 4) -> str:
    """``x`` to ``digits`` significant digits; "n/a" for None and NaN (undefined, as the
    JSON's null: the condition number of no survivors at all)."""
    if x is None or x != x:
        return "n/a"
    return f"{x:.{digits}g}"


def _set_quiet(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value:
        ctx.find_root().ensure_object(dict)["quiet"] = True


#: ``-q/--quiet`` (accepted by the root group and by every command): no status lines on
#: stderr, and the audit commands print only the files with findings or errors
quiet_option = click.option(
    "-q", "--quiet", is_flag=True, expose_value=False, is_eager=True, callback=_set_quiet,
    help="Print only findings and errors: no status lines, nothing for files that pass.")


def did_you_mean(name: str, choices: list[str]) -> str:
    """" (did you mean 'x'?)" for the closest of ``choices``, or ""
    (:func:`gctool.errors.did_you_mean`)."""
    from gctool.errors import did_you_mean as suggest

    return suggest(name, choices)


def no_such(kind: str, name: str, choices: list[str], ctx: click.Context
            ) -> click.UsageError:
    """The usage error for an unknown command or scheme, with a suggestion."""
    return click.UsageError(f"no such {kind} {name!r}{did_you_mean(name, choices)}; "
                            f"{kind}s: {', '.join(choices)}", ctx=ctx)
