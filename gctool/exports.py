"""Exports for pipelines: B, the assignment, and optionally Tandon's decoding matrix A.

The decoding table holds one decoding vector per straggler pattern of size s, in lexicographic
order of the patterns, zero-padded to length n (reference §0.2).  For m-piece codes each pattern
has m vectors (one per piece target).

Which decoder fills the table (``decoder=``, recorded in ``decoders.method``):

* ``generic``: the optimal decoder of :mod:`gctool.decode` (minimum-norm least squares over
  R/C, elimination over GF(q)), batched.
* ``structured``: the scheme's structured decoder (:mod:`gctool.decode.structured`; cyclic-mds,
  rs, comm), batched.  It is cheaper (O((n-s)^2) per pattern plus the check, against an
  elimination or SVD of the (n-s) x k system), and the export table needs no rank or condition
  number, so ``auto`` (the default) uses it whenever the scheme has one and it applies.  Every
  structured vector is checked (``a^T B_F = targets`` exactly over GF(q), squared error <=
  tol * k over R/C); a pattern that fails gets the generic vector instead, the per-pattern
  array ``structured`` says which patterns kept the structured vector, and ``decoders.note``
  counts the fallbacks.  Over R/C a structured vector can differ from the minimum-norm one
  when the solution is not unique (e.g. rs with k < n - s); both decode.

Two paths write the same arrays and meta:

* :func:`build_export` builds everything in memory (JSON output, ``-o -``, and NPZ without
  decoders); its decoding table is capped at :data:`~gctool.limits.MAX_TABLE_ENTRIES` entries
  (about 134 MB of float64), so large tables need NPZ.
* :func:`export_npz` streams the NPZ chunk by chunk (``gctool export -o X.npz decoders``):
  peak memory is bounded by the chunk size whatever the number of patterns, and only
  ``max_patterns`` (default 100,000, may be raised) limits the table.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from math import comb
from typing import IO, Any, TypeVar

import numpy as np

from gctool._signals import checkpoint
from gctool.algebra.fields import Field
from gctool.audit.checks import check_s
from gctool.budget import Budget
from gctool.decode import DEFAULT_TOL, check_tol, chunk_size
from gctool.decode.table import TableDecoder, plan
from gctool.engine.enumeration import straggler_chunks, survivors_of
from gctool.errors import BudgetExceeded, SearchInterrupted, summarised
from gctool.io import code_to_meta, dumps_document, encode_matrix, npz_bytes
from gctool.limits import DEFAULT_MAX_PATTERNS, MAX_TABLE_ENTRIES
from gctool.model import GradientCode
from gctool.precision.certify import TableBound
from gctool.precision.formats import BFLOAT16_STORAGE, Format, rounded, stored
from gctool.reports import ExportReport
from gctool.wording import counted

T = TypeVar("T")

EXPORT_FORMAT = "gctool.export"
EXPORT_VERSION = 1
#: the arrays ``dtype`` stores in its format (the others are indices, flags or float64 figures)
_VALUES = ("B", "target", "A")


def check_dtype(code: GradientCode, dtype: str | None) -> Format | None:
    """The :class:`~gctool.precision.Format` of ``dtype`` (None for None / float64).  A code
    over a finite field refuses any ``dtype`` given, float64 included: its entries are written
    as the field's integers."""
    from gctool.errors import InvalidInput
    from gctool.precision import get_format

    if dtype is None:
        return None
    fmt = None if dtype == "float64" else get_format(dtype, "dtype")
    if code.field.is_finite:
        raise InvalidInput(f"`dtype` applies to real and complex codes; the entries of a "
                           f"{code.field} code are exact field elements (integers)",
                           param="dtype")
    if fmt is None:
        return None
    if code.field.kind == "complex" and fmt.name != "float32":
        raise InvalidInput(f"complex codes cannot be written in {fmt.name} (numpy has no "
                           "complex 16-bit type); use `dtype` float32", param="dtype")
    return fmt


