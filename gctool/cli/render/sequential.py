"""Text of the multi-round reports: sequential schedules (sr-sgc, m-sgc), CodedReduce trees and
their bounds (sgc, tree, bcc)."""

from __future__ import annotations

from typing import Any

from gctool.cli.params import in_cli_terms
from gctool.cli.render.common import cell, escape, safe, stdout_console, table, verdict
from gctool.wording import counted


def render_sgc_verify(r: Any) -> None:
    con = stdout_console()
    model = f"(B={r.burst}, W={r.window}, lambda={r.lam})"
    con.print(verdict(r.ok, f"OK: every job meets its deadline under {model}",
                       f"FAIL: a job misses its deadline under {model}")
              + f"  ({safe(r.scheme)}, n={r.n}, delay T={r.delay}, load {r.load:.4g})")
    con.print(escape(r.reason))
    if r.counterexample is not None:
        con.print("straggler pattern (round: workers): " + ", ".join(
            f"{t}: {s}" for t, s in enumerate(r.counterexample["pattern"])))
    label = "exact" if r.exact else "heuristic (finding nothing proves nothing)"
    span = "every horizon" if r.horizon is None else f"{r.horizon} rounds"
    seed = "" if r.seed is None else f", seed {r.seed}"
    con.print(f"{label}: {r.method} over {span}, {r.states:,} states, "
              f"{r.transitions:,} transitions{seed} in {r.elapsed_s:.3f}s")
    if r.component is not None:
        c = r.component
        con.print(f"per-round code: {'tolerates' if c.get('ok') else 'FAILS'} s = {c.get('s')} "
                  f"({'exact' if c.get('exact') else 'not checked'})")


def render_tree_verify(r: Any) -> None:
    con = stdout_console()
    con.print(verdict(r.ok, "OK: every parent recovers its subtree",
                       "FAIL: some parent cannot recover its subtree")
              + f"  (fan-out {r.fanout}, depth {r.depth}, tolerance {r.tolerance})")
    con.print(escape(r.reason))
    for c in r.levels:
        mark = "[green]ok[/]  " if c.ok else "[red]FAIL[/]"
        con.print(f"  {mark} level {c.level}: {counted(c.parents, 'parent')}, any {c.s} of "
                  f"{c.fanout} children may straggle ({c.checked:,}/{c.total:,} sets"
                  + ("" if c.counterexample is None else f", counterexample {c.counterexample}")
                  + ")")
    con.print(f"leaf code = Kronecker product of the levels: {'yes' if r.consistent else 'NO'}; "
              f"any {counted(r.leaf_tolerance, 'leaf straggler')} tolerated; "
              f"{'exact' if r.exact else 'heuristic'} in {r.elapsed_s:.3f}s")


def render_sequential_bound(r: Any) -> None:
    con = stdout_console()
    title = {"sgc": "sequential GC vs plain GC", "tree": "CodedReduce communication",
             "bcc": "expected workers to wait for"}[r.kind]
    con.print(f"[bold]{title}[/] (n={r.n}, "
              + ", ".join(f"{safe(k)}={safe(v)}" for k, v in r.params.items()) + ")")
    keys = [k for k in r.rows[0] if k != "note"]
    t = table(*[escape(_HEADERS.get(k, k)) for k in keys])
    for row in r.rows:
        t.add_row(*[safe(_cell(row.get(k))) for k in keys])
    con.print(t)
    for row in r.rows:
        if row.get("note"):
            con.print(f"  {safe(row['scheme'])}: {escape(row['note'])}")
    for line in r.statements:
        con.print(f"  [dim]{escape(in_cli_terms(line))}[/]")
    for f in r.findings:
        con.print(f"[bold red]finding:[/] {escape(f)}")


def _cell(value: Any) -> str:
    """A cell; an interval [low, high] of floats as ``low-high``."""
    if isinstance(value, list) and value and all(isinstance(x, float) for x in value):
        return "-".join(cell(x) for x in value)
    return cell(value)


_HEADERS = {"time_per_round": "s/round", "time_per_round_ci95": "95% CI",
            "compute_nodes": "workers", "tolerates": "tolerates", "busiest_link_vectors": "link",
            "sent_per_node": "sent", "sequential_steps": "steps",
            "critical_path_vectors": "path", "total_messages": "messages",
            "speedup_vs_gc": "vs gc", "expected_wait": "E[wait]",
            "latency_terms": "latencies"}
