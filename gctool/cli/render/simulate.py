"""Text of ``gctool simulate`` reports: the wall-clock table and the training table."""

from __future__ import annotations

from typing import Any

from gctool.cli.params import in_cli_terms
from gctool.cli.render.common import cell, escape, fmt, stdout_console, table
from gctool.limits import REL_SLACK
from gctool.wording import counted


def _ci(stat: dict[str, Any] | None, digits: int = 3) -> str:
    """``value ±half`` for symmetric intervals, ``value (low-high)`` otherwise."""
    if stat is None or stat.get("value") is None:
        return "-"
    v, lo, hi = stat["value"], stat.get("low"), stat.get("high")
    if lo is None or hi is None:
        return fmt(v, digits)
    if abs((hi - v) - (v - lo)) <= REL_SLACK * max(1.0, abs(v)):
        return f"{fmt(v, digits)} ±{fmt(hi - v, 2)}"
    return f"{fmt(v, digits)} ({fmt(lo, digits)}-{fmt(hi, digits)})"


def render_simulation(r: Any) -> None:
    con = stdout_console()
    rule = (f"authors' protocol, mu = {r.mu:g}" if getattr(r, "mu", None) is not None
            else "gctool's protocol")
    con.print(f"[bold]simulated wall-clock per iteration[/] ({escape(r.delay)}, "
              f"{r.iterations} iterations, seed {r.seed}, {rule})")
    con.print(f"  {escape(r.intervals or '95% confidence intervals')}")
    rows = table("scheme", "n", "load", "T", "mean", "p50", "p99", "per job", "speed-up",
                 "missed", fold=True)
    for row in r.rows:
        rows.add_row(escape(row["name"]), str(row["n"]), fmt(row["load"], 3),
                      str(row["delay"]), _ci(row["mean"]), _ci(row["p50"]), _ci(row["p99"]),
                      fmt(row["time_per_job"], 3), _ci(row["speedup"]),
                      str(row.get("deadline_misses", 0)))
    con.print(rows)
    for row in r.rows:
        err = row.get("one_step_error")
        if err is not None:
            expect = row.get("expected_error")
            con.print(f"  {escape(row['name'])}: one-step decoding, error ||c - 1||^2/k per "
                      f"round: mean {_ci(err['mean'], 4)}" + (
                          "" if expect is None else f" (design's expectation {expect:.4g})")
                      + f", p50 {fmt(err['p50']['value'], 4)}, p99 {fmt(err['p99']['value'], 4)}"
                      + f"; exact in {100 * row['exact_fraction']:.1f}% of rounds")
        if row.get("lost_fraction") is not None:
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
                  f"{fmt(r.training['target'], 6)}, {counted(r.training['models'], 'model')}"
                  + (f", messages sparsified by {escape(sparse)}" if sparse else "")
                  + (f", messages and decoding in {r.training['precision']}"
                     if r.training.get("precision") else "") + ")")
        cols = ["scheme", "time to target", "jobs", "uploads", "skipped"]
        t = table(*cols, *(["coordinates"] if sparse else []), "final loss")
        for row in r.training["rows"]:
            rule = f" ({row['lazy_rule']})" if row.get("lazy_rule") else ""
            cells = [escape(row["name"] + rule), cell(row["time_to_target"]),
                     cell(row["jobs_to_target"]), cell(row["uploads"]),
                     cell(row["skipped_uploads"])]
            if sparse:
                cells.append(cell(row.get("coordinates")))
            cells.append("diverged" if row.get("diverged") else cell(row["final_loss"]))
            t.add_row(*cells)
        con.print(t)
    for note in r.notes:
        con.print(f"  [dim]{escape(in_cli_terms(note))}[/]")


def render_sweep(r: Any) -> None:
    """One row per swept value, one column per scheme: its time per job."""
    con = stdout_console()
    con.print(f"[bold]simulated time per job against {escape(r.param)}[/] ({escape(r.delay)}, "
              f"{r.iterations} iterations, seed {r.seed}, {escape(r.protocol)}'s protocol; "
              f"{escape(r.time_unit)})")
    t = table(r.param, *r.columns, fold=True)
    for row in r.rows:
        cells = {x["role"]: x for x in row["results"]}
        t.add_row(f"{row['value']:g}", *(fmt(cells[c]["time_per_job"], 4) if c in cells else "-"
                                         for c in r.columns))
    con.print(t)
    con.print(f"  [dim]{escape(r.intervals)} (per value and scheme: --json)[/]")
    for note in r.notes:
        con.print(f"  [dim]{escape(in_cli_terms(note))}[/]")
