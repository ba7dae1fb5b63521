"""Field specs: ``real``, ``complex``, ``GF(p)`` and ``GF(p^m)`` (with an optional irreducible
polynomial), and the conversions between file entries and arrays.

Parsing is pure Python (no numpy, no galois) so that the CLI stays light.  galois is imported
only when finite-field arithmetic is needed (:meth:`Field.galois`).

Conventions chosen here (documented in docs/cli.md, "Fields"):

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

import functools
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from gctool.algebra.polynomials import MAX_POLY_TEXT, is_irreducible, parse_poly, poly_to_str
from gctool.algebra.primes import prime_power
from gctool.errors import FieldError
from gctool.limits import MAX_FIELD_ORDER

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

ACCEPTED = "real, complex, GF(p), GF(p^m) or GF(p^m, <irreducible poly>), e.g. GF(7), GF(2^8)"

_GF_RE = re.compile(
    r"^\s*GF\s*\(\s*(\d+)\s*(?:\^\s*(\d+)\s*)?(?:,\s*([^)]*?)\s*)?\)\s*$",
    re.IGNORECASE | re.ASCII,  # ASCII digits only: int() would also read '٧'
)

Kind = Literal["real", "complex", "gf"]


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
    def dtype(self) -> type[np.generic]:
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
            from gctool.algebra.powers import primitive_element

            # galois finds a primitive element of a non-primitive polynomial by compiling its
            # polynomial arithmetic (about a minute); it is searched here instead
            if is_irreducible(self.poly, self.p, self.m):
                return galois.GF(self.p, self.m, irreducible_poly=poly, verify=False,
                                 primitive_element=primitive_element(self.p, self.m,
                                                                     self.poly))
            return galois.GF(self.p, self.m, irreducible_poly=poly)
        except ValueError as exc:
            raise FieldError(f"invalid field {self.spec}: {exc}") from None

    def resolved(self) -> Field:
        """Return the same field with its irreducible polynomial made explicit (GF(p^m))."""
        if self.kind != "gf" or self.m == 1 or self.poly is not None:
            return self
        return Field("gf", self.p, self.m, _default_poly(self))

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
            if _has_imaginary(arr):
                raise FieldError(f"{what} has complex entries but the field is real")
            arr = arr.real
        out = arr.astype(self.dtype, copy=_writable(arr))
        if not _all_finite(out):
            raise FieldError(f"{what} has NaN or infinite entries")
        return out

    def _coerce_gf(self, arr: np.ndarray, what: str) -> np.ndarray:
        import numpy as np

        if np.iscomplexobj(arr) or np.issubdtype(arr.dtype, np.floating):
            if not _all_integral(arr):
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
        return arr.astype(np.int64, copy=_writable(arr))

    def to_galois(self, arr: np.ndarray) -> Any:
        """View an int64 array of field elements as a galois FieldArray."""
        return self.galois()(arr)


#: entries of a real or complex array whose finiteness :func:`_all_finite` checks at a time
FINITE_BLOCK = 1 << 18


def _all_finite(arr: np.ndarray) -> bool:
    """Are all entries of the float64 or complex128 ``arr`` finite?  Checked a block of
    :data:`FINITE_BLOCK` float64 values at a time (a complex entry: its two parts) through one
    reused mask: ``np.isfinite(arr)`` is a mask of B's entries, fresh memory an eighth of a
    real B (17 MB for a 134 MB B; the check took 6.9 ms instead of 9.9 with its mask warm)."""
    import numpy as np

    flat = arr.ravel(order="K")  # contiguous: a view of what astype returns, else a copy
    if np.iscomplexobj(flat):
        flat = flat.view(np.float64)  # finite: both parts finite
    mask = np.empty(min(FINITE_BLOCK, flat.size), dtype=bool)
    for at in range(0, flat.size, FINITE_BLOCK):
        part = flat[at:at + FINITE_BLOCK]
        np.isfinite(part, out=mask[:part.size])
        if not mask[:part.size].all():
            return False
    return True


def _all_integral(arr: np.ndarray) -> bool:
    """Are all entries of the float or complex ``arr`` finite integers (complex: with zero
    imaginary parts)?  Checked a block of :data:`FINITE_BLOCK` entries at a time: whole-array
    masks and ``np.round(arr)`` were fresh memory of up to B's size, three times."""
    import numpy as np

    flat = arr.ravel(order="K")
    if np.iscomplexobj(flat):
        if _has_imaginary(flat):
            return False
        flat = flat.real
    for at in range(0, flat.size, FINITE_BLOCK):
        part = flat[at:at + FINITE_BLOCK]
        if not (np.isfinite(part).all() and np.array_equal(np.round(part), part)):
            return False
    return True