@dataclass
class Export:
    meta: dict[str, Any]
    arrays: dict[str, np.ndarray]
    all_decodable: bool | None
    patterns: int
    field: Field  # the code's field (the encoding of B, the targets and A in JSON)
    #: ``dtype``: B, target and A hold values of this format (None: float64 / the field)
    fmt: Format | None = None

    def to_bytes(self, npz: bool) -> bytes:
        if npz:
            arrays = self.arrays
            if self.fmt is not None:  # the stored form (bfloat16: bit patterns)
                arrays = {k: stored(v, self.fmt) if k in _VALUES else v
                          for k, v in arrays.items()}
            return npz_bytes(arrays, self.meta)
        self._check_json_range()
        doc = dict(self.meta)
        fld = self.field
        doc["B"] = encode_matrix(self.arrays["B"], fld)
        doc["support"] = self.arrays["support"].astype(int).tolist()
        doc["target"] = encode_matrix(self.arrays["target"], fld)
        if "A" in self.arrays:
            doc["patterns"] = self.arrays["patterns"].tolist()
            doc["A"] = encode_matrix(self.arrays["A"], fld)
            doc["decodable"] = self.arrays["decodable"].tolist()
            for key in ("residual", "structured", "error_bound"):
                if key in self.arrays:
                    doc[key] = self.arrays[key].tolist()
        return dumps_document(doc).encode("utf-8")


    def _check_json_range(self) -> None:
        """Refuse JSON output of values that ``dtype`` cannot hold: rounded to the format they
        are infinite (NPZ stores them so, and the bound calls such a pattern unbounded), and
        JSON has no number for them."""
        from gctool.errors import InvalidInput

        if self.fmt is None:
            return
        for key, where in (("B", "row {} of B"), ("target", "the target"),
                           ("A", "the decoder of straggler set {}")):
            if key not in self.arrays:
                continue
            values = self.arrays[key]
            bad = ~np.isfinite(values.reshape(values.shape[0], -1)).all(axis=1)
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                at = self.arrays["patterns"][i].tolist() if key == "A" else i
                raise InvalidInput(
                    f"{where.format(at)} has an entry beyond {self.fmt.name}'s range "
                    f"(largest {self.fmt.max:g}), which JSON cannot write: write .npz (which "
                    "stores it as inf) or choose a wider `dtype`", param="dtype")


def estimate_bytes(code: GradientCode, s: int) -> tuple[int, int]:
    """(patterns, approximate NPZ bytes) of the decoding table for s stragglers."""
    P = comb(code.n, s)
    width = 16 if code.field.kind == "complex" else 8
    return P, P * (code.m * code.n * width + s * 8 + 9)


def _base(code: GradientCode, fmt: Format | None = None
          ) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    meta: dict[str, Any] = {"format": EXPORT_FORMAT, "version": EXPORT_VERSION}
    if fmt is not None:
        meta["dtype"] = fmt.name
        if fmt.name == "bfloat16":
            meta["npz_storage"] = BFLOAT16_STORAGE
    meta["code"] = code_to_meta(code)
    meta["assignment"] = code.assignment()
    meta["loads"] = code.loads.tolist()
    meta["replication"] = code.replication.tolist()
    # what a decoding vector must produce: A[p] @ B = target (m = 1: the all-ones row; m > 1:
    # the piece-major block of ones, row u = ones on columns u*k .. u*k + k - 1)
    # support: n x k, 1 where worker i computes partition j (0/1 integers in JSON and NPZ alike)
    support = np.asarray(code.support).astype(np.int8)
    arrays = {"B": np.asarray(code.B), "support": support, "target": code.targets()}
    if fmt is not None:  # the values of the format, as float64 (stored() converts for NPZ)
        arrays["B"], arrays["target"] = rounded(arrays["B"], fmt), rounded(arrays["target"], fmt)
    return meta, arrays


#: memory of one number of a JSON document built in memory (the array entry, its Python float
#: in a list and its text)
JSON_ENTRY_BYTES = 64


def _options(code: GradientCode, s: int | None, decoder: str, tol: float | None,
             dtype: str | None) -> tuple[int, float, Format | None]:
    """An export's options checked: (s, the default the code's own; the tolerance, None: the
    default, refused when given over a finite field; the number format)."""
    from gctool.decode import structured
    from gctool.numerics import check_tol_applies

    s = code.s if s is None else s
    check_s(s, code.n)
    structured.check_decoder(decoder)
    check_tol_applies(code.field, tol)
    return s, check_tol(DEFAULT_TOL if tol is None else tol), check_dtype(code, dtype)


