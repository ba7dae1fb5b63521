"""Text rendering of the multi-round reports and of ``gctool simulate`` (stdout).

JSON rendering is ``report.to_dict()``.  Imported lazily by the commands.
"""

from __future__ import annotations

from typing import Any

from rich.markup import escape

from gctool.cli.options import fmt, stdout_console
from gctool.errors import printable


def _safe(value: Any) -> str:
    """A value that may come from a file, safe for the terminal and for rich markup."""
    return escape(printable(value))


def _verdict(ok: bool, good: str, bad: str) -> str:
    return f"[bold green]{good}[/]" if ok else f"[bold red]{bad}[/]"


def render_report(report: Any) -> None:
    kind = type(report).__name__
    {"SequentialVerifyReport": _sgc_verify, "TreeVerifyReport": _tree_verify,
     "SequentialBoundReport": _bound, "SimulationReport": render_simulation}[kind](report)


def _sgc_verify(r: Any) -> None:
    con = stdout_console()
    model = f"(B={r.burst}, W={r.window}, lambda={r.lam})"
    con.print(_verdict(r.ok, f"OK: every job meets its deadline under {model}",
                       f"FAIL: a job misses its deadline under {model}")
              + f"  ({_safe(r.scheme)}, n={r.n}, delay T={r.delay}, load {r.load:.4g})")
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


def _tree_verify(r: Any) -> None:
    con = stdout_console()
    con.print(_verdict(r.ok, "OK: every parent recovers its subtree",
                       "FAIL: some parent cannot recover its subtree")
              + f"  (fan-out {r.fanout}, depth {r.depth}, tolerance {r.tolerance})")
    con.print(escape(r.reason))
    for c in r.levels:
        mark = "[green]ok[/]  " if c.ok else "[red]FAIL[/]"
        con.print(f"  {mark} level {c.level}: {c.parents} parent(s), any {c.s} of {c.fanout} "
                  f"children may straggle ({c.checked:,}/{c.total:,} sets"
                  + ("" if c.counterexample is None else f", counterexample {c.counterexample}")
                  + ")")
    con.print(f"leaf code = Kronecker product of the levels: {'yes' if r.consistent else 'NO'}; "
              f"any {r.leaf_tolerance} leaf stragglers are tolerated; "
              f"{'exact' if r.exact else 'heuristic'} in {r.elapsed_s:.3f}s")


def _bound(r: Any) -> None:
    con = stdout_console()
    from rich.table import Table

    title = {"sgc": "sequential GC vs plain GC", "tree": "CodedReduce communication",
             "bcc": "expected workers to wait for"}[r.kind]
    con.print(f"[bold]{title}[/] (n={r.n}, "
              + ", ".join(f"{_safe(k)}={_safe(v)}" for k, v in r.params.items()) + ")")
    keys = [k for k in r.rows[0] if k != "note"]
    table = Table(show_edge=False, pad_edge=False)
    for k in keys:
        table.add_column(escape(_HEADERS.get(k, k)))
    for row in r.rows:
        table.add_row(*[_safe(_cell(row.get(k))) for k in keys])
    con.print(table)
    for row in r.rows:
        if row.get("note"):
            con.print(f"  {_safe(row['scheme'])}: {escape(row['note'])}")
    for line in r.statements:
        con.print(f"  [dim]{escape(line)}[/]")
    for f in r.findings:
        con.print(f"[bold red]finding:[/] {escape(f)}")


_HEADERS = {"compute_nodes": "workers", "tolerates": "tolerates", "busiest_link_vectors": "link",
            "sent_per_node": "sent", "sequential_steps": "steps",
            "critical_path_vectors": "path", "total_messages": "messages",
            "speedup_vs_gc": "vs gc", "expected_wait": "E[wait]"}


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return fmt(value, 4)
    return str(value)


def _ci(stat: dict[str, Any] | None, digits: int = 3) -> str:
    """``value ±half`` for symmetric intervals, ``value (low-high)`` otherwise."""
    if stat is None or stat.get("value") is None:
        return "-"
    v, lo, hi = stat["value"], stat.get("low"), stat.get("high")
    if lo is None or hi is None:
        return fmt(v, digits)
    if abs((hi - v) - (v - lo)) <= 1e-9 * max(1.0, abs(v)):
        return f"{fmt(v, digits)} ±{fmt(hi - v, 2)}"
    return f"{fmt(v, digits)} ({fmt(lo, digits)}-{fmt(hi, digits)})"


