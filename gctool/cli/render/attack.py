"""Text of ``gctool attack`` reports: the worst case (:class:`~gctool.reports.WorstReport`), the
threshold (:class:`~gctool.reports.ThresholdReport`) and the error curve
(:class:`~gctool.reports.CurveReport`).  Each is framed the same way: a line naming the code,
the decoder and the unit; the mode's own lines; how it was found (exact or heuristic); the
random-set means, notes and diagnostics."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from gctool.cli.params import in_cli_terms
from gctool.cli.render.common import (
    diagnostics_lines,
    escape,
    fmt,
    precision_lines,
    stdout_console,
    table,
)
from gctool.reports import (
    AttackReport,
    CurveReport,
    RandomMeans,
    ThresholdReport,
    WorstPoint,
    WorstReport,
)
from gctool.wording import counted, noun


def render_worst(r: WorstReport) -> None:
    def body(con: Any, unit: str) -> None:
        con.print(f"[bold]worst {counted(r.s, 'straggler')}: {r.stragglers}[/]")
        con.print(f"error {fmt(r.error, 6)} ({unit}, {r.decoder} decoding)")
        if r.upper_bound is not None and not r.exact:
            con.print(f"sandwich: {fmt(r.error, 6)} <= true worst <= {fmt(r.upper_bound, 6)} "
                      f"({escape(r.upper_bound_source)})")
        if r.closed_form is not None:
            cf = r.closed_form
            con.print(f"closed form: {fmt(cf.value, 6)} [dim]\\[{escape(cf.source)}][/]"
                      + ("" if cf.agrees else "  [bold red]disagrees with the audit[/]"))
        for line in precision_lines(r.precision):
            con.print(line)
        if r.precision is not None and not r.precision.ok:
            con.print(f"[bold red]FAIL:[/] {escape(r.precision.reason)}")

    _frame(r, body, "heuristic (a lower bound on the worst case)", r.random)


def render_threshold(r: ThresholdReport) -> None:
    def body(con: Any, unit: str) -> None:
        if r.threshold is None and r.exact:
            con.print(f"threshold: none (no straggler set pushes the error above "
                      f"{r.epsilon:g})")
        elif r.threshold is None:
            con.print(f"threshold: >= {r.threshold_lower} (no witness found)")
        else:
            push = noun(r.threshold, "straggler pushes", "stragglers push")
            con.print(f"[bold]threshold: {r.threshold}[/] {push} the error above "
                      f"{r.epsilon:g} ({unit}); {_tolerates(r)}")
            con.print(f"witness: stragglers {r.stragglers}, error {fmt(r.error, 6)}")
            if not r.exact:
                con.print(f"sandwich: {r.threshold_lower} <= threshold <= {r.threshold}")
        if r.resolution is not None:
            con.print(f"MILP resolution {r.resolution:g}: sets whose error is below it count "
                      "as decodable")
        if r.require is not None:
            verdict = {"met": "[bold green]met[/]", "below": "[bold red]FAIL: below[/]",
                       "unproven": "[bold red]FAIL: not proved[/]"}[
                r.require_status or "unproven"]
            con.print(f"{_require_label(r)}: {verdict}")

    _frame(r, body, "not proved (no witness found)" if r.threshold is None else
           "not proved (the witness gives an upper bound on the threshold)", None)


def render_curve(r: CurveReport) -> None:
    def body(con: Any, unit: str) -> None:
        points = r.curve
        top = max([p.error for p in points if math.isfinite(p.error)] + [1e-300])
        has_mean = any(p.mean is not None for p in points)
        con.print(f"[bold]worst-case error for s = 0..{r.s}[/]")
        t = table("s", "worst", *(["mean"] if has_mean else []), "how", "")
        for p in points:
            bar = ("#" * int(round(24 * min(max(p.error, 0) / top, 1.0)))
                   if top > 0 and not math.isnan(p.error) else "")
            how = ("exact" if p.exact else "heuristic") + f" ({p.method})"
            t.add_row(str(p.s), fmt(p.error, 5), *([_mean(p)] if has_mean else []), how, bar)
        con.print(t)
        if any(p.mean is not None and not p.mean_exact for p in points):
            con.print(f"mean: over every s-set (exact), or {MONTE_CARLO} a Monte-Carlo estimate "
                      f"over random s-sets (seed {r.seed})")

    _frame(r, body, _curve_label(r), r.random)


def _curve_label(r: CurveReport) -> str:
    """What a curve that is not exact is: heuristic points, or stopped by the budget (the
    note on its missing points gives the refusal, which names the budget to raise)."""
    heuristic = "heuristic (a lower bound on the worst case)"
    if r.stopped_at is None:
        return heuristic
    stop = f"[bold]stopped by the budget at s = {r.stopped_at}[/] (no point from there on"
    if all(p.exact for p in r.curve):
        return f"{stop}; the points before it are exact)"
    return f"{stop}; a heuristic point is a lower bound on the worst case)"


#: how a curve's table marks a mean that is a Monte-Carlo estimate, not exact
MONTE_CARLO = "(MC)"


def _mean(p: WorstPoint) -> str:
    """A curve point's mean over random s-sets, marked when it is a Monte-Carlo estimate."""
    if p.mean is None:
        return ""
    return fmt(p.mean, 5) + ("" if p.mean_exact else f" {MONTE_CARLO}")


