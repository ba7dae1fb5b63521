"""``gctool verify``: certify that a code tolerates s stragglers."""

from __future__ import annotations

import click

from gctool.cli.exit_codes import ExitCode
from gctool.cli.options import (
    code_argument,
    emit_json,
    json_option,
    load_code,
    max_sets_option,
    progress_bar,
    tol_option,
)


@click.command(epilog="""\b
Examples:
  gctool verify code.json
  gctool verify code.json -s 3 --json
  gctool design cyclic -n 10 -s 3 --seed 1 | gctool verify -

Exit 0 if every set of s stragglers leaves decodable survivors, 1 with a counterexample.""")
@code_argument
@click.option("-s", "stragglers", type=int, default=None,
              help="Number of stragglers to certify (default: the file's s).")
@tol_option
@max_sets_option
@json_option
def verify(code_file: str, stragglers: int | None, tol: float, max_sets: int,
           as_json: bool) -> int:
    """Check that any n-s survivors of FILE can rebuild the full gradient.

    Exhaustive over all straggler sets of size s (exact over GF(q); over the reals and complex
    numbers with a tolerance and numerical diagnostics).  FILE may be '-' for stdin.
    """
    # -- issue 10: sr-sgc / m-sgc schedules and coded-reduce trees have their own verify --
    from gctool.cli.sequential_dispatch import dispatch_verify

    if (handled := dispatch_verify(code_file)) is not None:
        return handled
    # -------------------------------------------------------------------------------------
    from gctool.audit import verify as run_verify

    code = load_code(code_file)
    with progress_bar("verify") as progress:
        report = run_verify(code, stragglers, tol=tol, max_sets=max_sets, progress=progress)
    if as_json:
        emit_json(report.to_dict())
    else:
        from gctool.cli.render import render_verify

        render_verify(report)
    return int(ExitCode.OK if report.ok else ExitCode.FINDING)
