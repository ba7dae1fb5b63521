"""Exact row reduction over GF(q) and the integers, for one matrix or a batch.

Two eliminations, each written once:

* :func:`gauss_jordan` - batched Gauss-Jordan elimination of augmented systems ``[A | Y]``
  over GF(q), with a :class:`~gctool.algebra.gf.GFArith` on int64 arrays (no galois needed)
  or a galois FieldArray class.  It gives the reduced row echelon form, hence the rank, the
  consistency of ``A X = Y`` and a particular solution; :func:`rref`, :func:`rank`,
  :func:`null_space`, :func:`solve` and :func:`solve_batch` are views of it.
* :func:`eliminate` - batched fraction-free elimination (row_r <- p * row_r - f * pivot_row).
  It needs no inverses (multiplying a row by the non-zero pivot p keeps the row space), so it
  also works over the integers (:class:`~gctool.algebra.gf.IntArith`), where it decides
  consistency over Q; it returns only consistency and rank.
"""

from __future__ import annotations

import math
from functools import partial
from typing import Any

import numpy as np

from gctool.algebra.fields import Field
from gctool.algebra.gf import (
    CALC_BLOCK,
    Arith,
    ArithPath,
    GFArith,
    calc_call_ns,
    calc_entry_ns,
    calc_inverse_ns,
    muladd_ns,
)
from gctool.budget import Budget
from gctool.numerics import complement, sorted_distinct


def _ops(GF: Any) -> tuple[Any, Any, Any, Any]:
    """``(mul, sub_mul, inv, zeros)`` of a :class:`GFArith` or a galois FieldArray class
    (``sub_mul(a, f, b)`` is a - f b)."""
    if isinstance(GF, GFArith):
        return GF.mul, GF.sub_mul, GF.inv, partial(np.zeros, dtype=np.int64)
    return np.multiply, lambda a, f, b: a - f * b, np.reciprocal, GF.Zeros


#: entries of one matrix that :func:`gauss_jordan` updates at a time: its temporaries (32 KiB
#: each) stay on the heap.  Updated whole, a matrix from about 180 x 180 on had glibc give
#: them back to the system after every pivot and fault them in again, which took as long as
#: the arithmetic (2-3.5 times the time of a block at a time in a fresh process, none of it in
#: a process whose heap was already large: the rank of a 512 x 500 matrix over GF(2^8) took
#: 1.9 s or 0.45 s, now 0.55 s)
UPDATE_BLOCK = 4096


