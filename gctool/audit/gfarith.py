"""Vectorised exact arithmetic over GF(q) on plain int64 arrays, and batched elimination.

* Prime fields GF(p): numpy modular arithmetic (p < 2^31, so products fit in int64).
* GF(p^m) with q <= 2^20: multiplication through exp/log tables built once from galois;
  addition is XOR in characteristic 2 and galois' addition otherwise.
* Larger extension fields fall back to galois FieldArray arithmetic (exact, slower).

:func:`eliminate` decides, for a batch of augmented systems ``[A | Y]``, whether ``A X = Y``
is consistent and the rank of ``A``.  It is fraction free (row_r <- p * row_r - f * pivot_row),
so it needs no inverses: multiplying a row by the non-zero pivot p keeps the row space.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from gctool.fields import Field

TABLE_LIMIT = 2**20


@dataclass
class GFArith:
    """Elementwise arithmetic of one finite field on int64 arrays (picklable)."""

    fld: Field
    dtype: Any = np.int64
    _exp: np.ndarray | None = field(default=None, repr=False)
    _log: np.ndarray | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        q = self.fld.order
        if self.fld.m > 1 and q <= TABLE_LIMIT:
            GF = self.fld.galois()
            alpha = GF.primitive_element
            powers = (alpha ** np.arange(q - 1)).view(np.ndarray).astype(np.int64)
            log = np.zeros(q, dtype=np.int64)
            log[powers] = np.arange(q - 1)
            self._exp = np.concatenate([powers, powers])  # index up to 2(q-2)
            self._log = log

    @property
    def kind(self) -> str:
        if self.fld.m == 1:
            return "prime"
        return "table" if self._exp is not None else "galois"

    def mul(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        if self.fld.m == 1:
            return (a * b) % self.fld.p
        if self._exp is not None and self._log is not None:
            a, b = np.broadcast_arrays(a, b)
            prod = self._exp[self._log[a] + self._log[b]]
            return np.where((a == 0) | (b == 0), 0, prod)
        GF = self.fld.galois()
        return np.asarray((GF(a) * GF(b)).view(np.ndarray), dtype=np.int64)

    def sub(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        if self.fld.m == 1:
            return (a - b) % self.fld.p
        if self.fld.p == 2:
            return np.bitwise_xor(a, b)
        GF = self.fld.galois()
        return np.asarray((GF(a) - GF(b)).view(np.ndarray), dtype=np.int64)


class IntArith:
    """Exact integer arithmetic on object arrays (Python ints): eliminating with it decides
    consistency over the rationals (fraction-free, so no division is ever needed)."""

    dtype: Any = object

    def mul(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.asarray(a * b, dtype=object)

    def sub(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.asarray(a - b, dtype=object)


class Arith(Protocol):
    dtype: Any

    def mul(self, a: np.ndarray, b: np.ndarray) -> np.ndarray: ...

    def sub(self, a: np.ndarray, b: np.ndarray) -> np.ndarray: ...


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
            M[sb, sr] = arith.sub(arith.mul(pivot[sb, None], M[sb, sr]),
                                  arith.mul(f[sb, sr, None], prow[sb]))
        row = row + has
        if R and np.all(row >= R):
            break
    below = rows[None, :] >= row[:, None]
    consistent = ~np.any((M[:, :, unknowns:] != 0) & below[:, :, None], axis=(1, 2))
    return consistent, row


def gf_matrix(fld: Field, A: Any) -> Any:
    """A galois FieldArray of ``fld`` holding the int64 array ``A``."""
    return fld.galois()(np.asarray(A, dtype=np.int64))
