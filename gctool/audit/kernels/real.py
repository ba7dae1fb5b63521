"""Compiled left-null-space screen over R/C (see :mod:`gctool.audit.nullspace` for the
mathematics; this is :class:`~gctool.audit.nullspace.FloatNullKernel`'s screen, set by set).

For each straggler set S, with ``A = N[:, S]^T`` (s x d, N orthonormal rows):

* d = s: LU with partial pivoting of A; ``lb = |det A| <= sigma_min(A)``;
* d > s: Householder QR of ``A^H = QR``; ``lb = |det R| <= sigma_min(A)``;
* ``0 < lb < delta``: the tighter ``1 / ||M^{-1}||_F`` (M = A or R) is tried as well;
* ``lb >= delta``: accepted (decodes); the minimum-norm decoder ``a = W + N^T Z`` (Z solves
  ``A Z = -W_S``) gives the exact decoder norm ``||D a||``.

Every other set is *pending*: the caller decides it with the numpy kernel (witness test,
direct decoder, exact escalation), so verdicts never rest on this module alone."""

from __future__ import annotations

from typing import Any

import numpy as np

from gctool.audit.kernels._jit import compile_notice, njit
from gctool.limits import REL_SLACK

WEAKEST = 16
#: kernels compiled or loaded in this process (by kind and dtypes)
WARM: set[tuple[str, ...]] = set()


@njit
def successor(S: Any, n: int) -> int:
    """Next s-subset of range(n) in lexicographic order, in place; returns the first position
    that changed (-1 after the last set, which is left unchanged)."""
    s = S.shape[0]
    i = s - 1
    while i >= 0 and S[i] == n - s + i:
        i -= 1
    if i < 0:
        return -1
    S[i] += 1
    for j in range(i + 1, s):
        S[j] = S[j - 1] + 1
    return i


@njit
def _lu(M: Any, perm: Any) -> float:
    """In-place LU with partial pivoting of the square M; returns |det M| (0 if singular)."""
    s = M.shape[0]
    det = 1.0
    for i in range(s):
        perm[i] = i
    for c in range(s):
        p = c
        big = abs(M[c, c])
        for r in range(c + 1, s):
            v = abs(M[r, c])
            if v > big:
                big, p = v, r
        if p != c:
            for j in range(s):
                M[c, j], M[p, j] = M[p, j], M[c, j]
            perm[c], perm[p] = perm[p], perm[c]
        piv = M[c, c]
        det *= abs(piv)
        if piv == 0:
            continue
        for r in range(c + 1, s):
            f = M[r, c] / piv
            M[r, c] = f
            if f != 0:
                for j in range(c + 1, s):
                    M[r, j] -= f * M[c, j]
    return det


@njit
def _lu_solve(M: Any, perm: Any, Y: Any, X: Any) -> None:
    """X = A^{-1} Y from the factors of :func:`_lu` (Y, X: s x m)."""
    s, m = Y.shape
    for u in range(m):
        for i in range(s):
            acc = Y[perm[i], u]
            for j in range(i):
                acc -= M[i, j] * X[j, u]
            X[i, u] = acc
        for i in range(s - 1, -1, -1):
            acc = X[i, u]
            for j in range(i + 1, s):
                acc -= M[i, j] * X[j, u]
            X[i, u] = acc / M[i, i]


@njit
def _inv_fro_lu(M: Any, perm: Any, E: Any, X: Any) -> float:
    """||A^{-1}||_F from the LU factors."""
    s = M.shape[0]
    for i in range(s):
        for j in range(s):
            E[i, j] = 1.0 if i == j else 0.0
    _lu_solve(M, perm, E, X)
    acc = 0.0
    for i in range(s):
        for j in range(s):
            acc += abs(X[i, j]) ** 2
    return np.sqrt(acc)


