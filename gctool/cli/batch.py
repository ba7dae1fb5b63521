"""Run an audit command over FILE...: one library call per file, one line per file (plus the
full report of files with findings), one JSON document, and the worst exit status.  Reports are
printed by the rendering layer (:mod:`gctool.cli.render`) and judged by
:func:`gctool.cli.exit_codes.exit_code`.

With a single FILE the command prints exactly what it always printed (the full report, and
under ``--json`` the report object itself).  With several FILEs:

* text: ``FILE: <summary>`` for each file; the full report, indented, below files whose exit
  status is not 0; a file that cannot be read gets ``FILE: ERROR: <message>`` (and the usual
  ``gctool: error:`` line on stderr), and the run goes on with the next file;
* ``--json``: ``{"version": 1, "command": ..., "exit_code": worst, "files": [{"file": FILE,
  "exit_code": c, "report": {...}} or {"file": FILE, "exit_code": 2, "error": "..."}]}``
  (schema: ``gctool schema batch``);
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

#: one file's audit: the report of the library call
Audit = Callable[[str], Any]


def run_files(command: str, files: Sequence[str], audit: Audit, as_json: bool,
              gate: bool = True) -> int:
    """Audit every file, render, and return the worst exit status (``gate``: see
    :func:`~gctool.cli.exit_codes.exit_code`)."""
    from gctool._files import stdin_once
    from gctool.cli.render import render

    stdin_once(*files)
    if len(files) == 1:
        report = audit(files[0])
        code = exit_code(report, gate=gate)
        if as_json or not (quiet() and code == ExitCode.OK):
            render(report, as_json)
        return int(code)
    entries: list[dict[str, Any]] = []
    for path in files:
        entries.append(_one(path, audit, as_json, gate))
    status = worst(e["exit_code"] for e in entries)
    if as_json:
        emit_json({"version": 1, "command": command, "exit_code": int(status), "files": entries})
    return int(status)


def _one(path: str, audit: Audit, as_json: bool, gate: bool) -> dict[str, Any]:
    from gctool.cli.render import render, summary
    from gctool.errors import GctoolError, SearchInterrupted

    label = "stdin" if path == "-" else path
    try:
        report = audit(path)
        code = exit_code(report, gate=gate)
    except SearchInterrupted:  # an interrupt ends the whole run, not this file's audit
        raise
    except GctoolError as exc:
        from gctool.cli.main import _one_line
        from gctool.cli.params import in_cli_terms

        error = in_cli_terms(str(exc))
        click.echo(f"gctool: error: {_one_line(error)}", err=True)
        if not as_json:
            message = _one_line(error)
            message = message[len(label) + 2:] if message.startswith(f"{label}: ") else message
            click.echo(f"{label}: ERROR: {message}")
        return {"file": label, "exit_code": int(ExitCode.USAGE), "error": error}
    if not as_json and not (quiet() and code == ExitCode.OK):
        line = summary(report)
        click.echo(f"{label}: {line}")
        if code != ExitCode.OK:
            click.echo(_indented(render, report, line))
    return {"file": label, "exit_code": int(code), "report": report.to_dict()}


def _indented(render: Callable[[Any], None], report: Any, summary: str) -> str:
    """The rendered report, indented, without its headline when that repeats the summary."""
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        render(report)
    lines = buf.getvalue().rstrip("\n").splitlines()
    if lines and " ".join(lines[0].split()) == " ".join(summary.split()):
        lines = lines[1:]
    return "\n".join("    " + line if line else line for line in lines)
