"""Which search methods apply to a code and decoder is decided in one place
(``gctool.audit.attack.options.APPLIES``), and what attack says about methods follows it: the
table agrees with what each method accepts, and a refusal suggests only methods that apply (no
milp over GF(q), no elementary for a worst case), in the library's terms and in the CLI's."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from gctool.audit.attack import AttackOptions, attack, threshold
from gctool.audit.attack.options import APPLIES, THRESHOLD_ORDER, applies, oracle_for
from gctool.budget import Budget
from gctool.codes import design
from gctool.errors import BudgetExceeded, InvalidInput
from gctool.model import GradientCode

from helpers import run

CASES: list[tuple[str, GradientCode, str, Any]] = [
    ("frc GF(7) optimal", design("frc", n=6, s=1, field="GF(7)"), "optimal", None),
    ("frc GF(7) natural", design("frc", n=6, s=1, field="GF(7)"), "natural", None),
    ("frc GF(7) fixed", design("frc", n=6, s=1, field="GF(7)"), "fixed", [1] * 6),
    ("frc real natural", design("frc", n=6, s=1), "natural", None),
    ("cyclic real optimal", design("cyclic", n=6, s=1, seed=1), "optimal", None),
    ("cyclic real fixed", design("cyclic", n=6, s=1, seed=1), "fixed", None),
    ("cyclic complex optimal", design("cyclic", n=6, s=1, seed=1, field="complex"), "optimal",
     None),
    ("comm real optimal (m = 2)", design("comm", n=6, s=1), "optimal", None),
    ("comm real fixed (m = 2)", design("comm", n=6, s=1), "fixed", [[1.0] * 6, [0.5] * 6]),
]


def _runs(code: GradientCode, method: str, decoder: str, weights: Any,
          epsilon: float | None) -> bool:
    """Does ``method`` run on the code (True) or refuse it as not applying (False)?"""
    try:
        if epsilon is None:
            attack(code, 2, method=method, decoder=decoder, weights=weights)
        else:
            threshold(code, epsilon, method=method, decoder=decoder, weights=weights)
    except InvalidInput:
        return False
    return True


#: worst mode (None), the exact threshold (0) and, over R/C only (over GF(q) epsilon is 0),
#: the threshold at a level
LEVELS = [(*case, eps) for case in CASES for eps in (None, 0.0, 0.5)
          if not (eps and case[1].field.is_finite)]


@pytest.mark.parametrize(("name", "code", "decoder", "weights", "epsilon"), LEVELS,
                         ids=[f"{c[0]} {c[4]}" for c in LEVELS])
def test_the_table_is_what_each_method_accepts(name: str, code: GradientCode, decoder: str,
                                               weights: Any, epsilon: float | None) -> None:
    assert set(APPLIES) == set(THRESHOLD_ORDER)
    oracle = oracle_for(code, AttackOptions(decoder=decoder, weights=weights))
    for method in THRESHOLD_ORDER:
        assert _runs(code, method, decoder, weights, epsilon) == applies(
            method, oracle, epsilon), (method, name, epsilon)


def _suggested(message: str, prefix: str) -> list[str]:
    """The methods a refusal suggests, from '<prefix>a, b or c'."""
    m = re.search(re.escape(prefix) + r"([a-z]+(?:, [a-z]+)*(?: or [a-z]+)?)", message)
    assert m, message
    return re.split(r", | or ", m.group(1))


GF_MDS = design("cyclic-mds", n=10, s=2, field="GF(11)")
#: a real code whose elementary search is over 1 ms (its dual walk: 12,975 sets), and a small
#: one of the same field and decoder that the suggested methods run on
REAL_CYCLIC = design("cyclic", n=24, s=4, seed=1)
SMALL_REAL = design("cyclic", n=10, s=2, seed=1)


@pytest.mark.parametrize(("code", "small", "expected"), [
    (GF_MDS, GF_MDS, ["bnb", "greedy"]), (REAL_CYCLIC, SMALL_REAL, ["milp", "bnb", "greedy"])],
    ids=["GF(11)", "real"])
@pytest.mark.parametrize("budget", [Budget(max_sets=2), Budget(max_work=1e-3)],
                         ids=["max_sets", "max_work"])
def test_an_elementary_refusal_suggests_the_methods_that_apply_to_the_field(
        code: GradientCode, small: GradientCode, expected: list[str], budget: Budget) -> None:
    with pytest.raises(BudgetExceeded) as info:
        threshold(code, method="elementary", budget=budget)
    suggested = _suggested(str(info.value), "`method`=")
    assert suggested == expected
    for method in suggested:  # each one runs on a code of this field (T = s + 1 = 3)
        assert threshold(small, method=method).threshold == 3


@pytest.mark.parametrize(("mode", "expected"), [
    ((), ["exhaustive", "elementary", "bnb", "greedy"]),
    (("-s", "2"), ["exhaustive", "bnb", "greedy"])], ids=["threshold", "worst"])
def test_a_milp_refusal_over_gf_suggests_only_methods_that_apply(
        mode: tuple[str, ...], expected: list[str]) -> None:
    epsilon = None if mode else 0.0
    with pytest.raises(InvalidInput) as info:
        if epsilon is None:
            attack(GF_MDS, 2, method="milp")
        else:
            threshold(GF_MDS, method="milp")
    assert _suggested(str(info.value), "`method`=") == expected
    for method in expected:
        assert _runs(GF_MDS, method, "optimal", None, epsilon)


def _file(tmp_path: Path, code: GradientCode, name: str) -> str:
    from gctool.io import code_bytes

    path = tmp_path / name
    path.write_bytes(code_bytes(code, path))
    return str(path)


@pytest.mark.parametrize(("code", "small", "expected"), [
    (GF_MDS, GF_MDS, ["bnb", "greedy"]), (REAL_CYCLIC, SMALL_REAL, ["milp", "bnb", "greedy"])],
    ids=["GF(11)", "real"])
@pytest.mark.parametrize("limit", [("--max-sets", "2"), ("--max-work", "1ms")],
                         ids=["max-sets", "max-work"])
def test_the_cli_refusal_names_the_flags_of_the_methods_that_apply(
        tmp_path: Path, code: GradientCode, small: GradientCode, expected: list[str],
        limit: tuple[str, str]) -> None:
    path = _file(tmp_path, code, "code.json")
    r = run("attack", path, "--threshold", "--method", "elementary", *limit)
    assert r.exit_code == 2 and r.stdout == ""
    line = r.stderr.rstrip("\n")
    assert "\n" not in line and "Traceback" not in line
    assert _suggested(line, "--method=") == expected
    assert "`" not in line
    other = _file(tmp_path, small, "small.json")
    for method in expected:
        ok = run("attack", other, "--threshold", "--method", method, "--json")
        assert ok.exit_code == 0, ok.stderr


def test_the_cli_milp_refusal_over_gf_suggests_no_milp_and_no_elementary_for_a_worst_case(
        tmp_path: Path) -> None:
    path = _file(tmp_path, GF_MDS, "mds.json")
    r = run("attack", path, "-s", "2", "--method", "milp")
    assert r.exit_code == 2
    assert _suggested(r.stderr, "--method=") == ["exhaustive", "bnb", "greedy"]
    t = run("attack", path, "--threshold", "--method", "milp")
    assert t.exit_code == 2
    assert _suggested(t.stderr, "--method=") == ["exhaustive", "elementary", "bnb", "greedy"]


#: worst-case refusals of an exhaustive attack over --max-sets, and the methods that apply
EXHAUSTIVE = [
    ("GF(7) optimal", design("frc", n=6, s=1, field="GF(7)"), "optimal", None,
     ["bnb", "greedy"]),
    ("GF(7) fixed", design("frc", n=6, s=1, field="GF(7)"), "fixed", [1] * 6, ["greedy"]),
    ("real optimal", design("cyclic", n=8, s=2, seed=1), "optimal", None,
     ["milp", "bnb", "greedy"]),
    ("real fixed", design("cyclic", n=8, s=2, seed=1), "fixed", None,
     ["milp", "bnb", "greedy"]),
]


@pytest.mark.parametrize(("name", "code", "decoder", "weights", "expected"), EXHAUSTIVE,
                         ids=[c[0] for c in EXHAUSTIVE])
def test_an_exhaustive_refusal_suggests_the_methods_that_apply(
        tmp_path: Path, name: str, code: GradientCode, decoder: str, weights: Any,
        expected: list[str]) -> None:
    """Before: '`method`=bnb or greedy' everywhere, bnb included for fixed weights over
    GF(q), which branch and bound refuses."""
    with pytest.raises(BudgetExceeded) as info:
        attack(code, 2, method="exhaustive", decoder=decoder, weights=weights, max_sets=2)
    assert _suggested(str(info.value), "`method`=") == expected
    for method in expected:
        assert _runs(code, method, decoder, weights, None), method
    path = _file(tmp_path, code, "code.json")
    flags = ["--decoder", decoder] + ([] if weights is None else
                                      ["--weights", ",".join(map(str, weights))])
    r = run("attack", path, "-s", "2", "--method", "exhaustive", "--max-sets", "2", *flags)
    assert r.exit_code == 2 and r.stdout == "" and r.stderr.count("\n") == 1
    assert _suggested(r.stderr, "--method=") == expected
    for method in expected:
        ok = run("attack", path, "-s", "2", "--method", method, *flags)
        assert ok.exit_code == 0, (method, ok.stderr)
    if "bnb" not in expected:  # and bnb's own refusal says why (it read 'fixed weights; fixed
        # (user weights) is neither')
        no = run("attack", path, "-s", "2", "--method", "bnb", *flags)
        assert no.exit_code == 2
        assert f"fixed weights over R/C; fixed (user weights) over {code.field}" in no.stderr


def test_auto_skips_the_milp_where_it_does_not_apply(tmp_path: Path) -> None:
    """A threshold at a level epsilon > 0 of a code with m = 2 targets: the MILP refuses it, and
    auto over the exhaustive budget called it anyway, so the run was refused ('milp thresholds
    with epsilon > 0 need m = 1'); it now goes on to bnb, and agrees with exhaustive."""
    code = design("comm", n=8, s=2)
    exact = threshold(code, 0.5, method="exhaustive")
    assert exact.exact and exact.threshold == 3
    auto = threshold(code, 0.5, max_sets=5)
    assert not any("milp" in note for note in auto.notes)
    assert auto.threshold_lower <= exact.threshold <= auto.threshold_upper
    assert auto.exact and auto.threshold == exact.threshold
    path = _file(tmp_path, code, "comm.json")
    r = run("attack", path, "--threshold", "--epsilon", "0.5", "--max-sets", "5")
    assert r.exit_code == 0, r.stderr
    assert "auto: exhaustive over budget -> bnb" in r.stdout


def test_the_milp_refusal_at_a_level_with_m_targets_suggests_what_applies() -> None:
    """milp at epsilon > 0 on a code of m = 2 targets is refused, and its suggestion comes from
    APPLIES (it listed 'exhaustive or bnb' by hand, leaving greedy out): every method it names
    applies and runs, and every other method that applies is named."""
    code = design("comm", n=8, s=2)
    assert code.m > 1
    with pytest.raises(InvalidInput) as info:
        threshold(code, 0.5, method="milp")
    text = str(info.value)
    named = re.findall(r"\b(exhaustive|elementary|milp|bnb|greedy)\b", text.split("; use ")[1])
    on = oracle_for(code, AttackOptions.of(method="milp"))
    assert named == [m for m in THRESHOLD_ORDER if m != "milp" and applies(m, on, 0.5)]
    assert named == ["exhaustive", "bnb", "greedy"]
    for method in named:
        assert threshold(code, 0.5, method=method).threshold is not None
