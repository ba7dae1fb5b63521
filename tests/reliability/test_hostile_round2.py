"""The second reliability review's non-Dask hostile inputs (encoded designs and audits, partial
work, start-up signals, budget variables, trace CSVs, NPZ and file-system oddities), each as a
class: the case the review tried and forms it did not."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from gctool.cli.main import cli
from gctool.limits import DEFAULT_MAX_WORK

from refusals import design_file, refused


def run(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), env=env)


# -- N15: the --max-work default in --help is the constant -------------------------------------
COMPUTING = (["design", "frc"], ["verify"], ["attack"], ["bound"], ["export"], ["show"],
             ["simulate"])


@pytest.mark.parametrize("command", COMPUTING, ids=lambda c: " ".join(c))
def test_help_states_the_work_budget_that_applies(command: list[str]) -> None:
    r = run(*command, "--help")
    assert r.exit_code == 0, r.output
    text = " ".join(r.output.split())
    m = re.search(r"--max-work OPS .*?\(default ([0-9.e+]+),", text)
    assert m is not None, text
    assert float(m.group(1)) == DEFAULT_MAX_WORK


def _gctool(args: list[str], env: dict[str, str] | None = None, timeout: float = 60,
            **kw: Any) -> subprocess.CompletedProcess[str]:
    """The real console entry point in a fresh interpreter (what ``gctool`` runs)."""
    full = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "gctool", *args], capture_output=True,
                          text=True, env=full, timeout=timeout, **kw)


def _one_line(proc: subprocess.CompletedProcess[str], code: int = 2, *words: str) -> str:
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == code, (proc.returncode, proc.stderr)
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


# -- N11: a memory budget beyond what the kernel's limit can hold ------------------------------
@pytest.mark.parametrize("value", ["1e19", "1e300", "18446744073709551616",
                                   "1180591620717411303424"])
def test_a_memory_budget_beyond_the_kernels_range_means_no_process_limit(
        tmp_path: Path, value: str) -> None:
    path = design_file(tmp_path, "c.json", "cyclic", n=6, s=1, seed=1)
    proc = _gctool(["verify", path], env={"GCTOOL_MAX_MEMORY": value})
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr


@pytest.mark.parametrize("value", ["2^70", "1e400", "-1e19", "nan"])
def test_an_invalid_memory_budget_is_one_line_from_the_entry_point(
        tmp_path: Path, value: str) -> None:
    path = design_file(tmp_path, "c.json", "cyclic", n=6, s=1, seed=1)
    _one_line(_gctool(["verify", path], env={"GCTOOL_MAX_MEMORY": value}), 2,
              "GCTOOL_MAX_MEMORY")


# -- N14: signals during start-up ---------------------------------------------------------------
#: runs the console entry point with a signal raised at the first import of a module (an audit
#: hook: the signal arrives while that import runs, as an early Ctrl-C or SIGTERM would)
_SIGNAL_AT_IMPORT = """
import os, signal, sys
sig, at = getattr(signal, sys.argv[1]), sys.argv[2]
def hook(event, args):
    if event == "import" and args[0] == at:
        os.kill(os.getpid(), sig)
