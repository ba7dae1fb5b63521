"""audit/elementary.py (exact threshold T_0 by elementary vectors of range(B)) against brute force
over every straggler set: exact rational arithmetic for integer real codes, galois ranks over
GF(q).  A result labelled exact equals T_0; any result brackets it (lower <= T_0 <= witness
size) with a witness that really fails; a bound that float64 cannot prove is labelled
heuristic; both the primal (C(n, r-1) row sets) and the dual (co-rank) enumerations are
checked."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gctool.algebra.fields import parse_field
from gctool.api import threshold
from gctool.audit import elementary as el
from gctool.audit.oracles import OptimalOracle
from gctool.budget import Budget
from gctool.codes import design
from gctool.errors import BudgetExceeded
from gctool.model import GradientCode

from oracles import decodes_gf, decodes_rational, threshold_by

REAL = parse_field("real")


def _int_code(seed: int, n: int, k: int, rank: int) -> GradientCode:
    """An integer code of rank at most ``rank`` whose row space holds the all-ones target
    when its factor A has full column rank (B = A R, the first row of R all ones)."""
    rng = np.random.default_rng(seed)
    R = np.vstack([np.ones((1, k), dtype=np.int64), rng.integers(-2, 3, size=(rank - 1, k))])
    B = rng.integers(-2, 3, size=(n, rank)) @ R
    return GradientCode(B.astype(float), REAL, 0)


def _decodable_rank3() -> GradientCode:
    """9 workers, rank 3, the all-ones target in the row space (the full set decodes)."""
    rng = np.random.default_rng(0)
    R = np.vstack([np.ones(6), rng.integers(-2, 3, size=(2, 6))])
    A = rng.integers(-2, 3, size=(9, 3))
    A[:, 0] = rng.integers(1, 3, size=9)
    return GradientCode((A @ R).astype(float), REAL, 0)


def _true_t0(code: GradientCode) -> int | None:
    B, n = np.asarray(code.B), code.n
    if code.field.is_finite:
        GF = code.field.galois()
        return threshold_by(lambda F: decodes_gf(GF, B, F), n)
    return threshold_by(lambda F: decodes_rational(B, F), n)


def _fails(code: GradientCode, S: list[int]) -> bool:
    B, F = np.asarray(code.B), tuple(i for i in range(code.n) if i not in S)
    if code.field.is_finite:
        return not decodes_gf(code.field.galois(), B, F)
    return not decodes_rational(B, F)


def _check(code: GradientCode, out: el.ThresholdOutcome, want: int | None) -> None:
    top = code.n + 1 if want is None else want
    assert out.lower <= top
    if out.threshold is not None:
        assert out.stragglers is not None and len(out.stragglers) == out.threshold
        assert _fails(code, out.stragglers)  # the witness really fails
        assert want is not None and out.threshold >= want
    if out.exact:
        assert out.threshold == want


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**16), n=st.integers(4, 8), k=st.integers(2, 7), data=st.data())
def test_real_codes_match_exact_brute_force(seed: int, n: int, k: int,
                                            data: st.DataObject) -> None:
    rank = data.draw(st.integers(1, min(k, n)))  # near n: the dual enumeration is cheaper
    code = _int_code(seed, n, k, rank)
    oracle = OptimalOracle(code)
    out = el.elementary_threshold(oracle)
    want = _true_t0(code)
    _check(code, out, want)
    if oracle.error([]) <= oracle.limit:  # the full set decodes: the search ran
        assert out.exact, out.notes  # small codes: every smaller set is confirmed


@pytest.mark.parametrize(("field", "n", "s"), [("GF(2^3)", 7, 2), ("GF(7)", 6, 3)])
def test_finite_fields_are_exact(field: str, n: int, s: int) -> None:
    code = design("cyclic-mds", n=n, s=s, field=field)
    out = el.elementary_threshold(OptimalOracle(code))
    assert out.exact and out.threshold == s + 1 == _true_t0(code)
    assert _fails(code, out.stragglers)


def test_gf_code_that_fails_early() -> None:
    GF7 = parse_field("GF(7)")
    B = np.array([[1, 0, 2], [1, 0, 2], [0, 1, 3], [0, 1, 3], [2, 2, 5]])  # rank 2 + row 4
    code = GradientCode(B, GF7, 0)
    out = el.elementary_threshold(OptimalOracle(code))
    _check(code, out, _true_t0(code))
    assert out.exact


def test_primal_and_dual_enumerations_are_both_used_and_agree() -> None:
    low = _int_code(3, 8, 6, 2)  # rank 2: primal C(8, 1) = 8 row sets
    high = design("cyclic", n=7, s=1, seed=2)  # rank 6: co-rank 1, the dual is cheaper
    for code, dual in ((low, False), (high, True)):
        oracle = OptimalOracle(code)
        assert (el._dual_cost(oracle) < el._primal_cost(oracle)) == dual
        out = el.elementary_threshold(oracle)
        assert out.exact
        if code is high:
            assert out.threshold == 2 and _fails(code, out.stragglers)
        else:
            assert out.threshold == _true_t0(code)
        assert any(("dual" in note) == dual for note in out.notes)


def test_an_unconfirmed_float64_result_is_labelled_heuristic() -> None:
    """Primal enumeration whose smaller straggler sets exceed the check budget: the float64
    support tests prove nothing, so the answer is a bound (lower <= T_0 <= witness)."""
    code = _decodable_rank3()  # primal C(9, 2) = 36 row sets
    oracle = OptimalOracle(code)
    need = el.cost(oracle)
    assert need == el._primal_cost(oracle) == 36
    want = _true_t0(code)
    oracle.budget = Budget(max_sets=need)  # confirmation budget = 36 sets
    out = el.elementary_threshold(oracle)
    _check(code, out, want)
    assert want is not None and want > 2  # so the smaller straggler sets exceed the budget
    assert not out.exact and out.lower < out.threshold
    assert any("not a proof" in note for note in out.notes)
    oracle.budget = Budget()
    full = el.elementary_threshold(oracle)
    assert full.exact and full.threshold == want


def test_budget_and_a_full_set_that_fails() -> None:
    oracle = OptimalOracle(_decodable_rank3())
    with pytest.raises(BudgetExceeded, match="elementary"):
        el.elementary_threshold(OptimalOracle(_decodable_rank3(),
                                              budget=Budget(max_sets=el.cost(oracle) - 1)))
    B = np.array([[1.0, 0.0], [2.0, 0.0], [3.0, 0.0]])  # column 1 never computed
    none = el.elementary_threshold(OptimalOracle(GradientCode(B, REAL, 0),
                                                 budget=Budget(max_sets=100)))
    assert none.threshold == 0 and none.exact and none.stragglers == []


def test_the_dual_counts_the_sets_it_walked() -> None:
    """checked = the straggler sets of sizes 1..T-1 and the witness's place among those of size
    T (lexicographic), screened or not, never above total (it counted 50,000 for every chunk
    of screened sets: 'elementary over 150,001 of 311 sets')."""
    code = design("cyclic", n=12, s=3, seed=3)  # co-rank 3: sizes 1..3 are Gram-screened
    oracle = OptimalOracle(code)
    assert el._dual_cost(oracle) < el._primal_cost(oracle)
    out = el.elementary_threshold(oracle)
    assert out.exact and out.threshold == 4 and _fails(code, out.stragglers)
    place = sum(1 for S in itertools.combinations(range(12), 4) if list(S) <= out.stragglers)
    assert out.checked == 12 + 66 + 220 + place <= out.total


def test_gf_code_with_a_huge_primal_count_has_no_dual_and_holds_the_rank_to_the_budget() -> None:
    """Over GF(q) the dual enumeration (float64 Gram probes) does not apply: frc over GF(7)
    n=72 s=1 (rank 36, C(72, 35) ~ 4.4e20 row sets, above the 2**62 once counted for the dual)
    asked the finite oracle for its float64 ``rank`` (AttributeError, an internal error of
    ``gctool attack --threshold``).  The primal count is reported and refused within the
    budget; the exact rank of B (an elimination over GF(q)) is estimated before it is
    computed, and a budget that its elimination does not fit refuses it uncomputed."""
    code = design("frc", n=72, s=1, field="GF(7)")
    oracle = OptimalOracle(code)
    with pytest.raises(BudgetExceeded, match="primal"):
        el.elementary_threshold(oracle)
    assert el.cost(oracle) == math.comb(72, 35) > 2**62
    tight = OptimalOracle(code, budget=Budget(max_work=1e-6))
    assert el.rank_work(tight) > tight.meter.remaining
    with pytest.raises(BudgetExceeded, match="rank of B.*max_work"):
        el.check_budget(tight)  # what elementary_threshold checks before it starts
    assert el.work(tight) == el.rank_work(tight)  # auto's test: the elimination alone
    assert el.rank_work(tight) > 0 and tight.exact_rank is None  # refused before the elimination
    auto = threshold(code, method="auto")  # elementary over budget, then the other methods
    assert auto.threshold == 2 and auto.exact
