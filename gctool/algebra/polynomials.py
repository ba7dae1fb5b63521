"""Polynomials over GF(p) in their integer representation (base-p digits = coefficients,
galois' convention): parsing a field's irreducible polynomial, the irreducibility test (Rabin),
the first irreducible polynomial of a degree, and printing (pure Python, no numpy)."""

from __future__ import annotations

import re

from gctool.errors import FieldError

_TERM_RE = re.compile(r"^(\d*)\s*\*?\s*(x(?:\s*\^\s*(\d+))?)?$", re.ASCII)

#: longest polynomial text accepted (a degree-31 polynomial over GF(p) fits many times over)
MAX_POLY_TEXT = 1000


def parse_poly(text: str, p: int, m: int) -> int:
    """Parse an irreducible polynomial of degree m over GF(p) (:func:`_poly_value`); it must be
    irreducible (:func:`is_irreducible`), so ``field`` and files refuse the same specs."""
    value = _poly_value(text, p, m)
    if not is_irreducible(value, p, m):
        raise FieldError(f"polynomial {poly_to_str(value, p)} is reducible over GF({p}), so "
                         f"GF({p}^{m}) with it is not a field")
    return value


def _poly_value(text: str, p: int, m: int) -> int:
    """Integer representation of a degree-m polynomial over GF(p) given as a string in x or as
    an integer; the length, degrees and value are checked before any arithmetic (a hostile
    ``x^1000000000`` fails at once)."""
    t = text.strip().replace(" ", "")
    if len(t) > MAX_POLY_TEXT:
        raise FieldError(f"irreducible polynomial for GF({p}^{m}) is {len(t):,} characters long"
                         f" (limit {MAX_POLY_TEXT})")
    if re.fullmatch(r"0[xX][0-9a-fA-F]+|\d+", t, re.ASCII):
        value = int(t, 0)
        if value >= p ** (m + 1):
            raise FieldError(f"irreducible polynomial {text!r} must have degree {m} for "
                             f"GF({p}^{m})")
    else:
        coeffs: dict[int, int] = {}
        for term in filter(None, t.replace("-", "+-").split("+")):
            match = _TERM_RE.match(term)
            if term.startswith("-") or not match or term == "":
                raise FieldError(
                    f"cannot parse irreducible polynomial {text!r}: use terms like 3x^2, x, 1 "
                    f"with coefficients in 0..{p - 1}, or the integer representation"
                )
            c = int(match.group(1)) if match.group(1) else 1
            deg = (int(match.group(3)) if match.group(3) else 1) if match.group(2) else 0
            if not 0 <= c < p:
                raise FieldError(f"coefficient {c} of {text!r} is not in GF({p}) (0..{p - 1})")
            if deg > m:
                raise FieldError(f"irreducible polynomial {text!r} must have degree {m} for "
                                 f"GF({p}^{m}), not {deg}")
            coeffs[deg] = (coeffs.get(deg, 0) + c) % p
        value = sum(c * p**d for d, c in coeffs.items())
    if value < p**m:
        raise FieldError(f"irreducible polynomial {text!r} must have degree {m} for GF({p}^{m})")
    return value


def _mulmod(a: list[int], b: list[int], f: list[int], p: int) -> list[int]:
    """a * b mod the monic degree-m polynomial f over GF(p) (coefficients, lowest first)."""
    m = len(f) - 1
    prod = [0] * (2 * m - 1)
    for i, x in enumerate(a):
        if x:
            for j, y in enumerate(b):
                prod[i + j] = (prod[i + j] + x * y) % p
    for d in range(2 * m - 2, m - 1, -1):  # reduce by the monic f
        c = prod[d]
        if c:
            for i in range(m + 1):
                prod[d - m + i] = (prod[d - m + i] - c * f[i]) % p
    return prod[:m]


def _frobenius(a: list[int], f: list[int], p: int) -> list[int]:
    """a^p mod f over GF(p), by square and multiply."""
    out, base, e = [1] + [0] * (len(f) - 2), a, p
    while e:
        if e & 1:
            out = _mulmod(out, base, f, p)
        base, e = _mulmod(base, base, f, p), e >> 1
    return out


def is_irreducible(poly: int, p: int, m: int) -> bool:
    """Rabin's test for a degree-m polynomial over GF(p) (integer representation, base-p
    digits = coefficients): irreducible iff x^(p^m) = x mod f and gcd(x^(p^(m/r)) - x, f) = 1
    for every prime r | m.  Pure Python: checking a file needs neither galois nor numpy."""
    f = [(poly // p**i) % p for i in range(m + 1)]  # coefficients, lowest degree first
    if f[m] == 0:
        return False
    inv = pow(f[m], -1, p)
    f = [c * inv % p for c in f]  # monic
    x = [0, 1] + [0] * (m - 2)
    powers = [x]  # x^(p^i) mod f for i = 0..m
    for _ in range(m):
        powers.append(_frobenius(powers[-1], f, p))
    if powers[m] != x:
        return False
    primes = [r for r in range(2, m + 1) if m % r == 0 and all(r % d for d in range(2, r))]
    for r in primes:
        g = [(c - xc) % p for c, xc in zip(powers[m // r], x, strict=True)]
        if _poly_gcd_degree(g, f, p) > 0:
            return False
    return True


def irreducible_poly(p: int, m: int) -> int:
    """The first monic irreducible polynomial of degree m over GF(p) (integer representation),
    in lexicographic order of its lower coefficients (constant term first); a fixed choice that
    needs neither galois nor a table of Conway polynomials."""
    import itertools

    for tail in itertools.product(range(p), repeat=m):
        value = sum(c * p**i for i, c in enumerate(tail)) + p**m
        if tail[0] and is_irreducible(value, p, m):
            return value
    raise FieldError(f"no irreducible polynomial of degree {m} over GF({p})")  # pragma: no cover


def _poly_gcd_degree(a: list[int], b: list[int], p: int) -> int:
    """Degree of gcd(a, b) over GF(p) (coefficient lists, lowest degree first)."""
    def trim(c: list[int]) -> list[int]:
        while c and c[-1] == 0:
            c = c[:-1]
        return c

    a, b = trim(list(a)), trim(list(b))
    while a:
        inv = pow(a[-1], -1, p)
        while len(b) >= len(a):
            c, shift = b[-1] * inv % p, len(b) - len(a)
            b = trim([(bc - c * a[i - shift]) % p if i >= shift else bc
                      for i, bc in enumerate(b)])
        a, b = b, a
    return len(b) - 1


def poly_to_str(value: int, p: int) -> str:
    """Integer representation of a polynomial over GF(p) -> ``x^4 + x + 1``."""
    terms: list[str] = []
    digits: list[int] = []
    while value:
        digits.append(value % p)
        value //= p
    for deg in range(len(digits) - 1, -1, -1):
        c = digits[deg]
        if c == 0:
            continue
        coef = "" if (c == 1 and deg > 0) else str(c)
        mono = "" if deg == 0 else ("x" if deg == 1 else f"x^{deg}")
        terms.append(coef + mono)
    return " + ".join(terms) if terms else "0"
