"""Exact linear algebra over Q on Python integers and :class:`~fractions.Fraction`.

* :func:`integer_rows` - rows of rationals scaled to integers (row scaling keeps row spaces,
  decodability and, by powers of two, exact distances);
* :func:`row_basis` - independent rows spanning an integer matrix's row space (fraction-free
  elimination, each new row divided by the gcd of its entries so the numbers stay small);
* :func:`rref` - reduced row echelon form over Q (Gauss-Jordan), and :func:`solve` for a
  non-singular square system on top of it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from fractions import Fraction
from math import gcd, lcm


def integer_rows(rows: Iterable[Sequence[Fraction]]) -> list[list[int]]:
    """Each row multiplied by the lcm of its denominators, as Python integers (exact)."""
    out = []
    for row in rows:
        den = lcm(*(f.denominator for f in row)) if len(row) else 1
        out.append([int(f * den) for f in row])
    return out


def _primitive(row: list[int]) -> list[int]:
    g = gcd(*row)
    return [x // g for x in row] if g > 1 else row


def row_basis(M: Sequence[Sequence[int]], step: Callable[[], None] | None = None
              ) -> list[list[int]]:
    """Independent rows spanning the row space of the integer matrix M, in echelon form
    (fraction-free elimination; exact); ``step`` is called after each pivot (a meter's
    clock: it may raise to stop the elimination)."""
    A = [_primitive(list(r)) for r in M if any(r)]
    if not A:
        return []
    cols = len(A[0])
    r = 0
    for c in range(cols):
        p = next((i for i in range(r, len(A)) if A[i][c] != 0), None)
        if p is None:
            continue
        A[r], A[p] = A[p], A[r]
        piv = A[r][c]
        for i in range(r + 1, len(A)):
            a = A[i][c]
            if a:
                A[i] = _primitive([piv * x - a * y for x, y in zip(A[i], A[r], strict=True)])
        r += 1
        if step is not None:
            step()
        if r == len(A):
            break
    return A[:r]


def rref(M: Sequence[Sequence[Fraction]], ncols: int, step: Callable[[], None] | None = None
         ) -> tuple[list[list[Fraction]], list[int]]:
    """Reduced row echelon form over Q (pivots searched in the first ``ncols`` columns) and
    the pivot columns; ``step``: as :func:`row_basis`'s."""
    R = [list(r) for r in M]
    pivots: list[int] = []
    r = 0
    for c in range(ncols):
        p = next((i for i in range(r, len(R)) if R[i][c] != 0), None)
        if p is None:
            continue
        R[r], R[p] = R[p], R[r]
        inv = 1 / R[r][c]
        R[r] = [x * inv for x in R[r]]
        for i in range(len(R)):
            if i != r and R[i][c] != 0:
                f = R[i][c]
                R[i] = [a - f * b for a, b in zip(R[i], R[r], strict=True)]
        pivots.append(c)
        r += 1
        if step is not None:
            step()
    return R, pivots


def solve(G: Sequence[Sequence[Fraction]], b: Sequence[Fraction],
          step: Callable[[], None] | None = None) -> list[Fraction]:
    """The solution of the non-singular system ``G x = b`` over Q (``step``: as
    :func:`row_basis`'s)."""
    n = len(b)
    R, _ = rref([list(G[i]) + [b[i]] for i in range(n)], n, step)
    return [R[i][n] for i in range(n)]
