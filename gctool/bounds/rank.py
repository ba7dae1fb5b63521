"""The rank bound (reference §0.3, Singleton-type): a code with rank(B) > n - s cannot tolerate
s stragglers, and T_0 <= n - rank(B) + 1.

The witness: take a row basis R of B, write a target as a combination of R and drop a row i0
with a non-zero coefficient; the other r - 1 >= n - s rows miss that target, and so does every
subset of them.  The witness straggler set is the complement of the first n - s rows of R
minus i0.  ``verify`` uses it as a cheap check (:mod:`gctool.audit.certificates`), ``bound`` as
a necessary condition; over R/C both confirm it with the decoder under the tolerance rule.
"""

from __future__ import annotations

import numpy as np

from gctool.budget import Budget
from gctool.model import GradientCode

#: factorisations of B for one rank-bound witness over R/C (a row basis by pivoted QR, the
#: targets' coefficients in it, and the decoder's check of the witness set)
WITNESS_FACTORISATIONS = 3


def work(code: GradientCode, second: bool = False) -> int:
    """Work of ``bound`` on a file: the rank of B and, over R/C, the witness of
    T_0 <= n - rank + 1; ``second``: also the witness that rank(B) > n - s breaks s stragglers
    (:func:`witness_fails`; exact and free over GF(q))."""
    from gctool.budget import solve_cost

    n, K = code.B.shape
    one = solve_cost(n, K, code.field.is_finite)
    if code.field.is_finite:
        return one
    return one * (1 + WITNESS_FACTORISATIONS * (2 if second else 1))


def check(code: GradientCode, budget: Budget, second: bool = False) -> None:
    """Refuse, before it starts, a :func:`work` above the work budget."""
    n, K = code.B.shape
    what = ("the rank of B and two witnesses (rank(B) > n - s)" if second
            else "the rank of B and its witness")
    budget.check_work(f"bound (n={n}, k*m={K}, {code.field}): {what}", work(code, second),
                      f"use the formula bounds of (n, k, s) = ({n}, {code.k}, {code.s}) without "
                      "a file, or raise `max_work`")


def rank(code: GradientCode, budget: Budget) -> int:
    """rank(B) over the code's field (the one numerical cut-off over R/C), within the work
    budget (estimated with the witness that :func:`witness_fails` checks next)."""
    from gctool.algebra.linalg import matrix_rank  # the rank verify and attack use

    check(code, budget)
    return matrix_rank(code.field, code.B)


def _row_basis_gf(code: GradientCode) -> tuple[list[int], np.ndarray]:
    """Pivot rows of B and the coefficients of the targets in them (exact)."""
    from gctool.algebra.gf import GFArith
    from gctool.algebra.linalg import rref, solve

    arith = GFArith(code.field)
    B = np.asarray(code.B, dtype=np.int64)
    rows = rref(arith, B.T)[1]  # pivot columns of B^T = independent rows of B
    _, coef = solve(arith, B[rows].T, code.targets().T.astype(np.int64))
    return rows, coef


def _row_basis_float(code: GradientCode, rank: int) -> tuple[list[int], np.ndarray]:
    from scipy.linalg import qr

    B = np.asarray(code.B)
    _, _, piv = qr(B.T, pivoting=True, mode="economic")
    rows = sorted(int(i) for i in piv[:rank])
    coef = np.linalg.lstsq(B[rows].T, code.targets().T.astype(B.dtype), rcond=None)[0]
    return rows, coef


def witness(code: GradientCode, s: int, rank: int) -> tuple[list[int], str] | None:
    """(stragglers, reason): a set of s stragglers that rank(B) > n - s breaks (exact argument;
    None when the rank is small enough)."""
    n = code.n
    if rank <= n - s:
        return None
    rows, coef = _row_basis_gf(code) if code.field.is_finite else _row_basis_float(code, rank)
    weight = np.abs(coef).max(axis=1) if coef.size else np.zeros(len(rows))
    i0 = rows[int(np.argmax(weight))]
    keep = [i for i in rows if i != i0][: n - s]
    S = sorted(set(range(n)) - set(keep))
    why = (f"rank(B) = {rank} > n - s = {n - s}: the {n - s} survivors {keep} lie in the span "
           f"of a row basis without worker {i0}, which a target needs")
    return S, why


def witness_fails(code: GradientCode, s: int, rank: int) -> bool:
    """Does the rank-bound witness for s stragglers really fail?  Always over GF(q) (exact
    argument); over R/C the argument is exact-arithmetic only, so the witness is decoded under
    the tolerance rule (rows that are only nearly dependent can decode within tol * k), the
    confirmation verify uses too."""
    if code.field.is_finite or not 0 < s < code.n or rank <= code.n - s:
        return True
    from gctool.decode import Decoder

    found = witness(code, s, rank)
    if found is None:
        return False
    stragglers = set(found[0])
    F = np.array([[i for i in range(code.n) if i not in stragglers]], dtype=np.intp)
    return not bool(Decoder(code).evaluate(F).ok[0])
