"""Field specs: ``real``, ``complex``, ``GF(p)`` and ``GF(p^m)`` (with an optional irreducible
polynomial), and the conversions between file entries and arrays.

Parsing is pure Python (no numpy, no galois) so that the CLI stays light.  galois is imported
only when finite-field arithmetic is needed (:meth:`Field.galois`).

Conventions chosen here (documented in the README):

* ``GF(q)`` with a prime power ``q = p^m`` is accepted and written canonically as ``GF(p^m)``
  (``GF(8)`` -> ``GF(2^3)``); ``GF(p^1)`` is written ``GF(p)``.
* The irreducible polynomial of ``GF(p^m)`` is given after a comma, as a polynomial in ``x``
  with coefficients in ``0..p-1`` (``GF(2^4, x^4 + x + 1)``) or as its integer representation
  (``GF(2^4, 19)``, base-p digits = coefficients, galois' convention).  When omitted, galois'
  default (the Conway polynomial) is used and recorded explicitly in every file gctool writes.
* Elements of ``GF(p^m)`` are integers in galois' integer representation, ``0 <= x < p^m``.
* Orders up to ``2^31`` are supported, so that products fit in int64.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from gctool.errors import FieldError
from gctool.limits import MAX_FIELD_ORDER

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

ACCEPTED = "real, complex, GF(p), GF(p^m) or GF(p^m, <irreducible poly>), e.g. GF(7), GF(2^8)"

_GF_RE = re.compile(
    r"^\s*GF\s*\(\s*(\d+)\s*(?:\^\s*(\d+)\s*)?(?:,\s*([^)]*?)\s*)?\)\s*$", re.IGNORECASE
)
_TERM_RE = re.compile(r"^(\d*)\s*\*?\s*(x(?:\s*\^\s*(\d+))?)?$")

Kind = Literal["real", "complex", "gf"]


def _smallest_prime_factor(q: int) -> int:
    if q % 2 == 0:
        return 2
    f = 3
    while f * f <= q:
        if q % f == 0:
            return f
        f += 2
    return q


def is_prime(p: int) -> bool:
    """Primality by trial division (orders here are below 2^31, so at most ~23,000 steps)."""
    return p >= 2 and _smallest_prime_factor(p) == p


def prime_factors(x: int) -> list[int]:
    """The distinct prime factors of x >= 1, increasing (trial division)."""
    out, f = [], 2
    while f * f <= x:
        if x % f == 0:
            out.append(f)
            while x % f == 0:
                x //= f
        f += 1
    return out + ([x] if x > 1 else [])


def primitive_root(p: int) -> int:
    """The smallest primitive root modulo the prime p (a generator of GF(p)^*)."""
    if p == 2:
        return 1
    factors = prime_factors(p - 1)
    g = 2
    while any(pow(g, (p - 1) // f, p) == 1 for f in factors):
        g += 1
    return g


def prime_power(q: int) -> tuple[int, int] | None:
    """(p, m) with q = p^m, or None if q is not a prime power."""
    return _prime_power(q)


def _prime_power(q: int) -> tuple[int, int] | None:
    """Return (p, m) with q = p^m, or None if q is not a prime power."""
    if q < 2:
        return None
    p = _smallest_prime_factor(q)
    m, r = 0, q
    while r % p == 0:
        r //= p
        m += 1
    return (p, m) if r == 1 else None


def primes_1_mod(n: int, count: int) -> list[int]:
    """The ``count`` smallest primes p with n | p - 1 (below 2^31)."""
    out: list[int] = []
    p = n + 1
    while len(out) < count and p < MAX_FIELD_ORDER:
        if is_prime(p):
            out.append(p)
        p += n
    return out


def binary_degree(n: int) -> int | None:
    """Smallest m <= 31 with n | 2^m - 1 (n odd), else None."""
    if n % 2 == 0:
        return None
    if n == 1:
        return 1
    for m in range(1, 32):
        if (2**m - 1) % n == 0:
            return m
    return None


def smallest_prime_at_least(x: int) -> int:
    p = max(2, x)
    while not is_prime(p):
        p += 1
    return p


#: longest polynomial text accepted (a degree-31 polynomial over GF(p) fits many times over)
MAX_POLY_TEXT = 1000


def _parse_poly(text: str, p: int, m: int) -> int:
    """Parse an irreducible polynomial of degree m over GF(p) (:func:`_poly_value`); it must be
    irreducible (:func:`is_irreducible`), so ``--field`` and files refuse the same specs."""
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
    if re.fullmatch(r"0[xX][0-9a-fA-F]+|\d+", t):
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


@dataclass(frozen=True)
class Field:
    """A scalar field: the reals, the complex numbers, or GF(p^m)."""

    kind: Kind
    p: int = 0
    m: int = 1
    poly: int | None = None  # integer representation of the irreducible polynomial (m > 1)

    # -- descriptive -------------------------------------------------------------------------
    @property
    def is_finite(self) -> bool:
        return self.kind == "gf"

    @property
    def order(self) -> int:
        if not self.is_finite:
            raise FieldError(f"the field {self} has no finite order")
        return int(self.p**self.m)

    @property
    def characteristic(self) -> int:
        return self.p if self.is_finite else 0

    def __str__(self) -> str:
        if self.kind != "gf":
            return self.kind
        return f"GF({self.p})" if self.m == 1 else f"GF({self.p}^{self.m})"

    @property
    def poly_str(self) -> str | None:
        return None if self.poly is None else poly_to_str(self.poly, self.p)

    @property
    def spec(self) -> str:
        """Full spec string, including the irreducible polynomial when one is set."""
        if self.kind == "gf" and self.m > 1 and self.poly is not None:
            return f"GF({self.p}^{self.m}, {self.poly_str})"
        return str(self)

    # -- numerics ------------------------------------------------------------------------------
    @property
    def dtype(self) -> Any:
        import numpy as np

        return {"real": np.float64, "complex": np.complex128, "gf": np.int64}[self.kind]

    def galois(self) -> Any:
        """The galois FieldArray class of this field (imports galois lazily)."""
        if not self.is_finite:
            raise FieldError(f"{self} is not a finite field")
        import galois

        try:
            if self.m == 1:
                return galois.GF(self.p)
            if self.poly is None:
                return galois.GF(self.p, self.m)
            poly = galois.Poly.Int(self.poly, field=galois.GF(self.p))
            from gctool.algebra.gf import primitive_powers

            # galois finds a primitive element of a non-primitive polynomial by compiling its
            # polynomial arithmetic (about a minute); a small field is searched here instead
            powers = primitive_powers(self.p, self.m, self.poly)
            if powers is not None and is_irreducible(self.poly, self.p, self.m):
                return galois.GF(self.p, self.m, irreducible_poly=poly,
                                 primitive_element=int(powers[1]), verify=False)
            return galois.GF(self.p, self.m, irreducible_poly=poly)
        except ValueError as exc:
            raise FieldError(f"invalid field {self.spec}: {exc}") from None

    def resolved(self) -> Field:
        """Return the same field with its irreducible polynomial made explicit (GF(p^m))."""
        if self.kind != "gf" or self.m == 1 or self.poly is not None:
            return self
        return Field("gf", self.p, self.m, int(self.galois().irreducible_poly))

    def coerce(self, values: Any, what: str = "B") -> np.ndarray:
        """Convert ``values`` to this field's dtype, checking every entry belongs to the field."""
        import numpy as np

        try:
            arr = np.asarray(values)
        except (ValueError, TypeError) as exc:  # ragged input
            raise FieldError(f"{what} is not a rectangular array: {exc}") from None
        if arr.dtype == object:
            raise FieldError(f"{what} is not a rectangular numeric array")
        if arr.dtype == bool:
            arr = arr.astype(np.int64)
        if self.kind == "gf":
            return self._coerce_gf(arr, what)
        if not (np.issubdtype(arr.dtype, np.number)):
            raise FieldError(f"{what} has non-numeric entries (dtype {arr.dtype})")
        if self.kind == "real" and np.iscomplexobj(arr):
            if np.any(arr.imag != 0):
                raise FieldError(f"{what} has complex entries but the field is real")
            arr = arr.real
        out = arr.astype(self.dtype)
        if not np.all(np.isfinite(out)):
            raise FieldError(f"{what} has NaN or infinite entries")
        return out

    def _coerce_gf(self, arr: np.ndarray, what: str) -> np.ndarray:
        import numpy as np

        if np.iscomplexobj(arr) or np.issubdtype(arr.dtype, np.floating):
            if not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr.real)):
                raise FieldError(f"{what} has non-integer entries but the field is {self}")
            arr = arr.real
        if not np.issubdtype(arr.dtype, np.number):
            raise FieldError(f"{what} has non-numeric entries (dtype {arr.dtype})")
        if arr.size and (arr.min() < 0 or arr.max() >= self.order):
            bad = arr[(arr < 0) | (arr >= self.order)].flat[0].item()
            raise FieldError(
                f"{what} has entry {bad!r} outside {self} "
                f"(elements are integers 0..{self.order - 1})"
            )
        return arr.astype(np.int64)

    def to_galois(self, arr: np.ndarray) -> Any:
        """View an int64 array of field elements as a galois FieldArray."""
        return self.galois()(arr)


