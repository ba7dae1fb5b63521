"""``gctool simulate --plot FILE.svg``: one row per scheme, standard library only.

Each row shows the wall-clock per iteration: a thin line from the median (p50, circle) to the
99th percentile (p99, diamond) and a bar for the mean with its 95% confidence interval as a
whisker.  Linear time axis from 0 to the largest p99.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

from gctool.sim.run import SimulationReport

ROW, LEFT, WIDTH, TOP = 22, 230, 460, 46
BAR, LINE, TEXT = "#4263eb", "#868e96", "#212529"


def _el(parent: ET.Element, tag: str, text: str | None = None, **attrs: Any) -> ET.Element:
    e = ET.SubElement(parent, tag, {
        k.rstrip("_").replace("_", "-"): f"{v:.2f}" if isinstance(v, float) else str(v)
        for k, v in attrs.items()})
    if text is not None:
        e.text = text
    return e


def render_svg(report: SimulationReport) -> bytes:
    rows = report.rows
    top = max([r["p99"]["value"] for r in rows] + [r["mean"]["high"] or 0.0 for r in rows]) or 1.0
    height = TOP + ROW * len(rows) + 40
    svg = ET.Element("svg", {"xmlns": "http://www.w3.org/2000/svg",
                             "width": str(LEFT + WIDTH + 40), "height": str(height),
                             "font-family": "sans-serif", "font-size": "11"})
    _el(svg, "text", f"wall-clock per iteration — {report.delay}, {report.iterations} "
        f"iterations, seed {report.seed}", x=10, y=18, font_size="13", fill=TEXT)
    _el(svg, "text", "bar: mean ±95% CI   line: p50 (circle) to p99 (diamond)", x=10, y=34,
        fill=LINE)

    def x(t: float) -> float:
        return LEFT + WIDTH * max(0.0, t) / top

    for i, r in enumerate(rows):
        y = TOP + ROW * i + ROW / 2
        g = _el(svg, "g", class_="scheme")
        _el(g, "title", f"{r['name']}: mean {r['mean']['value']:.4g}, p50 "
            f"{r['p50']['value']:.4g}, p99 {r['p99']['value']:.4g}")
        _el(g, "text", f"{r['name']} (n={r['n']})", x=LEFT - 8, y=y + 4, text_anchor="end",
            fill=TEXT)
        _el(g, "rect", x=float(LEFT), y=y - 6, width=x(r["mean"]["value"]) - LEFT, height=12.0,
            fill=BAR, fill_opacity="0.75")
        lo, hi = r["mean"]["low"], r["mean"]["high"]
        if lo is not None and hi is not None:
            _el(g, "line", x1=x(lo), x2=x(hi), y1=y, y2=y, stroke=TEXT, stroke_width="1.5")
        p50, p99 = x(r["p50"]["value"]), x(r["p99"]["value"])
        _el(g, "line", x1=p50, x2=p99, y1=y + 8, y2=y + 8, stroke=LINE)
        _el(g, "circle", cx=p50, cy=y + 8, r=2.5, fill=LINE)
        _el(g, "path", d=f"M{p99:.2f},{y + 4:.2f} l4,4 l-4,4 l-4,-4 z", fill=LINE)
    base = TOP + ROW * len(rows) + 6
    _el(svg, "line", x1=float(LEFT), x2=float(LEFT + WIDTH), y1=float(base), y2=float(base),
        stroke=TEXT)
    for k in range(6):
        t = top * k / 5
        _el(svg, "text", f"{t:.3g}", x=x(t), y=float(base + 16), text_anchor="middle", fill=TEXT)
    return ET.tostring(svg, encoding="utf-8", xml_declaration=True) + b"\n"
