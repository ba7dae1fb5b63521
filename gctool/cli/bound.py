"""``gctool bound``: lower bounds on load and how a code compares with them."""

from __future__ import annotations

import click

from gctool.cli.exit_codes import ExitCode
from gctool.cli.options import emit_json, json_option, load_code


@click.command(epilog="""\b
Examples:
  gctool bound -n 10 -k 10 -s 3
  gctool bound -n 10 -k 10 -s 2 -m 3 -d 5
  gctool bound code.json
  gctool bound code.json -s 4 --check --json
  gctool bound code.json -s 2 --epsilon 0.5   # threshold rows T_eps at eps = 0.5

With --check, exit 1 when the code violates a necessary condition (a partition held by
s workers or fewer, or rank(B) > n - s).""")
@click.argument("code_file", metavar="[FILE]", required=False, type=click.Path(allow_dash=True))
@click.option("-n", type=click.IntRange(1, None), default=None, help="Number of workers.")
@click.option("-k", type=click.IntRange(1, None), default=None, help="Number of partitions.")
@click.option("-s", "stragglers", type=click.IntRange(0, None), default=None,
              help="Number of stragglers (default: the file's s).")
@click.option("-m", "pieces", type=click.IntRange(1, None), default=None,
              help="Pieces per gradient for communication-efficient codes (default 1).")
@click.option("-d", "load", type=click.IntRange(1, None), default=None,
              help="A load (partitions per worker): report whether it meets d >= k(s+m)/n and "
                   "the largest m it allows (default for an m-piece FILE: its max load).")
@click.option("--check", is_flag=True, help="Exit 1 when a necessary condition is violated.")
# -- error level of the threshold rows of the approximate-code table ------------------
@click.option("--epsilon", type=click.FloatRange(0, None), default=None, metavar="E",
              help="With FILE: the error level eps of the threshold rows T_eps = fewest "
                   "stragglers whose optimal-decoding error exceeds eps (threshold_lb, "
                   "threshold_ub; default 1, the error of losing one partition).")
@json_option
def bound(code_file: str | None, n: int | None, k: int | None, stragglers: int | None,
          pieces: int | None, load: int | None, check: bool, epsilon: float | None,
          as_json: bool) -> int:
    """Report the load lower bounds for (n, k, s), and whether FILE meets them.

    The bounds: every partition needs s+1 holders, so nnz(B) >= k(s+1) and the largest load is
    at least ceil(k(s+1)/n) (Tandon et al. 2017, Theorem 1).
    """
    # -- sr-sgc / m-sgc / coded-reduce / bcc files have their own comparisons ---
    from gctool.cli.sequential_dispatch import dispatch_bound

    if (handled := dispatch_bound(code_file)) is not None:
        return handled
    # -------------------------------------------------------------------------------------
    from gctool.bounds import bounds

    if code_file is not None:
        if n is not None or k is not None:
            raise click.UsageError("give either FILE or -n/-k, not both")
        report = bounds(load_code(code_file), s=stragglers, d=load,
                        epsilon=epsilon)
    else:
        if n is None or k is None or stragglers is None:
            raise click.UsageError("without FILE, give -n, -k and -s")
        if epsilon is not None:
            raise click.UsageError("--epsilon needs FILE (it sets the threshold rows of a code)")
        report = bounds(n=n, k=k, s=stragglers, m=pieces, d=load)
    if as_json:
        emit_json(report.to_dict())
    else:
        from gctool.cli.render import render_bound

        render_bound(report)
    return int(ExitCode.FINDING if check and not report.ok else ExitCode.OK)
