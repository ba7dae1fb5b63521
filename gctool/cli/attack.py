"""``gctool attack``: worst-case stragglers and adversarial thresholds."""

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
  gctool attack code.json -s 3
  gctool attack code.json --threshold
  gctool attack code.json --threshold --epsilon 0.5 --normalize k --json

Errors are the raw squared optimal-decoding error min_a ||a^T B_F - 1||^2 unless
--normalize k divides them by k.  Over GF(q) the error is 0 (decodes) or 1 (fails).""")
@code_argument
@click.option("-s", "stragglers", type=int, default=None,
              help="Number of stragglers (worst-case mode; default: the file's s).")
@click.option("--threshold", "threshold_mode", is_flag=True,
              help="Find the fewest stragglers whose error exceeds --epsilon.")
@click.option("--epsilon", type=click.FloatRange(0, None), default=0.0, show_default=True,
              help="Error level for --threshold (strict: error > epsilon; 0 = exact recovery "
                   "fails).")
@click.option("--normalize", type=click.Choice(["none", "k"]), default="none", show_default=True,
              help="Report the raw squared error, or divide it by k.")
@tol_option
@max_sets_option
@json_option
def attack(code_file: str, stragglers: int | None, threshold_mode: bool, epsilon: float,
           normalize: str, tol: float, max_sets: int, as_json: bool) -> int:
    """Find the straggler set that hurts FILE most (exhaustive, exact).

    Worst-case mode reports the set of s stragglers with the largest optimal-decoding error;
    --threshold reports the adversarial threshold and a witness set.  FILE may be '-'.
    """
    from gctool.audit import attack as run_attack
    from gctool.audit import threshold as run_threshold

    if threshold_mode and stragglers is not None:
        raise click.UsageError("-s and --threshold exclude each other")
    code = load_code(code_file)
    with progress_bar("attack") as progress:
        if threshold_mode:
            report = run_threshold(code, epsilon, normalize=normalize, tol=tol,
                                   max_sets=max_sets, progress=progress)
        else:
            s = code.s if stragglers is None else stragglers
            report = run_attack(code, s, normalize=normalize, tol=tol, max_sets=max_sets,
                                progress=progress)
    if as_json:
        emit_json(report.to_dict())
    else:
        from gctool.cli.render import render_attack

        render_attack(report)
    return int(ExitCode.OK)
