"""Structured decoders of the algebraic schemes, cheaper than generic elimination.

A scheme's family offers one as its ``structured_decoder``
(:class:`gctool.registry.info.StructuredDecoder`, next to its ``build``); this module finds it in
the registry, batches it, checks every vector and falls back to the generic decoder.

* ``cyclic-mds``: evaluation at the n-th roots of unity turns ``a^T B_F = 1`` into a
  Vandermonde system (when the non-zeros of g form a cyclic interval, i.e. every MDS choice);
  one row of an inverse Vandermonde, O((n-s)^2).
* ``rs``: ``a_F = G_F^{-T} e_{n-s}``, the last row of the inverse Vandermonde, O((n-s)^2).
* ``comm``: the last m rows of the inverse Vandermonde, O((n-s)^2 + m (n-s)).

Generic decoding (:mod:`gctool.decode`) solves an (n-s) x k (or k m) system per survivor set:
O((n-s) k min(n-s, k)) by elimination over GF(q) or an SVD over R/C.  A structured decoder
costs O((n-s)^2) plus the check below, O((n-s) k m).  It relies on the code being the one
gctool designed (its recorded params), so every result is checked: ``ok`` says whether
``a^T B_F`` equals the targets (exactly over GF(q), squared error <= tol * k over R/C).

Where gctool uses them (and why):

* :func:`gctool.decode.decode` (one survivor set), ``decoder="auto"``: structured over GF(q),
  where the vector is exact and the generic alternative is an elimination; generic over R/C,
  whose result must carry the rank and condition number of B_F (an SVD, which is the cost the
  structured decoder saves) and is the minimum-norm vector.
* :func:`gctool.exports.export` with decoders, ``decoder="auto"``: structured whenever the
  scheme has one (batched, :func:`decode_batch`), checked per pattern; a pattern whose vector
  fails the check gets the generic decoder's vector instead, and the export says how many.
* The verifier (:mod:`gctool.audit.verify`) keeps its generic batched engine: it needs ranks
  and conditioning of every B_F, which the structured decoders do not give.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from gctool.decode.generic import DEFAULT_TOL, Decoder, Decoding, check_tol
from gctool.errors import InvalidInput
from gctool.exactls import vector_error
from gctool.model import GradientCode
from gctool.numerics import (
    exact_limit,
    limit_bracket,
    on_side,
    proves_decodes,
    residual_bracket,
    residual_gamma,
)

if TYPE_CHECKING:
    from gctool.registry.info import StructuredDecoder

DECODERS = ("auto", "structured", "generic")
_ENTRIES = 2_000_000  # entries of the (b, L, L) node differences per batch


class NotApplicable(InvalidInput):
    """The structured decoder does not apply to this code or survivor set (the reason)."""


@dataclass(frozen=True)
class StructuredDecoding:
    survivors: tuple[int, ...]
    a: np.ndarray  # (m, |F|); zero on survivors beyond the first n - s
    ok: bool
    error: float  # squared error summed over targets (0/1 indicator over GF(q))
    method: str


def structured_decoder(code: GradientCode) -> StructuredDecoder | None:
    """The structured decoder the code's scheme offers (None: none, or an unknown scheme)."""
    from gctool.registry import SCHEMES

    family = SCHEMES.get(code.scheme)
    return None if family is None else family.structured_decoder


def has_structured_decoder(code: GradientCode) -> bool:
    return structured_decoder(code) is not None


def method_name(code: GradientCode) -> str:
    hook = structured_decoder(code)
    assert hook is not None, code.scheme
    return f"structured ({hook.method}, O((n-s)^2) per set)"


def _with_structured_decoder() -> list[str]:
    from gctool.registry import SCHEMES

    return [name for name, family in SCHEMES.items() if family.structured_decoder is not None]


def check_decoder(decoder: str) -> str:
    if decoder not in DECODERS:
        raise InvalidInput(f"`decoder` must be one of {', '.join(DECODERS)}, got {decoder!r}")
    return decoder


