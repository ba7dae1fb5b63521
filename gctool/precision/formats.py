"""The message formats of ``precision``: float32, bfloat16 and float16.

A :class:`Format` knows its numpy dtype (bfloat16 from ``ml_dtypes``, the maintained library of
the ML frameworks' 16-bit types), its unit roundoff ``u`` (half the distance from 1 to the
next number: 2^-24, 2^-8 and 2^-11), its largest finite value, and the *accumulator* its sums
run in: float32 for every format, as mixed-precision training does (float32 accumulation in
the matrix units and reductions, 16-bit values stored and sent).

:func:`rounded` rounds an array to a format (round to nearest, ties to even, as numpy and
ml_dtypes cast) and returns the rounded values as float64 (complex128), so that callers can
compute with them exactly or in float64.  Complex values are rounded part by part.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from gctool.errors import InvalidInput


@dataclass(frozen=True)
class Format:
    """One floating-point message format."""

    name: str
    dtype: Any  # the numpy dtype object (ml_dtypes.bfloat16 for bfloat16)
    u: float  # unit roundoff: |fl(x) - x| <= u |x| for x in the normal range
    max: float  # largest finite value
    tiny: float  # smallest positive normal value
    #: the accumulator's unit roundoff (float32 for every format: 2^-24)
    accumulator_u: float = 2.0**-24
    #: the accumulator's smallest positive normal value (float32: 2^-126)
    accumulator_tiny: float = 2.0**-126

    @property
    def accumulates_in_itself(self) -> bool:
        """float32 sums in float32: no separate rounding when a message is sent."""
        return self.u == self.accumulator_u

    @property
    def send_u(self) -> float:
        """Unit roundoff of rounding a float32 message to this format when it is sent (0 for
        float32, which sends its accumulator as is)."""
        return 0.0 if self.accumulates_in_itself else self.u

    @property
    def numpy_loadable(self) -> bool:
        """Can a plain ``numpy.load`` read arrays of this format (no ml_dtypes)?"""
        return self.name != "bfloat16"

    def __str__(self) -> str:
        return self.name


def _bfloat16() -> type[np.generic]:
    import ml_dtypes

    return ml_dtypes.bfloat16


def _formats() -> dict[str, Format]:
    bf = _bfloat16()
    return {
        "float32": Format("float32", np.dtype(np.float32), 2.0**-24,
                          float(np.finfo(np.float32).max), float(np.finfo(np.float32).tiny)),
        "bfloat16": Format("bfloat16", np.dtype(bf), 2.0**-8, float(_finfo(bf).max),
                           float(_finfo(bf).tiny)),
        "float16": Format("float16", np.dtype(np.float16), 2.0**-11,
                          float(np.finfo(np.float16).max), float(np.finfo(np.float16).tiny)),
    }


def _finfo(dtype: Any) -> Any:
    import ml_dtypes

    return ml_dtypes.finfo(dtype)


#: the names ``precision`` accepts, in order of decreasing precision
NAMES = ("float32", "bfloat16", "float16")
_CACHE: dict[str, Format] = {}


def get_format(name: Any, param: str = "precision") -> Format:
    """The format called ``name`` (a :class:`Format` is returned as is); InvalidInput naming
    ``param`` otherwise."""
    if isinstance(name, Format):
        return name
    if not _CACHE:
        _CACHE.update(_formats())
    fmt = _CACHE.get(str(name).lower()) if isinstance(name, str) else None
    if fmt is None:
        raise InvalidInput(f"`{param}` must be one of {', '.join(NAMES)}, got {name!r}",
                           param=param)
    return fmt


def rounded(x: Any, fmt: Format) -> np.ndarray:
    """``x`` rounded to ``fmt`` (nearest, ties to even; complex part by part), as float64 or
    complex128 values.  Values beyond the format's range become +-inf."""
    x = np.asarray(x)
    with np.errstate(over="ignore", invalid="ignore"):
        if np.iscomplexobj(x):
            return _round_real(x.real, fmt) + 1j * _round_real(x.imag, fmt)
        return _round_real(x, fmt)


