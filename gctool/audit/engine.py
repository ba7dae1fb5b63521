"""Argument checks shared by the audits (the size s, set budgets).

The enumeration engine itself is :mod:`gctool.audit.sweep` (sources x kernels -> summaries,
folded in order), run by :func:`gctool.engine.parallel.run_ordered` or a
:class:`gctool.audit.distributed.DaskRunner`, over :mod:`gctool.engine.enumeration` (ranked,
chunked enumeration) and :mod:`gctool.audit.symmetry` (rotations, row classes).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from gctool.errors import BudgetExceeded, InvalidInput
from gctool.limits import DEFAULT_MAX_SETS

__all__ = ["DEFAULT_MAX_SETS", "Progress", "check_budget", "check_s"]

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
