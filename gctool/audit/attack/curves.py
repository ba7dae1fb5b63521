"""Curve mode of ``attack``: the worst-case error for every s = 0..max_s, or for chosen sizes.

This is gctool's one error-curve engine: ``gctool attack`` (``curve``) and the curve that
``gctool show`` draws (:func:`gctool.viz.curve.error_curve`, sizes chosen by
:func:`plan_sizes` within a total budget) both come from :func:`curve`.

Each point is a worst-case search (:func:`~gctool.audit.attack.worst.worst_outcome`) seeded
with the previous point's set; when the error is monotone in the straggler set and the
previous point already reached the largest possible error, the point is that set padded to
size s (exact without a search).

The points share one budget.  A point's search stopped by it is labelled as ``attack`` labels
one (``auto`` keeps the best set so far); a point it refuses stops the curve there: the report
keeps the points computed before it, ``stopped_at`` names the first size left without a point
and a note gives the refusal (which names the budget to raise).  With no point past s = 0 the
refusal is the answer, as it is with ``keep_at_budget=False`` (``gctool show``, whose picture
is never partial).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace
from math import comb
from typing import Any

from gctool.audit import exhaustive, randomized
from gctool.audit.attack.figures import random_means
from gctool.audit.attack.options import AttackOptions, oracle_for, scale_of, smaller
from gctool.audit.attack.worst import largest, worst_outcome
from gctool.audit.checks import curve_sizes
from gctool.audit.oracles import Oracle
from gctool.audit.outcome import WorstOutcome
from gctool.engine.enumeration import pad_to
from gctool.errors import BudgetExceeded, summarised
from gctool.exactls import Undecided
from gctool.limits import CURVE_MAX_WORK, TIE_RTOL
from gctool.model import GradientCode
from gctool.reports import CurveReport, WorstPoint


def curve(code: GradientCode, max_s: int | None = None, options: AttackOptions | None = None,
          *, sizes: Sequence[int] | None = None, keep_at_budget: bool = True,
          **changes: Any) -> CurveReport:
    """Worst-case error for s = 0..max_s (default n), or for the given ``sizes`` only,
    optionally with the random-set means (keywords: changes to ``options``, see
    :class:`AttackOptions`).  Progress counts the points computed.

    A point the budget refuses stops the curve: the report keeps the points before it
    (``stopped_at``: the first size without a point), unless none past s = 0 was computed or
    ``keep_at_budget`` is False, when the refusal (:class:`~gctool.errors.BudgetExceeded`) is
    raised."""
    todo = _sizes(code, max_s, sizes)
    with summarised(f"error curve on n = {code.n} interrupted outside its searches "
                    f"({len(todo):,} values of s asked); no verdict"):
        return _curve(code, todo, options, keep_at_budget, **changes)


def _curve(code: GradientCode, todo: list[int], options: AttackOptions | None,
           keep_at_budget: bool, **changes: Any) -> CurveReport:
    top = max(todo)
    given = AttackOptions.of(options, **changes).for_search()
    opts = replace(given, progress=None)  # progress counts values of s, not sets
    scale = scale_of(code, opts.normalize)
    start = time.perf_counter()
    if top >= 1:  # every method evaluates at least the n single stragglers for s = 1
        opts.budget.check_work(f"the error curve (n={code.n}, k*m={code.B.shape[1]}): its "
                               f"{code.n} single stragglers", exhaustive.set_work(code, 1, code.n),
                               f"{smaller(code)}, or raise `max_work`")
    oracle = oracle_for(code, opts)
    points: list[WorstPoint] = []
    prev, checked, notes = None, 0, []
    padded: list[int] = []  # the sizes padded from the last point searched, ``base``
    base = todo[0]
    stop: BudgetExceeded | None = None
    means = 0  # the decoder's evaluations of the random-set means: neither the points'
    # ``checked`` nor the search's ``evaluations`` (as in ``attack``'s report)
    for i, s in enumerate(todo):
        before = oracle.evaluations
        try:
            found, was_padded = _curve_point(oracle, s, opts, prev)
            searched = oracle.evaluations
            mean = (randomized.uniform_mean(oracle, s, budget=randomized.exact_sets(opts.budget),
                                            samples=opts.sample_count, seed=opts.drawn_seed)
                    if opts.random else None)
            means += oracle.evaluations - searched
        except Undecided:  # a set float64 cannot decide ends the run: no budget stop
            raise
        except BudgetExceeded as exc:
            if not keep_at_budget or not any(pt.s > 0 for pt in points):
                raise
            stop = exc  # (the refused point's evaluations are in ``evaluations`` only)
            break
        checked += searched - before
        if found.stop_note:  # (a point's other notes stay with its search)
            notes.append(f"s = {s}: {found.stop_note}")
        if was_padded:
            padded.append(s)
        else:
            base = s
        point = WorstPoint(s, found.stragglers, found.error / scale, found.error, found.exact,
                           found.method, None if found.upper is None else found.upper / scale)
        if mean is not None:
            point.mean, point.mean_exact = mean["mean"] / scale, mean["exact"]
        points.append(point)
        prev = found
        if given.progress is not None:
            given.progress(i + 1, len(todo))
    if padded:
        _, why = largest(oracle)
        notes.append(f"s = {_runs(padded)}: the worst set of s = {base} with "
                     "more stragglers, exact without a search (its error is already the "
                     f"largest possible, {why}, and the {oracle.kind} decoder's error only grows "
                     "with the straggler set); the method shown is that of s = "
                     f"{base}")
    every = todo == list(range(top + 1))
    reason = (f"worst-case error for s = 0..{top}" if every else
              f"worst-case error for s = {', '.join(map(str, todo))}")
    stopped_at = None
    if stop is not None:
        missing = todo[len(points):]
        stopped_at = missing[0]
        what = f"s = {_runs(missing)}"
        reason += f"; stopped by the budget at s = {stopped_at} ({what} not computed)"
        notes.append(f"{what}: not computed: the budget stopped the curve at s = {stopped_at} "
                     f"({stop})")
    report = CurveReport(
        s=top, n=code.n, k=code.k, field=str(code.field), normalize=opts.normalize,
        decoder=oracle.kind, method=opts.method,
        exact=stop is None and all(pt.exact for pt in points),
        checked=checked, total=sum(comb(code.n, t) for t in todo), reason=reason,
        scheme=code.scheme, decoder_label=oracle.label, decoder_info=oracle.describe(),
        scale=scale, seed=opts.drawn_seed, evaluations=oracle.evaluations - means, curve=points,
        notes=notes, stopped_at=stopped_at)
    report.random = random_means(oracle, None, opts.p, scale, opts, report.notes)
    report.elapsed_s = time.perf_counter() - start
    return report


def _runs(sizes: list[int]) -> str:
    """Increasing sizes as runs: "4..10" or "2, 5..7"."""
    runs: list[list[int]] = []
    for x in sizes:
        if runs and x == runs[-1][1] + 1:
            runs[-1][1] = x
        else:
            runs.append([x, x])
    return ", ".join(str(a) if a == b else f"{a}..{b}" for a, b in runs)


def _sizes(code: GradientCode, max_s: int | None, sizes: Sequence[int] | None) -> list[int]:
    """The values of s to compute, increasing: 0..max_s (default n), or ``sizes``."""
    return curve_sizes(code.n, max_s, sizes, code.n)


def _work(n: int, cols: int, s: int) -> float:
    """Flop estimate of one point: C(n, s) least-squares problems of f = n - s survivors."""
    f = n - s
    return comb(n, s) * max(1, f) * cols * max(1, min(f, cols))


def plan_sizes(n: int, cols: int, max_sets: int, max_work: float = CURVE_MAX_WORK
               ) -> list[int]:
    """The values of s (increasing) whose exhaustive points fit a total budget of ``max_sets``
    straggler sets and ``max_work`` ns of one core (one per multiply-add), chosen cheapest
    first (the number of sets C(n, s), then the size of the least-squares problems), so both
    ends of a curve come before its middle.  When nothing strictly between the trivial ends
    (0 < s < n - 1) fits, nothing is chosen: the ends alone say nothing about the code, and
    for large n even they are not free.  ``cols`` is the number of columns of B (k*m)."""
    ends: set[int] = set()  # C(n, d) grows with d <= n/2: only the ends can fit
    d, sets_d = 0, 1
    while 2 * d <= n and sets_d <= max_sets:
        ends.update((d, n - d))
        sets_d, d = sets_d * (n - d) // (d + 1), d + 1
    order = sorted(ends, key=lambda s: (comb(n, s), _work(n, cols, s), s))
    chosen, sets, work = [], 0, 0.0
    for s in order:
        c, w = comb(n, s), _work(n, cols, s)
        if sets + c <= max_sets and work + w <= max_work:
            chosen.append(s)
            sets, work = sets + c, work + w
    if not any(0 < s < n - 1 for s in chosen):
        return []
    return sorted(chosen)


def _curve_point(oracle: Oracle, s: int, opts: AttackOptions, prev: WorstOutcome | None
                 ) -> tuple[WorstOutcome, bool]:
    """The worst case at s, and whether it is the previous point's set padded to size s (no
    search: see the module's docs)."""
    top, why = largest(oracle)
    if (prev is not None and oracle.monotone and prev.exact and top is not None
            and prev.stragglers is not None and prev.error >= top - TIE_RTOL * max(1.0, top)):
        S = pad_to(prev.stragglers, s, oracle.n)  # monotone: the maximum stays reached
        out = WorstOutcome(S, oracle.error(S), True, prev.method, 1, comb(oracle.n, s))
        out.tighten(top, why)
        return out, True
    starts = [] if prev is None or prev.stragglers is None else [prev.stragglers]
    return worst_outcome(oracle, s, opts, starts), False
