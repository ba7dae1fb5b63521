"""``gctool train`` (:func:`train`): coded gradient descent on a Dask cluster, with injected
stragglers, recorded traces and ``gctool simulate``'s prediction checked against them.

The run, in order: the problem and its target loss (:mod:`gctool.trainer.workload`); the
injected delays of every scheme, drawn from the delay model of ``gctool simulate`` with the
seed (:mod:`gctool.sim.delays`: the same model, the same draws, the same per-scheme loads, so
``delay MODEL`` means the same in both commands); the cluster and one resident task per Dask
worker (:mod:`gctool.trainer.cluster`); the cluster's own overhead (rounds without delays or
computing); then every scheme in turn from the same starting point
(:mod:`gctool.trainer.rounds`).  Afterwards every scheme's rounds are written as a trace
(:mod:`gctool.trainer.record`; to ``record`` or to a temporary directory) and replayed by
:func:`gctool.simulate`, whose median time per round is reported next to the measured one.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from gctool.errors import InvalidInput
from gctool.limits import MAX_ITERATIONS
from gctool.model import GradientCode
from gctool.request import (
    ITERATIONS,
    OVERHEAD_ROUNDS,
    TARGET_GAP,
    TIME_SCALE,
    TRAIN_PROBLEMS,
    TRAIN_WAIT_S,
)
from gctool.sim.delays import DelayModel
from gctool.trainer import record as rec
from gctool.trainer.report import (
    Cluster,
    Prediction,
    Problem,
    TrainReport,
    overhead,
    row,
)
from gctool.trainer.schemes import Coded, Scheme, schemes_for

#: seconds the resident tasks have to connect, on top of ``wait``
CONNECT_S = 60.0


def _check(codes: list[tuple[str, GradientCode]], iterations: int, time_scale: float,
           wait: float, overhead_rounds: int, gap: float) -> None:
    if not codes:
        raise InvalidInput("nothing to train: give at least one code file")
    if not 2 <= iterations <= MAX_ITERATIONS:
        raise InvalidInput(f"`iterations` must be between 2 and {MAX_ITERATIONS:,}")
    if not (np.isfinite(time_scale) and time_scale >= 0):
        raise InvalidInput(f"`time_scale` must be a finite number >= 0, got {time_scale}")
    if not (np.isfinite(wait) and wait > 0):
        raise InvalidInput(f"`wait` must be a finite number of seconds > 0, got {wait}")
    if not 0 <= overhead_rounds <= MAX_ITERATIONS:
        raise InvalidInput(f"`overhead_rounds` must be between 0 and {MAX_ITERATIONS:,}")
    if not (np.isfinite(gap) and 0 < gap <= 1):
        raise InvalidInput(f"`gap` must be in (0, 1], got {gap}")


def _delays(delay: DelayModel, schemes: list[Scheme], iterations: int, seed: int,
            time_scale: float) -> tuple[list[np.ndarray], list[str]]:
    """Injected seconds (iterations x n) per scheme: the simulator's draws for the scheme's
    loads (common random numbers: worker i's base draw is the same in every scheme), times
    ``time_scale``; and what the delay model noted while making them (clamped loads)."""
    width = max(s.n for s in schemes)
    draws = delay.draws(iterations, width, np.random.default_rng(seed))
    return [np.asarray(delay.times(draws, s.contender.loads), np.float64) * time_scale
            for s in schemes], draws.notes


def train(codes: list[tuple[str, GradientCode]], delay: DelayModel | None = None, *,  # noqa: PLR0913 (the options of gctool train)
          problem: str = TRAIN_PROBLEMS[0], data: str | os.PathLike[str] | None = None,
          iterations: int = ITERATIONS, seed: int | None = None, time_scale: float = TIME_SCALE,
          scheduler: str | None = None, jobs: int | None = None, check: bool = False,
          record: str | os.PathLike[str] | None = None, baselines: bool = True,
          overhead_rounds: int = OVERHEAD_ROUNDS, wait: float = TRAIN_WAIT_S,
          gap: float = TARGET_GAP,
          all_rounds: bool = False, plot: str | os.PathLike[str] | None = None,
          progress: Callable[[int, int], None] | None = None) -> TrainReport:
    """Train with every code file of ``codes`` ((label, code) pairs) and, with ``baselines``,
    uncoded and ignore-stragglers, on a Dask cluster; see the module docs and docs/train.md.

    ``delay`` (default ``shifted-exp``): the injected delays, :func:`gctool.sim.delays.
    parse_delay`'s model; a worker sleeps ``time_scale`` seconds per unit of the model (traces
    count in seconds).  ``problem``: ``"lsq"``, ``"logistic"`` or ``"mlp"`` (a two-layer
    network, :mod:`gctool.trainer.workload`), on the synthetic data of ``simulate train`` or
    on ``data`` (an NPZ file with X and y).  ``iterations``: the most
    rounds per scheme (a scheme stops at the target loss, ``loss* + gap (loss0 - loss*)``,
    unless ``all_rounds``: then every scheme runs them all, for the timing figures).
    ``scheduler``: address of a running Dask scheduler; None starts a LocalCluster of ``jobs``
    worker processes (default: one per core, at most one per logical worker).  ``check``:
    compute the full gradient on the side every round and report the decoded gradient's
    error.  ``record``: write the first code file's trace there and the other schemes' next to
    it (:func:`gctool.trainer.record.sibling`).  ``overhead_rounds``: rounds without delay or
    computing that measure the cluster's own time per round (0: none).  ``wait``: seconds to
    wait for lost workers before stopping (:class:`~gctool.trainer.cluster.ClusterError`).
    ``seed`` (None: a fresh one, recorded in the report) fixes the data, the start and every
    injected delay.  ``plot`` writes the SVG of the run (``"-"``: stdout).  ``progress(done,
    total)`` is called after every round."""
    from gctool.sim.delays import parse_delay
    from gctool.trainer import workload

    _check(codes, iterations, time_scale, wait, overhead_rounds, gap)
    delay = parse_delay("shifted-exp") if delay is None else delay
    schemes = schemes_for(codes, baselines)
    delay = delay.for_codes(codes)  # bernoulli: the files' probabilities (a copy)
    if seed is None:
        from gctool.seeds import fresh_seed

        seed = fresh_seed()
    if record is not None:
        from gctool._files import check_output

        check_output(record)
    rng = np.random.default_rng(seed)
    prob, w0 = workload.make(problem, data, rng, max(s.parts for s in schemes))
    start = prob.loss(w0)
    info = Problem(problem, None if data is None else os.fspath(data), prob.N,
                   int(prob.X.shape[1]), len(w0), prob.eta, prob.loss_star, start, gap,
                   prob.loss_star + gap * (start - prob.loss_star))
    injected, delay_notes = _delays(delay, schemes, iterations, seed, time_scale)
    total = overhead_rounds + iterations * len(schemes)
    done = [0]

    def tick() -> None:
        done[0] += 1
        if progress is not None:
            progress(done[0], total)

    with _cluster(schemes, prob, scheduler, jobs, wait, tick) as (master, cluster):
        over = None
        if overhead_rounds:
            first = schemes[0]
            log = master.run(first, prob, w0, np.zeros((overhead_rounds, first.n)),
                             overhead_rounds, None, False, trivial=True)
            over = overhead(log)
        logs = []
        for scheme, delays in zip(schemes, injected, strict=True):
            logs.append(master.run(scheme, prob, w0, delays, iterations, info.target, check,
                                   stop=not all_rounds))
            done[0] = overhead_rounds + iterations * len(logs)
    rows = _rows(schemes, logs, injected, info, record, seed)
    ok = all(r.reached and not (r.check and r.check.failed_rounds)
             for r, s in zip(rows, schemes, strict=True) if isinstance(s, Coded))
    notes = list(delay_notes) + _notes(time_scale, delay)
    report = TrainReport(info, delay.label, time_scale, iterations, seed, cluster, over, rows,
                         notes, ok)
    if plot is not None:
        from gctool.trainer.plot import write_plot

        write_plot(report, plot)
    return report


def _notes(time_scale: float, delay: DelayModel) -> list[str]:
    unit = "second of the trace" if delay.time_unit == "s" else \
        "unit of the model (one worker computing the whole data set)"
    return [f"injected delay: {time_scale:g} s per {unit}",
            "time per round: wall clock from one round's dispatch to the next; predicted: "
            "gctool simulate replaying the scheme's recorded trace"]


@contextlib.contextmanager
def _cluster(schemes: list[Scheme], prob: Any, scheduler: str | None, jobs: int | None,
             wait: float, tick: Callable[[], None]) -> Iterator[tuple[Any, Cluster]]:
    """The master, its hub and the resident tasks on a Dask cluster, torn down on exit
    (also on Ctrl-C and errors: the groups are told to stop, the tasks cancelled, a
    LocalCluster closed)."""
    from gctool.trainer.channel import Hub
    from gctool.trainer.cluster import dask_client, master_host, place, require_dask
    from gctool.trainer.rounds import Master
    from gctool.trainer.schemes import group_data, partition_data

    require_dask()
    width = max(s.n for s in schemes)
    d = prob.model.size(prob.X.shape[1])
    bounds = partition_data(prob.X, prob.y, schemes)
    rows = {s.layout: s.rows(d) for s in schemes}
    processes = max(1, min(jobs or os.cpu_count() or 1, width))
    with dask_client(scheduler, processes) as client:
        hub = Hub(master_host(scheduler))
        placement = None
        try:
            placement = place(client, width, hub, prob.model, prob.N,
                              lambda members: group_data(prob.X, prob.y, bounds, rows, members))
            master = Master(hub, placement, wait, tick)
            master.connect(CONNECT_S + wait)
            info = Cluster(scheduler, len(client.scheduler_info().get("workers", {})),
                           placement.groups, f"{hub.address[0]}:{hub.address[1]}")
            yield master, info
        finally:
            hub.close()
            if placement is not None:
                _end_tasks(client, placement.futures)


def _end_tasks(client: Any, futures: list[Any]) -> None:
    """The resident tasks return once told to stop; cancel any that did not (a remote
    cluster keeps running after the run)."""
    from distributed import wait

    with contextlib.suppress(Exception):
        wait(futures, timeout=5)
    with contextlib.suppress(Exception):
        client.cancel([f for f in futures if not f.done()], force=True)


def _paths(schemes: list[Scheme], record: str | os.PathLike[str] | None,
           folder: str) -> list[Path]:
    """Where each scheme's trace goes: ``record`` for the first code file, its siblings for
    the others; a temporary folder without ``record``."""
    out = []
    for i, s in enumerate(schemes):
        suffix = ("" if i == 0 else f"file{i + 1}") if isinstance(s, Coded) else \
            (f"uncoded-n{s.n}" if s.contender.kind == "uncoded" else f"ignore-n{s.n}-s{s.s}")
        if record is None:
            out.append(Path(folder) / f"trace-{suffix or 'file1'}.csv")
        else:
            out.append(Path(record) if not suffix else rec.sibling(record, suffix))
    return out


def _rows(schemes: list[Scheme], logs: list[Any], injected: list[np.ndarray], info: Problem,
          record: str | os.PathLike[str] | None, seed: int) -> list[Any]:
    from gctool._files import atomic_write

    with tempfile.TemporaryDirectory(prefix="gctool-train-") as folder:
        paths = _paths(schemes, record, folder)
        out = []
        for scheme, log, delays, path in zip(schemes, logs, injected, paths, strict=True):
            if log.rounds:
                atomic_write(path, rec.trace_csv(log, delays))
            predicted = _predict(scheme, log, path, seed, record is not None) \
                if log.rounds >= 2 else None
            out.append(row(scheme, log, info,
                           os.fspath(path) if record is not None and log.rounds else None,
                           predicted))
        return out


def _predict(scheme: Scheme, log: Any, path: Path, seed: int, keep: bool) -> Prediction:
    """``gctool simulate`` on the recorded trace of ``scheme``: its row's median and mean."""
    from gctool.sim.delays import parse_delay
    from gctool.sim.run import simulate

    label, code = scheme.origin
    own = isinstance(scheme, Coded)
    report = simulate([(label, code)], parse_delay(f"trace:{path}"), iterations=log.rounds,
                      seed=seed, baselines=not own)
    found = report.rows[0] if own else next(r for r in report.rows if r["name"] == scheme.name)
    measured = float(np.median(log.durations()))
    p50 = float(found["p50"]["value"])
    command = (f"gctool simulate {label} --delay trace:{path} --iterations {log.rounds} "
               f"--seed {seed}" + (" --no-baselines" if own else "")) if keep else None
    return Prediction(p50, float(found["mean"]["value"]),
                      p50 / measured - 1 if measured > 0 else float("nan"), command)
