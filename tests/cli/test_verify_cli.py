"""``gctool verify`` through the CLI: exit codes, JSON keys, stderr discipline, interrupts."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from gctool import limits
from gctool.algebra.fields import parse_field
from gctool.cli.exit_codes import ExitCode
from gctool.io import write_code
from gctool.model import GradientCode

from corpus import GF7_B
from helpers import run
from jsondoc import loads
from refusals import refused


@pytest.fixture
def gf7_file(tmp_path: Path) -> Path:
    path = tmp_path / "gf7.json"
    write_code(GradientCode(np.array(GF7_B), parse_field("GF(7)"), 2, "cyclic-mds"), path)
    return path


@pytest.fixture
def crc_file(tmp_path: Path, runner: CliRunner) -> Path:
    path = tmp_path / "crc.json"
    run("design", "cyclic", "-n", "10", "-s", "3", "--seed", "2", "-o", str(path))
    return path


def test_ok_json_has_old_and_new_keys(runner: CliRunner, crc_file: Path) -> None:
    r = run("verify", str(crc_file), "--json")
    assert r.exit_code == ExitCode.OK and r.stderr == ""
    doc = loads(r.stdout)
    for key in ("ok", "s", "n", "k", "field", "scheme", "counterexample", "checked", "total",
                "exact", "method", "arithmetic", "tolerance", "reason", "diagnostics",
                "elapsed_s", "verdict", "kernel", "jobs", "represented", "reduction",
                "certificate", "estimate", "warnings", "sample"):
        assert key in doc
    assert doc["ok"] is True and doc["verdict"] == "ok" and doc["represented"] == 120
    diag = doc["diagnostics"]
    assert diag["max_condition_stragglers"] and diag["max_decoder_norm_stragglers"]
    assert diag["condition_bound"] >= diag["max_condition"]


def test_counterexample_exit_1_and_text(runner: CliRunner, gf7_file: Path) -> None:
    r = run("verify", str(gf7_file), "-s", "3", "--method", "exhaustive")
    assert r.exit_code == ExitCode.FINDING
    assert "counterexample: stragglers [0, 1, 2]" in r.stdout and "FAIL" in r.stdout


def test_certificate_and_structural_method(runner: CliRunner, gf7_file: Path,
                                          crc_file: Path) -> None:
    r = run("verify", str(gf7_file), "--method", "structural", "--json")
    doc = loads(r.stdout)
    assert r.exit_code == 0 and doc["method"] == "certificate:bch" and doc["certificate"]
    r = run("verify", str(gf7_file), "-s", "1", "--method", "exhaustive", "--json")
    assert loads(r.stdout)["method"] == "exhaustive"
    r = run("verify", str(gf7_file), "-s", "3", "--method", "structural")
    assert r.exit_code == ExitCode.FINDING  # cheap checks still find counterexamples
    r = run("verify", str(crc_file), "--method", "structural")
    assert r.exit_code == ExitCode.USAGE and "certificate" in r.stderr


def test_sample_is_not_certified(runner: CliRunner, crc_file: Path) -> None:
    r = run("verify", str(crc_file), "--sample", "20", "--seed", "4", "--json")
    doc = loads(r.stdout)
    assert r.exit_code == ExitCode.FINDING and doc["verdict"] == "inconclusive"
    assert doc["ok"] is False and doc["exact"] is False and doc["sample"]["seed"] == 4
    text = run("verify", str(crc_file), "--sample", "20", "--seed", "4")
    assert "NOT CERTIFIED" in text.stdout and "heuristic" in text.stdout


def test_a_sample_names_its_seed_so_it_can_be_redone(runner: CliRunner, crc_file: Path) -> None:
    """The text of a sample without --seed says which seed was drawn (the JSON's sample.seed),
    and --seed with it redoes the same sample."""
    import re

    first = run("verify", str(crc_file), "--sample", "30").stdout
    found = re.search(r" jobs?, seed (\d+)\) in ", first)
    assert found, first
    again = run("verify", str(crc_file), "--sample", "30", "--seed", found.group(1)).stdout

    def timeless(text: str) -> str:
        return re.sub(r" in [0-9.]+s", "", text)

    assert timeless(again) == timeless(first)


def test_budget_refusal_lists_options(runner: CliRunner, crc_file: Path) -> None:
    r = run("verify", str(crc_file), "--max-sets", "10")
    assert r.exit_code == ExitCode.USAGE and r.stdout == ""
    assert "--sample" in r.stderr and "--max-sets" in r.stderr and "estimated at" in r.stderr
    assert "`" not in r.stderr  # the library's parameter names are the CLI's flags here


def test_jobs_do_not_change_the_report(runner: CliRunner, crc_file: Path) -> None:
    docs = []
    for jobs in ("1", "2"):
        doc = loads(run("verify", str(crc_file), "-s", "4", "--jobs", jobs,
                             "--json").stdout)
        for key in ("elapsed_s", "estimate", "jobs"):
            doc.pop(key)
        docs.append(doc)
    assert docs[0] == docs[1]


def test_exact_flag(runner: CliRunner, tmp_path: Path) -> None:
    path = tmp_path / "frc.json"
    run("design", "frc", "-n", "6", "-s", "2", "-o", str(path))
    doc = loads(run("verify", str(path), "--exact", "--json").stdout)
    assert doc["ok"] and doc["arithmetic"] == "rational" and doc["tolerance"] is None
    r = run("verify", str(path), "--exact", "-s", "3")
    assert r.exit_code == ExitCode.FINDING


def test_interrupt_is_exit_130_with_summary(runner: CliRunner, crc_file: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from gctool.audit import sweep

    def interrupt(self: object, task: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(sweep.SweepWorker, "run", interrupt)
    r = run("verify", str(crc_file))
    assert r.exit_code == ExitCode.INTERRUPTED and r.stdout == ""
    assert "interrupted after checking 0 of 120 straggler sets" in r.stderr


def test_help_lists_the_new_options(runner: CliRunner) -> None:
    r = run("verify", "--help")
    for opt in ("--method", "--kernel", "--jobs", "--sample", "--seed", "--exact", "--max-sets"):
        assert opt in r.stdout


def test_cli_defaults_and_choices_are_the_library_s() -> None:
    """The CLI repeats no default and no choice: --method and --kernel are the request's,
    --max-sets is an explicit cap (none by default) and --max-work the budget's time."""
    from gctool.audit.verify.run import Run
    from gctool.budget import Budget
    from gctool.cli.verify import verify as command
    from gctool.request import VERIFY_KERNELS, VERIFY_METHODS, VerifyRequest

    options = {p.name: p for p in command.params}
    assert options["max_sets"].default is None and Budget().max_sets is None
    assert options["max_work"].default is None and Budget().max_work == limits.DEFAULT_MAX_WORK
    for name, choices in (("method", VERIFY_METHODS), ("kernel", VERIFY_KERNELS)):
        assert options[name].default == getattr(VerifyRequest(), name)
        assert tuple(options[name].type.choices) == choices  # type: ignore[attr-defined]
    run = Run(GradientCode(np.eye(3), parse_field("real"), 0, "uncoded"),
              VerifyRequest(max_sets=7), 0, 1)
    assert run.budget.max_sets == 7


def test_max_sets_help_names_the_caps_it_replaces() -> None:
    """Without --max-sets only the time budget limits straggler sets, but schedules, trees,
    partial-work profiles and frames have default caps, which --max-sets replaces: the help
    says so, with the values the library uses."""
    for command in ("verify", "attack"):
        text = " ".join(run(command, "--help").stdout.split())
        for cap in (limits.DEFAULT_SCHEDULE_TRANSITIONS, limits.DEFAULT_MAX_PROFILES,
                    limits.SPECTRUM_MAX_SETS):
            assert f"{cap:,}" in text, (command, cap)


@pytest.mark.parametrize("command,line", [
    (["verify", "FRC"], "OK: tolerates any 1 straggler "),
    (["verify", "FRC", "-s", "2"], "FAIL: does not tolerate 2 stragglers "),
    (["attack", "FRC", "--threshold"], "threshold: 2 stragglers push the error above 0 (raw "
                                       "squared error); tolerates up to 1 straggler\n"),
    (["attack", "FRC", "--threshold", "--require-tolerance", "1"], "tolerates >= 1 straggler "),
    (["attack", "FRC", "-s", "1"], "worst 1 straggler: ["),
    (["verify", "MM", "--partial", "1"], "OK: decodes with up to 1 partition of missing work "),
    (["verify", "MM", "--partial", "2"], "OK: decodes with up to 2 partitions of missing work "),
])
def test_one_of_a_count_is_singular(runner: CliRunner, tmp_path: Path, command: list[str],
                                    line: str) -> None:
    """'1 straggler', '1 partition': a count of one takes the singular (gctool.wording)."""
    files = {"FRC": tmp_path / "frc.json", "MM": tmp_path / "mm.json"}
    run("design", "frc", "-n", "4", "-s", "1", "-o", str(files["FRC"]))
    run("design", "cyclic", "-n", "6", "-s", "2", "--seed", "1", "--order", "rotated", "-o",
        str(files["MM"]))
    r = run(*[str(files.get(a, a)) for a in command])
    assert line in r.stdout, r.stdout


def test_a_seed_without_anything_to_seed_is_refused(runner: CliRunner, crc_file: Path,
                                                    tmp_path: Path) -> None:
    """--seed seeds --sample and --precision's gradient draws (and a schedule's adversary): on a
    plain run it was ignored without a word."""
    line = refused(run("verify", str(crc_file), "--seed", "3"), "--seed", "--sample",
                   "--precision")
    assert line == "gctool: error: --seed applies to --sample and --precision"
    assert run("verify", str(crc_file), "--seed", "3", "--sample", "20").exit_code == 1
    assert run("verify", str(crc_file), "--seed", "3", "--precision", "float32").exit_code == 0
    schedule = tmp_path / "m8.json"  # verify's adversarial roll-outs draw from the seed
    assert run("design", "m-sgc", "-n", "8", "--burst", "1", "--window", "3", "--lambda", "3",
               "-o", str(schedule)).exit_code == 0
    assert run("verify", str(schedule), "--seed", "3").exit_code == 0
