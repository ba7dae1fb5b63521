"""``gctool show``: a picture of a code in the terminal (rich), as a standalone SVG, or as a
JSON summary.  The command parses its options, calls :func:`gctool.show` (picture, curve and
SVG file: :mod:`gctool.viz`), renders the picture (:mod:`gctool.cli.render.show`) and exits."""

from __future__ import annotations

import click

from gctool.cli.exit_codes import exit_code
from gctool.cli.options import (
    budget_of,
    code_argument,
    json_option,
    load_code,
    load_within,
    max_work_option,
    progress_bar,
    refuse_typed,
    svg_output_path,
    tol_option,
    typed,
)
from gctool.cli.output import quiet_option, status, writes_stdout
from gctool.limits import DEFAULT_CURVE_SETS

#: the options only show's computed error curve uses: refused without one
CURVE_ONLY = {"max_sets": "--max-sets", "max_work": "--max-work"}


def without_curve(memory: bool) -> str:
    """What a refusal of show's error curve suggests: show's own options (its engine is
    attack's, whose own options show does not have), and never a run show would refuse:
    --no-curve drops the options of the curve that were typed."""
    drop = " and ".join(flag for name, flag in CURVE_ONLY.items() if typed(name))
    return (f"show it without the curve (--no-curve{f', without {drop}' if drop else ''}) or "
            "a shorter one (a lower --max-sets)" + ("" if memory else ", or raise --max-work"))



@click.command(epilog="""\b
Examples:
  gctool show code.json
  gctool show code.json --svg code.svg --stragglers 0,3
  gctool show code.json --curve --json | jq '.curve.points'
""" + "  gctool attack code.json --curve --json > curve.json && "
      "gctool show code.json --svg code.svg --curve-file curve.json\n" + """
code.json: any code file, e.g. from 'gctool design cyclic -n 8 -s 2 --seed 1 -o code.json'.

Cells: |B[i,j]| over the reals and complex numbers (shade and colour), the element over
GF(q).  Codes larger than --max-cells (terminal) or 100 (SVG) rows or columns are drawn in
blocks, shaded by the share of nonzero entries.  The error curve is the exhaustive worst-case
error for each number of stragglers s = 0..n that fits --max-sets, in units of the squared
norm of the targets (0 = decodes, 1 = nothing recovered).  show always exits 0 on a valid code:
it draws, it does not audit.""")
@code_argument
@click.option("--svg", "svg_path", metavar="OUT.svg", default=None,
              type=svg_output_path,
              help="Also write the picture as a standalone SVG ('-' = stdout, no text view).")
@click.option("--stragglers", metavar="LIST", default=None,
              help="Straggling workers, e.g. 0,3: show and highlight the optimal decoding vector.")
@click.option("--curve/--no-curve", "want_curve", default=None,
              help="Compute the worst-case error curve (default: only with --svg).")
@click.option("--curve-file", metavar="FILE", default=None, type=click.Path(allow_dash=True),
              help="Read the error curve from a JSON file (e.g. from 'gctool attack --curve').")
@click.option("--max-sets", type=click.IntRange(1, None), default=DEFAULT_CURVE_SETS,
              show_default=True,
              help="Budget for the error curve: straggler sets evaluated over all s.")
@click.option("--max-cells", type=click.IntRange(4, 400), default=60, show_default=True,
              help="Largest number of cell rows/columns in the terminal before summarising.")
@tol_option
@json_option
@max_work_option
@quiet_option
def show(code_file: str, svg_path: str | None, stragglers: str | None, want_curve: bool | None,
         curve_file: str | None, max_sets: int, max_cells: int, tol: float | None,
         as_json: bool, max_work: float | None) -> int:
    """Show FILE as a heat map with loads, replication and decoding.

    Workers are rows and columns of B are columns.  FILE may be '-'.
    """
    from gctool.errors import BudgetExceeded
    from gctool.viz.picture import parse_stragglers
    from gctool.viz.show import show as run_show

    if as_json and writes_stdout(svg_path):
        raise click.UsageError("--svg and --json both write to stdout; choose one")
    if curve_file is not None and want_curve is not None:  # the file's curve is drawn
        raise click.UsageError(f"--curve-file and {'--curve' if want_curve else '--no-curve'} "
                               "exclude each other")
    computed = curve_file is None and (want_curve or (want_curve is None and svg_path is not None))
    if not computed:
        refuse_typed(CURVE_ONLY,
                     "the error curve show computes (--curve, or --svg without --curve-file)")
    if not computed and stragglers is None:
        refuse_typed({"tol": "--tol"}, "the decoding of --stragglers and the error curve show "
                                       "computes (--curve, or --svg without --curve-file)")
    if svg_path is not None and writes_stdout(svg_path):  # the SVG alone: no terminal view
        refuse_typed({"max_cells": "--max-cells"}, "the terminal view, not to --svg -")
    if curve_file == "-" and code_file == "-":
        raise click.UsageError("FILE and --curve-file cannot both be read from stdin")
    budget = budget_of(max_work)
    if computed:  # the curve's work and reading the code share the budget
        code, budget = load_within(code_file, budget)
    else:
        code = load_code(code_file)
    S = None if stragglers is None else parse_stragglers(stragglers, code.n)
    with progress_bar("error curve") as progress:
        try:
            pic = run_show(code, stragglers=S, curve=want_curve, curve_file=curve_file,
                           svg=svg_path, max_sets=max_sets, max_cells=max_cells, tol=tol,
                           progress=progress, budget=budget)
        except BudgetExceeded as exc:  # the curve's engine is attack's: suggest show's options
            raise exc.with_remedy(without_curve(exc.kind == "memory")) from None
    if pic.svg is not None and svg_path != "-":
        status(f"wrote picture to {svg_path} ({pic.svg['bytes']:,} bytes)")
    if as_json or svg_path != "-":  # else the SVG itself went to stdout
        from gctool.cli.render import render

        render(pic, as_json)
    return int(exit_code(pic))
