"""SR-SGC and M-SGC schedules: a round ends at the earliest arrival (at least one) after which
declaring every worker still running a straggler keeps the pattern inside the (B, W, λ) model
(or, under the authors' rule, at (1 + μ) x the first arrival when that pattern stays inside
it, else when everyone has arrived); the jobs decoded and the deadlines missed are recorded
round by round.  A worker sends one vector per mini-task slot of a round (SR-SGC: one;
M-SGC: delay + 1), which pays the run's link."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from gctool.model import GradientCode
from gctool.sim.contenders.base import Contender, Run, Setting, traits

if TYPE_CHECKING:
    from gctool.sequential.sgc import MSGC, SRSGC
    from gctool.sim.estimators import Estimator


#: the history entries (rounds x (W - 1)) above which :meth:`Schedule.probes` does not replay the
#: run's rounds: each round reads the model's last W - 1 rounds (about 0.5 us an entry in
#: Python), so at W = 10,000 the replay cost the estimate about what the run's schedule costs
#: (m-sgc n=8, 100,000 rounds: 8 min before the refusal); above it the rounds count as sets of
#: unknown size (at all n workers), as without the draws
REPLAY_ENTRIES = 2_000_000


class Schedule(Contender):
    kind = "sgc"

    def __init__(self, code: GradientCode, label: str) -> None:
        super().__init__(label, code.n, np.full(code.n, float(code.params.get("load", 0.0))),
                         s=code.s, delay=int(code.params.get("delay", 0)), code=code)
        self.matrix = code
        self.multiplexed = traits(code).multiplexed

    @property
    def message_size(self) -> float:
        """Gradient vectors a worker uploads per round (one per mini-task slot)."""
        return float(self.delay + 1) if self.multiplexed else 1.0

    def run(self, times: np.ndarray, setting: Setting) -> Run:
        at = setting.deliver(times, self.message_size)
        scheme = self._scheme(len(at), setting)
        return replay(scheme, at, _authors(self.n, setting.mu) if setting.mu is not None
                       else _gctool(self.n, at))

    def _scheme(self, rounds: int, setting: Setting) -> SRSGC | MSGC:
        """The schedule of the file on the fast decodability oracle, held to the budget."""
        from gctool.sequential.schedule import scheme_of

        scheme = scheme_of(self.matrix, setting.rule(self.matrix).decodes_mask)
        self._charge(scheme, rounds, setting)
        return scheme

    def _charge(self, scheme: Any, rounds: int, setting: Setting) -> None:
        """Charge, before it starts, the schedule's updates to the run's meter (or alone
        against the default budget): every round's choice and step, and for M-SGC the entries
        of the jobs in flight (the delay T + 1 of them) for every worker, in Python
        (:func:`gctool.sim.budget.schedule_cost`)."""
        from gctool.sim.budget import alone, schedule_cost

        delay = int(getattr(scheme, "delay", 0))
        what = (f"simulating the {self.name} schedule ({rounds:,} rounds x {self.n} workers x "
                f"{delay + 1:,} jobs in flight)")
        (setting.meter or alone(what)).charge(
            schedule_cost(rounds, self.n, delay, self.multiplexed, setting.mu is not None), what)

    def probes(self, rounds: int, setting: Setting) -> int | np.ndarray:
        """The sets of workers the schedule's decodes ask, read off the run's draws when they
        are known, each distinct set once at its size; else ``rounds`` sets of unknown size.
        The straggler patterns and the scheme's steps follow from the draws and the
        (B, W, λ) model alone, not from the verdicts: SR-SGC (a job's delivered workers with
        its reattempts, bit masks) is replayed with an oracle that records the sets it is
        asked; M-SGC's D2 groups are counted as the workers outside each round's straggler
        pattern (the waiting rule's choice replayed on the model), as its step's per-worker
        entries would cost the estimate the schedule's own work.  A replay of more than
        :data:`REPLAY_ENTRIES` history entries is not made (``rounds`` sets of unknown size)."""
        from gctool.sequential.model import popcount
        from gctool.sequential.schedule import model_of, scheme_of

        if setting.times is None or not self._replays(rounds, setting):
            return rounds
        model = model_of(self.matrix)
        at = setting.deliver(setting.times(self.loads), self.message_size)
        choose = (_authors(self.n, setting.mu) if setting.mu is not None
                  else _gctool(self.n, at))
        if not self.multiplexed:
            asked: set[int] = set()

            def record(mask: int) -> bool:
                asked.add(mask)
                return True

            replay(scheme_of(self.matrix, record), at, choose)
            return np.array([popcount(mask) for mask in asked], dtype=np.int64)
        history: tuple[int, ...] = ()
        patterns = set()
        for r, row in enumerate(at):
            S = choose(r, row, history, model)[2]
            patterns.add(S)
            history = model.push(history, S)
        return np.array([self.n - popcount(S) for S in patterns], dtype=np.int64)

    def _replays(self, rounds: int, setting: Setting) -> bool:
        """Whether :meth:`probes` replays the run's rounds: the draws are known and the
        history entries are at most :data:`REPLAY_ENTRIES`."""
        from gctool.sequential.schedule import model_of

        return (setting.times is not None
                and rounds * (model_of(self.matrix).window - 1) <= REPLAY_ENTRIES)

    def replay_cost(self, rounds: int, setting: Setting) -> int:
        """The estimate's own replay (:meth:`probes`), spent before the run: every round the
        waiting rule's choice and the history, and SR-SGC's step on bit masks (M-SGC's, with
        its per-worker entries, is not replayed), as :func:`gctool.sim.budget.schedule_cost`
        prices them without entries; nothing when the rounds are not replayed."""
        from gctool.sim.budget import schedule_cost

        if not self._replays(rounds, setting):
            return 0
        return schedule_cost(rounds, self.n, 0, False, setting.mu is not None)

    def cost(self, rounds: int, setting: Setting) -> float:
        from gctool.sim.budget import schedule_cost
        from gctool.sim.stopping.rule import rule_cost

        return (super().cost(rounds, setting)
                + schedule_cost(rounds, self.n, self.delay, self.multiplexed,
                                setting.mu is not None)
                + self.replay_cost(rounds, setting)
                + rule_cost(self.matrix, 0, 0, self.probes(rounds, setting)))

    def jobs_done(self, run: Run) -> int:
        return len(run.jobs)

    def lazy_rule(self) -> str | None:
        return None  # sequential schemes are not made lazy

    def steps(self, run: Run) -> list[tuple[int, int, Any]]:
        return [(job, r, entry) for job, r, ok, entry in run.jobs if ok]

    def estimator(self, problem: Any, run: Run, lazy: float | None, sparsifier: Any,
                  seed: int) -> Estimator:
        from gctool.sim.estimators import JobEstimator, MultiplexedEstimator

        made = MultiplexedEstimator if self.multiplexed else JobEstimator
        return made(self.name, self.matrix, problem, None, sparsifier, seed,
                    slots=int(self.message_size))


Choose = Callable[[int, np.ndarray, tuple[int, ...], Any], tuple[float, np.ndarray, int]]


def replay(scheme: Any, times: np.ndarray, choose: Choose) -> Run:
    """Run ``scheme`` round by round; ``choose(r, row, history, model)`` gives round r's
    duration, the workers used and the straggler mask declared to the scheme."""
    model = scheme.model
    state: Any = scheme.initial()
    history: tuple[int, ...] = ()
    run = Run(np.empty(len(times)), exact=np.ones(len(times), bool))
    for r, row in enumerate(times):
        run.durations[r], used, S = choose(r, row, history, model)
        run.used.append(used)
        state, done = scheme.step(r, state, history, S)
        history = model.push(history, S)
        for job, ok, entry in done:
            run.jobs.append((job, r, ok, entry))
            run.deadline_misses += not ok
    return run


def _gctool(n: int, times: np.ndarray) -> Choose:
    """gctool's rule: the earliest arrival after which the pattern stays in the model."""
    from gctool.sequential.model import earliest_admissible_sorted, from_bits

    order = np.argsort(times, axis=1, kind="stable")

    def choose(r: int, row: np.ndarray, history: tuple[int, ...], model: Any
               ) -> tuple[float, np.ndarray, int]:
        p = max(1, earliest_admissible_sorted(model, history, order[r]))
        late = np.ones(n, bool)
        late[order[r, :p]] = False
        return float(row[order[r, p - 1]]), order[r, :p], from_bits(late)

    return choose


def _authors(n: int, mu: float) -> Choose:
    """The authors' rule: the workers slower than (1 + mu) x the fastest straggle, unless that
    pattern leaves the model (then the round waits for everyone); a round in which nobody is
    late ends at the last arrival."""
    from gctool.sequential.model import from_bits

    everyone = np.arange(n)

    def choose(r: int, row: np.ndarray, history: tuple[int, ...], model: Any
               ) -> tuple[float, np.ndarray, int]:
        wait = float(row.min()) * (1.0 + mu)
        late = row > wait
        S = from_bits(late)
        if model.allows(history, S):
            return min(wait, float(row.max())), np.flatnonzero(~late), S
        return float(row.max()), everyone, 0  # the pattern would leave the model

    return choose
