"""expander and graph schemes: graphs and spectra against their definitions, the
Glasgow-Wootters component formula against the decoder, and the bounds against attack."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gctool.algebra.fields import parse_field
from gctool.audit.attack import attack
from gctool.bounds.closed_forms import closed_form_worst_error, cycle_worst_error
from gctool.codes import design, regular_graphs
from gctool.codes.expander import spectral_bound
from gctool.codes.graph import component_error, incidence
from gctool.decode import Decoder
from gctool.errors import DesignError
from gctool.model import GradientCode


def eig_multiset(A: np.ndarray) -> list[float]:
    return sorted(np.round(regular_graphs.spectrum(A), 8).tolist())


def is_simple_regular(A: np.ndarray, d: int) -> bool:
    return bool(np.all(A == A.T) and not np.any(np.diag(A)) and set(np.unique(A)) <= {0, 1}
                and np.all(A.sum(axis=1) == d))


def test_petersen_graph() -> None:
    A = regular_graphs.petersen()
    assert is_simple_regular(A, 3)
    assert eig_multiset(A) == sorted([3.0] + [1.0] * 5 + [-2.0] * 4)
    # Petersen: no triangles, no 4-cycles, diameter 2 (A^2 + A has no zero off the diagonal)
    assert np.trace(A @ A @ A) == 0 and np.all((A @ A + A + np.eye(10)) > 0)


@pytest.mark.parametrize("q", [5, 9, 13, 17, 25, 29])
def test_paley_graph_spectrum(q: int) -> None:
    A = regular_graphs.paley(q)
    d = (q - 1) // 2
    assert is_simple_regular(A, d)
    expected = [float(d)] + [(-1 + q**0.5) / 2] * d + [(-1 - q**0.5) / 2] * d
    assert eig_multiset(A) == sorted(np.round(expected, 8).tolist())


@pytest.mark.parametrize("m", [2, 3, 5, 7])
def test_margulis_graph(m: int) -> None:
    A = regular_graphs.margulis(m * m)
    assert np.all(A == A.T) and np.all(A.sum(axis=1) == 8)
    x, y = 1 % m, 2 % m  # vertex (1, 2): its image (x + 2y, y) is a neighbour
    assert A[x + m * y, (x + 2 * y) % m + m * y] >= 1
    assert regular_graphs.spectrum(A)[1] <= 5 * 2**0.5 + 1e-9  # Gabber-Galil


@pytest.mark.parametrize("N, d, seed", [(10, 3, 0), (12, 4, 1), (20, 5, 2), (30, 3, 3)])
def test_random_regular_is_simple_regular_and_seeded(N: int, d: int, seed: int) -> None:
    A = regular_graphs.random_regular(N, d, np.random.default_rng(seed))
    assert is_simple_regular(A, d)
    assert np.array_equal(A, regular_graphs.random_regular(N, d, np.random.default_rng(seed)))


def test_cycle_and_complete_spectra() -> None:
    N = 7
    expected = sorted(np.round([2 * np.cos(2 * np.pi * j / N) for j in range(N)], 8).tolist())
    assert eig_multiset(regular_graphs.cycle(N)) == expected
    assert eig_multiset(regular_graphs.complete(5)) == sorted([4.0] + [-1.0] * 4)


@pytest.mark.parametrize("kwargs, match", [
    ({"graph": "random-regular", "vertices": 7, "d": 3}, "even"),
    ({"graph": "paley", "vertices": 11}, "1 \\(mod 4\\)"),
    ({"graph": "margulis", "vertices": 50}, "square"),
    ({"graph": "petersen", "vertices": 12}, "10 vertices"),
    ({"graph": "petersen", "d": 4}, "degree 3"),
    ({"graph": "cycle"}, "needs the number of vertices"),
])
def test_bad_graph_options(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(DesignError, match=match):
        design("expander", seed=1, **kwargs)


def test_expander_code_and_its_recorded_spectrum() -> None:
    code = design("expander", graph="petersen", s=2, seed=0)
    assert np.allclose(code.B * 3, regular_graphs.petersen()) and np.allclose(code.B.sum(axis=1), 1)
    p = code.params
    assert (p["lambda2"], p["lambda_min"], p["lambda"], p["ramanujan"]) == (1, -2, 2, True)
    assert p["spectral_bound"] == pytest.approx((2 / 3) ** 2 * 10 * 2 / 8)
    with pytest.raises(DesignError, match="real or complex"):
        design("expander", graph="petersen", field="GF(7)")


@pytest.mark.parametrize("graph, vertices, d, seed", [("petersen", None, None, 0),
                                                       ("random-regular", 12, 3, 4),
                                                       ("paley", 13, None, 0),
                                                       ("margulis", 9, None, 0)])
def test_spectral_bound_holds_against_exhaustive_attack(graph: str, vertices: int | None,
                                                        d: int | None, seed: int) -> None:
    code = design("expander", graph=graph, vertices=vertices, d=d, seed=seed)
    lam, deg = code.params["lambda"], code.params["degree"]
    for s in range(1, 4):
        assert attack(code, s).raw_error <= spectral_bound(lam, deg, code.n, s) + 1e-9


def test_graph_scheme_is_the_incidence_matrix() -> None:
    code = design("graph", graph="petersen", seed=0)
    assert (code.n, code.k) == (15, 10)
    assert np.all(code.loads == 2) and np.all(code.replication == 3)
    A = np.asarray(code.B).T @ np.asarray(code.B)
    assert np.array_equal(A - 3 * np.eye(10), regular_graphs.petersen())  # B^T B = A + dI
    sv = np.linalg.svd(np.asarray(code.B), compute_uv=False)
    assert sv[1] ** 2 == pytest.approx(code.params["sigma2_squared"])  # = 2d - gap = 4
    assert code.params["sigma2_squared"] == 4


def test_graph_scheme_over_gf2() -> None:
    code = design("graph", graph="cycle", vertices=5, field="GF(2)", seed=0)
    assert str(code.field) == "GF(2)" and set(np.unique(code.B)) == {0, 1}


@settings(max_examples=60, deadline=None)
@given(st.integers(3, 9), st.integers(0, 2**32 - 1), st.data())
def test_component_formula_matches_the_decoder(N: int, seed: int, data: st.DataObject) -> None:
    rng = np.random.default_rng(seed)
    pairs = [(u, v) for u in range(N) for v in range(u + 1, N)]
    m = int(rng.integers(1, len(pairs) + 1))
    edges = np.array([pairs[i] for i in rng.choice(len(pairs), size=m, replace=False)])
    survivors = data.draw(st.sets(st.integers(0, m - 1)))
    code = GradientCode(incidence(edges, N), parse_field("real"), 0, "graph")
    expected = Decoder(code).decode(sorted(survivors)).error if survivors else float(N)
    assert component_error(edges, N, survivors) == pytest.approx(expected, abs=1e-8)


def test_component_formula_counts_loops_as_odd_cycles() -> None:
    edges = np.array([[0, 0], [1, 2]])
    assert component_error(edges, 3, [0, 1]) == 0.0  # {0} has a loop; {1, 2} is balanced
    assert component_error(edges, 3, [1]) == 1.0


@pytest.mark.parametrize("N", [3, 4, 5, 6, 7, 8, 9])
def test_cycle_closed_form_matches_exhaustive_attack(N: int) -> None:
    code = design("graph", graph="cycle", vertices=N, seed=0)
    for s in range(N + 1):
        worst = attack(code, s).raw_error
        assert cycle_worst_error(N, s) == pytest.approx(worst, abs=1e-8)
        if s < N:
            found = closed_form_worst_error(code, s)
            assert found is not None and found[0] == pytest.approx(worst, abs=1e-8)


def test_odd_and_even_cycles_differ_at_one_straggler() -> None:
    assert cycle_worst_error(7, 1) == pytest.approx(1 / 7) and cycle_worst_error(8, 1) == 0


def test_cycle_closed_form_is_not_applied_to_other_graphs() -> None:
    code = design("graph", graph="complete", vertices=4, seed=0)
    assert closed_form_worst_error(code, 2) is None
    two_triangles = np.array([[0, 1], [1, 2], [0, 2], [3, 4], [4, 5], [3, 5]])
    split = GradientCode(incidence(two_triangles, 6), parse_field("real"), 0, "graph")
    assert closed_form_worst_error(split, 1) is None  # 2-regular but not connected
