"""``gctool train``: coded gradient descent on a Dask cluster.  The command parses its options,
calls :func:`gctool.train` (:mod:`gctool.trainer`), renders the report and exits."""

from __future__ import annotations

import click

from gctool.cli import run_options as runs
from gctool.cli.options import (
    FloatRange,
    code_files_argument,
    complete_with,
    csv_output_path,
    delay_models,
    json_option,
    progress_bar,
    refuse_typed,
    seed_option,
    svg_output_path,
    typed,
)
from gctool.cli.output import quiet_option, status
from gctool.limits import MAX_ITERATIONS
from gctool.request import (
    ITERATIONS,
    OVERHEAD_ROUNDS,
    TIME_SCALE,
    TRACE_LOADS,
    TRAIN_PROBLEMS,
    TRAIN_WAIT_S,
)


def _record_file(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """--record names a file: the prediction reads the trace back from it, and the other
    schemes' traces go beside it, so stdout ('-') is refused before the cluster starts."""
    from gctool.cli.output import writes_stdout

    if value is not None and writes_stdout(value):
        raise click.BadParameter("a trace is written to a file (the prediction reads it back "
                                 "and the other schemes' traces go beside it); give PATH.csv",
                                 ctx, param)
    return value


@click.command(epilog="""\b
Examples:
  gctool train code.json --problem logistic --delay shifted-exp --check --seed 1
  gctool train code.json --delay pareto:shape=1.5 --iterations 40 --record run.csv --plot run.svg
  gctool train code.json --delay trace:london --time-scale 0.02 --no-baselines --json

A recorded run replays in the simulator: gctool simulate code.json --delay trace:run.csv.
On a running cluster: --scheduler tcp://HOST:8786 (see docs/train.md).

Every scheme (each FILE, uncoded and ignore-stragglers with the same n and s) trains from
the same start with the same injected delays: a worker sleeps --time-scale seconds per unit of
the delay model (the models of gctool simulate; traces count in seconds).  The report gives
the time per round (mean, median, p99 with 95% intervals), the time and rounds to the target
loss, the cluster's own overhead per round, the median that gctool simulate predicts from
each recorded trace, and with --check the decoded gradient's error.  Exit 1 if a FILE did not
reach the target within --iterations, or (--check) an exactly decoded round missed the full
gradient by more than 1e-9 relative; exit 2 (one line) when lost workers cannot be replaced
within --wait seconds.  Needs gctool[dask].""")
@code_files_argument
@click.option("--delay", "delay_spec", default="shifted-exp", show_default=True, metavar="MODEL",
              shell_complete=complete_with(delay_models),
              help="Injected delays: a delay model of gctool simulate (shifted-exp, pareto, "
                   "markov, bernoulli, trace:london, trace:PATH, ...).")
@click.option("--time-scale", type=FloatRange(0, 3600), default=TIME_SCALE, show_default=True,
              metavar="SECONDS",
              help="Seconds of injected delay per unit of the delay model (one worker "
                   "computing the whole data set; traces: per second).")
@click.option("--load-model", "--trace-load", "trace_load", type=click.Choice(TRACE_LOADS),
              default=TRACE_LOADS[0], show_default=True,
              help="How a worker's load maps onto the trace's load levels (a trace delay "
                   "only).")
@runs.worker_p_option("Per-worker straggling probabilities of --delay bernoulli.")
@click.option("--problem", type=click.Choice(TRAIN_PROBLEMS), default=TRAIN_PROBLEMS[0],
              show_default=True,
              help="Least squares, logistic regression, or a two-layer network (8 tanh units, "
                   "logistic loss; target: the best linear model's loss).")
@click.option("--data", type=click.Path(dir_okay=False), default=None, metavar="FILE.npz",
              help="Train on the arrays X (samples x features) and y of this NPZ file "
                   "(default: the synthetic problem of simulate --train).")
@click.option("--iterations", type=click.IntRange(2, MAX_ITERATIONS), default=ITERATIONS,
              show_default=True, help="Most rounds per scheme (each stops at the target).")
@runs.target_gap_option
@click.option("--all-rounds", is_flag=True,
              help="Run every --iterations round, also after the target (more rounds for the "
                   "timing figures).")
@click.option("--check", is_flag=True,
              help="Compute the full gradient on the side every round and report the decoded "
                   "gradient's error.")
@click.option("--record", type=csv_output_path, default=None, metavar="PATH.csv",
              callback=_record_file,
              help="Write the first FILE's measured rounds as a trace that simulate --delay "
                   "trace:PATH reads; the other schemes' go next to it (PATH-uncoded-n8.csv, "
                   "...).")
@click.option("--scheduler", default=None, metavar="ADDRESS",
              help="A running Dask scheduler (tcp://host:8786); default: a LocalCluster of "
                   "--jobs worker processes on 127.0.0.1.")
@click.option("-j", "--jobs", type=click.IntRange(0, None), default=0, show_default=True,
              help="Worker processes of the LocalCluster (0 = one per core; never more than "
                   "the logical workers).")
@click.option("--wait", type=FloatRange(0, 86400, min_open=True), default=TRAIN_WAIT_S,
              show_default=True, metavar="SECONDS",
              help="How long a round waits for lost workers to come back before the run "
                   "stops.")
@click.option("--overhead-rounds", type=click.IntRange(0, 1_000_000), default=OVERHEAD_ROUNDS,
              show_default=True,
              help="Rounds without delays or computing that measure the cluster's own time "
                   "per round (0: skip).")
@runs.no_baselines_option
@click.option("--plot", type=svg_output_path, default=None, metavar="FILE.svg",
              help="Also draw an SVG: time per round per scheme (measured and predicted) and "
                   "the loss against wall-clock time.")
@seed_option
@json_option
@quiet_option
def train(code_file: tuple[str, ...], delay_spec: str, time_scale: float, trace_load: str,
          worker_p: str | None, problem: str, data: str | None, iterations: int,
          target_gap: float, all_rounds: bool, check: bool, record: str | None,
          scheduler: str | None, jobs: int,
          wait: float, overhead_rounds: int, no_baselines: bool, plot: str | None,
          seed: int | None, as_json: bool) -> int:
    """Train with FILE... on a Dask cluster, with real injected stragglers.

    Runs coded gradient descent on n logical workers mapped onto the cluster's worker
    processes: every round each worker sends its coded message, the master decodes as soon as
    the messages that arrived allow it and steps.  FILE may be '-' (once).
    """
    from gctool.sim.delays import parse_delay
    from gctool.trainer.run import train as run_training

    if scheduler is not None:  # the cluster is the scheduler's: gctool starts none
        refuse_typed({"jobs": "--jobs"}, "the LocalCluster gctool starts, not to --scheduler")
    runs.start(code_file, plot, as_json)
    delay = runs.worker_p_delay(
        parse_delay(delay_spec, trace_load if typed("trace_load") else None), worker_p)
    codes = runs.load_codes(code_file)
    with progress_bar("train") as progress:
        report = run_training(codes, delay, problem=problem, data=data, iterations=iterations,
                              seed=seed, time_scale=time_scale, scheduler=scheduler,
                              jobs=jobs or None, check=check, record=record,
                              baselines=not no_baselines, overhead_rounds=overhead_rounds,
                              wait=wait, gap=target_gap, all_rounds=all_rounds, plot=plot,
                              progress=progress)
    for r in report.rows:
        if r.trace is not None:
            status(f"wrote the trace of {r.name} to {r.trace}")
    return runs.finish(report, plot, as_json)
