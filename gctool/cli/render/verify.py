"""Text of ``gctool verify`` reports: a code's certificate (:class:`~gctool.reports.VerifyReport`)
and partial stragglers of a multi-message code (:class:`~gctool.audit.partial.PartialReport`)."""

from __future__ import annotations

from typing import Any

from gctool.cli.params import in_cli_terms
from gctool.cli.render.common import (
    escape,
    fmt,
    gate_failures,
    precision_lines,
    stdout_console,
)
from gctool.reports import LOWER_BOUND
from gctool.wording import counted, noun


def render_verify(r: Any) -> None:
    con = stdout_console()
    con.print(f"{head(r, markup=True)}  ({escape(r.scheme)}, n={r.n}, k={r.k}, {r.field})")
    con.print(escape(r.reason))
    if r.counterexample is not None:
        con.print(f"counterexample: stragglers {r.counterexample}")
    label = "exact" if r.exact else "heuristic"
    tol = "" if r.tolerance is None else f", tol {r.tolerance:g}"
    kern = f", {r.kernel} kernel" if r.kernel and r.kernel != "none" else ""
    seed = f", seed {r.sample['seed']}" if getattr(r, "sample", None) else ""  # to redo it
    con.print(f"checked {r.checked:,} of {counted(r.total, 'set')} by {r.method} ({label}, "
              f"{r.arithmetic} arithmetic{tol}{kern}, {counted(r.jobs, 'job')}{seed}) in "
              f"{r.elapsed_s:.3f}s")
    if r.reduction:
        red = r.reduction
        con.print(f"reduction: {red['kind']}, {counted(red['checked'], 'set')} "
                  f"{noun(red['checked'], 'stands', 'stand')} for "
                  f"{red['represents']:,} (x{red['factor']:g})")
    for note in r.notes:
        con.print(f"note: {escape(in_cli_terms(note))}")
    d = r.diagnostics
    if d.max_residual is not None or d.min_failing_error is not None:
        def where(S: list[int] | None) -> str:
            return f"  (stragglers {S})" if S else ""

        def kind(k: str | None) -> str:
            return "  (lower bound)" if k == LOWER_BOUND else ""

        con.print(f"  worst residual      {fmt(d.max_residual)}{kind(d.max_residual_kind)}"
                  f"{where(d.max_residual_stragglers)}")
        con.print(f"  worst condition     {fmt(d.max_condition)}{kind(d.max_condition_kind)}"
                  f"{where(d.max_condition_stragglers)}"
                  + (f"  \\[proved bound {fmt(d.condition_bound)}]" if d.condition_bound else ""))
        con.print(f"  largest decoder     {fmt(d.max_decoder_norm)}"
                  f"{where(d.max_decoder_norm_stragglers)}")
        if d.min_failing_error is not None:
            con.print(f"  smallest failing error {fmt(d.min_failing_error)}")
    for line in precision_lines(getattr(r, "precision", None)):
        con.print(line)
    for w in r.warnings:
        con.print(f"[bold yellow]warning:[/] {escape(w)}")
    for g in gate_failures(r):
        con.print(f"[bold red]gate failed:[/] {escape(g)}")


def head(r: Any, markup: bool = False) -> str:
    """The verdict line of a VerifyReport (ok, fail, not certified by a sample, or a failed
    gate: the line never begins with OK when the report is not ok)."""
    text, style = {
        "ok": (f"OK: tolerates any {counted(r.s, 'straggler')}", "bold green"),
        "inconclusive": (f"NOT CERTIFIED: no counterexample among {r.checked:,} sampled sets",
                         "bold yellow")}.get(
        r.verdict, (f"FAIL: does not tolerate {counted(r.s, 'straggler')}", "bold red"))
    if gate_failures(r) and r.verdict != "fail":
        text, style = f"FAIL (gate): {text.split(': ', 1)[1]}", "bold red"
    return f"[{style}]{text}[/]" if markup else text


def summary(r: Any) -> str:
    gates = gate_failures(r)
    extra = f"; gate failed: {gates[0]}" if gates else ""
    return f"{head(r)} ({r.scheme}, n={r.n}, k={r.k}, {r.field}){extra}"


def render_partial(r: Any) -> None:
    con = stdout_console()
    first = (f"[bold green]OK: decodes with up to {counted(r.missing, 'partition')} of missing "
             "work[/]"
             if r.ok else f"[bold red]FAIL: {counted(r.counterexample_missing, 'partition')} of "
                          "missing work can stop decoding[/]")
    con.print(f"{first}  ({escape(r.scheme)}, n={r.n}, k={r.k}, {r.field}, "
              f"{counted(r.messages, 'message')}, {counted(r.work, 'partition')} per round)")
    con.print(escape(r.reason))
    if r.counterexample is not None:
        con.print(f"counterexample: partitions finished per worker {r.counterexample}")
    if r.breaking_work is not None:
        con.print(f"least missing work that breaks decoding: {r.breaking_work}")
    checked = "" if r.method == "certificate" else f" over {r.checked:,} minimal profiles"
    con.print(f"{'exact' if r.exact else 'heuristic'}: {r.method}{checked}, arithmetic: "
              f"{r.arithmetic}, in {r.elapsed_s:.3f}s")
    for note in r.notes:
        con.print(f"note: {escape(in_cli_terms(note))}")
