"""Mean error under random stragglers, for comparison with the adversarial worst case.

* uniform: S uniformly random among the s-sets;
* i.i.d.: every worker straggles independently with probability p (or p_i, heterogeneous).

Exact when the sets can be enumerated within the budget (C(n, s) sets, or all 2^n sets for
i.i.d. straggling); otherwise a seeded Monte-Carlo estimate with a 95% normal confidence
interval ``mean +- 1.96 sd / sqrt(N)``.  For fixed decoding with user weights the i.i.d. mean has
a closed form (reference §4): ``E err = c0 + sum_i p_i (h_i + G_ii) + sum_{i != j} p_i p_j G_ij``.
"""

from __future__ import annotations

from math import comb
from typing import Any

import numpy as np

from gctool.audit.oracles import FixedOracle, Oracle
from gctool.budget import Budget
from gctool.errors import InvalidInput
from gctool.limits import DEFAULT_SAMPLES

SUM_CHUNK = 65_536  # straggler sets per batch of an exact mean
#: a mean is exact (every set) up to this many sets, else sampled; an explicit ``max_sets``
#: of the budget replaces it
EXACT_SETS = 5_000_000


def exact_sets(budget: Budget) -> int:
    """The most sets a mean enumerates exactly under ``budget``."""
    return EXACT_SETS if budget.max_sets is None else budget.max_sets
Z95 = 1.959963984540054


def _mc(errs: np.ndarray, seed: int) -> dict[str, Any]:
    mean = float(errs.mean())
    se = float(errs.std(ddof=1) / np.sqrt(errs.size)) if errs.size > 1 else float("nan")
    return {"mean": mean, "exact": False, "samples": int(errs.size), "seed": seed,
            "ci95": [mean - Z95 * se, mean + Z95 * se], "stderr": se}


def error_sum(oracle: Oracle, s: int, p: np.ndarray | None = None) -> float:
    """Sum of the errors of every straggler set of size s (weighted by the probability of
    the set under independent straggling with probabilities ``p``), by the enumeration
    engine (:class:`gctool.engine.sweep.SumWorker`)."""
    from gctool.audit.oracles.kernel import OracleKernel
    from gctool.engine.sweep import LexSource, SumFold, SumWorker, rank_tasks, run_folded

    fold = SumFold()
    worker = SumWorker(LexSource(oracle.n, s), OracleKernel.of(oracle), p)
    run_folded(worker, rank_tasks(comb(oracle.n, s), SUM_CHUNK), fold)
    return fold.total


def uniform_mean(oracle: Oracle, s: int, *, budget: int, samples: int = DEFAULT_SAMPLES,
                 seed: int = 0) -> dict[str, Any]:
    """Mean error over uniformly random straggler sets of size s."""
    n = oracle.n
    total = comb(n, s)
    if total <= budget:
        return {"mean": error_sum(oracle, s) / total, "exact": True, "sets": total}
    rng = np.random.default_rng(seed)
    keys = rng.random((samples, n))
    S = np.sort(np.argpartition(keys, s - 1, axis=1)[:, :s], axis=1).astype(np.intp)
    return _mc(oracle.errors(S), seed)


def iid_mean(oracle: Oracle, p: float | np.ndarray, *, budget: int,
             samples: int = DEFAULT_SAMPLES, seed: int = 0) -> dict[str, Any]:
    """Mean error when worker i straggles independently with probability p (or p[i])."""
    n = oracle.n
    pv = np.broadcast_to(np.asarray(p, dtype=np.float64), (n,)).copy()
    if pv.shape != (n,) or np.any(~np.isfinite(pv)) or np.any((pv < 0) | (pv > 1)):
        raise InvalidInput(f"straggler probabilities must be {n} numbers in [0, 1]")
    closed = _fixed_closed_form(oracle, pv)
    if closed is not None:
        return {"mean": closed, "exact": True, "method": "closed form (fixed weights)"}
    if 2**n <= budget:
        acc = sum(error_sum(oracle, t, pv) for t in range(n + 1))
        return {"mean": acc, "exact": True, "sets": 2**n}
    rng = np.random.default_rng(seed)
    masks = rng.random((samples, n)) < pv
    return _mc(oracle.errors_masks(masks), seed)


def _fixed_closed_form(oracle: Oracle, p: np.ndarray) -> float | None:
    if not isinstance(oracle, FixedOracle) or oracle.user is None or oracle.finite:
        return None
    c0, h, G = oracle.quad(0)
    off = G - np.diag(np.diag(G))
    return float(c0 + p @ (h + np.diag(G)) + p @ off @ p)


def mean_work(oracle: Oracle, s: int | None, p: float | np.ndarray | None, *, budget: int,
              samples: int = DEFAULT_SAMPLES) -> float:
    """Estimated work of :func:`uniform_mean` at size ``s`` and :func:`iid_mean` at ``p`` (each
    when given), before either starts: the sets they decode at the oracle's cost per set (all
    sets when they fit ``budget``; else ``samples`` sets, whose sizes under i.i.d. straggling
    follow the Poisson-binomial law of ``p``: the expected cost, with a quarter as margin); a
    closed form costs nothing."""
    n, work = oracle.n, 0.0
    if s is not None:
        total = comb(n, s)
        work += oracle.set_work(s, total if total <= budget else samples)
    if p is None or (isinstance(oracle, FixedOracle) and oracle.user is not None
                     and not oracle.finite):
        return work
    if 2**n <= budget:
        return work + sum(oracle.set_work(t, comb(n, t)) for t in range(n + 1))
    pv = np.clip(np.nan_to_num(np.broadcast_to(np.asarray(p, dtype=np.float64), (n,))), 0, 1)
    law = np.ones(1)
    for q in pv:  # the law of the number of stragglers
        law = np.concatenate([law * (1 - q), [0.0]]) + np.concatenate([[0.0], law * q])
    each = np.array([oracle.set_work(t, 1) for t in range(n + 1)], dtype=np.float64)
    return work + 1.25 * samples * float(law @ each)
