"""What a code file adds to the load bounds: whether it meets each of them, the necessary
conditions of its own structure (replication, rank), its load statistics, and the
approximate-code table (:mod:`gctool.bounds.approx`).

Every row is found by its name, never by its position in the list.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from math import floor
from typing import TYPE_CHECKING

from gctool.budget import NS_PER_S, Budget
from gctool.model import GradientCode
from gctool.reports import Bound, BoundReport
from gctool.wording import counted, noun

if TYPE_CHECKING:
    from collections.abc import Callable

    from gctool.bounds.approx import ThresholdFinder, WorstFinder


def _judged(items: list[Bound], actual: dict[str, int]) -> list[Bound]:
    """The load bounds with ``holds``: the code's value of each bounded quantity (min
    replication, nnz, largest load) is at least the bound."""
    return [b if b.name not in actual or b.value is None
            else replace(b, holds=actual[b.name] >= b.value) for b in items]


def code_report(code: GradientCode, s: int, items: list[Bound], budget: Budget,  # noqa: PLR0913 (the report's inputs and the table's two finders)
                epsilon: float | Fraction | str | None = None,
                threshold: Callable[[Budget], ThresholdFinder] | None = None,
                worst: Callable[[Budget], WorstFinder] | None = None) -> BoundReport:
    """The report of ``gctool bound FILE``: ``items`` (the load bounds for the code's n, k, m
    and ``s``) judged on the code, then the code's own rows (``threshold`` and ``worst``: what
    makes the finders of the code's T_ε and its worst error for a budget,
    :func:`~gctool.bounds.approx.approx_bounds`), all within ``budget``: the rank of B is
    charged first, and the table's parts share what it leaves."""
    from gctool.bounds import rank as rank_bound
    from gctool.bounds.approx import approx_bounds

    n, k, m = code.n, code.k, code.m
    loads, rep = code.loads, code.replication
    rank = rank_bound.rank(code, budget)
    if rank > n - s:
        rank_bound.check(code, budget, second=True)
    spent = rank_bound.work(code, rank > n - s) / NS_PER_S
    # over R/C a numerical rank above n - s only matters when its witness fails to decode
    # (the witnesses of s and of n - rank + 1 share one row basis of B)
    by_rank_holds, rank_fails = rank_bound.witnesses_fail(code, [n - rank + 1, s], rank)
    rank_fails = rank > n - s and rank_fails
    dmax = int(loads.max())
    findings: list[str] = []
    weak = [int(j) for j in (rep < s + m).nonzero()[0]]
    if weak:
        findings.append(f"{noun(len(weak), 'partition')} {weak[:10]}"
                        f"{'...' if len(weak) > 10 else ''} held by "
                        f"{f'<= s = {s}' if m == 1 else f'< s + m = {s + m}'} workers "
                        f"(min replication {int(rep.min())})")
    if rank_fails:
        findings.append(f"rank(B) = {rank} > n - s = {n - s}: no code of this rank tolerates "
                        f"{counted(s, 'straggler')}")
    items = _judged(items, {"replication": int(rep.min()), "total_load": int(rep.sum()),
                            "max_load": dmax})
    t_col, t_rank, s_max = int(rep.min()), n - rank + 1, floor(n * dmax / k) - m
    items += [
        Bound("threshold_by_replication", t_col,
              f"exact threshold T_0 <= min_j c_j = {t_col}: straggling every holder of the least "
              "replicated partition breaks exact recovery", "[D] reference §0.3", t_col > s),
        Bound("threshold_by_rank", t_rank,
              f"T_0 <= n - rank(B) + 1 = {t_rank} (rank(B) = {rank}); s-robust needs "
              f"rank(B) <= n - s" + ("" if by_rank_holds else
                                     "; not a bound for this code: some rows are only nearly "
                                     "dependent and the rank witness decodes within the "
                                     "tolerance"), "[D] reference §0.3 (Singleton-type)",
              t_rank > s or not rank_fails),
        Bound("max_s_for_load", s_max,
              f"with max load d = {dmax}, no code tolerates more than floor(n d / k) - {m} = "
              f"{counted(s_max, 'straggler')}", "[D] reference §1.3 / §6.2", s_max >= s),
    ]
    stats = {
        "load_min": int(loads.min()), "load_max": dmax, "load_mean": float(loads.mean()),
        "replication_min": int(rep.min()), "replication_max": int(rep.max()),
        "replication": rep.tolist(), "loads": loads.tolist(), "rank": rank,
        "nnz": int(rep.sum()), "field": str(code.field), "scheme": code.scheme,
    }
    items += approx_bounds(code, s, epsilon, threshold, budget, worst, spent)
    meets = dmax == next(b.value for b in items if b.name == "max_load")
    return BoundReport(n, k, s, m, items, stats, meets, findings, not findings)
