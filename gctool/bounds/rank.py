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
#: targets' coefficients in it, and the decoder's check of the witness set); a second witness
#: shares the row basis and adds only its decoder's check
WITNESS_FACTORISATIONS = 3
#: one of these factorisations over R/C, in ns: a fixed part (the calls, the row basis's
#: gathering, the decoder's set-up) plus :func:`gctool.budget.solve_cost` (complex B:
#: SVD_COMPLEX times it, as the decoder's); the rank's own is the SVD with its square U
#: (:func:`gctool.decode.cost.spectral_cost`: a tall B's U has n columns).  Measured on real B
#: of rank n - 1 and n = 12-1000, n x 2n and 2n x n (the rank and its witnesses: 0.4 ms at
#: n = 12, 6 ms at n = 100, 1.8 s at n = 1000): 0.7-1.3x of this; complex B of n = 12-600:
#: 0.8-1.45x; one core of the 2-core development machine.  Tall random B, one BLAS thread
#: (medians of 3, load 3.5-6): real 2048 x 256 0.8-1.0 s of CPU, 2048 x 512 1.2-1.3 s, complex
#: 2048 x 256 1.9-2.5 s, 2048 x 512 2.6-3.2 s: 1.14x, 1.01x, 1.5x, 1.27x of this (solve_cost
#: for the rank's SVD too read 3.0x, 1.65x, 3.5x, 2.0x)
FACTORISATION_NS = 150_000


def work(code: GradientCode, second: bool = False) -> int:
    """Work of ``bound`` on a file: the rank of B (over GF(q) one elimination,
    :func:`gctool.algebra.linalg.elimination_cost`; over R/C the SVD with its square U,
    :func:`gctool.decode.cost.spectral_cost`) and, over R/C, the witness of
    T_0 <= n - rank + 1; ``second``: also the witness that rank(B) > n - s breaks s stragglers
    (:func:`witnesses_fail`; exact and free over GF(q))."""
    from gctool.budget import solve_cost

    n, K = code.B.shape
    if code.field.is_finite:
        from gctool.algebra.linalg import elimination_cost

        return int(elimination_cost(n, K, code.field))
    from gctool.decode.cost import SVD_COMPLEX, spectral_cost

    complex_ = code.field.kind == "complex"
    one = FACTORISATION_NS + int((SVD_COMPLEX if complex_ else 1.0) * solve_cost(n, K))
    svd = FACTORISATION_NS + int(spectral_cost(n, K, complex_))  # the rank's, U square
    return svd + one * (WITNESS_FACTORISATIONS + (1 if second else 0))


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
    from gctool.algebra.spectral import Spectral

    check(code, budget)
    if code.field.is_finite or not code.B.size:
        return matrix_rank(code.field, code.B)
    return Spectral.of_code(code).rank  # the factorisation the searches after it reuse


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


def row_basis(code: GradientCode, rank: int) -> tuple[list[int], np.ndarray]:
    """Pivot rows of B (a row basis) and the targets' coefficients in them (exact over
    GF(q)): what :func:`witness` builds its straggler set from, for any s."""
    return _row_basis_gf(code) if code.field.is_finite else _row_basis_float(code, rank)


def witness(code: GradientCode, s: int, rank: int,
            basis: tuple[list[int], np.ndarray] | None = None) -> tuple[list[int], str] | None:
    """(stragglers, reason): a set of s stragglers that rank(B) > n - s breaks (exact argument;
    None when the rank is small enough).  ``basis``: :func:`row_basis` of the code, when
    already computed."""
    n = code.n
    if rank <= n - s:
        return None
    rows, coef = row_basis(code, rank) if basis is None else basis
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
    return witnesses_fail(code, [s], rank)[0]


def witnesses_fail(code: GradientCode, sizes: list[int], rank: int) -> list[bool]:
    """:func:`witness_fails` for each of ``sizes``, with one row basis of B and one decoding
    per distinct witness set (``bound`` asks for s and for n - rank + 1)."""
    from gctool.decode import Decoder

    basis: tuple[list[int], np.ndarray] | None = None
    fails: dict[tuple[int, ...], bool] = {}
    out = []
    for s in sizes:
        if code.field.is_finite or not 0 < s < code.n or rank <= code.n - s:
            out.append(True)
            continue
        basis = row_basis(code, rank) if basis is None else basis
        found = witness(code, s, rank, basis)
        if found is None:
            out.append(False)
            continue
        key = tuple(found[0])
        if key not in fails:
            F = np.array([[i for i in range(code.n) if i not in key]], dtype=np.intp)
            fails[key] = not bool(Decoder(code).evaluate(F).ok[0])
        out.append(fails[key])
    return out
