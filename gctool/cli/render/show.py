"""The terminal view of ``gctool show``: heat map, loads, replication, decoding vector and the
error curve as a sparkline (the picture is computed by :mod:`gctool.viz`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gctool.cli.render.common import escape, fmt, stdout_console
from gctool.viz.curve import Curve, ranges
from gctool.viz.grid import light
from gctool.wording import counted

if TYPE_CHECKING:
    from rich.text import Text


def _ink(color: str) -> str:
    return "black" if light(color) else "white"


def render_picture(pic: Any) -> None:
    """Draw the heat map, loads, replication, decoding and curve on stdout."""
    con = stdout_console()
    code, g = pic.code, pic.grid
    seed = "" if code.seed is None else f", seed {code.seed}"
    pieces = f" (m = {code.m} pieces)" if code.m > 1 else ""
    con.print(f"[bold]{escape(code.scheme)}[/]: n = {code.n} workers x k = {code.k} partitions"
              f"{pieces}, field {escape(code.field.spec)}, designed for s = "
              f"{counted(code.s, 'straggler')}{seed}")
    report = pic.report()
    con.print(f"nnz {report.nnz} ({100 * report.density:.3g}%), load {report.load_min}.."
              f"{report.load_max} (mean {report.load_mean:.3g}), replication "
              f"{report.replication_min}..{report.replication_max}")
    if g.summarised:
        con.print(f"[dim]summarised: {code.n} x {g.columns} entries in {g.shape[0]} x "
                  f"{g.shape[1]} blocks of up to {g.row_step} x {g.col_step}; shade = share of "
                  "nonzero entries; per-worker loads are in --json[/]")
    if code.m > 1:
        con.print(f"[dim]columns are piece-major: column u*{code.k} + j is piece u of "
                  "partition j[/]")
    for line in _heat_lines(pic):
        con.print(line)
    con.print(_legend(g, _cell_width(g)))
    if pic.decoding is not None:
        con.print(_decoding_line(pic.decoding))
    if pic.curve is not None:
        for line in _curve_lines(pic.curve, code.s):
            con.print(line)


def _cell_width(g: Any) -> int:
    """Characters per cell: room for the element (and a space) over GF(q) when it fits."""
    if g.kind == "element":
        digits = len(str(int(g.scale.vmax)))
        if g.shape[1] * (digits + 1) <= 100:
            return digits + 1
    return 2 if g.shape[1] <= 40 else 1


def _cell(g: Any, r: int, c: int, w: int) -> tuple[str, str]:
    """(text, rich style) of one cell."""
    color, glyph = g.colors[r][c], g.glyphs[r][c]
    if color is None:
        return glyph.rjust(w), "dim"
    if g.kind == "element":
        label = g.labels[r][c]
        text = label.rjust(w) if len(label) < w else glyph * w if glyph == "█" else glyph.rjust(w)
        return text, f"bold {_ink(color)} on {color}"
    return glyph * w, color


def _ticks(count: int, step_of: int, w: int) -> str:
    """Column tick labels that never run into each other: right-aligned in their cell when
    every column is labelled, otherwise left-aligned at the cell."""
    width = len(str((count - 1) * step_of)) + 1
    step = next(t for t in (1, 2, 5, 10, 20, 50, 100, 1000) if t * w >= width or t >= count)
    line = [" "] * (count * w + width)
    for c in range(0, count, step):
        label = str(c * step_of)
        at = (c + 1) * w - len(label) if step == 1 and len(label) <= w else c * w
        line[at: at + len(label)] = label
    return "".join(line).rstrip()


def _heat_lines(pic: Any) -> list[Any]:
    from rich.text import Text

    g, d = pic.grid, pic.decoding
    w, (rows, cols) = _cell_width(g), g.shape
    label_w = max(4, len(str(g.n - 1)) + 2)
    loads = pic.code.loads
    lines = [Text(" " * label_w + _ticks(cols, g.col_step, w), style="dim")]
    for r in range(rows):
        ws = g.rows_of(r)
        straggles = d is not None and any(i in d.stragglers for i in ws)
        label = ("✗ " if straggles else "") + str(ws.start)
        text = Text(label.rjust(label_w - 1) + " ", style="")
        if straggles:
            text.stylize("bold red", 0, label_w - 1)
        for c in range(cols):
            cell, style = _cell(g, r, c, w)
            text.append(cell, style=f"dim {style}" if straggles else style)
        load = loads[ws.start] if len(ws) == 1 else float(loads[list(ws)].mean())
        text.append(f"  {fmt(float(load), 3)}", style="cyan")
        if d is not None and len(ws) == 1:
            text.append("  " + _coef(d, ws.start), style="red" if straggles else "magenta")
        lines.append(text)
    lines.append(_replication_line(pic, label_w, w))
    return lines


def _coef(d: Any, i: int) -> str:
    if i in d.stragglers:
        return "straggler"
    vals = d.A[:, i]
    if d.exact:
        return " ".join(str(int(x)) for x in vals)
    return " ".join("0" if abs(x) <= d.zero_tol else _num(x) for x in vals)


def _num(x: Any) -> str:
    import numpy as np

    if np.iscomplexobj(x):
        return f"{x.real:.3g}{x.imag:+.3g}j"
    return f"{float(x):.3g}"


def _replication_line(pic: Any, label_w: int, w: int) -> Text:
    from rich.text import Text

    g, rep = pic.grid, pic.code.replication
    vals = [float(rep[[j % g.k for j in g.cols_of(c)]].mean()) for c in range(g.shape[1])]
    text = Text("rep".rjust(label_w - 1) + " ", style="cyan")
    if all(v == int(v) and len(str(int(v))) <= w for v in vals):
        text.append("".join(str(int(v)).rjust(w) for v in vals), style="cyan")
    else:
        text.append("min " + fmt(min(vals), 3) + ", max " + fmt(max(vals), 3)
                    + (" per block" if g.summarised else " (per partition in --json)"),
                    style="cyan")
    text.append("  <- replication; right column: load" + ("; then a" if pic.decoding else ""),
                style="dim")
    return text


def _legend(g: Any, w: int) -> Text:
    from rich.text import Text

    text = Text("· 0", style="dim")
    if g.kind == "element":
        q = int(g.scale.vmax) + 1
        shown = ("cells show the field element, colour names it" if len(str(q - 1)) < w
                 else "cells show the element in base 36 (a = 10 .. z = 35)" if q <= 36
                 else "colour names the element (exact values: --svg tooltips or --json)")
        return text.append("   " + shown)
    for color, glyph, label in g.legend():
        text.append("   ")
        style = f"bold {_ink(color)} on {color}" if g.kind == "element" else color
        text.append(glyph if g.kind == "element" else glyph * 2, style=style)
        text.append(" " + label)
    if g.kind == "magnitude":
        text.append(f"  ({g.scale.kind} scale)", style="dim")
    return text


def _decoding_line(d: Any) -> str:
    S = ", ".join(str(i) for i in d.stragglers) or "none"
    if d.exact:
        verdict = "[green]decodes exactly[/]" if d.ok else "[red]cannot decode[/]"
        return (f"stragglers {{{S}}}: {verdict} (exact arithmetic; "
                f"{counted(len(d.used), 'worker')} used)")
    verdict = "[green]decodes[/]" if d.ok else f"[red]does not decode[/] (error {d.error:.4g})"
    return (f"stragglers {{{S}}}: {verdict}; residual {d.error ** 0.5:.3g}, condition "
            f"{fmt(d.cond, 3)}, ||a|| {fmt(d.norm, 3)}, {counted(len(d.used), 'worker')} used")


def _curve_lines(curve: Curve, s_design: int) -> list[str]:
    if not curve.points:
        from gctool.limits import CURVE_MAX_WORK

        return ["[dim]error curve not computed: no s with 0 < s < n - 1 fits the budget "
                f"(--max-sets, and about {CURVE_MAX_WORK / 1e9:g} s (estimated, one core) of "
                "least squares)[/]"]
    top = max(p.s for p in curve.points)
    lines = [f"worst-case error by s = 0..{top} (_ decodes, █ nothing recovered): "
             f"[blue]{_sparkline(curve, top)}[/]  (source: {escape(curve.source)})"]
    first = curve.first_failure()
    if first is not None:
        lines.append(f"  first failing s = {first.s} (designed s = {s_design}): error "
                     f"{first.error:.4g}, worst stragglers {_short(first.stragglers)}")
    if curve.skipped:
        lines.append(f"  [dim]not computed (over --max-sets or the work cap): s = "
                     f"{ranges(curve.skipped)}[/]")
    return lines


def _sparkline(curve: Curve, top: int, width: int = 60) -> str:
    """One character per s (per bin of s when there are more than ``width`` values): the
    largest error in the bin, '_' when every computed set decodes, ' ' when none computed."""
    by_s = {p.s: p for p in curve.points}
    bars = "▁▂▃▄▅▆▇█"
    step = -(-(top + 1) // width)
    out = []
    for lo in range(0, top + 1, step):
        pts = [by_s[s] for s in range(lo, min(top + 1, lo + step)) if s in by_s]
        if not pts:
            out.append(" ")
        elif all(curve.decodes[p.s] for p in pts):
            out.append("_")
        else:
            out.append(bars[min(7, int(max(p.error for p in pts) * 8))])
    return "".join(out) + (f" (each character: {step} values of s)" if step > 1 else "")


def _short(S: list[int] | None, limit: int = 12) -> str:
    if S is None:
        return "n/a"
    return str(S) if len(S) <= limit else f"[{', '.join(map(str, S[:limit]))}, ...] ({len(S)})"
