"""The round-off constant of a computed residual entry (:func:`gctool.numerics.residual_gamma`)
bounds the error of a complex dot product minus t summed in *any* order, checked against exact
Fractions of the real and imaginary parts: adversarial chained orders (all 2f real products of a
component in one sum, each addition rounding up by almost u), and random summation trees."""

from __future__ import annotations

import math
import random
from fractions import Fraction

import numpy as np
import pytest

from gctool.numerics import EPS, residual_gamma

U = EPS / 2


def _gamma(count: int) -> float:
    """Higham's gamma_count = count u / (1 - count u), u the unit round-off."""
    return count * U / (1 - count * U)


def _products(x: list[complex], y: list[complex]) -> tuple[list[float], list[float]]:
    """The 2f real products (rounded, as float64 does) of the real and of the imaginary
    component of sum_j x_j y_j."""
    re, im = [], []
    for a, b in zip(x, y, strict=True):
        re += [a.real * b.real, -(a.imag * b.imag)]
        im += [a.real * b.imag, a.imag * b.real]
    return re, im


def _exact(x: list[complex], y: list[complex], t: complex) -> tuple[Fraction, Fraction]:
    F = Fraction
    pairs = [(F(a.real), F(a.imag), F(b.real), F(b.imag)) for a, b in zip(x, y, strict=True)]
    re = sum((p * r - q * s for p, q, r, s in pairs), F(0))
    im = sum((p * s + q * r for p, q, r, s in pairs), F(0))
    return re - F(t.real), im - F(t.imag)


def _chain(terms: list[float]) -> float:
    s = 0.0
    for v in terms:
        s += v
    return s


def _tree(terms: list[float], rng: random.Random) -> float:
    """The terms summed along a random binary tree (a random pair at a time)."""
    live = list(terms)
    while len(live) > 1:
        i, j = sorted(rng.sample(range(len(live)), 2))
        v = live.pop(j)
        live[i] = live[i] + v
    return live[0]


def _ratio(x: list[complex], y: list[complex], t: complex, got: complex) -> float:
    """|fl(r) - r| / (sum_j |x_j| |y_j| + |t|), the error exactly (a Fraction's float)."""
    er, ei = _exact(x, y, t)
    err = math.hypot(float(Fraction(got.real) - er), float(Fraction(got.imag) - ei))
    scale = math.fsum(abs(a) * abs(b) for a, b in zip(x, y, strict=True)) + abs(t)
    return err / scale


def _adversarial(f: int) -> tuple[list[complex], list[complex]]:
    """x, y whose real component sum_j Re(x_j y_j) has the products 1/2, 1/2 and then 2f - 2
    products v = u (1 + 2^-20): chained in that order, every addition of v to a partial sum in
    [1, 2) rounds up by 2u - v, almost u; the imaginary products cancel in pairs."""
    v = U * (1 + 2.0**-20)
    return [1 + 1j] + [1 + 1j] * (f - 1), [0.5 - 0.5j] + [complex(v, -v)] * (f - 1)


@pytest.mark.parametrize("f", [12, 16, 40])
def test_the_constant_bounds_a_chained_adversarial_complex_sum(f: int) -> None:
    x, y = _adversarial(f)
    re, im = _products(x, y)
    got = complex(_chain(re) - 0.0, _chain(im) - 0.0)
    ratio = _ratio(x, y, 0j, got)
    # the error is (2f - 2) roundings of almost u each: the chained order's worst case ...
    assert ratio > (2 * f - 2) * U * (1 - 1e-5)
    # ... above the bound of complex arithmetic's order, sqrt(2) gamma_{f+3} (Higham 3.6) ...
    assert ratio > math.sqrt(2) * _gamma(f + 3)
    # ... and within the constant valid for any order
    assert ratio <= residual_gamma(f, True)


def test_the_constant_bounds_random_orders_and_trees() -> None:
    rng = random.Random(7)
    gen = np.random.default_rng(7)
    worst = 0.0
    for _ in range(60):
        f = int(gen.integers(1, 24))
        # entries across magnitudes and signs, so that partial sums cancel
        x = list(gen.standard_normal(f) * 2.0 ** gen.integers(-8, 8, f)
                 + 1j * gen.standard_normal(f) * 2.0 ** gen.integers(-8, 8, f))
        y = list(gen.standard_normal(f) + 1j * gen.standard_normal(f))
        t = complex(gen.standard_normal(), gen.standard_normal())
        re, im = _products(x, y)
        for order in range(3):
            if order == 0:  # complex arithmetic: one complex product, then a complex sum
                acc = 0j
                for a, b in zip(x, y, strict=True):
                    acc += a * b
                got = acc - t
            elif order == 1:  # each component's products chained in a random order
                rng.shuffle(re)
                rng.shuffle(im)
                got = complex(_chain(re) - t.real, _chain(im) - t.imag)
            else:
                got = complex(_tree(re + [-t.real], rng), _tree(im + [-t.imag], rng))
            ratio = _ratio(x, y, t, got)
            assert ratio <= residual_gamma(f, True), (f, order)
            worst = max(worst, ratio / residual_gamma(f, True))
    assert worst > 0  # the sums did round


@pytest.mark.parametrize("f", [1, 2, 3, 7, 50, 1000])
def test_the_constant_is_at_least_every_bound_it_replaces(f: int) -> None:
    old = (f + 2) * EPS / (1 - (f + 2) * EPS)  # the constant used before for R and C
    assert residual_gamma(f, False) == old
    assert residual_gamma(f, True) >= old  # a complex verdict never moves the other way
    assert residual_gamma(f, True) >= math.sqrt(2) * _gamma(2 * f + 1)
    assert residual_gamma(f, False) >= _gamma(f + 1)


def test_the_compiled_constant_is_the_same_function() -> None:
    from gctool.audit.kernels.real import res_gamma

    for f in (1, 5, 64):
        for cplx in (False, True):
            assert res_gamma(f, cplx) == residual_gamma(f, cplx)
