"""Output discipline for logs and pipelines: status on stderr only when it is a terminal, --quiet,
no wrapping when stdout is not a terminal; fresh seeds below 2**53; deterministic designs record
no seed."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import gctool
from gctool.seeds import FRESH_SEED_BITS, fresh_seed

from helpers import gctool_process, run
from jsondoc import loads


def test_design_status_goes_to_a_terminal_stderr(runner: CliRunner, tmp_path: Path,
                                                 terminal: None) -> None:
    out = tmp_path / "rs.json"
    r = run("design", "rs", "-n", "5", "-s", "1", "-o", str(out))
    assert r.exit_code == 0 and r.stdout == ""
    assert r.stderr.startswith(f"wrote rs code (n=5, k=5, s=1, real) to {out}")
    assert "  nodes:" in r.stderr  # parameter lines too
    r = run("-q", "design", "rs", "-n", "5", "-s", "1", "-o", str(out))
    assert r.exit_code == 0 and r.stdout == r.stderr == ""


def test_no_status_when_stderr_is_not_a_terminal(runner: CliRunner, tmp_path: Path) -> None:
    out = tmp_path / "rs.json"
    r = run("design", "rs", "-n", "5", "-s", "1", "-o", str(out))
    assert r.exit_code == 0 and r.stdout == r.stderr == "" and out.exists()


def test_deprecation_notes_reach_any_stderr(runner: CliRunner, tmp_path: Path) -> None:
    """A note that asks for action is not status: it is printed on a pipe too."""
    args = ["design", "expander", "--vertices", "10", "-d", "3", "-s", "1", "--seed", "1", "-o",
            str(tmp_path / "e.json")]
    r = run(*args)
    assert r.exit_code == 0, r.stderr
    assert r.stderr == "gctool: note: --vertices is deprecated; use -n\n"
    r = run("-q", *args)
    assert r.exit_code == 0 and r.stderr == ""


def test_every_written_file_is_announced(runner: CliRunner, tmp_path: Path,
                                         terminal: None) -> None:
    code = tmp_path / "frc.json"
    gctool.write_code(gctool.design("frc", 6, 2), code)
    svg, plot, plan = tmp_path / "c.svg", tmp_path / "t.svg", tmp_path / "plan.npz"
    r = run("show", str(code), "--svg", str(svg))
    assert svg.exists() and f"wrote picture to {svg}" in r.stderr
    assert "wrote" not in r.stdout
    r = run("simulate", str(code), "--iterations", "20", "--seed", "1", "--plot",
             str(plot))
    assert plot.exists() and f"wrote plot to {plot}" in r.stderr
    r = run("export", str(code), "-o", str(plan), "--decoders")
    assert plan.exists() and f"wrote {plan} (npz" in r.stderr and r.stdout == ""


def test_tables_do_not_wrap_when_stdout_is_not_a_terminal(runner: CliRunner,
                                                          tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    code = tmp_path / "frc.json"
    gctool.write_code(gctool.design("frc", 6, 2), code)
    r = run("simulate", str(code), "--iterations", "50", "--seed", "1")
    assert r.exit_code == 0
    rows = [line for line in r.stdout.splitlines() if "frc.json" in line]
    assert rows and max(len(line) for line in r.stdout.splitlines()) > 80
    # one line per row: every cell of the row is on the line that names it
    table = r.stdout.splitlines()
    first = table.index(rows[0])
    assert not table[first + 1].strip().startswith("│"), "a row was wrapped"


def test_fresh_seeds_are_exact_in_json_readers(runner: CliRunner) -> None:
    assert FRESH_SEED_BITS == 53
    assert all(0 <= fresh_seed() < 2**53 for _ in range(200))
    doc = loads(run("design", "cyclic", "-n", "6", "-s", "2").stdout)
    assert 0 <= doc["seed"] < 2**53 and float(doc["seed"]) == doc["seed"]
    assert f"--seed {doc['seed']}" in doc["provenance"]["command"]
    # the recorded command rebuilds the same file
    again = run(*doc["provenance"]["command"].split()[1:]).stdout
    assert loads(again)["B"] == doc["B"]


@pytest.mark.parametrize("args", [
    ["expander", "--graph", "petersen", "-s", "2"],
    ["sr-sgc", "-n", "6", "--burst", "1", "--window", "3", "--lambda", "2"],
    ["m-sgc", "-n", "6", "--burst", "1", "--window", "3", "--lambda", "2"],
    ["coded-reduce", "--fanout", "4", "--depth", "2", "--tolerance", "1"],
])
def test_deterministic_designs_record_no_seed(runner: CliRunner, args: list[str]) -> None:
    first = run("design", *args)
    second = run("design", *args)
    assert first.exit_code == 0 and first.stdout == second.stdout  # byte-identical reruns
    doc = loads(first.stdout)
    assert doc["seed"] is None and "--seed" not in doc["provenance"]["command"]


def test_random_designs_still_record_their_seed(runner: CliRunner) -> None:
    doc = loads(run("design", "expander", "--graph", "random-regular", "-d", "3",
                          "-n", "8").stdout)
    assert isinstance(doc["seed"], int)


class _Terminal:
    """A stderr that says it is a terminal and keeps what is written."""

    def __init__(self) -> None:
        import io

        self.buffer = io.StringIO()

    def isatty(self) -> bool:
        return True

    def write(self, text: str) -> int:
        return self.buffer.write(text)

    def flush(self) -> None:
        pass

    def fileno(self) -> int:
        raise OSError("no descriptor")


def test_progress_bar_only_on_a_terminal_and_after_its_delay(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The one progress helper: None when stderr is not a terminal; on a terminal nothing is
    drawn before ``after`` seconds, and a bar (with the label) once they have passed."""

    from gctool.cli.options import progress_bar

    with progress_bar("verify") as update:  # pytest's stderr is not a terminal
        assert update is None
    for after, drawn in ((3600.0, False), (0.0, True)):
        fake = _Terminal()
        monkeypatch.setattr(sys, "stderr", fake)
        with progress_bar("verify", after=after) as update:
            assert update is not None
            update(1, 10)
            update(10, 10)
        monkeypatch.undo()
        assert ("verify" in fake.buffer.getvalue()) == drawn, (after, fake.buffer.getvalue())
    # -q silences it on a terminal too, as it does status lines
    import click

    from gctool.cli.main import cli

    fake = _Terminal()
    monkeypatch.setattr(sys, "stderr", fake)
    with click.Context(cli, obj={"quiet": True}), progress_bar("verify") as update:
        assert update is None
    monkeypatch.undo()
    assert fake.buffer.getvalue() == ""


