"""The part of ``gctool train`` that runs on the Dask workers: one resident task per Dask
worker (a *group* of logical workers) that connects back to the master and then computes and
sends coded messages round after round.

Why resident tasks and not one Dask task per message: a Dask task costs several milliseconds
of scheduling (tens per round at n = 16 on two cores, see docs/train.md), while a message on
an open connection costs well under a millisecond.  So Dask places the groups, holds their
data (the task's arguments, sent once; a task that Dask reschedules after its worker died
gets them again) and restarts them, and every round travels on one TCP connection per group
(``multiprocessing.connection``: authenticated with a per-run key, TCP_NODELAY).

Protocol (tuples; master -> group):

* ``("run", run, rows, delays, trivial)``: the rows of the group's logical workers for the next
  scheme (:class:`Row`), their injected delays in seconds (round -> per-worker array, in the
  order of ``rows``), and ``trivial`` (send zero messages without computing: the rounds that
  measure the cluster's own overhead);
* ``("round", run, r, w)``: compute round ``r`` at the parameters ``w``.  Every logical worker
  computes its message, then holds it for its injected delay and sends it; a new ``round`` or
  ``run`` cancels whatever has not been sent yet (the stragglers the master no longer needs);
* ``("stop",)``: end the task.

group -> master: ``("hello", group, pid)`` once, then ``("msg", run, r, i, message, compute_s)``
for logical worker ``i``, or ``("batch", [msg, ...])`` for several that are due at once.

Only numpy and the standard library are imported here; the model
(:mod:`gctool.trainer.workload`) brings what its gradient needs.
"""

from __future__ import annotations

import heapq
import os
import socket
import time
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Row:
    """What logical worker ``worker`` sends in one scheme: ``coef[j, u]`` times piece u of the
    gradient of partition ``parts[j]`` of ``layout``, summed (m pieces of width ``width``)."""

    worker: int
    layout: str
    parts: tuple[int, ...]
    coef: np.ndarray  # (len(parts), m)
    width: int


def nodelay(conn: Any) -> None:
    """Send small messages at once (no Nagle delay: 40 ms per round otherwise)."""
    sock = socket.socket(fileno=os.dup(conn.fileno()))
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    finally:
        sock.close()


def message(row: Row, model: Any, data: dict[tuple[str, int], tuple[np.ndarray, np.ndarray]],
            samples: int, w: np.ndarray) -> np.ndarray:
    """The coded message of ``row`` at parameters ``w``: its combination of the partition
    gradients of the mean loss over ``samples`` samples (``model.gradient``,
    :mod:`gctool.trainer.workload`)."""
    G = np.array([model.gradient(*data[(row.layout, j)], w, samples) for j in row.parts]
                 ).reshape(len(row.parts), len(w))
    m = row.coef.shape[1]
    if m == 1:
        return np.asarray(row.coef[:, 0] @ G)
    padded = np.zeros((len(row.parts), m * row.width))
    padded[:, : G.shape[1]] = G
    return np.asarray(np.einsum("pu,puw->w", row.coef, padded.reshape(len(row.parts), m,
                                                                      row.width)))


class _Group:
    """State of one resident task between messages."""

    def __init__(self, conn: Any, model: Any, samples: int,
                 data: dict[tuple[str, int], tuple[np.ndarray, np.ndarray]]) -> None:
        self.conn, self.model, self.samples, self.data = conn, model, samples, data
        self.run = -1
        self.rows: list[Row] = []
        self.delays: np.ndarray = np.zeros((0, 0))
        self.trivial = False
        self.pending: list[tuple[float, int, int, Any]] = []  # (due, seq, worker, payload)
        self.seq = 0

    def handle(self, msg: tuple[Any, ...]) -> bool:
        """Act on one master message; False on stop."""
        if msg[0] == "stop":
            return False
        self.pending.clear()  # a new run or round cancels what was not sent
        if msg[0] == "run":
            _, self.run, self.rows, self.delays, self.trivial = msg
        elif msg[0] == "round" and msg[1] == self.run:
            self.start(int(msg[2]), np.asarray(msg[3]))
        return True

    def start(self, r: int, w: np.ndarray) -> None:
        """Compute every logical worker's message (one after another, as one process does),
        each held from its own end of computing for its injected delay; then send what is
        due."""
        for j, row in enumerate(self.rows):
            t0 = time.perf_counter()
            if self.trivial:
                out = np.zeros(row.width, dtype=row.coef.dtype)
            else:
                out = message(row, self.model, self.data, self.samples, w)
            t1 = time.perf_counter()
            due = t1 + float(self.delays[r, j]) if r < len(self.delays) else t1
            self.seq += 1
            heapq.heappush(self.pending, (due, self.seq, row.worker,
                                          ("msg", self.run, r, row.worker, out, t1 - t0)))
        self.flush()

    def flush(self) -> None:
        """Send every message that is due: one alone, several in one ``("batch", [...])``
        (one write and one wake-up of the master instead of several)."""
        now = time.perf_counter()
        due = []
        while self.pending and self.pending[0][0] <= now:
            due.append(heapq.heappop(self.pending)[3])
        if len(due) == 1:
            self.conn.send(due[0])
        elif due:
            self.conn.send(("batch", due))

    def timeout(self) -> float | None:
        if not self.pending:
            return None
        return max(0.0, self.pending[0][0] - time.perf_counter())


def _secede() -> None:
    """Leave the Dask worker's thread pool: the task runs for the whole training, and a group
    that Dask reschedules here after its own worker died must start at once, not queue
    behind it."""
    try:
        from distributed import secede

        secede()
    except (ImportError, ValueError):  # not in a Dask worker thread (tests call serve directly)
        pass


def serve(address: tuple[str, int], authkey: bytes, group: int, model: Any, samples: int,
          data: dict[tuple[str, int], tuple[np.ndarray, np.ndarray]]) -> str:
    """The resident task of ``group``: connect to the master at ``address`` and serve rounds
    until it says stop or goes away.  Returns a one-line summary."""
    from multiprocessing.connection import Client

    _secede()
    try:
        conn = Client(address, authkey=authkey)
    except (OSError, EOFError) as exc:  # the master is gone (its run ended or failed)
        return f"group {group}: master unreachable ({exc})"
    served = 0
    try:
        nodelay(conn)
        from gctool.sim.problem import PROBLEMS  # noqa: F401 - imported before the first round

        conn.send(("hello", group, os.getpid()))
        state = _Group(conn, model, samples, data)
        while True:
            if conn.poll(state.timeout()):
                msg = conn.recv()
                served += msg[0] == "round"
                if not state.handle(msg):
                    break
            state.flush()
    except (OSError, EOFError):  # the master went away: nothing left to serve
        return f"group {group}: master disconnected after {served} rounds"
    finally:
        conn.close()
    return f"group {group}: served {served} rounds"
