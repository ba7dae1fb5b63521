"""The one work budget of a ``gctool simulate`` run.

Before any round is simulated, and before the baselines are designed, the whole run is
estimated (:func:`gctool.sim.lineup.plan_run`, from each contender's
:meth:`~gctool.sim.contenders.Contender.cost`) and the sum is compared once with the work
budget (the run's :class:`gctool.budget.Budget`): a run above it is refused at once, in one
line that names the estimate, its largest part and ``max_work``.  The plan counts,
for the rounds of the run:

* every contender: drawing and sorting its arrival times, rounds x workers x (log2 n + 1) x
  ``SORT_STEP_COST`` (:func:`cell_cost`);
* a code's stopping rule (:func:`gctool.sim.stopping.rule.rule_cost`): its set-up (the SVD of
  B, or the sparse LU) and its checks per round, with the expected share of rounds near the
  tolerance as the generic decoder's search;
* SR-SGC and M-SGC: the schedule's replay (:func:`schedule_cost`: a round's choice and step,
  and for M-SGC rounds x workers x (T + 1) jobs in flight, T from the scheme's closed-form
  figures, so before anything is designed), one check of the per-round code per round, and
  the estimate's own replay of the rounds on the draws
  (:meth:`~gctool.sim.contenders.schedule.Schedule.replay_cost`);
* ``sgc="search"``: the draws of every candidate load, every candidate's replay of the bursty
  model (``SEARCH_STEP_COST`` per worker and window slot), and the winner's schedule at the
  largest delay among the candidates;
* ``train``: the training's gradients and messages (:func:`gctool.sim.training.training_cost`),
  with one decoder per round for the files' coded contenders (an upper bound).

What depends on the drawn delays beyond the estimate (rounds a fast stopping path hands to the
generic decoder, dual walks below the cap, the decoders the training needs for the baselines)
is charged as it is spent to one :class:`gctool.budget.Meter`, shared by every contender,
against the same budget: the run is refused as soon as the total passes it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gctool.budget import NS_PER_S, Budget, Meter, format_seconds
from gctool.wording import counted

REMEDY = ("simulate fewer `iterations`, smaller codes or codes of the group shape (FRC), or "
          "raise `max_work`")
#: one comparison of numpy's stable sort (the n arrival times of every round of every
#: contender are sorted, about log2(n) + 1 steps per worker with the draw), in ns
SORT_STEP_COST = 20
#: one step of the ``sgc="search"`` compiled replay of the bursty model (a worker of a round,
#: per window slot), in ns
SEARCH_STEP_COST = 10
#: a round of a sequential scheme's schedule (the waiting rule's choice, the scheme's step on
#: bit masks, the history), in ns
SCHEDULE_ROUND_COST = 15_000
#: gctool's waiting rule's search for the earliest admissible arrival (array operations), a
#: round, and per worker, in ns
EARLIEST_COST, ARRIVAL_COST = 25_000, 100
#: one worker's entry of an M-SGC job in flight updated by the step (the inlined loop), in ns
#: (the step of 2000 rounds nobody straggles, T = 2, n = 16-256: 145-225 ns an entry, minimum
#: to median of 5, under load; 125 ns read the schedule's run 1.2-1.6x its charge)
ENTRY_COST = 180


def alone(what: str) -> Meter:
    """The meter of a part of a simulation run on its own (a library call outside
    :func:`gctool.sim.run.simulate`, which shares one meter): the default budget."""
    return Budget.default().meter(what, REMEDY)


def cell_cost(rounds: int, n: int, sort: bool = True) -> int:
    """Drawing (and with ``sort``, sorting) the arrival times of ``n`` workers for ``rounds``
    rounds."""
    return rounds * n * ((max(n, 1).bit_length() if sort else 0) + 1) * SORT_STEP_COST


def schedule_cost(rounds: int, n: int, delay: int, multiplexed: bool = True,
                  authors: bool = False) -> int:
    """The schedule of a sequential scheme, replayed round by round in Python: every round the
    waiting rule's choice, the scheme's step on bit masks and the history
    (``SCHEDULE_ROUND_COST``); under gctool's rule (not ``authors``) the earliest admissible
    arrival, array operations on the n arrivals (``EARLIEST_COST`` + n x ``ARRIVAL_COST``);
    M-SGC (``multiplexed``) updates the entry of every worker for each of the delay T + 1 jobs
    in flight (``ENTRY_COST`` each).  SR-SGC's step has no per-worker entries."""
    per_round = SCHEDULE_ROUND_COST
    if not authors:
        per_round += EARLIEST_COST + n * ARRIVAL_COST
    if multiplexed:
        per_round += (delay + 1) * n * ENTRY_COST
    return rounds * per_round


@dataclass
class Plan:
    """The estimated parts of one run: (name, work)."""

    rounds: int
    items: list[tuple[str, float]] = field(default_factory=list)

    def add(self, name: str, work: float) -> None:
        self.items.append((name, float(work)))

    @property
    def total(self) -> float:
        return sum(w for _, w in self.items)

    def check(self, budget: Budget) -> None:
        """Refuse the run (one line, exit 2) when the estimate is above the work budget."""
        if not self.items:
            return
        name, most = max(self.items, key=lambda item: item[1])
        budget.check_work(f"simulating {counted(len(self.items), 'part')} for "
                          f"{self.rounds:,} rounds "
                          f"(the largest, {name}: about {format_seconds(most / NS_PER_S)})",
                          self.total, REMEDY)
