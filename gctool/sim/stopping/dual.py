"""The stopping rule of real codes with a large cap: the dual walk.

**Dual walk** (real codes with cap >= :data:`DUAL_FROM`, where a QR per round costs
milliseconds): with ``a0`` (a minimum-norm solution of ``a^T B = T``), ``N`` (a basis of the
left null space of B) and ``G = (B B^T)^+`` computed once by one SVD (:func:`dual_of`; large
sparse square codes: :mod:`gctool.sim.stopping.sparse`), the residual of the workers outside a
straggler set S is ``min_z (v - N_S z)^T G_SS^-1 (v - N_S z)`` with ``v = -a0_S``: a
|S| x dim(N) problem (:func:`dual_residual`).  A round starts at the cap (S = the s latest
workers) and walks down one arrival at a time while the prefix still decodes (at most
:data:`WALK` steps, then QR); every verdict must clear the tolerance by the factor
:data:`gctool.sim.stopping.qr.MARGIN`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from gctool.budget import Meter
from gctool.numerics import EPS, numerical_rank, rank_cutoff
from gctool.sim.stopping.qr import MARGIN

#: from this cap on, the dual walk beats the batched QR (QR: O(k cap^2) per round)
DUAL_FROM = 48
#: prefixes tried below the cap by the dual walk before the round goes to QR
WALK = 16
#: one dual residual (:meth:`DualWalk.verdict` of f >= 1 stragglers: the Cholesky factor of
#: G_SS, triangular solves, and with null directions the SVD of N_S and the fit to them, each a
#: numpy or scipy call on small matrices) takes VERDICT_NS ns, VERDICT_FULL_RANK_NS without
#: null directions (dim N = 0) ...
VERDICT_NS = 180_000
VERDICT_FULL_RANK_NS = 75_000
#: ... plus VERDICT_STRAGGLER_NS a straggler and VERDICT_CUBE_NS f^3 (the factorisations), and
#: for the sparse dual data (:mod:`gctool.sim.stopping.sparse`) SPARSE_COLUMN_NS f n (the
#: columns of G_SS solved, 10-110 ns f n with the column cache hit or missed at n = 600-2048).
#: Fitted to the CPU time of 150 random straggler sets of real cyclic codes n = 30 to 2048 and
#: random dense ones, f = 1 to 100 (minimum of 5, one core of the 2-core development machine
#: under load): 150-390 us; the charge before (2.5 us + 6 (f^3 + 10 f n) ns) read 5-40x at
#: f <= 16 and 0.05 at f = 100.  A run spends the verdicts' mean, not their minimum: with null
#: directions (SR-SGC and M-SGC n = 16-128, 1-4 stragglers, 300 sets each) the minimum read
#: 152-179 us, the median 163-203 us, the mean 178-233 us, so VERDICT_NS is the median's
#: (160 us before: SR-SGC n = 128's verdicts in a run cost 1.2-1.35x their charge)
VERDICT_STRAGGLER_NS = 1_400
VERDICT_CUBE_NS = 0.05
SPARSE_COLUMN_NS = 60
#: the residual of a set that fails by one direction (one straggler past the cap of an
#: s-tolerant code) is about a chi-square of one degree of freedom: P(residual < x) is about
#: NEAR_SCALE sqrt(x) at small x (measured on 3,000 random sets of s + 1 stragglers of real
#: cyclic codes n = 64 to 256, s = 4 to 32, median residual 0.8-1.0: 0.0017-0.003 at 1e-5,
#: 0.006 at 1e-4, 0.017-0.026 at 1e-3, 0.051-0.063 at 1e-2)
NEAR_SCALE = 0.6


def near_share(limit: float) -> float:
    """The share of rounds whose dual residual one arrival below the cap lands within
    :data:`MARGIN` of the tolerance ``limit`` (:meth:`DualWalk.verdict` says neither, and the
    QR neither: the generic decoder's search decides the round), from :data:`NEAR_SCALE`:
    0.0015 at limit 6.4e-8 (k = 64), 0.003 at 2.56e-7 (k = 256)."""
    from math import sqrt

    return min(1.0, NEAR_SCALE * (sqrt(limit * MARGIN) - sqrt(limit / MARGIN)))


def verdict_cost(f: int, n: int, null: bool, sparse: bool = False) -> float:
    """Estimated time of one :meth:`DualWalk.verdict` of ``f`` stragglers of an n-worker code
    whose B has (``null``) a left null space or not, with ``sparse`` dual data or the SVD's,
    in ns (none straggles: nothing is solved)."""
    from gctool.budget import FAST_SET_COST

    if f <= 0:
        return FAST_SET_COST
    return ((VERDICT_NS if null else VERDICT_FULL_RANK_NS) + VERDICT_STRAGGLER_NS * f
            + VERDICT_CUBE_NS * f**3 + (SPARSE_COLUMN_NS * f * n if sparse else 0))


@dataclass
class Dual:
    """What the dual residual needs of a real code B (n x k) with targets T: a solution a0 of
    ``B^T a0 = T^T``, an orthonormal basis N of the left null space of B, and the blocks
    ``G_SS`` of a matrix ``G = (B B^T)^+ + N C N^T`` (any C: the residual does not depend on
    it, see :func:`dual_residual`)."""

    a0: np.ndarray  # (n, m)
    N: np.ndarray  # (n, dim)
    gss: Callable[[np.ndarray], np.ndarray]
    method: str  # "svd" | "sparse"


def dual_of(B: np.ndarray, Tt: np.ndarray, certain: float) -> Dual | None:
    """The dual data by one SVD of B (a0 of minimum norm, G = (B B^T)^+); None when even
    all n workers do not decode."""
    U, S, Vh = np.linalg.svd(B, full_matrices=True)
    r = int(numerical_rank(S, B.shape))  # the one cut-off (of B as given)
    if r == 0:
        return None
    a0 = U[:, :r] @ ((Vh[:r] @ Tt) / S[:r, None])  # (n, m)
    if np.sum((B.T @ a0 - Tt) ** 2) > certain:
        return None
    G = (U[:, :r] / S[:r] ** 2) @ U[:, :r].T
    return Dual(a0, np.ascontiguousarray(U[:, r:]), lambda S_: G[np.ix_(S_, S_)], "svd")


#: a direction of N_S (N orthonormal: its rows' scale is 1) with a singular value at least this
#: is a null direction of B, not round-off of its basis (which is near max(n, dim) eps times the
#: condition of B); a smaller one decides a verdict only when the verdict holds without it
SURE_DIRECTION = float(np.sqrt(EPS))


def dual_residual(dual: Dual, S: np.ndarray) -> float | None:
    """Least-squares residual ``min ||B_F^T a - T^T||^2`` of the workers outside S.

    Every a with a_S = 0 is a0 + x with x_S = v = -a0_S, and ``||B^T x||^2 = x^T B B^T x``;
    minimising over x (x = N z + G u) gives ``min_z (v - N_S z)^T G_SS^-1 (v - N_S z)``, a
    |S| x dim(N) weighted least-squares problem: small when few workers straggle.  Neither a0
    (another solution is a0 + N w: z absorbs w) nor G (``G_SS + N_S C N_S^T``: the residual of
    a generalised least-squares problem does not change when the weight gains a term in the
    span of its design N_S, Rao 1967) needs to be the SVD's.  Directions of N_S at round-off
    level (singular values at most the rank cut-off of an orthonormal N) are not null
    directions: rows of N outside its support (a worker no null vector uses) hold round-off
    only, and fitting it made the residual of a failing set 0.
    """
    found = dual_residuals(dual, S, (float(rank_cutoff(1.0, dual.N.shape)),))
    return None if found is None else found[0]


def dual_residuals(dual: Dual, S: np.ndarray, cuts: tuple[float, ...]) -> list[float] | None:
    """:func:`dual_residual` with the directions of N_S whose singular values exceed each of
    ``cuts`` (fewer directions: a residual at least as large); None when G_SS is not
    positive definite."""
    a0, N = dual.a0, dual.N
    if len(S) == 0:
        return [0.0] * len(cuts)
    v = -a0[S]
    try:
        L = np.linalg.cholesky(dual.gss(S))
    except np.linalg.LinAlgError:
        return None
    from scipy.linalg import solve_triangular

    Y = solve_triangular(L, v, lower=True)
    if not N.shape[1]:
        return [float(np.sum(Y ** 2))] * len(cuts)
    NS = N[S]
    if float(np.linalg.svd(NS, compute_uv=False)[-1]) > max(cuts):  # every cut keeps all
        X = solve_triangular(L, NS, lower=True)
        R = Y - X @ np.linalg.lstsq(X, Y, rcond=None)[0]
        return [float(np.sum(R ** 2))] * len(cuts)
    U, sv, _ = np.linalg.svd(NS, full_matrices=False)  # sv descending: a cut keeps a prefix
    Q = np.linalg.qr(solve_triangular(L, U, lower=True))[0]  # nested spans of the prefixes
    out = []
    for cut in cuts:
        Qk = Q[:, :int(np.sum(sv > cut))]
        out.append(float(np.sum((Y - Qk @ (Qk.T @ Y)) ** 2)))
    return out


class DualWalk:
    """Verdicts from the stragglers of a set, and the walk down from the cap."""

    def __init__(self, dual: Dual, limit: float, n: int, meter: Meter) -> None:
        self.dual, self.limit, self.n, self.meter = dual, limit, n, meter
        #: every direction of N_S above round-off, and the sure ones only (dual_residuals)
        self.cuts = (float(rank_cutoff(1.0, dual.N.shape)), SURE_DIRECTION)

    def verdict(self, S: np.ndarray) -> bool | None:
        """Decodes without the stragglers S: True/False when clear, None when near the
        tolerance or the dual computation fails."""
        dual = self.dual  # a |S| x |S| system, and |S| solves with G (sparse LU or dense rows)
        self.meter.charge(verdict_cost(len(S), self.n, dual.N.shape[1] > 0,
                                       dual.method == "sparse"),
                          "dual residuals of arrival prefixes")
        found = dual_residuals(self.dual, S, self.cuts)
        if found is None:
            return None
        low, high = found  # with every null direction of N_S, and with the sure ones only
        if high <= self.limit / MARGIN:
            return True
        if low >= self.limit * MARGIN:
            return False
        return None

    def walk(self, order: np.ndarray, cap: int, p: np.ndarray, exact: np.ndarray
             ) -> np.ndarray:
        """Rounds decided by walking down from the cap with the dual residual (the stragglers
        of a prefix are few); the others are returned."""
        left = []
        for r in range(len(order)):
            q = cap
            first = self.verdict(order[r, q:])
            if first is None:
                left.append(r)
                continue
            if not first:
                p[r], exact[r] = cap, False
                continue
            steps = 0
            while q > 1 and steps < WALK:
                v = self.verdict(order[r, q - 1:])
                if v is None:
                    break
                if not v:
                    steps = -1
                    break
                q -= 1
                steps += 1
            if steps == -1 or q == 1:
                p[r], exact[r] = q, True
            else:
                left.append(r)
        return np.array(left, dtype=np.int64)