@njit
def _reflect(H: Any, tau: Any, c: int, Y: Any, j: int) -> None:
    """Apply the reflector of column c of H (``(I - tau v v^H)^H``) to column j of Y."""
    d = H.shape[0]
    w = Y[c, j]
    for r in range(c + 1, d):
        w += np.conj(H[r, c]) * Y[r, j]
    w *= np.conj(tau[c])
    Y[c, j] -= w
    for r in range(c + 1, d):
        Y[r, j] -= w * H[r, c]


@njit
def _qr_cols(H: Any, tau: Any, c0: int) -> None:
    """Householder QR of the tall H (d x s) in place, from column c0 on: columns before c0
    already hold their part of the factorisation (R above, reflectors ``I - tau v v^H`` with
    v[0] = 1 below); columns c0.. hold fresh data."""
    d, s = H.shape
    for j in range(c0, s):
        for c in range(c0):
            _reflect(H, tau, c, H, j)
    for c in range(c0, s):
        nrm2 = 0.0
        for r in range(c, d):
            nrm2 += abs(H[r, c]) ** 2
        nrm = np.sqrt(nrm2)
        if nrm == 0:
            tau[c] = 0.0
            continue
        x0 = H[c, c]
        ax0 = abs(x0)
        phase = x0 / ax0 if ax0 != 0 else 1.0 + 0 * x0
        beta = -phase * nrm  # R[c, c]
        v0 = x0 - beta
        for r in range(c + 1, d):
            H[r, c] = H[r, c] / v0
        # tau = (beta - x0) / beta, conjugated for the complex convention H = I - tau v v^H
        tau[c] = np.conj((beta - x0) / beta)
        H[c, c] = beta
        for j in range(c + 1, s):
            _reflect(H, tau, c, H, j)


@njit
def _qr(H: Any, tau: Any) -> float:
    """Householder QR of H in place (:func:`_qr_cols`); returns |det R|."""
    _qr_cols(H, tau, 0)
    det = 1.0
    for c in range(H.shape[1]):
        det *= abs(H[c, c])
    return det


@njit
def _inv_fro_tri(H: Any, X: Any) -> float:
    """||R^{-1}||_F for the upper triangle R of H (s x s)."""
    s = X.shape[0]
    acc = 0.0
    for u in range(s):
        for i in range(s - 1, -1, -1):
            v = (1.0 if i == u else 0.0) + 0 * H[0, 0]
            for j in range(i + 1, s):
                v -= H[i, j] * X[j, u]
            X[i, u] = v / H[i, i]
            acc += abs(X[i, u]) ** 2
    return np.sqrt(acc)


@njit
def _qr_z(H: Any, tau: Any, Y: Any, Z: Any) -> None:
    """Minimum-norm Z with ``A Z = Y`` from ``A^H = QR``: ``Z = Q R^{-H} Y``."""
    d, s = H.shape
    m = Y.shape[1]
    for u in range(m):
        for i in range(s):  # R^H y = Y (lower triangular)
            acc = Y[i, u]
            for j in range(i):
                acc -= np.conj(H[j, i]) * Z[j, u]
            Z[i, u] = acc / np.conj(H[i, i])
        for i in range(s, d):
            Z[i, u] = 0.0
        for c in range(s - 1, -1, -1):  # Z = H_0 ... H_{s-1} [y; 0]
            w = Z[c, u]
            for r in range(c + 1, d):
                w += np.conj(H[r, c]) * Z[r, u]
            w *= tau[c]
            Z[c, u] -= w
            for r in range(c + 1, d):
                Z[r, u] -= w * H[r, c]


@njit
def _screen_one(S: Any, NT: Any, W: Any, scale: Any, inS: Any, delta: float, M: Any, perm: Any,
                tau: Any, E: Any, X: Any, Y: Any, Z: Any) -> tuple[float, float]:
    """:func:`_screen_body` with the membership mask inS (all False) set for S meanwhile."""
    for i in range(S.shape[0]):
        inS[S[i]] = True
    out = _screen_body(S, NT, W, scale, inS, delta, M, perm, tau, E, X, Y, Z)
    for i in range(S.shape[0]):
        inS[S[i]] = False
    return out


