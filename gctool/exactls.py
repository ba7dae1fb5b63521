"""Exact least-squares errors for the sets float64 cannot decide.

The entries of a real or complex code are binary floating-point numbers, hence exact rationals
(``Fraction(x)`` is exact).  For survivors F the squared error ``min_a ||a^T B_F - t||^2`` is
the squared distance of each target from the row space of B_F; this module computes it exactly:
a row basis by fraction-free elimination over the integers (rows scaled to integers by powers of
two), then the normal equations of that basis in exact rational arithmetic.  Complex codes are
realified: the complex row space of B_F is the real span of the rows b and i b written as
``[Re, Im]``, and norms are preserved.

The work is bounded (:class:`ExactBudget`): beyond it the set is *undecided*, and the caller
raises :class:`Undecided` with the diagnostic instead of guessing.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from gctool.algebra.rational import integer_rows, row_basis, solve
from gctool.engine.threads import in_task_order
from gctool.errors import BudgetExceeded

#: largest exact work (about f * K * min(f, K) big-number operations) per set and per decoder
MAX_SET_WORK = 400_000
MAX_TOTAL_WORK = 40_000_000
_CHARGE = threading.Lock()


class Undecided(BudgetExceeded):
    """float64 cannot decide a straggler set and exact arithmetic is above its budget."""


@dataclass
class ExactBudget:
    """The exact work of one decoder's run.  Threads of a run share it
    (:mod:`gctool.engine.threads`): a charge waits for its task's turn, so the sets are charged
    in enumeration order whatever the number of jobs, and is atomic."""

    used: int = 0
    sets: int = 0

    def charge(self, f: int, K: int, what: str) -> None:
        work = max(1, f * K * max(1, min(f, K)))
        in_task_order()
        with _CHARGE:
            if work > MAX_SET_WORK or self.used + work > MAX_TOTAL_WORK:
                raise Undecided(
                    f"float64 cannot decide {what} (a near-singular or near-tolerance system) "
                    f"and exact rational arithmetic would exceed its budget ({self.sets} "
                    "set(s) already decided exactly); use a finite field, a better-conditioned "
                    "code, or --exact for integer and rational codes")
            self.used += work
            self.sets += 1


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
