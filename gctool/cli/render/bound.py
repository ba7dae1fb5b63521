"""Text of ``gctool bound`` reports of one-shot codes and of (n, k, s)."""

from __future__ import annotations

from typing import Any

from gctool.cli.params import in_cli_terms
from gctool.cli.render.common import escape, stdout_console


def render_bound(r: Any) -> None:
    con = stdout_console()
    con.print(f"[bold]bounds for n={r.n}, k={r.k}, s={r.s}" + (f", m={r.m}" if r.m > 1 else "")
              + "[/]")
    for b in r.bounds:
        mark = {True: "[green]ok[/]  ", False: "[red]FAIL[/]", None: "    "}[b.holds]
        con.print(f"  {mark} {escape(in_cli_terms(b.statement))}  "
                  f"[dim]\\[{escape(b.source)}][/]")
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
    shown = {b.statement for b in r.bounds if b.holds is False}  # the FAIL rows above
    for f in r.findings:
        if f not in shown:
            con.print(f"[bold red]finding:[/] {escape(f)}")
    con.print("[dim]sources: [P] a published result, [D] derived for gctool; 'reference §x' is "
              "a section of 'gctool reference'[/]")


def summary(r: Any) -> str:
    verdict = "meets the bounds" if r.ok else f"FAIL: {r.findings[0] if r.findings else ''}"
    return f"{verdict} (n={r.n}, k={r.k}, s={r.s})"