@njit
def _screen_body(S: Any, NT: Any, W: Any, scale: Any, inS: Any, delta: float,
                M: Any, perm: Any, tau: Any, E: Any, X: Any, Y: Any, Z: Any) -> tuple[float, float]:
    """(lb, norm) of one set: lb the proved lower bound on sigma_min(N[:, S]) (0 when
    singular), norm the decoder norm when ``lb >= delta`` (else nan)."""
    s = S.shape[0]
    n, d = NT.shape
    m = W.shape[1]
    square = d == s
    if square:
        for i in range(s):
            for j in range(d):
                M[i, j] = NT[S[i], j]
        lb = _lu(M, perm)
    else:
        for i in range(s):
            for j in range(d):
                M[j, i] = np.conj(NT[S[i], j])
        lb = _qr(M, tau)
    if not np.isfinite(lb):
        lb = 0.0
    if 0 < lb < delta:
        fro = _inv_fro_lu(M, perm, E, X) if square else _inv_fro_tri(M, X)
        if np.isfinite(fro) and fro > 0 and 1.0 / fro > lb:
            lb = 1.0 / fro
    if not lb >= delta:
        return lb, np.nan
    for i in range(s):
        for u in range(m):
            Y[i, u] = -W[S[i], u]
    if square:
        _lu_solve(M, perm, Y, Z)
    else:
        _qr_z(M, tau, Y, Z)
    acc = 0.0
    for i in range(n):
        if inS[i]:
            continue
        for u in range(m):
            v = W[i, u]
            for j in range(d):
                v += NT[i, j] * Z[j, u]
            acc += abs(v * scale[i]) ** 2
    if not (np.isfinite(acc) and acc > 0):  # overflow or underflow of the squares: rescale
        top = 0.0
        for i in range(n):
            if not inS[i]:
                for u in range(m):
                    v = W[i, u]
                    for j in range(d):
                        v += NT[i, j] * Z[j, u]
                    top = max(top, abs(v * scale[i]))
        if top == 0 or not np.isfinite(top):
            return lb, top if top == 0 else np.nan
        acc = 0.0
        for i in range(n):
            if not inS[i]:
                for u in range(m):
                    v = W[i, u]
                    for j in range(d):
                        v += NT[i, j] * Z[j, u]
                    acc += abs(v * scale[i] / top) ** 2
        return lb, top * np.sqrt(acc)
    return lb, np.sqrt(acc)


def _work(NT: np.ndarray, W: np.ndarray, s: int) -> tuple[Any, ...]:
    """Scratch arrays of :func:`_screen_one`: M (s x s, or d x s for QR), perm, tau, E, X,
    Y, Z."""
    d, m = NT.shape[1], W.shape[1]
    dt = np.result_type(NT, W)
    return (np.zeros((s, s) if d == s else (d, s), dt), np.zeros(s, np.int64),
            np.zeros(s, dt), np.zeros((s, s), dt), np.zeros((s, s), dt), np.zeros((s, m), dt),
            np.zeros((d, m), dt))


