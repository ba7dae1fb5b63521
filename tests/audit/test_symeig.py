"""The compiled small symmetric eigenvalue routine (:mod:`gctool.audit.kernels.symeig`, the
spectra walk's route without LAPACK): its stated backward-error bound, each eigenvalue within
BACKWARD n eps ||A||_2 of the exact one, checked by exact rational Sturm counts, and against
numpy.linalg.eigvalsh (LAPACK, backward stable too: within twice the bound) on random, graded,
clustered, rank-deficient, tiny- and huge-scaled matrices."""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

import numpy as np
import pytest

from gctool.audit.kernels.symeig import BACKWARD, MAX_SIDE, MAX_SWEEPS, _ql, eigvalsh_into
from gctool.numerics import EPS

from oracles import eigenvalues_below

SIDES = (1, 2, 3, 4, 5, 7, 8, 12, 17, MAX_SIDE, 32)


def ours(A: np.ndarray) -> np.ndarray:
    """The routine's eigenvalues of A (a copy is overwritten), asserting that it took A."""
    n = A.shape[0]
    w, e = np.full(n, np.nan), np.full(n, np.nan)
    assert eigvalsh_into(np.array(A, dtype=np.float64), n, w, e)
    return w


def bound(A: np.ndarray) -> float:
    """The stated error bound of each eigenvalue: BACKWARD n eps ||A||_2."""
    return BACKWARD * A.shape[0] * EPS * float(np.abs(np.linalg.eigvalsh(A)).max())


def _symmetric(rng: np.random.Generator, n: int) -> np.ndarray:
    X = rng.standard_normal((n, n))
    return X + X.T


def _graded(rng: np.random.Generator, n: int) -> np.ndarray:
    """D A D with D from 1e-8 to 1e8 (large entries at the bottom right, or the top left)."""
    D = np.logspace(-8, 8, n)
    if rng.random() < 0.5:
        D = D[::-1]
    return _symmetric(rng, n) * D[:, None] * D[None, :]


