"""Standalone SVG of a :class:`~gctool.viz.picture.Picture`, built with the standard library
(the primitives of :mod:`gctool.viz.svgkit`, shared with ``gctool simulate`` (``plot``)).

Layout, top to bottom: title; the heat map (workers are rows, columns of B are columns) with the
decoding vector column(s) ``a`` and the load bars on its right; the replication bars under it;
the legend; the decoding caption; the worst-case error curve.  Every cell of the heat map is one
``<rect class="cell">`` with a ``<title>`` tooltip (the exact entry) unless the entry is zero.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from typing import Any

import numpy as np

from gctool.viz.curve import Curve, ranges, runs
from gctool.viz.grid import (
    NEGATIVE,
    NEUTRAL,
    POSITIVE,
    HeatGrid,
    diverging,
    element_color,
    entry_text,
    heat_grid,
    light,
    sequential,
)
from gctool.viz.picture import DecodingView, Picture
from gctool.viz.svgkit import AXIS, GRIDLINE, PAD
from gctool.viz.svgkit import Canvas as _Canvas
from gctool.viz.svgkit import el as _el
from gctool.viz.svgkit import num as _n
from gctool.viz.svgkit import text as _text

#: largest number of rows / columns of cells in the SVG (larger codes are drawn in blocks)
SVG_MAX_CELLS = 100
BAR_W, REP_H = 90, 44
CURVE_W, CURVE_H = 420, 170
USED, STRAGGLER = "#e8590c", "#c92a2a"


def _tick_step(cell: float, count: int, label_chars: int = 1) -> int:
    """Every how many cells to put a label of up to ``label_chars`` digits (font size 9)."""
    need = max(12.0, 6.0 * label_chars + 4)
    for step in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000):
        if step * cell >= need or step >= count:
            return step
    return 1000


def render_svg(pic: Picture, max_cells: int = SVG_MAX_CELLS) -> bytes:
    """The standalone SVG document of ``pic`` (its heat map redrawn with ``max_cells``)."""
    code = pic.code
    grid = heat_grid(code, max_cells)
    rows, cols = grid.shape
    cell = float(max(3, min(22, 640 // max(rows, cols))))
    head = (f"{code.scheme}: n = {code.n} workers, k = {code.k} partitions"
            + (f", m = {code.m} pieces" if code.m > 1 else "")
            + f", designed s = {code.s}, field {code.field.spec}")
    cv = _Canvas(f"gctool show: {head}")
    _text(cv.root, PAD, PAD + 12, head, font_size=14, font_weight="bold")
    _text(cv.root, PAD, PAD + 30, _subtitle(grid, pic), fill=AXIS)
    cv.extend(PAD + 8.4 * len(head), PAD + 30)
    x0, y0 = PAD + 64.0, PAD + 62.0
    _matrix(cv, grid, x0, y0, cell)
    right = x0 + cols * cell + 8
    if pic.decoding is not None:
        right = _decoding_column(cv, grid, pic.decoding, code, right, y0, cell)
    _loads(cv, grid, code.loads, right, y0, cell)
    y = _replication(cv, grid, code.replication, x0, y0 + rows * cell + 6, cell)
    y = _legend(cv, grid, pic.decoding, y + 12)
    if pic.decoding is not None:
        _straggler_marks(cv, grid, pic.decoding, x0, y0, cell)
        y = _decoding_caption(cv, pic.decoding, code, y + 10)
    if pic.curve is not None and pic.curve.informative(code.n):
        _curve(cv, pic.curve, code.s, code.n, code.field.is_finite, PAD + 40.0, y + 34)
    elif pic.curve is not None:
        done = ranges([p.s for p in pic.curve.points])
        note = ("error curve left out: " + (f"within the budget only s = {done} could be computed"
                                            if done else "no value of s fits the budget"))
        _text(cv.root, PAD, y + 24, note, fill=AXIS)
        cv.extend(PAD + 6.2 * len(note), y + 28)
    return cv.bytes()


def _subtitle(grid: HeatGrid, pic: Picture) -> str:
    code = pic.code
    if grid.summarised:
        what = (f"{code.n} x {grid.columns} entries drawn as {grid.shape[0]} x {grid.shape[1]} "
                f"blocks of up to {grid.row_step} x {grid.col_step}: share of nonzero entries")
    elif grid.kind == "element":
        what = f"colour = element of {code.field.spec}, blank = 0"
    else:
        what = f"colour = |B[i,j]| ({grid.scale.kind} scale), blank = 0"
    loads, rep = code.loads, code.replication
    return (f"{what}; load {int(loads.min())}..{int(loads.max())}, replication "
            f"{int(rep.min())}..{int(rep.max())}")


def _matrix(cv: _Canvas, grid: HeatGrid, x0: float, y0: float, cell: float) -> None:
    rows, cols = grid.shape
    g = cv.group("heatmap")
    stroke = "#e9ecef" if cell >= 6 else None
    for r in range(rows):
        for c in range(cols):
            color = grid.colors[r][c]
            rect = _el(g, "rect", class_="cell", x=x0 + c * cell, y=y0 + r * cell, width=cell,
                       height=cell, fill=color or "#ffffff", stroke=stroke, stroke_width=0.5)
            if color is not None:
                _el(rect, "title", _cell_title(grid, r, c))
            if color is not None and grid.kind == "element" and cell >= 14:
                _text(g, x0 + (c + 0.5) * cell, y0 + (r + 0.5) * cell + 3, grid.labels[r][c],
                      text_anchor="middle", font_size=8,
                      fill="#000000" if light(color) else "#ffffff")
    if grid.m > 1 and not grid.summarised:
        for u in range(1, grid.m):
            x = x0 + u * grid.k * cell
            _el(g, "line", x1=x, y1=y0 - 4, x2=x, y2=y0 + rows * cell, stroke=AXIS,
                stroke_width=1.5, class_="piece")
    _el(g, "rect", class_="frame", x=x0, y=y0, width=cols * cell, height=rows * cell,
        fill="none", stroke=AXIS, stroke_width=0.8)
    _axis_labels(g, grid, x0, y0, cell)


def _cell_title(grid: HeatGrid, r: int, c: int) -> str:
    if not grid.summarised:
        piece = "" if grid.m == 1 else f" (piece {c // grid.k}, partition {c % grid.k})"
        return f"B[{r},{c}] = {grid.labels[r][c]}{piece}"
    ri, ci = grid.rows_of(r), grid.cols_of(c)
    return (f"workers {ri.start}..{ri.stop - 1}, columns {ci.start}..{ci.stop - 1}: "
            f"{grid.labels[r][c]}")


def _axis_labels(g: ET.Element, grid: HeatGrid, x0: float, y0: float, cell: float) -> None:
    rows, cols = grid.shape
    rstep = _tick_step(cell, rows)
    cstep = _tick_step(cell, cols, len(str((cols - 1) * grid.col_step)))
    for r in range(0, rows, rstep):
        _text(g, x0 - 4, y0 + (r + 0.5) * cell + 3.5, str(r * grid.row_step),
              text_anchor="end", font_size=9, fill=AXIS)
    for c in range(0, cols, cstep):
        _text(g, x0 + (c + 0.5) * cell, y0 - 5, str(c * grid.col_step), text_anchor="middle",
              font_size=9, fill=AXIS)
    _text(g, x0 - 4, y0 - 5, "worker \\ column", text_anchor="end", font_size=9, fill=AXIS)


def _block_mean(values: np.ndarray, ranges: list[range]) -> list[float]:
    return [float(np.mean(values[list(r)])) for r in ranges]


def _loads(cv: _Canvas, grid: HeatGrid, loads: np.ndarray, x: float, y0: float,
           cell: float) -> None:
    rows = grid.shape[0]
    vals = _block_mean(loads, [grid.rows_of(r) for r in range(rows)])
    top = max(vals) or 1.0
    g = cv.group("loads")
    _text(g, x, y0 - 5, "load" + (" (mean per block)" if grid.summarised else ""),
          font_size=9, fill=AXIS)
    for r, v in enumerate(vals):
        _el(g, "rect", class_="load", x=x, y=y0 + r * cell + 0.1 * cell, width=BAR_W * v / top,
            height=0.8 * cell, fill="#adb5bd")
        if cell >= 9:
            _text(g, x + BAR_W * v / top + 3, y0 + (r + 0.5) * cell + 3.5, f"{v:.3g}",
                  font_size=9)
    cv.extend(x + BAR_W + 30, y0 + rows * cell)


def _replication(cv: _Canvas, grid: HeatGrid, rep: np.ndarray, x0: float, y: float,
                 cell: float) -> float:
    cols = grid.shape[1]
    ranges = [range(c.start, c.stop) for c in (grid.cols_of(i) for i in range(cols))]
    vals = [float(np.mean(rep[[j % grid.k for j in r]])) for r in ranges]
    top = max(vals) or 1.0
    g = cv.group("replication")
    for c, v in enumerate(vals):
        h = REP_H * v / top
        _el(g, "rect", class_="replication", x=x0 + c * cell + 0.1 * cell, y=y, width=0.8 * cell,
            height=h, fill="#adb5bd")
        if cell >= 14:
            _text(g, x0 + (c + 0.5) * cell, y + h + 10, f"{v:.3g}", text_anchor="middle",
                  font_size=8)
    _text(g, x0 - 4, y + 10, "replication", text_anchor="end", font_size=9, fill=AXIS)
    cv.extend(x0 + cols * cell, y + REP_H + 12)
    return y + REP_H + 12


def _show_used(grid: HeatGrid, d: DecodingView | None) -> bool:
    """Outline the rows the decoder uses only when that tells something: some survivors are
    left out, and every row is its own cell."""
    return d is not None and not grid.summarised and d.used != d.survivors


def _legend(cv: _Canvas, grid: HeatGrid, d: DecodingView | None, y: float) -> float:
    g = cv.group("legend")
    x, limit = PAD, max(cv.width, 560.0)
    items = [(color, label) for color, _glyph, label in grid.legend()]
    if d is not None:
        items.append((STRAGGLER, "straggler (dimmed)"))
        if not d.exact and not np.iscomplexobj(d.A):
            items += [(POSITIVE, "a > 0"), (NEGATIVE, "a < 0")]
        elif not d.exact:
            items.append((sequential(1.0), "|a| (darker = larger)"))
    if _show_used(grid, d):
        items.append((USED, "used by the decoder (a != 0)"))
    for color, label in items:
        step = 28 + 6 * len(label)
        if x > PAD and x + step > limit:
            x, y = PAD, y + 18
        _el(g, "rect", x=x, y=y, width=12, height=12, fill=color, stroke=AXIS, stroke_width=0.5)
        _text(g, x + 16, y + 10, label, font_size=10)
        x += step
    cv.extend(x, y + 12)
    return y + 12


def _row_of(grid: HeatGrid, worker: int) -> int:
    return worker // grid.row_step


def _straggler_marks(cv: _Canvas, grid: HeatGrid, d: DecodingView, x0: float, y0: float,
                     cell: float) -> None:
    g = cv.group("decoding-highlight")
    width = grid.shape[1] * cell
    for r in sorted({_row_of(grid, i) for i in d.used} if _show_used(grid, d) else ()):
        _el(g, "rect", class_="used", x=x0, y=y0 + r * cell, width=width, height=cell,
            fill="none", stroke=USED, stroke_width=1.5)
    for r in sorted({_row_of(grid, i) for i in d.stragglers}):
        _el(g, "rect", class_="straggler", x=x0, y=y0 + r * cell, width=width, height=cell,
            fill="#ffffff", fill_opacity=0.7, stroke=STRAGGLER, stroke_width=1.5,
            stroke_dasharray="4 2")
        _text(g, x0 - 30, y0 + (r + 0.5) * cell + 4, "✗", fill=STRAGGLER, font_weight="bold")


def _coef_color(x: Any, d: DecodingView, code: Any, vmax: float) -> str:
    if abs(x) <= d.zero_tol:
        return NEUTRAL
    if d.exact:
        return element_color(int(x), code.field.order)
    if np.iscomplexobj(d.A):
        return sequential(abs(x) / vmax if vmax else 0.0)
    return diverging(float(x), vmax)


def _decoding_column(cv: _Canvas, grid: HeatGrid, d: DecodingView, code: Any, x: float,
                     y0: float, cell: float) -> float:
    g = cv.group("decoding")
    w = max(cell, 10.0)
    vmax = float(np.abs(d.A).max()) if d.A.size else 0.0
    for u in range(d.A.shape[0]):
        xu = x + u * w
        _text(g, xu + w / 2, y0 - 5, "a" if d.A.shape[0] == 1 else f"a{u}",
              text_anchor="middle", font_size=9, font_style="italic")
        for r in range(grid.shape[0]):
            block = [i for i in grid.rows_of(r)]
            i = max(block, key=lambda w_: abs(d.A[u, w_]))  # largest |a| in the block
            x_i = d.A[u, i]
            rect = _el(g, "rect", class_="dec", x=xu, y=y0 + r * cell, width=w, height=cell,
                       fill=_coef_color(x_i, d, code, vmax), stroke="#adb5bd", stroke_width=0.5)
            kind = code.field.kind
            _el(rect, "title", f"a{'' if d.A.shape[0] == 1 else u}[{i}] = {entry_text(x_i, kind)}"
                + (" (straggler)" if i in d.stragglers else ""))
    return x + d.A.shape[0] * w + 10


def _decoding_caption(cv: _Canvas, d: DecodingView, code: Any, y: float) -> float:
    S = ", ".join(str(i) for i in d.stragglers) or "none"
    if d.exact:
        verdict = "decodes exactly" if d.ok else "cannot decode (no exact solution)"
        detail = f"{len(d.used)} workers used"
    else:
        verdict = "decodes" if d.ok else f"does not decode: error {d.error:.4g}"
        detail = (f"residual {math.sqrt(d.error):.3g}, condition {d.cond:.3g}, "
                  f"||a|| {d.norm:.3g}, {len(d.used)} workers used")
    line = f"stragglers {{{S}}}: {verdict} ({detail})"
    _text(cv.root, PAD, y + 10, line, fill=STRAGGLER if not d.ok else "#212529")
    cv.extend(PAD + 6.2 * len(line), y + 12)
    return y + 12


def _curve(cv: _Canvas, curve: Curve, s_design: int, n: int, exact_field: bool, x0: float,
           y0: float) -> None:
    g = cv.group("curve")
    unit = ("0 = every set decodes, 1 = some set fails" if exact_field
            else "raw squared error / (k*m)")
    title = f"worst-case error vs number of stragglers s ({unit}; {curve.source})"
    _text(g, x0 - 24, y0 - 14, title, font_weight="bold")
    cv.extend(x0 - 24 + 7 * len(title), y0)
    X = lambda s: x0 + CURVE_W * s / max(1, n)  # noqa: E731
    Y = lambda e: y0 + CURVE_H * (1 - min(1.0, e))  # noqa: E731
    for e in (0.0, 0.5, 1.0):
        _el(g, "line", x1=x0, y1=Y(e), x2=x0 + CURVE_W, y2=Y(e), stroke=GRIDLINE)
        _text(g, x0 - 4, Y(e) + 3.5, f"{e:g}", text_anchor="end", font_size=9, fill=AXIS)
    step = _tick_step(CURVE_W / max(1, n), n + 1, len(str(n)))
    for s in range(0, n + 1, step):
        _text(g, X(s), y0 + CURVE_H + 13, str(s), text_anchor="middle", font_size=9, fill=AXIS)
    _el(g, "line", x1=X(s_design), y1=y0, x2=X(s_design), y2=y0 + CURVE_H, stroke=USED,
        stroke_dasharray="4 3", class_="design-s")
    _text(g, X(s_design) + 3, y0 + 10, f"designed s = {s_design}", fill=USED, font_size=9)
    for run in runs([p.s for p in curve.points]):
        pts = [p for p in curve.points if p.s in run]
        _el(g, "polyline", fill="none", stroke="#1d91c0", stroke_width=1.8,
            points=" ".join(f"{_n(X(p.s))},{_n(Y(p.error))}" for p in pts))
    for p in curve.points:
        dot = _el(g, "circle", class_="point", cx=X(p.s), cy=Y(p.error), r=2.8, fill="#253494")
        witness = "" if p.stragglers is None else f", worst stragglers {p.stragglers}"
        _el(dot, "title", f"s = {p.s}: error {p.error:.4g}{witness}")
    _el(g, "rect", x=x0, y=y0, width=CURVE_W, height=CURVE_H, fill="none", stroke=AXIS)
    note = "s" if not curve.skipped else f"s  (not computed, over budget: {ranges(curve.skipped)})"
    _text(g, x0 + CURVE_W / 2, y0 + CURVE_H + 28, note, text_anchor="middle", font_size=10)
    cv.extend(x0 + CURVE_W + 8, y0 + CURVE_H + 30)
