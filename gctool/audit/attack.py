"""``attack``: worst-case straggler sets and adversarial thresholds (exhaustive search).

Errors are the raw squared optimal-decoding error ``min_a ||a^T B_F - 1||^2`` (reference §0.1);
``normalize="k"`` divides by k.  Over GF(q) the error is an indicator (0 decodes, 1 fails).

Threshold mode returns ``T_eps = min{|S| : err(S) > eps}`` (strict, so eps = 0 gives the exact
threshold T_0).  Over R/C an error counts as exceeding eps only when it is also above the
decoding tolerance ``tol * k``, so that round-off never makes a decodable set "fail".
"""

from __future__ import annotations

import time
from math import comb

import numpy as np

from gctool.audit.engine import (
    DEFAULT_MAX_SETS,
    DiagnosticsTracker,
    Progress,
    Scan,
    check_budget,
    check_s,
)
from gctool.decode import DEFAULT_TOL, Decoder
from gctool.errors import BudgetExceeded, InvalidInput
from gctool.model import GradientCode
from gctool.reports import AttackReport

NORMALIZATIONS = ("none", "k")


def _scale(code: GradientCode, normalize: str) -> float:
    if normalize not in NORMALIZATIONS:
        raise InvalidInput(f"normalize must be one of {', '.join(NORMALIZATIONS)}")
    return float(code.k) if normalize == "k" else 1.0


def attack(
    code: GradientCode,
    s: int,
    *,
    normalize: str = "none",
    tol: float = DEFAULT_TOL,
    max_sets: int = DEFAULT_MAX_SETS,
    progress: Progress | None = None,
) -> AttackReport:
    """The worst straggler set of size ``s`` under optimal decoding (exhaustive, exact)."""
    check_s(s, code.n, allow_all=True)
    scale = _scale(code, normalize)
    start = time.perf_counter()
    decoder = Decoder(code, tol)
    scan = Scan(decoder, s, progress)
    check_budget(scan.total, max_sets, f"exhaustive attack (n={code.n}, s={s})")
    tracker = DiagnosticsTracker(not decoder.exact)
    worst_err, worst_set = -np.inf, None
    for S, r in scan.batches():
        tracker.update(S, r)
        i = int(np.argmax(r.error))  # first maximum: lexicographically smallest set
        if r.error[i] > worst_err:
            worst_err, worst_set = float(r.error[i]), S[i].tolist()
    decodes = worst_err <= (0.0 if decoder.exact else decoder.tol * code.k)
    return AttackReport(
        mode="worst", s=s, n=code.n, k=code.k, field=str(code.field), stragglers=worst_set,
        error=worst_err / scale, raw_error=worst_err, normalize=normalize, decoder="optimal",
        method="exhaustive", exact=True, checked=scan.checked, total=scan.total,
        reason=("every straggler set of this size still decodes"
                if decodes else "the worst set leaves an error"),
        diagnostics=tracker.result("over every straggler set of this size"),
        elapsed_s=time.perf_counter() - start,
    )


def threshold(
    code: GradientCode,
    epsilon: float = 0.0,
    *,
    normalize: str = "none",
    tol: float = DEFAULT_TOL,
    max_sets: int = DEFAULT_MAX_SETS,
    progress: Progress | None = None,
) -> AttackReport:
    """The adversarial threshold: fewest stragglers whose error exceeds ``epsilon``."""
    scale = _scale(code, normalize)
    if not (np.isfinite(epsilon) and epsilon >= 0):
        raise InvalidInput(f"epsilon must be a finite number >= 0, got {epsilon}")
    decoder = Decoder(code, tol)
    if decoder.exact and epsilon != 0:
        raise InvalidInput(
            f"over {code.field} decoding either succeeds or fails: use epsilon = 0"
        )
    start = time.perf_counter()
    limit = max(epsilon * scale, 0.0 if decoder.exact else decoder.tol * code.k)
    grand = sum(comb(code.n, t) for t in range(code.n + 1))
    checked, tracker = 0, DiagnosticsTracker(not decoder.exact)
    for t in range(code.n + 1):
        try:
            check_budget(checked + comb(code.n, t), max_sets, f"threshold search (n={code.n})")
        except BudgetExceeded as exc:
            raise BudgetExceeded(f"{exc}; so far no set of size < {t} exceeds epsilon, "
                                 f"so the threshold is >= {t}") from None
        scan = Scan(decoder, t, progress, done_before=checked, grand_total=grand)
        for S, r in scan.batches():
            tracker.update(S, r)
            over = np.flatnonzero(r.error > limit)
            if over.size:
                i = int(over[0])
                return _threshold_report(code, t, S[i].tolist(), float(r.error[i]), epsilon,
                                         normalize, scale, checked + scan.checked, grand,
                                         tracker, start)
        checked += scan.checked
    return _threshold_report(code, None, None, None, epsilon, normalize, scale, checked, grand,
                             tracker, start)


def _threshold_report(
    code: GradientCode, t: int | None, S: list[int] | None, err: float | None, epsilon: float,
    normalize: str, scale: float, checked: int, grand: int, tracker: DiagnosticsTracker,
    start: float,
) -> AttackReport:
    reason = (f"straggling {t} worker(s) {S} pushes the error above {epsilon:g}; "
              f"no set of {t - 1} or fewer does" if t is not None
              else f"no straggler set pushes the error above {epsilon:g}")
    return AttackReport(
        mode="threshold", s=t, n=code.n, k=code.k, field=str(code.field), stragglers=S,
        error=None if err is None else err / scale, raw_error=err, normalize=normalize,
        decoder="optimal", method="exhaustive", exact=True, checked=checked, total=grand,
        threshold=t, epsilon=epsilon, comparison="error > epsilon", reason=reason,
        diagnostics=tracker.result("over every straggler set examined"),
        elapsed_s=time.perf_counter() - start,
    )
