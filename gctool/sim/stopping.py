"""When the master of a gradient code can stop waiting: fast, per-scheme decodability oracles.

The waiting rule of a code file (:mod:`gctool.sim.contenders`) is: stop at the earliest arrival
after which the arrived rows decode exactly, or at the (n - s)-th arrival (cap) with the
optimal approximate decoder.  Decodability is monotone in the set, so the rule is the smallest
decodable prefix of the arrival order.  The naive path (:class:`PrefixDecoder`) binary-searches
that prefix with one SVD of B_F per probe: log2(n) SVDs of an (n-s) x k matrix per round.  This
module answers the same question at the cost of sorting the arrival times plus a check that is
precomputed once per scheme:

* **Groups** (FRC, BCC and any code of the same shape, recognised from B itself, any field):
  the non-zero rows fall into classes of rows with one support, each row constant on its
  support, and the supports of the classes partition the k columns.  Then F decodes exactly
  iff it holds a row of every class (every column must be covered, and one row of a class
  gives that class's indicator).  Per round: the earliest prefix is the latest of the
  classes' first arrivals, ``max_g min_{i in g} pos_i + 1`` — no linear algebra at all.
* **QR** (every other code over R or C): one Householder QR (LAPACK, batched over rounds) of
  ``[B_F^T | T^T]`` with the first ``cap`` arrivals as columns, in arrival order, gives the
  least-squares residual of *every* prefix at once: the prefix of length j leaves
  ``sum_{i >= j} |R_i,targets|^2`` (an incremental rank update in arrival order, without
  cancellation).  A round is decided here only when the verdict is clear: the prefix has
  full numerical rank (``|R_jj|`` far above ``eps``) and the residuals where it first decodes
  and just before lie a factor 100 below and above ``tol k``.  Any other round (a
  rank-deficient prefix, a verdict near the tolerance) goes to the naive path, so the result
  is the naive path's.
* **Dual walk** (real codes with cap >= 48, where a QR per round costs milliseconds): with
  ``a0`` (a minimum-norm solution of ``a^T B = T``), ``N`` (a basis of the left null space of
  B) and ``G = (B B^T)^+`` computed once by one SVD, the residual of the workers outside a
  straggler set S is ``min_z (v - N_S z)^T G_SS^-1 (v - N_S z)`` with ``v = -a0_S``: a
  |S| x dim(N) problem (:func:`_dual_residual`).  A round starts at the cap (S = the s
  latest workers) and walks down one arrival at a time while the prefix still decodes
  (at most 16 steps, then QR); every verdict must clear the tolerance by the same factor 100.
  For a large sparse square code (n >= 512, Tandon's cyclic codes: SR-SGC's and M-SGC's
  per-round codes) the SVD of B (minutes at n = 4096) is replaced by two sparse LU
  factorisations of bordered matrices (:func:`_sparse_dual_of`, under a second at n = 4096):
  any solution a0 and any ``G = (B B^T)^+ + N C N^T`` give the same residual, and
  ``G_SS`` comes from |S| sparse solves.  Its own checks (N at round-off level, a
  well-conditioned bordered matrix, a0 within the tolerance) make its rank that of the SVD
  path; when they fail the SVD is taken.
* **Naive** (codes over GF(q) without the group shape): :class:`PrefixDecoder`, with a cache.

Cost per round: groups O(n) after the sort; QR O(k cap^2) flops in LAPACK instead of
log2(n) SVDs of the same size; the dual walk O(s^3) per probe after one SVD of B per scheme
(sparse codes: one sparse LU per scheme and O(|S|) sparse solves per probe).

The same oracles answer "does this set of workers decode" for the per-round codes of SR-SGC and
M-SGC (:meth:`StopRule.decodes_mask`): groups by counting; real codes by the dual residual
of the set's stragglers, then QR, then the naive decoder when the verdict is not clear.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from gctool.limits import DEFAULT_TOL
from gctool.model import GradientCode
from gctool.numerics import decode_limit, numerical_rank

#: entries of the stacked [B_F^T | T^T] per batched QR
_CHUNK_ENTRIES = 4_000_000
_MARGIN = 100.0
_DUAL_FROM = 48  # from this cap on, the dual walk beats the batched QR (QR: O(k cap^2) per round)
_WALK = 16  # prefixes tried below the cap by the dual walk before the round goes to QR
_SPARSE_FROM = 512  # from this n on, square sparse real codes get their dual data by sparse LU
_SPARSE_DENSITY = 0.05  # ... when at most this fraction of B is non-zero
_SPARSE_MARGIN = 100.0  # the sparse path's rank must clear the SVD's cut-off by this factor
_SPARSE_COLUMNS = 1024  # columns of (B + N Q^T)^-1 kept for G_SS


class WorkMeter:
    """The work budget (:func:`gctool.limits.check_work`) enforced while a simulation runs:
    how many rounds need linear algebra depends on the drawn delays, so the work is counted as
    it is spent, and the run is refused (exit 2) as soon as the total passes the budget."""

    def __init__(self, code: GradientCode) -> None:
        self.code, self.spent = code, 0

    def charge(self, work: int, what: str) -> None:
        from gctool._signals import checkpoint
        from gctool.limits import check_work

        checkpoint()
        self.spent += int(work)
        check_work(f"simulating the {self.code.scheme} code (n={self.code.n}, "
                   f"k*m={self.code.B.shape[1]}): {what} so far", self.spent,
                   "simulate fewer --iterations, a smaller or better-conditioned code, or a "
                   "code with the group shape (FRC), or raise --max-work")


class PrefixDecoder:
    """Earliest decodable prefix of an arrival order by binary search with the generic decoder
    (the naive path; decodability is monotone in the set)."""

    def __init__(self, code: GradientCode, tol: float = DEFAULT_TOL) -> None:
        from gctool.decode import Decoder

        self.decoder = Decoder(code, tol)
        self.code_columns = int(code.B.shape[1])
        self.cache: dict[frozenset[int], bool] = {}
        self.meter = WorkMeter(code)

    def ok(self, workers: np.ndarray) -> bool:
        key = frozenset(int(i) for i in workers)
        hit = self.cache.get(key)
        if hit is None:
            from gctool.limits import set_cost

            self.meter.charge(set_cost(len(key), self.code_columns,
                                         self.decoder.exact), "exact decodes of arrival prefixes")
            hit = bool(self.decoder.decode(sorted(key)).ok) if key else False
            if len(self.cache) < 200_000:
                self.cache[key] = hit
        return hit

    def earliest(self, order: np.ndarray, cap: int) -> tuple[int, bool]:
        """(p, exact): smallest p <= cap whose prefix decodes, else (cap, False)."""
        if not self.ok(order[:cap]):
            return cap, False
        lo, hi = 1, cap
        while lo < hi:
            mid = (lo + hi) // 2
            if self.ok(order[:mid]):
                hi = mid
            else:
                lo = mid + 1
        return lo, True


def group_labels(code: GradientCode) -> np.ndarray | None:
    """Class of every worker (-1: a zero row) when the code has the group shape, else None."""
    if code.m != 1:
        return None
    B = np.asarray(code.B)
    nz = B != 0
    labels = np.full(code.n, -1, dtype=np.int64)
    supports: dict[bytes, int] = {}
    reps: list[np.ndarray] = []
    for i in range(code.n):
        if not nz[i].any():
            continue
        vals = B[i, nz[i]]
        if not np.all(vals == vals[0]):
            return None
        key = np.packbits(nz[i]).tobytes()
        if key not in supports:
            supports[key] = len(reps)
            reps.append(nz[i])
        labels[i] = supports[key]
    if not reps:
        return None
    cover = np.sum(reps, axis=0)
    return labels if np.all(cover == 1) else None


class StopRule:
    """Decodability oracle of one code (see the module docstring); ``kind`` says which."""

    def __init__(self, code: GradientCode, tol: float = DEFAULT_TOL, dual: str = "auto") -> None:
        self.code, self.tol = code, tol
        self.naive = PrefixDecoder(code, tol)
        self.dual_method: str | None = None  # "svd" | "sparse" (real codes), see _dual_for
        self.labels = group_labels(code)
        self.fallbacks = 0  # rounds the fast path handed to the naive one
        self._masks: dict[int, bool] = {}
        if self.labels is not None:
            self.kind = "groups"
            used = self.labels >= 0
            self.groups = int(self.labels.max()) + 1
            self._by_class = np.argsort(np.where(used, self.labels, self.groups),
                                        kind="stable")[: int(used.sum())]
            sizes = np.bincount(self.labels[used], minlength=self.groups)
            self._starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
            self._class_masks = [sum(1 << int(i) for i in np.flatnonzero(self.labels == g))
                                 for g in range(self.groups)]
        elif not code.field.is_finite:
            self.kind = "qr"
            self._Bt = np.ascontiguousarray(np.asarray(code.B).T)  # (K, n)
            self._Tt = code.targets().T.astype(self._Bt.dtype)  # (K, m)
            self._dual: Dual | None = None
            if not np.iscomplexobj(self._Bt):
                self._dual = _dual_for(self._Bt.T, self._Tt,
                                       decode_limit(code.k, tol) / _MARGIN, code.s, dual,
                                       self.naive.meter)
                self.dual_method = None if self._dual is None else self._dual.method
        else:
            self.kind = "naive"

    # -- whole runs ------------------------------------------------------------------------------
    def earliest(self, times: np.ndarray, cap: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(order, p, exact) per round: stable arrival order, stopping prefix, exact decoding."""
        order = np.argsort(times, axis=1, kind="stable")
        R = len(times)
        if R == 0:
            return order, np.zeros(0, np.int64), np.zeros(0, bool)
        if self.kind == "groups":
            pos = np.empty_like(order)
            np.put_along_axis(pos, order, np.arange(self.code.n)[None, :], axis=1)
            first = np.minimum.reduceat(pos[:, self._by_class], self._starts, axis=1)
            p = first.max(axis=1) + 1
            exact = p <= cap
            return order, np.where(exact, p, cap), exact
        p = np.empty(R, np.int64)
        exact = np.empty(R, bool)
        todo = np.arange(R)
        if self.kind == "qr" and cap >= _DUAL_FROM and self._dual is not None:
            todo = self._by_dual(order, cap, p, exact)
            if len(todo):
                sub_p, sub_e = np.empty(len(todo), np.int64), np.empty(len(todo), bool)
                rest = self._qr(order[todo], cap, sub_p, sub_e)
                done = np.setdiff1d(np.arange(len(todo)), rest)
                p[todo[done]], exact[todo[done]] = sub_p[done], sub_e[done]
                todo = todo[rest]
        elif self.kind == "qr" and cap > 0:
            todo = self._qr(order, cap, p, exact)
        for r in todo:
            p[r], exact[r] = self.naive.earliest(order[r], cap)
        self.fallbacks += len(todo) if self.kind == "qr" else 0
        return order, p, exact

    def _qr(self, order: np.ndarray, cap: int, p: np.ndarray, exact: np.ndarray
            ) -> np.ndarray:
        """Fill p/exact for the rounds the QR path can decide; return the others."""
        K, m = self._Tt.shape
        limit = decode_limit(self.code.k, self.tol)
        eps = np.finfo(np.float64).eps
        if K < cap:  # more columns than rows: some prefix is rank-deficient
            return np.arange(len(order))
        chunk = max(1, _CHUNK_ENTRIES // (K * (cap + m)))
        left: list[int] = []
        for start in range(0, len(order), chunk):
            rows = np.arange(start, min(start + chunk, len(order)))
            self.naive.meter.charge(len(rows) * K * (cap + m) ** 2, "QR of arrival prefixes")
            M = np.concatenate([self._Bt[:, order[rows, :cap]].transpose(1, 0, 2),
                                np.broadcast_to(self._Tt, (len(rows), K, m))], axis=2)
            Rf: np.ndarray = np.asarray(np.linalg.qr(M, mode="r"))  # (rows, min(K,cap+m), cap+m)
            diag = np.abs(np.diagonal(Rf[:, :cap, :cap], axis1=1, axis2=2))
            full = diag.min(axis=1) > diag.max(axis=1) * max(cap, K) * eps * 1e4
            tail = np.sum(np.abs(Rf[:, :, cap:]) ** 2, axis=2)  # (rows, min(K, cap+m))
            resid = np.cumsum(tail[:, ::-1], axis=1)[:, ::-1][:, 1: cap + 1]  # after j+1 cols
            if resid.shape[1] < cap:
                resid = np.pad(resid, ((0, 0), (0, cap - resid.shape[1])))
            below = resid <= limit
            has = np.asarray(below.any(axis=1), dtype=bool)
            q = np.where(has, np.argmax(below, axis=1), cap - 1)  # 0-based prefix end
            at = resid[np.arange(len(rows)), q]
            before = np.where(q > 0, resid[np.arange(len(rows)), np.maximum(q - 1, 0)], np.inf)
            clear = np.where(has, (at <= limit / _MARGIN) & (before >= limit * _MARGIN),
                             at >= limit * _MARGIN)
            good = np.asarray(full & clear, dtype=bool)
            p[rows[good]] = np.where(has, q + 1, cap)[good]
            exact[rows[good]] = has[good]
            left.extend(rows[~good].tolist())
        return np.array(left, dtype=np.int64)

    # -- one set of workers ----------------------------------------------------------------------
    def decodes_mask(self, mask: int) -> bool:
        """Whether the workers in ``mask`` (bit i = worker i delivered) decode exactly."""
        if self.kind == "groups":
            return all(mask & cm for cm in self._class_masks)
        from gctool.sequential.model import members

        hit = self._masks.get(mask)
        if hit is not None:
            return hit
        from gctool.sequential.model import _bits

        F = np.array(members(mask), dtype=np.intp)
        hit = None
        if self.kind == "qr" and self._dual is not None:
            hit = self._verdict(np.flatnonzero(~_bits(mask, self.code.n)))
        if hit is None and self.kind == "qr" and len(F):
            p, exact = np.empty(1, np.int64), np.empty(1, bool)
            if not len(self._qr(F[None, :], len(F), p, exact)):
                hit = bool(exact[0])
        if hit is None:
            hit = self.naive.ok(F)
        if len(self._masks) < 200_000:
            self._masks[mask] = hit
        return hit

    def _verdict(self, S: np.ndarray) -> bool | None:
        """Decodes without the stragglers S: True/False when clear, None when near the
        tolerance or the dual computation fails."""
        assert self._dual is not None
        from gctool.limits import FAST_SET_COST, SMALL_SOLVE_FACTOR

        f = len(S)  # a |S| x |S| system, and |S| solves with G (sparse LU or dense rows)
        self.naive.meter.charge(FAST_SET_COST + SMALL_SOLVE_FACTOR * (f**3 + 10 * f * self.code.n),
                                "dual residuals of arrival prefixes")
        res = _dual_residual(self._dual, S)
        limit = decode_limit(self.code.k, self.tol)
        if res is None or limit / _MARGIN < res < limit * _MARGIN:
            return None
        return res <= limit / _MARGIN

    def _by_dual(self, order: np.ndarray, cap: int, p: np.ndarray, exact: np.ndarray
                 ) -> np.ndarray:
        """Rounds decided by walking down from the cap with the dual residual (the stragglers
        of a prefix are few); the others are returned."""
        n = self.code.n
        left = []
        for r in range(len(order)):
            q = cap
            first = self._verdict(order[r, q:])
            if first is None:
                left.append(r)
                continue
            if not first:
                p[r], exact[r] = cap, False
                continue
            steps = 0
            while q > 1 and steps < _WALK:
                v = self._verdict(order[r, q - 1:])
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
        del n
        return np.array(left, dtype=np.int64)


@dataclass
class Dual:
    """What the dual residual needs of a real code B (n x k) with targets T: a solution a0 of
    ``B^T a0 = T^T``, an orthonormal basis N of the left null space of B, and the blocks
    ``G_SS`` of a matrix ``G = (B B^T)^+ + N C N^T`` (any C: the residual does not depend on
    it, see :func:`_dual_residual`)."""

    a0: np.ndarray  # (n, m)
    N: np.ndarray  # (n, dim)
    gss: Callable[[np.ndarray], np.ndarray]
    method: str  # "svd" | "sparse"


def _dual_for(B: np.ndarray, Tt: np.ndarray, certain: float, s: int, how: str = "auto",
              meter: WorkMeter | None = None) -> Dual | None:
    """The dual data of a real code: by one sparse LU (:func:`_sparse_dual_of`) for large
    sparse square codes (or when ``how == "sparse"``), else (or when that one's own checks
    fail) by one SVD of B (:func:`_dual_of`)."""
    n, k = B.shape
    if how not in ("auto", "svd", "sparse"):
        raise ValueError(f"dual must be auto, svd or sparse, not {how!r}")
    square = n == k and 0 < s < n
    sparse = np.count_nonzero(B) <= _SPARSE_DENSITY * B.size
    if square and (how == "sparse" or (how == "auto" and n >= _SPARSE_FROM and sparse)):
        found = _sparse_dual_of(B, Tt, certain, s)
        if found is not None:
            return found
    if meter is not None:  # the SVD of B with its vectors, held to the work budget
        from gctool.limits import SMALL_SOLVE_FACTOR, solve_cost

        meter.charge(SMALL_SOLVE_FACTOR * solve_cost(n, k), "the SVD of B")
    return _dual_of(B, Tt, certain)


def _dual_of(B: np.ndarray, Tt: np.ndarray, certain: float) -> Dual | None:
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


def _sparse_dual_of(B: np.ndarray, Tt: np.ndarray, certain: float, d: int) -> Dual | None:
    """The dual data of a square sparse code whose B has rank n - d (Tandon's cyclic codes:
    d = s), by sparse LU of two bordered matrices instead of an SVD of B.

    1. ``K = [[B, R], [P^T, 0]]`` with random R, P (n x d) is nonsingular when rank B = n - d;
       the last d columns of ``K^-T`` and ``K^-1`` span the left and right null spaces of B
       (bases N, Q after QR).
    2. ``B^ = B + N Q^T`` is nonsingular and ``B^ B^^T = B B^T + N N^T`` (``B Q = 0``), whose
       inverse is ``(B B^T)^+ + N N^T``: a valid G.  So ``G_SS = X^T X`` with
       ``X = B^^-1 E_S`` (|S| sparse solves), and ``a0 = B^^-T T^T`` solves ``B^T a0 = T^T``.

    Checks that make the result the SVD path's (else None, and the caller takes the SVD):
    ``||B^T N||_2`` below the SVD's rank cut-off ``sigma_1 n eps`` (N is in its numerical
    null space), ``B^`` well conditioned (``sigma_{n-d}(B)``, estimated from
    ``||B^^-1||_2`` by a seeded power iteration, clears the cut-off by the factor
    ``_SPARSE_MARGIN``: no further numerical null direction, so the SVD path finds the same
    rank n - d) and a0 within ``certain``.
    """
    import scipy.sparse as sp
    import scipy.sparse.linalg as spl

    n = B.shape[0]
    Bs = sp.csc_matrix(B)
    rng = np.random.default_rng(0)
    R, P = rng.standard_normal((n, d)), rng.standard_normal((n, d))
    tail = np.zeros((n + d, d))
    tail[n:] = np.eye(d)
    try:
        lu = spl.splu(sp.bmat([[Bs, sp.csc_matrix(R)], [sp.csc_matrix(P.T), None]],
                              format="csc"))
        N, rn = np.linalg.qr(lu.solve(tail, trans="T")[:n])
        Q, rq = np.linalg.qr(lu.solve(tail)[:n])
        if min(np.abs(np.diag(rn)).min(), np.abs(np.diag(rq)).min()) == 0:
            return None
        eps = float(np.finfo(np.float64).eps)
        x = np.ones(n)  # a few power steps: sigma_low <= sigma_1(B)
        for _ in range(8):
            x = Bs.T @ (Bs @ x)
            x /= max(float(np.linalg.norm(x)), np.finfo(np.float64).tiny)
        sigma_low = float(np.linalg.norm(Bs @ x))
        if np.linalg.norm(Bs.T @ N, 2) > sigma_low * n * eps:
            return None  # N is not inside the SVD's numerical null space (cut-off sigma_1 n eps)
        hat = spl.splu(sp.bmat([[Bs, sp.csc_matrix(N)], [sp.csc_matrix(Q.T), -sp.identity(d)]],
                               format="csc"))
    except (RuntimeError, ValueError, np.linalg.LinAlgError):
        return None  # exactly singular: rank B is not n - d

    def solve(rhs: np.ndarray, trans: str = "N") -> np.ndarray:
        rhs = np.asarray(rhs, dtype=np.float64)
        full = np.zeros((n + d,) + rhs.shape[1:])
        full[:n] = rhs
        return np.asarray(hat.solve(full, trans=trans)[:n])

    # sigma_{n-d}(B) >= sigma_min(B^) = 1 / ||B^^-1||_2, estimated by a seeded block power
    # iteration (8 vectors, 6 steps: within a small factor with overwhelming probability,
    # Halko, Martinsson and Tropp 2011; a further factor 10 is allowed for it), and
    # sigma_1(B) <= sqrt(||B||_1 ||B||_inf): the rank n - d clears the SVD's cut-off
    # sigma_1 n eps by the margin
    X = rng.standard_normal((n, 8))
    for _ in range(6):
        X, _r = np.linalg.qr(solve(solve(X), "T"))
    inv_norm = float(np.linalg.norm(solve(X), 2))
    sigma_high = float(np.sqrt(abs(Bs).sum(axis=0).max() * abs(Bs).sum(axis=1).max()))
    if not np.isfinite(inv_norm) or (
            10.0 * inv_norm * sigma_high * n * eps * _SPARSE_MARGIN > 1.0):
        return None
    a0 = solve(Tt, "T")
    if not np.all(np.isfinite(a0)) or np.sum((Bs.T @ a0 - Tt) ** 2) > certain:
        return None
    cols: dict[int, np.ndarray] = {}

    def gss(S: np.ndarray) -> np.ndarray:
        missing = [int(j) for j in S if int(j) not in cols]
        if missing and len(cols) + len(missing) > _SPARSE_COLUMNS:
            cols.clear()
            missing = [int(j) for j in S]
        if missing:
            E = np.zeros((n, len(missing)))
            E[missing, np.arange(len(missing))] = 1.0
            X = solve(E)
            cols.update((j, X[:, t]) for t, j in enumerate(missing))
        X = np.stack([cols[int(j)] for j in S], axis=1)
        return np.asarray(X.T @ X)

    return Dual(a0, np.ascontiguousarray(N), gss, "sparse")


def _dual_residual(dual: Dual, S: np.ndarray) -> float | None:
    """Least-squares residual ``min ||B_F^T a - T^T||^2`` of the workers outside S.

    Every a with a_S = 0 is a0 + x with x_S = v = -a0_S, and ``||B^T x||^2 = x^T B B^T x``;
    minimising over x (x = N z + G u) gives ``min_z (v - N_S z)^T G_SS^-1 (v - N_S z)``, a
    |S| x dim(N) weighted least-squares problem: small when few workers straggle.  Neither a0
    (another solution is a0 + N w: z absorbs w) nor G (``G_SS + N_S C N_S^T``: the residual of
    a generalised least-squares problem does not change when the weight gains a term in the
    span of its design N_S, Rao 1967) needs to be the SVD's.
    """
    a0, N = dual.a0, dual.N
    if len(S) == 0:
        return 0.0
    v = -a0[S]
    try:
        L = np.linalg.cholesky(dual.gss(S))
    except np.linalg.LinAlgError:
        return None
    from scipy.linalg import solve_triangular

    Y = solve_triangular(L, v, lower=True)
    if N.shape[1]:
        X = solve_triangular(L, N[S], lower=True)
        Z = np.linalg.lstsq(X, Y, rcond=None)[0]
        Y = Y - X @ Z
    return float(np.sum(Y ** 2))
