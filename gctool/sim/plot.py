"""``gctool simulate plot FILE.svg`` (``gctool.simulate(..., plot=PATH)``): pictures of a
simulation (one SVG, no plotting library).

Drawn with the shared primitives of :mod:`gctool.viz.svgkit`:

1. **Runtime distributions** – the empirical CDF of the time per round of every scheme
   (x: time per round in seconds for traces, in units of one worker computing a whole job for
   the synthetic models; y: fraction of rounds at most that long), from each row's
   ``percentiles``; the x axis ends at the largest 99th percentile.
2. **Summary** – per scheme, the mean with its 95% interval, the median and the 99th
   percentile (one ``<g class="scheme">`` per scheme).
3. With ``train``, **training curves** – loss − loss* (mean over the concurrently trained
   models, logarithmic axis) against the wall clock, one curve per scheme.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from gctool.viz.svgkit import AXIS, TEXT, Canvas, el, line_chart, nice_ticks, text
from gctool.wording import counted

if TYPE_CHECKING:
    from gctool.sim.run import SimulationReport

BAR = "#4263eb"
MARK = "#e8590c"
LEFT = 90.0


def write_plot(report: SimulationReport, path: str | os.PathLike[str]) -> None:
    """Write the SVG of ``report`` to ``path`` atomically (``"-"``: stdout) and record it in
    ``report.plot`` (``gctool.simulate(..., plot=path)``)."""
    from gctool._files import atomic_write

    data = render_svg(report)
    atomic_write(path, data)
    report.plot = {"path": os.fspath(path), "bytes": len(data)}


def render_svg(report: SimulationReport) -> bytes:
    unit = report.time_unit
    rule = (f"authors' protocol, mu = {report.mu:g}" if report.mu is not None
            else "gctool's protocol")
    cv = Canvas(f"gctool simulate: {report.delay}")
    text(cv.root, 16, 24, f"gctool simulate — {report.delay}, {report.iterations} rounds, "
         f"seed {report.seed}, {rule}", font_size=13, font_weight="bold", fill=TEXT)
    cv.extend(16 + 7.0 * 60, 30)
    series = [(r["name"], r["percentiles"], [i / 100 for i in range(101)])
              for r in report.rows]
    cut = max(r["p99"]["value"] for r in report.rows)
    y = line_chart(cv, LEFT, 64, series, step=True, cls="cdf", x_max=cut,
                   title="runtime distribution (empirical CDF per scheme; x axis cut at the "
                         "largest p99)",
                   xlabel=f"time per round [{unit}]", ylabel="fraction of rounds")
    y = summary_chart(cv, report.rows, y + 30, unit)
    if report.training:
        tr = report.training
        curves = [(r["name"], r["curve"]["time"], r["curve"]["loss_gap"])
                  for r in tr["rows"] if r.get("curve") and r["curve"]["time"]]
        if curves:
            line_chart(cv, LEFT, y + 30, curves, log_y=True, cls="training",
                       title=f"training ({tr['problem']}, {counted(tr['models'], 'model')}): "
                             "loss − loss* against wall-clock time",
                       xlabel=f"wall-clock time [{unit}]", ylabel="loss − loss* (log scale)")
    return cv.bytes()


def summary_chart(cv: Canvas, rows: list[dict[str, Any]], y0: float, unit: str,
                  marks: list[float | None] | None = None) -> float:
    """Per row (a dict with ``name``, ``n`` and the ``mean``/``p50``/``p99`` statistics): the
    mean with its interval (bar), the median (circle) to the p99 (diamond), and where
    ``marks[i]`` is given a vertical tick at that value (``gctool train``: the median
    ``simulate`` predicts); the y coordinate below the chart."""
    row_h, width = 22.0, 460.0
    text(cv.root, LEFT, y0 - 10, "mean ±95% CI (bar), median (circle) to p99 (diamond)",
         font_weight="bold", fill=TEXT)
    top = max([r["p99"]["value"] for r in rows] + [r["mean"]["high"] or 0.0 for r in rows])
    ticks = nice_ticks(0.0, top or 1.0)

    def x(t: float) -> float:
        return LEFT + width * max(0.0, t) / ticks[-1]

    for i, r in enumerate(rows):
        y = y0 + row_h * i + row_h / 2
        g = cv.group("scheme")
        el(g, "title", f"{r['name']}: mean {r['mean']['value']:.4g}, p50 "
           f"{r['p50']['value']:.4g}, p99 {r['p99']['value']:.4g} {unit}")
        text(g, LEFT + width + 10, y + 4, f"{r['name']} (n={r['n']})", fill=TEXT)
        el(g, "rect", x=LEFT, y=y - 6, width=x(r["mean"]["value"]) - LEFT, height=12.0,
           fill=BAR, fill_opacity="0.75")
        lo, hi = r["mean"]["low"], r["mean"]["high"]
        if lo is not None and hi is not None:
            el(g, "line", x1=x(lo), x2=x(hi), y1=y, y2=y, stroke=TEXT, stroke_width="1.5")
        p50, p99 = x(r["p50"]["value"]), x(r["p99"]["value"])
        el(g, "line", x1=p50, x2=p99, y1=y + 8, y2=y + 8, stroke=AXIS)
        el(g, "circle", cx=p50, cy=y + 8, r=2.5, fill=AXIS)
        el(g, "path", d=f"M{p99:.2f},{y + 4:.2f} l4,4 l-4,4 l-4,-4 z", fill=AXIS)
        mark = marks[i] if marks is not None else None
        if mark is not None:
            el(g, "line", x1=x(mark), x2=x(mark), y1=y - 9, y2=y + 9, stroke=MARK,
               stroke_width="2")
    base = y0 + row_h * len(rows) + 6
    el(cv.root, "line", x1=LEFT, x2=LEFT + width, y1=base, y2=base, stroke=TEXT)
    for t in ticks:
        text(cv.root, x(t), base + 14, f"{t:g}", text_anchor="middle", font_size=9, fill=AXIS)
    text(cv.root, LEFT + width / 2, base + 30, f"time per round [{unit}]", text_anchor="middle",
         fill=TEXT)
    longest = max(len(r["name"]) for r in rows) + 8
    cv.extend(LEFT + width + 16 + 6.2 * longest, base + 36)
    return base + 36
