"""Text of the spectral audits of encoded frames (:mod:`gctool.audit.spectrum`): one straggler
set, the worst set of a size, the curve over s, verify's certificate and the bounds."""

from __future__ import annotations

from typing import Any

from gctool.cli.params import in_cli_terms
from gctool.cli.render.common import escape, fmt, stdout_console, table
from gctool.wording import counted


def render_spectrum(r: Any) -> None:
    """A SpectrumReport: under ``verify`` (mode "verify") with its verdict line first."""
    con = stdout_console()
    if r.mode == "verify":
        some = counted(r.s, "straggler")
        first = (f"[bold green]OK: every set of {some} keeps epsilon < 1[/]"
                 if r.ok else f"[bold red]FAIL: {some} can push epsilon to 1 or "
                              "beyond[/]" if r.exact or "rank" in r.reason
                 else f"[bold yellow]NOT CERTIFIED: {some}[/]")
        con.print(f"{first}  (encoded {escape(str(r.frame))}, n={r.n}, k={r.k})")
        con.print(escape(r.reason))
    label = "exact" if r.exact else "heuristic"
    what = (f"stragglers {r.stragglers}" if r.mode == "set"
            else f"worst of {r.checked:,}/{r.total:,} sets of {counted(r.s, 'straggler')} "
                 f"({label}, {r.method})")
    con.print(f"[bold]{escape(str(r.frame))} frame[/] n={r.n}, k={r.k}, s={r.s}: {what}")
    con.print(f"  M_F = S_F^T S_F / {fmt(r.normalization)}   epsilon = {fmt(r.epsilon)}   "
              f"kappa = {fmt(r.kappa)}")
    if r.mode in ("worst", "verify"):
        con.print(f"  worst set {r.stragglers}")
        con.print(f"  smallest lambda_min {fmt(r.lambda_min)}  (stragglers "
                  f"{r.lambda_min_stragglers})")
        con.print(f"  largest lambda_max  {fmt(r.lambda_max)}  (stragglers "
                  f"{r.lambda_max_stragglers})")
        con.print(f"  proved: epsilon <= {fmt(r.upper_bound)} ({r.upper_bound_source})")
    else:
        con.print("  eigenvalues " + " ".join(fmt(x) for x in r.eigenvalues))
    for note in r.notes:
        con.print(f"  note: {escape(in_cli_terms(note))}")


def render_spectrum_curve(report: Any) -> None:
    con = stdout_console()
    r0 = report.curve[0]
    con.print(f"[bold]{r0.frame} frame[/] n={r0.n}, k={r0.k}: worst epsilon by stragglers s")
    t = table("s", "epsilon", "kappa", "lambda_min", "lambda_max", "label")
    for r in report.curve:
        label = ("exact" if r.exact else "heuristic") + f", {r.checked:,}/{r.total:,} sets"
        t.add_row(str(r.s), fmt(r.epsilon), fmt(r.kappa), fmt(r.lambda_min), fmt(r.lambda_max),
                  label)
    con.print(t)


def render_encoded_bound(report: Any) -> None:
    con = stdout_console()
    con.print(f"[bold]encoded ({escape(str(report.frame))})[/] n={report.n}, k={report.k}, "
              f"s={report.s}")
    t = table("bound", "value", "source", header=False)
    for row in report.rows:
        extra = (f"  [{row['kind']}" + (f" {fmt(row['bound'])}" if "bound" in row else "")
                 + "]") if "kind" in row else ""
        t.add_row(escape(row["name"]), fmt(row["value"]) + escape(extra),
                  f"({escape(row['source'])})")
    con.print(t)