@njit
def _prefix(S: Any, c0: int, NT: Any, W: Any, Hp: Any, taup: Any, nu: Any, zp: Any,
            Yp: Any) -> float:
    """For the rows P = N[:, S[:-1]]^T (square case): the unit vector nu with P nu = 0 and a
    solution zp of P z = -W_{S[:-1]}; returns vol(P) = |det R| of P^H = QR.  (Zp with
    P Zp = I, columns orthogonal to nu, comes from :func:`_prefix_inverse` when needed.)

    For a set with last row x and ``t = x . nu``: ``|det A| = vol(P) |t|`` and
    ``||A^{-1}||_F^2 = ||Zp||_F^2 + (||x^T Zp||^2 + 1) / |t|^2``."""
    s, d = S.shape[0], NT.shape[1]
    m = W.shape[1]
    for i in range(c0, s - 1):  # rows before c0 are unchanged: their columns stay factored
        for j in range(d):
            Hp[j, i] = np.conj(NT[S[i], j])
    _qr_cols(Hp, taup, c0)
    vol = 1.0
    for c in range(s - 1):
        vol *= abs(Hp[c, c])
    for j in range(d):
        nu[j] = 0.0
    nu[d - 1] = 1.0
    for c in range(s - 2, -1, -1):  # nu = H_0 ... H_{s-2} e_last
        w = nu[c]
        for r in range(c + 1, d):
            w += np.conj(Hp[r, c]) * nu[r]
        w *= taup[c]
        nu[c] -= w
        for r in range(c + 1, d):
            nu[r] -= w * Hp[r, c]
    if vol > 0:
        for i in range(s - 1):
            for u in range(m):
                Yp[i, u] = -W[S[i], u]
        _qr_z(Hp, taup, Yp, zp)
    return vol


@njit
def _prefix_inverse(Hp: Any, taup: Any, Ip: Any, Zp: Any) -> float:
    """Zp with P Zp = I for the prefix factored by :func:`_prefix`; returns ||Zp||_F^2."""
    _qr_z(Hp, taup, Ip, Zp)
    fro2 = 0.0
    for i in range(Zp.shape[0]):
        for j in range(Zp.shape[1]):
            fro2 += abs(Zp[i, j]) ** 2
    return fro2


@njit
def _norm_estimate(z: Any, c0: float, hh: Any, G: Any) -> tuple[float, float]:
    """``||D (W + N^T z)||^2`` from the Gram data (rows in S contribute ~0 by construction),
    and the magnitude of its terms (for a round-off margin)."""
    d, m = z.shape
    lin, quad, mag_l, zz = 0.0, 0.0, 0.0, 0.0
    for u in range(m):
        for j in range(d):
            lin += (hh[j, u] * z[j, u]).real
            mag_l += abs(hh[j, u]) * abs(z[j, u])
            zz += abs(z[j, u]) ** 2
            acc = 0.0 * z[0, 0]
            for k in range(d):
                acc += G[j, k] * z[k, u]
            quad += (np.conj(z[j, u]) * acc).real
    gmax = 0.0
    for j in range(d):
        for k in range(d):
            gmax = max(gmax, abs(G[j, k]))
    return c0 + 2 * lin + quad, c0 + 2 * mag_l + d * gmax * zz


