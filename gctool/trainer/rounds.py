"""The master's loop of ``gctool train``: one scheme for up to R rounds on the placed groups.

A round: send ``(round, r, w)`` to every group (one small message per group: the data is on the
workers already), take messages as they arrive and stop as soon as the scheme can
(:meth:`gctool.trainer.schemes.Scheme.done`), combine them into the gradient, step, and send
the next round at once; the next round's message also cancels the stragglers of this one on
the workers.  The bookkeeping of a round (its loss, and with ``check`` the full gradient on the
side) is done after the next round was sent, while the workers compute, so it does not
lengthen the rounds.

Times are seconds of the master's monotonic clock since the run started: a worker's time in a
round is its message's arrival minus the round's dispatch (what ``record`` writes and what
``gctool simulate delay trace:PATH`` replays).

Faults: a group whose connection ends (its Dask worker process died) is a straggler in every
round until its resident task connects again (the master submits it again at once,
:meth:`~gctool.trainer.cluster.Placement.restart`, and Dask runs it on a live worker); rounds go on
as long as the others decode.  When every logical worker that is still connected has answered
and the round cannot end, the master waits up to ``wait`` seconds for lost groups to come back,
then stops with :class:`~gctool.trainer.cluster.ClusterError` naming the workers it lost; a
connected worker that does not answer ``wait`` seconds after its injected delay ran out stops
the run the same way.  Nothing waits without a bound.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gctool.trainer.cluster import ClusterError, Placement
from gctool.trainer.schemes import Scheme
from gctool.trainer.worker import Row

#: a ``check`` error relative to the full gradient is reported only in rounds where the full
#: gradient is at least this fraction of the sum of the partial gradients' norms (below it the
#: rounding of the partial sums alone is that large relative to the full gradient)
MEANINGFUL = 1e-3


@dataclass
class RunLog:
    """What one scheme did, round by round (times in seconds since its first dispatch)."""

    name: str
    n: int
    start: list[float] = field(default_factory=list)  # dispatch of round r
    sent: list[float] = field(default_factory=list)  # every group's message sent
    decodable: list[float] = field(default_factory=list)  # the master could stop waiting
    end: list[float] = field(default_factory=list)  # the step is done (next round may start)
    arrival: list[np.ndarray] = field(default_factory=list)  # (n,) nan: not arrived
    compute: list[np.ndarray] = field(default_factory=list)  # (n,) worker-side seconds
    lost: list[np.ndarray] = field(default_factory=list)  # (n,) bool: group disconnected
    used: list[list[int]] = field(default_factory=list)
    exact: list[bool] = field(default_factory=list)
    loss: list[float] = field(default_factory=list)  # after each round's step
    error_partials: list[float] = field(default_factory=list)  # ``check``, per round
    error_full: list[float | None] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)  # lost / rejoined groups
    reached: int | None = None  # rounds to the target loss

    @property
    def rounds(self) -> int:
        return len(self.end)

    def durations(self) -> np.ndarray:
        """Wall-clock time of each round: dispatch to the next dispatch (the last: to the end
        of its step)."""
        starts = np.asarray(self.start[: self.rounds])
        ends = np.append(starts[1:], self.end[-1]) if self.rounds else starts
        return np.asarray(ends - starts)


class Master:
    """Runs schemes on the connected groups of ``placement`` through ``hub``."""

    def __init__(self, hub: Any, placement: Placement, wait: float,
                 tick: Callable[[], None] | None = None) -> None:
        self.hub, self.placement, self.wait, self.tick = hub, placement, wait, tick
        self.run_id = 0
        self._setup: dict[int, tuple[Any, ...]] = {}
        self._round: tuple[Any, ...] | None = None

    # -- connections ------------------------------------------------------------------------
    def connect(self, timeout: float) -> None:
        """Wait until every group's resident task has connected."""
        deadline = time.monotonic() + timeout
        G = len(self.placement.groups)
        while len(self.hub.conns) < G:
            failure = self.placement.failed()
            if failure is not None:
                raise ClusterError(failure)
            left = deadline - time.monotonic()
            if left <= 0:
                missing = sorted(set(range(G)) - set(self.hub.conns))
                raise ClusterError(f"{len(missing)} of {G} resident tasks did not connect "
                                   f"within {timeout:g} s (groups {missing}); are the Dask "
                                   f"workers able to reach this machine at "
                                   f"{self.hub.address[0]}?")
            self.hub.wait(min(left, 0.5))

    def _members(self, g: int, n: int) -> list[int]:
        return [i for i in self.placement.groups[g] if i < n]

    def _broadcast_setup(self, rows: list[Row], delays: np.ndarray, trivial: bool) -> None:
        self.run_id += 1
        self._round = None
        self._setup = {}
        n = len(rows)
        for g in range(len(self.placement.groups)):
            members = self._members(g, n)
            self._setup[g] = ("run", self.run_id, [rows[i] for i in members],
                              np.ascontiguousarray(delays[:, members]), trivial)
            self.hub.send(g, self._setup[g])

    def _send_round(self, r: int, w: np.ndarray) -> None:
        self._round = ("round", self.run_id, r, w)
        for g in range(len(self.placement.groups)):
            self.hub.send(g, self._round)

    # -- one scheme ---------------------------------------------------------------------------
    def run(self, scheme: Scheme, problem: Any, w0: np.ndarray, delays: np.ndarray,  # noqa: PLR0913 (a run's settings)
            rounds: int, target: float | None, check: bool, trivial: bool = False,
            stop: bool = True) -> RunLog:
        """Up to ``rounds`` rounds of ``scheme`` from ``w0`` with the injected ``delays``
        (rounds x n seconds); records when the loss is first at most ``target`` (None: no
        target) and stops there when ``stop``.  ``trivial``: the workers send zero messages
        without computing and nothing is evaluated (the cluster's own overhead)."""
        d = len(w0)
        n = scheme.n
        self._broadcast_setup(scheme.rows(d), delays, trivial)
        log = RunLog(scheme.name, n)
        bounds = None
        if check and not trivial:
            from gctool.sim.problem import bounds_for

            bounds = bounds_for(problem.N, np.ones(scheme.parts))
        w = np.array(w0, dtype=np.float64)
        origin = time.perf_counter()
        pending: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        for r in range(rounds):
            log.start.append(time.perf_counter() - origin)
            self._send_round(r, w)
            log.sent.append(time.perf_counter() - origin)
            if pending is not None and not trivial:
                if self._account(log, problem, pending, bounds, target) and stop:
                    log.start.pop()
                    log.sent.pop()
                    return log
            g_hat = self._collect(scheme, r, delays, log, origin, d)
            step = problem.eta if not trivial else 0.0
            pending = (w, g_hat, w - step * g_hat)
            w = pending[2]
            log.end.append(time.perf_counter() - origin)
            if self.tick is not None:
                self.tick()
        if pending is not None and not trivial:
            self._account(log, problem, pending, bounds, target)
        return log

    def _account(self, log: RunLog, problem: Any, pending: tuple[np.ndarray, ...],
                 bounds: np.ndarray | None, target: float | None) -> bool:
        """The loss after the last step (and its gradient's error); True at the target."""
        w_used, g_hat, w_new = pending
        loss = problem.loss(w_new)
        log.loss.append(loss)
        if bounds is not None:
            parts = problem.partial_gradients(w_used, bounds)
            full = parts.sum(axis=0)
            err = float(np.linalg.norm(g_hat - full))
            scale = float(np.linalg.norm(parts, axis=1).sum())
            norm = float(np.linalg.norm(full))
            log.error_partials.append(err / scale if scale > 0 else err)
            log.error_full.append(err / norm if norm >= MEANINGFUL * scale and norm > 0
                                  else None)
        if target is not None and loss <= target and log.reached is None:
            log.reached = len(log.loss)
            return True
        return False

    def _collect(self, scheme: Scheme, r: int, delays: np.ndarray, log: RunLog,
                 origin: float, d: int) -> np.ndarray:
        n = scheme.n
        arrival = np.full(n, np.nan)
        compute = np.full(n, np.nan)
        msgs: dict[int, np.ndarray] = {}
        start = log.start[-1] + origin
        hung_at = start + float(delays[r].max()) + self.wait
        waiting_since: float | None = None
        lost_now = np.zeros(n, bool)
        while not (msgs and scheme.done(list(msgs))):
            now = time.perf_counter()
            live = [i for i in range(n) if i not in msgs
                    and self.placement.group_of(i) in self.hub.conns]
            if live:
                waiting_since = None
                if now > hung_at:
                    raise ClusterError(self._hung(scheme, r, live, msgs))
                timeout = min(hung_at - now, 1.0)
            else:
                waiting_since = now if waiting_since is None else waiting_since
                if now - waiting_since > self.wait:
                    raise ClusterError(self._lost(scheme, r, msgs))
                timeout = min(waiting_since + self.wait - now, 1.0)
            failure = self.placement.failed()
            if failure is not None:
                raise ClusterError(failure)
            ev = self.hub.wait(max(timeout, 0.0))
            got = time.perf_counter() - origin
            for g in ev.lost:
                members = self._members(g, n)
                lost_now[members] = True
                self.placement.restart(g)
                log.events.append({"round": r, "group": g, "workers": members,
                                   "event": "lost", "at": got})
            for g in ev.joined + ev.replaced:
                self.hub.send(g, self._setup[g])
                if self._round is not None:
                    self.hub.send(g, self._round)
                if g in ev.joined:
                    log.events.append({"round": r, "group": g, "workers": self._members(g, n),
                                       "event": "joined", "at": got})
            for m in ev.messages:
                if m[0] != "msg" or m[1] != self.run_id or m[2] != r or not 0 <= m[3] < n:
                    continue  # a straggler of an earlier round or run
                i = int(m[3])
                if i not in msgs:
                    msgs[i] = np.asarray(m[4])
                    arrival[i], compute[i] = got - log.start[-1], float(m[5])
        log.decodable.append(time.perf_counter() - origin)
        order = list(msgs)  # in the order they arrived
        g_hat, exact, used = scheme.combine(order, np.array([msgs[i] for i in order]), d)
        log.arrival.append(arrival)
        log.compute.append(compute)
        log.lost.append(lost_now | np.array([self.placement.group_of(i) not in self.hub.conns
                                             for i in range(n)]))
        log.used.append(used)
        log.exact.append(exact)
        return g_hat

    def _lost_workers(self, n: int) -> list[int]:
        return [i for i in range(n) if self.placement.group_of(i) not in self.hub.conns]

    def _lost(self, scheme: Scheme, r: int, msgs: dict[int, Any]) -> str:
        lost = self._lost_workers(scheme.n)
        return (f"{scheme.name}, round {r + 1}: lost logical workers {_ranges(lost)} (their "
                f"Dask worker process went away and no replacement connected within "
                f"{self.wait:g} s, `wait`); the {len(msgs)} that answered cannot decode")

    def _hung(self, scheme: Scheme, r: int, live: list[int], msgs: dict[int, Any]) -> str:
        lost = self._lost_workers(scheme.n)
        gone = f"; lost: {_ranges(lost)}" if lost else ""
        return (f"{scheme.name}, round {r + 1}: logical workers {_ranges(live)} did not answer "
                f"within {self.wait:g} s (`wait`) after their injected delay{gone}; the "
                f"{len(msgs)} that answered cannot decode")


def _ranges(items: list[int]) -> str:
    """``0-3, 6`` for [0, 1, 2, 3, 6]."""
    out: list[str] = []
    for i in sorted(items):
        if out and out[-1].split("-")[-1] == str(i - 1):
            out[-1] = f"{out[-1].split('-')[0]}-{i}"
        else:
            out.append(str(i))
    return ", ".join(out) if out else "none"
