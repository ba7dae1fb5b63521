"""The SVG primitives every picture of gctool is drawn with (standard library ``xml.etree`` only,
so the output is always well-formed XML and needs no plotting library).

* :func:`el` / :func:`text` – one element with attributes (``stroke_width`` → ``stroke-width``,
  numbers written compactly);
* :class:`Canvas` – the document, grown to fit what is drawn;
* :func:`line_chart` – axes with "nice" ticks, axis titles with units, a legend and one
  polyline per series (used by ``gctool simulate`` (``plot``) for runtime CDFs and training
  curves).

``gctool show`` (``svg``) (:mod:`gctool.viz.svg`) and ``gctool simulate`` (``plot``)
(:mod:`gctool.sim.plot`) both build on these.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from typing import Any

from gctool.limits import REL_SLACK

PAD, FONT = 16, "11"
AXIS, GRIDLINE, TEXT = "#495057", "#dee2e6", "#212529"
#: colour-blind-safe palette (Okabe–Ito), cycled over series
PALETTE = ("#0072b2", "#e69f00", "#009e73", "#d55e00", "#cc79a7", "#56b4e9", "#f0e442",
           "#000000")
DASHES = ("", "6 3", "2 2", "8 3 2 3")
#: narrowest range of values (relative to their size, at least 1) that gets ticks of its own
TICK_SPAN = 1e-10


def num(x: float) -> str:
    """Compact coordinate text."""
    return f"{x:.2f}".rstrip("0").rstrip(".") if x != int(x) else str(int(x))


def el(parent: ET.Element, tag: str, content: str | None = None, **attrs: Any) -> ET.Element:
    e = ET.SubElement(parent, tag, {k.rstrip("_").replace("_", "-"):
                                    num(v) if isinstance(v, float | int) else str(v)
                                    for k, v in attrs.items() if v is not None})
    if content is not None:
        e.text = content
    return e


def text(parent: ET.Element, x: float, y: float, content: str, **attrs: Any) -> ET.Element:
    return el(parent, "text", content, x=x, y=y, **attrs)


class Canvas:
    """Accumulates the drawing and its extent."""

    def __init__(self, title: str) -> None:
        self.root = ET.Element("svg", {"xmlns": "http://www.w3.org/2000/svg", "version": "1.1",
                                       "font-family": "Helvetica, Arial, sans-serif",
                                       "font-size": FONT})
        el(self.root, "title", title)
        self.bg = el(self.root, "rect", x=0, y=0, width="100%", height="100%", fill="#ffffff")
        self.width, self.height = 0.0, 0.0

    def extend(self, x: float, y: float) -> None:
        self.width, self.height = max(self.width, x), max(self.height, y)

    def group(self, cls: str) -> ET.Element:
        return el(self.root, "g", class_=cls)

    def bytes(self) -> bytes:
        w, h = math.ceil(self.width + PAD), math.ceil(self.height + PAD)
        self.root.set("width", str(w))
        self.root.set("height", str(h))
        self.root.set("viewBox", f"0 0 {w} {h}")
        body = ET.tostring(self.root, encoding="unicode")
        return ('<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n").encode("utf-8")


def nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """About ``count`` round tick values covering [lo, hi] (steps 1, 2, 2.5 or 5 x 10^k)."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        lo, hi = 0.0, 1.0
    if not hi - lo > TICK_SPAN * max(1.0, abs(lo), abs(hi)):  # one value: ticks rounded to 12
        hi = lo + max(1.0, abs(lo))  # decimals could not tell a narrower range apart
    raw = (hi - lo) / max(1, count)
    mag = 10.0 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    start = math.floor(lo / step + REL_SLACK) * step
    ticks = []
    t = start
    while t <= hi + step * REL_SLACK:
        ticks.append(round(t, 12))
        t += step
    if ticks[-1] < hi:
        ticks.append(round(t, 12))
    return ticks


