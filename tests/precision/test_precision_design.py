"""``design --precision``: the bound recorded, a warning, a one-line refusal saying what works,
and ``--best-of`` draws ranked by the bound."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gctool.cli.exit_codes import ExitCode
from gctool.codes import design
from gctool.errors import DesignError
from gctool.io import read_code
from gctool.precision import certify

from helpers import run


def _design(tmp_path: Path, *args: str):  # type: ignore[no-untyped-def]
    out = tmp_path / "code.json"
    r = run("design", *args, "-o", str(out), "--json")
    return r, out


def test_the_bound_is_recorded_and_a_large_one_warned(tmp_path: Path) -> None:
    r, out = _design(tmp_path, "cyclic", "-n", "10", "-s", "3", "--seed", "1",
                     "--precision", "float32")
    assert r.exit_code == ExitCode.OK
    rec = read_code(out).params["precision"]
    assert rec["bound"] == pytest.approx(certify(read_code(out), "float32").bound)
    assert rec["stragglers"] == [1, 4, 6] and 0 < rec["observed"] <= rec["bound"]
    # the report's underflow floor, the same value (one computation: certify's)
    assert rec["floor"] == certify(read_code(out), "float32").floor and rec["floor"] > 0
    assert json.loads(r.stdout)["report"]["precision"] == rec
    assert "warning: in float32 the decoded gradient's error may reach" in r.stderr
    assert "--precision float32" in read_code(out).provenance["command"]


def test_refused_above_max_error_in_one_line(tmp_path: Path) -> None:
    r, out = _design(tmp_path, "cyclic", "-n", "10", "-s", "3", "--seed", "1",
                     "--precision", "float32", "--max-error", "1e-3")
    assert r.exit_code == ExitCode.USAGE and not out.exists()
    error = [line for line in r.stderr.splitlines() if "error:" in line]
    assert len(error) == 1 and "straggler set [1, 4, 6]" in error[0]
    for remedy in ("frc", "finite field", "smaller s", "--best-of N"):
        assert remedy in error[0]
    with pytest.raises(DesignError, match="`max_error` 0.001"):
        design("cyclic", 10, 3, seed=1, precision="float32", max_error=1e-3)


def test_frc_passes_and_gf_is_exact(tmp_path: Path) -> None:
    r, out = _design(tmp_path, "frc", "-n", "20", "-s", "4", "--precision", "bfloat16",
                     "--max-error", "1e-2")
    assert r.exit_code == ExitCode.OK and r.stderr == ""
    assert read_code(out).params["precision"]["bound"] < 1e-2
    r, out = _design(tmp_path, "cyclic-mds", "-n", "6", "-s", "2", "--field", "GF(7)",
                     "--precision", "float16", "--max-error", "1e-9")
    assert r.exit_code == ExitCode.OK
    assert read_code(out).params["precision"] == {"precision": "float16", "exact": True,
                                                  "bound": 0.0, "floor": None}


def test_best_of_ranks_draws_by_the_bound() -> None:
    code = design("cyclic", 10, 3, seed=1, best_of=12, precision="float32", max_error=1e-3)
    p = code.params
    assert p["best_of_ranked_by"] == "worst proved float32 error bound"
    ranks = p["best_of_ranks"]
    assert len(ranks) == 12 and ranks[p["best_of_draw"]] == min(ranks)
    assert p["precision"]["bound"] == pytest.approx(min(ranks))
    plain = design("cyclic", 10, 3, seed=1, best_of=12)  # ranked by conditioning
    assert certify(plain, "float32").bound >= min(ranks)


def test_max_error_needs_precision() -> None:
    r = run("design", "frc", "-n", "6", "-s", "2", "--max-error", "1")
    assert r.exit_code == ExitCode.USAGE and "--max-error needs --precision" in r.stderr