def render_simulation(r: Any) -> None:
    con = stdout_console()
    from rich.table import Table

    rule = (f"authors' protocol, mu = {r.mu:g}" if getattr(r, "mu", None) is not None
            else "gctool's protocol")
    con.print(f"[bold]simulated wall-clock per iteration[/] ({escape(r.delay)}, "
              f"{r.iterations} iterations, seed {r.seed}, {rule}; 95% confidence intervals)")
    table = Table(show_edge=False, pad_edge=False)
    for col in ("scheme", "n", "load", "T", "mean", "p50", "p99", "per job", "speed-up",
                "missed"):
        table.add_column(col, overflow="fold")
    for row in r.rows:
        table.add_row(escape(row["name"]), str(row["n"]), fmt(row["load"], 3),
                      str(row["delay"]), _ci(row["mean"]), _ci(row["p50"]), _ci(row["p99"]),
                      fmt(row["time_per_job"], 3), _ci(row["speedup"]),
                      str(row.get("deadline_misses", 0)))
    con.print(table)
    for row in r.rows:
        if row.get("lost_fraction") is not None and row["kind"] == "hetero":
            expect = row.get("expected_error")
            con.print(f"  {escape(row['name'])}: one-step decoding, mean error ||c - 1||^2/k per "
                      f"round {row['lost_fraction']:.4g}" + (
                          "" if expect is None else f" (design's expectation {expect:.4g})")
                      + f"; exact in {100 * row['exact_fraction']:.1f}% of rounds")
        elif row.get("lost_fraction") is not None:
            con.print(f"  {escape(row['name'])}: exact in {100 * row['exact_fraction']:.1f}% of "
                      f"rounds; mean fraction of partitions lost {row['lost_fraction']:.4g}")
        for lv in row.get("levels") or []:
            fin = lv["finished_mean"]
            con.print(f"  {escape(row['name'])}: level {lv['level']}: {lv['messages']} messages "
                      f"sent, {lv['messages_used_mean']:.1f} used per round, level done at "
                      + ("-" if fin is None else f"{fin:.4g}") + " (mean over its parents)")
        if row.get("worker_p") is not None and len(row["worker_p"]) <= 32:
            con.print(f"  {escape(row['name'])}: per-worker straggling probabilities p_i = "
                      + ", ".join(f"{x:g}" for x in row["worker_p"]))
        if row.get("level_fractions") is not None:
            parts = ", ".join(f"level {lv}: {100 * f:.1f}%" for lv, f in
                              enumerate(row["level_fractions"]) if lv and f)
            con.print(f"  {escape(row['name'])}: decoded at {parts}")
    theory = [(row["name"], row["n"], row["theory"]) for row in r.rows if row.get("theory")]
    for name, n, value in theory:
        con.print(f"  closed-form mean of {escape(name)} (n={n}): {fmt(value, 4)}")
    if r.training:
        sparse = r.training.get("sparsify")
        con.print(f"[bold]training[/] ({escape(r.training['problem'])}, target loss "
                  f"{fmt(r.training['target'], 6)}, {r.training['models']} model(s)"
                  + (f", messages sparsified by {escape(sparse)}" if sparse else "") + ")")
        t = Table(show_edge=False, pad_edge=False)
        cols = ["scheme", "time to target", "jobs", "uploads", "skipped"]
        for col in cols + (["coordinates"] if sparse else []) + ["final loss"]:
            t.add_column(col)
        for row in r.training["rows"]:
            rule = f" ({row['lazy_rule']})" if row.get("lazy_rule") else ""
            cells = [escape(row["name"] + rule), _cell(row["time_to_target"]),
                     _cell(row["jobs_to_target"]), _cell(row["uploads"]),
                     _cell(row["skipped_uploads"])]
            if sparse:
                cells.append(_cell(row.get("coordinates")))
            cells.append("diverged" if row.get("diverged") else _cell(row["final_loss"]))
            t.add_row(*cells)
        con.print(t)
    for note in r.notes:
        con.print(f"  [dim]{escape(note)}[/]")
