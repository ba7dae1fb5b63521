"""Argument checks shared by the audits (the size s, a curve's sizes).

The enumeration engine itself is :mod:`gctool.engine`; the audits' budgets are
:class:`gctool.budget.Budget` values, their limits constants of :mod:`gctool.limits`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from gctool.errors import InvalidInput

Progress = Callable[[int, int], None]


def check_s(s: int, n: int, what: str = "s", allow_all: bool = False) -> None:
    top = n if allow_all else n - 1
    if isinstance(s, bool) or not isinstance(s, int | np.integer) or not 0 <= s <= top:
        name = f"`{what}`" if what.isidentifier() else what  # a parameter: named as such
        raise InvalidInput(f"{name} must be between 0 and {top} (n = {n}), got {s}",
                           param=what if what.isidentifier() else None)


def curve_sizes(n: int, max_s: int | None, sizes: Sequence[int] | None, top: int,
                allow_all: bool = True) -> list[int]:
    """The values of s of an error curve, increasing: 0..max_s (default ``top``), or the given
    ``sizes`` (in any order; a repeated size is computed once).  ``max_s`` and ``sizes``
    exclude each other; anything but integers in 0..n (0..n-1 unless ``allow_all``) is one
    line of InvalidInput."""
    if sizes is None:
        last = top if max_s is None else max_s
        check_s(last, n, "max_s", allow_all=allow_all)
        return list(range(last + 1))
    if max_s is not None:
        raise InvalidInput("max_s and sizes exclude each other")
    values: list[Any] = (list(sizes) if isinstance(sizes, Iterable)
                         and not isinstance(sizes, str | bytes | dict) else [])
    if not values:
        raise InvalidInput("sizes must be a non-empty list of numbers of stragglers, got "
                           f"{_short(sizes)}")
    last = n if allow_all else n - 1
    for s in values:
        if isinstance(s, bool) or not isinstance(s, int | np.integer) or not 0 <= s <= last:
            raise InvalidInput(f"sizes: {_short(s)} is not a number of stragglers in "
                               f"0..{last} (n = {n})")
    return sorted({int(s) for s in values})


def _short(value: Any, limit: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."