def _frame(r: AttackReport, body: Callable[[Any, str], None], heuristic: str,
           random: RandomMeans | None) -> None:
    con = stdout_console()
    unit = "raw squared error" if r.normalize == "none" else "squared error / k"
    con.print(f"[dim]{escape(r.scheme)}, n={r.n}, k={r.k}, {r.field}; decoder: "
              f"{escape(r.decoder_label or r.decoder)}; {unit}[/]")
    body(con, unit)
    con.print(f"{'exact' if r.exact else heuristic}: {r.method} {_coverage(r)} in "
              f"{r.elapsed_s:.3f}s")
    _render_random(con, random)
    for note in r.notes:
        con.print(f"[dim]  {escape(in_cli_terms(note))}[/]")
    for line in diagnostics_lines(r.diagnostics):
        con.print(line)


def _coverage(r: AttackReport) -> str:
    """What ``checked`` counted (:data:`gctool.audit.attack.options.CHECKED`), of the ``total``
    straggler sets: a curve's count is its points' decoder evaluations, which are the sets
    evaluated when every point is an enumeration's."""
    from gctool.audit.attack.options import CHECKED

    methods = [p.method for p in r.curve] if isinstance(r, CurveReport) else [r.method]
    units = {CHECKED[m] for m in methods}
    if units == {"set"}:
        return f"over {r.checked:,} of {counted(r.total, 'set')}"
    return f"with {counted(r.checked, 'decoder evaluation')} ({counted(r.total, 'set')} in all)"


def _render_random(con: Any, rnd: RandomMeans | None) -> None:
    if rnd is None:
        return
    names = {"uniform": "uniform random s-sets", "iid": "i.i.d. straggling",
             "hetero": "heterogeneous p_i (params.p)"}
    for key, d in rnd.items():
        what = names.get(key, key)
        if key == "iid":
            what += f" p = {d.p:g}"
        if d.exact:
            con.print(f"mean error, {what}: {fmt(d.mean, 6)} (exact)")
        else:
            lo, hi = d.ci95 or (None, None)
            con.print(f"mean error, {what}: {fmt(d.mean, 6)} (Monte Carlo, {d.samples:,} "
                      f"samples, seed {d.seed}, 95% CI [{fmt(lo, 5)}, {fmt(hi, 5)}])")


def _tolerates(r: ThresholdReport) -> str:
    """What a threshold with a witness says about tolerance: exact, or the proved sandwich."""
    assert r.threshold is not None
    if r.threshold == 0:  # (proved: the empty witness)
        return (f"tolerates no stragglers: the error is above {r.epsilon:g} with every worker "
                "responding")
    if r.exact:
        return f"tolerates up to {counted(r.threshold - 1, 'straggler')}"
    return (f"tolerates at most {counted(r.threshold - 1, 'straggler')} (proved: at least "
            f"{max((r.threshold_lower or 1) - 1, 0)})")


def _require_label(r: ThresholdReport) -> str:
    if r.require_tolerance is not None:
        return (f"tolerates >= {counted(r.require_tolerance, 'straggler')} (threshold >= "
                f"{r.require})")
    return f"threshold >= {r.require}"


def summary_worst(r: WorstReport) -> str:
    return f"worst {counted(r.s, 'straggler')} {r.stragglers}: error {fmt(r.error, 6)} ({_how(r)})"


def summary_threshold(r: ThresholdReport) -> str:
    if r.threshold is None:
        text = (f"threshold: none above epsilon {r.epsilon:g}" if r.exact
                else f"threshold >= {r.threshold_lower} (no witness)")
    else:
        text = f"threshold {r.threshold}, {_tolerates(r)}"
    if r.require is not None:
        text += f"; {_require_label(r)}: {r.require_status}"
    return f"{text} ({_how(r)})"


def summary_curve(r: CurveReport) -> str:
    stop = "" if r.stopped_at is None else f"; stopped by the budget at s = {r.stopped_at}"
    return f"worst-case error curve for s = 0..{r.s} ({_how(r)}{stop})"


def _how(r: AttackReport) -> str:
    return "exact" if r.exact else "heuristic"
