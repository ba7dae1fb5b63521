"""Text rendering of reports (stdout).  JSON rendering is ``report.to_dict()``."""

from __future__ import annotations

import math
from typing import Any

from rich.markup import escape

from gctool.cli.options import fmt, stdout_console
from gctool.reports import AttackReport, BoundReport, Diagnostics, ExportReport, VerifyReport


def _verdict(ok: bool, good: str, bad: str) -> str:
    return f"[bold green]{good}[/]" if ok else f"[bold red]{bad}[/]"


def _diagnostics(d: Diagnostics) -> list[str]:
    if d.max_residual is None and d.min_failing_error is None:
        return []
    lines = [
        f"  worst residual      {fmt(d.max_residual)}",
        f"  worst condition     {fmt(d.max_condition)}"
        + (f"  (stragglers {d.max_condition_stragglers})" if d.max_condition_stragglers else ""),
        f"  largest decoder     {fmt(d.max_decoder_norm)}",
    ]
    if d.min_failing_error is not None:
        lines.append(f"  smallest failing error {fmt(d.min_failing_error)}")
    return lines


def render_verify(r: VerifyReport) -> None:
    """Text rendering of a VerifyReport on stdout."""
    con = stdout_console()
    con.print(f"{_verify_head(r, markup=True)}  ({escape(r.scheme)}, n={r.n}, k={r.k}, "
              f"{r.field})")
    con.print(escape(r.reason))
    if r.counterexample is not None:
        con.print(f"counterexample: stragglers {r.counterexample}")
    label = "exact" if r.exact else "heuristic"
    tol = "" if r.tolerance is None else f", tol {r.tolerance:g}"
    kern = f", {r.kernel} kernel" if r.kernel and r.kernel != "none" else ""
    con.print(f"checked {r.checked:,} of {r.total:,} sets by {r.method} ({label}, "
              f"{r.arithmetic} arithmetic{tol}{kern}, {r.jobs} job(s)) in {r.elapsed_s:.3f}s")
    if r.reduction:
        red = r.reduction
        con.print(f"reduction: {red['kind']}, {red['checked']:,} set(s) stand for "
                  f"{red['represents']:,} (x{red['factor']:g})")
    for note in r.notes:
        con.print(f"note: {escape(note)}")
    d = r.diagnostics
    if d.max_residual is not None or d.min_failing_error is not None:
        def where(S: list[int] | None) -> str:
            return f"  (stragglers {S})" if S else ""

        con.print(f"  worst residual      {fmt(d.max_residual)}{where(d.max_residual_stragglers)}")
        con.print(f"  worst condition     {fmt(d.max_condition)}"
                  f"{where(d.max_condition_stragglers)}"
                  + (f"  \\[proved bound {fmt(d.condition_bound)}]" if d.condition_bound else ""))
        con.print(f"  largest decoder     {fmt(d.max_decoder_norm)}"
                  f"{where(d.max_decoder_norm_stragglers)}")
        if d.min_failing_error is not None:
            con.print(f"  smallest failing error {fmt(d.min_failing_error)}")
    for w in r.warnings:
        con.print(f"[bold yellow]warning:[/] {escape(w)}")
    for g in _gate_failures(r):
        con.print(f"[bold red]gate failed:[/] {escape(g)}")


def _gate_failures(r: Any) -> list[str]:
    gates = getattr(r, "gates", None)
    return list(gates["failures"]) if gates else []


def _verify_head(r: VerifyReport, markup: bool = False) -> str:
    text, style = {
        "ok": (f"OK: tolerates any {r.s} stragglers", "bold green"),
        "inconclusive": (f"NOT CERTIFIED: no counterexample among {r.checked:,} sampled sets",
                         "bold yellow")}.get(
        r.verdict, (f"FAIL: does not tolerate {r.s} stragglers", "bold red"))
    return f"[{style}]{text}[/]" if markup else text


def summary(r: Any) -> str:
    """One plain line describing a report (the per-file line of a run over several files)."""
    kind = type(r).__name__
    if kind == "VerifyReport":
        gates = _gate_failures(r)
        extra = f"; gate failed: {gates[0]}" if gates else ""
        return f"{_verify_head(r)} ({r.scheme}, n={r.n}, k={r.k}, {r.field}){extra}"
    if kind == "AttackReport":
        return _attack_summary(r)
    if kind == "BoundReport":
        verdict = "meets the bounds" if r.ok else f"FAIL: {r.findings[0] if r.findings else ''}"
        return f"{verdict} (n={r.n}, k={r.k}, s={r.s})"
    head = "OK" if getattr(r, "ok", True) else "FAIL"
    reason = str(getattr(r, "reason", "") or "; ".join(getattr(r, "findings", [])))
    return f"{head}: {reason}" if reason else head


def _attack_summary(r: AttackReport) -> str:
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
    for line in _diagnostics(r.diagnostics):
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


def render_bound(r: BoundReport) -> None:
    con = stdout_console()
    con.print(f"[bold]bounds for n={r.n}, k={r.k}, s={r.s}" + (f", m={r.m}" if r.m > 1 else "")
              + "[/]")
    for b in r.bounds:
        mark = {True: "[green]ok[/]  ", False: "[red]FAIL[/]", None: "    "}[b.holds]
        con.print(f"  {mark} {escape(b.statement)}  [dim]\\[{escape(b.source)}][/]")
    if r.code is not None:
        c = r.code
        con.print(f"code: loads min {c['load_min']} / max {c['load_max']} / mean "
                  f"{c['load_mean']:.3g}; replication min {c['replication_min']} / max "
                  f"{c['replication_max']}; rank {c['rank']}")
        lower = next(b.value for b in r.bounds if b.name == "max_load")
        if r.meets_bound:
            con.print(f"meets the load bound (max load {c['load_max']} = {lower})")
        elif c["load_max"] > lower:
            con.print(f"above the load bound (max load {c['load_max']} > {lower})")
        else:
            con.print(f"below the load bound (max load {c['load_max']} < {lower}): "
                      f"cannot tolerate s = {r.s}")
    for f in r.findings:
        con.print(f"[bold red]finding:[/] {escape(f)}")
    con.print("[dim]sources: [P] a published result, [D] derived for gctool; 'reference §x' is "
              "a section of 'gctool reference'[/]")


def render_bound_any(report: Any) -> None:
    """A bound report of a one-shot code, or of a multi-round (sgc/tree/bcc) file."""
    if isinstance(report, BoundReport):
        render_bound(report)
    else:
        from gctool.cli.render_sequential import render_report

        render_report(report)


def render_export(r: ExportReport) -> None:
    """Status of an export on stderr (the product is the file): what was written, any note,
    and a finding (not silenced by --quiet)."""
    from gctool.cli.output import status

    extra = f", {r.patterns:,} decoding patterns" if r.patterns else ""
    if r.decoder:
        extra += f", {r.decoder} decoder"
    status(f"wrote {r.path} ({r.format}, {r.bytes:,} bytes, n={r.n}, k={r.k}, s={r.s}{extra})")
    if r.note:
        status(f"note: {r.note}")
    if r.all_decodable is False:
        import click

        click.echo("gctool: finding: some straggler patterns are not decodable (see "
                   "'decodable' in the export)", err=True)
