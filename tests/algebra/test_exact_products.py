"""Exact proportionality of float rows (:func:`gctool.numerics.exactly_proportional`, which
confirms the row classes and rotations of the symmetry reductions): its float64 products
(:func:`gctool.numerics.two_product`) against Python rationals."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from gctool.numerics import PRODUCT_RANGE, exactly_proportional, proportional_rows, two_product


def _rational(x: np.ndarray, y: np.ndarray) -> bool:
    """``x_i y_j == x_j y_i`` for all i (j the first non-zero of x), on equal supports."""
    if not np.array_equal(x != 0, y != 0):
        return False
    nz = np.flatnonzero(x)
    if nz.size == 0:
        return True
    j = int(nz[0])
    return all(Fraction(float(y[i])) * Fraction(float(x[j]))
               == Fraction(float(y[j])) * Fraction(float(x[i])) for i in nz)


def test_two_product_is_exact_over_its_range() -> None:
    rng = np.random.default_rng(5)
    lo, hi = (int(np.log2(r)) for r in PRODUCT_RANGE)
    a = rng.standard_normal(4000) * 2.0 ** rng.integers(lo + 1, hi - 1, 4000)
    b = rng.standard_normal(4000) * 2.0 ** rng.integers(lo + 1, hi - 1, 4000)
    p, e = two_product(a, b)
    assert np.array_equal(p, a * b)
    assert all(Fraction(a[i]) * Fraction(b[i]) == Fraction(p[i]) + Fraction(e[i])
               for i in range(a.size))
    assert np.count_nonzero(e) > 3000  # products that round: the error part is tested


def test_exactly_proportional_agrees_with_rationals() -> None:
    """Rows of integers, decimals and wide exponents (some beyond PRODUCT_RANGE: rationals),
    times exact and inexact factors, some entries one ulp off, some zeros: both answers
    occur, and the float64 products give the rational answer every time."""
    rng = np.random.default_rng(11)
    seen = {True: 0, False: 0}
    for t in range(6000):
        K = int(rng.integers(1, 10))
        x = [rng.integers(-9, 10, K).astype(float),
             rng.standard_normal(K) * 10.0 ** int(rng.integers(-5, 5)),
             rng.standard_normal(K) * 2.0 ** rng.integers(-1000, 1000, K),
             rng.choice([0.1, 0.2, 0.3, 1 / 3, 3.0, 7.0], K),
             rng.standard_normal(K) * 2.0 ** rng.integers(-420, 420, K)][t % 5]
        c = rng.choice([2.0, -0.5, 3.0, 1 / 3, 0.1, -7.0, 1 + 2**-52, 2.0**-20, 2.0**20])
        y = x * c
        if rng.random() < 0.3:
            i = int(rng.integers(K))
            y[i] = np.nextafter(y[i], np.inf)
        if rng.random() < 0.2:
            x[rng.random(K) < 0.3] = 0
            y[x == 0] = 0
        want = _rational(x, y)
        seen[want] += 1
        assert exactly_proportional(x, y) == want, (x.tolist(), y.tolist())
        assert exactly_proportional(y, x) == want, (y.tolist(), x.tolist())
    assert min(seen.values()) > 1000, seen


def test_proportional_rows_agree_with_rationals_row_by_row() -> None:
    """The batched test (:func:`gctool.numerics.proportional_rows`, the row classes' exact
    confirmation) gives each row's rational answer: rows of x's support or not, exact and
    inexact factors, entries one ulp off, entries beyond PRODUCT_RANGE (row by row)."""
    rng = np.random.default_rng(3)
    seen = {True: 0, False: 0}
    for t in range(600):
        K, m = int(rng.integers(1, 8)), int(rng.integers(1, 12))
        x = rng.integers(-9, 10, K) * 2.0 ** rng.integers(-30, 30, K)
        if t % 7 == 0:
            x = x * 2.0**600  # beyond the range: rationals
        Y = x[None, :] * rng.choice([1.0, -1.0, 3.0, 0.1, 2.0**-9, 1 / 3], (m, 1))
        off = rng.random(m) < 0.2
        Y[off, 0] = np.nextafter(Y[off, 0], np.inf)
        Y[rng.random((m, K)) < 0.05] = 0
        got = proportional_rows(Y, x)
        for i in range(m):
            want = _rational(x, Y[i])
            seen[want] += 1
            assert got[i] == want, (t, x.tolist(), Y[i].tolist())
    assert min(seen.values()) > 300, seen


def test_proportional_rows_of_complex_rows_are_each_rows_answer() -> None:
    rng = np.random.default_rng(4)
    x = rng.integers(-3, 4, 6) * (1 - 2j)
    Y = x[None, :] * np.array([[1.0], [1j], [0.5 - 1j], [1 / 3]])
    Y[3, 0] += 1e-12
    got = proportional_rows(Y, x)
    assert got.tolist() == [exactly_proportional(x, y) for y in Y]
    assert got[:3].all() and not got[3]
