"""Summary statistics with 95% confidence intervals.

Two ways, chosen by what the iterations rest on (:class:`Intervals`):

**Fresh draws** (the synthetic delay models: every iteration is a new draw):

* Mean: batch means.  The series is cut into b = min(30, N) contiguous batches and the interval
  is ``mean ± t_{0.975, b-1} sd(batch means) / sqrt(b)``.  Batches absorb the correlation
  between consecutive rounds (Markov delays, traces, sequential schemes); for i.i.d. rounds it
  is the usual t interval on b groups.
* Quantiles: the distribution-free order-statistic interval ``[X_(l), X_(u)]`` with l, u the
  2.5% and 97.5% points of Binomial(N, p) (exact for i.i.d. rounds, approximate otherwise).
* Speed-up of a scheme over a baseline run on the *same* delays (common random numbers): the
  ratio of means, with a delta-method interval on paired batch means,
  ``var(R) ≈ var(X_b - R Y_b) / (b Ȳ²)``.

**Replays of recorded rounds** (traces: a trace file has R measured rounds, and every
iteration replays one of them with permuted workers, so 1000 iterations rest on R independent
rounds, not 1000): a cluster bootstrap over the recorded rounds.  Each of
:data:`REPLICATES` replicates draws R recorded rounds with replacement and weighs every
iteration by how often its round was drawn; the mean, the quantiles and the ratio of means are
recomputed on the weighted iterations, and the interval is the 2.5 % and 97.5 % points of the
replicates (percentile bootstrap).  The replicates are drawn once per run (seeded), so every
scheme sees the same ones (paired, like the delays).  The interval says how much the figure
would move with other recorded rounds of the same cloud; with R = 10 it is itself rough, and
the report states R.
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


#: bootstrap replicates over recorded rounds
REPLICATES = 2000
#: at most this many (replicate x iteration) weights at once for the quantiles
_QUANTILE_CELLS = 4_000_000


class Intervals:
    """How the run's intervals are computed: batch means (``clusters`` None: every iteration
    is a fresh draw) or a bootstrap over the recorded round behind each iteration
    (``clusters``, one label per iteration)."""

    def __init__(self, clusters: np.ndarray | None = None, seed: int = 0) -> None:
        self.clusters = None
        self.units: int | None = None
        if clusters is not None:
            labels, self.clusters = np.unique(np.asarray(clusters), return_inverse=True)
            self.units = len(labels)
            rng = np.random.default_rng([seed, 0x5EED])
            self.weights = rng.multinomial(self.units, np.full(self.units, 1.0 / self.units),
                                           size=REPLICATES).astype(np.float64)

    @property
    def label(self) -> str:
        if self.units is None:
            return "95% intervals: batch means over the iterations (fresh draws)"
        return (f"95% intervals: bootstrap over the {self.units} distinct recorded rounds the "
                "iterations replay")

    def _sums(self, x: np.ndarray) -> np.ndarray:
        assert self.clusters is not None and self.units is not None
        return np.bincount(self.clusters, weights=x, minlength=self.units)

    def _interval(self, value: float, reps: np.ndarray) -> dict[str, Any]:
        reps = reps[np.isfinite(reps)]
        if self.units is None or self.units < 2 or len(reps) < 2 or not np.isfinite(value):
            return {"value": value, "low": None, "high": None}
        lo, hi = np.quantile(reps, [(1 - LEVEL) / 2, (1 + LEVEL) / 2])
        return {"value": value, "low": float(lo), "high": float(hi)}

    def mean(self, x: np.ndarray) -> dict[str, Any]:
        x = np.asarray(x, dtype=np.float64)
        if self.clusters is None:
            return mean_ci(x)
        sizes = self._sums(np.ones_like(x))
        with np.errstate(invalid="ignore", divide="ignore"):
            reps = (self.weights @ self._sums(x)) / (self.weights @ sizes)
        return self._interval(float(x.mean()), reps)

    def quantile(self, x: np.ndarray, q: float) -> dict[str, Any]:
        x = np.asarray(x, dtype=np.float64)
        if self.clusters is None:
            return quantile_ci(x, q)
        order = np.argsort(x, kind="stable")
        xs, cl = x[order], self.clusters[order]
        step = max(1, _QUANTILE_CELLS // max(len(x), 1))
        reps = []
        for start in range(0, REPLICATES, step):
            w = self.weights[start:start + step][:, cl]  # (b, N) weight of every iteration
            cw = np.cumsum(w, axis=1)
            at = (cw < q * cw[:, -1:]).sum(axis=1)  # the first at or above q of the total
            reps.append(xs[np.minimum(at, len(xs) - 1)])
        return self._interval(float(np.quantile(x, q)), np.concatenate(reps))

    def ratio(self, base: np.ndarray, other: np.ndarray) -> dict[str, Any]:
        """mean(base) / mean(other), same iterations (paired)."""
        base, other = np.asarray(base, np.float64), np.asarray(other, np.float64)
        if self.clusters is None or len(base) != len(other):
            return ratio_ci(base, other)
        with np.errstate(divide="ignore", invalid="ignore"):
            r = float(np.float64(base.mean()) / np.float64(other.mean()))
            reps = (self.weights @ self._sums(base)) / (self.weights @ self._sums(other))
        return self._interval(r, reps)

    def summary(self, x: np.ndarray) -> dict[str, Any]:
        return {"mean": self.mean(x), "p50": self.quantile(x, 0.5),
                "p99": self.quantile(x, 0.99)}
