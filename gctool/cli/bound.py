"""``gctool bound``: lower bounds on load and how a code compares with them."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from gctool.cli.batch import run_files
from gctool.cli.options import (
    FloatRange,
    budget_of,
    complete_with,
    delay_models,
    json_option,
    load_within,
    max_work_option,
    refuse_with,
)
from gctool.cli.output import quiet_option

if TYPE_CHECKING:
    from gctool.reports import Report


@click.command(epilog="""\b
Examples:
  gctool bound -n 10 -k 10 -s 3
  gctool bound -n 10 -k 10 -s 2 -m 3 -d 5
  gctool bound code.json
  gctool bound frc.json crc.json --check      # CI gate over several files
  gctool bound code.json -s 4 --check --json
  gctool bound code.json -s 2 --epsilon 0.5   # threshold rows T_eps at eps = 0.5
  gctool bound cr.json --link latency=0.01,bandwidth=50   # CodedReduce: time per round

code.json, frc.json, crc.json: any code files (e.g. 'gctool design cyclic -n 8 -s 2 --seed 1
-o code.json'); cr.json: 'gctool design coded-reduce --fanout 3 --depth 2 --tolerance 1 -o
cr.json'.

With --check, exit 1 when a code violates a necessary condition (a partition held by
s workers or fewer, or rank(B) > n - s).  With several FILEs or -q: one line per file, the
worst exit status; --json: one document of the same shape for one file, several, or -n/-k/-s
(docs/ci.md).  Sources in brackets: [P] a published result,
[D] derived for gctool; 'reference §x' is a section of 'gctool reference'.""")
@click.argument("code_file", metavar="[FILE]...", nargs=-1, type=click.Path(allow_dash=True))
@click.option("-n", type=click.IntRange(1, None), default=None, help="Number of workers.")
@click.option("-k", type=click.IntRange(1, None), default=None, help="Number of partitions.")
@click.option("-s", "stragglers", type=click.IntRange(0, None), default=None,
              help="Number of stragglers (default: the file's s).")
@click.option("-m", "pieces", type=click.IntRange(1, None), default=None,
              help="Pieces per gradient for communication-efficient codes (default 1).")
@click.option("-d", "--load", "load", type=click.IntRange(1, None), default=None,
              help="A load (partitions per worker): report whether it meets d >= k(s+m)/n and "
                   "the largest m it allows (default for an m-piece FILE: its max load).")
@click.option("--check", is_flag=True, help="Exit 1 when a necessary condition is violated.")
@click.option("--epsilon", type=FloatRange(0, None), default=None, metavar="E",
              help="With FILE: the error level eps of the threshold rows T_eps = fewest "
                   "stragglers whose optimal-decoding error exceeds eps (threshold_lb, "
                   "threshold_ub; default 0, as in 'attack --threshold': exact recovery fails; "
                   "1 is the error of losing one partition).")
@click.option("--link", "link_spec", default=None, metavar="latency=A,bandwidth=BW",
              help="CodedReduce FILE: also the estimated time per round of CodedReduce, the "
                   "parameter server and ring all-reduce with compute and stragglers, under "
                   "'simulate --link' 's model (seconds per message, vectors per second).")
@click.option("--delay", "delay_spec", shell_complete=complete_with(delay_models),
              default=None, metavar="shifted-exp[:shift=A,rate=MU]",
              help="With --link: the compute-time model of the leaves (default shifted-exp, "
                   "shift 1, rate 1, as in simulate).")
@json_option
@max_work_option
@quiet_option
def bound(code_file: tuple[str, ...], n: int | None, k: int | None, stragglers: int | None,
          pieces: int | None, load: int | None, check: bool, epsilon: float | None,
          as_json: bool, link_spec: str | None = None, delay_spec: str | None = None,
          max_work: float | None = None) -> int:
    """Report the load lower bounds for (n, k, s), and whether each FILE meets them.

    The bounds: every partition needs s+1 holders, so nnz(B) >= k(s+1) and the largest load is
    at least ceil(k(s+1)/n) (Tandon et al. 2017, Theorem 1).
    """
    if code_file:
        if n is not None or k is not None:
            raise click.UsageError("give either FILE or -n/-k, not both")
        refuse_with("FILE (its code has its own m)", {"-m": pieces})

        link = delay = None
        if link_spec is not None:
            from gctool.sim.network import parse_link

            link = parse_link(link_spec)
        if delay_spec is not None:
            from gctool.sim.delays import parse_delay

            delay = parse_delay(delay_spec)

        def audit(path: str) -> Report:
            from gctool.api import bound as run_bound

            code, left = load_within(path, budget_of(max_work))
            return run_bound(code, s=stragglers, d=load, epsilon=epsilon, link=link,
                             delay=delay, budget=left)

        return run_files("bound", code_file, audit, as_json, gate=check)
    if n is None or k is None or stragglers is None:
        raise click.UsageError("without FILE, give -n, -k and -s")
    if epsilon is not None:
        raise click.UsageError("--epsilon needs FILE (it sets the threshold rows of a code)")
    if check and load is None:  # the bounds of (n, k, s) alone claim nothing that can fail
        raise click.UsageError("--check applies with FILE or -d (a code or a load to hold to "
                               "the bounds)")
    if link_spec is not None or delay_spec is not None:
        raise click.UsageError("--link and --delay need a CodedReduce FILE")
    from gctool.api import bound as run_bound

    return run_files("bound", [None],
                     lambda _: run_bound(n=n, k=k, s=stragglers, m=pieces, d=load,
                                         budget=budget_of(max_work)), as_json,
                     gate=check)
