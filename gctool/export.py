"""Exports for pipelines: B, the assignment, and optionally Tandon's decoding matrix A.

The decoding table holds one decoding vector per straggler pattern of size s, in lexicographic
order of the patterns, zero-padded to length n (reference §0.2).  For m-piece codes each pattern
has m vectors (one per piece target).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import comb
from typing import Any

import numpy as np

from gctool.audit.engine import check_s
from gctool.audit.enumeration import straggler_chunks, survivors_of
from gctool.decode import DEFAULT_TOL, Decoder
from gctool.errors import BudgetExceeded, SearchInterrupted
from gctool.io import code_to_meta, dumps_document, encode_matrix, npz_bytes
from gctool.limits import MAX_TABLE_ENTRIES
from gctool.model import GradientCode

EXPORT_FORMAT = "gctool.export"
EXPORT_VERSION = 1
DEFAULT_MAX_PATTERNS = 100_000


@dataclass
class Export:
    meta: dict[str, Any]
    arrays: dict[str, np.ndarray]
    all_decodable: bool | None
    patterns: int

    def to_bytes(self, npz: bool) -> bytes:
        if npz:
            return npz_bytes(self.arrays, self.meta)
        doc = dict(self.meta)
        field = self.meta["code"]["field"]
        from gctool.fields import parse_field

        fld = parse_field(field)
        doc["B"] = encode_matrix(self.arrays["B"], fld)
        doc["support"] = self.arrays["support"].astype(int).tolist()
        if "A" in self.arrays:
            doc["patterns"] = self.arrays["patterns"].tolist()
            doc["A"] = encode_matrix(self.arrays["A"], fld)
            doc["decodable"] = self.arrays["decodable"].tolist()
            if "residual" in self.arrays:
                doc["residual"] = self.arrays["residual"].tolist()
        return dumps_document(doc).encode("utf-8")


def estimate_bytes(code: GradientCode, s: int) -> tuple[int, int]:
    """(patterns, approximate NPZ bytes) of the decoding table for s stragglers."""
    P = comb(code.n, s)
    width = 16 if code.field.kind == "complex" else 8
    return P, P * (code.m * code.n * width + s * 8 + 9)


def export(
    code: GradientCode,
    *,
    decoders: bool = False,
    s: int | None = None,
    max_patterns: int = DEFAULT_MAX_PATTERNS,
    tol: float = DEFAULT_TOL,
) -> Export:
    s = code.s if s is None else s
    check_s(s, code.n)
    meta: dict[str, Any] = {"format": EXPORT_FORMAT, "version": EXPORT_VERSION}
    meta["code"] = code_to_meta(code)
    meta["assignment"] = code.assignment()
    meta["loads"] = code.loads.tolist()
    meta["replication"] = code.replication.tolist()
    arrays: dict[str, np.ndarray] = {"B": np.asarray(code.B), "support": code.support}
    if not decoders:
        return Export(meta, arrays, None, 0)
    P, size = estimate_bytes(code, s)
    if P > max_patterns:
        raise BudgetExceeded(
            f"the decoding table for n = {code.n}, s = {s} has {P:,} patterns (about "
            f"{size / 1e6:,.1f} MB); the limit is {max_patterns:,} (raise --max-patterns)"
        )
    if P * code.m * code.n > MAX_TABLE_ENTRIES:  # bounded memory, whatever --max-patterns says
        raise BudgetExceeded(
            f"the decoding table for n = {code.n}, s = {s} has {P:,} x {code.m * code.n:,} "
            f"entries (about {size / 1e6:,.1f} MB), above gctool's limit of "
            f"{MAX_TABLE_ENTRIES:,} entries"
        )
    patterns, A, ok, resid = _table(code, s, tol)
    meta["decoders"] = {
        "s": s, "count": P, "order": "lexicographic straggler sets",
        "shape": "A[p] is the zero-padded decoding vector (m = 1) or m x n matrix (m > 1)",
        "decoder": "optimal (minimum-norm least squares)" if not code.field.is_finite
        else "exact (Gaussian elimination, free variables 0)",
    }
    arrays.update(patterns=patterns, A=A, decodable=ok)
    if resid is not None:
        arrays["residual"] = resid
    return Export(meta, arrays, bool(ok.all()), P)


def _table(code: GradientCode, s: int, tol: float
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    decoder = Decoder(code, tol)
    n = code.n
    pats: list[np.ndarray] = []
    As: list[np.ndarray] = []
    oks: list[np.ndarray] = []
    res: list[np.ndarray] = []
    try:
        for S in straggler_chunks(n, s, decoder.chunk_size(n - s)):
            _table_chunk(decoder, S, pats, As, oks, res)
    except KeyboardInterrupt:
        done, total = sum(len(p) for p in pats), comb(n, s)
        raise SearchInterrupted(f"interrupted after decoding {done:,} of {total:,} straggler "
                                "patterns; no file written") from None
    numeric = not code.field.is_finite
    return (np.concatenate(pats).astype(np.int64), np.concatenate(As), np.concatenate(oks),
            np.concatenate(res) if numeric else None)


def _table_chunk(decoder: Decoder, S: np.ndarray, pats: list[np.ndarray], As: list[np.ndarray],
                 oks: list[np.ndarray], res: list[np.ndarray]) -> None:
    code = decoder.code
    n, m = code.n, code.m
    F = survivors_of(S, n)
    r = decoder.evaluate(F, with_vectors=True)
    assert r.a is not None
    full = np.zeros((S.shape[0], m, n), dtype=code.field.dtype)
    full[np.arange(S.shape[0])[:, None], :, F] = np.swapaxes(r.a, 1, 2)
    pats.append(S)
    As.append(full[:, 0, :] if m == 1 else full)
    oks.append(r.ok)
    res.append(np.sqrt(r.error))
