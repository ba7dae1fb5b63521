"""What ``gctool show`` shows: the heat map, loads and replication, an optional decoding vector
for a straggler set, and an optional worst-case error curve; plus the JSON summary."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gctool.errors import InvalidInput
from gctool.model import GradientCode
from gctool.reports import Report
from gctool.viz.curve import Curve
from gctool.viz.grid import TERMINAL_MAX_CELLS, HeatGrid, grid_shape, heat_grid

SHOW_FORMAT = "gctool.show"


def parse_stragglers(text: str, n: int) -> list[int]:
    """``"0,3"`` -> ``[0, 3]``; commas or spaces; ``""`` or ``"none"`` -> ``[]``."""
    raw = text.replace(",", " ").split()
    if raw in ([], ["none"]):
        return []
    try:
        S = [int(x) for x in raw]
    except ValueError:
        raise InvalidInput(f"`stragglers` must be worker indices like 0,3, got {text!r}",
                           param="stragglers") from None
    return check_stragglers(S, n)


def check_stragglers(stragglers: Iterable[Any], n: int) -> list[int]:
    """The straggling workers, sorted: integers in 0..n-1, each once (one line of InvalidInput
    otherwise)."""
    if isinstance(stragglers, str | bytes) or not isinstance(stragglers, Iterable):
        raise InvalidInput(f"`stragglers` must be a list of worker indices, got "
                           f"{stragglers!r}", param="stragglers")
    S = list(stragglers)
    for i in S:
        if isinstance(i, bool) or not isinstance(i, int | np.integer):
            raise InvalidInput(f"`stragglers` must be worker indices like 0,3, got {i!r}",
                               param="stragglers")
    bad = [int(i) for i in S if not 0 <= i < n]
    if bad:
        raise InvalidInput(f"`stragglers`: {bad[0]} is not a worker (0..{n - 1})",
                           param="stragglers")
    seen: set[int] = set()
    for i in map(int, S):
        if i in seen:
            raise InvalidInput(f"`stragglers` repeats worker {i}", param="stragglers")
        seen.add(i)
    return sorted(seen)


@dataclass(frozen=True)
class DecodingView:
    """The optimal decoding vector(s) when the given workers straggle."""

    stragglers: list[int]
    survivors: list[int]
    A: np.ndarray  # (m, n): one row per target, zero at stragglers (Tandon's A row)
    ok: bool
    error: float  # raw squared error (indicator over GF(q))
    exact: bool  # exact arithmetic (GF(q)) rather than float64
    cond: float | None
    norm: float | None

    @property
    def zero_tol(self) -> float:
        """Coefficients at most this large count as zero (float round-off; 0 over GF(q))."""
        return 0.0 if self.exact or not self.A.size else 1e-12 * float(np.abs(self.A).max())

    @property
    def used(self) -> list[int]:
        """Workers whose coefficient is nonzero (above round-off) in some target."""
        return np.flatnonzero((np.abs(self.A) > self.zero_tol).any(axis=0)).tolist()

    def to_dict(self, code: GradientCode) -> dict[str, Any]:
        from gctool.io import encode_matrix

        return {
            "stragglers": self.stragglers, "survivors": self.survivors, "decodes": self.ok,
            "error": self.error, "residual": float(np.sqrt(self.error)) if not self.exact else None,
            "condition": self.cond, "decoder_norm": self.norm, "used": self.used,
            "arithmetic": "exact" if self.exact else "float64",
            "a": encode_matrix(self.A, code.field),
        }


def decoding_view(code: GradientCode, stragglers: Sequence[int], tol: float | None = None
                  ) -> DecodingView:
    from gctool.decode import DEFAULT_TOL, decode

    S = sorted(set(int(i) for i in stragglers))
    F = [i for i in range(code.n) if i not in set(S)]
    d = decode(code, F, DEFAULT_TOL if tol is None else tol)
    return DecodingView(S, F, d.padded(code.n), d.ok, d.error, code.field.is_finite,
                        d.cond, d.norm)


@dataclass
class ShowReport(Report):
    """The JSON summary of ``gctool show``."""

    scheme: str
    field: str
    n: int
    k: int
    m: int
    s: int
    seed: int | None
    nnz: int
    density: float
    loads: list[int]
    replication: list[int]
    load_min: int
    load_max: int
    load_mean: float
    replication_min: int
    replication_max: int
    values: dict[str, Any]
    view: dict[str, Any]
    curve: dict[str, Any] | None = None
    decoding: dict[str, Any] | None = None
    svg: dict[str, Any] | None = None
    format: str = SHOW_FORMAT
    ok: bool = True  # show audits nothing; kept for the house's report contract


@dataclass
class Picture:
    """Everything the views draw, computed once."""

    code: GradientCode
    grid: HeatGrid
    decoding: DecodingView | None = None
    curve: Curve | None = None
    svg: dict[str, Any] | None = None

    @property
    def ok(self) -> bool:
        """show audits nothing (exit 0 on a valid code)."""
        return True

    def to_dict(self) -> dict[str, Any]:
        """The JSON document (:class:`ShowReport`)."""
        return self.report().to_dict()

    def attach_svg(self, path: str, data: bytes, max_cells: int) -> None:
        """Record the SVG that was written (for the JSON summary)."""
        rows, cols = grid_shape(self.code.n, int(self.code.B.shape[1]), max_cells)
        self.svg = {"path": path, "bytes": len(data), "cells": rows * cols, "rows": rows,
                    "cols": cols, "summarised": (rows, cols) != self.code.B.shape}

    def report(self) -> ShowReport:
        code, g = self.code, self.grid
        loads, rep = code.loads, code.replication
        nnz = int(np.count_nonzero(code.B))
        return ShowReport(
            scheme=code.scheme, field=code.field.spec, n=code.n, k=code.k, m=code.m, s=code.s,
            seed=code.seed, nnz=nnz, density=nnz / code.B.size,
            loads=loads.tolist(), replication=rep.tolist(), load_min=int(loads.min()),
            load_max=int(loads.max()), load_mean=float(loads.mean()),
            replication_min=int(rep.min()), replication_max=int(rep.max()),
            values=_values_summary(code), view=_view_summary(g),
            curve=None if self.curve is None else self.curve.to_dict(),
            decoding=None if self.decoding is None else self.decoding.to_dict(code),
            svg=self.svg,
        )


def _values_summary(code: GradientCode) -> dict[str, Any]:
    B = np.asarray(code.B)
    if code.field.is_finite:
        elements = np.unique(B[B != 0]).tolist()
        return {"shown": "element", "distinct_nonzero": len(elements),
                "elements": elements[:64], "order": code.field.order}
    mag = np.abs(B)
    nz = mag[mag > 0]
    return {"shown": "magnitude", "max_abs": float(mag.max()),
            "min_abs_nonzero": float(nz.min()) if nz.size else None,
            "negative_entries": int(np.count_nonzero(B.real < 0)),
            "complex_entries": int(np.count_nonzero(B.imag)) if np.iscomplexobj(B) else 0}


def _view_summary(g: HeatGrid) -> dict[str, Any]:
    rows, cols = g.shape
    return {"summarised": g.summarised, "rows": rows, "cols": cols, "block_rows": g.row_step,
            "block_cols": g.col_step, "cell": g.kind, "scale": g.scale.kind}


def picture(
    code: GradientCode,
    *,
    max_cells: int = TERMINAL_MAX_CELLS,
    stragglers: Sequence[int] | None = None,
    curve: Curve | None = None,
    tol: float | None = None,
) -> Picture:
    """Compute what ``show`` draws (the curve is computed by the caller, see ``viz.curve``)."""
    view = None if stragglers is None else decoding_view(code, stragglers, tol)
    return Picture(code, heat_grid(code, max_cells), view, curve)