def _round_real(x: np.ndarray, fmt: Format) -> np.ndarray:
    return np.asarray(x, dtype=np.float64).astype(fmt.dtype).astype(np.float64)


def smallest_part(x: Any) -> float:
    """The smallest non-zero magnitude among the entries of ``x`` (real and imaginary parts
    apart for complex values, as the formats round them); inf when every entry is zero."""
    x = np.asarray(x)
    parts = np.abs(np.concatenate([x.real.ravel(), x.imag.ravel()]) if np.iscomplexobj(x)
                   else x.ravel()).astype(np.float64)
    parts = parts[parts > 0]
    return float(parts.min()) if parts.size else float("inf")


def cast(x: Any, fmt: Format) -> np.ndarray:
    """``x`` stored in ``fmt`` (its dtype; complex arrays as complex64 for float32, refused
    for the 16-bit formats, which have no complex type)."""
    x = np.asarray(x)
    with np.errstate(over="ignore", invalid="ignore"):
        if np.iscomplexobj(x):
            if fmt.name != "float32":
                raise InvalidInput(f"complex values cannot be stored in {fmt.name} "
                                   "(numpy has no complex 16-bit type); use float32",
                                   param="dtype")
            return x.astype(np.complex64)
        return x.astype(fmt.dtype)


def gamma(count: Any, u: float) -> np.ndarray:
    """``gamma_n = n u / (1 - n u)`` (Higham), elementwise; inf when ``n u >= 1``."""
    nu = np.asarray(count, dtype=np.float64) * u
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(nu < 1, nu / np.where(nu < 1, 1 - nu, 1.0), np.inf)


def dot_gamma(count: Any, u: float, complex_: bool) -> np.ndarray:
    """The constant ``g`` of an inner product of ``count`` terms computed in *any* order (any
    tree, any partial sums, FMA or not) with unit roundoff ``u``: ``|fl(x^T y) - x^T y| <=
    g sum |x_j| |y_j|``, elementwise.

    Real: ``gamma_count`` (Higham, *Accuracy and Stability of Numerical Algorithms*, (3.5)).
    Complex: each component of the result is a real inner product of ``2 count`` products
    however it is grouped, within ``gamma_{2 count}`` of the sum of their magnitudes; per term
    ``(|ac| + |bd|)^2 + (|ad| + |bc|)^2 <= 2 |x_j|^2 |y_j|^2``, so the complex error is at most
    ``sqrt(2) gamma_{2 count} sum |x_j| |y_j|`` (the float64 twin is
    :func:`gctool.numerics.residual_gamma`).  Higham's ``sqrt(2) gamma_{count + 2}`` (section
    3.6) holds for complex arithmetic's own order only."""
    if not complex_:
        return gamma(count, u)
    with np.errstate(invalid="ignore", over="ignore"):
        return gamma(2 * np.asarray(count, dtype=np.float64), u) * (np.sqrt(2.0) * (1 + 2.0**-52))


#: how a bfloat16 array is stored in an NPZ file (plain numpy has no bfloat16 type)
BFLOAT16_STORAGE = ("bfloat16 bit patterns as uint16 (the upper half of a float32); "
                    "values: numpy.left_shift(X.astype(numpy.uint32), 16).view(numpy.float32)")


def stored(x: Any, fmt: Format) -> np.ndarray:
    """``x`` as an NPZ file stores it in ``fmt``: float32 / float16 (complex64 for complex
    float32), and bfloat16 as its bit patterns in uint16 (:data:`BFLOAT16_STORAGE`), so that
    plain ``numpy.load`` reads every file."""
    out = cast(x, fmt)
    return out.view(np.uint16) if fmt.name == "bfloat16" else out


def from_stored(x: np.ndarray, fmt: Format) -> np.ndarray:
    """The values (float64 / complex128) of an array written by :func:`stored`."""
    x = np.asarray(x)
    if fmt.name == "bfloat16":
        return np.left_shift(x.astype(np.uint32), 16).view(np.float32).astype(np.float64)
    return x.astype(np.complex128 if np.iscomplexobj(x) else np.float64)
