"""Argument checks shared by the audits (the size s, a curve's sizes, set budgets).

The enumeration engine itself is :mod:`gctool.engine`; the audits' budgets and limits come
from :mod:`gctool.limits`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from gctool.errors import BudgetExceeded, InvalidInput

if TYPE_CHECKING:  # pragma: no cover
    from gctool.model import GradientCode

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class Refusals:
    """What the refusals of an attack search say: the command that asked for it and the options
    of that command that would make the run fit.  The defaults are ``gctool attack``'s;
    ``gctool show`` computes its curve with its own (:func:`gctool.viz.curve.error_curve`), so
    that a refusal names show's options."""

    #: the command named at the start of a refusal; None: the attack's own names
    #: ("attack", "attack --curve", "exhaustive attack")
    command: str | None = None
    #: the remedy above the work budget, before a search starts (``{field}``: see
    #: :meth:`remedy`)
    work: str = "attack a smaller code{field}, or raise --max-work"
    #: the remedy above the memory budget
    memory: str = "attack a smaller code{field}"
    #: the remedy of an exhaustive search above its budget of straggler sets
    sets: str = "raise it with --max-sets or use --method bnb/greedy"
    #: the remedy of a search that has spent the work budget
    search: str = ("use a smaller code, --method greedy with fewer --restarts, a lower "
                   "--max-nodes, or raise --max-work")

    def name(self, default: str) -> str:
        """The command a refusal names (``default``: the attack's name for that place)."""
        return self.command or default

    def remedy(self, kind: Literal["work", "memory"], code: GradientCode) -> str:
        """The remedy above the ``kind`` budget for ``code``: ``{field}`` suggests a
        finite-field version of a real or complex code (exact table arithmetic), and nothing
        for a code already over GF(q)."""
        hint = "" if code.field.is_finite else " or a finite-field version of it"
        return getattr(self, kind).replace("{field}", hint)


#: the refusals of ``gctool attack``
ATTACK_REFUSALS = Refusals()


def check_s(s: int, n: int, what: str = "s", allow_all: bool = False) -> None:
    top = n if allow_all else n - 1
    if isinstance(s, bool) or not isinstance(s, int | np.integer) or not 0 <= s <= top:
        rel = "<=" if allow_all else "<"
        raise InvalidInput(f"{what} must satisfy 0 <= {what} {rel} n = {n}, got {s}")


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


def check_budget(needed: int, max_sets: int, task: str) -> None:
    if needed > max_sets:
        raise BudgetExceeded(
            f"{task} needs {needed:,} straggler sets ({needed:.2g}), above the budget of "
            f"{max_sets:,}; raise it with --max-sets"
        )