def decode_batch(code: GradientCode, F: np.ndarray) -> np.ndarray:
    """Structured decoding vectors (b, m, f) for survivor sets F (b, f), each row sorted.

    Uses the first n - s survivors of each set (zero on the others).  Raises
    :class:`NotApplicable` when the scheme has no structured decoder, f < n - s, or the
    recorded params do not fit it.  The vectors are *not* checked here (see :func:`check`).
    """
    hook = structured_decoder(code)
    if hook is None:
        raise NotApplicable(f"no structured decoder for scheme {code.scheme!r} (available: "
                            f"{', '.join(_with_structured_decoder())}); use the generic "
                            "decoder")
    b, f = F.shape
    L = code.n - code.s
    if f < L:
        raise NotApplicable(f"the structured decoder needs at least n - s = {L} survivors, "
                            f"got {f}")
    out = np.zeros((b, code.m, f), dtype=code.field.dtype)
    step = max(1, _ENTRIES // max(1, L * L))
    try:
        for start in range(0, b, step):
            out[start:start + step, :, :L] = hook.decode_batch(code, F[start:start + step, :L])
    except NotApplicable:
        raise
    except InvalidInput as err:
        raise NotApplicable(str(err)) from None
    except (KeyError, TypeError, ValueError, IndexError, ZeroDivisionError, OverflowError) as err:
        raise NotApplicable(f"the recorded params do not fit the structured decoder ({err})"
                            ) from None
    return out


def check(code: GradientCode, F: np.ndarray, A: np.ndarray, tol: float = DEFAULT_TOL
          ) -> tuple[np.ndarray, np.ndarray]:
    """(error, ok) of decoding vectors A (b, m, f) for survivor sets F (b, f).

    Over GF(q) ``error`` is 0 when ``A_p B_F = targets`` exactly and 1 otherwise; over R/C it is
    ``||A_p B_F - targets||^2`` and ok means that error, exactly, is at most the exact limit
    (:func:`gctool.numerics.exact_limit`): proved from a rigorous round-off bound, or, within
    round-off of the limit, decided on the vector's exact error (its float is then on the
    verdict's side of the limit, :func:`gctool.numerics.on_side`).  Non-finite vectors
    fail."""
    tol = check_tol(tol)
    BF = np.asarray(code.B)[F]  # (b, f, K)
    T = code.targets()
    if code.field.is_finite:
        ok = np.all(_gf_product(code, A, BF) == T[None], axis=(1, 2))
        return (~ok).astype(np.float64), ok
    with np.errstate(over="ignore", invalid="ignore"):
        err = np.sum(np.abs(A @ BF - T[None]) ** 2, axis=(1, 2))
        # a rigorous bound on the round-off of each residual entry (products, sums, minus t)
        f = BF.shape[1]
        gamma = residual_gamma(f, np.iscomplexobj(A) or np.iscomplexobj(BF))
        slack = np.sqrt(np.sum((gamma * (np.abs(A) @ np.abs(BF) + np.abs(T)[None])) ** 2,
                               axis=(1, 2)))
        lo, hi = residual_bracket(err, slack, T.size)
    err = np.where(np.isfinite(err), err, np.inf)
    limit = exact_limit(code.k, tol)
    ok = proves_decodes(hi, code.k, tol)
    near = np.isfinite(hi) & ~ok & ~(lo > limit_bracket(limit)[1])
    for i in np.flatnonzero(near):  # within round-off of the limit: the vector's exact error
        exact = vector_error(A[i], BF[i], T)
        err[i] = on_side(exact, limit)  # on the verdict's side of decode_limit
        ok[i] = exact <= limit
    return err, ok


def _gf_product(code: GradientCode, A: np.ndarray, BF: np.ndarray) -> np.ndarray:
    """A @ BF over GF(q) on int64 representations (b, m, K), without galois."""
    from gctool.algebra.gf import plain_arith

    fld = code.field
    f = A.shape[2]
    if fld.m == 1 and f * (fld.p - 1) ** 2 < 2**62:  # exact int64 matmul, reduced once
        return np.matmul(A, BF) % fld.p
    ar = plain_arith(fld)
    out = np.zeros((A.shape[0], A.shape[1], BF.shape[2]), dtype=np.int64)
    for i in range(f):
        out = ar.add(out, ar.mul(A[:, :, i, None], BF[:, None, i, :]))
    return out


def unavailable(code: GradientCode, f: int) -> str | None:
    """Why the structured decoder cannot serve survivor sets of size f (None: it can).

    Probes the decoder on the survivor set {0, ..., f-1}; a pattern-dependent failure (only in
    tampered files) is caught later by :func:`check` or by :class:`NotApplicable` per batch."""
    try:
        decode_batch(code, np.arange(f, dtype=np.intp)[None, :])
    except NotApplicable as err:
        return str(err)
    return None


def structured_decode(code: GradientCode, survivors: Sequence[int],
                      tol: float = DEFAULT_TOL) -> StructuredDecoding:
    """The structured decoding vector(s) of ``code`` for the given survivors, checked."""
    F = _survivor_row(code, survivors)
    A = decode_batch(code, F)
    err, ok = check(code, F, A, tol)
    return StructuredDecoding(tuple(F[0].tolist()), A[0], bool(ok[0]), float(err[0]),
                              method_name(code))


def decode_one(code: GradientCode, survivors: Sequence[int], tol: float = DEFAULT_TOL,
               required: bool = False) -> Decoding:
    """One survivor set through the structured decoder, with the generic one as fallback.

    ``required``: raise :class:`NotApplicable` when the structured decoder does not apply
    (otherwise the generic decoder answers, with the reason in ``note`` when the scheme has a
    structured decoder).  A structured vector that fails the check is replaced by the generic
    decoder's, with a note.  Structured results carry no rank or condition number (None)."""
    F = _survivor_row(code, survivors)
    try:
        A = decode_batch(code, F)
    except NotApplicable as exc:
        if required:
            raise
        note = str(exc) if has_structured_decoder(code) else None
        return _with_note(Decoder(code, tol).decode(F[0].tolist()), note)
    err, ok = check(code, F, A, tol)
    if not ok[0]:  # the generic decoder (galois over GF(q)) only when needed
        return _with_note(Decoder(code, tol).decode(F[0].tolist()), "the structured vector "
                          "failed the check a^T B_F = targets; generic decoder used")
    a = A[0]
    norm = None if code.field.is_finite else float(np.sqrt(np.sum(np.abs(a) ** 2)))
    return Decoding(tuple(F[0].tolist()), a, True, float(err[0]), None, None, norm,
                    method=method_name(code))


def _with_note(d: Decoding, note: str | None) -> Decoding:
    from dataclasses import replace

    return replace(d, note=note) if note else d


def _survivor_row(code: GradientCode, survivors: Sequence[int]) -> np.ndarray:
    F = np.array(sorted(set(int(i) for i in survivors)), dtype=np.intp)
    if F.size and (F[0] < 0 or F[-1] >= code.n):
        raise InvalidInput(f"survivor indices must lie in 0..{code.n - 1}")
    return F[None, :]
