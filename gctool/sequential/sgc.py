"""The two sequential gradient codes of Krishnan, Ebrahimi and Khisti (ICLR 2023) as state
machines: SR-SGC (selective reattempt) and M-SGC (multiplexed).

Job t (the gradient of round t) starts in round t and must be decoded by the end of round
t + T.  A scheme is a pure transition function: ``plan(r, state, history)`` says which mini-task
of which job every worker runs in round r, ``step(r, state, history, S)`` applies the straggler
set S of round r and returns the next state and the jobs whose deadline is round r with whether
they decode and what was delivered for them (SR-SGC: the mask of workers; M-SGC: the D1 counts
and the D2 group masks).  The state never contains r, so exhaustive search can merge equal
states reached at different rounds (:mod:`gctool.sequential.verify`).  Jobs with negative index
do not exist (their state entries are ``None``); jobs never end, so a finite run is a prefix.

What follows the paper and what is gctool's choice:

* SR-SGC [KEK23; C: ``selective_repeat_sgc.py``]: each round every worker runs its task (its
  row of an (n, s)-GC) for the new job; if job d = r - B was missed by v > s workers in round d,
  v - s of those workers redo their job-d task in round r instead.  Job d decodes when >= n - s
  distinct workers delivered its task in rounds d and d + B.  *gctool's choice*: which v - s
  workers redo.  The authors take the lowest indices among the workers that missed job d;
  that is gctool's default (``selection="lowest"``).  The alternative ``"stragglers-first"``
  takes the workers that straggled in round d first (the burst rule forbids them to straggle
  again in round d + B), then the lowest other indices.  ``gctool verify`` proved both meet
  every deadline on every instance gctool's tests try (docs/sequential.md).
* M-SGC [KEK23; C: ``multiplexed_sgc.py``]: each round a worker runs W - 1 + B mini-tasks,
  slot m for job r - m.  Slots 0..W-2 run the worker's own uncoded D1 mini-tasks (W - 1 per
  job, in order); slot W-1+g runs the worker's row of the (n, λ)-GC on D2 group g if the
  worker already finished its W - 1 D1 mini-tasks of that job, else its next missing D1
  mini-task (a reattempt).  Job t decodes when every worker finished its D1 share and every
  D2 group decodes from the workers that delivered it.  gctool follows the authors' rule
  literally.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

from gctool.sequential.formulas import srsgc_s
from gctool.sequential.model import BurstyModel, History, members, popcount

Decodes = Callable[[int], bool]  # mask of workers that delivered -> can the GC decode?
Done = list[tuple[int, bool, Any]]  # (job, decoded, final entry) for jobs due this round
SELECTIONS = ("lowest", "stragglers-first")


@dataclass(frozen=True)
class Task:
    """One mini-task: ``part`` is "gc" (SR-SGC), "d1" or "d2" (M-SGC); ``index`` is the D1
    mini-task number or the D2 group."""

    job: int
    part: str
    index: int = 0

    def to_list(self) -> list[Any]:
        return [self.job, self.part, self.index]


Plan = list[list[Task | None]]  # plan[i][slot]


class SRSGC:
    """Selective-reattempt SGC over an (n, s)-GC whose decodability is ``decodes``."""

    name = "sr-sgc"

    def __init__(self, model: BurstyModel, decodes: Decodes, s: int | None = None,
                 selection: str = "lowest") -> None:
        if selection not in SELECTIONS:
            raise ValueError(f"selection must be one of {SELECTIONS}")
        self.model, self.decodes, self.selection = model, decodes, selection
        self.n, self.burst = model.n, model.burst
        self.s = srsgc_s(model.burst, model.window, model.lam) if s is None else s
        self.delay = model.burst
        self.slots = 1

    def initial(self) -> tuple[Any, ...]:
        return (None,) * self.burst  # delivered masks of jobs r-B..r-1

    def _redo(self, entry: int, history: History) -> int:
        missed = self.model.full & ~entry
        extra = popcount(missed) - self.s
        if extra <= 0:
            return 0
        order = members(missed)
        if self.selection == "stragglers-first" and len(history) >= self.burst:
            straggled = history[len(history) - self.burst]  # round r - B
            order = sorted(order, key=lambda i: (not (straggled >> i) & 1, i))
        chosen = 0
        for i in order[:extra]:
            chosen |= 1 << i
        return chosen

    def plan(self, r: int, state: tuple[Any, ...], history: History) -> Plan:
        entry = state[0]
        redo = 0 if entry is None else self._redo(entry, history)
        return [[Task(r - self.burst if (redo >> i) & 1 else r, "gc")] for i in range(self.n)]

    def step(self, r: int, state: tuple[Any, ...], history: History, S: int
             ) -> tuple[tuple[Any, ...], Done]:
        entry = state[0]
        redo = 0 if entry is None else self._redo(entry, history)
        alive = self.model.full & ~S
        fresh = alive & ~redo
        done: Done = []
        if entry is not None:
            final = entry | (redo & alive)
            done.append((r - self.burst, self.decodes(final), final))
        return state[1:] + (fresh,), done

    def key(self, state: tuple[Any, ...]) -> Hashable:
        return state


class MSGC:
    """Multiplexed SGC: D1 uncoded (W-1 mini-tasks per worker), D2 in B groups coded with an
    (n, λ)-GC whose decodability is ``decodes``.  ``d2``: whether the design has D2 data (its
    λ < n); None: the model's λ < n.  A design checked against another λ' keeps its own D2
    (with λ' = n a λ < n design still needs its D2 groups; a λ = n design has none to decode)."""

    name = "m-sgc"

    def __init__(self, model: BurstyModel, decodes: Decodes, d2: bool | None = None) -> None:
        self.model, self.decodes = model, decodes
        self.n, self.burst, self.window = model.n, model.burst, model.window
        self.d1 = model.window - 1
        self.delay = model.window - 2 + model.burst
        self.slots = self.d1 + self.burst
        self.needs_d2 = model.lam < model.n if d2 is None else d2

    def initial(self) -> tuple[Any, ...]:
        return (None,) * self.delay  # entries of jobs r-T..r-1: (d1 counts, d2 masks)

    def _fresh(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        return (0,) * self.n, (0,) * self.burst

    def _entries(self, state: tuple[Any, ...]) -> list[Any]:
        """Entry per slot m = 0..T (job r - m)."""
        return [self._fresh()] + [state[self.delay - m] for m in range(1, self.delay + 1)]

    def _task(self, r: int, m: int, i: int, entry: Any) -> Task | None:
        if entry is None:
            return None
        count = entry[0][i]
        if m < self.d1 or count < self.d1:
            return Task(r - m, "d1", count)
        return Task(r - m, "d2", m - self.d1)

    def plan(self, r: int, state: tuple[Any, ...], history: History) -> Plan:
        entries = self._entries(state)
        return [[self._task(r, m, i, entries[m]) for m in range(self.slots)]
                for i in range(self.n)]

    def step(self, r: int, state: tuple[Any, ...], history: History, S: int
             ) -> tuple[tuple[Any, ...], Done]:
        entries = self._entries(state)
        new: list[Any] = []
        for m, entry in enumerate(entries):
            if entry is None:
                new.append(None)
                continue
            counts, masks = list(entry[0]), list(entry[1])
            for i in range(self.n):  # the rule of _task, inlined (hot loop of the search)
                if (S >> i) & 1:
                    continue
                if m < self.d1 or counts[i] < self.d1:
                    counts[i] += 1
                else:
                    masks[m - self.d1] |= 1 << i
            new.append((tuple(counts), tuple(masks)))
        done: Done = []
        last = new[self.delay]
        if last is not None:
            done.append((r - self.delay, self._decodable(last), last))
        # keep jobs r-T+1..r (slot m = T-1..0), oldest first
        return tuple(new[m] for m in range(self.delay - 1, -1, -1)), done

    def _decodable(self, entry: Any) -> bool:
        counts, masks = entry
        if min(counts) < self.d1:
            return False
        return not self.needs_d2 or all(self.decodes(mask) for mask in masks)

    def key(self, state: tuple[Any, ...]) -> Hashable:
        return state