def line_chart(cv: Canvas, x0: float, y0: float, series: Sequence[tuple[str, Sequence[float],  # noqa: PLR0913 (keyword drawing options)
                                                                         Sequence[float]]],
               *, title: str, xlabel: str, ylabel: str, width: float = 460,
               height: float = 240, log_y: bool = False, step: bool = False,
               x_max: float | None = None, cls: str = "chart") -> float:
    """Draw ``series`` ((label, xs, ys), ...) in a box at (x0, y0); returns the bottom y.

    ``step``: draw each series as a right-continuous step function (empirical CDFs).
    ``log_y``: logarithmic y axis (every y must be > 0; others are dropped).
    ``x_max``: cut the x axis there (points to its right are drawn on the right edge).
    """
    if x_max is not None:
        series = [(label, [min(x, x_max) for x in xs], ys) for label, xs, ys in series]
    g = cv.group(cls)
    text(g, x0, y0 - 10, title, font_weight="bold", fill=TEXT)
    pts = [(x, y) for _, xs, ys in series for x, y in zip(xs, ys, strict=True)
           if math.isfinite(x) and math.isfinite(y) and (y > 0 or not log_y)]
    xs_all = [p[0] for p in pts] or [0.0, 1.0]
    ys_all = [math.log10(p[1]) if log_y else p[1] for p in pts] or [0.0, 1.0]
    xt = nice_ticks(min(xs_all), max(xs_all))
    yt = (list(range(math.floor(min(ys_all)), math.ceil(max(ys_all)) + 1)) if log_y
          else nice_ticks(min(ys_all), max(ys_all)))
    if len(yt) < 2:
        yt = [yt[0], yt[0] + 1]
    xlo, xhi, ylo, yhi = xt[0], xt[-1], yt[0], yt[-1]

    def X(x: float) -> float:
        return x0 + width * (x - xlo) / (xhi - xlo)

    def Y(y: float) -> float:
        v = math.log10(y) if log_y else y
        return y0 + height * (1 - (v - ylo) / (yhi - ylo))

    for t in xt:
        el(g, "line", x1=X(t), y1=y0, x2=X(t), y2=y0 + height, stroke=GRIDLINE)
        text(g, X(t), y0 + height + 13, f"{t:g}", text_anchor="middle", font_size=9, fill=AXIS)
    for t in yt:
        yy = y0 + height * (1 - (t - ylo) / (yhi - ylo))
        el(g, "line", x1=x0, y1=yy, x2=x0 + width, y2=yy, stroke=GRIDLINE)
        label = f"1e{t:g}" if log_y else f"{t:g}"
        text(g, x0 - 4, yy + 3.5, label, text_anchor="end", font_size=9, fill=AXIS)
    el(g, "rect", x=x0, y=y0, width=width, height=height, fill="none", stroke=AXIS)
    text(g, x0 + width / 2, y0 + height + 28, xlabel, text_anchor="middle", class_="xlabel",
         fill=TEXT)
    text(g, x0 - 38, y0 + height / 2, ylabel, text_anchor="middle", class_="ylabel", fill=TEXT,
         transform=f"rotate(-90 {num(x0 - 38)} {num(y0 + height / 2)})")
    for i, (label, xs, ys) in enumerate(series):
        color, dash = PALETTE[i % len(PALETTE)], DASHES[(i // len(PALETTE)) % len(DASHES)]
        keep = [(x, y) for x, y in zip(xs, ys, strict=True)
                if math.isfinite(x) and math.isfinite(y) and (y > 0 or not log_y)]
        coords: list[tuple[float, float]] = []
        for j, (x, y) in enumerate(keep):
            if step and j:
                coords.append((X(x), Y(keep[j - 1][1])))
            coords.append((X(x), Y(y)))
        s = el(g, "polyline", class_="series", fill="none", stroke=color, stroke_width=1.6,
               stroke_dasharray=dash or None,
               points=" ".join(f"{num(a)},{num(b)}" for a, b in coords))
        el(s, "title", label)
        ly = y0 + 4 + 14 * i
        el(g, "line", x1=x0 + width + 12, y1=ly, x2=x0 + width + 32, y2=ly, stroke=color,
           stroke_width=2, stroke_dasharray=dash or None)
        text(g, x0 + width + 36, ly + 3.5, label, fill=TEXT, class_="legend")
    longest = max((len(label) for label, _, _ in series), default=0)
    cv.extend(x0 + width + 40 + 6.2 * longest, max(y0 + height + 36, y0 + 14 * len(series)))
    return y0 + height + 36
