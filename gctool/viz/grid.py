"""The heat-map model shared by the terminal view and the SVG: one cell per entry of B (or per
block of entries for large codes), with a colour, a glyph and an exact label.

Colour choices (written down here because the issue leaves them open):

* reals / complex numbers: the colour shows ``|B[i,j]|`` on a sequential yellow-green-blue
  scale; zero is blank.  The scale is linear in ``|B|``, or logarithmic between the smallest and
  the largest nonzero magnitude when they differ by more than ``LOG_RATIO`` (e.g.
  Vandermonde-type codes), so that small entries stay visible.
* GF(q): the colour names the field element (categorical palette for q <= 11, a hue wheel
  beyond); the glyph is the element itself in base 36 when q <= 36.
* blocks (codes larger than the view): the colour shows the share of nonzero entries in the
  block.

Glyphs carry the same information without colour (``NO_COLOR``): ``·`` zero, ``░▒▓█`` quarters
of the scale.
"""

from __future__ import annotations

import colorsys
import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from gctool.model import GradientCode

#: default largest number of rows / columns of cells (terminal); larger codes are summarised
TERMINAL_MAX_CELLS = 60
#: beyond this ratio of largest to smallest nonzero |B| the magnitude scale becomes logarithmic
LOG_RATIO = 1e3
#: GF(q) elements listed in a legend
LEGEND_ELEMENTS = 12

SEQUENTIAL = ("#c7e9b4", "#7fcdbb", "#41b6c4", "#1d91c0", "#225ea8", "#253494")
CATEGORICAL = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1",
               "#ff9da7", "#9c755f", "#bab0ac")
NEGATIVE, POSITIVE, NEUTRAL = "#2166ac", "#b2182b", "#f7f7f7"
SHADES = "░▒▓█"
ZERO_GLYPH = "·"
_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"

Kind = Literal["magnitude", "element", "density"]


def _hex(rgb: tuple[float, float, float]) -> str:
    return "#" + "".join(f"{round(255 * max(0.0, min(1.0, c))):02x}" for c in rgb)


def _rgb(color: str) -> tuple[float, float, float]:
    return (int(color[1:3], 16) / 255, int(color[3:5], 16) / 255, int(color[5:7], 16) / 255)


def light(color: str) -> bool:
    """Whether ``#rrggbb`` is light (black text reads better on it than white)."""
    r, g, b = (int(color[i:i + 2], 16) for i in (1, 3, 5))
    return 0.299 * r + 0.587 * g + 0.114 * b > 150


def mix(a: str, b: str, t: float) -> str:
    """Linear interpolation between two ``#rrggbb`` colours (t = 0 gives a)."""
    ca, cb = _rgb(a), _rgb(b)
    return _hex((ca[0] + t * (cb[0] - ca[0]), ca[1] + t * (cb[1] - ca[1]),
                 ca[2] + t * (cb[2] - ca[2])))


def sequential(t: float) -> str:
    """Colour of a level t in [0, 1] on the sequential scale."""
    t = max(0.0, min(1.0, t)) * (len(SEQUENTIAL) - 1)
    i = min(int(t), len(SEQUENTIAL) - 2)
    return mix(SEQUENTIAL[i], SEQUENTIAL[i + 1], t - i)


def diverging(x: float, vmax: float) -> str:
    """Blue (negative) - white - red (positive), for signed decoding coefficients."""
    if vmax <= 0 or x == 0:
        return NEUTRAL
    t = 0.25 + 0.75 * min(1.0, abs(x) / vmax)
    return mix(NEUTRAL, POSITIVE if x > 0 else NEGATIVE, t)


def element_color(e: int, q: int) -> str:
    """Colour naming the GF(q) element e (e > 0)."""
    if q <= len(CATEGORICAL) + 1:
        return CATEGORICAL[(e - 1) % len(CATEGORICAL)]
    hue = (e - 1) / (q - 1)
    return _hex(colorsys.hls_to_rgb(hue, 0.5, 0.55))


def element_glyph(e: int, q: int) -> str:
    if e == 0:
        return ZERO_GLYPH
    return _DIGITS[e] if q <= len(_DIGITS) else "█"


def shade(t: float) -> str:
    """Glyph of a level t in (0, 1]: quarters of the scale."""
    return SHADES[min(len(SHADES) - 1, max(0, math.ceil(4 * t) - 1))]


def entry_text(x: Any, kind: str) -> str:
    """Exact-ish text of one entry (tooltips, JSON-free displays)."""
    if kind == "gf":
        return str(int(x))
    if kind == "complex":
        return f"{x.real:.6g}{x.imag:+.6g}j"
    return f"{float(x):.6g}"


@dataclass(frozen=True)
class Scale:
    """How magnitudes map to levels in [0, 1]."""

    kind: Literal["linear", "log", "categorical"]
    vmin: float  # smallest nonzero value shown
    vmax: float  # largest value shown

    def level(self, v: float) -> float:
        if v <= 0 or self.vmax <= 0:
            return 0.0
        if self.kind == "log" and self.vmax > self.vmin:
            return max(0.0, math.log(v / self.vmin) / math.log(self.vmax / self.vmin))
        return v / self.vmax


def magnitude_scale(values: np.ndarray) -> Scale:
    nz = values[values > 0]
    if nz.size == 0:
        return Scale("linear", 0.0, 0.0)
    lo, hi = float(nz.min()), float(nz.max())
    return Scale("log" if hi > LOG_RATIO * lo else "linear", lo, hi)