REAL = Field("real")
COMPLEX = Field("complex")


def parse_field(text: str) -> Field:
    """Parse a field spec string; raise :class:`FieldError` listing what is accepted."""
    if not isinstance(text, str):
        raise FieldError(f"field must be a string ({ACCEPTED})")
    t = text.strip()
    if len(t) > MAX_POLY_TEXT + 40:
        raise FieldError(f"field spec is {len(t):,} characters long; accepted: {ACCEPTED}")
    low = t.lower()
    if low in ("real", "r", "reals"):
        return REAL
    if low in ("complex", "c"):
        return COMPLEX
    match = _GF_RE.match(t)
    if not match:
        raise FieldError(f"unknown field {text!r}; accepted: {ACCEPTED}")
    if len(match.group(1)) > 10 or len(match.group(2) or "") > 2:
        raise FieldError(f"field {text!r} is too large: gctool supports orders up to 2^31")
    base, exp, poly_text = int(match.group(1)), match.group(2), match.group(3)
    if exp is not None and not 1 <= int(exp) <= 31:
        raise FieldError(f"invalid field {text!r}: the exponent must be between 1 and 31")
    if exp is not None and _prime_power(base) != (base, 1):
        raise FieldError(f"invalid field {text!r}: in GF(p^m) the base p must be prime")
    q = base ** int(exp) if exp is not None else base
    if q > MAX_FIELD_ORDER:
        raise FieldError(f"field {text!r} is too large: gctool supports orders up to 2^31")
    pm = _prime_power(q)
    if pm is None:
        raise FieldError(f"invalid field {text!r}: {q} is not a prime power; accepted: {ACCEPTED}")
    p, m = pm
    poly = None
    if poly_text:
        if m == 1:
            raise FieldError(f"{text!r}: a prime field GF({p}) takes no irreducible polynomial")
        poly = _parse_poly(poly_text, p, m)
    return Field("gf", p, m, poly)
