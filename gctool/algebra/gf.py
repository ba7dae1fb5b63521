"""Elementwise arithmetic behind one protocol (:class:`Arith`): GF(q) on plain int64 arrays
(:class:`GFArith`), exact integers (:class:`IntArith`) and numpy numbers (:class:`NumericArith`).

galois is not needed (its field construction and JIT compilation cost seconds per process):

* Prime fields GF(p): numpy modular arithmetic (p < 2^31, so products fit in int64);
  inverses by vectorised exponentiation ``a^(p-2)``.
* GF(p^m) with q <= 2^18: exp/log tables built here from the field's irreducible polynomial
  (elements are galois' integer representation: base-p digits = polynomial coefficients);
  addition is XOR for p = 2 and digit-wise mod p otherwise.  Tables of GF(3^11) take 0.1 s and
  6 MB; galois took 25-28 s of CPU for it (its own lookup tables, built element by element,
  and its compiled arithmetic: a 3 x 2 code's verify).
* Larger extension fields fall back to galois FieldArray arithmetic (exact, slower).

The row reductions built on them are in :mod:`gctool.algebra.linalg`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from gctool.algebra.fields import Field
from gctool.algebra.powers import primitive_powers
from gctool.algebra.primes import primitive_root

TABLE_LIMIT = 2**18
FULL_TABLE_LIMIT = 256  # q x q multiplication table (512 KiB at q = 256)


@dataclass
class GFArith:
    """Elementwise arithmetic of one finite field on int64 arrays (picklable)."""

    fld: Field
    dtype: Any = np.int64
    _exp: np.ndarray | None = field(default=None, repr=False)
    _log: np.ndarray | None = field(default=None, repr=False)
    _table: np.ndarray | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        q = self.fld.order
        if self.fld.m > 1 and q <= TABLE_LIMIT:
            powers = primitive_powers(self.fld.p, self.fld.m, self.fld.resolved().poly or 0)
            if powers is None:  # no primitive element found here: ask galois
                GF = self.fld.galois()
                alpha = GF.primitive_element
                powers = (alpha ** np.arange(q - 1)).view(np.ndarray).astype(np.int64)
            self._set_tables(powers)

    def _set_tables(self, powers: np.ndarray) -> None:
        log = np.zeros(self.fld.order, dtype=np.int64)
        log[powers] = np.arange(powers.size)
        self._exp = np.concatenate([powers, powers])  # index up to 2(q-2)
        self._log = log
        q = self.fld.order
        if q <= FULL_TABLE_LIMIT:  # one gather per product
            a = np.arange(q)
            prod = self._exp[log[a][:, None] + log[a][None, :]]
            self._table = np.where((a[:, None] == 0) | (a[None, :] == 0), 0, prod)

    @property
    def kind(self) -> str:
        if self.fld.m == 1:
            return "prime"
        return "table" if self._exp is not None else "galois"

    @property
    def q(self) -> int:
        return self.fld.order

    def mul(self, a: Any, b: Any) -> np.ndarray:
        if self.fld.m == 1:
            return (np.asarray(a, dtype=np.int64) * b) % self.fld.p
        if self._table is not None:
            return self._table[a, b]
        if self._exp is not None and self._log is not None:
            a, b = np.broadcast_arrays(np.asarray(a, dtype=np.int64), b)
            prod = self._exp[self._log[a] + self._log[b]]
            return np.where((a == 0) | (b == 0), 0, prod)
        GF = self.fld.galois()
        return np.asarray((GF(a) * GF(b)).view(np.ndarray), dtype=np.int64)

    def sub(self, a: Any, b: Any) -> np.ndarray:
        return self._addsub(a, b, -1)

    def add(self, a: Any, b: Any) -> np.ndarray:
        return self._addsub(a, b, 1)

    def _addsub(self, a: Any, b: Any, sign: int) -> np.ndarray:
        p, m = self.fld.p, self.fld.m
        a, b = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
        if m == 1:
            return (a + sign * b) % p
        if p == 2:
            return np.bitwise_xor(a, b)
        out = np.zeros(np.broadcast_shapes(a.shape, b.shape), dtype=np.int64)
        scale = 1
        for _ in range(m):
            out += ((a // scale % p + sign * (b // scale % p)) % p) * scale
            scale *= p
        return out

    def neg(self, a: Any) -> np.ndarray:
        return self.sub(np.zeros_like(np.asarray(a, dtype=np.int64)), a)

    def sum(self, a: Any) -> np.ndarray:
        """Sum over the last axis."""
        a = np.asarray(a, dtype=np.int64)
        if self.fld.m == 1:
            return a.sum(axis=-1) % self.fld.p
        if self.fld.p == 2:
            return np.bitwise_xor.reduce(a, axis=-1)
        out = np.zeros(a.shape[:-1], dtype=np.int64)
        for j in range(a.shape[-1]):
            out = self.add(out, a[..., j])
        return out

    def window_prod(self, a: Any, lo: np.ndarray, hi: np.ndarray, col: np.ndarray
                    ) -> np.ndarray:
        """Products of the windows ``a[lo:hi, col]`` of a 2-d array of nonzero elements (one
        per query): differences of running sums of logarithms with exp/log tables, else
        running products from both ends and one inverse per column."""
        a = np.asarray(a, dtype=np.int64)
        rows, cols = a.shape
        if self._exp is not None and self._log is not None:
            # int32 holds every running sum below 2^31 (q <= 2^16)
            dtype = np.int32 if rows * (self.q - 2) < 2**31 else np.int64
            logs = np.zeros((rows + 1, cols), dtype=dtype)
            np.cumsum(self._log[a].astype(dtype), axis=0, out=logs[1:])
            return self._exp[(logs[hi, col] - logs[lo, col]).astype(np.int64) % (self.q - 1)]
        before = np.ones((rows + 1, cols), dtype=np.int64)  # products of a[:t]
        after = np.ones((rows + 1, cols), dtype=np.int64)  # products of a[t:]
        for t in range(rows):
            before[t + 1] = self.mul(before[t], a[t])
            after[rows - 1 - t] = self.mul(after[rows - t], a[rows - 1 - t])
        whole = self.inv(before[rows])
        return self.mul(self.mul(before[hi, col], after[lo, col]), whole[col])

    def div(self, a: Any, b: Any) -> np.ndarray:
        """a / b elementwise (b != 0)."""
        return self.mul(a, self.inv(b))

    def prod(self, a: Any) -> np.ndarray:
        """Product over the last axis: a sum of logarithms with exp/log tables, else pairwise
        products (O(log length) array operations)."""
        a = np.asarray(a, dtype=np.int64)
        if a.shape[-1] == 0:
            return np.ones(a.shape[:-1], dtype=np.int64)
        if self._exp is not None and self._log is not None:
            logs = self._log[a].sum(axis=-1) % (self.q - 1)
            return np.where((a == 0).any(axis=-1), 0, self._exp[logs])
        while a.shape[-1] > 1:
            half = a.shape[-1] // 2
            nxt = self.mul(a[..., :half], a[..., half:2 * half])
            if a.shape[-1] % 2:
                nxt[..., 0] = self.mul(nxt[..., 0], a[..., -1])
            a = nxt
        return a[..., 0]

    def inv(self, a: Any) -> np.ndarray:
        """Multiplicative inverses (0 maps to 0)."""
        a = np.asarray(a, dtype=np.int64)
        if self.fld.m == 1:
            p, result, base, e = self.fld.p, np.ones_like(a), a % self.fld.p, self.fld.p - 2
            while e:
                if e & 1:
                    result = (result * base) % p
                base = (base * base) % p
                e >>= 1
            return np.where(a == 0, 0, result)
        if self._exp is not None and self._log is not None:
            return np.where(a == 0, 0, self._exp[(self.q - 1 - self._log[a]) % (self.q - 1)])
        GF = self.fld.galois()
        safe = np.where(a == 0, 1, a)
        return np.where(a == 0, 0, np.asarray((GF(1) / GF(safe)).view(np.ndarray)))

    def primitive(self) -> int:
        """A generator of the multiplicative group."""
        if self._exp is not None:
            return int(self._exp[1])
        if self.fld.m == 1:
            return primitive_root(self.fld.p)
        return int(self.fld.galois().primitive_element)

    def power(self, a: int, e: int) -> int:
        """a^e for one element (square and multiply)."""
        result, base = 1, int(a)
        while e:
            if e & 1:
                result = int(self.mul(np.int64(result), np.int64(base)))
            base = int(self.mul(np.int64(base), np.int64(base)))
            e >>= 1
        return result


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


class NumericArith:
    """Arithmetic of the reals / complex numbers with the method names of :class:`GFArith`,
    so one routine serves every field."""

    dtype: Any = None

    def add(self, a: Any, b: Any) -> np.ndarray:
        return a + b

    def sub(self, a: Any, b: Any) -> np.ndarray:
        return a - b

    def mul(self, a: Any, b: Any) -> np.ndarray:
        return a * b

    def inv(self, a: Any) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return 1 / a

    def div(self, a: Any, b: Any) -> np.ndarray:
        return a / b

    def neg(self, a: Any) -> np.ndarray:
        return -a

    def sum(self, a: Any) -> np.ndarray:
        return np.sum(a, axis=-1)


@functools.lru_cache(maxsize=8)
def plain_arith(fld: Field) -> GFArith | NumericArith:
    """Elementwise arithmetic on plain arrays: int64 representations over GF(q) (exp/log
    tables, no galois: its import and JIT compilation cost seconds per process), numpy over
    R/C."""
    if not fld.is_finite:
        return NumericArith()
    return GFArith(fld.resolved())


def prod_last(ar: Any, a: Any) -> np.ndarray:
    """Product over the last axis."""
    if isinstance(ar, NumericArith):
        return np.prod(a, axis=-1)
    if isinstance(ar, GFArith):
        return ar.prod(a)
    out = a[..., 0]
    for j in range(1, a.shape[-1]):
        out = ar.mul(out, a[..., j])
    return out


def powers_of(ar: Any, w: Any, count: int, dtype: Any) -> np.ndarray:
    """w^0, ..., w^(count-1) by doubling (O(log count) array operations)."""
    out = np.ones(max(count, 1), dtype=dtype)
    have, step = 1, w
    while have < count:
        take = min(have, count - have)
        out[have:have + take] = ar.mul(out[:take], step)
        have += take
        step = ar.mul(step, step) if have == 2 * take else step
    return out[:count]
