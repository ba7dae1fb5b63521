"""Bounds: what theory says about a gradient code, next to what the code does (``gctool bound``).

One home for every bound that applies to matrix codes:

* :mod:`~gctool.bounds.load` -- load bounds from (n, k, s, m) and a given load d
  (Tandon et al.'s (s+1)k/n, Ye & Abbe's m-piece form);
* :mod:`~gctool.bounds.rank` -- the rank bound and its witness (also a cheap check of
  ``verify``);
* :mod:`~gctool.bounds.code` -- a code file judged against them, with its replication and
  rank conditions and load statistics;
* :mod:`~gctool.bounds.approx` -- the approximate-code table (error and threshold bounds
  with the code's exact values where affordable);
* :mod:`~gctool.bounds.closed_forms` -- exact worst-case errors of structures (uniform Gram,
  rank-one blocks, cycle graphs), also shown by ``attack``.

Bounds of one scheme family come from its :class:`~gctool.family.Family`, as every other
scheme-specific behaviour does: a family's rows for the approximate table
(``Family.closed_forms``: ``hetero``, ``kron``), the name and source of the symmetric spectral
bound (``symmetric_spectral_bound``: ``expander``), its straggling probabilities
(``worker_probabilities``), and a whole report of its own for schemes that are not matrix
codes (``Family.bound``: the sequential schedules, CodedReduce and BCC in
:mod:`gctool.sequential`, encoded frames).

This package sits below ``codes`` and ``audit`` (constructions use
:func:`~gctool.bounds.approx.exact_threshold` and the table's row type; ``verify`` the rank
witness, ``attack`` the closed forms): it imports neither.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING

from gctool.bounds.load import load_bounds
from gctool.budget import Budget
from gctool.errors import InvalidInput
from gctool.model import GradientCode
from gctool.reports import BoundReport

if TYPE_CHECKING:
    from collections.abc import Callable

    from gctool.bounds.approx import ThresholdFinder, WorstFinder


def bounds(  # noqa: PLR0913 (the options of gctool bound, and the threshold finder)
    code: GradientCode | None = None,
    *,
    n: int | None = None,
    k: int | None = None,
    s: int | None = None,
    m: int | None = None,
    d: int | None = None,
    epsilon: float | Fraction | str | None = None,
    budget: Budget | None = None,
    threshold: Callable[[Budget], ThresholdFinder] | None = None,
    worst: Callable[[Budget], WorstFinder] | None = None,
) -> BoundReport:
    """Report the load bounds for (n, k, s, m) and, for a code, whether it meets them.

    ``d`` (a load per worker) adds whether it suffices and the largest m it allows; for an
    m-piece code it defaults to the code's largest load.  ``epsilon`` (with a code) is the
    error level ε of the threshold rows T_ε of the approximate-code table (default 0).
    ``budget``: the work budget of the whole report (default :meth:`Budget.default`), shared
    by its parts in order (the rank of B, then the table's,
    :class:`~gctool.budget.SharedWork`).
    ``threshold``: what makes, for the budget the earlier parts left, the finder of the code's
    T_ε beside the threshold rows (default: an exhaustive search of at most
    :data:`~gctool.limits.APPROX_EXACT_SETS` sets; ``gctool.bound`` passes ``attack
    --threshold``'s); ``worst``: the same for its worst error at s when decoding every s-set
    is above what is left (default: none; ``gctool.bound`` passes ``attack -s``'s exhaustive
    search).
    """
    if code is not None:
        n, k = code.n, code.k
        s = code.s if s is None else s
        m = code.m
        if d is None and m > 1:
            d = int(code.loads.max())
    if n is None or k is None or s is None:
        raise InvalidInput("give a code file, or all of -n, -k and -s")
    if epsilon is not None:  # typed like tol: a float, a Fraction or a decimal string, >= 0
        from gctool.numerics import check_tol

        epsilon = check_tol(epsilon, "epsilon")
    m = 1 if m is None else m
    items = load_bounds(n, k, s, m, d)
    if code is None:  # a load ``d`` given is the one claim that can fail
        failing = [b.statement for b in items if b.holds is False]
        return BoundReport(n, k, s, m, items, None, None, failing, not failing)
    from gctool.bounds.code import code_report

    return code_report(code, s, items, Budget.default() if budget is None else budget,
                       epsilon, threshold, worst)


__all__ = ["bounds", "load_bounds"]
