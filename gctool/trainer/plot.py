"""``gctool train plot FILE.svg``: the pictures of ``gctool simulate`` (``plot``) for a measured
run (:mod:`gctool.sim.plot`'s charts, :mod:`gctool.viz.svgkit`'s primitives): the empirical
CDF of the time per round of every scheme, their mean (95% interval), median and p99 with the
median ``gctool simulate`` predicts from the recorded trace (a tick), and the loss − loss* against
wall-clock time."""

from __future__ import annotations

import os

from gctool.sim.plot import LEFT, summary_chart
from gctool.trainer.report import TrainReport
from gctool.viz.svgkit import TEXT, Canvas, line_chart, text
from gctool.wording import counted


def write_plot(report: TrainReport, path: str | os.PathLike[str]) -> None:
    """Write the SVG of ``report`` to ``path`` atomically (``"-"``: stdout) and record it in
    ``report.plot``."""
    from gctool._files import atomic_write

    data = render_svg(report)
    atomic_write(path, data)
    report.plot = {"path": os.fspath(path), "bytes": len(data)}


def render_svg(report: TrainReport) -> bytes:
    rows = [r.to_dict() for r in report.rows if r.percentiles]
    cv = Canvas(f"gctool train: {report.delay}")
    text(cv.root, 16, 24, f"gctool train — {report.problem.kind}, {report.delay} "
         f"(x {report.time_scale:g} s), seed {report.seed}, "
         f"{counted(report.cluster.dask_workers, 'Dask worker')}", font_size=13, font_weight="bold",
         fill=TEXT)
    cv.extend(16 + 7.0 * 60, 30)
    if not rows:
        return cv.bytes()
    series = [(r["name"], r["percentiles"], [i / 100 for i in range(101)]) for r in rows]
    cut = max(r["p99"]["value"] for r in rows)
    y = line_chart(cv, LEFT, 64, series, step=True, cls="cdf", x_max=cut,
                   title="measured time per round (empirical CDF per scheme; x axis cut at the "
                         "largest p99)",
                   xlabel="time per round [s]", ylabel="fraction of rounds")
    marks = [r["predicted"]["p50"] if r.get("predicted") else None for r in rows]
    y = summary_chart(cv, rows, y + 30, "s", marks)
    curves = [(r["name"], r["curve"]["time"], r["curve"]["loss_gap"]) for r in rows
              if r["curve"]["time"] and min(r["curve"]["loss_gap"]) > 0]
    if curves:
        line_chart(cv, LEFT, y + 30, curves, log_y=True, cls="training",
                   title=f"training ({report.problem.kind}): loss − loss* against wall-clock "
                         "time", xlabel="wall-clock time [s]", ylabel="loss − loss* (log scale)")
    return cv.bytes()
