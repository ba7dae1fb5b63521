"""Powers of a primitive element of GF(p^m) = GF(p)[x]/f in galois' integer representation
(base-p digits = polynomial coefficients): the exp table of :class:`gctool.algebra.gf.GFArith`,
and the primitive element :meth:`gctool.algebra.fields.Field.galois` hands to galois so it
does not search for one itself.  Below both (it imports neither): numpy and integers only.
"""

from __future__ import annotations

import functools

import numpy as np


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


#: largest field whose primitive element is searched here when x is not primitive (above it
#: galois is asked, which compiles its arithmetic)
SEARCH_LIMIT = 2**12


@functools.lru_cache(maxsize=8)
def primitive_powers(p: int, m: int, poly: int) -> np.ndarray | None:
    """Powers 1, g, g^2, ... of a primitive element g of GF(p^m) = GF(p)[x]/f (integer
    representation): g = x when x is primitive (always for galois' default, the Conway
    polynomial), else the smallest primitive element found by walking powers
    (q <= SEARCH_LIMIT); None when not found here.  Computed once per field and returned
    read-only."""
    powers = _primitive_powers(p, m, poly)
    if powers is not None:
        powers.setflags(write=False)
    return powers


def _primitive_powers(p: int, m: int, poly: int) -> np.ndarray | None:
    powers = _power_table(p, m, poly)
    if powers is not None or p**m > SEARCH_LIMIT:
        return powers
    q = p**m
    coeffs = [(poly // p**i) % p for i in range(m)]
    low = [(-c) % p for c in coeffs]
    for g in range(2, q):
        out = np.empty(q - 1, dtype=np.int64)
        a = 1
        for i in range(q - 1):
            if i and a == 1:
                break
            out[i] = a
            a = _times(a, g, p, m, low)
        else:
            if a == 1:
                return out
    return None


def _power_table(p: int, m: int, poly: int) -> np.ndarray | None:
    """Powers 1, x, x^2, ... of x in GF(p)[x]/f if x is primitive, else None.

    Built by doubling: with x^0..x^(h-1) known, x^h..x^(2h-1) are those times the constant
    c = x^h, and multiplying by a constant is GF(p)-linear on the base-p digits (an m x m
    matrix whose row j holds the digits of c x^j), so each step is one small matrix product
    (O(m log q) array operations instead of q Python steps)."""
    q = p**m
    coeffs = [(poly // p**i) % p for i in range(m)]  # f = x^m + sum c_i x^i (monic)
    low = [(-c) % p for c in coeffs]  # x^m = -sum c_i x^i
    place = p ** np.arange(m, dtype=np.int64)
    powers = np.empty(q - 1, dtype=np.int64)
    powers[0] = 1
    have = 1
    while have < q - 1:
        c = _times_x(int(powers[have - 1]), p, m, low)  # x^have
        rows = [c]
        for _ in range(m - 1):
            rows.append(_times_x(rows[-1], p, m, low))
        times_c = (np.asarray(rows, dtype=np.int64)[:, None] // place[None, :]) % p
        take = min(have, q - 1 - have)
        digits = (powers[:take, None] // place[None, :]) % p
        powers[have:have + take] = ((digits @ times_c) % p) @ place
        have += take
    if (powers[1:] == 1).any() or _times_x(int(powers[-1]), p, m, low) != 1:
        return None
    return powers
