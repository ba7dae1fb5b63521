"""``gctool train`` (and any local Dask cluster gctool starts) run from inside a Python program:
Dask starts the workers with Python's 'spawn' method, which runs the calling program's main
module again in each (docs/train.md, "From Python").  A program that cannot be run again (a
script on stdin) gets one line naming the rule and exit 2, not "internal error: Nanny failed to
start" (exit 3); a guarded program runs through click's CliRunner as from a shell."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import gctool

#: a train run through click's CliRunner: its exit code and stderr on the program's stdout
PROGRAM = """\
from click.testing import CliRunner
from gctool.cli.main import cli

def main():
    r = CliRunner().invoke(cli, ["train", {path!r}, "--iterations", "2", "--overhead-rounds",
                                 "0", "--no-baselines", "-j", "1", "--time-scale", "0.001",
                                 "--seed", "1"], catch_exceptions=False)
    print("exit", r.exit_code)
    print(r.stderr, end="")
"""


def _code(tmp_path: Path) -> str:
    path = tmp_path / "frc.json"
    gctool.write_code(gctool.design("frc", 4, 1), path)
    return str(path)


def _run(args: list[str], tmp_path: Path, stdin: str | None = None) -> list[str]:
    done = subprocess.run([sys.executable, *args], input=stdin, capture_output=True,
                          text=True, cwd=tmp_path, timeout=240, check=False)
    return done.stdout.splitlines()


def test_a_program_on_stdin_gets_one_line_and_exit_2(tmp_path: Path) -> None:
    out = _run(["-"], tmp_path, PROGRAM.format(path=_code(tmp_path)) + "main()\n")
    assert out[0] == "exit 2", out
    [line] = out[1:]
    assert line.startswith("gctool: error: the worker processes of the local Dask cluster did "
                           "not start"), line
    assert "(<stdin>)" in line and "if __name__ == '__main__':" in line
    assert "--scheduler" in line and "internal error" not in line


def test_a_guarded_program_trains_through_click_s_runner(tmp_path: Path) -> None:
    program = tmp_path / "program.py"
    program.write_text(PROGRAM.format(path=_code(tmp_path))
                       + 'if __name__ == "__main__":\n    main()\n')
    out = _run([str(program)], tmp_path)
    assert out[0] in ("exit 0", "exit 1") and len(out) == 1, out  # trained: no error line


def test_only_workers_that_did_not_start_name_the_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    """Dask's RuntimeError of workers that did not start names the rule and the program; an
    OSError (a port in use) is raised as it is, and so is anything under the gctool command,
    whose main module is guarded."""
    import types

    from gctool.audit.distributed import _not_started
    from gctool.errors import InvalidInput

    program = types.ModuleType("__main__")
    program.__file__ = "/srv/job/run.py"
    monkeypatch.setitem(sys.modules, "__main__", program)
    named = _not_started(RuntimeError("Nanny failed to start."))
    assert isinstance(named, InvalidInput) and "(/srv/job/run.py)" in str(named)
    port = OSError("address in use")
    assert _not_started(port) is port
    program.__file__ = "/usr/local/bin/gctool"
    nanny = RuntimeError("Nanny failed to start.")
    assert _not_started(nanny) is nanny
