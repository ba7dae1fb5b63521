"""Text of ``gctool attack`` reports: the worst case, the threshold and the error curve."""

from __future__ import annotations

import math
from typing import Any

from gctool.cli.render.common import diagnostics_lines, escape, fmt, stdout_console
from gctool.reports import AttackReport


def summary(r: AttackReport) -> str:
    how = "exact" if r.exact else "heuristic"
    if r.mode == "threshold":
        if r.threshold is None:
            text = (f"threshold: none above epsilon {r.epsilon:g}" if r.exact
                    else f"threshold >= {r.threshold_lower} (no witness)")
        else:
            text = f"threshold {r.threshold}, {_tolerates(r)}"
        if r.require is not None:
            text += f"; {_require_label(r)}: {r.require_status}"
        return f"{text} ({how})"
    if r.mode == "curve":
        return f"worst-case error curve for s = 0..{r.s} ({how})"
    return f"worst {r.s} stragglers {r.stragglers}: error {fmt(r.error, 6)} ({how})"


def _require_label(r: AttackReport) -> str:
    tol = getattr(r, "require_tolerance", None)
    if tol is not None:
        return f"tolerates >= {tol} stragglers (threshold >= {r.require})"
    return f"threshold >= {r.require}"


def render_attack(r: AttackReport) -> None:
    con = stdout_console()
    unit = "raw squared error" if r.normalize == "none" else "squared error / k"
    con.print(f"[dim]{escape(r.scheme)}, n={r.n}, k={r.k}, {r.field}; decoder: "
              f"{escape(r.decoder_label or r.decoder)}; {unit}[/]")
    if r.mode == "curve":
        _render_curve(con, r)
    elif r.mode == "threshold":
        _render_threshold(con, r, unit)
    else:
        con.print(f"[bold]worst {r.s} stragglers: {r.stragglers}[/]")
        con.print(f"error {fmt(r.error, 6)} ({unit}, {r.decoder} decoding)")
        if r.upper_bound is not None and not r.exact:
            con.print(f"sandwich: {fmt(r.error, 6)} <= true worst <= {fmt(r.upper_bound, 6)} "
                      f"({escape(r.upper_bound_source)})")
    if r.closed_form is not None:
        cf = r.closed_form
        con.print(f"closed form: {fmt(cf['value'], 6)} [dim]\\[{escape(cf['source'])}][/]"
                  + ("" if cf["agrees"] else "  [bold red]disagrees with the audit[/]"))
    label = "exact" if r.exact else "heuristic (a lower bound on the worst case)"
    if r.mode == "threshold" and not r.exact:
        label = "not proved (the witness gives an upper bound on the threshold)"
    con.print(f"{label}: {r.method} over {r.checked:,} of {r.total:,} sets in "
              f"{r.elapsed_s:.3f}s")
    _render_random(con, r.random)
    for note in r.notes:
        con.print(f"[dim]  {escape(note)}[/]")
    for line in diagnostics_lines(r.diagnostics):
        con.print(line)


def _tolerates(r: AttackReport) -> str:
    """What a threshold with a witness says about tolerance: exact, or the proved sandwich."""
    assert r.threshold is not None
    if r.exact:
        return f"tolerates up to {r.threshold - 1} stragglers"
    return (f"tolerates at most {r.threshold - 1} stragglers (proved: at least "
            f"{max((r.threshold_lower or 1) - 1, 0)})")


def _render_threshold(con: Any, r: AttackReport, unit: str) -> None:
    if r.threshold is None and r.exact:
        con.print(f"threshold: none (no straggler set pushes the error above {r.epsilon:g})")
    elif r.threshold is None:
        con.print(f"threshold: >= {r.threshold_lower} (no witness found)")
    else:
        con.print(f"[bold]threshold: {r.threshold}[/] stragglers push the error above "
                  f"{r.epsilon:g} ({unit}); {_tolerates(r)}")
        con.print(f"witness: stragglers {r.stragglers}, error {fmt(r.error, 6)}")
        if not r.exact:
            con.print(f"sandwich: {r.threshold_lower} <= threshold <= {r.threshold}")
    if r.resolution is not None:
        con.print(f"MILP resolution {r.resolution:g}: sets whose error is below it count as "
                  "decodable")
    if r.require is not None:
        verdict = {"met": "[bold green]met[/]", "below": "[bold red]FAIL: below[/]",
                   "unproven": "[bold red]FAIL: not proved[/]"}[r.require_status or "unproven"]
        con.print(f"{_require_label(r)}: {verdict}")


def _render_curve(con: Any, r: AttackReport) -> None:
    points = r.curve or []
    top = max([p["error"] for p in points
               if p["error"] is not None and math.isfinite(p["error"])] + [1e-300])
    has_mean = any("mean" in p for p in points)
    con.print(f"[bold]worst-case error for s = 0..{r.s}[/]")
    con.print("   s  worst        " + ("mean         " if has_mean else "") + "how")
    for p in points:
        bar = ("#" * int(round(24 * min(max(p["error"], 0) / top, 1.0)))
               if top > 0 and not math.isnan(p["error"]) else "")
        mean = f"{fmt(p.get('mean'), 5):<12} " if has_mean else ""
        how = ("exact" if p["exact"] else "heuristic") + f" ({p['method']})"
        con.print(f"{p['s']:>4}  {fmt(p['error'], 5):<12} {mean}{how:<24} {bar}")


def _render_random(con: Any, rnd: dict[str, Any] | None) -> None:
    if not rnd:
        return
    names = {"uniform": "uniform random s-sets", "iid": "i.i.d. straggling",
             "hetero": "heterogeneous p_i (params.p)"}
    for key, d in rnd.items():
        what = names.get(key, key)
        if key == "iid":
            what += f" p = {d['p']:g}"
        if d["exact"]:
            con.print(f"mean error, {what}: {fmt(d['mean'], 6)} (exact)")
        else:
            lo, hi = d["ci95"]
            con.print(f"mean error, {what}: {fmt(d['mean'], 6)} (Monte Carlo, {d['samples']:,} "
                      f"samples, seed {d['seed']}, 95% CI [{fmt(lo, 5)}, {fmt(hi, 5)}])")
