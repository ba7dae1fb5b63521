"""Text of ``gctool train`` reports: the cluster and its overhead, one row per scheme
(measured time per round next to ``gctool simulate``'s prediction), the --check errors and the
workers lost."""

from __future__ import annotations

from typing import Any

from gctool.cli.render.common import escape, fmt, stdout_console, table
from gctool.wording import counted


def _ms(stat: dict[str, Any] | float | None) -> str:
    """Seconds as milliseconds, with the interval of a statistic when it has one."""
    if isinstance(stat, dict):
        v, lo, hi = stat.get("value"), stat.get("low"), stat.get("high")
        if v is None:
            return "-"
        text = f"{1e3 * v:.3g}"
        return text if lo is None or hi is None else f"{text} ({1e3 * lo:.3g}-{1e3 * hi:.3g})"
    return "-" if stat is None else f"{1e3 * stat:.3g}"


def _members(groups: list[list[int]]) -> str:
    return " | ".join(f"{g[0]}-{g[-1]}" if len(g) > 1 else str(g[0]) for g in groups)


def render_train(r: Any) -> None:
    con = stdout_console()
    p = r.problem
    data = escape(p.data) if p.data else "synthetic"
    con.print(f"[bold]coded gradient descent on a Dask cluster[/] ({p.kind}, {data}, "
              f"{p.samples} samples x {p.features} features, {p.parameters} parameters; delay "
              f"{escape(r.delay)} x "
              f"{r.time_scale:g} s; seed {r.seed})")
    c = r.cluster
    where = escape(c.scheduler) if c.scheduler else "a LocalCluster on 127.0.0.1"
    con.print(f"cluster: {where}, {counted(c.dask_workers, 'Dask worker')}; logical workers per "
              f"resident task: {_members(c.groups)}")
    o = r.overhead
    if o is not None:
        con.print(f"cluster overhead per round (n={o.n}, {o.rounds} rounds, no delay, no "
                  f"computing): median {_ms(o.p50)} ms, mean {_ms(o.mean)} ms, p99 "
                  f"{_ms(o.p99['value'])} ms (send {_ms(o.send_p50)}, wait "
                  f"{_ms(o.wait_p50)}, decode and step {_ms(o.step_p50)} ms)")
    con.print(f"target loss {fmt(p.target, 6)} (loss* {fmt(p.loss_star, 6)}, start "
              f"{fmt(p.initial_loss, 6)}, gap {p.gap:g})")
    t = table("scheme", "n", "load", "rounds", "to target", "time to target s",
              "per round ms: mean", "p50", "p99", "predicted p50", "exact", fold=True)
    for row in r.rows:
        pred = row.predicted
        t.add_row(escape(row.name), str(row.n), fmt(row.load, 3), str(row.rounds),
                  str(row.rounds_to_target) if row.reached else "not reached",
                  fmt(row.time_to_target, 4) if row.time_to_target is not None else "-",
                  _ms(row.mean), _ms(row.p50), _ms(row.p99),
                  "-" if pred is None else
                  f"{_ms(pred.p50)} ({100 * pred.relative_error:+.1f}%)",
                  f"{100 * row.exact_fraction:.0f}%")
    con.print(t)
    for row in r.rows:
        ck = row.check
        if ck is not None:
            full = ("" if ck.max_relative_to_full is None else
                    f", {ck.max_relative_to_full:.2g} relative to the full gradient "
                    f"({ck.rounds_relative_to_full} rounds)")
            bad = (f"; [red]above {ck.tolerance:g} in exactly decoded rounds "
                   f"{', '.join(map(str, ck.failed_rounds[:10]))}[/]" if ck.failed_rounds
                   else "")
            con.print(f"  check {escape(row.name)}: decoded gradient error at most "
                      f"{ck.max_relative_to_partials:.2g} relative to the partial gradients' "
                      f"norms{full}{bad}")
        for e in row.events:
            con.print(f"  {escape(row.name)}, round {e.round}: logical workers "
                      f"{', '.join(map(str, e.workers))} {e.event} (at {e.at:.3f} s)")
        if row.predicted is not None and row.predicted.command:
            con.print(f"  [dim]{escape(row.name)} replay: {escape(row.predicted.command)}[/]")
    for note in r.notes:
        con.print(f"  [dim]{escape(note)}[/]")
