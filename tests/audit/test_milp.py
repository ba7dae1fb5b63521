"""audit/milp.py against brute force over every straggler set on small real codes: an answer
labelled exact equals the exhaustive one, every answer keeps its sandwich (found <= worst <=
upper bound; lower <= threshold <= witness), every witness has the error it reports, and the
epsilon = 0 threshold is labelled with its resolution."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gctool.algebra.fields import parse_field
from gctool.audit.milp import GAP, milp_threshold, milp_worst
from gctool.audit.oracles import make_oracle
from gctool.audit.outcome import WorstOutcome
from gctool.codes import design
from gctool.errors import InvalidInput
from gctool.model import GradientCode

from bands import attack_interval, fixed_interval
from oracles import exact_fixed_error, exact_lstsq_error, lstsq_error, random_sparse_b

REAL = parse_field("real")
Interval = tuple[float, float]


def _code(seed: int, n: int, k: int, load: int) -> GradientCode:
    return GradientCode(random_sparse_b(seed, n, k, load), REAL, 0)


def _err(B: np.ndarray, n: int, S: tuple[int, ...] | list[int]) -> float:
    return lstsq_error(B, tuple(i for i in range(n) if i not in S))


def _errors_by_size(code: GradientCode) -> list[list[float]]:
    B, n = np.asarray(code.B), code.n
    return [[_err(B, n, S) for S in itertools.combinations(range(n), t)] for t in range(n + 1)]


def _fixed_err(B: np.ndarray, W: np.ndarray, S: list[int]) -> float:
    """One-step decoding with weights W (1 x n): ||sum_{i alive} w_i b_i - 1||^2."""
    alive = np.ones(B.shape[0], bool)
    alive[list(S)] = False
    return float(np.sum((W[0, alive] @ B[alive] - 1.0) ** 2))


def _exact_bands(code: GradientCode, s: int
                 ) -> tuple[dict[tuple[int, ...], Fraction], dict[tuple[int, ...], Interval]]:
    """Every s-set's exact rational error and the interval attack's error model gives its
    float64 error (tests/bands.attack_interval)."""
    B, n = np.asarray(code.B), code.n
    exact = {S: exact_lstsq_error(B, tuple(i for i in range(n) if i not in S))
             for S in itertools.combinations(range(n), s)}
    return exact, {S: attack_interval(code, S, e) for S, e in exact.items()}


def check_sandwich(found: WorstOutcome, exact: dict[tuple[int, ...], Fraction],
                   bands: dict[tuple[int, ...], Interval]) -> None:
    """The MILP's answer against exact errors, each within the error model it states: its
    error is its set's (its decoder's band, tests/bands.py); its upper bound is at least the
    true worst (a proved bound, widened by GAP); exact means its error meets that bound within
    the 3 GAP max(1, upper) at which milp_worst closes the sandwich (WorstOutcome.tighten)."""
    S = tuple(found.stragglers or ())
    lo, hi = bands[S]
    assert lo <= found.error <= hi, (S, found.error, float(exact[S]))
    top = max(exact, key=lambda T: exact[T])
    if found.upper is not None:
        assert found.upper >= bands[top][0], (top, found.upper, float(exact[top]))
    if found.exact:
        closing = 3 * GAP * max(1.0, found.upper if found.upper is not None else found.error)
        assert found.error >= bands[top][0] - closing, (S, top, found.error, float(exact[top]))


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**16), n=st.integers(4, 7), k=st.integers(2, 4),
       load=st.integers(1, 3), data=st.data())
def test_worst_case_sandwich_and_exact_answers(seed: int, n: int, k: int, load: int,
                                              data: st.DataObject) -> None:
    s = data.draw(st.integers(1, n - 1))
    code = _code(seed, n, k, load)
    found = milp_worst(make_oracle(code), s, time_limit=20.0)
    assert found.stragglers is not None and len(set(found.stragglers)) == s
    check_sandwich(found, *_exact_bands(code, s))


def test_worst_case_of_a_cyclic_code_is_exact() -> None:
    code = design("cyclic", n=7, s=2, seed=3)
    for s in (1, 3, 4):
        found = milp_worst(make_oracle(code), s, time_limit=30.0)
        assert found.exact, found.notes
        check_sandwich(found, *_exact_bands(code, s))


def test_check_sandwich_catches_what_a_fixed_tolerance_did() -> None:
    """The grounded check stays able to fail (cyclic n=7 s=2 seed 3, s=3): an error 1e-7
    relative off its set's, an upper bound 1e-7 relative below the worst and an exact label on
    a set more than 1e-6 relative below the worst are each caught."""
    import dataclasses

    code = design("cyclic", n=7, s=2, seed=3)
    exact, bands = _exact_bands(code, 3)
    found = milp_worst(make_oracle(code), 3, time_limit=30.0)
    check_sandwich(found, exact, bands)
    worst = float(max(exact.values()))
    near = max((T for T in exact if exact[T] < worst * (1 - 1e-6)), key=lambda T: exact[T])
    for bad in (dataclasses.replace(found, error=found.error * (1 + 1e-7)),
                dataclasses.replace(found, upper=worst * (1 - 1e-7)),
                dataclasses.replace(found, stragglers=list(near), error=float(exact[near]),
                                    upper=None, exact=True)):
        with pytest.raises(AssertionError):
            check_sandwich(bad, exact, bands)


def test_a_cut_loop_stuck_at_the_solvers_tolerance_stops_without_the_budget() -> None:
    """Every 2-set of this cyclic code decodes (worst error about 1e-30), and the master's bound
    sits at HiGHS's tolerance (1e-6 to 2e-6) from the first solve on: its cut loop ran 29
    solves until the work budget stopped it.  Now it stops when rounds of cuts move neither
    bound, with its sandwich, labelled heuristic."""
    from gctool.audit.milp import STALL_ROUNDS

    code = design("cyclic", n=8, s=2, seed=1)
    found = milp_worst(make_oracle(code), 2, time_limit=60.0)
    assert found.checked <= STALL_ROUNDS + 2 and not found.budget_stopped, found.notes
    assert not found.exact and found.error < 1e-20 and found.upper is not None
    assert 0 < found.upper < 1e-4
    assert any("moved neither bound" in note for note in found.notes), found.notes


def _true_threshold(errors: list[list[float]], eps: float) -> int | None:
    return next((t for t, errs in enumerate(errors) if max(errs) > eps), None)


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_threshold_above_epsilon_equals_exhaustive(seed: int) -> None:
    code = _code(seed, 7, 3, 2)
    errors = _errors_by_size(code)
    levels = sorted({round(e, 9) for errs in errors for e in errs if e > 1e-6})
    eps = levels[len(levels) // 2] * 0.999  # between error levels: no tie to decide
    want = _true_threshold(errors, eps)
    out = milp_threshold(make_oracle(code), eps, time_limit=30.0)
    assert out.resolution is None  # epsilon > 0: the MILP compares with epsilon itself
    assert out.lower <= (want if want is not None else code.n + 1)
    if out.threshold is not None:
        S = out.stragglers
        assert S is not None and len(S) == out.threshold
        assert _err(np.asarray(code.B), code.n, S) > eps  # the witness is real
        assert want is not None and out.threshold >= want
    if out.exact:
        assert out.threshold == want


def test_exact_threshold_is_labelled_with_its_resolution() -> None:
    code = design("cyclic", n=7, s=2, seed=3)  # tolerates exactly 2: T_0 = 3
    out = milp_threshold(make_oracle(code), 0.0, time_limit=30.0)
    assert out.resolution == pytest.approx(1e-4)
    assert out.threshold is not None and out.threshold >= 3
    assert _err(np.asarray(code.B), 7, out.stragglers) > 1e-9 * code.k  # fails
    assert out.lower == 1 and not out.exact  # only T_0 >= 1 is proved at a resolution
    broken = GradientCode(np.zeros((4, 2)) + np.eye(4, 2), REAL, 0)  # column 1 held once
    one = milp_threshold(make_oracle(broken), 0.0, time_limit=30.0)
    assert one.threshold == 1 and one.exact  # a witness of size 1 needs no resolution


def test_fixed_decoder_equals_exhaustive() -> None:
    rng = np.random.default_rng(5)
    code = _code(9, 6, 3, 2)
    B = np.asarray(code.B)
    W = rng.uniform(0.2, 1.0, size=(1, 6))
    oracle = make_oracle(code, "fixed", W)
    for s in (1, 2, 3, 4):
        # exact errors, each within the fixed oracle's stated round-off (tests/bands.py)
        exact = {S: exact_fixed_error(B, W[0], tuple(i for i in range(6) if i not in S))
                 for S in itertools.combinations(range(6), s)}
        found = milp_worst(oracle, s, time_limit=20.0)
        assert found.exact
        check_sandwich(found, exact, {S: fixed_interval(code, W, S, e) for S, e in exact.items()})
    all_errs = [[_fixed_err(B, W, list(S)) for S in itertools.combinations(range(6), t)]
                for t in range(7)]
    eps = sorted(max(e) for e in all_errs)[3] * 1.001
    out = milp_threshold(oracle, eps, time_limit=20.0)
    want = _true_threshold(all_errs, eps)
    assert out.exact and out.threshold == want
    if want is not None:
        assert _fixed_err(B, W, out.stragglers) > eps


def test_finite_fields_are_refused() -> None:
    code = design("cyclic-mds", n=7, s=2, field="GF(2^3)")
    with pytest.raises(InvalidInput, match="reals and complex"):
        milp_worst(make_oracle(code), 2)
    with pytest.raises(InvalidInput, match="reals and complex"):
        milp_threshold(make_oracle(code), 0.0)