@njit
def screen_range(S: Any, n: int, count: int, NT: Any, W: Any, scale: Any, delta: float,
                 c0: float, hh: Any, G: Any, dn: float, pend: Any, weak_lb: Any,
                 weak_at: Any, M: Any, perm: Any, tau: Any, E: Any, X: Any, Y: Any, Z: Any
                 ) -> tuple[int, int, float, int]:
    """Walk ``count`` sets from S (updated in place to the next set to do).

    Stops early when the pending buffer is full.  Returns ``(done, pending, max_norm,
    max_norm_at)``; positions are offsets from the first set.  ``weak_lb``/``weak_at`` keep
    the smallest accepted lower bounds (ascending, ties to the earlier set).

    Square case (d = s) with s >= 2: sets sharing the first s - 1 stragglers share the
    factorisation of those rows (refactored from the first row that changed), so a set costs
    O(s^2 + d m): ``|det A| = vol(P) |x . nu|``, the tighter bound from ``||A^{-1}||_F`` (see
    :func:`_prefix`), ``z = zp + alpha nu``.  The decoder norm is bounded by
    ``||D W|| + ||D N^T|| ||z||``, then estimated from Gram data, and recomputed in full (per-set
    LU) only when it may be the largest so far.  A set whose bound is within a relative 1e-6 of
    delta takes the per-set route of :func:`_screen_one`."""
    s = S.shape[0]
    d = NT.shape[1]
    m = W.shape[1]
    inS = np.zeros(n, np.bool_)
    fast = d == s and s >= 2
    Hp = np.zeros((d, max(s - 1, 1)), NT.dtype)
    taup = np.zeros(max(s - 1, 1), NT.dtype)
    nu = np.zeros(d, NT.dtype)
    zp = np.zeros((d, m), Z.dtype)
    Yp = np.zeros((max(s - 1, 1), m), Z.dtype)
    z = np.zeros((d, m), Z.dtype)
    Ip = np.zeros((max(s - 1, 1), max(s - 1, 1)), NT.dtype)
    for i in range(s - 1):
        Ip[i, i] = 1.0
    Zp = np.zeros((d, max(s - 1, 1)), NT.dtype)
    vol, fro2, zz = 0.0, -1.0, 0.0
    rc0 = np.sqrt(c0)
    fresh = 0  # first prefix row that changed (s - 1: none)
    npend = 0
    best, best_at = -np.inf, -1
    K = weak_lb.shape[0]
    done = 0
    while done < count:
        handled = False
        if fast:
            if fresh < s - 1:
                vol = _prefix(S, fresh, NT, W, Hp, taup, nu, zp, Yp)
                fro2 = -1.0  # Zp not computed yet
                zz = 0.0
                for i in range(d):
                    for u in range(m):
                        zz += abs(zp[i, u]) ** 2
                fresh = s - 1
            x = S[s - 1]
            tdot = 0.0 * nu[0]
            for j in range(d):
                tdot += NT[x, j] * nu[j]
            lb = vol * abs(tdot)
            if vol > 0 and lb < delta and lb > 0:  # the tighter 1 / ||A^{-1}||_F
                if fro2 < 0:
                    fro2 = _prefix_inverse(Hp, taup, Ip, Zp)
                xz = 0.0
                for i in range(s - 1):
                    acc = 0.0 * nu[0]
                    for j in range(d):
                        acc += NT[x, j] * Zp[j, i]
                    xz += abs(acc) ** 2
                inv2 = fro2 + (xz + 1.0) / abs(tdot) ** 2
                if np.isfinite(inv2) and inv2 > 0 and 1.0 / np.sqrt(inv2) > lb:
                    lb = 1.0 / np.sqrt(inv2)
            if vol > 0 and np.isfinite(lb) and lb >= delta * (1 + 1e-6):
                handled = True
                aa = 0.0
                for u in range(m):
                    acc = -W[x, u]
                    for j in range(d):
                        acc -= NT[x, j] * zp[j, u]
                    alpha = acc / tdot
                    aa += abs(alpha) ** 2
                    for j in range(d):
                        z[j, u] = zp[j, u] + alpha * nu[j]
                # ||D (W + N^T z)|| <= ||D W|| + ||D N^T|| ||z||, ||z||^2 = ||zp||^2 + |alpha|^2
                ub = (rc0 + dn * np.sqrt(zz + aa)) * (1 + 1e-6)
                bound = ub
                if not ub < best * (1 - REL_SLACK):
                    est, mag = _norm_estimate(z, c0, hh, G)
                    bound = np.sqrt(max(est + REL_SLACK * mag, 0.0))
                if best_at < 0 or not bound < best * (1 - REL_SLACK):  # may be the largest
                    _, nrm = _screen_one(S, NT, W, scale, inS, delta, M, perm, tau, E, X, Y,
                                           Z)
                    if np.isfinite(nrm) and nrm > best:
                        best, best_at = nrm, done
        if not handled:
            lb, nrm = _screen_one(S, NT, W, scale, inS, delta, M, perm, tau, E, X, Y, Z)
            if lb >= delta and np.isfinite(nrm) and nrm > best:
                best, best_at = nrm, done
        if lb >= delta:
            if lb < weak_lb[K - 1]:
                j = K - 1
                while j > 0 and weak_lb[j - 1] > lb:
                    weak_lb[j], weak_at[j] = weak_lb[j - 1], weak_at[j - 1]
                    j -= 1
                weak_lb[j], weak_at[j] = lb, done
        else:
            pend[npend] = done
            npend += 1
        done += 1
        fresh = min(fresh, max(successor(S, n), 0))
        if npend == pend.shape[0]:
            break
    return done, npend, best, best_at


