"""What one attack method found, before it becomes an :class:`~gctool.reports.AttackReport`.

Worst mode: ``error <= true worst <= upper`` (``upper`` None when no bound is known); ``exact``
means the value is proved to be the worst case.  Threshold mode: ``lower <= T <= upper`` where
``upper`` is the size of a verified witness set; ``exact`` means ``lower == upper``.

A search the work budget stopped is labelled here, by :meth:`WorstOutcome.stopped` and
:meth:`ThresholdOutcome.stopped`: exact when what it proved before the stop settles the answer
(the error found reaches the proved upper bound; the proved lower bound on the threshold meets
the witness), heuristic otherwise, with a note that says which.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gctool.limits import REL_SLACK


@dataclass
class WorstOutcome:
    stragglers: list[int] | None
    error: float  # raw error of ``stragglers`` (a lower bound on the worst case)
    exact: bool
    method: str
    #: the method's own count (sets evaluated, bnb's nodes, the MILP's solves); a report's
    #: ``checked`` is :func:`gctool.audit.attack.options.checked_count` of it
    checked: int = 0
    total: int = 0  # C(n, s)
    upper: float | None = None  # proven upper bound on the worst raw error
    upper_source: str = ""
    notes: list[str] = field(default_factory=list)
    #: the work budget stopped the search that found it (``auto`` keeps the best so far)
    budget_stopped: bool = False
    #: what :meth:`stopped` said of it (also in ``notes``), for a report that keeps no notes of
    #: its own per search (a curve's points)
    stop_note: str = ""

    def tighten(self, upper: float | None, source: str, rtol: float = REL_SLACK) -> None:
        """Record a proven upper bound if it is better; close the sandwich when it meets."""
        if upper is None:
            return
        if self.upper is None or upper < self.upper:
            self.upper, self.upper_source = float(upper), source
        if self.upper is not None and self.error >= self.upper - rtol * max(1.0, self.upper):
            if not self.exact:
                self.notes.append(f"the error found reaches the upper bound ({source}), so it "
                                  "is the worst case")
            self.exact = True

    def stopped(self, why: str = "") -> None:
        """The work budget stopped the search (``why``: the refusal, with its leading space
        and parentheses): record it and say what the result is."""
        self.budget_stopped = True
        if self.exact:
            self.stop_note = (f"the work budget stopped the exact search{why}; the error found "
                              f"reaches the proved upper bound ({self.upper_source}), so the "
                              "result is exact")
        else:
            self.stop_note = (f"the work budget stopped the exact search{why}; the result is "
                              "the heuristic one found so far")
        self.notes.append(self.stop_note)


@dataclass
class ThresholdOutcome:
    threshold: int | None  # best known value: the witness size (None: no set exceeds)
    stragglers: list[int] | None
    error: float | None  # raw error of the witness
    exact: bool
    method: str
    lower: int = 0  # proven: no straggler set smaller than this exceeds the limit
    checked: int = 0  # the method's own count, as :attr:`WorstOutcome.checked`
    total: int = 0
    resolution: float | None = None  # MILP: errors below this count as decodable
    notes: list[str] = field(default_factory=list)
    #: the work budget stopped the search that found it (``auto`` keeps what it proved)
    budget_stopped: bool = False

    @property
    def upper(self) -> int | None:
        return self.threshold

    def settled(self, n: int) -> bool:
        """Whether the proved bounds meet: sets smaller than ``lower`` are proved not to exceed
        and the verified witness has ``lower`` stragglers (or no witness and ``lower`` > n: no
        set of any size exceeds)."""
        if self.threshold is None:
            return self.lower > n
        return self.lower >= self.threshold

    def stopped(self, n: int, why: str) -> None:
        """The work budget stopped the search (``why``: the refusal) of a code with ``n``
        workers: the result is what was proved before it, exact exactly when the bounds meet
        (:meth:`settled`), and the note says which."""
        self.budget_stopped = True
        self.exact = self.settled(n)
        t = self.threshold
        if self.exact and t is not None:
            self.notes.append(f"the work budget stopped the exact search ({why}) after it had "
                              f"proved the threshold: no set of fewer than {t} stragglers "
                              f"exceeds and the witness of {t} does, so the result is exact")
        elif self.exact:
            self.notes.append(f"the work budget stopped the exact search ({why}) after it had "
                              f"proved that no straggler set exceeds, so the result is exact")
        else:
            between = (f"{self.lower} <= threshold <= {t}" if t is not None
                       else f"threshold >= {self.lower}, no witness found")
            self.notes.append(f"the work budget stopped the exact search ({why}); the result "
                              f"is the heuristic one found so far: {between}")
