"""Structured decoders of the algebraic schemes, cheaper than generic elimination.

* ``cyclic-mds``: evaluation at the n-th roots of unity turns ``a^T B_F = 1`` into a
  Vandermonde system (when the non-zeros of g form a cyclic interval, i.e. every MDS choice);
  one row of an inverse Vandermonde, O((n-s)^2).
* ``rs``: ``a_F = G_F^{-T} e_{n-s}``, the last row of the inverse Vandermonde, O((n-s)^2).
* ``comm``: the last m rows of the inverse Vandermonde, O((n-s)^2 + m (n-s)).

Generic decoding (:mod:`gctool.decode`) solves an (n-s) x k (or k m) least-squares problem per
survivor set.  A structured decoder relies on the code being the one gctool designed (its
recorded params), so every result is checked: ``ok`` says whether ``a^T B_F`` equals the
targets (exactly over GF(q), squared error <= tol * k over R/C).
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from gctool.decode import DEFAULT_TOL
from gctool.errors import InvalidInput
from gctool.model import GradientCode

MODULES = {"cyclic-mds": "gctool.codes.cyclic_mds", "rs": "gctool.codes.rs",
           "comm": "gctool.codes.comm"}


@dataclass(frozen=True)
class StructuredDecoding:
    survivors: tuple[int, ...]
    a: np.ndarray  # (m, |F|); zero on survivors beyond the first n - s
    ok: bool
    error: float  # squared error summed over targets (0/1 indicator over GF(q))
    method: str


def has_structured_decoder(code: GradientCode) -> bool:
    return code.scheme in MODULES


def residual(code: GradientCode, F: np.ndarray, a: np.ndarray) -> float:
    """||a B_F - T||^2 over R/C; over GF(q) 0.0 when exact and 1.0 otherwise."""
    BF = np.asarray(code.B)[F]
    if code.field.is_finite:
        GF = code.field.galois()
        return 0.0 if np.array_equal(GF(a) @ GF(BF), GF(code.targets())) else 1.0
    return float(np.sum(np.abs(a @ BF - code.targets()) ** 2))


def structured_decode(code: GradientCode, survivors: Sequence[int],
                      tol: float = DEFAULT_TOL) -> StructuredDecoding:
    """The structured decoding vector(s) of ``code`` for the given survivors, checked."""
    if not has_structured_decoder(code):
        raise InvalidInput(f"no structured decoder for scheme {code.scheme!r} (available: "
                           f"{', '.join(MODULES)}); use the generic decoder")
    F = np.array(sorted(set(int(i) for i in survivors)), dtype=np.intp)
    a = importlib.import_module(MODULES[code.scheme]).decode(code, F)
    err = residual(code, F, a)
    ok = err == 0.0 if code.field.is_finite else err <= tol * code.k
    return StructuredDecoding(tuple(F.tolist()), a, bool(ok), err,
                              f"structured ({code.scheme}, O((n-s)^2))")
