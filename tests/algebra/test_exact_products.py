"""Exact proportionality of float rows (:func:`gctool.numerics.exactly_proportional`, which
confirms the row classes and rotations of the symmetry reductions): its float64 products
(:func:`gctool.numerics.two_product`) against Python rationals."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from gctool.numerics import (
    PRODUCT_RANGE,
    _in_product_range,
    exactly_proportional,
    proportional_pairs,
    proportional_rows,
    sum_vanishes,
    two_product,
    two_sum,
)


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


# -- complex rows and wide exponents: exact sums of exact products, no rationals -------------
def _gaussian(z: complex) -> tuple[Fraction, Fraction]:
    return Fraction(z.real), Fraction(z.imag)


def _rational_complex(x: np.ndarray, y: np.ndarray) -> bool:
    """``y_i x_j == y_j x_i`` in Gaussian rationals for all i (j: x's first non-zero), on
    equal supports: the reference the float64 test must match."""
    x, y = np.asarray(x, dtype=complex), np.asarray(y, dtype=complex)
    if not np.array_equal(x != 0, y != 0):
        return False
    nz = np.flatnonzero(x)
    if nz.size == 0:
        return True

    def mul(u: tuple[Fraction, Fraction], v: tuple[Fraction, Fraction]
            ) -> tuple[Fraction, Fraction]:
        return u[0] * v[0] - u[1] * v[1], u[0] * v[1] + u[1] * v[0]

    j = int(nz[0])
    return all(mul(_gaussian(y[i]), _gaussian(x[j])) == mul(_gaussian(y[j]), _gaussian(x[i]))
               for i in nz)


def _parts(rng: np.random.Generator, K: int, family: int) -> np.ndarray:
    """Real parts of one family: small integers, normal numbers, exponents over the whole
    range (subnormals included), 2^+-420, decimals and specials, subnormal mantissas."""
    if family == 0:
        return rng.integers(-9, 10, K).astype(float)
    if family == 1:
        return rng.standard_normal(K)
    if family == 2:
        return rng.integers(-7, 8, K) * 2.0 ** rng.integers(-1074, 1000, K)
    if family == 3:
        return rng.standard_normal(K) * 2.0 ** rng.integers(-420, 420, K)
    if family == 4:
        return rng.choice([0.1, 1 / 3, 3.0, 5e-324, 2.0**-1070, -0.0, 0.0, 1e300], K)
    return np.ldexp(rng.integers(1, 2**52, K).astype(float), rng.integers(-1126, -1060, K))


def test_complex_rows_agree_with_rationals() -> None:
    """Complex (and some real) rows against Gaussian rationals: exact multiples (factors that
    multiply exactly: powers of two, i, small Gaussian integers, so both answers occur),
    inexact ones, one part one ulp off, parts of every magnitude from subnormal to 2^1000,
    parts 2^2000 apart within one entry, signed zeros.  The float64 test (exact products and
    exact sums, two paths: in PRODUCT_RANGE and beyond it) gives the rational answer."""
    rng = np.random.default_rng(28)
    seen = {True: 0, False: 0}
    ranged = {True: 0, False: 0}  # rows of each path
    with np.errstate(all="ignore"):
        for t in range(1500):
            K, m = int(rng.integers(1, 7)), int(rng.integers(1, 6))
            x = _parts(rng, K, t % 6) + 1j * _parts(rng, K, (t // 6) % 6)
            if t % 5 == 0:
                x = x.real.astype(complex)
            rows = []
            for _ in range(m):
                c = complex(rng.choice([2.0, -0.5, 3.0, 1 / 3, 0.1, 2.0**-600, 2.0**600, 1.0]))
                c *= complex(rng.choice([1, 1j, -1j, 1 + 1j, 2 - 1j, 0.5 + 0.25j, 1 / 3 + 0.1j]))
                y = x * c
                if rng.random() < 0.3:
                    i = int(rng.integers(K))
                    y[i] = complex(y[i].real, np.nextafter(y[i].imag, np.inf)) \
                        if rng.random() < 0.5 else complex(np.nextafter(y[i].real, -np.inf),
                                                           y[i].imag)
                rows.append(y)
            Y = np.array(rows)
            if not (np.isfinite(Y).all() and np.isfinite(x).all()):
                continue
            got = proportional_rows(Y, x)
            pairs = proportional_pairs(Y, np.broadcast_to(x, Y.shape))
            for r in range(m):
                want = _rational_complex(x, Y[r])
                seen[want] += 1
                ranged[_in_product_range(Y[r], x)] += 1
                assert got[r] == pairs[r] == want, (x.tolist(), Y[r].tolist())
    assert min(seen.values()) > 800 and min(ranged.values()) > 800, (seen, ranged)


def test_cancellation_below_the_float_range_is_seen() -> None:
    """``x = (1, 2^-1000 i)``, ``y = (1 + 2^-1000 i, 2^-1000 i)``: the real part of the cross
    product ``y_1 x_0 - y_0 x_1`` is ``2^-2000``, below every float64, so rounded complex
    products call the rows proportional; they are not (Gaussian rationals).  Scaled copies
    (powers of two: the same answer) and a truly proportional pair with parts 2^1600 apart
    (a factor i 2^300: exact) are decided exactly too."""
    t = 2.0**-1000
    x, y = np.array([1, t * 1j]), np.array([1 + t * 1j, t * 1j])
    assert y[1] * x[0] == y[0] * x[1]  # float64 products: "proportional"
    assert not _rational_complex(x, y)
    for sx in (1.0, 2.0**500, 2.0**-70, 2.0**1000):
        for sy in (1.0, 2.0**-74):
            assert not exactly_proportional(x * sx, y * sy)
    x = np.array([2.0**600 + 2.0**-1000 * 1j, 3 - 2.0**-1074 * 1j, 2.0**-1060])
    y = x * (2.0**300 * 1j)
    assert _rational_complex(x, y) and exactly_proportional(x, y)
    y[1] = complex(y[1].real, np.nextafter(y[1].imag, 1))
    assert not _rational_complex(x, y) and not exactly_proportional(x, y)


def test_signed_zeros_and_non_finite_entries() -> None:
    """A signed zero is a zero (in the support and in a part); inf and nan are refused (B
    never holds them: fields.coerce refuses them on input)."""
    x = np.array([1 + 0j, -0.0 + 2j, 0j])
    y = np.array([2 - 0j, 0.0 + 4j, -0.0 - 0j])
    assert exactly_proportional(x, y) and exactly_proportional(y * 1j, x)
    assert exactly_proportional(np.array([-0.0, 1.0]), np.array([0.0, 3.0]))
    for bad in (np.inf, np.nan, complex(1, np.inf), complex(np.nan, 0)):
        with pytest.raises(ValueError, match="finite"):
            exactly_proportional(np.array([1.0, 2.0]), np.array([2.0, bad]))


def test_sum_vanishes_is_the_exact_zero_test() -> None:
    """Sums of 8 floats (2^-1074 .. 2^0, subnormals included) that cancel exactly by
    construction (a product and its error, a sum and its error), some with one term one ulp
    off: zero exactly when the rational sum is."""
    rng = np.random.default_rng(2)
    terms = rng.standard_normal((8, 4000)) * 2.0 ** rng.integers(-1074, 0, (8, 4000))
    a, b = (rng.standard_normal(4000) * 2.0 ** rng.integers(-300, 0, 4000) for _ in (0, 1))
    terms[0], terms[1] = two_product(a, b)  # a b, exactly, and minus it
    terms[2], terms[3] = (-v for v in two_product(b, a))
    s, err = two_sum(terms[4], terms[5])
    terms[6], terms[7] = -s, -err  # t4 + t5 - (t4 + t5), exactly
    off = rng.random(4000) < 0.3
    terms[5, off] = np.nextafter(terms[5, off], np.inf)
    got = sum_vanishes(list(terms))
    want = [sum(Fraction(float(v)) for v in terms[:, i]) == 0 for i in range(4000)]
    assert got.tolist() == want
    assert 500 < sum(want) < 3500


def test_proportional_pairs_row_by_row() -> None:
    """Each row of Y against its own row of X: the answer of exactly_proportional per row,
    zero rows, supports that differ, real and complex rows."""
    rng = np.random.default_rng(9)
    for kind in (float, complex):
        X = rng.integers(-3, 4, (40, 5)).astype(kind)
        if kind is complex:
            X = X + 1j * rng.integers(-3, 4, (40, 5))
        Y = X * rng.choice([1.0, -1.0, 2.0, 0.5, 3.0], (40, 1))
        if kind is complex:
            Y = Y * rng.choice([1, 1j, 1 - 1j], (40, 1))
        Y[rng.random((40, 5)) < 0.05] += 1
        got = proportional_pairs(Y, X)
        assert got.tolist() == [exactly_proportional(X[r], Y[r]) for r in range(40)]
        assert 10 < got.sum() < 40
