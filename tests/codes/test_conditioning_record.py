"""A real/complex design's conditioning record is ``verify --strict``'s figure when every
straggler set can be screened within the run's budget (labelled ``exact``), else an estimate on
a sample (labelled ``estimate``, with its sets) that the CLI names in one warning line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import gctool
from gctool.budget import Budget
from gctool.cli.params import in_cli_terms
from gctool.codes import conditioning, design
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
    # verify's screened figure (the weakest sets re-evaluated: a lower bound, 2.89e7 here;
    # verify --strict decides on the exact worst over every set, 7.11e8 at other stragglers)
    report = gctool.verify(code)
    p = code.params
    assert p["worst_condition_kind"] == "exact" and p["worst_condition_sets"] == [38_760] * 2
    assert p["worst_condition"] == report.diagnostics.max_condition
    assert p["condition_bound"] == report.diagnostics.condition_bound
    assert str(report.diagnostics.max_condition_stragglers) in p["worst_condition_method"]


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
