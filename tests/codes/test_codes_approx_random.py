"""bgc, sbc and soft-bibd: each construction against its recipe."""

from __future__ import annotations

import numpy as np
import pytest

from gctool.codes import design
from gctool.codes.soft_bibd import balance, biregular_support, overlap_excess, support_gram
from gctool.errors import DesignError


def test_bgc_is_bernoulli_zero_one_and_seeded() -> None:
    code = design("bgc", n=60, k=80, d=8.0, seed=3)
    B = np.asarray(code.B)
    assert set(np.unique(B)) <= {0.0, 1.0} and B.shape == (60, 80)
    density = B.mean()
    assert abs(density - 8 / 80) < 4 * (0.1 * 0.9 / B.size) ** 0.5  # within 4 sigma
    assert np.array_equal(B, design("bgc", n=60, k=80, d=8.0, seed=3).B)
    assert not np.array_equal(B, design("bgc", n=60, k=80, d=8.0, seed=4).B)
    p = code.params
    assert p["empty_partitions"] == int((B.sum(axis=0) == 0).sum())
    assert p["idle_workers"] == int((B.sum(axis=1) == 0).sum()) and p["probability"] == 0.1


def test_bgc_rejects_impossible_loads() -> None:
    with pytest.raises(DesignError, match="expected load"):
        design("bgc", n=5, d=6.0, seed=1)


def test_sbc_recipe_communities_and_probabilities() -> None:
    code = design("sbc", n=40, k=40, communities=4, p_in=1.0, p_out=0.0, seed=1)
    B = np.asarray(code.B)
    expected = np.kron(np.eye(4), np.ones((10, 10)))
    assert np.array_equal(B, expected)
    # p_in = 1, p_out = 0 with n/(s+1) communities is the FRC
    frc = design("frc", n=6, s=2)
    sbc = design("sbc", n=6, communities=2, p_in=1.0, p_out=0.0, seed=0)
    assert np.array_equal(np.asarray(frc.B), np.asarray(sbc.B))


def test_sbc_cross_edges_follow_p_out() -> None:
    code = design("sbc", n=50, k=50, communities=5, p_in=0.0, p_out=0.3, seed=2)
    B = np.asarray(code.B)
    same = (np.arange(50)[:, None] // 10) == (np.arange(50)[None, :] // 10)
    assert not B[same].any()
    assert abs(B[~same].mean() - 0.3) < 4 * (0.3 * 0.7 / (~same).sum()) ** 0.5


def test_sbc_rejects_bad_options() -> None:
    with pytest.raises(DesignError, match="`p_in`"):
        design("sbc", n=6, p_in=1.5, seed=0)
    with pytest.raises(DesignError, match="communities"):
        design("sbc", n=6, communities=7, seed=0)


@pytest.mark.parametrize("n, k, d", [(7, 7, 3), (10, 15, 3), (12, 8, 2), (20, 20, 5)])
def test_biregular_support(n: int, k: int, d: int) -> None:
    B = biregular_support(n, k, d, np.random.default_rng(0))
    assert np.all(B.sum(axis=1) == d)
    cols = B.sum(axis=0)
    assert cols.max() - cols.min() <= 1 and cols.sum() == n * d


def test_overlap_excess_is_zero_exactly_for_equal_overlaps() -> None:
    fano = np.asarray(design("bibd", design="fano").B).astype(int)
    assert overlap_excess(fano) == 0
    B = fano.copy()
    B[0], B[1] = B[1].copy(), B[1].copy()  # two equal rows: overlaps 3 and others
    G = B @ B.T
    off = G[~np.eye(7, dtype=bool)]
    assert overlap_excess(B) == pytest.approx(((off - off.mean()) ** 2).sum())


def test_swaps_preserve_degrees_and_never_raise_the_excess() -> None:
    rng = np.random.default_rng(5)
    B0 = biregular_support(15, 15, 4, rng)
    B1 = balance(B0, rng, 0, 3000)
    assert np.array_equal(B1.sum(axis=1), B0.sum(axis=1))
    assert np.array_equal(B1.sum(axis=0), B0.sum(axis=0))
    assert overlap_excess(B1) <= overlap_excess(B0)


def test_soft_bibd_finds_the_fano_plane() -> None:
    code = design("soft-bibd", n=7, d=3, seed=0)
    G = np.asarray(code.B) @ np.asarray(code.B).T
    assert np.array_equal(G, 2 * np.eye(7) + np.ones((7, 7)))  # every overlap is 1
    p = code.params
    assert p["excess_after"] == 0 <= p["excess_before"] and p["lambda_bar"] == 1
    assert "gctool" in p["variant"]


def test_soft_bibd_records_its_overlaps_and_is_seeded() -> None:
    a = design("soft-bibd", n=16, k=12, d=3, seed=9)
    b = design("soft-bibd", n=16, k=12, d=3, seed=9)
    assert np.array_equal(a.B, b.B)
    G = np.asarray(a.B) @ np.asarray(a.B).T
    off = G[~np.eye(16, dtype=bool)]
    assert (a.params["overlap_min"], a.params["overlap_max"]) == (off.min(), off.max())
    assert a.params["excess_after"] <= a.params["excess_before"]
    assert np.all(a.loads == 3)


def test_soft_bibd_rejects_bad_loads() -> None:
    with pytest.raises(DesignError, match="load"):
        design("soft-bibd", n=5, d=6, seed=0)


@pytest.mark.parametrize(("n", "k", "d"), [(1, 1, 1), (7, 7, 3), (12, 30, 5), (40, 16, 4)])
def test_support_gram_is_the_overlap_matrix(n: int, k: int, d: int) -> None:
    """The sparse product equals the brute-force Z Z^T of the 0/1 support (any nonzero counts)."""
    rng = np.random.default_rng(n * k + d)
    B = biregular_support(n, k, d, rng) * rng.integers(1, 5, size=(n, k))
    Z = (B != 0).astype(np.int64)
    brute = np.array([[int(Z[i] @ Z[j]) for j in range(n)] for i in range(n)])
    G = support_gram(B)
    assert G.dtype == np.int64 and np.array_equal(G, brute)
