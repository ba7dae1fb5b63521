"""Cyclic repetition codes: Tandon et al. 2017, Algorithm 2 (reference §1.2).

1. Draw ``H`` (s x n) with i.i.d. entries in its first n-1 columns and last column minus
   their sum, so ``H 1 = 0``.
2. Row i has support ``{i, ..., i+s} mod n``: ``B[i, i] = 1`` and the other s entries solve
   ``H[:, W_i] b = -H[:, i]``.

Then ``B H^T = 0``: every row lies in ``null(H)`` (dimension n - s), which contains 1, and with
probability 1 (reals: standard normal; complex: standard complex normal) any n - s rows are
independent.  Over GF(q) entries are uniform; a draw whose s x s systems are singular, or that
fails the exact exhaustive check, is redrawn (up to ``MAX_ATTEMPTS`` times).  The number of draws
used is recorded as ``params.attempts``.
"""

from __future__ import annotations

from math import comb
from typing import Any

from gctool._lazy import numpy as np
from gctool.algebra.fields import Field
from gctool.budget import Budget
from gctool.errors import DesignError
from gctool.family import Family

MAX_ATTEMPTS = 64
MAX_CHECK_SETS = 2_000_000  # exact verification of a GF(q) draw


def _windows(n: int, s: int) -> list[list[int]]:
    return [[(i + t) % n for t in range(1, s + 1)] for i in range(n)]


def _draw_numeric(n: int, s: int, field: Field, rng: np.random.Generator) -> np.ndarray:
    H = rng.standard_normal((s, n))
    if field.kind == "complex":
        H = (H + 1j * rng.standard_normal((s, n))) / np.sqrt(2)
    H[:, -1] = -H[:, :-1].sum(axis=1)
    B = np.zeros((n, n), dtype=H.dtype)
    for i, W in enumerate(_windows(n, s)):
        B[i, i] = 1
        if s:
            B[i, W] = np.linalg.solve(H[:, W], -H[:, i])
    return B


def _draw_gf(n: int, s: int, field: Field, rng: np.random.Generator) -> np.ndarray | None:
    """One draw over GF(q), with the algebra layer's arithmetic: H uniform (the stream of
    galois' ``FieldArray.Random``: its smallest unsigned dtype), and the n window systems
    solved in one batch; None when one of them is singular."""
    from gctool.algebra.gf import GFArith
    from gctool.algebra.linalg import solve_batch

    ar, q = GFArith(field.resolved()), field.order
    dtype = next(d for d in (np.uint8, np.uint16, np.uint32) if np.iinfo(d).max >= q - 1)
    H = rng.integers(0, q, (s, n), dtype=dtype).astype(np.int64)
    B = np.eye(n, dtype=np.int64)
    if not s:
        return B
    H[:, -1] = ar.neg(ar.sum(H[:, :-1]))
    W = np.array(_windows(n, s), dtype=np.intp)  # (n, s)
    A = H[:, W].transpose(1, 0, 2)  # A[i] = H[:, W_i]
    Y = ar.neg(H.T)[:, :, None]  # -H[:, i]
    _, rank, X = solve_batch(ar, np.concatenate([A, Y], axis=2), s)
    if (rank < s).any():
        return None
    B[np.arange(n)[:, None], W] = X[:, :, 0]
    return B


class _Fails:
    """1.0 for each straggler set whose survivors cannot recover the target, else 0.0 (the
    left-null-space test of :mod:`gctool.algebra.linalg`); a kernel of the enumeration engine."""

    def __init__(self, arith: Any, N: np.ndarray, W: np.ndarray) -> None:
        self.arith, self.N, self.W = arith, N, W

    def errors(self, S: np.ndarray) -> np.ndarray:
        from gctool.algebra.linalg import reduced_decodes

        return (~reduced_decodes(self.arith, self.N, self.W, S)).astype(np.float64)


