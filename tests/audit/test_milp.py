"""audit/milp.py against brute force over every straggler set on small real codes: an answer
labelled exact equals the exhaustive one, every answer keeps its sandwich (found <= worst <=
upper bound; lower <= threshold <= witness), every witness has the error it reports, and the
epsilon = 0 threshold is labelled with its resolution."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gctool.algebra.fields import parse_field
from gctool.audit.milp import milp_threshold, milp_worst
from gctool.audit.oracles import make_oracle
from gctool.codes import design
from gctool.errors import InvalidInput
from gctool.model import GradientCode

from oracles import lstsq_error, random_sparse_b

REAL = parse_field("real")


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


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**16), n=st.integers(4, 7), k=st.integers(2, 4),
       load=st.integers(1, 3), data=st.data())
def test_worst_case_sandwich_and_exact_answers(seed: int, n: int, k: int, load: int,
                                              data: st.DataObject) -> None:
    s = data.draw(st.integers(1, n - 1))
    code = _code(seed, n, k, load)
    B = np.asarray(code.B)
    worst = max(_errors_by_size(code)[s])
    found = milp_worst(make_oracle(code), s, time_limit=20.0)
    assert found.stragglers is not None and len(set(found.stragglers)) == s
    tol = 1e-6 * max(1.0, worst)
    assert found.error == pytest.approx(_err(B, n, found.stragglers), rel=1e-7, abs=1e-9)
    assert found.error <= worst + tol
    if found.upper is not None:
        assert found.upper >= worst - tol  # a proved upper bound
    if found.exact:
        assert found.error == pytest.approx(worst, rel=1e-6, abs=1e-8)


def test_worst_case_of_a_cyclic_code_is_exact() -> None:
    code = design("cyclic", n=7, s=2, seed=3)
    errors = _errors_by_size(code)
    for s in (1, 3, 4):
        found = milp_worst(make_oracle(code), s, time_limit=30.0)
        assert found.exact, found.notes
        assert found.error == pytest.approx(max(errors[s]), rel=1e-6, abs=1e-8)


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
        worst = max(_fixed_err(B, W, list(S)) for S in itertools.combinations(range(6), s))
        found = milp_worst(oracle, s, time_limit=20.0)
        assert found.error == pytest.approx(_fixed_err(B, W, found.stragglers), rel=1e-9)
        assert found.exact and found.error == pytest.approx(worst, rel=1e-6, abs=1e-9)
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
