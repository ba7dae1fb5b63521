"""Audit commands over several files (FILE...), CI gates, and -q/--quiet."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import gctool
from gctool.algebra.fields import parse_field
from gctool.cli.exit_codes import ExitCode, worst
from gctool.cli.main import cli
from gctool.model import GradientCode

from helpers import run
from jsondoc import envelope, report


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    """Two good codes (s = 2), one that tolerates only 1, one unreadable file."""
    out = {}
    for name, code in (("frc", gctool.design("frc", 6, 2)),
                       ("crc", gctool.design("cyclic", 8, 2, seed=1)),
                       ("weak", gctool.design("frc", 6, 1))):
        path = tmp_path / f"{name}.json"
        gctool.write_code(code, path)
        out[name] = str(path)
    bad = tmp_path / "bad.json"
    bad.write_text('{"x": 1}')
    out["bad"] = str(bad)
    return out


def test_worst_is_the_largest_status() -> None:
    assert worst([]) == ExitCode.OK
    assert worst([0, 1, 0]) == ExitCode.FINDING
    assert worst([1, 2, 0]) == ExitCode.USAGE


def test_verify_several_files_one_line_each(runner: CliRunner, files: dict[str, str]) -> None:
    r = run("verify", files["frc"], files["crc"])
    assert r.exit_code == 0
    lines = r.stdout.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith(files["frc"] + ": OK: tolerates any 2")
    assert lines[1].startswith(files["crc"] + ": OK: tolerates any 2")


def test_verify_worst_status_and_details_of_failures(runner: CliRunner,
                                                     files: dict[str, str]) -> None:
    r = run("verify", files["frc"], files["weak"], "-s", "2")
    assert r.exit_code == ExitCode.FINDING
    assert f"{files['weak']}: FAIL: does not tolerate 2" in r.stdout
    assert "    counterexample: stragglers" in r.stdout  # details, indented, for the failure
    assert r.stdout.count("counterexample") == 1
    assert r.stdout.count("does not tolerate") == 1  # the headline is not repeated in the details
    r = run("verify", files["weak"], files["bad"], files["frc"], "-s", "2")
    assert r.exit_code == ExitCode.USAGE  # an unreadable file is worse than a finding
    assert f"{files['frc']}: OK" in r.stdout  # the run went on after the bad file
    assert r.stderr.count("\n") == 1 and r.stderr.startswith(f"gctool: error: {files['bad']}")
    assert files["bad"] not in r.stdout  # the error is printed once, on stderr


def test_verify_json_of_several_files_is_one_document(runner: CliRunner,
                                                      files: dict[str, str]) -> None:
    r = run("verify", files["frc"], files["weak"], files["bad"], "-s", "2", "--json")
    doc = envelope(r.stdout)
    assert r.exit_code == doc["exit_code"] == ExitCode.USAGE and doc["ok"] is False
    assert doc["command"] == "verify" and [e["file"] for e in doc["files"]] == [
        files["frc"], files["weak"], files["bad"]]
    assert [e["exit_code"] for e in doc["files"]] == [0, 1, 2]
    assert doc["files"][0]["report"]["ok"] is True
    assert doc["files"][1]["report"]["counterexample"] is not None
    assert "error" in doc["files"][2] and "report" not in doc["files"][2]


def test_one_file_gives_the_same_envelope(runner: CliRunner, files: dict[str, str]) -> None:
    """The shape does not depend on how many files a glob matched: one good file, one weak
    file and one unreadable file each give the envelope, naming the file and its status."""
    for name, status in (("frc", 0), ("weak", 1), ("bad", 2)):
        r = run("verify", files[name], "-s", "2", "--json")
        doc = envelope(r.stdout)
        assert r.exit_code == doc["exit_code"] == status, r.stderr
        assert doc["files"][0]["file"] == files[name]
        assert doc["files"][0]["exit_code"] == status
    assert r.stderr.count("\n") == 1  # the unreadable file: its line on stderr too


def test_one_file_in_hook_mode_is_named(runner: CliRunner, files: dict[str, str]) -> None:
    """pre-commit passes one staged file to 'gctool verify -q': the failure names it; without
    -q one file prints its full report."""
    r = run("verify", "-q", files["weak"], "-s", "2")
    assert r.exit_code == 1 and r.stdout.startswith(f"{files['weak']}: FAIL: does not tolerate")
    r = run("verify", files["weak"], "-s", "2")
    assert r.stdout.startswith("FAIL: does not tolerate 2 stragglers")


def test_stdin_only_once(runner: CliRunner, files: dict[str, str]) -> None:
    r = runner.invoke(cli, ["verify", "-", "-"], input=Path(files["frc"]).read_text())
    assert r.exit_code == ExitCode.USAGE and "once" in r.stderr


@pytest.mark.parametrize("name,s", [("frc", 2), ("frc", 3), ("crc", 2), ("crc", 3),
                                    ("weak", 1), ("weak", 2)])
def test_require_tolerance_agrees_with_verify(runner: CliRunner, files: dict[str, str],
                                              name: str, s: int) -> None:
    """'attack --threshold --require-tolerance S' passes exactly when 'verify -s S' does."""
    gate = run("attack", files[name], "--threshold", "--require-tolerance", str(s))
    check = run("verify", files[name], "-s", str(s))
    assert gate.exit_code == check.exit_code
    noun = "straggler" if s == 1 else "stragglers"  # 1 straggler, 2 stragglers
    assert f"tolerates >= {s} {noun} (threshold >= {s + 1})" in gate.stdout


def test_threshold_output_says_what_is_tolerated(runner: CliRunner,
                                                 files: dict[str, str]) -> None:
    r = run("attack", files["frc"], "--threshold")
    assert "threshold: 3 stragglers" in r.stdout and "tolerates up to 2 stragglers" in r.stdout


def test_require_is_a_deprecated_threshold_gate(runner: CliRunner,
                                                files: dict[str, str]) -> None:
    old = run("attack", files["frc"], "--threshold", "--require", "3")
    new = run("attack", files["frc"], "--threshold", "--require-threshold", "3")
    assert old.exit_code == new.exit_code == 0
    assert "deprecated" in old.stderr and new.stderr == ""
    assert "--require " not in run("attack", "--help").stdout
    r = run("attack", files["frc"], "--threshold", "--require-tolerance", "2",
             "--require-threshold", "3")
    assert r.exit_code == ExitCode.USAGE


def test_attack_and_bound_take_several_files(runner: CliRunner, files: dict[str, str]) -> None:
    r = run("attack", files["frc"], files["weak"], "--threshold",
             "--require-tolerance", "2")
    assert r.exit_code == ExitCode.FINDING
    assert f"{files['frc']}: threshold 3, tolerates up to 2" in r.stdout
    assert f"{files['weak']}: FAIL: threshold 2, tolerates up to 1" in r.stdout
    r = run("bound", files["frc"], files["crc"], "--check", "--json")
    doc = envelope(r.stdout)
    assert r.exit_code == 0 and len(doc["files"]) == 2
    assert run("bound", files["frc"], files["weak"], "-s", "2",
                "--check").exit_code == ExitCode.FINDING


def _ill(path: Path, eps: float) -> str:
    """n = 3, k = 2, s = 1: any two rows decode, with condition number about 4/eps."""
    B = np.array([[1, 1], [1, 1 + eps], [1, 1 - eps]])
    gctool.write_code(GradientCode(B, parse_field("real"), 1, "custom"), path)
    return str(path)


def test_max_condition_gate(runner: CliRunner, tmp_path: Path, files: dict[str, str]) -> None:
    ill = _ill(tmp_path / "ill.json", 1e-4)
    cond = report(run("verify", ill, "--json").stdout)["diagnostics"][
        "max_condition"]
    assert 1e4 < cond < 1e5
    assert run("verify", ill, "--max-condition", "1e5").exit_code == 0
    r = run("verify", ill, "--max-condition", "1e3", "--json")
    assert r.exit_code == ExitCode.FINDING
    doc = envelope(r.stdout)
    gates = doc["files"][0]["report"]["gates"]
    assert gates["max_condition"] == 1e3 and "exceeds" in gates["failures"][0]
    assert doc["ok"] is False and doc["files"][0]["report"]["ok"] is False  # jq -e .ok fails
    text = run("verify", ill, "--max-condition", "1e3")
    assert text.stdout.startswith("FAIL (gate): tolerates any 1 straggler ")
    line = run("verify", "-q", ill, files["frc"], "--max-condition", "1e3").stdout
    assert line.startswith(f"{ill}: FAIL (gate): tolerates any 1") and files["frc"] not in line
    assert line.count("tolerates any 1") == 1  # the details below do not repeat the headline
    gf = tmp_path / "gf.json"  # exact arithmetic: no condition number, the gate passes
    gctool.write_code(gctool.design("cyclic-mds", 6, 2, field="GF(7)"), gf)
    assert run("verify", str(gf), "--max-condition", "1").exit_code == 0


def test_strict_fails_on_numerical_warnings(runner: CliRunner, tmp_path: Path) -> None:
    ill = _ill(tmp_path / "ill.json", 1e-9)
    plain = run("verify", ill)
    assert plain.exit_code == 0 and "warning:" in plain.stdout
    strict = run("verify", ill, "--strict")
    assert strict.exit_code == ExitCode.FINDING and "gate failed: --strict" in strict.stdout
    good = _ill(tmp_path / "good.json", 0.5)
    assert run("verify", good, "--strict").exit_code == 0


def test_quiet_prints_only_findings(runner: CliRunner, files: dict[str, str]) -> None:
    r = run("verify", "-q", files["frc"], files["weak"], "-s", "2")
    assert r.exit_code == ExitCode.FINDING
    assert files["frc"] not in r.stdout and files["weak"] in r.stdout
    r = run("-q", "verify", files["frc"])
    assert r.exit_code == 0 and r.stdout == ""


@pytest.mark.parametrize("command", ["verify", "attack", "bound"])
def test_several_unreadable_files_one_line_each_and_one_document(
        runner: CliRunner, files: dict[str, str], tmp_path: Path, command: str) -> None:
    """A batch (a CI glob, pre-commit's staged files) with several files that cannot be read:
    each gets its own line on stderr, in order, naming it (a line per bad input: which file
    is wrong is the message), the run goes on with the others, the exit status is 2 (the
    worst), and --json still writes its one complete document, an ``error`` entry for each
    bad file (docs/ci.md, the machine contract)."""
    missing, folder = str(tmp_path / "missing.json"), tmp_path / "folder"
    folder.mkdir()
    bad = [missing, files["bad"], str(folder)]
    for as_json in ([], ["--json"]):
        r = run(command, bad[0], files["frc"], *bad[1:], *as_json)
        assert r.exit_code == ExitCode.USAGE, r.output
        lines = r.stderr.splitlines()
        assert [line.split(": ")[:3] for line in lines] == [
            ["gctool", "error", path] for path in bad], r.stderr
        assert "Traceback" not in r.output
        if as_json:
            doc = envelope(r.stdout)
            assert [e["file"] for e in doc["files"]] == [bad[0], files["frc"], *bad[1:]]
            assert [e["exit_code"] for e in doc["files"]] == [2, 0, 2, 2]
            assert all("error" in e and "report" not in e
                       for e in doc["files"] if e["file"] in bad)
        else:
            assert all(path not in r.stdout for path in bad)  # each error printed once


def test_a_usage_error_writes_no_document(runner: CliRunner, files: dict[str, str]) -> None:
    """A wrong command line is refused before any file is read: one line on stderr, exit 2,
    and nothing on stdout, --json or not (there is no file to report on)."""
    r = run("verify", files["frc"], files["bad"], "--json", "--tol", "-1")
    assert r.exit_code == ExitCode.USAGE and r.stdout == ""
    assert len(r.stderr.splitlines()) == 1 and "--tol" in r.stderr
