"""Curve mode of ``attack``: the worst-case error for every s = 0..max_s.

Each point is a worst-case search (:func:`~gctool.audit.attack.worst.worst_outcome`) seeded
with the previous point's set; when the error is monotone in the straggler set and the
previous point already reached the largest possible error, the point is that set padded to
size s (exact without a search).
"""

from __future__ import annotations

import time
from dataclasses import replace
from math import comb
from typing import Any

from gctool.audit import exhaustive, randomized
from gctool.audit.attack.figures import random_means
from gctool.audit.attack.options import AttackOptions, oracle_for, scale_of
from gctool.audit.attack.worst import largest, worst_outcome
from gctool.audit.checks import check_s
from gctool.audit.oracles import Oracle
from gctool.audit.outcome import WorstOutcome
from gctool.engine.enumeration import pad_to
from gctool.limits import TIE_RTOL
from gctool.model import GradientCode
from gctool.reports import CurveReport, WorstPoint


def curve(code: GradientCode, max_s: int | None = None, options: AttackOptions | None = None,
          **changes: Any) -> CurveReport:
    """Worst-case error for s = 0..max_s (default n), optionally with the random-set means
    (keywords: changes to ``options``, see :class:`AttackOptions`)."""
    top = code.n if max_s is None else max_s
    check_s(top, code.n, "max_s", allow_all=True)
    given = AttackOptions.of(options, **changes).for_search()
    opts = replace(given, progress=None)  # progress counts values of s, not sets
    scale = scale_of(code, opts.normalize)
    start = time.perf_counter()
    if top >= 1:  # every method evaluates at least the n single stragglers for s = 1
        exhaustive.check_set_work(code, 1, code.n, "attack --curve")
    oracle = oracle_for(code, opts)
    points: list[WorstPoint] = []
    prev, checked = None, 0
    for s in range(top + 1):
        before = oracle.evaluations
        found = _curve_point(oracle, s, opts, prev)
        checked += oracle.evaluations - before
        point = WorstPoint(s, found.stragglers, found.error / scale, found.error, found.exact,
                           found.method, None if found.upper is None else found.upper / scale)
        if opts.random:
            mean = randomized.uniform_mean(oracle, s, budget=opts.max_sets,
                                           samples=opts.samples, seed=opts.seed)
            point.mean, point.mean_exact = mean["mean"] / scale, mean["exact"]
        points.append(point)
        prev = found
        if given.progress is not None:
            given.progress(s + 1, top + 1)
    report = CurveReport(
        s=top, n=code.n, k=code.k, field=str(code.field), normalize=opts.normalize,
        decoder=oracle.kind, method=opts.method, exact=all(pt.exact for pt in points),
        checked=checked, total=sum(comb(code.n, t) for t in range(top + 1)),
        reason=f"worst-case error for s = 0..{top}", scheme=code.scheme,
        decoder_label=oracle.label, decoder_info=oracle.describe(), scale=scale,
        seed=opts.seed, evaluations=oracle.evaluations, curve=points)
    report.random = random_means(oracle, None, opts.p, scale, opts)
    report.elapsed_s = time.perf_counter() - start
    return report


def _curve_point(oracle: Oracle, s: int, opts: AttackOptions, prev: WorstOutcome | None
                 ) -> WorstOutcome:
    top, why = largest(oracle)
    if (prev is not None and oracle.monotone and prev.exact and top is not None
            and prev.stragglers is not None and prev.error >= top - TIE_RTOL * max(1.0, top)):
        S = pad_to(prev.stragglers, s, oracle.n)  # monotone: the maximum stays reached
        out = WorstOutcome(S, oracle.error(S), True, prev.method, 1, comb(oracle.n, s))
        out.tighten(top, why)
        return out
    starts = [] if prev is None or prev.stragglers is None else [prev.stragglers]
    return worst_outcome(oracle, s, opts, starts)
