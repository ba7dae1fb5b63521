"""Refusal checks shared by the tests of several areas (a plain helper module, not a test
module): bad input ends with exit 2 and ONE line on stderr, never a traceback."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from click.testing import Result


def one_line_error(result: Result) -> str:
    """The one stderr line of an exit-2 run (no traceback)."""
    assert result.exit_code == 2, (result.exit_code, result.output)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    return lines[0]


def refused(result: Result, *words: str) -> str:
    """The one stderr line of a clean refusal: exit 2, nothing on stdout, no internal error
    and no Python warning; the line contains each of ``words``."""
    line = one_line_error(result)
    assert "internal error" not in line and "Warning" not in line, line
    assert result.stdout == "", result.stdout
    for word in words:
        assert word in line, line
    return line


def forbid(*args: Any, **kwargs: Any) -> Any:
    """Stands in (monkeypatched) for an expensive step that a refusal must come before."""
    raise AssertionError("the expensive step ran before the work budget was checked")


def design_file(tmp_path: Path, name: str, scheme: str, **kw: Any) -> str:
    """Design ``scheme`` and write it as ``tmp_path / name`` (JSON or NPZ by the suffix)."""
    from gctool.codes import design
    from gctool.io import write_code

    path = tmp_path / name
    write_code(design(scheme, **kw), path)
    return str(path)