def _planned(code: GradientCode, s: int, max_patterns: int, decoder: str,
             budget: Budget | None, in_memory: bool, table: Callable[[bool], T]
             ) -> tuple[int, bool, str | None, T]:
    """(patterns, use the structured decoder?, the plan's note, ``table(use)``) of a decoding
    table within its budgets (:func:`_check_budget`, the decoders' :func:`plan`,
    :func:`_check_work`); an interrupt meanwhile says that nothing was decoded."""
    P = _check_budget(code, s, max_patterns, in_memory)
    with summarised(f"interrupted before decoding the {P:,} straggler patterns (0 decoded); "
                    "no file written"):
        use, note = plan(code, code.n - s, decoder)
        _check_work(code, s, P, use, in_memory, Budget.default() if budget is None else budget)
        return P, use, note, table(use)


def _check_budget(code: GradientCode, s: int, max_patterns: int, in_memory: bool) -> int:
    """The pattern count, after the ``max_patterns`` budget and (in memory) the entries cap."""
    P, size = estimate_bytes(code, s)
    if P > max_patterns:
        raise BudgetExceeded(
            f"the decoding table for n = {code.n}, s = {s} has {P:,} patterns (about "
            f"{size / 1e6:,.1f} MB); the limit is {max_patterns:,} (raise `max_patterns`)",
            kind="patterns", needed=P, budget=max_patterns, param="max_patterns")
    if in_memory and P * code.m * code.n > MAX_TABLE_ENTRIES:  # JSON: built in memory
        raise BudgetExceeded(
            f"the decoding table for n = {code.n}, s = {s} has {P:,} x {code.m * code.n:,} "
            f"entries (about {size / 1e6:,.1f} MB), above gctool's limit of "
            f"{MAX_TABLE_ENTRIES:,} entries for JSON output (use .npz, which is streamed)",
            kind="entries", needed=P * code.m * code.n, budget=MAX_TABLE_ENTRIES, param=None)
    return P


def _check_work(code: GradientCode, s: int, P: int, structured: bool, in_memory: bool,
                budget: Budget) -> None:
    """Refuse a table above the work budget (one system per pattern: the optimal decoder's
    batched least-squares solve or elimination of (n - s) x K, at its calibrated time per set,
    :func:`gctool.decode.cost.decoder_set_time`, or the structured decoder's interpolation and
    the check of its vector, :data:`~gctool.budget.FAST_SET_COST` and, over GF(q), (n - s) K m
    multiply-adds at the decoders' rate of the field (:func:`~gctool.algebra.gf.muladd_ns`,
    DECODER: rs over GF(2^8), GF(257), GF(65537), GF(3^4), GF(7^3), n = 40 and 80, s = 2, measured
    0.91-1.17 of it, over GF(2^20) 1.65-1.85, cyclic-MDS GF(43) n=21 s=8 0.66; CPU time, best
    of 3, loaded 2-core machine), over R/C n^2 ns) or, built in memory for JSON, above the
    memory budget."""
    from gctool.algebra.gf import ArithPath, muladd_ns
    from gctool.budget import FAST_SET_COST
    from gctool.decode.cost import decoder_set_time

    if not structured:
        per = decoder_set_time(code, s)
    elif code.field.is_finite:
        per = (FAST_SET_COST
               + muladd_ns(code.field, ArithPath.DECODER) * (code.n - s) * code.B.shape[1] * code.m)
    else:
        per = FAST_SET_COST + code.n**2
    each = ("the structured decoder's O(n^2) interpolation" if structured
            else f"one {code.n - s} x {code.B.shape[1]} system")
    what = (f"the decoding table for n = {code.n}, s = {s} ({P:,} patterns, {each} each, "
            f"{code.field})")
    budget.check_work(what, P * per, "export the decoders of a smaller code, or raise `max_work`")
    if in_memory:  # JSON: the table, its Python floats and its text are in memory at once
        budget.check_memory(what, P * code.m * code.n * JSON_ENTRY_BYTES,
                            "write .npz (streamed chunk by chunk) or export fewer patterns")


