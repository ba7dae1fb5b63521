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
* **Naive** (codes over GF(q) without the group shape): :class:`PrefixDecoder`, with a cache.

Cost per round: groups O(n) after the sort; QR O(k cap^2) flops in LAPACK instead of
log2(n) SVDs of the same size; the dual walk O(s^3) per probe after one SVD of B per scheme.

The same oracles answer "does this set of workers decode" for the per-round codes of SR-SGC and
M-SGC (:meth:`StopRule.decodes_mask`): groups by counting; real codes by the dual residual
of the set's stragglers, then QR, then the naive decoder when the verdict is not clear.
"""

from __future__ import annotations

import numpy as np

from gctool.model import GradientCode

#: entries of the stacked [B_F^T | T^T] per batched QR
_CHUNK_ENTRIES = 4_000_000
_MARGIN = 100.0
_DUAL_FROM = 48  # from this cap on, the dual walk beats the batched QR (QR: O(k cap^2) per round)
_WALK = 16  # prefixes tried below the cap by the dual walk before the round goes to QR


class PrefixDecoder:
    """Earliest decodable prefix of an arrival order by binary search with the generic decoder
    (the naive path; decodability is monotone in the set)."""

    def __init__(self, code: GradientCode, tol: float = 1e-9) -> None:
        from gctool.decode import Decoder

        self.decoder = Decoder(code, tol)
        self.cache: dict[frozenset[int], bool] = {}

    def ok(self, workers: np.ndarray) -> bool:
        key = frozenset(int(i) for i in workers)
        hit = self.cache.get(key)
        if hit is None:
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

    def __init__(self, code: GradientCode, tol: float = 1e-9) -> None:
        self.code, self.tol = code, tol
        self.naive = PrefixDecoder(code, tol)
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
            self._dual: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
            if not np.iscomplexobj(self._Bt):
                self._dual = _dual_of(self._Bt.T, self._Tt, tol * code.k / _MARGIN)
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
        limit = self.tol * self.code.k
        eps = np.finfo(np.float64).eps
        if K < cap:  # more columns than rows: some prefix is rank-deficient
            return np.arange(len(order))
        chunk = max(1, _CHUNK_ENTRIES // (K * (cap + m)))
        left: list[int] = []
        for start in range(0, len(order), chunk):
            rows = np.arange(start, min(start + chunk, len(order)))
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
        res = _dual_residual(self._dual, S)  # type: ignore[arg-type]
        limit = self.tol * self.code.k
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


def _dual_of(B: np.ndarray, Tt: np.ndarray, certain: float
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(a0, N, G) of a real code: a minimum-norm a0 with B^T a0 = T^T, a basis N of the left
    null space of B and G = (B B^T)^+; None when even all n workers do not decode."""
    U, S, Vh = np.linalg.svd(B, full_matrices=True)
    r = int(np.sum(S > S[0] * max(B.shape) * np.finfo(np.float64).eps)) if len(S) else 0
    if r == 0:
        return None
    a0 = U[:, :r] @ ((Vh[:r] @ Tt) / S[:r, None])  # (n, m)
    if np.sum((B.T @ a0 - Tt) ** 2) > certain:
        return None
    G = (U[:, :r] / S[:r] ** 2) @ U[:, :r].T
    return a0, np.ascontiguousarray(U[:, r:]), G


def _dual_residual(dual: tuple[np.ndarray, np.ndarray, np.ndarray], S: np.ndarray
                   ) -> float | None:
    """Least-squares residual ``min ||B_F^T a - T^T||^2`` of the workers outside S.

    Every a with a_S = 0 is a0 + x with x_S = v = -a0_S, and ``||B^T x||^2 = x^T B B^T x``;
    minimising over x (x = N z + G u) gives ``min_z (v - N_S z)^T G_SS^-1 (v - N_S z)``, a
    |S| x dim(N) weighted least-squares problem: small when few workers straggle.
    """
    a0, N, G = dual
    if len(S) == 0:
        return 0.0
    v = -a0[S]
    try:
        L = np.linalg.cholesky(G[np.ix_(S, S)])
    except np.linalg.LinAlgError:
        return None
    from scipy.linalg import solve_triangular

    Y = solve_triangular(L, v, lower=True)
    if N.shape[1]:
        X = solve_triangular(L, N[S], lower=True)
        Z = np.linalg.lstsq(X, Y, rcond=None)[0]
        Y = Y - X @ Z
    return float(np.sum(Y ** 2))
