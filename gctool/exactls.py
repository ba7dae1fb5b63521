"""Exact least-squares errors for the sets float64 cannot decide.

The entries of a real or complex code are binary floating-point numbers, hence exact rationals
(``Fraction(x)`` is exact).  For survivors F the squared error ``min_a ||a^T B_F - t||^2`` is
the squared distance of each target from the row space of B_F; this module computes it exactly:
a row basis by fraction-free elimination over the integers (rows scaled to integers by powers of
two), then the normal equations of that basis in exact rational arithmetic.  Complex codes are
realified: the complex row space of B_F is the real span of the rows b and i b written as
``[Re, Im]``, and norms are preserved.

The work is bounded (:func:`exact_meter`, one :class:`gctool.budget.Meter` per decoder): beyond
it the set is *undecided*, and the caller raises :class:`Undecided` with the diagnostic instead
of guessing.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from gctool.algebra.rational import integer_rows, row_basis, solve
from gctool.budget import Meter
from gctool.errors import BudgetExceeded

#: largest exact work (about f * K * min(f, K) big-number operations) per set and per decoder
MAX_SET_WORK = 400_000
MAX_TOTAL_WORK = 40_000_000


class Undecided(BudgetExceeded):
    """float64 cannot decide a straggler set and exact arithmetic is above its budget."""


def _undecided(sets: int, what: str) -> Undecided:
    return Undecided(
        f"float64 cannot decide {what} (a near-singular or near-tolerance system) and exact "
        f"rational arithmetic would exceed its budget ({sets} set(s) already decided exactly); "
        "use a finite field, a better-conditioned code, or `exact` for integer and rational "
        "codes", kind="exact", param=None)


def exact_meter() -> Meter:
    """The exact work of one decoder's run (big-number operations, at most
    :data:`MAX_TOTAL_WORK`): threads of a run share it and charge it in task order, so the sets
    are decided exactly in enumeration order whatever the number of jobs."""
    meter = Meter(MAX_TOTAL_WORK, lambda total, what: _undecided(meter.charges - 1, what))
    return meter


def charge_exact(meter: Meter, f: int, K: int, what: str) -> None:
    """Charge the exact decision of one set of ``f`` survivors (``K`` columns), or refuse it
    (:class:`Undecided`) above :data:`MAX_SET_WORK` for one set or the meter's total."""
    work = max(1, f * K * max(1, min(f, K)))
    if work > MAX_SET_WORK:
        meter.charge(0)  # in task order, like every charge
        raise _undecided(meter.charges - 1, what)
    meter.charge(work, what)


def _integer_rows(rows: np.ndarray) -> list[list[int]]:
    """Each row of binary floating-point numbers times a power of two, as Python integers."""
    return integer_rows([Fraction(float(x)) for x in row] for row in rows)


def realify(rows: np.ndarray, targets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Real rows and targets with the same distances as the complex ones."""
    if not (np.iscomplexobj(rows) or np.iscomplexobj(targets)):
        return np.asarray(rows, dtype=np.float64), np.asarray(targets, dtype=np.float64)
    re, im = np.real(rows), np.imag(rows)
    R = np.concatenate([np.concatenate([re, im], axis=1), np.concatenate([-im, re], axis=1)])
    T = np.concatenate([np.real(targets), np.imag(targets)], axis=1)
    return R, T


def exact_error(rows: np.ndarray, targets: np.ndarray) -> float:
    """``min_a ||a^T rows - t||^2`` summed over the targets (rows of ``targets``), exactly,
    rounded to the nearest float at the end."""
    R, T = realify(np.asarray(rows), np.atleast_2d(targets))
    if R.shape[0] == 0:
        return float(sum(Fraction(float(x)) ** 2 for x in T.ravel()))
    basis = row_basis(_integer_rows(R))
    Tq = [[Fraction(float(x)) for x in t] for t in T]
    total = Fraction(0)
    G = [[Fraction(sum(x * y for x, y in zip(u, v, strict=True))) for v in basis]
         for u in basis]
    for t in Tq:
        tt = sum(x * x for x in t)
        if not basis:
            total += tt
            continue
        b = [Fraction(sum(x * y for x, y in zip(u, t, strict=True))) for u in basis]
        x = solve(G, b)
        total += tt - sum(p * q for p, q in zip(b, x, strict=True))
    return float(total)
