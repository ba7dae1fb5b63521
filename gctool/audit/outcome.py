"""What one attack method found, before it becomes an :class:`~gctool.reports.AttackReport`.

Worst mode: ``error <= true worst <= upper`` (``upper`` None when no bound is known); ``exact``
means the value is proved to be the worst case.  Threshold mode: ``lower <= T <= upper`` where
``upper`` is the size of a verified witness set; ``exact`` means ``lower == upper``.
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
    checked: int = 0  # straggler sets (or search nodes) evaluated
    total: int = 0  # C(n, s)
    upper: float | None = None  # proven upper bound on the worst raw error
    upper_source: str = ""
    notes: list[str] = field(default_factory=list)
    #: the work budget stopped the search that found it (``auto`` keeps the best so far)
    budget_stopped: bool = False

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


@dataclass
class ThresholdOutcome:
    threshold: int | None  # best known value: the witness size (None: no set exceeds)
    stragglers: list[int] | None
    error: float | None  # raw error of the witness
    exact: bool
    method: str
    lower: int = 0  # proven: no straggler set smaller than this exceeds the limit
    checked: int = 0
    total: int = 0
    resolution: float | None = None  # MILP: errors below this count as decodable
    notes: list[str] = field(default_factory=list)

    @property
    def upper(self) -> int | None:
        return self.threshold
