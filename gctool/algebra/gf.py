"""Elementwise arithmetic behind one protocol (:class:`Arith`): GF(q) on plain int64 arrays
(:class:`GFArith`), exact integers (:class:`IntArith`) and numpy numbers (:class:`NumericArith`).

galois is not needed (its field construction and JIT compilation cost seconds per process):

* Prime fields GF(p): numpy modular arithmetic (p < 2^31, so products fit in int64);
  inverses by vectorised exponentiation ``a^(p-2)``.
* GF(p^m) with q <= 2^22 (:data:`TABLE_LIMIT`): exp/log tables built here from the field's
  irreducible polynomial (elements are galois' integer representation: base-p digits =
  polynomial coefficients), once per field (:func:`_tables`), 0 given a logarithm whose sums
  read zeros; addition is XOR for p = 2 and digit-wise mod p otherwise.  galois took 25-28 s
  of CPU for GF(3^11) (its own lookup tables, built element by element, and its compiled
  arithmetic).
* Larger extension fields: polynomial arithmetic on the elements' bits (p = 2: shift and XOR)
  or base-p digits, m steps per product, and inverses as a^(q-2) (:meth:`GFArith._calc_mul`).

The row reductions built on them are in :mod:`gctool.algebra.linalg`.
"""

from __future__ import annotations

import enum
import functools
import math
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from gctool.algebra.fields import Field
from gctool.algebra.powers import (
    digit_planes,
    frobenius_rows,
    linear_map,
    primitive_element,
    primitive_powers,
)
from gctool.algebra.primes import primitive_root

#: largest extension field with exp/log tables (:func:`_tables`: 20 bytes an element, 80 MB at
#: 2^22, built at first use in 0.2 s and kept for the process, four fields at most); above it,
#: elements are multiplied as polynomials
TABLE_LIMIT = 2**22
FULL_TABLE_LIMIT = 256  # q x q multiplication table (512 KiB at q = 256)
#: entries a batched elimination above the tables updates at a time (:func:`gctool.algebra.
#: linalg.gauss_jordan`): the polynomial products' temporaries (about 4 m planes of the update's
#: size) stay in the caches and on the heap.  The decoder's batches updated whole (up to 2 M
#: entries of B_F, 17 MB a plane) had every plane faulted in afresh: 12 x 10 systems, batches
#: of 4,000, took 122 us a set over GF(46337^2) and 1,044 over GF(7^11), and 72 and 516 with
#: 2^14 entries at a time (2^16: 67 and 561, 2^18: 72 and 767; CPU, best of 2, loaded 2-core
#: machine)
CALC_BLOCK = 2**14
#: most elements whose inverses in GF(p) are taken one at a time (Python's ``pow``, about
#: 1 us each) rather than by square and multiply on the array (2 log2 p array calls)
SCALAR_INV_MAX = 16


