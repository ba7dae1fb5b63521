"""Argument checks shared by the audits (the size s, set budgets).

The enumeration engine itself is :mod:`gctool.engine`; the audits' budgets and limits come
from :mod:`gctool.limits`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from gctool.errors import BudgetExceeded, InvalidInput

Progress = Callable[[int, int], None]


def check_s(s: int, n: int, what: str = "s", allow_all: bool = False) -> None:
    top = n if allow_all else n - 1
    if isinstance(s, bool) or not isinstance(s, int | np.integer) or not 0 <= s <= top:
        rel = "<=" if allow_all else "<"
        raise InvalidInput(f"{what} must satisfy 0 <= {what} {rel} n = {n}, got {s}")


def check_budget(needed: int, max_sets: int, task: str) -> None:
    if needed > max_sets:
        raise BudgetExceeded(
            f"{task} needs {needed:,} straggler sets ({needed:.2g}), above the budget of "
            f"{max_sets:,}; raise it with --max-sets"
        )