def _decoders_meta(code: GradientCode, s: int, P: int, use: bool, table: TableDecoder,
                   note: str | None, bound: TableBound | None) -> dict[str, Any]:
    out = {
        "s": s, "count": P, "order": "lexicographic straggler sets",
        "shape": "A[p] is the zero-padded decoding vector (m = 1) or m x n matrix (m > 1)",
        **_describe(code, use, table, note),
    }
    if bound is not None:  # ``dtype``: the proved error bound of exactly these decoders
        out["precision"] = bound.record()
    return out


def build_export(
    code: GradientCode,
    *,
    decoders: bool = False,
    s: int | None = None,
    max_patterns: int = DEFAULT_MAX_PATTERNS,
    tol: float | None = None,
    decoder: str = "auto",
    dtype: str | None = None,
    budget: Budget | None = None,
) -> Export:
    """The export in memory (JSON output, and NPZ without ``decoders``).  The decoding
    table is capped at MAX_TABLE_ENTRIES entries here; :func:`export_npz` streams it.
    ``dtype`` (float32, bfloat16, float16) writes B and A in that format, with the proved
    error bound of the decoders (:mod:`gctool.precision`) in ``decoders.precision`` and per
    pattern in ``error_bound``.  ``budget`` (default :meth:`Budget.default`) holds the table's
    work and memory."""
    s, tol, fmt = _options(code, s, decoder, tol, dtype)
    meta, arrays = _base(code, fmt)
    if not decoders:
        return Export(meta, arrays, None, 0, code.field, fmt)
    P, use, note, table = _planned(code, s, max_patterns, decoder, budget, True,
                                   lambda use: _Table(code, tol, use, fmt))
    patterns, A, ok, resid = table.run(s)  # summarises its own interrupts
    meta["decoders"] = _decoders_meta(code, s, P, use, table, note, table.bound)
    arrays.update(patterns=patterns, A=A, decodable=ok)
    if resid is not None:
        arrays["residual"] = resid
    if use:
        arrays["structured"] = np.concatenate(table.structured)
    if table.bound is not None:
        arrays["error_bound"] = np.concatenate(table.bounds)
    return Export(meta, arrays, bool(ok.all()), P, code.field, fmt)


@dataclass
class Streamed:
    """What :func:`export_npz` wrote (the arrays are in the file only)."""

    meta: dict[str, Any]
    all_decodable: bool
    patterns: int


def export_npz(  # noqa: PLR0913 (the options of gctool export)
    code: GradientCode,
    out: IO[bytes],
    *,
    s: int | None = None,
    max_patterns: int = DEFAULT_MAX_PATTERNS,
    tol: float | None = None,
    decoder: str = "auto",
    chunk: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    dtype: str | None = None,
    budget: Budget | None = None,
) -> Streamed:
    """``build_export(code, decoders=True)`` written to the binary stream ``out`` as NPZ, chunk by
    chunk (:func:`gctool.decoding_table.write_decoding_table`): the same arrays (B, support,
    patterns, A, decodable, residual over R/C, structured when the structured decoder is
    used) and meta, with peak memory bounded by the chunk size whatever the number of
    patterns.  Only ``max_patterns`` limits the table (no entries cap).  Placing the file
    atomically is the caller's job (:func:`gctool._files.atomic_stream`)."""
    from gctool.decoding_table import TableRows, TableSummary, write_decoding_table

    s, tol, fmt = _options(code, s, decoder, tol, dtype)
    meta, arrays = _base(code, fmt)
    P, use, note, table = _planned(code, s, max_patterns, decoder, budget, False,
                                   lambda use: TableDecoder(code, tol, use))  # nothing kept
    bound = None if fmt is None else TableBound(code, fmt)
    done = [0]

    def rows(F: np.ndarray) -> TableRows:
        checkpoint()
        a, ok, err, mask = table.vectors(F)
        cols = {} if mask is None else {"structured": mask}
        if bound is not None and fmt is not None:
            full = _padded(F, a, code)
            cols["error_bound"] = bound.add(_stragglers_of(F, code.n), full)
            err = _stored_error(rounded(full, fmt), arrays["B"], arrays["target"])
        return TableRows(a, ok, err, cols)

    def extra(summary: TableSummary) -> dict[str, np.ndarray]:
        meta["decoders"] = _decoders_meta(code, s, P, use, table, note, bound)
        payload = {k: stored(v, fmt) if fmt is not None and k in _VALUES else v
                   for k, v in arrays.items()}
        payload["meta"] = np.array(json.dumps(meta, sort_keys=True, allow_nan=False))
        return payload

    def tick(count: int, total: int) -> None:
        done[0] = count
        if progress is not None:
            progress(count, total)

    try:
        summary = write_decoding_table(
            code, s, out, tol=tol, extra=extra, chunk=chunk, progress=tick, rows=rows,
            store=None if fmt is None else (lambda x: stored(rounded(x, fmt), fmt)))
    except KeyboardInterrupt:
        raise SearchInterrupted(f"interrupted after decoding {done[0]:,} of {P:,} straggler "
                                "patterns; no file written") from None
    return Streamed(meta, summary.all_decodable, P)


