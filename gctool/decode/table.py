"""The decoder that fills a decoding table: the scheme's structured decoder where it applies
(checked per pattern, generic fallback), else the generic one.

``gctool export`` (``decoders``) writes these vectors (:mod:`gctool.exports`), and the precision
certificate (:mod:`gctool.precision`) bounds the rounding error of exactly these vectors, so
both use :class:`TableDecoder`.
"""

from __future__ import annotations

import numpy as np

from gctool.decode.generic import Decoder
from gctool.errors import InvalidInput
from gctool.model import GradientCode


def plan(code: GradientCode, f: int, decoder: str) -> tuple[bool, str | None]:
    """(use the structured decoder?, note) for survivor sets of size f; ``decoder`` is
    ``auto``, ``structured`` (an error when it does not apply) or ``generic``."""
    from gctool.decode import structured

    if decoder == "generic" or (decoder == "auto" and not structured.has_structured_decoder(code)):
        return False, None
    reason = structured.unavailable(code, f)
    if reason is None:
        return True, None
    if decoder == "structured":
        raise InvalidInput(f"`decoder`=structured: {reason}")
    return False, f"structured decoder not used: {reason}"


class TableDecoder:
    """Decoding vectors of chunks of survivor sets (structured or generic decoder), with the
    counts of structured vectors and fallbacks."""

    def __init__(self, code: GradientCode, tol: float, use_structured: bool) -> None:
        self.code, self.tol, self.use = code, tol, use_structured
        self._decoder: Decoder | None = None  # built on first use (galois over GF(q))
        self.structured_count = 0
        self.fallbacks = 0
        self.note: str | None = None

    @property
    def decoder(self) -> Decoder:
        if self._decoder is None:
            self._decoder = Decoder(self.code, self.tol)
        return self._decoder

    def vectors(self, F: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
        """(a (b, m, f), ok, squared error, structured mask or None) of one chunk."""
        if not self.use:
            r = self.decoder.evaluate(F, with_vectors=True)
            assert r.a is not None
            return r.a, r.ok, r.error, None
        from gctool.decode.structured import NotApplicable, check, decode_batch

        try:
            a = decode_batch(self.code, F)
        except NotApplicable as exc:  # pattern-dependent (tampered params): whole chunk generic
            self.note = self.note or f"structured decoder failed on some patterns: {exc}"
            a = np.zeros((F.shape[0], self.code.m, F.shape[1]), dtype=self.code.field.dtype)
        err, ok = check(self.code, F, a, self.tol)
        mask = ok.copy()
        self.structured_count += int(mask.sum())
        bad = np.flatnonzero(~ok)
        if bad.size:
            self.fallbacks += int(bad.size)
            r = self.decoder.evaluate(F[bad], with_vectors=True)
            assert r.a is not None
            a[bad], ok, err = r.a, ok.copy(), err.copy()
            ok[bad], err[bad] = r.ok, r.error
        return a, ok, err, mask