@dataclass(frozen=True)
class HeatGrid:
    """Cells of the picture: ``rows x cols`` with colour (None = blank), glyph and label."""

    kind: Kind
    scale: Scale
    values: np.ndarray  # (rows, cols): |B|, the element, or the share of nonzeros
    colors: list[list[str | None]]
    glyphs: list[list[str]]
    labels: list[list[str]]
    row_step: int  # rows of B per grid row (1 = one cell per entry)
    col_step: int
    n: int
    columns: int  # columns of B (k*m)
    k: int
    m: int

    @property
    def shape(self) -> tuple[int, int]:
        return int(self.values.shape[0]), int(self.values.shape[1])

    @property
    def summarised(self) -> bool:
        return self.row_step > 1 or self.col_step > 1

    def rows_of(self, r: int) -> range:
        """Rows of B (workers) covered by grid row r."""
        return range(r * self.row_step, min(self.n, (r + 1) * self.row_step))

    def cols_of(self, c: int) -> range:
        return range(c * self.col_step, min(self.columns, (c + 1) * self.col_step))

    def legend(self) -> list[tuple[str, str, str]]:
        """(colour, glyph, meaning) entries explaining the cells."""
        if self.kind == "element":
            q = int(self.scale.vmax) + 1
            shown = sorted({int(v) for v in self.values.flat if v > 0})
            out = [(element_color(e, q), element_glyph(e, q), f"element {e}")
                   for e in shown[:LEGEND_ELEMENTS]]
            if len(shown) > LEGEND_ELEMENTS:
                out.append(("#ffffff", "…", f"+{len(shown) - LEGEND_ELEMENTS} more elements"))
            return out
        unit = "|B|" if self.kind == "magnitude" else "share of nonzeros"
        out = []
        for t in (0.25, 0.5, 0.75, 1.0):
            v = self._value_at(t)
            out.append((sequential(t), shade(t), f"{unit} <= {v:.3g}"))
        return out

    def _value_at(self, t: float) -> float:
        s = self.scale
        if s.kind == "log" and s.vmax > s.vmin:
            return s.vmin * (s.vmax / s.vmin) ** t
        return s.vmax * t


def grid_steps(n: int, cols: int, max_cells: int) -> tuple[int, int]:
    """Rows and columns of B per cell so that the grid has at most ``max_cells`` per side."""
    if max_cells < 1:
        raise ValueError("max_cells must be >= 1")
    return math.ceil(n / max_cells), math.ceil(cols / max_cells)


def grid_shape(n: int, cols: int, max_cells: int) -> tuple[int, int]:
    """Shape of the grid :func:`heat_grid` draws for an n x cols matrix."""
    rs, cs = grid_steps(n, cols, max_cells)
    return math.ceil(n / rs), math.ceil(cols / cs)


def heat_grid(code: GradientCode, max_cells: int = TERMINAL_MAX_CELLS) -> HeatGrid:
    """The picture of ``code`` with at most ``max_cells`` rows and columns of cells."""
    row_step, col_step = grid_steps(code.n, int(code.B.shape[1]), max_cells)
    if row_step == 1 and col_step == 1:
        return _entry_grid(code)
    return _block_grid(code, row_step, col_step)


def _base(code: GradientCode, kind: Kind, scale: Scale, values: np.ndarray,
          cells: tuple[list[list[str | None]], list[list[str]], list[list[str]]],
          steps: tuple[int, int]) -> HeatGrid:
    colors, glyphs, labels = cells
    return HeatGrid(kind, scale, values, colors, glyphs, labels, steps[0], steps[1],
                    code.n, int(code.B.shape[1]), code.k, code.m)


def _entry_grid(code: GradientCode) -> HeatGrid:
    B = np.asarray(code.B)
    fkind = code.field.kind
    if code.field.is_finite:
        q = code.field.order
        values = B.astype(np.float64)
        scale = Scale("categorical", 1.0, float(q - 1))
        colors = [[element_color(int(e), q) if e else None for e in row] for row in B]
        glyphs = [[element_glyph(int(e), q) for e in row] for row in B]
        kind: Kind = "element"
    else:
        values = np.abs(B).astype(np.float64)
        scale = magnitude_scale(values)
        levels = [[scale.level(float(v)) for v in row] for row in values]
        colors = [[sequential(t) if v > 0 else None for t, v in zip(lv, row, strict=True)]
                  for lv, row in zip(levels, values, strict=True)]
        glyphs = [[shade(t) if v > 0 else ZERO_GLYPH for t, v in zip(lv, row, strict=True)]
                  for lv, row in zip(levels, values, strict=True)]
        kind = "magnitude"
    labels = [[entry_text(x, fkind) for x in row] for row in B]
    return _base(code, kind, scale, values, (colors, glyphs, labels), (1, 1))


def block_sums(M: np.ndarray, row_step: int, col_step: int) -> np.ndarray:
    """Sum of M over blocks of row_step x col_step (the last blocks may be smaller)."""
    rows = np.add.reduceat(M, np.arange(0, M.shape[0], row_step), axis=0)
    return np.add.reduceat(rows, np.arange(0, M.shape[1], col_step), axis=1)


def _block_grid(code: GradientCode, row_step: int, col_step: int) -> HeatGrid:
    nz = (np.asarray(code.B) != 0).astype(np.float64)
    counts = block_sums(nz, row_step, col_step)
    sizes = block_sums(np.ones_like(nz), row_step, col_step)
    values = counts / sizes
    scale = Scale("linear", float(values[values > 0].min()) if values.any() else 0.0, 1.0)
    colors = [[sequential(float(v)) if v > 0 else None for v in row] for row in values]
    glyphs = [[shade(float(v)) if v > 0 else ZERO_GLYPH for v in row] for row in values]
    labels = [[f"{int(c)} of {int(z)} nonzero" for c, z in zip(crow, zrow, strict=True)]
              for crow, zrow in zip(counts, sizes, strict=True)]
    return _base(code, "density", scale, values, (colors, glyphs, labels), (row_step, col_step))