@dataclass
class GFArith:
    """Elementwise arithmetic of one finite field on int64 arrays (picklable)."""

    fld: Field
    dtype: Any = np.int64
    _exp: np.ndarray | None = field(default=None, repr=False)
    _log: np.ndarray | None = field(default=None, repr=False)
    _table: np.ndarray | None = field(default=None, repr=False)
    _poly: int = field(default=0, repr=False)

    def __post_init__(self) -> None:
        q = self.fld.order
        self._poly = self.fld.resolved().poly or 0
        if self.fld.m > 1 and q <= TABLE_LIMIT:
            self._exp, self._log, self._table = _tables(self.fld.p, self.fld.m, self._poly)

    @property
    def kind(self) -> str:
        if self.fld.m == 1:
            return "prime"
        return "table" if self._exp is not None else "calc"

    @property
    def q(self) -> int:
        return self.fld.order

    def mul(self, a: Any, b: Any) -> np.ndarray:
        if self.fld.m == 1:
            return (np.asarray(a, dtype=np.int64) * b) % self.fld.p
        if self._table is not None:
            return self._table[a, b]
        if self._exp is not None and self._log is not None:  # 0 included (:func:`_tables`)
            return self._exp[np.add(self._log[a], self._log[b], dtype=np.int64)]
        return self._calc_mul(a, b)

    def _calc_mul(self, a: Any, b: Any) -> np.ndarray:
        """a * b as polynomials mod the field's polynomial f, elementwise: for p = 2 Horner on
        the bits of b (acc <- acc x + b_i a: x is a shift, reducing mod f one XOR), else the
        schoolbook product of base-p digit planes, reduced from the top."""
        p, m, poly = self.fld.p, self.fld.m, self._poly
        a, b = np.broadcast_arrays(np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64))
        if p == 2:
            acc = np.zeros(a.shape, dtype=np.int64)
            for i in range(m - 1, -1, -1):
                acc <<= 1
                acc ^= (acc >> m) * poly
                acc ^= a * ((b >> i) & 1)
            return acc
        shape, a, b = a.shape, a.ravel(), b.ravel()
        da, db = digit_planes(a, p, m), digit_planes(b, p, m)
        prod = np.zeros((2 * m - 1, a.size), dtype=np.int64)  # entries below 2 m p^2 < 2^63
        for i in range(m):  # schoolbook: coefficient i + j gets a_i b_j
            prod[i:i + m] += da[i] * db
        low = np.asarray([(-((poly // p**i) % p)) % p for i in range(m)], dtype=np.int64)
        for top in range(2 * m - 2, m - 1, -1):  # x^top = x^(top-m) (x^m - f)
            prod[top - m:top] += (prod[top] % p) * low[:, None]
        np.remainder(prod[:m], p, out=prod[:m])
        return (p ** np.arange(m, dtype=np.int64) @ prod[:m]).reshape(shape)

    def sub(self, a: Any, b: Any) -> np.ndarray:
        return self._addsub(a, b, -1)

    def sub_mul(self, a: Any, f: Any, b: Any) -> np.ndarray:
        """a - f b elementwise: an elimination's row update.  Over GF(p) one reduction instead
        of the product's and the difference's: elements lie below p < 2^31, so f b < 2^62 and
        a - f b lies in (-2^62, 2^31), which int64 holds; reduced once (:meth:`_reduced`: the
        update takes half the time of a product and a difference reduced each)."""
        if self.fld.m != 1:
            return self.sub(a, self.mul(f, b))
        prod = np.multiply(np.asarray(f, dtype=np.int64), b)
        # in place when the product has the whole shape (an elimination's update); a product
        # broadcast into out= took a quarter longer, and np.broadcast_shapes as long per block
        whole = isinstance(prod, np.ndarray) and prod.shape == np.shape(a)
        return self._reduced(np.subtract(a, prod, out=prod if whole else None))

    def mul_sub_mul(self, c: Any, a: Any, f: Any, b: Any) -> np.ndarray:
        """c a - f b elementwise: a fraction-free elimination's row update (the row times the
        pivot, less the pivot row times the row's factor).  Over GF(p) one reduction instead
        of the two products' and the difference's: each product lies below p^2 < 2^62, so
        their difference lies in (-2^62, 2^62), which int64 holds (:meth:`sub_mul`)."""
        if self.fld.m != 1:
            return self.sub(self.mul(c, a), self.mul(f, b))
        left = np.multiply(np.asarray(c, dtype=np.int64), a)
        right = np.multiply(np.asarray(f, dtype=np.int64), b)
        whole = isinstance(left, np.ndarray) and left.shape == np.shape(right)
        return self._reduced(np.subtract(left, right, out=left if whole else None))

    def _reduced(self, x: Any) -> np.ndarray:
        """x mod p for int64 x of either sign, in place where x is an array: x - floor(x / p) p
        (numpy divides by a scalar without a division instruction: 0.8 of the time of
        np.remainder)."""
        quot = np.floor_divide(x, self.fld.p)
        quot *= self.fld.p
        x -= quot
        return x

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
        for _ in range(m):  # digit i of a is a // p^i mod p: one reduction of both per digit
            out += ((a // scale + sign * (b // scale)) % p) * scale
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
            return np.where(a == 0, 0, self._prime_inv(a))
        if self._exp is not None and self._log is not None:
            return np.where(a == 0, 0, self._exp[(self.q - 1 - self._log[a]) % (self.q - 1)])
        return np.where(a == 0, 0, self._calc_inv(a))

    def _calc_inv(self, a: np.ndarray) -> np.ndarray:
        """Inverses above the tables by the norm (Itoh-Tsujii): with r = 1 + p + ... +
        p^(m-1), a^(r-1) = g^p for g = a^(1 + p + ... + p^(m-2)), and a^r lies in GF(p), so
        a^-1 = a^(r-1) / a^r.  g by an addition chain on m - 1 (g_(i+j) = g_i^(p^j) g_j), the
        powers p^j being GF(p)-linear maps (:func:`~gctool.algebra.powers.frobenius_rows`):
        about 2 log2(m) products instead of the 2 log2(q) of a^(q-2).  (0 maps to 0.)"""
        p, m, poly = self.fld.p, self.fld.m, self._poly

        def frob(v: np.ndarray, j: int) -> np.ndarray:
            return linear_map(v, list(frobenius_rows(p, m, poly, j)), p, m)

        g, have = a, 1  # g = a^(1 + p + ... + p^(have-1))
        for bit in bin(m - 1)[3:]:
            g, have = self._calc_mul(frob(g, have), g), 2 * have
            if bit == "1":
                g, have = self._calc_mul(frob(g, 1), a), have + 1
        t = frob(g, 1)  # a^(r-1)
        norm = self._calc_mul(t, a)  # a^r, in GF(p): digit 0
        if p == 2:
            return t
        return self._calc_mul(t, self._prime_inv(norm))

    def _prime_inv(self, a: np.ndarray) -> np.ndarray:
        """Inverses in the prime field GF(p) by a^(p-2) (0 maps to 0): up to
        :data:`SCALAR_INV_MAX` elements (an elimination's pivot) by Python's ``pow`` one
        element at a time, more by square and multiply on the array (2 log2 p array calls:
        about 130 us for one pivot of GF(2^31 - 1), two thirds of its elimination's time per
        pivot at 64 x 64)."""
        p = self.fld.p
        if a.size <= SCALAR_INV_MAX:
            return np.asarray([pow(int(x) % p, p - 2, p) for x in a.ravel()],
                              dtype=np.int64).reshape(a.shape)
        result, base, e = np.ones_like(a), a % p, p - 2
        while e:
            if e & 1:
                result = (result * base) % p
            base = (base * base) % p
            e >>= 1
        return result

    def primitive(self) -> int:
        """A generator of the multiplicative group."""
        if self._exp is not None:
            return int(self._exp[1])
        if self.fld.m == 1:
            return primitive_root(self.fld.p)
        return primitive_element(self.fld.p, self.fld.m, self._poly)

    def power(self, a: int, e: int) -> int:
        """a^e for one element (square and multiply)."""
        result, base = 1, int(a)
        while e:
            if e & 1:
                result = int(self.mul(np.int64(result), np.int64(base)))
            base = int(self.mul(np.int64(base), np.int64(base)))
            e >>= 1
        return result


@functools.lru_cache(maxsize=4)
def _tables(p: int, m: int, poly: int) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """The exp table, the log table and, for q <= :data:`FULL_TABLE_LIMIT`, the q x q product
    table of GF(p^m) = GF(p)[x]/f; built once per field, read-only.

    The log table (int32) gives 0 the logarithm 2(q - 1), above the sum of any two nonzero
    logarithms (at most 2(q - 2)); the exp table (int64) holds the powers of the primitive
    element twice (indices up to 2(q - 2)) and zeros on to 4(q - 1): ``exp[log[a] + log[b]]``
    (the sum taken in int64) is a b for every a, b, 0 included, a product of one sum and one
    gather with no mask for zero operands.  The zeros are never written (a fresh allocation):
    reading them maps the kernel's zero page, so they take no memory; the tables hold 16 bytes
    an element (exp) and 4 (log), as unpadded.  At 2^22 a process grows by 128 MB (these and
    :func:`~gctool.algebra.powers.primitive_powers`' cached 32 MB), before the padding and
    after, also once it has multiplied many zeros; built in 0.2 s of CPU.  Measured (rank of
    256 x 256, best of 3, one core of the loaded 2-core machine): 2.7-3.3 times faster than
    the masked product ``where(a == 0 or b == 0, 0, exp[log a + log b])`` over GF(2^17)-GF(2^22)
    (7-10 ns per multiply-add against 23-29), 1.1-1.3 times over GF(3^11), GF(3^12), GF(7^7)
    and GF(257^2) (whose additions go digit by digit); an int32 exp table (half the memory)
    was 1.2-1.3 times slower (its products widened for the XOR), an int64 log table 2-4 %
    faster (twice the memory)."""
    powers = primitive_powers(p, m, poly)
    q = p**m
    log = np.zeros(q, dtype=np.int32)
    log[powers] = np.arange(powers.size, dtype=np.int32)
    log[0] = 2 * (q - 1)
    exp = np.zeros(4 * (q - 1) + 1, dtype=np.int64)
    exp[:q - 1] = powers
    exp[q - 1:2 * (q - 1)] = powers
    table = None
    if q <= FULL_TABLE_LIMIT:  # one gather per product
        a = np.arange(q)
        table = exp[log[a][:, None] + log[a][None, :].astype(np.int64)]
    for t in (exp, log, table):
        if t is not None:
            t.setflags(write=False)
    return exp, log, table


#: one entry of the numpy eliminations over a field above the tables (two polynomial products
#: and a subtraction, :meth:`GFArith._calc_mul`), per bit of GF(2^m) ...
CALC_BIT_NS = 8
#: ... and over GF(p^m), p odd, CALC_DIGIT_NS per digit (the digit planes, the difference and
#: the reduction's steps) plus CALC_DIGIT_PAIR_NS per pair of digits (m^2: the schoolbook
#: products of digit planes), in ns.  Fitted to the exact check's update, which is this entry
#: (:mod:`gctool.audit.nullspace`, tasks of 4,096 sets, best of 5, loaded 2-core machine):
#: random dense and cyclic codes over GF(46337^2), GF(13^7), GF(5^10), GF(7^11), GF(5^13),
#: GF(3^15), GF(3^19), 58-69 ns an entry at m = 2, 328 at m = 7, 600-720 at m = 11,
#: 1,020-1,090 at m = 15, 1,700 at m = 19 (measured / estimated 0.94-1.03).  It was 150 ns per
#: digit at every m (fitted to verify runs), which read 0.2-0.6 there
CALC_DIGIT_NS = 25
CALC_DIGIT_PAIR_NS = 3


def calc_entry_ns(fld: Field) -> float | None:
    """The cost of one entry of a fraction-free update c a - f b (two products and a
    difference, :meth:`GFArith.mul_sub_mul`) over ``fld`` when it has neither tables nor prime
    arithmetic (:data:`CALC_BIT_NS` per bit; :data:`CALC_DIGIT_NS` per digit and
    :data:`CALC_DIGIT_PAIR_NS` per pair of digits), else None."""
    if not fld.is_finite or fld.m == 1 or fld.order <= TABLE_LIMIT:
        return None
    m = fld.m
    if fld.p == 2:
        return float(CALC_BIT_NS * m)
    return float(CALC_DIGIT_NS * m + CALC_DIGIT_PAIR_NS * m * m)


#: one product and sum of vectors above the tables costs this per call besides its elements
#: (calc_entry_ns each), per bit of GF(2^m) or digit of GF(p^m), in ns: measured 134-200 us
#: per call over GF(2^24)-GF(2^31), 77-311 us over GF(46337^2), GF(7^11), GF(3^15) (loaded
#: 2-core machine)
CALC_CALL_BIT_NS = 6_000
CALC_CALL_DIGIT_NS = 20_000


def calc_call_ns(fld: Field) -> float:
    """The fixed cost of one vector product of ``fld`` above the tables (0 with tables or a
    prime field), in ns."""
    if calc_entry_ns(fld) is None:
        return 0.0
    return float((CALC_CALL_BIT_NS if fld.p == 2 else CALC_CALL_DIGIT_NS) * fld.m)


#: the inverse of one element above the tables (an elimination's pivot, :meth:`GFArith._calc_inv`)
#: costs this many times :func:`calc_call_ns`: its norm chain's products and Frobenius maps on
#: one element, each a product's calls.  Measured (best of 7, CPU, one core of the loaded 2-core
#: machine): 1.6-2.4 ms over GF(2^23)-GF(2^31) (11-13 calls), 0.11 ms over GF(46337^2), 0.9-3.7
#: ms over GF(13^7), GF(7^11), GF(5^13), GF(3^15), GF(3^19) (6.6-10.3 calls: (m + 5) / 2) ...
CALC_INVERSE_BIT_CALLS = 12.0


def calc_inverse_ns(fld: Field) -> float:
    """The time of one element's inverse above the tables (0 with tables or a prime field),
    in ns: :data:`CALC_INVERSE_BIT_CALLS` calls over GF(2^m), (m + 5) / 2 over GF(p^m), p odd."""
    calls = CALC_INVERSE_BIT_CALLS if fld.p == 2 else (fld.m + 5) / 2
    return calls * calc_call_ns(fld)


# -- the rate of each path that multiplies and adds over GF(q) ----------------------------------
#: a whole matrix's Gauss-Jordan elimination on int64 arrays (:func:`gctool.algebra.linalg.
#: gauss_jordan`: the rank, rref, solutions; every row updated at each pivot, a block of rows at
#: a time) costs, per multiply-add a - f b: GJ_TABLE_NS over GF(2^m) up to CACHED_TABLE_LIMIT
#: (a gather and an XOR: a full product table, or a sum of logarithms, 0's included, and a
#: gather from an exp table of up to 1 MB), and GJ_TABLE_DOUBLING_NS more per doubling of q
#: above it (the exp table, 2-64 MB, leaves the caches: CPU time 5.7-7 ns over GF(2^17),
#: 6.8-8.2 over GF(2^18), 9.3-12.3 over GF(2^20), 10.3-12.5 over GF(2^22) at 256 x 256 and
#: 384 x 384, best of 3 in one process and medians of 3 fresh ones, loaded 2-core machine),
#: GJ_PRIME_NS over GF(p) (a product and a difference reduced once,
#: :meth:`GFArith.sub_mul`), GJ_EXT_NS and GJ_DIGIT_NS per digit over GF(p^m), p odd (its
#: additions work digit by digit; 25-28 ns over GF(257^2), 38 over GF(3^4), 64 over GF(7^7),
#: 98 over GF(3^11) and GF(3^12)), the same at every size (the blocks' temporaries stay in the
#: caches and on the heap); above the tables :data:`CALC_PRODUCT_SHARE`.  Fitted by
#: ``benchmarks/fit_elimination.py`` (CPU time 3.8-4.8 ns per multiply-add over GF(2^8),
#: 3.3-4.8 over the prime fields, 6-8 at 64 x 64 and 100 x 100, 8 per digit over GF(3^4))
CACHED_TABLE_LIMIT = 2**16
GJ_TABLE_NS = 4.5
GJ_TABLE_DOUBLING_NS = 1.5
GJ_PRIME_NS = 4.0
GJ_EXT_NS = 10.0
GJ_DIGIT_NS = 7.5
#: the optimal decoder's batched fraction-free elimination (:mod:`gctool.decode`, the update
#: c a - f b of :meth:`GFArith.mul_sub_mul`) costs per multiply-add of its f x K systems:
#: DECODER_GF2_NS over GF(2^m) with tables (GF(2^20) no slower than GF(2^8): the doubling of
#: :data:`GJ_TABLE_DOUBLING_NS` is a whole elimination's), DECODER_PRIME_NS over GF(p),
#: DECODER_DIGIT_NS per digit over GF(p^m) with p odd (its additions digit by digit), and above
#: the tables :data:`DECODER_CALC_SHARE`.  Measured on the quiet 2-core development machine
#: (CPU time of one core, bench_budget's calibrated cases), since the elimination reduces once
#: per update: the 63 x 21 systems of partial work's verify (rs n=21,
#: messages of 2 partitions, 10,206 profiles in batches) 6-7 ns per multiply-add over GF(2^8)
#: and GF(65521), 31 over GF(3^4) (8 a digit); export's structured table of cyclic-MDS GF(43)
#: n=21 s=8 and the stopping rule's prefixes over GF(3^4) read 0.94 and 0.80 of their estimates
#: at these rates, which the partial work's batches undercut (0.53-0.64)
DECODER_GF2_NS = 11
DECODER_PRIME_NS = 12
DECODER_DIGIT_NS = 12
#: galois FieldArrays (the elementary search's batched (r - 1) x r systems and its products,
#: :mod:`gctool.audit.elementary`) cost per multiply-add GALOIS_LOOKUP_NS in fields of up to
#: GALOIS_LOOKUP_LIMIT elements (galois' compiled lookup tables) ...
GALOIS_LOOKUP_LIMIT = 2**20
GALOIS_LOOKUP_NS = 20.0
#: ... and above, where galois computes each product (jit-calculate), GALOIS_PRIME_NS over GF(p),
#: GALOIS_BIT_NS per bit over GF(2^m) and GALOIS_DIGIT_NS per digit over GF(p^m), p odd.
#: Measured: the elementary search on random dense n x k = 14 x 10 to 22 x 6 (560-38,760 sets
#: of (r - 1) x r systems, the products included), best CPU of 3 in one process, loaded 2-core
#: machine, less its fixed costs: 17-24 ns per multiply-add over GF(2^5), GF(7), GF(3^4),
#: GF(2^8), GF(65521), 22-29 over GF(2^20); 37-66 over GF(2^31 - 1) and GF(2^31); over GF(7^11)
#: and GF(3^13) galois' product alone takes 2.1-2.2 us an element (its difference 0.12-0.13)
GALOIS_PRIME_NS = 40.0
GALOIS_BIT_NS = 1.3
GALOIS_DIGIT_NS = 200.0

#: above the tables Gauss-Jordan costs this share of :func:`calc_entry_ns` (a fraction-free
#: update's entry: two products and a difference) per multiply-add it counts (its update
#: a - f b has one product, on blocks of 4,096 entries) ...
CALC_PRODUCT_SHARE = 0.5
#: ... and the decoder's batched Gauss-Jordan elimination (:func:`gctool.algebra.linalg.
#: gauss_jordan` on a batch of systems, :data:`CALC_BLOCK` entries at a time) DECODER_CALC_NS
#: per multiply-add counted plus DECODER_CALC_SHARE of the entry: its update a - f b has one
#: product and the difference of the entry's two (the share), and passes over the block that
#: the entry's per-digit terms do not count, whatever m (the block of systems gathered and
#: scattered back, the factors and the pivot row broadcast to its size: the fixed part, most
#: of the time at m = 2).  Fitted by ``benchmarks/fit_gf_batches.py`` (CPU per set, best of 3
#: interleaved rounds, loaded 2-core machine; 26 x 24 and 40 x 30 systems): 51-54 ns per
#: multiply-add counted over GF(46337^2), 217-230 over GF(13^7), 341-360 over GF(5^10),
#: 417-424 over GF(7^11), 666-669 over GF(3^15).  A share alone (0.75) read GF(46337^2) 1.1-1.4
#: and GF(3^15) 0.85
DECODER_CALC_NS = 13.0
DECODER_CALC_SHARE = 0.62

class ArithPath(enum.Enum):
    """The code that runs a GF(q) multiply-add, each at its own rate (:func:`muladd_ns`)."""

    GAUSS_JORDAN = enum.auto()  # a whole matrix's elimination on int64 arrays
    DECODER = enum.auto()  # the optimal decoder's batched elimination of its systems
    GALOIS = enum.auto()  # galois FieldArrays


def muladd_ns(fld: Field, path: ArithPath) -> float:
    """The time of one multiply-add over the finite field ``fld`` on ``path``, in ns: the
    arithmetic that path runs there (:class:`ArithPath`): GAUSS_JORDAN a whole matrix's
    elimination on int64 arrays (:data:`GJ_TABLE_NS` and after), DECODER the optimal decoder's
    batched elimination of its systems (:data:`DECODER_GF2_NS` and after), GALOIS galois
    FieldArrays (:data:`GALOIS_LOOKUP_NS` and after).  Above the tables the int64 paths multiply
    polynomials (:data:`CALC_PRODUCT_SHARE` of :func:`calc_entry_ns`; the decoder
    :data:`DECODER_CALC_NS` and :data:`DECODER_CALC_SHARE` of it)."""
    if not fld.is_finite or not isinstance(path, ArithPath):
        raise ValueError(f"no GF(q) multiply-add rate for {fld} on {path!r}")
    q, p, m = fld.order, fld.p, fld.m
    if path is ArithPath.GALOIS:
        if q <= GALOIS_LOOKUP_LIMIT:
            return float(GALOIS_LOOKUP_NS)
        return float(GALOIS_PRIME_NS if m == 1 else GALOIS_BIT_NS * m if p == 2
                     else GALOIS_DIGIT_NS * m)
    calc = calc_entry_ns(fld)
    if calc is not None:  # a share of a fraction-free entry per multiply-add counted
        if path is ArithPath.DECODER:
            return DECODER_CALC_NS + DECODER_CALC_SHARE * calc
        return CALC_PRODUCT_SHARE * calc
    if path is ArithPath.DECODER:
        return float(DECODER_GF2_NS if p == 2 else DECODER_PRIME_NS if m == 1
                     else DECODER_DIGIT_NS * m)
    if m == 1:
        return GJ_PRIME_NS
    if p == 2:
        return GJ_TABLE_NS + GJ_TABLE_DOUBLING_NS * max(0.0, math.log2(q / CACHED_TABLE_LIMIT))
    return GJ_EXT_NS + GJ_DIGIT_NS * m


class IntArith:
    """Exact integer arithmetic on object arrays (Python ints): eliminating with it decides
    consistency over the rationals (fraction-free, so no division is ever needed)."""

    dtype: Any = object

    def mul(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.asarray(a * b, dtype=object)

    def sub(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.asarray(a - b, dtype=object)

    def mul_sub_mul(self, c: Any, a: Any, f: Any, b: Any) -> np.ndarray:
        """c a - f b elementwise (:meth:`GFArith.mul_sub_mul`)."""
        return np.asarray(c * a - f * b, dtype=object)


class Arith(Protocol):
    dtype: Any

    def mul(self, a: np.ndarray, b: np.ndarray) -> np.ndarray: ...

    def sub(self, a: np.ndarray, b: np.ndarray) -> np.ndarray: ...

    def mul_sub_mul(self, c: Any, a: Any, f: Any, b: Any) -> np.ndarray: ...


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
