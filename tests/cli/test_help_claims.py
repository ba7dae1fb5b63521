"""What ``--help`` says an option does is what it does (a user reads the help, not the docs):
design's and export's --json, design's --max-error, -j and -q, verify's exit 2, schema's
--json."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from gctool.cli.exit_codes import ExitCode

from helpers import run
from refusals import refused


def _help(*words: str) -> str:
    r = run(*words, "--help")
    assert r.exit_code == 0
    return " ".join(r.stdout.split())


def test_design_and_export_json_is_the_report_of_a_file(runner: CliRunner,
                                                        tmp_path: Path) -> None:
    for words, what in ((["design", "frc", "-n", "6", "-s", "2"], "design"),
                        (["export", str(tmp_path / "f.json")], "export")):
        assert (f"--json With -o FILE: write the report on the {what} as one JSON document to "
                f"stdout instead of text (with -o -, the {what} itself is the JSON on stdout: "
                "refused)") in _help(*words[:2] if what == "design" else words[:1])
    out = tmp_path / "f.json"
    assert run("design", "frc", "-n", "6", "-s", "2", "-o", str(out), "--json").exit_code == 0
    refused(run("design", "frc", "-n", "6", "-s", "2", "--json"), "--json", "-o -")
    refused(run("export", str(out), "-o", "-", "--json"), "--json", "-o -")
    assert run("export", str(out), "-o", str(tmp_path / "p.json"), "--json").exit_code == 0


def test_design_max_error_refuses_the_design(runner: CliRunner, tmp_path: Path) -> None:
    """The audits' --max-error is a gate (exit 1); design's refuses the design (exit 2, no
    file), as its help says."""
    text = _help("design", "cyclic")
    assert "--max-error E With --precision: refuse the design (exit 2, no file written)" in text
    assert "-j, --jobs INTEGER RANGE Jobs of the conditioning screen of every straggler " \
           "set" in text
    assert "Worker processes" not in text  # its own words, not the audits' option
    assert "-q, --quiet No status lines on stderr" in text
    out = tmp_path / "c.json"
    refused(run("design", "cyclic", "-n", "8", "-s", "2", "--seed", "1", "--precision",
                "float16", "--max-error", "1e-9", "-o", str(out)), "above --max-error 1e-09")
    assert not out.exists()
    assert "exit 1 when the proved bound exceeds E" in _help("verify")


def test_verify_help_says_what_exits_2(runner: CliRunner, tmp_path: Path) -> None:
    text = _help("verify")
    assert ("2 over budget, on a bad option or on an unreadable file (one stderr line per such "
            "file; the others are still verified)") in text
    assert "exit status and report, or its error (docs/ci.md)" in text
    assert run("verify", str(tmp_path / "missing.json"), "--json").exit_code == ExitCode.USAGE


def test_schema_json_is_the_list(runner: CliRunner) -> None:
    assert "--json Without NAME: the list of schemas as one JSON document" in _help("schema")
    assert run("schema", "--json").exit_code == 0
    refused(run("schema", "code", "--json"), "--json")