def _has_imaginary(arr: np.ndarray) -> bool:
    """Has the complex ``arr`` an entry whose imaginary part is not 0 (NaN counts)?  Its
    least and largest imaginary parts, with no mask of its size."""
    return bool(arr.size and (arr.imag.min() != 0 or arr.imag.max() != 0))


def _writable(arr: Any) -> bool:
    """Can ``arr``'s entries change after it is coerced?  False only for a read-only view of
    immutable bytes (an NPZ read without a copy), which :meth:`Field.coerce` may keep as it
    is; every other array is copied, so a code never shares memory with its caller."""
    base = arr
    while getattr(base, "base", None) is not None and not isinstance(base, bytes | memoryview):
        if getattr(base, "flags", None) is not None and base.flags.writeable:
            return True
        base = base.base
    if isinstance(base, memoryview):  # of bytes, or of a file read aligned (gctool._files)
        immutable = isinstance(base.obj, bytes) or getattr(base.obj, "gctool_immutable", False)
        return not base.readonly or immutable is not True
    return not isinstance(base, bytes)


@functools.lru_cache(maxsize=64)
def _default_poly(fld: Field) -> int:
    """galois' default irreducible polynomial of GF(p^m), the Conway polynomial, read from the
    database galois ships (read directly: importing galois and constructing the field class
    compiles its arithmetic, seconds per process); galois itself is asked when the database
    is not where this galois keeps it."""
    import importlib.util
    import sqlite3
    from contextlib import closing
    from pathlib import Path

    spec = importlib.util.find_spec("galois")
    db = Path(spec.origin).parent / "_databases" / "conway_polys.db" if spec and spec.origin \
        else None
    row = None
    if db is not None and db.is_file():
        try:
            with closing(sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True)) as conn:
                row = conn.execute("SELECT nonzero_degrees, nonzero_coeffs FROM polys "
                                   "WHERE characteristic=? AND degree=?",
                                   (fld.p, fld.m)).fetchone()
        except sqlite3.Error:
            row = None
    if row is None:
        return int(fld.galois().irreducible_poly)
    degrees, coeffs = (str(row[0]).split(","), str(row[1]).split(","))
    return sum(int(c) * fld.p ** int(d) for d, c in zip(degrees, coeffs, strict=True))


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
    if exp is not None and prime_power(base) != (base, 1):
        raise FieldError(f"invalid field {text!r}: in GF(p^m) the base p must be prime")
    q = base ** int(exp) if exp is not None else base
    if q > MAX_FIELD_ORDER:
        raise FieldError(f"field {text!r} is too large: gctool supports orders up to 2^31")
    pm = prime_power(q)
    if pm is None:
        raise FieldError(f"invalid field {text!r}: {q} is not a prime power; accepted: {ACCEPTED}")
    p, m = pm
    poly = None
    if poly_text:
        if m == 1:
            raise FieldError(f"{text!r}: a prime field GF({p}) takes no irreducible polynomial")
        poly = parse_poly(poly_text, p, m)
    return Field("gf", p, m, poly)
