"""The one error-curve engine (gctool.audit.attack.curve) behind ``attack --curve`` and the curve
``show`` draws (gctool.viz.error_curve): both against brute force over every straggler set,
chosen sizes against the full curve, and the budget planner's choice."""

from __future__ import annotations

from math import comb

import numpy as np
import pytest

import gctool
from gctool.audit.attack import curve
from gctool.audit.attack.curves import plan_sizes
from gctool.errors import InvalidInput
from gctool.model import GradientCode
from gctool.viz import error_curve

from oracles import brute_worst, exact_lstsq_error

CODES = {
    "cyclic": lambda: gctool.design("cyclic", n=7, s=2, seed=1),
    "frc": lambda: gctool.design("frc", n=6, s=1),
    "gf": lambda: gctool.design("cyclic-mds", n=7, s=2, field="GF(2^3)"),
    "comm-m2": lambda: gctool.design("comm", n=6, s=1, m=2, seed=1),  # m = 2 messages
    "random": lambda: GradientCode(np.random.default_rng(5).standard_normal((6, 5)),
                                   gctool.design("cyclic", n=6, s=1, seed=1).field, 1),
}


def _brute_worst(code: GradientCode, s: int) -> float:
    """The largest raw error over every straggler set of size s: exact rational least squares
    against the code's m targets over R/C, the 0/1 indicator over GF(q)."""
    return brute_worst(code, s,
                       lambda B, F: exact_lstsq_error(B, F, np.asarray(code.targets())))


@pytest.fixture(scope="module", params=sorted(CODES))
def case(request: pytest.FixtureRequest) -> tuple[GradientCode, list[float]]:
    code = CODES[request.param]()
    return code, [_brute_worst(code, s) for s in range(code.n + 1)]


def test_attack_curve_matches_brute_force(case: tuple[GradientCode, list[float]]) -> None:
    code, brute = case
    report = curve(code)
    assert [p.s for p in report.curve] == list(range(code.n + 1))
    for p in report.curve:
        assert p.raw_error == pytest.approx(brute[p.s], abs=1e-8)
        assert p.exact
        if p.stragglers is not None:  # the witness has the size and the error reported
            assert len(p.stragglers) == p.s
    assert report.total == 2**code.n


def test_show_curve_is_the_same_engine_in_the_picture_unit(
        case: tuple[GradientCode, list[float]]) -> None:
    code, brute = case
    drawn = error_curve(code)
    assert [p.s for p in drawn.points] == list(range(code.n + 1)) and not drawn.skipped
    unit = 1.0 if code.field.is_finite else code.k * code.m
    engine = {p.s: p for p in curve(code).curve}
    for p in drawn.points:
        assert p.raw_error == pytest.approx(brute[p.s], abs=1e-8)
        assert p.error == pytest.approx(brute[p.s] / unit, abs=1e-8)
        assert p.raw_error == engine[p.s].raw_error and p.stragglers == engine[p.s].stragglers
        tolerance = 0.0 if code.field.is_finite else 1e-9 * code.k
        assert drawn.decodes[p.s] == (brute[p.s] <= tolerance)
    assert all(0.0 <= p.error <= 1.0 + 1e-9 for p in drawn.points)


def test_chosen_sizes_equal_the_full_curve(case: tuple[GradientCode, list[float]]) -> None:
    code, brute = case
    sizes = [code.n, 0, 2, 2]  # any order, repeats once
    part = curve(code, sizes=sizes)
    assert [p.s for p in part.curve] == [0, 2, code.n]
    for p in part.curve:
        assert p.raw_error == pytest.approx(brute[p.s], abs=1e-8) and p.exact
    assert part.s == code.n and part.total == 1 + comb(code.n, 2) + 1
    assert part.reason == f"worst-case error for s = 0, 2, {code.n}"


def test_public_curve_sizes_are_the_per_size_attacks(
        case: tuple[GradientCode, list[float]]) -> None:
    """``gctool.curve(sizes=)``: each point is what ``gctool.attack`` reports for its s (and
    the brute-force worst case), in the order asked, normalised alike."""
    code, brute = case
    sizes = [code.n - 1, 1, 2]
    for normalize in ("none", "k"):
        report = gctool.curve(code, sizes=sizes, normalize=normalize, method="exhaustive")
        assert [p.s for p in report.curve] == sorted(sizes)
        for p in report.curve:
            single = gctool.attack(code, p.s, normalize=normalize, method="exhaustive")
            assert p.raw_error == pytest.approx(single.raw_error, abs=1e-9)
            assert p.error == pytest.approx(single.error, abs=1e-9)
            assert p.raw_error == pytest.approx(brute[p.s], abs=1e-8)
            assert p.exact and single.exact


