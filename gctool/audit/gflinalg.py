"""Exact linear algebra of one matrix over GF(q) with :class:`GFArith` (no galois needed):
reduced row echelon form, rank, left null space and a particular solution."""

from __future__ import annotations

import numpy as np

from gctool.audit.gfarith import GFArith


def rref(arith: GFArith, M: np.ndarray, ncols: int | None = None
         ) -> tuple[np.ndarray, list[int]]:
    """Reduced row echelon form (pivots searched in the first ``ncols`` columns)."""
    M = np.array(M, dtype=np.int64, copy=True)
    R, C = M.shape
    ncols = C if ncols is None else ncols
    pivots: list[int] = []
    r = 0
    for c in range(ncols):
        if r == R:
            break
        nz = np.flatnonzero(M[r:, c])
        if nz.size == 0:
            continue
        p = r + int(nz[0])
        M[[r, p]] = M[[p, r]]
        M[r] = arith.mul(M[r], arith.inv(M[r, c]))
        f = M[:, c].copy()
        f[r] = 0
        rows = np.flatnonzero(f)
        if rows.size:
            M[rows] = arith.sub(M[rows], arith.mul(f[rows, None], M[r][None, :]))
        pivots.append(c)
        r += 1
    return M, pivots


def rank(arith: GFArith, M: np.ndarray) -> int:
    return len(rref(arith, M)[1])


def null_space(arith: GFArith, A: np.ndarray) -> np.ndarray:
    """Rows spanning ``{x : A x = 0}`` (d x columns of A)."""
    R, piv = rref(arith, A)
    n = A.shape[1]
    free = [c for c in range(n) if c not in set(piv)]
    N = np.zeros((len(free), n), dtype=np.int64)
    for i, f in enumerate(free):
        N[i, f] = 1
        for r, c in enumerate(piv):
            N[i, c] = arith.neg(R[r, f])
    return N


def solve(arith: GFArith, A: np.ndarray, Y: np.ndarray) -> tuple[bool, np.ndarray]:
    """A particular solution X of ``A X = Y`` (free variables 0) and whether one exists."""
    n = A.shape[1]
    R, piv = rref(arith, np.concatenate([A, Y], axis=1), n)
    r = len(piv)
    consistent = not np.any(R[r:, n:])
    X = np.zeros((n, Y.shape[1]), dtype=np.int64)
    for i, c in enumerate(piv):
        X[c] = R[i, n:]
    return consistent, X
