"""Exact least-squares errors for the sets float64 cannot decide.

The entries of a real or complex code are binary floating-point numbers, hence exact rationals
(``Fraction(x)`` is exact).  For survivors F the squared error ``min_a ||a^T B_F - t||^2`` is
the squared distance of each target from the row space of B_F; this module computes it exactly:
a row basis by fraction-free elimination over the integers (rows scaled to integers by powers of
two), then the normal equations of that basis in exact rational arithmetic.  Complex codes are
realified: the complex row space of B_F is the real span of the rows b and i b written as
``[Re, Im]``, and norms are preserved.

The work is bounded twice.  Its size (:func:`exact_meter`, big-number operations per decoder):
beyond it the set is *undecided*, and the caller raises :class:`Undecided` with the diagnostic
instead of guessing.  Its time (:class:`ExactClock`): the CPU time of each set's decision is
charged to the run's work meter as it is spent, so a run over ``max_work`` stops there with the
run's refusal (the time per operation ranges over three orders of magnitude with the size of
the integers: 0.1-2 us for small integer entries, 10-200 us for random float64 ones, ten times
that for complex ones, which no calibrated rate foresees).

Before any of that, :func:`refined_error` tries a proof in float64 at twice its precision: a
decoder refined until its residual is accurate (QR with column pivoting, the residuals summed
exactly from error-free products and :func:`math.fsum`), whose error, rounded up, is at most
the tolerance.  The least-squares error is at most that of any decoder, so the proof settles
the set as exact arithmetic would (it decodes); what it cannot prove goes on to the exact path.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from fractions import Fraction

import numpy as np

from gctool.algebra.rational import integer_rows, row_basis, solve
from gctool.budget import NS_PER_S, Meter
from gctool.errors import BudgetExceeded
from gctool.numerics import two_product
from gctool.wording import counted

#: largest exact work (about f * K * min(f, K) big-number operations) per set and per decoder
MAX_SET_WORK = 400_000
MAX_TOTAL_WORK = 40_000_000


class Undecided(BudgetExceeded):
    """float64 cannot decide a straggler set and exact arithmetic is above its budget."""


def _undecided(sets: int, what: str) -> Undecided:
    return Undecided(
        f"float64 cannot decide {what} (a near-singular or near-tolerance system) and exact "
        f"rational arithmetic would exceed its budget ({counted(sets, 'set')} already decided "
        "exactly); use a finite field, a better-conditioned code, or `exact` for integer and "
        "rational codes", kind="exact", param=None)


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


class ExactClock:
    """The CPU time (this thread) of the exact decisions of a batch's sets, charged to the run's
    work ``meter`` (ns of one core) as it is spent: each call charges the time since the one
    before, so a meter whose budget runs out stops a decision within one elimination step
    (:func:`exact_value` calls it after each).  ``what()``: what the refusal says was done
    (the meter's detail).  With no meter (a caller that holds no run budget) it charges
    nothing."""

    def __init__(self, meter: Meter | None, what: Callable[[], str]) -> None:
        self.meter, self.what = meter, what
        self.last = time.thread_time()

    def __call__(self) -> None:
        if self.meter is None:
            return
        now = time.thread_time()
        spent, self.last = now - self.last, now
        self.meter.charge(spent * NS_PER_S, self.what())


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
    rounded to the nearest float at the end (:func:`exact_value` without the rounding)."""
    return float(exact_value(rows, targets))


def exact_value(rows: np.ndarray, targets: np.ndarray,
                step: Callable[[], None] | None = None) -> Fraction:
    """``min_a ||a^T rows - t||^2`` summed over the targets (rows of ``targets``), as an exact
    rational: what the tolerance rule compares with :func:`gctool.numerics.exact_limit`.
    ``step`` (an :class:`ExactClock`) is called after each step of the work (it may raise:
    the decision stops there)."""
    tick = step if step is not None else (lambda: None)
    R, T = realify(np.asarray(rows), np.atleast_2d(targets))
    if R.shape[0] == 0:
        return Fraction(sum(Fraction(float(x)) ** 2 for x in T.ravel()))
    integers = _integer_rows(R)
    tick()
    basis = row_basis(integers, tick)
    Tq = [[Fraction(float(x)) for x in t] for t in T]
    total = Fraction(0)
    G = []
    for u in basis:
        G.append([Fraction(sum(x * y for x, y in zip(u, v, strict=True))) for v in basis])
        tick()
    for t in Tq:
        tt = sum(x * x for x in t)
        if not basis:
            total += tt
            continue
        b = [Fraction(sum(x * y for x, y in zip(u, t, strict=True))) for u in basis]
        x = solve(G, b, tick)
        total += tt - sum(p * q for p, q in zip(b, x, strict=True))
    return total


def vector_error(a: np.ndarray, rows: np.ndarray, targets: np.ndarray) -> Fraction:
    """``||a rows - targets||^2`` (a: (m, f), rows: (f, K), targets: (m, K); summed over
    the entries), exactly: the error of a given decoder, at least :func:`exact_value`."""
    total = Fraction(0)
    for u in range(targets.shape[0]):
        for j in range(rows.shape[1]):
            re = -Fraction(float(np.real(targets[u, j])))
            im = -Fraction(float(np.imag(targets[u, j])))
            for i in range(rows.shape[0]):
                ar, ai = Fraction(float(np.real(a[u, i]))), Fraction(float(np.imag(a[u, i])))
                br = Fraction(float(np.real(rows[i, j])))
                bi = Fraction(float(np.imag(rows[i, j])))
                re += ar * br - ai * bi
                im += ar * bi + ai * br
            total += re * re + im * im
    return total


#: refinement steps of :func:`refined_error` (each gains about -log10(cond * eps) digits)
REFINE_STEPS = 6
_U = 2.0 ** -53  # unit round-off
_SAFE = 2.0 ** 995  # below this a split cannot overflow
_ETA = 2.0 ** -1074  # smallest subnormal


def _residuals(A: np.ndarray, t: np.ndarray, hi: np.ndarray, lo: np.ndarray
               ) -> tuple[np.ndarray, float] | None:
    """``t - A (hi + lo)`` rounded once per entry (error-free products summed by
    :func:`math.fsum`), and a bound on how far its Euclidean norm may lie below the exact
    one's (underflow of the products' low parts); None when something may overflow."""
    if not (np.all(np.abs(A) < _SAFE) and np.all(np.abs(hi) < _SAFE)
            and np.all(np.abs(lo) < _SAFE)):
        return None
    h1, r1 = two_product(A, -hi[None, :])
    h2, r2 = two_product(A, -lo[None, :])
    terms = np.concatenate([t[:, None], h1, r1, h2, r2], axis=1)
    if not np.isfinite(terms).all():
        return None
    try:
        res = np.array([math.fsum(row) for row in terms.tolist()])
    except OverflowError:  # an intermediate sum above the float range
        return None
    if not np.isfinite(res).all():
        return None
    # underflow in a product's low part loses a few _ETA (counted generously: 8 per product,
    # 2 f products per entry); fsum rounds once (relative _U): the caller divides by (1 - _U)
    return res, 16.0 * A.shape[1] * _ETA * math.sqrt(A.shape[0])


def refined_error(rows: np.ndarray, targets: np.ndarray, limit: float) -> float | None:
    """The error ``||a^T rows - t||^2`` (summed over the targets) of a refined decoder a when
    a rigorous upper bound on it is at most ``limit`` (which proves that the least-squares
    error is too: the set decodes), else None (not proved: decide exactly).

    The decoder is a pair of float64 vectors ``hi + lo`` (twice the precision), refined from
    the column-pivoted QR of ``rows^T`` with residuals computed exactly and rounded once
    (:func:`_residuals`); the value returned is the computed error of the best step: within a
    relative 1e-15 or so of that decoder's exact error, which is at least the least-squares
    error and, when cond(rows) * eps is well below 1 (the refinement converges), within about
    ``(cond * eps)^2`` of it relatively (measured: 3e-10 at cond 1.3e12)."""
    R, T = realify(np.asarray(rows), np.atleast_2d(targets))
    A = np.ascontiguousarray(R.T)  # (K, f)
    K, f = A.shape
    if f == 0 or not (np.isfinite(A).all() and np.isfinite(T).all()) or limit < 0:
        return None
    import scipy.linalg  # here: most runs never refine a set, and scipy takes 0.2 s to import

    Q, Rt, piv = scipy.linalg.qr(A, mode="economic", pivoting=True)
    d = np.abs(np.diag(Rt))
    r = int(np.sum(d > d[0] * max(K, f) * 2 * _U)) if d.size and d[0] > 0 else 0
    if r == 0:
        return None
    R1, Q1 = Rt[:r, :r], Q[:, :r]

    def solve(res: np.ndarray) -> np.ndarray:
        x = np.zeros(f)
        x[piv[:r]] = scipy.linalg.solve_triangular(R1, Q1.T @ res)
        return x

    bound, value = 0.0, 0.0
    for t in T:
        hi, lo = np.zeros(f), np.zeros(f)
        best: tuple[float, float] | None = None
        for _ in range(REFINE_STEPS):
            got = _residuals(A, t, hi, lo)
            if got is None:
                break
            res, slack = got
            err = float(np.dot(res, res))
            ub = (math.sqrt(err) * (1 + (K + 4) * _U) / (1 - _U) + slack) ** 2 * (1 + 4 * _U)
            best = (ub, err) if best is None else min(best, (ub, err))
            dx = solve(res)
            if not np.isfinite(dx).all() or not np.any(np.abs(dx) > _U * _U * np.abs(hi)):
                break  # converged to twice float64's precision (or lost)
            s = hi + dx  # (hi, lo) += dx, renormalised (TwoSum)
            bb = s - hi
            lo = lo + ((hi - (s - bb)) + (dx - bb))
            hi = s
        if best is None:
            return None
        bound += best[0]
        value += best[1]
    bound *= 1 + 2 * T.shape[0] * _U
    return value if bound <= limit else None