def test_public_curve_sizes_of_a_frame_are_its_per_size_attacks() -> None:
    frame = gctool.design("encoded", frame="paley", workers=6, s=1)
    report = gctool.curve(frame, sizes=[2, 0])
    assert [p.s for p in report.curve] == [0, 2]
    for p in report.curve:
        assert p.to_dict() == gctool.attack(frame, p.s).to_dict() | {
            k: v for k, v in p.to_dict().items() if k.startswith("elapsed")}


@pytest.mark.parametrize(("sizes", "message"), [
    ([], "sizes must be a non-empty list of numbers of stragglers, got []"),
    ("12", "sizes must be a non-empty list of numbers of stragglers, got '12'"),
    (3, "sizes must be a non-empty list of numbers of stragglers, got 3"),
    ([8], "sizes: 8 is not a number of stragglers in 0..7 (n = 7)"),
    ([-1], "sizes: -1 is not a number of stragglers in 0..7 (n = 7)"),
    ([1, 1.5], "sizes: 1.5 is not a number of stragglers in 0..7 (n = 7)"),
    ([True], "sizes: True is not a number of stragglers in 0..7 (n = 7)"),
    ([None], "sizes: None is not a number of stragglers in 0..7 (n = 7)"),
])
def test_sizes_are_checked(sizes: object, message: str) -> None:
    code = CODES["cyclic"]()
    for run in (curve, gctool.curve):
        with pytest.raises(InvalidInput) as err:
            run(code, sizes=sizes)
        assert str(err.value) == message
    with pytest.raises(InvalidInput, match="^max_s and sizes exclude each other$"):
        gctool.curve(code, 3, sizes=[1])
    frame = gctool.design("encoded", frame="paley", workers=6, s=1)
    with pytest.raises(InvalidInput, match=r"^sizes: 6 is not .* in 0\.\.5 \(n = 6\)$"):
        gctool.curve(frame, sizes=[6])


def _greedy_plan(n: int, cols: int, max_sets: int, max_work: float) -> list[int]:
    """The planner's rule over every s in 0..n: cheapest first, keep what fits."""
    def work(s: int) -> float:
        f = n - s
        return comb(n, s) * max(1, f) * cols * max(1, min(f, cols))

    chosen, sets, spent = [], 0, 0.0
    for s in sorted(range(n + 1), key=lambda s: (comb(n, s), work(s), s)):
        if sets + comb(n, s) <= max_sets and spent + work(s) <= max_work:
            chosen.append(s)
            sets, spent = sets + comb(n, s), spent + work(s)
    return sorted(chosen) if any(0 < s < n - 1 for s in chosen) else []


@pytest.mark.parametrize("n", [1, 2, 3, 7, 12, 25, 60])
def test_the_planner_is_the_greedy_rule_over_every_size(n: int) -> None:
    for cols in (1, n, 2 * n):
        for max_sets in (1, 2, 30, 1000, 10**6):
            for max_work in (1e3, 4e8, 1e15):
                assert plan_sizes(n, cols, max_sets, max_work) == _greedy_plan(
                    n, cols, max_sets, max_work)


def test_the_planner_looks_only_at_the_ends_of_a_large_code() -> None:
    """A 4096-worker code is planned from the sizes at its ends (instantly)."""
    assert plan_sizes(4096, 4096, 10**6) == []
    assert plan_sizes(4096, 1, 10**6, 1e15) == [0, 1, 4095, 4096]


def test_the_planner_fits_both_budgets_cheapest_first() -> None:
    n, cols = 12, 12
    for max_sets in (30, 100, 300, 5000):
        chosen = plan_sizes(n, cols, max_sets)
        assert chosen == sorted(chosen)
        assert sum(comb(n, s) for s in chosen) <= max_sets
        left = [s for s in range(n + 1) if s not in chosen]
        if chosen:  # every size left out is at least as expensive as every size chosen
            assert all(comb(n, t) >= max(comb(n, s) for s in chosen) for t in left)
    assert plan_sizes(n, cols, 10**9) == list(range(n + 1))
    assert plan_sizes(n, cols, 10**9, max_work=1.0) == []  # nothing informative fits
    code = CODES["cyclic"]()
    drawn = error_curve(code, max_sets=30)
    expect = plan_sizes(code.n, code.B.shape[1], 30)
    assert [p.s for p in drawn.points] == expect
    assert drawn.skipped == [s for s in range(code.n + 1) if s not in expect]