#: successful runs of every command, in stages: the runs of a stage run side by side and read
#: the files the stages before wrote
QUIET_RUNS = [[
    ["design", "frc", "-n", "6", "-s", "2", "-o", "frc.json"],
    ["design", "sr-sgc", "-n", "8", "--burst", "1", "--window", "3", "--lambda", "3", "-o",
     "sgc.json"],
    ["schema"],
    ["reference", "--path"],
], [
    ["design", "kron", "frc.json", "frc.json", "-o", "kron.json"],
], [
    ["verify", "frc.json", "kron.json"],
    ["verify", "sgc.json", "--json"],
    ["attack", "frc.json", "--curve"],
    ["bound", "frc.json"],
    ["export", "frc.json", "--decoders", "-o", "plan.npz"],
    ["show", "frc.json", "--svg", "frc.svg"],
    ["simulate", "frc.json", "--iterations", "20", "--seed", "1", "--plot", "plot.svg"],
]]


def test_stderr_is_empty_on_success_when_it_is_not_a_terminal(tmp_path: Path) -> None:
    """Real processes with stderr a pipe: status lines are for terminals only, so a script or
    CI log sees stderr only for errors and warnings."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(4) as pool:
        for stage in QUIET_RUNS:
            runs = pool.map(lambda a: gctool_process(*a, cwd=tmp_path, timeout=300), stage)
            for args, r in zip(stage, runs, strict=True):
                assert (r.returncode, r.stderr) == (0, ""), args
    assert {p.name for p in tmp_path.iterdir()} >= {"frc.json", "sgc.json", "kron.json",
                                                     "plan.npz", "frc.svg", "plot.svg"}


def test_status_lines_on_a_terminal_stderr(tmp_path: Path) -> None:
    """stderr a pseudo-terminal: the status line is there (and -q silences it)."""
    import os
    import pty

    for quiet, want in (([], True), (["-q"], False)):
        leader, follower = pty.openpty()
        try:
            r = gctool_process(*quiet, "design", "frc", "-n", "6", "-s", "2", "-o", "frc.json",
                               cwd=tmp_path, timeout=300, stderr=follower)
            os.close(follower)
            seen = b""
            while True:
                try:
                    chunk = os.read(leader, 4096)
                except OSError:  # EIO: every writer has closed the terminal
                    break
                if not chunk:
                    break
                seen += chunk
        finally:
            os.close(leader)
        assert r.returncode == 0 and r.stdout == ""
        assert (b"wrote frc code (n=6, k=6, s=2, real) to frc.json" in seen) == want, seen