def _tolerates(B: np.ndarray, field: Field, s: int, budget: Budget | None) -> bool:
    """Exact check over GF(q): do the survivors of every set of s stragglers recover the
    all-ones target?  Every set through the enumeration engine (:mod:`gctool.engine.sweep`),
    stopping at the first that fails; refused first when its estimate (the numpy null-space
    test's per set, :func:`gctool.audit.nullspace.gf_nullspace_time`) is above ``budget``
    (None: not checked; a draw that fails stops early, so only the first draw is held to it)."""
    from gctool.algebra.gf import GFArith
    from gctool.algebra.linalg import left_null_reduction
    from gctool.audit.nullspace import Reduction, gf_nullspace_time
    from gctool.engine.sweep import ExceedFold, ExceedWorker, LexSource, rank_tasks, run_folded

    arith, n = GFArith(field), B.shape[0]
    N, W, consistent = left_null_reduction(arith, B, np.ones((1, B.shape[1]), dtype=np.int64))
    if not consistent or N.shape[0] < s:  # all n fail, or rank(B) > n - s (a set fails)
        return False
    if s == 0:
        return True
    if budget is not None:
        per_set = gf_nullspace_time(Reduction(N, W, n - N.shape[0], True), s, 1, field)
        budget.check_work(f"cyclic (n={n}, s={s}, {field}): the exact check of a draw's "
                          f"{comb(n, s):,} straggler sets", comb(n, s) * per_set,
                          "use a smaller n or s, or `field`=real, or raise `max_work`")
    fold = ExceedFold()
    run_folded(ExceedWorker(LexSource(n, s), _Fails(arith, N, W), 0.5),
               rank_tasks(comb(n, s), 4096), fold)
    return fold.fail_set is None


def build(n: int, s: int, k: int | None, field: Field, rng: np.random.Generator, *, budget: Budget
          ) -> tuple[np.ndarray, dict[str, Any]]:
    if k is not None and k != n:
        raise DesignError(f"cyclic needs k = n (got k = {k}, n = {n}); use 'frc' or drop -k")
    if not field.is_finite:
        from gctool.budget import lu_solve_cost

        budget.check_work(f"cyclic (n={n}, s={s}, {field}): {n:,} solves of {s} x {s} systems",
                          n * lu_solve_cost(s), "use a smaller s, or cyclic-mds (a structured "
                          "code with a BCH certificate), or raise `max_work`")
        return _draw_numeric(n, s, field, rng), {}
    if comb(n, s) > MAX_CHECK_SETS:
        raise DesignError(
            f"a GF(q) cyclic draw is verified exactly, and n = {n}, s = {s} gives {comb(n, s):,} "
            f"straggler sets (limit {MAX_CHECK_SETS:,}); use `field`=real"
        )
    from gctool.algebra.gf import GFArith
    from gctool.algebra.linalg import check_elimination

    check_elimination(budget, GFArith(field.resolved()), (1, n, n), n)  # each draw's, up front
    first: Budget | None = budget
    for attempt in range(1, MAX_ATTEMPTS + 1):
        B = _draw_gf(n, s, field, rng)
        if B is not None:
            if _tolerates(B, field, s, first):
                return B, {"attempts": attempt}
            first = None
    raise DesignError(
        f"no valid cyclic code over {field} found in {MAX_ATTEMPTS} random draws for n = {n}, "
        f"s = {s}; use a larger field (order well above n) or `field`=real"
    )


class CyclicFamily(Family):
    name = "cyclic"
    build = staticmethod(build)
    summary = "Cyclic repetition code (Tandon's Algorithm 2), random and seeded."
    description = (
        "Row i is supported on the cyclic window {i..i+s} and lies in the null space of a "
        "random s x n matrix H with H 1 = 0, so any n-s rows span 1 with probability 1 over "
        "the reals and complex numbers. Over GF(q) each draw is verified exactly and redrawn "
        "if it fails. Needs k = n."
    )
    reference = "Tandon, Lei, Dimakis, Karampatziakis, ICML 2017 (TLDK17), Algorithm 2"
    randomized = True
    examples = ("gctool design cyclic -n 8 -s 2 `seed` 1",
                "gctool design cyclic -n 6 -s 2 `field` 'GF(31)' `seed` 7 -o crc31.json")
    self_checked = True
