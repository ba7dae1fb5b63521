"""``gctool simulate``: wall-clock per iteration (and training) of code files and baselines.
The command parses its options, calls :func:`gctool.simulate` (the run and its ``--plot`` SVG:
:mod:`gctool.sim.run`, :mod:`gctool.sim.plot`), renders the report and exits."""

from __future__ import annotations

from typing import Any

import click

from gctool.cli import run_options as runs
from gctool.cli.options import (
    FloatRange,
    budget_of,
    code_files_argument,
    complete_with,
    delay_models,
    json_option,
    max_work_option,
    refuse_typed,
    seed_option,
    sparsifiers,
    svg_output_path,
    typed,
)
from gctool.cli.output import quiet_option
from gctool.limits import MAX_ITERATIONS
from gctool.request import ITERATIONS, MU, PROTOCOLS, SIMULATE_PROBLEMS


def _triple(ctx: click.Context, param: click.Parameter, value: str | None
            ) -> tuple[int, int, int] | str | None:
    if value is None:
        return None
    if value.strip() == "search":
        return "search"
    try:
        burst, window, lam = (int(x) for x in value.replace(" ", "").split(","))
    except ValueError:
        raise click.BadParameter("expected BURST,WINDOW,LAMBDA (e.g. 1,3,2) or 'search'"
                                 ) from None
    return burst, window, lam


def _gc_model(ctx: click.Context, param: click.Parameter, value: str | None
              ) -> tuple[int, ...] | str | None:
    if value is None or value.strip() == "best":
        return None if value is None else "best"
    try:
        found = tuple(int(x) for x in value.replace(" ", "").split(",") if x)
    except ValueError:
        raise click.BadParameter("expected S[,S,...] (whole numbers >= 0) or 'best'") from None
    if not found or min(found) < 0:
        raise click.BadParameter("expected S[,S,...] (whole numbers >= 0) or 'best'")
    return found


@click.command(epilog="""\b
Examples:
  gctool simulate frc.json --delay shifted-exp:shift=1,rate=2 --seed 1
  gctool simulate frc.json crc.json --delay pareto:shape=2 --iterations 5000
  gctool simulate crc.json --delay trace:london --seed 3
  gctool simulate frc.json --delay markov:p=0.05,q=0.3,slow=8 --sgc 1,3,2 --train --lazy 0.5
  gctool simulate frc.json --delay shifted-exp --plot times.svg
  gctool simulate frc.json --delay trace:sydney --protocol authors --sgc search --iterations 300
  gctool simulate crc.json --train --sparsify wangni:eps=1 --seed 1
  gctool simulate frc.json --erasurehead 3 --train --iterations 300
  gctool simulate rs.json frc.json --train --precision bfloat16 --seed 1
  gctool simulate frc.json --delay bernoulli:slow=8 --worker-p 0.1,0.2,0.5,0.3,0.2,0.1
  gctool design m-sgc -n 8 --burst 1 --window 3 --lambda 3 -o m.json && \
gctool simulate m.json --delay trace:london --load-model linear --protocol authors --mu 1 \
--gc-model best
  gctool simulate cr.json frc.json --link latency=0.05,bandwidth=10
  gctool design frc -n 16 -s 3 -o frc16.json && \
gctool simulate frc16.json --sweep s=1,3,7,15 --plot sweep.svg

frc.json, crc.json: real code files, e.g. from 'gctool design frc -n 6 -s 2 -o frc.json' and
'gctool design cyclic -n 8 -s 2 --seed 1 -o crc.json' (training needs a real or complex code).

Delay models: shifted-exp[:shift=A,rate=MU], pareto[:scale=X,shape=ALPHA],
markov[:p=P,q=Q,slow=F,shift=A,rate=MU], bernoulli[:slow=F,shift=A,rate=MU]
(worker i straggles with its own p_i, see --worker-p), the shipped AWS Lambda traces
trace:london, trace:canada, trace:sydney (256 workers), or trace:PATH (a CSV
file, or a prefix such as DIR/london selecting DIR/london-load*.csv).  Every scheme sees the same
draws; speed-ups are against uncoded with the same n.  Exit 1 if a sequential
job missed its deadline (a bug in the schedule).""")
@code_files_argument
@click.option("--delay", "delay_spec", shell_complete=complete_with(delay_models),
              default="shifted-exp", show_default=True, metavar="MODEL",
              help="Delay model (see below).")
@click.option("--iterations", type=click.IntRange(2, MAX_ITERATIONS), default=ITERATIONS,
              show_default=True, help="Rounds to simulate (jobs of the sequential schemes).")
@seed_option
@click.option("--load-model", "--trace-load", "load_model", default="interp", show_default=True,
              metavar="interp|nearest|ceil|linear[:base_comp=X,base_load=L]",
              help="How a worker's load changes its trace time: between the files' load levels "
                   "(interp, nearest, ceil), or the authors' linear model base + (load - "
                   "base_load) x base_comp on one file (base_comp fitted from the files when "
                   "not given).")
@click.option("--sgc", callback=_triple, metavar="B,W,LAMBDA|search", default=None,
              help="Model of the SR-SGC/M-SGC baselines (default 1,2,s of each file); "
                   "'search': the best (B, W, LAMBDA), W <= 4 and every LAMBDA, whose load is "
                   "at most the file's (s+1)/n, on these delays (the authors' parameter "
                   "search).")
@click.option("--protocol", type=click.Choice(PROTOCOLS), default=PROTOCOLS[0],
              show_default=True,
              help="Waiting rule: gctool's (stop at the earliest arrival that lets the scheme "
                   "decode) or the authors' (stragglers = slower than (1+MU) x the fastest; "
                   "wait for all when they leave the model).")
