"""Decoding vectors: for survivors F, ``a`` with ``a^T B_F = t^T`` for every target ``t``.

* :mod:`gctool.decode.generic`: the optimal decoder of every code and field (minimum-norm
  least squares with diagnostics over R/C, exact elimination over GF(q)), one survivor set at a
  time (:class:`Decoder`) or in batches.
* :mod:`gctool.decode.structured`: the cheaper decoders of the algebraic schemes, which a
  scheme's family offers as its ``structured_decoder`` (:mod:`gctool.family`), each
  result checked, with the generic decoder as fallback.
"""

from __future__ import annotations

from collections.abc import Sequence

from gctool.decode.generic import _CHUNK_ENTRIES as _CHUNK_ENTRIES  # batch memory bound
from gctool.decode.generic import (
    DEFAULT_TOL,
    BatchResult,
    Decoder,
    Decoding,
    check_tol,
    chunk_size,
    safe_norm,
)
from gctool.model import GradientCode

__all__ = ["DEFAULT_TOL", "BatchResult", "Decoder", "Decoding", "check_tol", "chunk_size",
           "decode", "safe_norm"]


def decode(code: GradientCode, survivors: Sequence[int], tol: float = DEFAULT_TOL,
           decoder: str = "auto") -> Decoding:
    """Decoding vector(s) for one survivor set.

    ``decoder``: ``"generic"`` is the optimal decoder (:mod:`gctool.decode.generic`:
    minimum-norm least squares with diagnostics over R/C, elimination over GF(q)).
    ``"structured"`` uses the scheme's structured decoder (:mod:`gctool.decode.structured`:
    cyclic-mds, rs, comm; an error when it does not apply), checked, with the generic vector
    as fallback.  ``"auto"`` (default) uses the structured decoder over GF(q) when the scheme
    has one and it applies: it is exact and O((n-s)^2) instead of an elimination of the
    (n-s) x k system.  Over R/C ``auto`` stays generic, because the result must report the
    rank and condition number of B_F (an SVD, the very cost a structured decoder saves) and
    the minimum-norm vector is the optimal one.
    """
    from gctool.decode.structured import check_decoder, decode_one

    check_decoder(decoder)
    if decoder == "generic" or (decoder == "auto" and not code.field.is_finite):
        return Decoder(code, tol).decode(survivors)
    return decode_one(code, survivors, tol, required=decoder == "structured")
