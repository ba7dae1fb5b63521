"""The report of ``gctool train`` (:class:`TrainReport`) and how its rows are computed from
the runs' logs: time per round with intervals (:mod:`gctool.sim.stats`), time and rounds to the
target loss, the ``check`` errors, lost workers, and what ``gctool simulate`` predicts from
the recorded trace."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gctool.limits import GRADIENT_CHECK_RTOL as CHECK_TOL
from gctool.reports import NOT_JSON, Report
from gctool.trainer.rounds import RunLog


@dataclass
class Problem(Report):
    """The problem trained."""

    kind: str  # lsq | logistic | mlp
    data: str | None  # the ``data`` file (None: gctool's synthetic problem)
    samples: int
    features: int
    parameters: int  # the gradient's length
    step: float
    loss_star: float  # mlp: the optimal loss of logistic regression on the same data
    initial_loss: float
    gap: float
    target: float  # loss* + gap (initial loss - loss*)


@dataclass
class Cluster(Report):
    """Where the run ran."""

    scheduler: str | None  # None: a LocalCluster started for the run
    dask_workers: int
    groups: list[list[int]]  # logical workers of each resident task, one per Dask worker
    master: str  # the address the resident tasks connected to


@dataclass
class Overhead(Report):
    """The cluster's own time per round: rounds with no injected delay whose workers send zero
    messages without computing (seconds)."""

    scheme: str
    n: int
    rounds: int
    mean: dict[str, Any]
    p50: dict[str, Any]
    p99: dict[str, Any]
    send_p50: float  # master: the round's message written to every group
    wait_p50: float  # sent -> the master holds a decodable set
    step_p50: float  # decodable -> decoded, stepped (the next round can go)


@dataclass
class Check(Report):
    """``check``: the decoded gradient against the full gradient computed on the side."""

    rounds: int
    max_relative_to_partials: float  # max ||g_hat - g|| / sum_j ||g_j|| over the rounds
    max_relative_to_full: float | None  # max ||g_hat - g|| / ||g|| where meaningful
    rounds_relative_to_full: int  # rounds where ||g|| >= 1e-3 sum_j ||g_j||
    failed_rounds: list[int]  # 1-based rounds decoded exactly but above the tolerance
    tolerance: float


@dataclass
class Prediction(Report):
    """``gctool simulate`` replaying this scheme's recorded trace."""

    p50: float
    mean: float
    relative_error: float  # predicted p50 / measured p50 - 1
    command: str | None  # the simulate command that reproduces it (with ``record``)


@dataclass
class LostEvent(Report):
    round: int  # 1-based
    group: int
    workers: list[int]
    event: str  # lost | joined
    at: float  # seconds since the scheme's run began


@dataclass
class TrainRow(Report):
    """One scheme's run."""

    name: str
    kind: str  # code | hetero | uncoded | ignore (the simulator's contender kinds)
    n: int
    s: int
    load: float
    rounds: int
    reached: bool
    rounds_to_target: int | None
    time_to_target: float | None  # seconds from the first dispatch
    final_loss: float | None
    mean: dict[str, Any]  # time per round (s), 95% interval
    p50: dict[str, Any]
    p99: dict[str, Any]
    wait_p50: float  # dispatch -> decodable, median (s)
    exact_fraction: float
    workers_used_mean: float
    check: Check | None
    events: list[LostEvent]
    predicted: Prediction | None
    trace: str | None  # the ``record`` file of this scheme
    percentiles: list[float]  # time per round at 0, 1, ..., 100 %
    curve: dict[str, list[float]]  # "time", "loss_gap": loss - loss* after each round


@dataclass
class TrainReport(Report):
    problem: Problem
    delay: str
    time_scale: float  # seconds of injected delay per unit of the delay model
    iterations: int  # most rounds per scheme
    seed: int
    cluster: Cluster
    overhead: Overhead | None
    rows: list[TrainRow]
    notes: list[str] = field(default_factory=list)
    ok: bool = True  # every code file reached the target (and passed ``check``)
    method: str = "measured"
    #: the SVG plot the call wrote, {"path", "bytes"} (not part of the JSON document)
    plot: dict[str, Any] | None = field(default=None, metadata=NOT_JSON)


def overhead(log: RunLog) -> Overhead:
    from gctool.sim import stats

    d = log.durations()
    summary = stats.summary(d)
    start, sent = np.asarray(log.start[: log.rounds]), np.asarray(log.sent[: log.rounds])
    dec, end = np.asarray(log.decodable), np.asarray(log.end)
    return Overhead(log.name, log.n, log.rounds, summary["mean"], summary["p50"],
                    summary["p99"], float(np.median(sent - start)),
                    float(np.median(dec - sent)), float(np.median(end - dec)))


def check(log: RunLog) -> Check | None:
    if not log.error_partials:
        return None
    full = [e for e in log.error_full if e is not None]
    failed = [r + 1 for r, (e, ok) in enumerate(zip(log.error_partials, log.exact, strict=False))
              if ok and e > CHECK_TOL]
    return Check(len(log.error_partials), float(max(log.error_partials)),
                 float(max(full)) if full else None, len(full), failed, CHECK_TOL)


def _thin(n: int, limit: int = 300) -> np.ndarray:
    return np.unique(np.linspace(0, n - 1, min(limit, n)).round().astype(int)) if n else \
        np.zeros(0, int)


def row(scheme: Any, log: RunLog, problem: Problem, trace: str | None,
        predicted: Prediction | None) -> TrainRow:
    from gctool.sim import stats

    d = log.durations()
    summary = stats.summary(d) if len(d) else {k: {"value": None, "low": None, "high": None}
                                                for k in ("mean", "p50", "p99")}
    ends = np.asarray(log.end)
    keep = _thin(len(log.loss))
    reached = log.reached is not None
    c = scheme.contender
    return TrainRow(
        name=c.name, kind=c.kind, n=c.n, s=c.s, load=c.load, rounds=log.rounds,
        reached=reached, rounds_to_target=log.reached,
        time_to_target=float(ends[log.reached - 1]) if reached and log.reached else None,
        final_loss=log.loss[-1] if log.loss else None,
        mean=summary["mean"], p50=summary["p50"], p99=summary["p99"],
        wait_p50=float(np.median(np.asarray(log.decodable) - np.asarray(log.start[: log.rounds])))
        if log.rounds else 0.0,
        exact_fraction=float(np.mean(log.exact)) if log.exact else 0.0,
        workers_used_mean=float(np.mean([len(u) for u in log.used])) if log.used else 0.0,
        check=check(log),
        events=[LostEvent(e["round"] + 1, e["group"], e["workers"], e["event"], e["at"])
                for e in log.events],
        predicted=predicted, trace=trace,
        percentiles=[float(x) for x in np.quantile(d, np.linspace(0, 1, 101))] if len(d)
        else [],
        curve={"time": [float(ends[i]) for i in keep],
               "loss_gap": [float(log.loss[i] - problem.loss_star) for i in keep]})
