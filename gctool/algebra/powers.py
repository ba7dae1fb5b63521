"""Powers of a primitive element of GF(p^m) = GF(p)[x]/f in galois' integer representation
(base-p digits = polynomial coefficients): the exp table of :class:`gctool.algebra.gf.GFArith`,
and the primitive element :meth:`gctool.algebra.fields.Field.galois` hands to galois so it
does not search for one itself.  Below both (it imports neither): numpy and integers only.
"""

from __future__ import annotations

import functools

import numpy as np

from gctool.algebra.polynomials import _mulmod


def _times_x(a: int, p: int, m: int, low: list[int]) -> int:
    """a(x) * x mod f(x), elements as base-p integers; ``low`` = digits of x^m mod f."""
    top = a // p ** (m - 1)
    shifted = (a % p ** (m - 1)) * p
    if top == 0:
        return shifted
    out, scale = 0, 1
    for i in range(m):
        d = (shifted // scale) % p
        out += ((d + top * low[i]) % p) * scale
        scale *= p
    return out


def _times(a: int, b: int, p: int, m: int, low: list[int]) -> int:
    """a(x) * b(x) mod f(x) (Horner on the digits of b), elements as base-p integers."""
    digits = [(b // p**i) % p for i in range(m)]
    out = 0
    for d in reversed(digits):
        out = _times_x(out, p, m, low)
        if d:
            out = _digit_add(out, _scale(a, d, p, m), p, m)
    return out


def _scale(a: int, d: int, p: int, m: int) -> int:
    return sum((((a // p**i) % p) * d % p) * p**i for i in range(m))


def _digit_add(a: int, b: int, p: int, m: int) -> int:
    return sum(((((a // p**i) % p) + ((b // p**i) % p)) % p) * p**i for i in range(m))


@functools.lru_cache(maxsize=16)
def primitive_element(p: int, m: int, poly: int) -> int:
    """The smallest primitive element of GF(p^m) = GF(p)[x]/f (integer representation; galois'
    choice too): x (the integer p) when x is primitive, always for galois' default, the Conway
    polynomial, else the smallest g whose order is q - 1 (g^((q-1)/r) != 1 for each prime
    r | q - 1, square and multiply on coefficient lists: no table, any q).  The constants
    1..p-1 have orders dividing p - 1, so x is the smallest candidate."""
    from gctool.algebra.primes import prime_factors

    q = p**m
    f = _monic(poly, p, m)
    cofactors = [(q - 1) // r for r in prime_factors(q - 1)]
    for g in range(p, q):
        digits = _digits(g, p, m)
        one = [1] + [0] * (m - 1)
        if all(_power(digits, e, f, p) != one for e in cofactors):
            return g
    raise ValueError(f"GF({p}^{m}) with polynomial {poly} has no primitive element: "
                     "the polynomial is not irreducible")  # pragma: no cover


def _monic(poly: int, p: int, m: int) -> list[int]:
    f = [(poly // p**i) % p for i in range(m + 1)]
    inv = pow(f[m], -1, p)
    return [c * inv % p for c in f]


def _digits(a: int, p: int, m: int) -> list[int]:
    return [(a // p**i) % p for i in range(m)]


def _power(a: list[int], e: int, f: list[int], p: int) -> list[int]:
    out, base = [1] + [0] * (len(f) - 2), a
    while e:
        if e & 1:
            out = _mulmod(out, base, f, p)
        base, e = _mulmod(base, base, f, p), e >> 1
    return out


@functools.lru_cache(maxsize=8)
def primitive_powers(p: int, m: int, poly: int) -> np.ndarray:
    """Powers 1, g, g^2, ..., g^(q-2) of the primitive element g of GF(p^m) = GF(p)[x]/f
    (:func:`primitive_element`; integer representation).  Computed once per field and
    returned read-only."""
    powers = _power_table(p, m, poly, primitive_element(p, m, poly))
    powers.setflags(write=False)
    return powers


#: digits of the elements that one lookup table of :func:`_times_const` covers (p = 2)
CHUNK_BITS = 8


def _times_const(a: np.ndarray, c: int, p: int, m: int, low: list[int]) -> np.ndarray:
    """a * c for a fixed element c, elementwise: multiplying by c is GF(p)-linear on the
    base-p digits, with row j of its matrix the digits of c x^j (:func:`linear_map`)."""
    rows = [c]
    for _ in range(m - 1):
        rows.append(_times_x(rows[-1], p, m, low))
    return linear_map(a, rows, p, m)


def linear_map(a: np.ndarray, rows: list[int], p: int, m: int) -> np.ndarray:
    """The GF(p)-linear map of GF(p^m) sending x^j to ``rows[j]`` (integer representation),
    elementwise on an int64 array.  For p = 2 it is a XOR of one lookup per byte of a (a
    table of the 256 combinations of 8 rows); else m^2 multiply-adds of digit vectors."""
    if p == 2:
        image = np.zeros(a.shape, dtype=np.int64)
        for lo in range(0, m, CHUNK_BITS):
            part = rows[lo:lo + CHUNK_BITS]
            table = np.zeros(1 << len(part), dtype=np.int64)
            for i, row in enumerate(part):  # table[v | 1 << i] = table[v] ^ row
                table[1 << i:2 << i] = table[:1 << i] ^ row
            image ^= table[(a >> lo) & ((1 << len(part)) - 1)]
        return image
    shape, flat = a.shape, a.ravel()
    digits = digit_planes(flat, p, m)
    out, acc = np.zeros(flat.size, dtype=np.int64), np.empty(flat.size, dtype=np.int64)
    for k in range(m):  # digit k of the image: sum_j digit j of a times digit k of row j
        acc[:] = 0
        for j, row in enumerate(rows):
            coef = (row // p**k) % p
            if coef:
                acc += coef * digits[j]
        acc %= p
        out += acc * p**k
    return out.reshape(shape)


def digit_planes(a: np.ndarray, p: int, m: int) -> np.ndarray:
    """The base-p digits of a 1-d int64 array, one row per digit (lowest first)."""
    out, rest = np.empty((m, a.size), dtype=np.int64), a.copy()
    for j in range(m):
        np.divmod(rest, p, out=(rest, out[j]))
    return out


@functools.lru_cache(maxsize=64)
def frobenius_rows(p: int, m: int, poly: int, j: int) -> tuple[int, ...]:
    """The rows of the map a -> a^(p^j) of GF(p)[x]/f (GF(p)-linear: :func:`linear_map`):
    the images y^i of x^i, with y = x^(p^j)."""
    f = _monic(poly, p, m)
    x = [0, 1] + [0] * (m - 2) if m > 1 else [0]
    y = _power(x, p**j, f, p)
    rows, cur = [], [1] + [0] * (m - 1)
    for _ in range(m):
        rows.append(sum(c * p**i for i, c in enumerate(cur)))
        cur = _mulmod(cur, y, f, p)
    return tuple(rows)


def _power_table(p: int, m: int, poly: int, g: int) -> np.ndarray:
    """Powers 1, g, g^2, ..., g^(q-2) in GF(p)[x]/f (g primitive).

    Built by doubling: with g^0..g^(h-1) known, g^h..g^(2h-1) are those times the constant
    c = g^h (:func:`_times_const`: O(log q) array operations instead of q Python steps;
    GF(2^22) in about 0.1 s)."""
    q = p**m
    coeffs = [(poly // p**i) % p for i in range(m)]  # f = x^m + sum c_i x^i (monic)
    low = [(-c) % p for c in coeffs]  # x^m = -sum c_i x^i
    powers = np.empty(q - 1, dtype=np.int64)
    powers[0] = 1
    have = 1
    while have < q - 1:
        c = _times(int(powers[have - 1]), g, p, m, low)  # g^have
        take = min(have, q - 1 - have)
        powers[have:have + take] = _times_const(powers[:take], c, p, m, low)
        have += take
    return powers