def export(  # noqa: PLR0913 (the options of gctool export)
    code: GradientCode,
    output: str | os.PathLike[str],
    *,
    decoders: bool = False,
    s: int | None = None,
    max_patterns: int = DEFAULT_MAX_PATTERNS,
    tol: float | None = None,
    decoder: str = "auto",
    progress: Callable[[int, int], None] | None = None,
    dtype: str | None = None,
    budget: Budget | None = None,
) -> ExportReport:
    """Write the export of ``code`` to ``output`` (``.npz``: NPZ, otherwise JSON; ``"-"``:
    JSON on stdout) and return what was written: the report of ``gctool export``.

    The file is placed atomically (never a partial file).  NPZ with ``decoders`` is streamed
    (:func:`export_npz`, bounded memory); everything else is built in memory
    (:func:`build_export`).  ``report.ok`` is False when a straggler pattern of the decoding
    table cannot decode (the file is still written).  ``budget`` (default
    :meth:`Budget.default`) holds the table's work and memory.
    """
    from gctool._files import atomic_stream, atomic_write
    from gctool.io import is_npz_path

    path = os.fspath(output)
    npz = is_npz_path(path) and path != "-"
    all_ok: bool | None
    if npz and decoders:  # streamed: bounded memory, no partial file on error or Ctrl-C
        with atomic_stream(path) as out:
            streamed = export_npz(code, out, s=s, max_patterns=max_patterns, tol=tol,
                                  decoder=decoder, progress=progress, dtype=dtype,
                                  budget=budget)
            size = _position(out)
        meta, patterns, all_ok = streamed.meta, streamed.patterns, streamed.all_decodable
    else:
        result = build_export(code, decoders=decoders, s=s, max_patterns=max_patterns,
                              tol=tol, decoder=decoder, dtype=dtype, budget=budget)
        data = result.to_bytes(npz)
        atomic_write(path, data)
        meta, patterns, all_ok, size = (result.meta, result.patterns, result.all_decodable,
                                        len(data))
    info = meta.get("decoders", {})
    bound = info.get("precision", {}).get("bound")
    return ExportReport(path, "npz" if npz else "json", code.n, code.k,
                        code.s if s is None else s, patterns, all_ok, all_ok is not False,
                        size, info.get("method"), info.get("fallbacks", 0), info.get("note"),
                        meta.get("dtype", "float64"), bound)


def _padded(F: np.ndarray, a: np.ndarray, code: GradientCode) -> np.ndarray:
    """Decoders a (b, m, f) of survivors F zero-padded to all n workers: (b, m, n)."""
    full = np.zeros((F.shape[0], a.shape[1], code.n), dtype=np.result_type(a.dtype, float))
    full[np.arange(F.shape[0])[:, None], :, F] = np.swapaxes(a, 1, 2)
    return full


def _stored_error(a: np.ndarray, B: np.ndarray, T: np.ndarray) -> np.ndarray:
    """``||a[p] B - T||^2`` of each padded decoder a (b, m, n), with B and the targets T as
    ``dtype`` stores them: the residual of the values the file holds (inf when one is beyond
    the format's range)."""
    with np.errstate(over="ignore", invalid="ignore"):
        err = np.sum(np.abs(np.einsum("bun,nk->buk", a, B) - T[None]) ** 2, axis=(1, 2))
    return np.where(np.isnan(err), np.inf, err)


