"""Output discipline for logs and pipelines: status on stderr, --quiet, no wrapping when stdout
is not a terminal; fresh seeds below 2**53; deterministic designs record no seed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import gctool
from gctool.cli.main import cli
from gctool.seeds import FRESH_SEED_BITS, fresh_seed


def _run(runner: CliRunner, *args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(cli, list(args), catch_exceptions=False)


def test_design_status_goes_to_stderr(runner: CliRunner, tmp_path: Path) -> None:
    out = tmp_path / "rs.json"
    r = _run(runner, "design", "rs", "-n", "5", "-s", "1", "-o", str(out))
    assert r.exit_code == 0 and r.stdout == ""
    assert r.stderr.startswith(f"wrote rs code (n=5, k=5, s=1, real) to {out}")
    assert "  nodes:" in r.stderr  # parameter lines too
    r = _run(runner, "-q", "design", "rs", "-n", "5", "-s", "1", "-o", str(out))
    assert r.exit_code == 0 and r.stdout == r.stderr == ""


def test_every_written_file_is_announced(runner: CliRunner, tmp_path: Path) -> None:
    code = tmp_path / "frc.json"
    gctool.write_code(gctool.design("frc", 6, 2), code)
    svg, plot, plan = tmp_path / "c.svg", tmp_path / "t.svg", tmp_path / "plan.npz"
    r = _run(runner, "show", str(code), "--svg", str(svg))
    assert svg.exists() and f"wrote picture to {svg}" in r.stderr
    assert "wrote" not in r.stdout
    r = _run(runner, "simulate", str(code), "--iterations", "20", "--seed", "1", "--plot",
             str(plot))
    assert plot.exists() and f"wrote plot to {plot}" in r.stderr
    r = _run(runner, "export", str(code), "-o", str(plan), "--decoders")
    assert plan.exists() and r.stderr.startswith(f"wrote {plan} (npz") and r.stdout == ""


def test_tables_do_not_wrap_when_stdout_is_not_a_terminal(runner: CliRunner,
                                                          tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    code = tmp_path / "frc.json"
    gctool.write_code(gctool.design("frc", 6, 2), code)
    r = _run(runner, "simulate", str(code), "--iterations", "50", "--seed", "1")
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
    doc = json.loads(_run(runner, "design", "cyclic", "-n", "6", "-s", "2").stdout)
    assert 0 <= doc["seed"] < 2**53 and float(doc["seed"]) == doc["seed"]
    assert f"--seed {doc['seed']}" in doc["provenance"]["command"]
    # the recorded command rebuilds the same file
    again = _run(runner, *doc["provenance"]["command"].split()[1:]).stdout
    assert json.loads(again)["B"] == doc["B"]


@pytest.mark.parametrize("args", [
    ["expander", "--graph", "petersen", "-s", "2"],
    ["sr-sgc", "-n", "6", "--burst", "1", "--window", "3", "--lambda", "2"],
    ["m-sgc", "-n", "6", "--burst", "1", "--window", "3", "--lambda", "2"],
    ["coded-reduce", "--fanout", "4", "--depth", "2", "--tolerance", "1"],
])
def test_deterministic_designs_record_no_seed(runner: CliRunner, args: list[str]) -> None:
    first = _run(runner, "design", *args)
    second = _run(runner, "design", *args)
    assert first.exit_code == 0 and first.stdout == second.stdout  # byte-identical reruns
    doc = json.loads(first.stdout)
    assert doc["seed"] is None and "--seed" not in doc["provenance"]["command"]


def test_random_designs_still_record_their_seed(runner: CliRunner) -> None:
    doc = json.loads(_run(runner, "design", "expander", "--graph", "random-regular", "-d", "3",
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
    import sys

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
