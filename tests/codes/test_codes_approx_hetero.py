"""hetero: optimal unbiased one-step weights, greedy allocation and the expected error,
checked against exact enumeration over every straggler pattern and against perturbations."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gctool.codes import design
from gctool.codes.hetero import cyclic_support, greedy_support
from gctool.codes.straggling import (
    expected_error,
    expected_error_of_support,
    optimal_weights,
    read_probabilities,
)
from gctool.errors import DesignError, InvalidInput


def enumerate_error(W: np.ndarray, p: np.ndarray) -> float:
    """E ||sum_(i responds) W_i - 1||^2 by summing over all 2^n response patterns."""
    n, k = W.shape
    total = 0.0
    for alive in itertools.product([0, 1], repeat=n):
        a = np.array(alive)
        prob = np.prod(np.where(a == 1, 1 - p, p))
        total += prob * float(np.sum((a @ W - np.ones(k)) ** 2))
    return total


P = [0.1, 0.2, 0.5, 0.3, 0.05, 0.6]


def test_weights_are_unbiased_and_match_the_closed_form() -> None:
    code = design("hetero", p=P, load=2)
    p, W = np.array(P), np.asarray(code.B)
    assert np.allclose(((1 - p)[:, None] * W).sum(axis=0), 1.0)  # E c_j = 1
    Q = np.where(W != 0, ((1 - p) / p)[:, None], 0).sum(axis=0)
    support = W != 0
    assert np.allclose(W[support], (1 / (p[:, None] * Q[None, :]))[support])  # 1/(p_i Q_j)
    assert code.params["expected_error"] == pytest.approx(float(np.sum(1 / Q)))
    assert code.params["expected_error"] == pytest.approx(enumerate_error(W, p))
    assert expected_error(W, p) == pytest.approx(enumerate_error(W, p))
    assert np.all(code.loads <= 2) and code.params["p"] == P


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(0.05, 0.95), min_size=2, max_size=6), st.integers(0, 2**32 - 1))
def test_optimal_weights_beat_every_unbiased_perturbation(p: list[float], seed: int) -> None:
    rng = np.random.default_rng(seed)
    pa = np.array(p)
    n, k = pa.size, 3
    support = rng.random((n, k)) < 0.6
    support[rng.integers(n), :] = True  # every column held
    W = optimal_weights(support, pa)
    best = expected_error(W, pa)
    assert best == pytest.approx(expected_error_of_support(support, pa))
    for _ in range(5):  # add a direction D with sum_i (1-p_i) D_ij = 0 on the support
        D = rng.standard_normal((n, k)) * support
        D -= (1 - pa)[:, None] * support * (((1 - pa)[:, None] * D).sum(axis=0)
                                           / ((1 - pa) ** 2 * support.T).sum(axis=1))
        assert np.allclose(((1 - pa)[:, None] * D).sum(axis=0), 0)
        assert expected_error(W + 0.3 * D, pa) >= best - 1e-12


def test_general_formula_includes_the_bias() -> None:
    p = np.array([0.2, 0.5])
    B = np.array([[1.0, 0.0], [1.0, 1.0]])
    assert expected_error(B, p) == pytest.approx(enumerate_error(B, p))


def test_greedy_matches_brute_force_on_a_tiny_instance() -> None:
    p = np.array([0.1, 0.4, 0.7])
    k, load = 3, 2
    best = np.inf
    cells = [(i, j) for i in range(3) for j in range(k)]
    for mask in itertools.product([0, 1], repeat=len(cells)):
        S = np.array(mask, dtype=bool).reshape(3, k)
        if np.all(S.sum(axis=1) <= load) and np.all(S.any(axis=0)):
            best = min(best, expected_error_of_support(S, p))
    greedy = expected_error_of_support(greedy_support(p, k, load), p)
    assert greedy == pytest.approx(best)


def test_greedy_beats_the_cyclic_baseline_on_skewed_probabilities() -> None:
    p = np.array([0.01, 0.02, 0.5, 0.6, 0.7, 0.8, 0.9, 0.9])
    greedy = expected_error_of_support(greedy_support(p, 8, 3), p)
    assert greedy < expected_error_of_support(cyclic_support(8, 8, 3), p)


def test_edge_cases_never_and_always_straggling() -> None:
    code = design("hetero", p=[0.0, 0.2, 1.0, 0.3], load=2)
    W = np.asarray(code.B)
    assert not W[2].any()  # p = 1: never answers, never gets work
    assert np.allclose(W[0][W[0] != 0], 1.0)  # p = 0: weight 1, no variance
    p = np.array([0.0, 0.2, 1.0, 0.3])
    assert expected_error(W, p) == pytest.approx(code.params["expected_error"])
    assert expected_error(W, p) == pytest.approx(enumerate_error(W, p))


@pytest.mark.parametrize("kwargs, match", [
    ({"p": [1.0, 1.0]}, "always straggles"),
    ({"p": [0.1, 1.2]}, r"\[0, 1\]"),
    ({"p": [0.1, 0.2], "load": 1, "k": 3}, "cannot hold"),
    ({"p": [0.1, 0.2], "load": 5}, "between 1 and k"),
    ({}, "`probabilities`"),
])
def test_bad_inputs(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(InvalidInput, match=match):
        design("hetero", **kwargs)  # type: ignore[arg-type]


def test_budget_too_small_for_useful_workers() -> None:
    with pytest.raises(DesignError, match="raise `load`"):
        design("hetero", p=[0.1, 1.0, 1.0], load=1, k=2)


def test_probability_files(tmp_path: Path) -> None:
    text = tmp_path / "p.txt"
    text.write_text("# straggler probabilities\n0.1, 0.2\n0.5 0.3  # last two\n")
    assert read_probabilities(str(text)) == [0.1, 0.2, 0.5, 0.3]
    js = tmp_path / "p.json"
    js.write_text("[0.1, 0.4]")
    assert read_probabilities(str(js)) == [0.1, 0.4]
    code = design("hetero", p_file=str(text), load=2)
    assert code.n == 4 and code.params["p"] == [0.1, 0.2, 0.5, 0.3]
    bad = tmp_path / "bad.txt"
    bad.write_text("0.1, abc")
    with pytest.raises(InvalidInput, match="numbers"):
        read_probabilities(str(bad))
    with pytest.raises(InvalidInput, match="no such file"):
        read_probabilities(str(tmp_path / "missing.txt"))
    with pytest.raises(DesignError, match="not both"):
        design("hetero", p=[0.1], p_file=str(text))
