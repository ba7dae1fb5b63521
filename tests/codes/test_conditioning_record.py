"""A real/complex design's conditioning record is labelled exact only when it is the worst over
every straggler set: ``verify --strict``'s figure (the screen of every set, made exact as the
gate makes it, within the run's budget).  A screen whose exact worst the budget refuses is
labelled a lower bound, a sample an estimate (with its sets); the CLI names either in one
warning line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import gctool
from gctool.budget import Budget
from gctool.cli.params import in_cli_terms
from gctool.codes import conditioning, design
from gctool.codes.conditioning import worst_set
from gctool.io import code_bytes

from helpers import run

#: 38,760 sets, beyond the exact enumeration: screened by verify's enumeration in about 0.1 s
SCREENED = {"n": 20, "s": 6, "seed": 2}
ARGS = ["design", "cyclic", "-n", "20", "-s", "6", "--seed", "2"]


@pytest.fixture(autouse=True)
def fresh() -> None:
    conditioning._SEEN.clear()  # a record made before costs nothing: make each one here


def _strict(code: gctool.GradientCode) -> gctool.VerifyResult:
    return gctool.verify(code, strict=True)


def test_a_screened_record_is_verify_stricts_figure() -> None:
    code = design("cyclic", **SCREENED)
    # plain verify's figure is a lower bound (the weakest sets re-evaluated, 2.89e7, below its
    # proved bound 7.11e8); the record is the exact worst over every set, verify --strict's
    plain, strict = gctool.verify(code).diagnostics, _strict(code).diagnostics
    assert plain.max_condition_kind == "lower bound" and strict.max_condition_kind == "exact"
    p = code.params
    assert p["worst_condition_kind"] == "exact" and p["worst_condition_sets"] == [38_760] * 2
    assert p["worst_condition"] == strict.max_condition == p["condition_bound"]
    assert str(strict.max_condition_stragglers) in p["worst_condition_method"]


#: a record through verify's screen of every set (none enumerated directly): cyclic n = 11,
#: s = 2, seed 4, where the screen's figure (1291 at [2, 6]) is below the worst (1488 at [0, 5])
GAP = {"n": 11, "s": 2, "seed": 4}


def _true_worst(code: gctool.GradientCode) -> float:
    return worst_set(np.asarray(code.B), code.s)[0]


def test_a_screened_record_is_exact_only_when_it_is_the_worst(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(conditioning, "EXACT_LIMIT", 0)  # screen, as above 20,000 sets
    code = design("cyclic", **GAP)
    p = code.params
    assert p["worst_condition_method"].startswith("screened")
    assert p["worst_condition_kind"] != "exact" or p["worst_condition"] == _true_worst(code)
    assert p["worst_condition_kind"] == "exact"  # the budget admits the 55 sets
    assert gctool.verify(code).diagnostics.max_condition < p["worst_condition"]  # the gap


def test_a_screen_whose_exact_worst_is_refused_is_a_labelled_lower_bound(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The budget admits verify's screen, not the exact worst: the record keeps verify's
    figure, labelled a lower bound (verify's word), with the CLI's one line."""
    monkeypatch.setattr(conditioning, "EXACT_LIMIT", 0)
    monkeypatch.setattr(conditioning, "worst_set_time", lambda *a, **k: 1e15)  # ~11 days
    code = design("cyclic", **GAP)
    p = code.params
    assert p["worst_condition_kind"] == "lower bound" and p["worst_condition_sets"] == [55, 55]
    assert p["worst_condition"] == gctool.verify(code).diagnostics.max_condition
    assert p["worst_condition"] < _true_worst(code)
    result = run("design", "cyclic", "-n", "11", "-s", "2", "--seed", "4")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["params"]["worst_condition_kind"] == "lower bound"
    lines = [line for line in result.stderr.splitlines() if "condition" in line]
    note = in_cli_terms(str(conditioning.estimate_note(p)))
    assert lines == [f"gctool: warning: {note}"]
    assert "is a lower bound" in note and "'gctool verify' with --strict" in note


@pytest.mark.parametrize(("n", "s"), [(8, 2), (12, 5)])
def test_a_small_record_is_verify_stricts_figure_exactly(n: int, s: int) -> None:
    """Every set by the decoder's own SVD: the same floats as verify's."""
    code = design("cyclic", n=n, s=s, seed=1)
    assert code.params["worst_condition_kind"] == "exact"
    assert code.params["worst_condition"] == _strict(code).diagnostics.max_condition


def test_above_the_budget_the_record_is_a_labelled_estimate_and_the_cli_says_so(
        tmp_path: Path) -> None:
    """--max-work 50ms affords a sample, not the screen: the file says estimate (how many sets
    of how many), its figure misses verify --strict's, and stderr has one line naming verify
    --strict; the library records the same, and the CLI line is the library's note."""
    out = tmp_path / "c.json"
    result = run(*ARGS, "--max-work", "50ms", "-o", str(out))
    assert result.exit_code == 0
    params = json.loads(out.read_text())["params"]
    screened, total = params["worst_condition_sets"]
    assert params["worst_condition_kind"] == "estimate" and 0 < screened < total == 38_760
    lines = [line for line in result.stderr.splitlines() if "estimate" in line]
    note = in_cli_terms(str(conditioning.estimate_note(params)))
    assert lines == [f"gctool: warning: {note}"]
    assert f"on {screened:,} of the 38,760" in note and "'gctool verify' with --strict" in note
    conditioning._SEEN.clear()
    code = design("cyclic", **SCREENED, budget=Budget(max_work=0.05))
    assert {k: v for k, v in code.params.items() if k.startswith("worst")} == {
        k: v for k, v in params.items() if k.startswith("worst")}
    assert params["worst_condition"] < _strict(code).diagnostics.max_condition / 10  # the gap


def test_an_exact_record_has_no_estimate_line_and_jobs_do_not_change_it(tmp_path: Path
                                                                        ) -> None:
    out = {}
    for jobs in ("1", "2"):
        conditioning._SEEN.clear()
        result = run(*ARGS, "--jobs", jobs)
        assert result.exit_code == 0 and "estimate" not in result.stderr
        out[jobs] = result.stdout_bytes
    assert out["1"] == out["2"]
    conditioning._SEEN.clear()
    code = design("cyclic", **SCREENED, jobs=2)
    code.provenance["command"] = json.loads(out["1"])["provenance"]["command"]
    assert code_bytes(code, False) == out["1"]