@njit
def screen_sets(Sets: Any, n: int, NT: Any, W: Any, scale: Any, delta: float, lb_out: Any,
                norm_out: Any, M: Any, perm: Any, tau: Any, E: Any, X: Any, Y: Any,
                Z: Any) -> None:
    """The screen on given sets (rows of Sets): lower bounds and norms (nan if pending)."""
    inS = np.zeros(n, np.bool_)
    for b in range(Sets.shape[0]):
        lb_out[b], norm_out[b] = _screen_one(Sets[b], NT, W, scale, inS, delta, M, perm, tau,
                                             E, X, Y, Z)


class RealScreen:
    """The compiled screen of one reduction (contiguous copies of N^T, W, the row scale)."""

    def __init__(self, NT: np.ndarray, W: np.ndarray, scale: np.ndarray, delta: float) -> None:
        dt = np.result_type(NT, W, np.float64)
        self.NT = np.ascontiguousarray(NT, dtype=dt)
        self.W = np.ascontiguousarray(W, dtype=dt)
        self.scale = np.ascontiguousarray(scale, dtype=np.float64)
        self.delta = float(delta)
        self.n = self.NT.shape[0]
        # Gram data of the decoder norm ||D (W + N^T z)||^2 = c0 + 2 Re(hh . z) + z^H G z
        # (nan when it overflows: then every norm is computed in full)
        with np.errstate(all="ignore"):
            D2 = self.scale**2
            self.c0 = float(np.sum(D2[:, None] * np.abs(self.W) ** 2))
            self.hh = np.ascontiguousarray((self.NT * D2[:, None]).T @ np.conj(self.W))
            self.G = np.ascontiguousarray(np.conj(self.NT.T) @ (self.NT * D2[:, None]))
            self.dn = float(np.sqrt(np.sum(np.abs(np.diagonal(self.G)))))  # >= ||D N^T||_2
        if not (np.isfinite(self.c0) and np.isfinite(self.hh).all() and np.isfinite(self.G).all()
                and np.isfinite(self.dn)):
            self.c0 = np.nan

    def warm(self, s: int) -> None:
        """Compile (or load from the cache) both entry points for this dtype."""
        key = ("real", self.NT.dtype.str, self.W.dtype.str)
        if key in WARM:
            return
        WARM.add(key)
        with compile_notice("audit"):
            S = np.arange(s, dtype=np.int64)
            self.sets(S[None, :])
            self.walk(S, 1, np.zeros(1, np.int64))

    def sets(self, S: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        b, s = S.shape
        lb, norm = np.empty(b), np.empty(b)
        screen_sets(np.ascontiguousarray(S, dtype=np.int64), self.n, self.NT, self.W,
                    self.scale, self.delta, lb, norm, *_work(self.NT, self.W, s))
        return lb, norm

    def walk(self, S: np.ndarray, count: int, pend: np.ndarray
             ) -> tuple[int, int, float, int, np.ndarray, np.ndarray]:
        """See :func:`screen_range`; also returns the weakest (lb, offset) pairs."""
        weak_lb = np.full(WEAKEST, np.inf)
        weak_at = np.full(WEAKEST, -1, dtype=np.int64)
        done, npend, best, at = screen_range(S, self.n, count, self.NT, self.W, self.scale,
                                             self.delta, self.c0, self.hh, self.G, self.dn,
                                             pend,
                                             weak_lb, weak_at,
                                             *_work(self.NT, self.W, S.shape[0]))
        return int(done), int(npend), float(best), int(at), weak_lb, weak_at
