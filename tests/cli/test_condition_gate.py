"""verify's ``max_condition``/``strict`` gates decide on the exact worst condition number.

Its screen re-evaluates only the weakest sets, so its figure can be below the true worst (a
lower bound, labelled so): cyclic n = 11, s = 2, seed 4 reports 1291 at stragglers [2, 6],
where the worst over all 55 sets is 1488 at [0, 5] (the record ``design`` makes).  A limit
between the two once passed.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import gctool
import gctool.audit.verify.diagnostics as diagnostics
from gctool.budget import Budget
from gctool.cli.exit_codes import ExitCode
from gctool.codes.conditioning import worst_set
from gctool.errors import BudgetExceeded
from gctool.gates import apply_gates
from gctool.model import GradientCode

from helpers import run
from jsondoc import report

REPORTED, TRUE = 1290.6, 1487.9  # verify's screened figure and the exact worst


@pytest.fixture(scope="module")
def code() -> GradientCode:
    return gctool.design("cyclic", 11, 2, seed=4)


def test_the_screened_figure_is_labelled_a_lower_bound(code: GradientCode) -> None:
    d = gctool.verify(code).diagnostics
    assert d.max_condition_kind == "lower bound" and d.max_residual_kind == "lower bound"
    assert d.max_condition == pytest.approx(REPORTED, rel=1e-3)
    assert d.condition_bound is not None and d.condition_bound > TRUE
    value, stragglers = worst_set(np.asarray(code.B), 2)
    assert value == pytest.approx(TRUE, rel=1e-3) and stragglers == [0, 5]
    assert code.params["worst_condition"] == pytest.approx(value, rel=1e-12)  # design's record


@pytest.mark.parametrize("jobs", [1, 2])
def test_the_gate_computes_the_exact_worst_between_figure_and_bound(
        code: GradientCode, jobs: int) -> None:
    below = gctool.verify(code, max_condition=1400, jobs=jobs)  # passed before
    assert below.ok is False and "1.49e+03 at stragglers [0, 5]" in below.gates["failures"][0]
    d = below.diagnostics
    assert d.max_condition_kind == "exact" and d.max_condition_stragglers == [0, 5]
    assert d.max_condition == d.condition_bound == pytest.approx(TRUE, rel=1e-3)
    above = gctool.verify(code, max_condition=1500, jobs=jobs)
    assert above.ok and above.gates["failures"] == []
    assert gctool.verify(code, max_condition=1e6, jobs=jobs).diagnostics.max_condition_kind \
        == "lower bound"  # the proved bound decides: nothing more is computed


def test_the_cli_agrees_with_the_library(code: GradientCode, tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    gctool.write_code(code, path)
    lib = gctool.verify(code, max_condition=1400)
    for jobs in ("1", "2"):
        r = run("verify", str(path), "--max-condition", "1400", "--json", "-j", jobs)
        assert r.exit_code == ExitCode.FINDING
        cli = report(r.stdout)
        assert cli["diagnostics"]["max_condition"] == lib.diagnostics.max_condition
        assert cli["diagnostics"]["max_condition_kind"] == "exact"
        assert cli["gates"]["failures"] == lib.gates["failures"]
        assert run("verify", str(path), "--max-condition", "1500", "-j", jobs).exit_code == 0
    text = run("verify", str(path)).stdout
    assert "worst condition     1291  (lower bound)" in text


def test_over_budget_the_gate_refuses_rather_than_guesses(code: GradientCode) -> None:
    r = gctool.verify(code)
    with pytest.raises(BudgetExceeded, match="max_work"):
        apply_gates(r, 1400, code=code, budget=Budget().with_(max_work=1e-9))


def test_strict_sees_an_ill_conditioned_set_the_screen_missed(
        code: GradientCode, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(diagnostics, "ILL_CONDITIONED", 1400.0)
    r = gctool.verify(code, strict=True)
    assert r.ok is False and r.diagnostics.max_condition_kind == "exact"
    assert len(r.warnings) == 1 and "1.49e+03 at stragglers [0, 5]" in r.warnings[0]