def gauss_jordan(GF: Any, M: Any, unknowns: int) -> tuple[Any, np.ndarray, np.ndarray]:
    """Batched Gauss-Jordan elimination over GF(q).

    ``M`` (b, R, C) holds the augmented systems ``[A | Y]`` with ``A`` of width ``unknowns``
    (pivots are searched there only).  ``GF`` is a :class:`GFArith` (M int64) or a galois
    FieldArray class (M a FieldArray).  Returns ``(E, rank, pivot_col)``: the reduced row
    echelon forms, the rank of each A, and for each row of E the column of its pivot (-1 below
    the rank)."""
    mul, sub_mul, inv, _ = _ops(GF)
    # row-major whatever M's layout: the updates take blocks of rows, and np.array keeps a
    # transposed input's column-major layout (verify's [B^T | T^T]), whose blocks of rows are
    # strided: each update then took twice as long (8 ns per multiply-add over GF(p))
    M = np.array(M, dtype=np.int64, order="C") if isinstance(GF, GFArith) else M.copy()
    b, R, _ = M.shape
    calc = isinstance(GF, GFArith) and GF.kind == "calc"
    row = np.zeros(b, dtype=np.intp)  # next pivot row per system
    pivot_col = np.full((b, R), -1, dtype=np.intp)
    rows = np.arange(R)
    for c in range(unknowns):
        cand = (M[:, :, c] != 0) & (rows[None, :] >= row[:, None])
        has = cand.any(axis=1)
        if not has.any():
            continue
        idx = np.flatnonzero(has)
        r0 = row[idx]
        piv = np.argmax(cand[idx], axis=1)
        top, other = M[idx, r0, :].copy(), M[idx, piv, :].copy()
        M[idx, piv, :] = top
        M[idx, r0, :] = other
        prow = mul(M[idx, r0, :], inv(M[idx, r0, c])[:, None])  # scaled pivot row
        M[idx, r0, :] = prow
        factors = M[idx, :, c].copy()
        factors[np.arange(idx.size), r0] = 0
        if idx.size == 1 and M[0].size > UPDATE_BLOCK:  # one matrix: a block of rows at a time
            A, f, p = M[idx[0]], factors[0], prow[0]
            step = max(1, UPDATE_BLOCK // A.shape[1])
            for at in range(0, R, step):
                A[at:at + step] = sub_mul(A[at:at + step], f[at:at + step, None], p[None, :])
        else:  # above the tables a block of systems at a time (CALC_BLOCK), else all at once
            step = max(1, CALC_BLOCK // M[0].size) if calc else idx.size
            for at in range(0, idx.size, step):
                part = idx[at:at + step]
                M[part] = sub_mul(M[part], factors[at:at + step, :, None],
                                  prow[at:at + step, None, :])
        pivot_col[idx, r0] = c
        row[idx] += 1
    return M, row, pivot_col


def check_elimination(budget: Budget, arith: GFArith, shape: tuple[int, ...], unknowns: int
                      ) -> None:
    """Refuse, before it starts, an elimination over GF(q) above the work or memory
    ``budget``: b systems of R x C cost b times one's :func:`elimination_cost` at rank
    min(R, unknowns) (the field's rate per multiply-add, its columns, its fresh memory), and
    the matrices, a copy and the update's temporaries are in memory at once.  The callers that
    eliminate a whole matrix call it first; batched decoders are held by their search's
    estimate."""
    b, R, C = (int(x) for x in shape)
    field = str(arith.fld)
    what = (f"an exact elimination over {field} of {b:,} systems of {R:,} x {C:,}"
            if b > 1 else f"an exact elimination of a {R:,} x {C:,} matrix over {field}")
    budget.check_work(what, b * elimination_cost(R, C, arith.fld, max(1, min(R, unknowns))),
                      "use a smaller code, or raise `max_work`")
    budget.check_memory(what, 4 * b * R * C * 8, "use a smaller code")


#: one exact elimination of a whole matrix over GF(q) (:func:`rank`: Gauss-Jordan over int64
#: arrays, every row updated at each pivot, :data:`UPDATE_BLOCK` entries at a time) costs this
#: much per column it pivots on, in ns (a dozen numpy calls over the column and the pivot
#: row), GF_SKIP_NS per column without a pivot (the search for one: 100 x 2000 matrices of
#: rank 100 were estimated at twice their time at GF_COLUMN_NS per column) ...
GF_COLUMN_NS = 40_000
GF_SKIP_NS = 5_000
#: ... plus per multiply-add of its rows x cols x rank updates its field's rate on this path
#: (:func:`~gctool.algebra.gf.muladd_ns`, GAUSS_JORDAN), the same at every size (the blocks'
#: temporaries stay in the caches and on the heap), and, once, the first touch of the
#: matrix's int64 copy, FRESH_BYTE_NS per byte (this virtual machine hands fresh memory over
#: at 3-30 ns per byte).  Fields above the tables pay
#: their polynomial arithmetic's calls at each pivot (:func:`~gctool.algebra.gf.calc_call_ns`
#: each): the pivot's inverse (:func:`~gctool.algebra.gf.calc_inverse_ns`), the scaled pivot
#: row, and one product per block of :data:`UPDATE_BLOCK` entries updated.  Fitted by
#: ``benchmarks/fit_elimination.py`` (:func:`matrix_rank` in fresh processes over GF(2^8),
#: GF(2^12)-GF(2^22), GF(2^31), GF(2), GF(7), GF(65521), GF(65537), GF(3^4), GF(257^2),
#: GF(3^12), GF(7^11), random, of low rank, repeated rows, cyclic-MDS and rs, 50 x 50 to
#: 4000 x 4000); over GF(p) and GF(3^4) the figures of the former update (a product and a
#: difference, each reduced) divided by the new one's speed-up on the same matrices, measured
#: interleaved in one process (median of 5: 1.2-1.5x at 64 x 64 and 100 x 100, 1.7-2.9x from
#: 160 x 160 on, 1.6x over GF(3^4)).  Above the tables two calls per pivot were counted
#: before the inverse's: GF(2^31) read 2.36 at 64 x 64 (the inverse of each pivot took 2.4 ms,
#: ten times a product's call)
FRESH_BYTE_NS = 3.0


def elimination_cost(rows: int, cols: int, fld: Field, rank: int | None = None) -> float:
    """One exact elimination of a rows x cols matrix over the finite field ``fld`` (its rank,
    :func:`matrix_rank`), in ns: :data:`GF_COLUMN_NS` per pivot (:data:`GF_SKIP_NS` per
    other column) and the updates' multiply-adds at the field's rate
    (:func:`~gctool.algebra.gf.muladd_ns`, GAUSS_JORDAN; above the tables each pivot's calls
    too): every row is updated at each of its ``rank``
    pivots (at most min(rows, cols); None: that many); and the first touch of its copy
    (:data:`FRESH_BYTE_NS`).  Increasing in rows, in cols and in rank."""
    fld = fld.resolved()
    rows, cols = max(1, rows), max(1, cols)
    pivots = min(rows, cols) if rank is None else max(1, min(rows, cols, rank))
    entries = float(rows) * cols
    muladds = entries * pivots
    fresh = FRESH_BYTE_NS * 8 * entries
    columns = float(pivots * GF_COLUMN_NS + (cols - pivots) * GF_SKIP_NS)
    rate = muladd_ns(fld, ArithPath.GAUSS_JORDAN)
    if calc_entry_ns(fld) is not None:  # each pivot's inverse, scaled row and blocks' products
        blocks = 1 if entries <= UPDATE_BLOCK else math.ceil(rows / max(1, UPDATE_BLOCK // cols))
        columns += pivots * (calc_inverse_ns(fld) + (1 + blocks) * calc_call_ns(fld))
    return columns + muladds * rate + fresh


#: rows of M that :func:`rank_bound` hashes at a time (int64 copies of this many rows)
HASH_ROWS = 64


def rank_bound(M: np.ndarray) -> int:
    """A bound on the rank of ``M`` (integer entries: a GF(q) matrix) over any field, read
    without an elimination: its distinct nonzero rows, and its distinct nonzero columns,
    whichever are fewer (repeated rows, as a fractional repetition code's groups, count once).
    Each line counts by a random linear hash of its entries modulo 2^64 (a fixed seed: the same
    bound on every run), a zero line hashing to 0; :data:`HASH_ROWS` rows are copied at a time
    (M is not: a refusal on its estimate holds no copy of B), about 1 ns per entry.  Two
    distinct lines collide with probability at most 2^-48 (entries below 2^16), and the bound
    reads low only then.  Entries that are not integers: min(rows, cols)."""
    M = np.asarray(M).view(np.ndarray)
    if M.size == 0:
        return 0
    rows, cols = M.shape
    if not np.issubdtype(M.dtype, np.integer):
        return min(rows, cols)
    rng = np.random.default_rng(0x6C1)
    by_col = np.asarray(rng.integers(-2**63, 2**63 - 1, size=cols, dtype=np.int64))
    by_row = np.asarray(rng.integers(-2**63, 2**63 - 1, size=rows, dtype=np.int64))
    row_hash = np.empty(rows, dtype=np.int64)
    col_hash = np.zeros(cols, dtype=np.int64)
    with np.errstate(over="ignore"):  # the hashes wrap modulo 2^64
        for at in range(0, rows, HASH_ROWS):
            block = M[at:at + HASH_ROWS].astype(np.int64)
            row_hash[at:at + HASH_ROWS] = block @ by_col
            col_hash += by_row[at:at + HASH_ROWS] @ block

    def distinct(hashes: np.ndarray) -> int:
        return int(np.count_nonzero(sorted_distinct(hashes)))

    return min(distinct(row_hash), distinct(col_hash))


def solve_batch(GF: Any, M: Any, unknowns: int) -> tuple[np.ndarray, np.ndarray, Any]:
    """Batched solution of ``A X = Y`` over GF(q) (``M = [A | Y]``, see :func:`gauss_jordan`).

    Returns ``(consistent, rank, X)`` where ``X`` (b, unknowns, C - unknowns) solves the system
    (free variables set to 0) wherever it is consistent."""
    return _solution(GF, *gauss_jordan(GF, M, unknowns), unknowns)


def _solution(GF: Any, E: Any, row: np.ndarray, pivot_col: np.ndarray, unknowns: int
              ) -> tuple[np.ndarray, np.ndarray, Any]:
    """:func:`solve_batch`'s answer read from :func:`gauss_jordan`'s reduced forms."""
    b, R, C = E.shape
    Y = E[:, :, unknowns:]
    below = np.arange(R)[None, :] >= row[:, None]
    consistent = ~np.any((Y != 0) & below[:, :, None], axis=(1, 2))
    X = _ops(GF)[3]((b, unknowns, C - unknowns))
    bi, ri = np.nonzero(pivot_col >= 0)
    X[bi, pivot_col[bi, ri], :] = Y[bi, ri, :]
    return consistent, row.copy(), X


def rref(arith: GFArith, M: np.ndarray, ncols: int | None = None
         ) -> tuple[np.ndarray, list[int]]:
    """Reduced row echelon form of one int64 matrix (pivots searched in the first ``ncols``
    columns) and its pivot columns."""
    M = np.asarray(M, dtype=np.int64)
    E, row, pivot_col = gauss_jordan(arith, M[None], M.shape[1] if ncols is None else ncols)
    return E[0], [int(c) for c in pivot_col[0, :int(row[0])]]


def rank(arith: GFArith, M: np.ndarray) -> int:
    """The rank of one int64 matrix over GF(q)."""
    return len(rref(arith, M)[1])


def matrix_rank(fld: Field, M: Any) -> int:
    """The rank of a matrix over ``fld``: exact over GF(q); over R/C the numerical rank of
    :class:`gctool.algebra.spectral.Spectral` (the factorisation and cut-off the verifier and
    the attack oracles use)."""
    if not fld.is_finite:
        from gctool.algebra.spectral import Spectral

        M = np.asarray(M)
        return Spectral.of(M).rank if M.size else 0
    return rank(GFArith(fld), np.asarray(M, dtype=np.int64))


def null_space(arith: GFArith, A: np.ndarray) -> np.ndarray:
    """Rows spanning ``{x : A x = 0}`` (d x columns of A): for each free column f (in
    increasing order), the vector with 1 at f and ``-R[r, f]`` at the pivot column of each
    row r of the reduced form R, negated in one array call (not entry by entry)."""
    R, piv = rref(arith, A)
    return _null_rows(arith, R, piv, A.shape[1])


def _null_rows(arith: GFArith, R: np.ndarray, piv: list[int], n: int) -> np.ndarray:
    """:func:`null_space` read from the reduced form ``R`` (its first ``n`` columns) of a
    matrix of ``n`` columns and its pivot columns ``piv``."""
    pivots = np.asarray(piv, dtype=np.intp)
    free = complement(n, pivots)
    N = np.zeros((free.size, n), dtype=np.int64)
    N[np.arange(free.size), free] = 1
    if pivots.size and free.size:
        N[:, pivots] = arith.neg(R[:pivots.size][:, free]).T
    return N


def solve(arith: GFArith, A: np.ndarray, Y: np.ndarray) -> tuple[bool, np.ndarray]:
    """A particular solution X of ``A X = Y`` (free variables 0) and whether one exists."""
    consistent, _, X = solve_batch(arith, np.concatenate([A, Y], axis=1)[None], A.shape[1])
    return bool(consistent[0]), X[0]


def left_null_reduction(arith: GFArith, B: np.ndarray, T: np.ndarray
                        ) -> tuple[np.ndarray, np.ndarray, bool]:
    """``(N, W, consistent)`` for ``B`` (n x K) and targets ``T`` (m x K) over GF(q): the rows
    of N (d x n) span the left null space ``{y : y^T B = 0}``, and ``W^T B = T`` (W n x m,
    free variables 0) when ``consistent``.  Survivors ``[n] \\ S`` then recover T exactly when
    ``[N[:, S]^T | W_S]`` is consistent (:func:`reduced_decodes`).  One Gauss-Jordan
    elimination of ``[B^T | T^T]`` gives both: its first n columns are the reduced form of
    B^T (pivots are searched there only, and the reduced form is unique), whose free columns
    give N (:func:`null_space`), and its last m give W (:func:`solve`).  (Two eliminations,
    B^T then [B^T | T^T], took twice the time: 8 s of a dense GF(7) 1024 x 512.)"""
    B = np.asarray(B, dtype=np.int64)
    n = B.shape[0]
    M = np.concatenate([B.T, np.asarray(T, dtype=np.int64).T], axis=1)[None]
    E, row, pivot_col = gauss_jordan(arith, M, n)
    piv = [int(c) for c in pivot_col[0, :int(row[0])]]
    N = _null_rows(arith, E[0, :, :n], piv, n).reshape(-1, n)
    consistent, _, W = _solution(arith, E, row, pivot_col, n)
    return N, W[0], bool(consistent[0])


def reduced_decodes(arith: Arith, N: np.ndarray, W: np.ndarray, S: np.ndarray) -> np.ndarray:
    """For a batch of straggler sets ``S`` (b, s): is ``[N[:, S]^T | W_S]`` consistent, i.e.
    do the survivors recover the targets (N and W of :func:`left_null_reduction`)?"""
    NT = N.T  # (n, d)
    aug = np.concatenate([NT[S], W[S]], axis=2)  # (b, s, d + m)
    return eliminate(arith, aug, N.shape[0])[0]


def eliminate(arith: Arith, M: np.ndarray, unknowns: int) -> tuple[np.ndarray, np.ndarray]:
    """Batched row echelon reduction of augmented systems ``M = [A | Y]`` (b, R, C).

    Returns ``(consistent, rank)``: whether every column of Y lies in the column space of A,
    and the rank of A (the first ``unknowns`` columns)."""
    M = np.array(M, dtype=arith.dtype, copy=True)
    b, R, _ = M.shape
    rows = np.arange(R)
    bi = np.arange(b)
    row = np.zeros(b, dtype=np.intp)
    for c in range(unknowns):
        cand = (M[:, :, c] != 0) & (rows[None, :] >= row[:, None])
        has = cand.any(axis=1)
        if not has.any():
            continue
        piv = np.argmax(cand, axis=1)
        r0 = np.minimum(row, R - 1)
        top, prow = M[bi, r0].copy(), M[bi, piv].copy()
        M[bi, piv] = np.where(has[:, None], top, prow)
        M[bi, r0] = np.where(has[:, None], prow, top)
        pivot = prow[:, c]
        f = M[:, :, c]
        sel = (rows[None, :] > row[:, None]) & has[:, None] & (f != 0)
        if sel.any():
            sb, sr = np.nonzero(sel)
            M[sb, sr] = arith.mul_sub_mul(pivot[sb, None], M[sb, sr], f[sb, sr, None],
                                          prow[sb])
        row = row + has
        if R and np.all(row >= R):
            break
    below = rows[None, :] >= row[:, None]
    consistent = ~np.any((M[:, :, unknowns:] != 0) & below[:, :, None], axis=(1, 2))
    return consistent, row
