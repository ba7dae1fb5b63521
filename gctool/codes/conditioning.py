"""Worst-case condition number of the decoding systems of a real or complex design.

For survivors F the master solves ``a^T B_F = targets``; its sensitivity is measured by
``cond(B_F) = sigma_max / sigma_min`` of the row-normalised B_F on its numerical rank
(:func:`gctool.numerics.normalise_rows`, :func:`gctool.numerics.numerical_rank`), the quantity
the verifier's diagnostics report and the one float64 decoding depends on, so the numbers are
the same as ``gctool verify``'s.  (B_F may be rank-deficient and still decode,
e.g. ``rs`` codes whose mask repeats a column support.)

``design`` records the worst value over every straggler set of size s when that is cheap (at
most ``EXACT_LIMIT`` sets and ``EXACT_WORK`` flops, or set classes for cyclic codes, whose
rotations have the same singular values), and otherwise an *estimate*: the maximum over the
s-blocks of consecutive workers (clustered missing nodes are the bad cases of Vandermonde-type
codes) plus pseudo-random sets (fixed seed 0, so the estimate is reproducible). An estimate is a
lower bound on the true worst case, and the recorded method says so.
"""

from __future__ import annotations

from math import comb
from typing import Any

import numpy as np

from gctool.algebra.fields import Field
from gctool.limits import CONDITION_EXACT_SETS
from gctool.numerics import condition, normalise_rows, numerical_rank

EXACT_LIMIT = CONDITION_EXACT_SETS  # straggler sets evaluated for an exact worst case
EXACT_WORK = 2e9  # ... and flops spent on it (sum of SVD costs), else an estimate
WORK_LIMIT = 5e7  # flops spent on an estimate (sum of SVD costs; at least 8 sets ...)
ESTIMATE_MAX_WORK = 1e9  # ... unless 8 sets cost more than this: then fewer, or none at all
NOT_ESTIMATED = "not estimated"
CHUNK = 2048  # straggler sets per batch of SVDs


class ConditionKernel:
    """cond(B_F) of the row-normalised B_F on its numerical rank, per straggler set (inf when
    B_F is 0); a kernel of the enumeration engine (:class:`gctool.engine.sweep.PeakWorker`
    folds its largest value)."""

    def __init__(self, B: np.ndarray) -> None:
        self.B = normalise_rows(B)[0]  # rows of B_F are rows of B: B_F normalised is (D B)_F

    def errors(self, S: np.ndarray) -> np.ndarray:
        from gctool.engine.enumeration import survivors_of

        F = survivors_of(S, self.B.shape[0])
        out = []
        for start in range(0, F.shape[0], CHUNK):
            BF = self.B[F[start:start + CHUNK]]
            sv = np.linalg.svd(BF, compute_uv=False)
            out.append(condition(sv, numerical_rank(sv, BF.shape)))
        return np.concatenate(out) if out else np.zeros(0)


def _worst_enumerated(B: np.ndarray, s: int, count: int) -> float:
    """Largest cond(B_F) over the first ``count`` straggler sets of size s in lexicographic
    order (all of them, or the C(n-1, s-1) sets containing worker 0)."""
    from gctool.engine.sweep import LexSource, PeakWorker, WorstFold, rank_tasks, run_folded

    fold = WorstFold()
    worker = PeakWorker(LexSource(B.shape[0], s), ConditionKernel(B))
    run_folded(worker, rank_tasks(count, CHUNK), fold)
    return fold.error


def _sample(n: int, s: int, n_blocks: int, count: int) -> np.ndarray:
    starts = np.unique(np.linspace(0, n, num=min(n, n_blocks), endpoint=False).astype(int))
    blocks = np.array([[(i + t) % n for t in range(s)] for i in starts], dtype=np.intp)
    rng = np.random.default_rng(0)
    rand = np.array([np.sort(rng.choice(n, s, replace=False)) for _ in range(count)],
                    dtype=np.intp).reshape(count, s)
    return np.concatenate([blocks, rand])


def worst_condition(B: np.ndarray, s: int, cyclic: bool = False) -> tuple[float | None, str]:
    """(worst cond(B_F) over straggler sets of size s, how it was obtained)."""
    n, cols = B.shape
    if s == 0:  # one system, B itself (on its numerical rank, as for every B_F)
        from gctool.algebra.spectral import Spectral

        value = Spectral.of(B).kappa
        return (value if np.isfinite(value) else None), "exact (no stragglers)"
    total = comb(n - 1, s - 1) if cyclic else comb(n, s)
    f = n - s
    per_set = f * cols * min(f, cols)
    if total <= EXACT_LIMIT and total * per_set <= EXACT_WORK:
        value = _worst_enumerated(B, s, total)  # sets containing 0 come first in lex order
        what = "straggler sets containing worker 0 (rotations have equal conditioning)" \
            if cyclic else "straggler sets"
        method = f"exact: maximum over all {total:,} {what}"
    else:
        budget = int(min(512, max(8, WORK_LIMIT // max(per_set, 1))))
        budget = int(min(budget, ESTIMATE_MAX_WORK // max(per_set, 1)))
        if budget == 0:  # one SVD alone is above the budget (n near 4096): say so, fast
            return None, (f"{NOT_ESTIMATED}: one decoding system ({f} x {cols}) costs about "
                          f"{per_set:.2g} flops, above the design budget of "
                          f"{ESTIMATE_MAX_WORK:.2g}; 'gctool verify' reports conditioning")
        S = _sample(n, s, max(1, budget // 2), budget - max(1, budget // 2))
        value = float(np.max(ConditionKernel(B).errors(S)))
        where = " containing worker 0" if cyclic else ""
        method = (f"estimate (lower bound): maximum over {S.shape[0]:,} of the {total:,} "
                  f"straggler sets{where} (blocks of consecutive workers and seeded random sets)")
    return (value if np.isfinite(value) else None), method


def record(B: np.ndarray, field: Field, s: int, cyclic: bool = False) -> dict[str, Any]:
    """Params recording the worst-case condition number (real and complex designs only)."""
    if field.is_finite:
        return {}
    value, method = worst_condition(np.asarray(B), s, cyclic)
    if value is None and not method.startswith(NOT_ESTIMATED):
        method += "; some B_F is singular (condition infinite)"
    return {"worst_condition": value, "worst_condition_method": method}