@click.option("--mu", type=FloatRange(0, 1e6), default=None,
              help=f"MU of --protocol authors (default {MU:g}).")
@runs.worker_p_option("Per-worker straggling probabilities of --delay bernoulli (default: the p of "
                 "the first heterogeneous code file).")
@click.option("--link", "link_spec", default=None, metavar="latency=A,bandwidth=BW",
              help="Network of the run: every scheme pays latency (seconds per message) and "
                   "1/bandwidth (seconds per gradient vector) for what it sends; CodedReduce "
                   "files also race ring all-reduce.")
@click.option("--erasurehead", type=click.IntRange(1, None), default=None, metavar="K",
              help="Also race ErasureHead on every FRC-shaped file: stop at the K-th arrival "
                   "(or earlier if exact) and sum the groups that arrived.")
@click.option("--gc-model", "gc_model", callback=_gc_model, default=None,
              metavar="S[,S,...]|best",
              help="Also race the count-based GC model (any n-s arrivals decode, load (s+1)/n; "
                   "the authors' simulator's baseline; a model, not a code) at these s, or at "
                   "the best s of 0..n-1 on these delays.")
@runs.no_baselines_option
@click.option("--train", is_flag=True, help="Also run gradient descent and time it.")
@click.option("--models", type=click.IntRange(1, 1000), default=None, metavar="M",
              help="Models trained concurrently with --train, one job per model in turn (as "
                   "in the sequential-GC experiments; default and minimum 1 + largest delay).")
@click.option("--problem", type=click.Choice(SIMULATE_PROBLEMS), default=SIMULATE_PROBLEMS[0],
              show_default=True, help="Training problem (synthetic).")
@runs.target_gap_option
@click.option("--lazy", type=FloatRange(0, None), default=None, metavar="XI",
              help="LAG-style lazy uploads with constant XI (LAG / LAGC / G-LAG).")
@click.option("--sparsify", "sparsify_spec", default=None, metavar="METHOD",
              shell_complete=complete_with(sparsifiers),
              help="With --train: send every message sparsified and unbiased: wangni[:eps=E] "
                   "(Wangni et al.'s probabilities, second moment at most (1+E) times; default "
                   "E=1) or random-k[:k=K] (K random coordinates scaled by d/K).")
@click.option("--precision", type=click.Choice(["float32", "bfloat16", "float16"]),
              default=None,
              help="With --train: messages computed and sent, and decoded, in this format "
                   "(float32 accumulation; docs/precision.md), so a badly conditioned code "
                   "shows as lost accuracy or divergence.")
@click.option("--sweep", "sweep_spec", default=None, metavar="PARAM=V1,V2,...",
              help="One run per value of PARAM (s, mu, latency, bandwidth, base_comp, or a "
                   "delay model parameter), on the same seed: one table (time per job) and, "
                   "with --plot, one plot.")
@click.option("--plot", type=svg_output_path, default=None, metavar="FILE.svg",
              help="Also draw an SVG: runtime CDF per scheme, mean/p50/p99, and with --train "
                   "the loss against wall-clock time.")
@json_option
@max_work_option
@quiet_option
def simulate(code_file: tuple[str, ...], delay_spec: str, iterations: int, seed: int | None,
             load_model: str, sgc: tuple[int, int, int] | str | None, protocol: str,
             mu: float | None,
             link_spec: str | None, worker_p: str | None, erasurehead: int | None,
             gc_model: tuple[int, ...] | str | None, no_baselines: bool,
             train: bool, models: int | None, problem: str, target_gap: float, lazy: float | None,
             plot: str | None, as_json: bool, sparsify_spec: str | None = None,
             sweep_spec: str | None = None, precision: str | None = None,
             max_work: float | None = None) -> int:
    """Simulate the wall-clock per iteration of FILE... against the baselines.

    Reports the mean, median and 99th percentile per iteration with 95% confidence intervals,
    and the speed-up over uncoded; with --train, the time and communication to reach a target
    loss.  FILE may be '-' (once).
    """
    from gctool.sim.delays import parse_delay
    from gctool.sim.run import simulate as run_simulation
    from gctool.sim.training import check_options

    if not train:  # the training's options, without training
        refuse_typed({"problem": "--problem", "target_gap": "--target-gap"}, "--train")
    runs.start(code_file, plot, as_json)
    check_options(problem if train else None, lazy, sparsify_spec, models, precision)
    sparsifier = None
    if sparsify_spec is not None:
        from gctool.sim.sparsify import parse_sparsify

        sparsifier = parse_sparsify(sparsify_spec)
    delay = parse_delay(delay_spec, load_model if typed("load_model") else None)
    link = None
    if link_spec is not None:
        from gctool.sim.network import parse_link

        link = parse_link(link_spec)
    delay = runs.worker_p_delay(delay, worker_p)
    codes, budget = runs.load_within_all(code_file, budget_of(max_work))
    options: dict[str, Any] = dict(
        iterations=iterations, seed=seed, baselines=not no_baselines, sgc=sgc,
        train=problem if train else None, gap=target_gap, lazy=lazy, mu=mu,
        sparsify=sparsifier, erasurehead=erasurehead, link=link, models=models, plot=plot,
        gc_model=gc_model, precision=precision, budget=budget,
        **({"protocol": protocol} if typed("protocol") else {}))  # a sweep of mu sets it
    if sweep_spec is not None:
        from gctool.sim.sweep import parse_sweep, sweep

        param, values = parse_sweep(sweep_spec)
        report: Any = sweep(codes, delay, param, values, **options)
    else:
        report = run_simulation(codes, delay, **options)
    return runs.finish(report, plot, as_json)
