"""``design``/``verify``/``bound`` of sequential, tree and BCC files through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from gctool.cli.exit_codes import ExitCode
from gctool.io import read_code

from helpers import run
from jsondoc import loads


def test_design_sgc_records_params(runner: CliRunner, tmp_path: Path) -> None:
    out = tmp_path / "sr.json"
    r = run("design", "sr-sgc", "-n", "8", "--burst", "1", "--window", "3",
            "--lambda", "3", "-o", str(out), "--json")
    assert r.exit_code == 0, r.stderr
    summary = loads(r.stdout)
    assert summary["report"] == {"delay": 1, "load": 0.25}
    code = read_code(out)
    assert code.scheme == "sr-sgc" and code.params["lambda"] == 3 and code.s == 1
    assert "--lambda 3" in code.provenance["command"]
    assert code.params["schedule"][0]["job"] == "r"


def test_verify_schedule_ok_and_counterexample(runner: CliRunner, tmp_path: Path) -> None:
    out = tmp_path / "m.json"
    run("design", "m-sgc", "-n", "5", "--burst", "1", "--window", "3", "--lambda", "2",
        "--seed", "2", "-o", str(out))
    ok = run("verify", str(out), "--json")
    assert ok.exit_code == ExitCode.OK, ok.stderr
    doc = loads(ok.stdout)
    assert doc["ok"] and doc["exact"] and doc["method"] == "reachable-states"
    assert doc["component"]["ok"] and doc["delay"] == 2
    bad = run("verify", str(out), "-s", "3", "--json")  # λ = 3 instead of 2
    assert bad.exit_code == ExitCode.FINDING
    doc = loads(bad.stdout)
    assert not doc["ok"] and doc["counterexample"]["pattern"]
    assert doc["counterexample"]["schedule"][-1]["deadlines"]
    text = run("verify", str(out), "-s", "3")
    assert text.exit_code == ExitCode.FINDING and "straggler pattern" in text.stdout
    heur = run("verify", str(out), "--max-sets", "50", "--json")
    assert heur.exit_code == ExitCode.OK and loads(heur.stdout)["exact"] is False


def test_verify_and_bound_from_stdin_keep_core_behaviour(runner: CliRunner) -> None:
    sgc = run("design", "sr-sgc", "-n", "6", "--burst", "1", "--window", "2",
              "--lambda", "2").stdout
    r = run("verify", "-", input=sgc)
    assert r.exit_code == 0 and "every deadline" in r.stdout
    r = run("bound", "-", "--json", input=sgc)
    rows = {row["scheme"]: row for row in loads(r.stdout)["rows"]}
    assert rows["sr-sgc"]["load"] == 2 / 6 and rows["gc"]["load"] == 3 / 6
    frc = run("design", "frc", "-n", "6", "-s", "2").stdout
    r = run("verify", "-", "--json", input=frc)  # not ours: the core verify runs
    assert r.exit_code == 0 and loads(r.stdout)["s"] == 2
    r = run("bound", "-", "--json", input=frc)
    assert r.exit_code == 0 and "bounds" in loads(r.stdout)
    r = run("bound", "-", "-n", "3", input=sgc)
    assert r.exit_code == ExitCode.USAGE


def test_bound_check_flags_a_tampered_load(runner: CliRunner, tmp_path: Path) -> None:
    out = tmp_path / "m.json"
    assert run("design", "m-sgc", "-n", "6", "--burst", "2", "--window", "4", "--lambda", "2",
               "-o", str(out)).exit_code == 0
    doc = loads(out.read_text())
    assert run("bound", str(out), "--check").exit_code == 0
    doc["params"]["load"] = 0.1
    out.write_text(json.dumps(doc))
    r = run("bound", str(out), "--check", "--json")
    assert r.exit_code == ExitCode.FINDING and "params.load" in loads(r.stdout)["findings"][0]


def test_tree_and_bcc_through_the_cli(runner: CliRunner, tmp_path: Path) -> None:
    cr = tmp_path / "cr.json"
    r = run("design", "coded-reduce", "--fanout", "3", "--depth", "2", "--tolerance",
            "1", "--seed", "1", "-o", str(cr))
    assert r.exit_code == 0, r.stderr
    r = run("verify", str(cr), "--json")
    doc = loads(r.stdout)
    assert r.exit_code == 0 and doc["parents"] == 4 and doc["leaf_tolerance"] == 3
    flat = run("verify", str(cr), "-s", "3", "--json")  # -s: the flat leaf code
    assert flat.exit_code == 0 and loads(flat.stdout)["s"] == 3
    assert run("verify", str(cr), "-s", "4").exit_code == ExitCode.FINDING
    r = run("bound", str(cr))
    assert r.exit_code == 0 and "ring" in r.stdout
    bcc = tmp_path / "bcc.json"
    run("design", "bcc", "-n", "8", "--batches", "4", "--seed", "3", "-o", str(bcc))
    r = run("bound", str(bcc), "--json")
    rows = {row["scheme"]: row for row in loads(r.stdout)["rows"]}
    assert rows["bcc"]["exact"] == "25/3" and rows["frc"]["expected_wait"] is not None
    assert run("verify", str(bcc)).exit_code in (0, 1)  # plain GC: the core verify


def test_bad_sequential_input_exits_2(runner: CliRunner, tmp_path: Path) -> None:
    r = run("design", "sr-sgc", "-n", "6", "--burst", "2", "--window", "4",
            "--lambda", "2", "--seed", "1")
    assert r.exit_code == ExitCode.USAGE and "B | W-1" in r.stderr
    out = tmp_path / "m.json"
    run("design", "m-sgc", "-n", "5", "--burst", "1", "--window", "3", "--lambda", "2",
        "--seed", "2", "-o", str(out))
    assert run("verify", str(out), "-s", "9").exit_code == ExitCode.USAGE
    doc = loads(out.read_text())
    del doc["params"]["window"]
    out.write_text(json.dumps(doc))
    r = run("verify", str(out))
    assert r.exit_code == ExitCode.USAGE and "params.window" in r.stderr
