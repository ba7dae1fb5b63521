"""``--precision`` and ``--max-error`` through the CLI and the library: exit codes, the worst
set, JSON, refusals, jobs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import gctool.api as api
from gctool.cli.exit_codes import ExitCode
from gctool.codes import design
from gctool.io import write_code
from gctool.precision import certify

from helpers import run
from jsondoc import loads


def _file(tmp_path: Path, scheme: str, *args: str) -> Path:
    path = tmp_path / f"{scheme}.json"
    r = run("design", scheme, *args, "-o", str(path))
    assert r.exit_code == 0, r.output
    return path


@pytest.mark.slow
@pytest.mark.parametrize("scheme,args,code", [
    ("rs", ("-n", "20", "-k", "20", "-s", "10"), ExitCode.FINDING),
    ("cyclic", ("-n", "22", "-s", "10", "--seed", "1"), ExitCode.FINDING),
    ("frc", ("-n", "20", "-s", "4"), ExitCode.OK),
])
def test_the_issue_examples(tmp_path: Path, scheme: str, args: tuple[str, ...], code: int
                            ) -> None:
    path = _file(tmp_path, scheme, *args)
    r = run("verify", str(path), "--precision", "float32", "--max-error", "1e-3",
            "--json", "--max-work", "2min")
    assert r.exit_code == code, r.output
    p = loads(r.stdout)["precision"]
    assert p["precision"] == "float32" and p["max_error"] == 1e-3
    assert len(p["stragglers"]) == int(args[-1] if scheme != "cyclic" else 10)
    if code == ExitCode.FINDING:
        assert p["bound"] > 1e-3 and p["over"] > 0 and not p["ok"]
        gates = loads(r.stdout)["gates"]
        assert str(p["stragglers"]) in gates["failures"][0]
    else:
        assert p["bound"] < 1e-5 and p["over"] == 0 and p["ok"]
    emp = p["empirical"]
    assert emp["exceeds_bound"] == 0 and 0 < emp["max_error"] <= p["bound"]


def test_text_output_names_the_worst_set_and_the_gate(tmp_path: Path) -> None:
    path = _file(tmp_path, "cyclic", "-n", "10", "-s", "3", "--seed", "1")
    r = run("verify", str(path), "--precision", "bfloat16", "--max-error", "0.01")
    assert r.exit_code == ExitCode.FINDING
    assert "precision bfloat16 (float32 accumulation): proved error <=" in r.stdout
    assert "gate failed: --max-error 0.01:" in r.stdout and "observed" in r.stdout
    # without --max-error: informational, a warning above 1%
    r = run("verify", str(path), "--precision", "bfloat16")
    assert r.exit_code == ExitCode.OK and "warning: in bfloat16" in r.stdout
    r = run("verify", str(path), "--precision", "bfloat16", "--strict")
    assert r.exit_code == ExitCode.FINDING


def test_gf_codes_say_they_are_exact(tmp_path: Path) -> None:
    path = _file(tmp_path, "cyclic-mds", "-n", "6", "-s", "2", "--field", "GF(7)")
    r = run("verify", str(path), "--precision", "float16", "--max-error", "1e-9",
            "--json")
    assert r.exit_code == ExitCode.OK
    p = loads(r.stdout)["precision"]
    assert p["exact"] and p["bound"] == 0 and "exact arithmetic over GF(7)" in p["reason"]


def test_refusals_are_one_line(tmp_path: Path) -> None:
    path = _file(tmp_path, "frc", "-n", "6", "-s", "2")
    r = run("verify", str(path), "--max-error", "1e-3")
    assert r.exit_code == ExitCode.USAGE
    assert r.stderr.count("\n") == 1 and "--max-error needs --precision" in r.stderr
    r = run("verify", str(path), "--precision", "float8")
    assert r.exit_code == ExitCode.USAGE
    r = run("verify", str(path), "--precision", "float32", "--max-error", "0")
    assert r.exit_code == ExitCode.USAGE


def test_budget_is_checked_before_verify_runs(tmp_path: Path) -> None:
    path = _file(tmp_path, "cyclic", "-n", "22", "-s", "10", "--seed", "1")
    r = run("verify", str(path), "--precision", "float32", "--max-work", "1ms")
    assert r.exit_code == ExitCode.USAGE and "precision bound" in r.stderr
    assert r.stdout == ""


def test_library_matches_cli_and_jobs_do_not_change_the_report() -> None:
    code = design("cyclic", 11, 3, seed=2)
    one = certify(code, "float16", max_error=0.1, jobs=1).to_dict()
    two = certify(code, "float16", max_error=0.1, jobs=2).to_dict()
    assert one == two
    report = api.verify(code, precision="float16", max_error=0.1)
    assert report.precision.to_dict() == one


def test_the_library_names_parameters() -> None:
    from gctool.errors import InvalidInput

    code = design("frc", 6, 2)
    with pytest.raises(InvalidInput, match="`max_error` needs `precision`"):
        api.verify(code, max_error=1e-3)
    with pytest.raises(InvalidInput, match="`precision` must be one of"):
        certify(code, "float64")


def test_unbounded_when_a_coefficient_overflows(tmp_path: Path) -> None:
    from gctool.algebra.fields import parse_field
    from gctool.model import GradientCode

    B = np.kron(np.eye(2), np.ones((3, 3))) * 1e5  # 1e5 > float16's largest, 65504
    code = GradientCode(B, parse_field("real"), 2)
    r = certify(code, "float16", max_error=1.0)
    assert r.bound is None and not r.ok and "beyond float16's range" in r.reason
    path = tmp_path / "big.json"
    write_code(code, path)
    out = run("verify", str(path), "--precision", "float16", "--json")
    assert loads(out.stdout)["precision"]["bound"] is None


def test_attack_worst_case_with_precision(tmp_path: Path) -> None:
    path = _file(tmp_path, "cyclic", "-n", "10", "-s", "3", "--seed", "1")
    r = run("attack", str(path), "-s", "3", "--precision", "float32",
            "--max-error", "1e-3", "--json")
    assert r.exit_code == ExitCode.FINDING
    doc = loads(r.stdout)
    assert doc["ok"] is False and doc["precision"]["stragglers"] == [1, 4, 6]
    assert "not certified in float32" in doc["reason"]
    r = run("attack", str(path), "-s", "3", "--precision", "float32",
            "--max-error", "0.1")
    assert r.exit_code == ExitCode.OK and "proved error <=" in r.stdout
    r = run("attack", str(path), "-s", "3", "--json")
    assert loads(r.stdout)["precision"] is None  # the key of every attack mode
    for mode in (["--threshold"], ["--curve"]):
        r = run("attack", str(path), *mode, "--precision", "float32")
        assert r.exit_code == ExitCode.USAGE and r.stderr.count("\n") == 1


def test_schemes_with_their_own_audit_refuse_precision() -> None:
    from gctool.errors import InvalidInput

    schedule = design("sr-sgc", n=8, burst=1, window=3, lam=3)
    with pytest.raises(InvalidInput, match="`precision` applies to codes given by their "
                                           "encoding matrix"):
        api.verify(schedule, precision="float32")
