"""``gctool train record PATH``: the measured rounds as a trace file that ``gctool simulate
delay trace:PATH`` reads (:mod:`gctool.sim.traces`).

One row per (round, logical worker) with the columns the reader needs, ``round``, ``worker``,
``started_s`` (the round's dispatch, seconds since the scheme's run began) and ``finished_s``
(the arrival of the worker's message at the master), and three more that the reader ignores:
``status``, ``injected_s`` (the delay injected into that worker) and ``compute_s`` (its
computing time measured on the worker).  A worker's time in a round is therefore what the
master saw: computing, injected delay, both directions of the network and the scheduling of
the worker's process.

A worker the master did not wait for was cancelled before it sent; its ``finished_s`` is then
*projected*: its injected delay plus the median of what the round's arrived workers took beyond
theirs, and never before the moment the master stopped waiting (it had not arrived by then):
status ``projected``, or ``lost`` when its process had died.  So a replay by ``simulate`` ends
every round where the master did, whatever the projection (a later arrival changes nothing).
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import numpy as np

from gctool.trainer.rounds import RunLog


def worker_times(log: RunLog, injected: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(rounds, n) times of every worker (arrived or projected) and their status codes
    (0 arrived, 1 projected, 2 lost)."""
    R = log.rounds
    times = np.empty((R, log.n))
    status = np.zeros((R, log.n), np.int8)
    for r in range(R):
        arr = log.arrival[r]
        got = ~np.isnan(arr)
        extra = float(np.median(arr[got] - injected[r, got])) if got.any() else 0.0
        ended = log.decodable[r] - log.start[r]  # it had not arrived by then
        late = np.maximum(injected[r] + max(extra, 0.0), np.nextafter(ended, np.inf))
        times[r] = np.where(got, arr, late)
        status[r] = np.where(got, 0, np.where(log.lost[r], 2, 1))
    return times, status


STATUS = ("arrived", "projected", "lost")


def trace_csv(log: RunLog, injected: np.ndarray) -> bytes:
    """The CSV text of ``log``'s rounds (see the module docs)."""
    times, status = worker_times(log, injected)
    out = io.StringIO()
    out.write("round,worker,started_s,finished_s,status,injected_s,compute_s\n")
    for r in range(log.rounds):
        start = log.start[r]
        for i in range(log.n):
            c = log.compute[r][i]
            out.write(f"{r},{i},{start:.9f},{start + times[r, i]:.9f},{STATUS[status[r, i]]},"
                      f"{injected[r, i]:.9f},{'' if np.isnan(c) else f'{c:.9f}'}\n")
    return out.getvalue().encode("ascii")


def sibling(path: str | os.PathLike[str], suffix: str) -> Path:
    """``run.csv`` -> ``run-SUFFIX.csv`` (the traces of the other schemes of a run)."""
    p = Path(path)
    ext = p.suffix or ".csv"
    return p.with_name(f"{p.stem if p.suffix else p.name}-{suffix}{ext}")