sys.addaudithook(hook)
sys.argv = ["gctool", *sys.argv[3:]]
from gctool._start import main
main()
"""


@pytest.mark.parametrize("module", ["gctool.cli", "click", "gctool.cli.main", "gctool.limits",
                                    "gctool.cli.exit_codes", "gctool.io", "numpy"])
@pytest.mark.parametrize("signame,code", [("SIGINT", 130), ("SIGTERM", 143), ("SIGHUP", 129)])
def test_a_signal_while_the_command_line_loads_is_one_line_and_its_exit_code(
        tmp_path: Path, module: str, signame: str, code: int) -> None:
    path = design_file(tmp_path, "c.json", "cyclic", n=6, s=1, seed=1)
    proc = subprocess.run([sys.executable, "-c", _SIGNAL_AT_IMPORT, signame, module, "verify",
                           path], capture_output=True, text=True, timeout=60)
    line = _one_line(proc, code, "interrupted")
    assert line.startswith("gctool"), line
    assert proc.stdout == ""
    if signame != "SIGINT":
        assert line.endswith(f"({signame})"), line


def test_the_entry_point_handles_signals_before_it_imports_anything_else() -> None:
    script = ("import sys; before = set(sys.modules); import gctool._start as s; "
              "print(sorted(set(sys.modules) - before))")
    proc = subprocess.run([sys.executable, "-I", "-c", script], capture_output=True, text=True,
                          timeout=60, env={**os.environ, "PYTHONPATH": str(Path(__file__)
                                                                            .parents[2])})
    assert proc.returncode == 0, proc.stderr
    loaded = set(eval(proc.stdout))  # noqa: S307 (our own printed list)
    assert loaded <= {"gctool", "gctool._version", "gctool._start", "signal", "_signal",
                      "enum", "__future__"}, loaded


def test_the_console_scripts_are_the_early_entry_point() -> None:
    import tomllib

    root = Path(__file__).parents[2]
    scripts = tomllib.loads((root / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["gctool"] == "gctool._start:main"
    assert (root / "gctool" / "__main__.py").read_text().startswith(
        "from gctool._start import main")


# -- N12, M4: trace CSV files ------------------------------------------------------------------
_HEADER = "round,worker,started_s,finished_s"


def _trace_rows(n: int = 4, rounds: int = 2) -> str:
    return "".join(f"{r},{w},0,{1 + w}\n" for r in range(rounds) for w in range(n))


@pytest.mark.parametrize("text,words", [
    (_HEADER + "," + "x" * 200_000 + "\n" + _trace_rows(), ["header line is longer"]),
    (_HEADER + ',"' + "y" * 70_000 + '"\n' + _trace_rows(), ["header line is longer"]),
    (_HEADER + "\n" + _trace_rows() + "0,1,0," + "z" * 200_000 + "\n", ["line 10", "not CSV"]),
    (_HEADER + "\n" + _trace_rows() + '0,1,0,"' + "q" * 140_000 + "\n", ["line 10", "not CSV"]),
    (_HEADER + "\n0,0,0,1\n0,1,0," + "w" * 1000 + "\n", ["line 3", "not a number"]),
], ids=["long-header", "long-quoted-header", "long-cell", "unclosed-quote", "word"])
def test_trace_csvs_with_huge_fields_are_one_line(tmp_path: Path, text: str,
                                                   words: list[str]) -> None:
    code = design_file(tmp_path, "c.json", "frc", n=4, s=1)
    (tmp_path / "t.csv").write_text(text)
    line = refused(run("simulate", code, "--delay", f"trace:{tmp_path / 't.csv'}",
                       "--iterations", "3"), *words)
    assert len(line) <= 600


def test_a_trace_from_a_fifo_is_read_once(tmp_path: Path) -> None:
    import threading

    code = design_file(tmp_path, "c.json", "frc", n=4, s=1)
    fifo = tmp_path / "t.fifo"
    os.mkfifo(fifo)
    for text in (_HEADER + "\n" + _trace_rows(), _HEADER + "\n0,0,0,1\n0,1,0,x\n"):
        writer = threading.Thread(target=fifo.write_text, args=(text,), daemon=True)
        writer.start()
        r = run("simulate", code, "--delay", f"trace:{fifo}", "--iterations", "3", "--json")
        writer.join(timeout=10)
        assert not writer.is_alive()
        if "x" in text:  # the second pass that names the bad row reads the same bytes
            refused(r, "line 3", "not a number")
        else:
            assert r.exit_code == 0, r.stderr


@pytest.mark.parametrize("target,words", [("DIR", ["is a directory"]),
                                          ("/dev/null", ["empty input"])])
def test_a_trace_that_is_not_a_regular_file_says_what_it_is(
        tmp_path: Path, target: str, words: list[str]) -> None:
    code = design_file(tmp_path, "c.json", "frc", n=4, s=1)
    spec = str(tmp_path) if target == "DIR" else target
    line = refused(run("simulate", code, "--delay", f"trace:{spec}", "--iterations", "3"),
                   *words)
    assert "no such" not in line