def _clustered(rng: np.random.Generator, n: int) -> np.ndarray:
    """Q diag(ev) Q^T with eigenvalues in two tight clusters (1 + 1e-12 i, -2 - 1e-13 i) and
    a repeated one."""
    Q = np.linalg.qr(rng.standard_normal((n, n)))[0]
    ev = np.array([1 + 1e-12 * i if i % 3 else -2 - 1e-13 * i for i in range(n)])
    ev[n // 2:n // 2 + 2] = 0.5
    A = (Q * ev[:n]) @ Q.T
    return (A + A.T) / 2


def _rank_deficient(rng: np.random.Generator, n: int) -> np.ndarray:
    """X X^T of rank about n / 2 (a Gram matrix of fewer vectors: PSD, zero eigenvalues)."""
    X = rng.standard_normal((n, max(1, n // 2)))
    return X @ X.T


KINDS: dict[str, Callable[[np.random.Generator, int], np.ndarray]] = {
    "random": _symmetric, "graded": _graded, "clustered": _clustered,
    "rank-deficient": _rank_deficient,
}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("scale", [1.0, 2.0**-1000, 1e-300, 3e-160, 1e160, 2.0**1000])
def test_agrees_with_numpy_within_twice_the_backward_error(kind: str, scale: float) -> None:
    """Every eigenvalue, ascending, within 2 BACKWARD n eps ||A||_2 of numpy's (both within
    their backward errors of the exact ones: Weyl), at every side it serves and with largest
    entries from 2^-1000 to 2^1000 (the routine scales by a power of 2: no harmful under- or
    overflow)."""
    rng = np.random.default_rng(hash((kind, scale)) % 2**32)
    for n in SIDES:
        for _ in range(20):
            A = KINDS[kind](rng, n)
            A = A / np.abs(A).max() * scale  # largest entry: the scale
            ref = np.linalg.eigvalsh(A)
            got = ours(A)
            assert np.all(np.diff(got) >= 0)
            assert np.abs(got - ref).max() <= 2 * bound(A), (kind, scale, n)


def test_trivial_matrices_are_exact() -> None:
    """The zero matrix, diagonals (any order) and 1 x 1 matrices: exact eigenvalues."""
    for n in SIDES:
        assert ours(np.zeros((n, n))).tolist() == [0.0] * n
        d = np.random.default_rng(n).standard_normal(n)
        assert ours(np.diag(d)).tolist() == sorted(d.tolist())
    assert ours(np.array([[-3.5e-200]])).tolist() == [-3.5e-200]
    assert ours(np.array([[0.0, 1.0], [1.0, 0.0]])).tolist() == [-1.0, 1.0]


def test_only_the_lower_triangle_is_read() -> None:
    A = _symmetric(np.random.default_rng(1), 6)
    B = np.tril(A) + np.triu(np.full((6, 6), np.nan), 1)
    assert ours(B).tolist() == ours(A).tolist()


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_a_non_finite_entry_is_declined(bad: float) -> None:
    """A NaN or infinite entry: False (the caller takes LAPACK's route), not a number."""
    A = np.eye(5)
    A[3, 1] = bad
    w, e = np.empty(5), np.empty(5)
    assert not eigvalsh_into(A, 5, w, e)


def test_an_iteration_over_its_allowance_is_declined() -> None:
    """The QL iteration gives up (False) past its allowance of iterations (the routine then
    declines the matrix); the routine's allowance, MAX_SWEEPS n, is far above what a hard case
    takes (the Wilkinson matrix W21+, its eigenvalues in close pairs: within 2 n)."""
    n = 21
    d, e = np.abs(np.arange(n) - 10.0), np.ones(n)
    assert not _ql(d.copy(), e.copy(), n, 0)
    for sweeps in (MAX_SWEEPS, 2):
        w = d.copy()
        assert _ql(w, e.copy(), n, sweeps)
        T = np.diag(d) + np.diag(e[:-1], 1) + np.diag(e[:-1], -1)
        assert np.abs(np.sort(w) - np.linalg.eigvalsh(T)).max() <= bound(T)


# -- exact arithmetic --------------------------------------------------------------------------


def _exact(A: np.ndarray) -> list[list[Fraction]]:
    return [[Fraction(float(v)) for v in row] for row in A]


def _integer_cases() -> list[np.ndarray]:
    """Integer matrices with exact multiple and zero eigenvalues: J (n, 0 x (n-1)), J - I
    (n - 1, -1 x (n-1)), a path's Laplacian (rank n - 1), X X^T of small integers."""
    out = []
    rng = np.random.default_rng(11)
    for n in (2, 3, 5, 8):
        J = np.ones((n, n))
        out += [J, J - np.eye(n), np.diag([1.0] + [2.0] * (n - 2) + [1.0]) - np.eye(n, k=1)
                - np.eye(n, k=-1) if n > 2 else J]
        X = rng.integers(-3, 4, size=(n, max(1, n - 2))).astype(float)
        out.append(X @ X.T)
    return out


def _float_cases() -> list[np.ndarray]:
    rng = np.random.default_rng(5)
    return [KINDS[kind](rng, n) * scale for kind in KINDS for n in (3, 6, 9)
            for scale in (1.0, 2.0**-600)]


@pytest.mark.parametrize("A", _integer_cases() + _float_cases())
def test_within_the_stated_bound_of_the_exact_eigenvalues(A: np.ndarray) -> None:
    """The i-th computed eigenvalue w_i brackets the exact i-th eigenvalue of A's float
    entries (in rationals) to within d = BACKWARD n eps ||A||_2: at most i exact eigenvalues
    below w_i - d, at least i + 1 below w_i + d (Sturm counts by Sylvester's law of inertia)."""
    w = ours(A)
    d = Fraction(bound(A))
    exact = _exact(A)
    for i, x in enumerate(w.tolist()):
        assert eigenvalues_below(exact, Fraction(x) - d) <= i, (i, x)
        assert eigenvalues_below(exact, Fraction(x) + d) >= i + 1, (i, x)