def _stragglers_of(F: np.ndarray, n: int) -> np.ndarray:
    """The straggler sets (b, n - f) of survivor sets F (b, f), sorted."""
    mask = np.ones((F.shape[0], n), dtype=bool)
    mask[np.arange(F.shape[0])[:, None], F] = False
    return np.nonzero(mask)[1].reshape(F.shape[0], n - F.shape[1])


def _position(out: object) -> int:
    """Bytes written to a streamed output (0 when the stream cannot tell, e.g. a FIFO)."""
    try:
        return int(out.tell())  # type: ignore[attr-defined]
    except (OSError, AttributeError, ValueError):
        return 0


def _generic_name(code: GradientCode) -> str:
    return ("optimal (minimum-norm least squares)" if not code.field.is_finite
            else "exact (Gaussian elimination, free variables 0)")


def _describe(code: GradientCode, use: bool, table: TableDecoder, note: str | None
              ) -> dict[str, Any]:
    from gctool.decode.structured import method_name

    if not use:
        out: dict[str, Any] = {"method": "generic", "decoder": _generic_name(code)}
        return out | ({"note": note} if note else {})
    used = table.structured_count
    out = {"method": "structured",
           "decoder": f"{method_name(code)}; checked, generic fallback: {_generic_name(code)}",
           "structured_patterns": used, "fallbacks": table.fallbacks}
    notes = [n for n in (note, table.note) if n]
    if table.fallbacks:
        notes.append(f"{counted(table.fallbacks, 'pattern')} failed the check a^T B_F = targets "
                     "and use the generic decoder (see the array 'structured')")
    return out | ({"note": "; ".join(notes)} if notes else {})


class _Table(TableDecoder):
    """Builds the decoding table chunk by chunk in memory (structured or generic decoder)."""

    def __init__(self, code: GradientCode, tol: float, use_structured: bool,
                 fmt: Format | None = None) -> None:
        super().__init__(code, tol, use_structured)
        self.fmt = fmt
        self.bound = None if fmt is None else TableBound(code, fmt)
        #: with ``fmt``: B and the targets as stored, whose residual the table records
        self.stored = (() if fmt is None else
                       (rounded(code.B, fmt), rounded(code.targets(), fmt)))
        self.bounds: list[np.ndarray] = []  # per chunk, with ``fmt``
        self.pats: list[np.ndarray] = []
        self.As: list[np.ndarray] = []
        self.oks: list[np.ndarray] = []
        self.res: list[np.ndarray] = []
        self.structured: list[np.ndarray] = []  # per chunk, filled by run() (in memory)

    def run(self, s: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
        n = self.code.n
        try:
            for S in straggler_chunks(n, s, chunk_size(self.code, n - s)):
                self._chunk(S)
        except KeyboardInterrupt:
            done, total = sum(len(p) for p in self.pats), comb(n, s)
            raise SearchInterrupted(f"interrupted after decoding {done:,} of {total:,} "
                                    "straggler patterns; no file written") from None
        numeric = not self.code.field.is_finite
        return (np.concatenate(self.pats).astype(np.int64), np.concatenate(self.As),
                np.concatenate(self.oks), np.concatenate(self.res) if numeric else None)

    def _chunk(self, S: np.ndarray) -> None:
        code = self.code
        n, m = code.n, code.m
        F = survivors_of(S, n)
        a, ok, err, mask = self.vectors(F)  # a: (b, m, f)
        if mask is not None:
            self.structured.append(mask)
        full = np.zeros((S.shape[0], m, n), dtype=code.field.dtype)
        full[np.arange(S.shape[0])[:, None], :, F] = np.swapaxes(a, 1, 2)
        if self.bound is not None and self.fmt is not None:  # bounded, then stored in fmt
            self.bounds.append(self.bound.add(S, full))
            full = rounded(full, self.fmt)
            err = _stored_error(full, *self.stored)
        self.pats.append(S)
        self.As.append(full[:, 0, :] if m == 1 else full)
        self.oks.append(ok)
        self.res.append(np.sqrt(err))
