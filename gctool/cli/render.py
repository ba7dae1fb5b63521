"""Text rendering of reports (stdout).  JSON rendering is ``report.to_dict()``."""

from __future__ import annotations

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
    con = stdout_console()
    head = _verdict(r.ok, f"OK: tolerates any {r.s} stragglers",
                    f"FAIL: does not tolerate {r.s} stragglers")
    con.print(f"{head}  ({r.scheme}, n={r.n}, k={r.k}, {r.field})")
    con.print(escape(r.reason))
    if r.counterexample is not None:
        con.print(f"counterexample: stragglers {r.counterexample}")
    label = "exact" if r.exact else "heuristic"
    tol = "" if r.tolerance is None else f", tol {r.tolerance:g}"
    con.print(f"checked {r.checked:,} of {r.total:,} sets by {r.method} "
              f"({label}, {r.arithmetic} arithmetic{tol}) in {r.elapsed_s:.3f}s")
    for line in _diagnostics(r.diagnostics):
        con.print(line)


def render_attack(r: AttackReport) -> None:
    con = stdout_console()
    unit = "raw squared error" if r.normalize == "none" else "squared error / k"
    if r.mode == "threshold":
        if r.threshold is None:
            con.print(f"threshold: none (no straggler set pushes the error above {r.epsilon:g})")
        else:
            con.print(f"[bold]threshold: {r.threshold}[/] stragglers push the error above "
                      f"{r.epsilon:g} ({unit})")
            con.print(f"witness: stragglers {r.stragglers}, error {fmt(r.error, 6)}")
    else:
        con.print(f"[bold]worst {r.s} stragglers: {r.stragglers}[/]")
        con.print(f"error {fmt(r.error, 6)} ({unit}, {r.decoder} decoding)")
    label = "exact" if r.exact else "heuristic (a lower bound on the worst case)"
    con.print(f"{label}: {r.method} over {r.checked:,} of {r.total:,} sets in {r.elapsed_s:.3f}s")
    for line in _diagnostics(r.diagnostics):
        con.print(line)


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


def render_export(r: ExportReport) -> None:
    con = stdout_console()
    extra = f", {r.patterns:,} decoding patterns" if r.patterns else ""
    con.print(f"wrote {r.path} ({r.format}, {r.bytes:,} bytes, n={r.n}, k={r.k}, s={r.s}{extra})")
    if r.all_decodable is False:
        con.print("[bold red]finding:[/] some straggler patterns are not decodable "
                  "(see 'decodable' in the export)")
