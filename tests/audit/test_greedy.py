"""audit/greedy.py (the heuristic worst-case search) against brute force over every straggler
set: the set it returns is a valid straggler set whose error is the exact error of that set, it
never exceeds the true worst case, it is labelled heuristic unless the size is trivial, and its
building blocks (column seeds, greedy completion, 1-swaps, local search) do what they say."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gctool.algebra.fields import parse_field
from gctool.audit import greedy as gr
from gctool.audit.oracles import make_oracle
from gctool.codes import design
from gctool.model import GradientCode

from bands import attack_interval
from oracles import brute_worst, decodes_gf, exact_lstsq_error, lstsq_error, random_sparse_b

REAL = parse_field("real")


def _code(seed: int, n: int, k: int, load: int) -> GradientCode:
    return GradientCode(random_sparse_b(seed, n, k, load), REAL, 0)


def _err(code: GradientCode, S: list[int]) -> float:
    """The exact least-squares error of straggling S (rational arithmetic, independent of the
    oracle's SVD)."""
    F = tuple(i for i in range(code.n) if i not in S)
    return float(exact_lstsq_error(np.asarray(code.B), F))


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**16), n=st.integers(3, 8), k=st.integers(1, 5),
       load=st.integers(1, 3), restarts=st.integers(0, 6), data=st.data())
def test_greedy_returns_a_valid_set_with_its_exact_error(
        seed: int, n: int, k: int, load: int, restarts: int, data: st.DataObject) -> None:
    s = data.draw(st.integers(1, n - 1))
    code = _code(seed, n, k, load)
    oracle = make_oracle(code)
    before = oracle.evaluations
    found = gr.greedy(oracle, s, seed=seed, restarts=restarts)
    S = found.stragglers
    assert S is not None and S == sorted(S) and len(set(S)) == s
    assert all(0 <= i < n for i in S)
    # its error is its set's exact error and at most the exact worst case, each within the
    # error model attack states (tests/bands.py): float64 cannot decide closer on an
    # ill-conditioned B (a relative 1e-9 does not hold there: 1.5e-9 off at cond(B) 1e4)
    B = np.asarray(code.B)
    exact = {T: exact_lstsq_error(B, tuple(i for i in range(n) if i not in T))
             for T in itertools.combinations(range(n), s)}
    lo, hi = attack_interval(code, tuple(S), exact[tuple(S)])
    assert lo <= found.error <= hi, (S, found.error, float(exact[tuple(S)]))
    top = max(exact, key=lambda T: exact[T])
    assert found.error <= attack_interval(code, top, exact[top])[1], (S, top)
    assert not found.exact and found.method == "greedy"  # a lower bound, never a proof
    assert found.checked == oracle.evaluations - before > 0 and found.total == len(
        list(itertools.combinations(range(n), s)))


@pytest.mark.parametrize("s", [0, 6])
def test_trivial_sizes_are_exact(s: int) -> None:
    code = _code(1, 6, 3, 2)
    found = gr.greedy(make_oracle(code), s)
    assert found.exact and found.stragglers == list(range(s))
    assert found.error == pytest.approx(_err(code, list(range(s))), abs=1e-9)


def test_a_run_is_redone_with_its_seed() -> None:
    code = _code(7, 8, 4, 2)
    runs = [gr.greedy(make_oracle(code), 3, seed=11, restarts=8) for _ in range(2)]
    assert runs[0].stragglers == runs[1].stragglers and runs[0].error == runs[1].error


def test_column_seeds_find_a_lost_group() -> None:
    """FRC: losing a whole group is the worst case, and the group is a column's support."""
    code = design("frc", n=8, s=3)  # groups of 4
    oracle = make_oracle(code)
    seeds = gr.column_seeds(oracle, 4)
    support = np.asarray(code.support)
    for seed_set in seeds:  # each seed is the support of a column held by <= s workers
        assert any(sorted(np.flatnonzero(support[:, j]).tolist()) == seed_set
                   for j in range(support.shape[1]))
        assert len(seed_set) <= 4
    assert gr.column_seeds(oracle, 3) == []  # no column is held by 3 or fewer
    found = gr.greedy(oracle, 4, restarts=0)
    assert found.error == pytest.approx(brute_worst(code, 4, lstsq_error), abs=1e-9)
    assert found.stragglers in ([0, 1, 2, 3], [4, 5, 6, 7])


def test_completion_swaps_and_local_search() -> None:
    code = _code(5, 7, 3, 2)
    oracle = make_oracle(code)
    rng = np.random.default_rng(0)
    S = gr.complete(oracle, [4, 1], 4, rng)
    assert len(S) == 4 and {1, 4} <= set(S)
    moves = gr.swaps(S, 7)
    assert moves.shape == (4 * 3, 4)
    assert all(len(set(row) & set(S)) == 3 and len(set(row)) == 4 for row in moves.tolist())
    assert len({tuple(r) for r in moves.tolist()}) == 12  # every 1-swap once
    best, err = gr.local_search(oracle, S, oracle.error(S))
    assert err >= oracle.error(S) - 1e-12
    assert err == pytest.approx(_err(code, best), rel=1e-7, abs=1e-9)
    # a local optimum: no single swap beats it (checked with numpy least squares)
    B = np.asarray(code.B)
    for row in gr.swaps(best, 7).tolist():
        other = lstsq_error(B, tuple(i for i in range(7) if i not in row))
        assert other <= err + 1e-7 * max(1.0, err)


def test_greedy_over_a_finite_field_uses_the_indicator() -> None:
    code = design("cyclic-mds", n=7, s=2, field="GF(2^3)")
    GF, B = code.field.galois(), np.asarray(code.B)
    oracle = make_oracle(code)
    for s in (2, 3):
        found = gr.greedy(oracle, s, seed=1, restarts=4)
        S = found.stragglers
        assert S is not None and len(set(S)) == s
        fails = not decodes_gf(GF, B, tuple(i for i in range(7) if i not in S))
        assert found.error == float(fails)
    assert gr.greedy(oracle, 2).error == 0.0  # MDS: every 2 stragglers decode
    assert gr.greedy(oracle, 3, stop_at=1.0).error == 1.0  # every 3-set fails
