"""Pieces every text renderer shares: the stdout console, number formatting, verdict markup,
values from files made safe for the terminal, the one table style and the diagnostics block."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.markup import escape

from gctool.cli.output import fmt, stdout_console
from gctool.errors import printable
from gctool.wording import counted

if TYPE_CHECKING:
    from rich.table import Table

__all__ = ["cell", "diagnostics_lines", "escape", "fmt", "gate_failures", "precision_lines",
           "safe", "stdout_console", "table", "verdict"]


def verdict(ok: bool, good: str, bad: str) -> str:
    """``good`` in bold green when ``ok``, else ``bad`` in bold red (rich markup)."""
    return f"[bold green]{good}[/]" if ok else f"[bold red]{bad}[/]"


def safe(value: Any) -> str:
    """A value that may come from a file, safe for the terminal and for rich markup."""
    return escape(printable(value))


def table(*columns: str, fold: bool = False, header: bool = True) -> Table:
    """The one table style of gctool's text output (rich, no outer edge or padding); every
    table gctool prints is made here (``header=False``: a list of labelled rows)."""
    from rich.table import Table

    t = Table(show_edge=False, pad_edge=False, show_header=header)
    for col in columns:
        if fold:
            t.add_column(col, overflow="fold")
        else:
            t.add_column(col)
    return t


def cell(value: Any) -> str:
    """A table cell: '-' for missing values, 4 significant digits for floats."""
    if value is None:
        return "-"
    if isinstance(value, float):
        return fmt(value, 4)
    return str(value)


def gate_failures(r: Any) -> list[str]:
    """The CI gates (``verify --max-condition``, ``--strict``) a report failed, in the
    command line's terms."""
    from gctool.cli.params import in_cli_terms

    gates = getattr(r, "gates", None)
    return [in_cli_terms(f) for f in gates["failures"]] if gates else []


def diagnostics_lines(d: Any) -> list[str]:
    """The numerical diagnostics of an attack (worst residual, condition, decoder norm)."""
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


def precision_lines(p: Any) -> list[str]:
    """The ``--precision`` block of a verify or attack report (rich markup)."""
    if p is None:
        return []
    if p.exact:
        return [f"precision {p.precision}: {escape(p.reason)}"]
    if p.bound is None:
        head = f"precision {p.precision}: not bounded at stragglers {p.stragglers}"
    else:
        head = (f"precision {p.precision} (float32 accumulation): proved error <= "
                f"{fmt(p.bound)} x sum_j ||g_j||  (stragglers {p.stragglers}; coefficients "
                f"{fmt(p.residual)} + arithmetic {fmt(p.rounding)})")
    lines = [head]
    e = p.empirical
    if e is not None and e.max_error is not None:
        tight = "" if e.tightness is None else f", bound/observed {e.tightness:.3g}"
        lines.append(f"  observed {fmt(e.max_error)} on {counted(e.sets, 'emulated set')} "
                     f"(stragglers {e.stragglers}{tight})")
    if p.max_error is not None:
        lines.append(f"  {p.over:,} of {counted(p.sets, 'set')} above --max-error {p.max_error:g}")
    if p.floor is not None and p.bound is not None:
        room = "" if p.headroom is None else f", overflow above {fmt(p.headroom)}"
        lines.append(f"  range: partial-gradient entries from {fmt(p.floor)} (underflow floor, "
                     f"any signs){room}")
    lines += [f"  note: {escape(n)}" for n in p.notes]
    return lines
