"""Run an audit command over FILE...: one library call per file, one JSON document, and the
worst exit status.  Reports are printed by the rendering layer (:mod:`gctool.cli.render`) and
judged by :func:`gctool.cli.exit_codes.exit_code`.  The contract (docs/ci.md):

* ``--json``: always one envelope, however many files were given (one, several, or none for
  ``bound -n/-k/-s``)::

      {"version": 1, "command": ..., "ok": worst == 0, "exit_code": worst,
       "files": [{"file": FILE, "exit_code": c, "ok": c == 0, "report": {...}}
                 or {"file": FILE, "exit_code": 2, "ok": false, "error": "..."}]}

  (schema: ``gctool schema verify`` / ``attack`` / ``bound``; ``gctool schema batch`` for any
  of them).  An unreadable file gets its entry with the error, so stdout is never empty.
* text, one FILE without ``-q``: the full report;
* text, several FILEs or ``-q`` (the pre-commit hooks): ``FILE: <summary>`` for each file
  (nothing for a passing file under ``-q``), and the full report, indented, below files whose
  exit status is not 0.  The summary of a failing file begins with FAIL;
* a file that cannot be read: one ``gctool: error: FILE: <message>`` line on stderr (never
  repeated on stdout; one FILE without ``-q``: the message as it is, which names the file
  when the file is the problem), and the run goes on with the next file;
* exit status: the worst (largest) of the files' statuses (:func:`exit_codes.worst`).
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable, Sequence
from typing import Any

import click

from gctool.cli.exit_codes import ExitCode, exit_code, worst
from gctool.cli.output import emit_json, quiet

#: version of the envelope (``gctool schema batch``)
VERSION = 1

#: one file's audit: the report of the library call (the path is None for ``bound -n/-k/-s``)
Audit = Callable[[Any], Any]


def run_files(command: str, files: Sequence[str | None], audit: Audit, as_json: bool,
              gate: bool = True) -> int:
    """Audit every file, render, and return the worst exit status (``gate``: see
    :func:`~gctool.cli.exit_codes.exit_code`).  ``files == [None]``: one audit of no file."""
    from gctool._files import stdin_once

    stdin_once(*(f for f in files if f is not None))
    full = len(files) == 1 and not quiet()
    entries = [_one(path, audit, as_json, gate, full) for path in files]
    status = worst(e["exit_code"] for e in entries)
    if as_json:
        emit_json(envelope(command, entries))
    return int(status)


def envelope(command: str, entries: list[dict[str, Any]]) -> dict[str, Any]:
    """The one ``--json`` document of an audit command over its files."""
    status = int(worst(e["exit_code"] for e in entries))
    return {"version": VERSION, "command": command, "ok": status == int(ExitCode.OK),
            "exit_code": status, "files": entries}


def _one(path: str | None, audit: Audit, as_json: bool, gate: bool, full: bool
         ) -> dict[str, Any]:
    from gctool.cli.render import render
    from gctool.errors import GctoolError, SearchInterrupted

    label = None if path is None else "stdin" if path == "-" else path
    try:
        report = audit(path)
        code = exit_code(report, gate=gate)
    except SearchInterrupted:  # an interrupt ends the whole run, not this file's audit
        raise
    except GctoolError as exc:
        from gctool.cli.main import error_text

        click.echo(f"gctool: error: {_error_line(None if full else label, exc)}", err=True)
        return {"file": label, "exit_code": int(ExitCode.USAGE), "ok": False,
                "error": error_text(exc)}
    if full and not as_json:
        render(report)
    elif not as_json and not (quiet() and code == ExitCode.OK):
        line = _summary(report, code)
        click.echo(line if label is None else f"{label}: {line}")
        if code != ExitCode.OK:
            click.echo(_indented(render, report, line))
    return {"file": label, "exit_code": int(code), "ok": code == ExitCode.OK,
            "report": report.to_dict()}


def _summary(report: Any, code: ExitCode) -> str:
    """The per-file line: the report's summary, which begins with FAIL when the file fails."""
    from gctool.cli.render import summary

    line = summary(report)
    if code != ExitCode.OK and not line.startswith("FAIL"):
        line = f"FAIL: {line}"
    return line


def _error_line(label: str | None, exc: Exception) -> str:
    """One line naming the file and what is wrong with it."""
    from gctool.cli.main import error_message

    message = error_message(exc)
    if label is None or message.startswith(f"{label}: ") or message.startswith(f"{label} "):
        return message
    return f"{label}: {message}"


def _indented(render: Callable[[Any], None], report: Any, summary: str) -> str:
    """The rendered report, indented, without its headline when the summary repeats it (the
    summary is the headline, perhaps followed by more: ``; gate failed: ...``)."""
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        render(report)
    lines = buf.getvalue().rstrip("\n").splitlines()
    if lines and _words(summary).startswith(_words(lines[0])):
        lines = lines[1:]
    return "\n".join("    " + line if line else line for line in lines)


def _words(text: str) -> str:
    return " ".join(text.split())
