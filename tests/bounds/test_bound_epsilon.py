"""``bound``'s epsilon is typed like ``tol`` (a float, a Fraction or a decimal string) and kept
exact down to the threshold rows: FRC(12, 2) (groups of 3 workers, 3 partitions each) loses
exactly 3 per dead group, and the level a set must exceed is eps + tol * k exactly, so an
epsilon within round-off of 3 - tol * k decides whether one dead group exceeds it."""

from __future__ import annotations

from fractions import Fraction

import pytest

import gctool
from gctool.errors import InvalidInput

LEVEL_3 = Fraction(3) - Fraction(12, 10**9)  # eps whose level eps + tol * k is exactly 3


def rows(epsilon: object) -> dict[str, object]:
    report = gctool.bound(gctool.design("frc", 12, 2), epsilon=epsilon)  # type: ignore[arg-type]
    return {b.name: b for b in report.bounds if b.name in ("threshold_lb", "threshold_ub")}


@pytest.mark.parametrize("epsilon,expected", [
    (LEVEL_3 - Fraction(1, 3 * 10**30), 3),  # float(eps) would read it as LEVEL_3: 6
    (LEVEL_3, 6),  # a dead group's 3 does not exceed the level 3
    ("2.99999999999999999999", 6),  # float() makes it 3.0; floor(eps) + 1 = 3 held no bound
    (2.9999999999, 6),
])
def test_the_threshold_rows_use_the_exact_epsilon(epsilon: object, expected: int) -> None:
    code = gctool.design("frc", 12, 2)
    found = rows(epsilon)
    assert gctool.threshold(code, epsilon).threshold == expected  # type: ignore[arg-type]
    assert set(found) == {"threshold_lb", "threshold_ub"}
    for row in found.values():
        assert row.actual == expected and row.holds, row  # type: ignore[attr-defined]


@pytest.mark.parametrize("epsilon", ["-0.1", Fraction(-1, 3), -0.1, "nan", "x", float("inf")])
def test_a_negative_or_invalid_epsilon_is_refused_naming_it(epsilon: object) -> None:
    with pytest.raises(InvalidInput, match="`epsilon`") as err:
        rows(epsilon)
    assert err.value.param == "epsilon"
