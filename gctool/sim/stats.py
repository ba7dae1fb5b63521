"""Summary statistics with 95% confidence intervals.

* Mean: batch means.  The series is cut into b = min(30, N) contiguous batches and the interval
  is ``mean ± t_{0.975, b-1} sd(batch means) / sqrt(b)``.  Batches absorb the correlation
  between consecutive rounds (Markov delays, traces, sequential schemes); for i.i.d. rounds it
  is the usual t interval on b groups.
* Quantiles: the distribution-free order-statistic interval ``[X_(l), X_(u)]`` with l, u the
  2.5% and 97.5% points of Binomial(N, p) (exact for i.i.d. rounds, approximate otherwise).
* Speed-up of a scheme over a baseline run on the *same* delays (common random numbers): the
  ratio of means, with a delta-method interval on paired batch means,
  ``var(R) ≈ var(X_b - R Y_b) / (b Ȳ²)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

LEVEL = 0.95
MAX_BATCHES = 30


def _t(b: int) -> float:
    from scipy.special import stdtrit  # scipy.special: far lighter to import than scipy.stats

    return float(stdtrit(max(b - 1, 1), 0.5 + LEVEL / 2))


def _binom_ppf(q: float, N: int, p: float) -> int:
    """Smallest k with P(Binomial(N, p) <= k) >= q."""
    from scipy.special import bdtr

    cdf = bdtr(np.arange(N + 1), N, p)
    return int(np.searchsorted(cdf, q - 1e-12))


def _batches(x: np.ndarray) -> np.ndarray:
    b = min(MAX_BATCHES, len(x))
    return np.array([chunk.mean() for chunk in np.array_split(x, b)])


def mean_ci(x: np.ndarray) -> dict[str, Any]:
    x = np.asarray(x, dtype=np.float64)
    m = float(x.mean())
    if len(x) < 2 or not np.isfinite(m):
        return {"value": m, "low": None, "high": None}
    bm = _batches(x)
    half = _t(len(bm)) * float(bm.std(ddof=1)) / np.sqrt(len(bm))
    return {"value": m, "low": m - half, "high": m + half}


def quantile_ci(x: np.ndarray, q: float) -> dict[str, Any]:
    xs = np.sort(np.asarray(x, dtype=np.float64))
    N = len(xs)
    value = float(np.quantile(xs, q))
    lo = _binom_ppf((1 - LEVEL) / 2, N, q)
    hi = _binom_ppf(1 - (1 - LEVEL) / 2, N, q) + 1
    if lo < 1 or hi > N:
        return {"value": value, "low": None, "high": None}
    return {"value": value, "low": float(xs[lo - 1]), "high": float(xs[hi - 1])}


def ratio_ci(base: np.ndarray, other: np.ndarray) -> dict[str, Any]:
    """mean(base) / mean(other) with a paired delta-method interval."""
    base, other = np.asarray(base, np.float64), np.asarray(other, np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):  # every time 0: no ratio (nan)
        r = float(np.float64(base.mean()) / np.float64(other.mean()))
    if len(base) < 2 or len(base) != len(other) or not np.isfinite(r):
        return {"value": r, "low": None, "high": None}
    xb, yb = _batches(base), _batches(other)
    se = float(np.std(xb - r * yb, ddof=1) / (np.sqrt(len(xb)) * yb.mean()))
    half = _t(len(xb)) * se
    return {"value": r, "low": r - half, "high": r + half}


def summary(x: np.ndarray) -> dict[str, Any]:
    return {"mean": mean_ci(x), "p50": quantile_ci(x, 0.5), "p99": quantile_ci(x, 0.99)}
