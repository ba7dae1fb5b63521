"""Compiled optimal-decoder error for ``attack`` (the Cholesky route of
:class:`gctool.audit.oracles.OptimalOracle`, set by set).

For straggler set S with ``A = Qperp[S]`` (s x d): when the min(s, d)-square Gram matrix of A
has its smallest eigenvalue above ``sig_kept^2`` (here: a Cholesky factorisation of
``G - sig_kept^2 (1 + 1e-6) I`` succeeds, a margin that leaves every borderline set to the
numpy oracle), no direction is lost when s <= d (the error is err([n])); when s > d the lost
error is ``b^H R^-1 b`` with E an orthonormal basis of the complement of range(A) (A's
Householder QR), ``R = E^H N_SS E``, ``b = E^H alpha_S``, by Cholesky (:func:`_lost_extra`),
whose error the oracle's band bounds (:func:`gctool.numerics.lost_terms`).  Every other set
(ill-conditioned, singular or non-finite) is *pending*: the numpy oracle decides it (SVD route,
direct decoder, exact escalation); except, when s <= d, a set whose smallest singular value is
proved at least twice the oracle's ``sig_full`` (:func:`_clear`: a Householder QR, no Gram
matrix), which loses nothing, as the numpy oracle finds from its SVD.

A pending set then goes to a second stage in the same thread, without the GIL
(:func:`_settle`): the numpy oracle's SVD route from the set's own SVD (LAPACK's, called from
compiled code), accepted only where a margin proves that numpy's route takes the same branches
(which directions are lost, none in its ambiguous band, no decoder) and gives an error within
a bound of this one, on the same side of every limit; the rest stays pending for numpy."""

from __future__ import annotations

from contextlib import nullcontext
from typing import Any

import numpy as np

from gctool.audit.kernels import private
from gctool.audit.kernels.shared import (
    HALT_EVERY,
    WARM,
    _dot2,
    _inv_fro_lu,
    _inv_fro_tri,
    _lu,
    _lu_solve,
    _qr,
    _unreflect,
)
from gctool.compiled import compile_notice
from gctool.compiled._jit import njit
from gctool.compiled.walk import first_max, successor, tied_records
from gctool.limits import REL_SLACK, TIE_RTOL
from gctool.numerics import EPS, kkt_muladds, lost_terms

#: LAPACK's SVD (numpy's, and the one numba calls) gives the singular values of A + E with
#: ||E||_2 <= p(s, d) eps ||A||_2, p "a modestly growing function" (LAPACK Users' Guide, 4.9):
#: taken here as SVD_P max(s, d) (LAPACK's own error estimates take p = 1), with ||A||_2 <= 1
#: (rows of an orthonormal basis; tighter: the computed largest singular value, under the same
#: assumption).  A loss is kept only when numpy's computed singular value is proved at most
#: numpy's 1e-14 (:func:`_settle`): from this SVD's value at least 2 e below it (one e for each
#: SVD), or from a certified upper bound tau on the exact value (:func:`_lost_bound`: the
#: residual ``||A^H X||`` of the computed lost vectors X, in compensated arithmetic, over their
#: smallest singular value) with ``tau + e`` below it (one e: numpy's SVD only).  The first is
#: impossible from max(s, d) = 12 on (2 e = 1.07e-14); the second holds while e is below
#: 1e-14 less tau (tau is a few eps for an exactly lost direction): up to max(s, d) of about 22
SVD_P = 2.0

#: the oracle's lost-direction error model (the same arithmetic, compiled)
_lost_terms = njit(lost_terms)


@njit
def _lost_bound(A: Any, U: Any, k0: int) -> float:
    """A certified upper bound on the (s - k0)-th smallest singular value of ``A^H`` (d x s,
    its s values counting s - min(s, d) zeros), from the computed vectors X = U[:, k0:]:
    Courant-Fischer gives at most ``max ||A^H x|| / ||x||`` over x in the span of X, at most
    ``||A^H X||_F / sigma_min(X)``; the residual's entries in compensated arithmetic
    (:func:`_dot2`, with their error bounds), ``sigma_min(X)^2 >= 1 - ||X^H X - I||_F`` (the
    Gram matrix's round-off bounded a priori).  inf when X is not proved of full rank."""
    s, d = A.shape
    L = s - k0
    x = np.empty(2 * s)
    y = np.empty(2 * s)
    acc = 0.0
    for j in range(d):
        for c in range(L):
            for i in range(s):  # Re and Im of sum_i conj(A_ij) X_ic
                a, u = A[i, j], U[i, k0 + c]
                x[2 * i], x[2 * i + 1] = a.real, a.imag
                y[2 * i], y[2 * i + 1] = u.real, u.imag
            re, bre = _dot2(x, y, 2 * s)
            for i in range(s):
                u = U[i, k0 + c]
                y[2 * i], y[2 * i + 1] = u.imag, -u.real
            im, bim = _dot2(x, y, 2 * s)
            acc += (abs(re) + bre) ** 2 + (abs(im) + bim) ** 2
    res = np.sqrt(acc) * (1 + (2 * d * L + 4) * EPS)
    g = 4 * s * EPS / (1 - 4 * s * EPS)
    phi = 0.0
    for a in range(L):
        for b in range(L):
            v = 0.0 * U[0, 0]
            m = 0.0
            for i in range(s):
                v += np.conj(U[i, k0 + a]) * U[i, k0 + b]
                m += abs(U[i, k0 + a]) * abs(U[i, k0 + b])
            if a == b:
                v -= 1.0
            phi += (abs(v) + g * m * (1 + 2 * s * EPS)) ** 2
    phi = np.sqrt(phi) * (1 + (2 * L * L + 4) * EPS) + 2 * EPS
    if not (phi <= 0.5 and np.isfinite(res)):
        return np.inf
    return res / np.sqrt(1 - phi) * (1 + 4 * EPS)


@njit
def _well(A: Any, G: Any, t: float) -> bool:
    """Is the smallest eigenvalue of the Gram matrix of A (min(s, d) square) above t?"""
    s, d = A.shape
    r = min(s, d)
    for i in range(r):
        for j in range(r):
            acc = 0.0 * A[0, 0]
            if s >= d:  # A^H A
                for k in range(s):
                    acc += np.conj(A[k, i]) * A[k, j]
            else:  # A A^H
                for k in range(d):
                    acc += A[i, k] * np.conj(A[j, k])
            G[i, j] = acc
        G[i, i] -= t
    return _cholesky(G, r)


@njit
def _cholesky(G: Any, r: int) -> bool:
    """Cholesky ``G = L L^H`` of the leading r x r block in place (its lower triangle); False
    when a pivot is not positive (G not numerically positive definite)."""
    for j in range(r):
        diag = G[j, j].real
        for k in range(j):
            diag -= abs(G[j, k]) ** 2
        if not diag > 0:
            return False
        ljj = np.sqrt(diag)
        G[j, j] = ljj
        for i in range(j + 1, r):
            acc = G[i, j]
            for k in range(j):
                acc -= G[i, k] * np.conj(G[j, k])
            G[i, j] = acc / ljj
    return True


@njit
def _clear(S: Any, Qperp: Any, H: Any, tau: Any, X: Any, floor: float) -> bool:
    """s <= d: is sigma_min(Qperp[S]) proved at least ``floor``?  Householder QR of
    ``A^H = QR`` (A = Qperp[S]): every singular value of A is at most 1 (orthonormal columns),
    so ``|det R| <= sigma_min(A)``, and ``1 / ||R^-1||_F <= sigma_min(A)`` too."""
    s = S.shape[0]
    d = Qperp.shape[1]
    for i in range(s):
        for j in range(d):
            H[j, i] = np.conj(Qperp[S[i], j])
    lb = _qr(H, tau)
    if not (np.isfinite(lb) and lb > 0):
        return False
    if lb >= floor:
        return True
    fro = _inv_fro_tri(H, X)
    return bool(np.isfinite(fro) and fro > 0 and 1.0 / fro >= floor)


#: what :func:`_hat_one` makes of a set: decided (its error is clear of the oracle's
#: per-set band), pending (numpy decides), decided by the second stage, or decided with s > d
#: but its per-set band left to numpy (``OptimalOracle.near_limit_lost``)
DECIDED, PENDING, SECOND, UNCHECKED = 0, 1, 2, 3


@njit
def _lost_off(rho: float, bands: Any, s: int, d: int, m: int) -> tuple[float, float]:
    """(base, slope): the oracle's error model for a set of s stragglers that loses
    directions (``OptimalOracle.band``: sqrt(err) off by base + h slope, h = 1 / sqrt(min(lam,
    1))), at sqrt(err) = rho."""
    drho, grow, dunit, gunit = bands[4], bands[5], bands[6], bands[7]
    dl, gl, dc, gc = _lost_terms(s, d, int(bands[9]), int(bands[10]), m)
    return (drho + grow * rho + dc * dunit + gc * gunit * rho, dl * dunit + gl * gunit * rho)


@njit
def _lam_needed(v: float, bands: Any, s: int, d: int, m: int) -> float:
    """The smallest lam (the smallest kept Gram eigenvalue of the set, at most 1) with which
    the error v of a set that loses directions is clear of the oracle's per-set band
    (``OptimalOracle.near_limit``: outside the relative band, and sqrt(v) off by base + slope
    / sqrt(lam), :func:`_lost_off`, on one side of the decoding limit), by round-off's
    margin: inf when none is."""
    limit, rtol = bands[3], bands[8]
    if not np.isfinite(v) or abs(v - limit) <= rtol * limit * (1 + REL_SLACK):
        return np.inf
    rho = np.sqrt(max(v, 0.0))
    base, slope = _lost_off(rho, bands, s, d, m)
    room = max(np.sqrt(limit * (1 - REL_SLACK)) - rho, rho - np.sqrt(limit * (1 + REL_SLACK)))
    if not room > base:
        return np.inf
    hmax = (room - base) / slope * (1 - REL_SLACK)  # h = 1 / sqrt(lam) may be this large
    return 1.0 / (hmax * hmax) if hmax >= 1.0 else np.inf


@njit
def _hat_one(S: Any, Qperp: Any, N: Any, alpha: Any, err_full: float, t: float, A: Any,
             G: Any, E: Any, R: Any, rhs: Any, w: Any, H: Any, tau: Any, X: Any,
             floor: float, bands: Any, limit: float) -> tuple[float, int]:
    """(error, state) of one straggler set (:data:`DECIDED`, :data:`PENDING`,
    :data:`SECOND` or :data:`UNCHECKED`; bands: those of :func:`_settle`; limit: the
    search's).

    With s > d, the oracle's Cholesky route (``OptimalOracle._hat_chunk_numpy``): E, the
    complement of range(A) from A's Householder QR (:func:`_lost_extra`), and its error
    carries the oracle's per-set band with lam, the smallest Gram eigenvalue of Qperp[S]
    (``OptimalOracle.near_limit_lost``: its det, then its eigenvalue): the set is decided
    here when its error is clear of the band with a lam (:func:`_lam_needed`) that the Gram
    matrix proves twice over (a Cholesky factorisation of ``G - (2 lam + 64 d s eps) I``:
    numpy's eigenvalue, whose error is far below ``64 d s eps``, is then at least lam, and
    numpy's check clears the set too); else numpy's check decides (:data:`UNCHECKED`)."""
    s = S.shape[0]
    d = Qperp.shape[1]
    for i in range(s):
        for j in range(d):
            A[i, j] = Qperp[S[i], j]
    if not _well(A, G, t):
        if s <= d and _clear(S, Qperp, H, tau, X, floor):
            return err_full, 0
        e, pending = _settle(S, Qperp, N, alpha, err_full, bands, limit, A)
        return e, 1 if pending else 2
    if s <= d:
        return err_full, 0
    extra = _lost_extra(S, N, alpha, A, E, R, rhs, w, tau, X)
    e = err_full + extra
    if not np.isfinite(e):
        return 0.0, 1
    e = max(e, 0.0)
    for i in range(s):  # A again (the QR overwrote it)
        for j in range(d):
            A[i, j] = Qperp[S[i], j]
    need = _lam_needed(e, bands, s, d, alpha.shape[1])
    if need < np.inf and _well(A, G, 2 * need + 64 * d * s * EPS):
        return e, DECIDED
    return e, UNCHECKED


@njit
def _lost_extra(S: Any, N: Any, alpha: Any, A: Any, E: Any, R: Any, rhs: Any, w: Any,
                tau: Any, X: Any) -> float:
    """The lost error ``b^H R^-1 b`` of a set with s > d (A = Qperp[S], s x d, of full
    column rank; overwritten by its QR): E (s x q, q = s - d) the last q columns of the
    Householder Q of A, ``R = E^H N_SS E``, ``b = E^H alpha_S``; R = L L^H by Cholesky (lower
    triangle), ``y = L^-1 b`` by forward substitution, ``||y||^2``.  nan when R is not
    numerically positive definite."""
    s, d = A.shape
    m = alpha.shape[1]
    q = s - d
    _qr(A, tau)
    for u in range(q):  # E[:, u] = H_0 ... H_{d-1} e_{d+u}
        for i in range(s):
            E[i, u] = 1.0 if i == d + u else 0.0
        for c in range(d - 1, -1, -1):
            _unreflect(A, tau, c, E, u)
    for c in range(q):
        for i in range(s):  # X[:, 0] = N_SS E[:, c]
            acc = 0.0 * E[0, 0]
            for j in range(s):
                acc += N[S[i], S[j]] * E[j, c]
            X[i, 0] = acc
        for a in range(q):
            acc = 0.0 * E[0, 0]
            for i in range(s):
                acc += np.conj(E[i, a]) * X[i, 0]
            R[a, c] = acc
    for a in range(q):
        for u in range(m):
            acc = 0.0 * E[0, 0]
            for i in range(s):
                acc += np.conj(E[i, a]) * alpha[S[i], u]
            rhs[a, u] = acc
    if not _cholesky(R, q):
        return np.nan
    extra = 0.0
    for u in range(m):
        for i in range(q):
            acc = rhs[i, u]
            for k in range(i):
                acc -= R[i, k] * w[k, u]
            w[i, u] = acc / R[i, i].real
            extra += abs(w[i, u]) ** 2
    return extra


@njit
def _below_model(v: float, bands: Any, lam: float, s: int, d: int, m: int) -> bool:
    """Is an error at most v clear of the oracle's error-model band, below the decoding
    limit (``OptimalOracle.near_limit``: sqrt(v) off by drho + grow sqrt(v), and by the lost
    directions' terms with this lam, :func:`_lost_off`; lam = inf: none lost)?  (Increasing
    in v: so is every smaller one.)"""
    rho = np.sqrt(max(v, 0.0))
    if lam == np.inf:
        off = bands[4] + bands[5] * rho
    else:
        base, slope = _lost_off(rho, bands, s, d, m)
        off = base + slope / np.sqrt(min(lam, 1.0))
    return bool((rho + off) ** 2 <= bands[3])


@njit
def _settle(S: Any, Qperp: Any, N: Any, alpha: Any, err_full: float, bands: Any,  # noqa: C901, PLR0913
            limit: float, A: Any) -> tuple[float, bool]:
    """(error, pending) of a set the first stage left pending: the numpy oracle's SVD route
    (``OptimalOracle._svd_chunk``) from this set's SVD, accepted only when numpy's route is
    proved to give the same branches and an error within ``bnd`` of this one.

    * Every singular value of ``A = Qperp[S]`` is at least ``2 e`` (e: one SVD's error, numpy's
      or this one's, :data:`SVD_P`) above ``sig_kept`` (kept, outside numpy's ambiguous band)
      or below ``sig_lost`` (lost in numpy's SVD too), or below ``sig_lost`` with the
      certified bound tau on the exact values of those lost (:func:`_lost_bound`) and
      ``tau + e`` below ``sig_lost`` (numpy's value is at most that); else pending.  With a
      lost one, numpy's eigenvalue test (Gram eigenvalue >= sig_kept^2 >= 1e-12) fails too:
      the SVD route.  With none and s <= d, both routes give err_full exactly; with none and s > d,
      numpy's choice between its Cholesky and SVD routes is not proved: pending.
    * The lost space (U's last L columns) of each SVD is within ``e / (gap - 2 e - sig_lost)``
      of A's (Wedin; gap: the smallest kept singular value); ``M = E^H N_SS E``,
      ``r = E^H alpha_S``, ``w = M^-1 r`` (LU with partial pivoting, growth at most 2^(L-1),
      as numpy's), ``extra = Re r^H w``.  A change ``dE`` (<= delta) with the round-off of
      forming and solving moves M by at most eta = 3 delta ||N_SS|| + 4 eps ||N_SS|| (2s +
      3L 2^(L-1)) and r by dr = delta ||alpha_S|| + 4 s eps ||alpha_S||; with eta ||M^-1|| <= 1/2
      the error moves by at most ``2 eta |w|^2 + 4 dr |w| + 2 ||M^-1|| dr^2`` (|w| taken twice
      the computed one's norm), doubled here, plus the final sums' round-off.
    * Accepted when that bound is at most a quarter of the tie tolerance (worst sets are
      those numpy's values give), ``err + bnd < ceiling`` and below the oracle's error-model
      band with this set's own ``lam`` (:func:`_below_model`: numpy's error is then not near the
      decoding limit: no decoder, no exact escalation, the same value) and the search's
      ``limit`` is farther than the bound.

    bands: sig_kept, sig_lost, ceiling, then the oracle's decoding limit and error model
    (drho, grow, the lost directions' units dunit and gunit, the relative band, n and K:
    ``OptimalOracle.near_limit``)."""
    sig_kept, sig_lost, ceiling = bands[0], bands[1], bands[2]
    s = S.shape[0]
    d = Qperp.shape[1]
    m = alpha.shape[1]
    r = min(s, d)
    for i in range(s):
        for j in range(d):
            v = Qperp[S[i], j]
            if not np.isfinite(v):
                return 0.0, True
            A[i, j] = v
    U, sv, _ = np.linalg.svd(A)
    p = SVD_P * max(s, d) * EPS
    # one SVD's error (||A||_2 <= 1, and <= this SVD's largest value over 1 - p)
    e = p * min(1.0, sv[0] / (1 - p)) if r > 0 and np.isfinite(sv[0]) else p
    lost = s - r
    gap = np.inf
    certify = False  # a loss not proved by this SVD's value: by _lost_bound
    for i in range(r):
        if sv[i] <= sig_lost - 2 * e:
            lost += 1
        elif sv[i] >= sig_kept + 2 * e:
            gap = sv[i]  # descending: the last kept one is the smallest
        elif sv[i] < sig_lost:
            lost += 1
            certify = True
        else:
            return 0.0, True
    if certify and not _lost_bound(A, U, s - lost) + e < sig_lost:
        return 0.0, True
    # numpy's lam (OptimalOracle.kept_floor): its smallest kept Gram eigenvalue, at least
    # (gap - 2e)^2 less its eigvalsh's error; 1 when none is kept
    lam = 1.0 if gap == np.inf else min((gap - 2 * e) ** 2 - 8 * max(s, d) * EPS, 1.0)
    if not lam > 0:
        return 0.0, True
    if lost == s - r:  # no accidental loss
        if s <= d and _below_model(err_full, bands, np.inf, s, d, m):
            return err_full, False
        return 0.0, True
    L, k0 = lost, s - lost
    delta = 0.0
    if gap < np.inf:
        den = gap - 2 * e - sig_lost
        if not den > gap / 2:
            return 0.0, True
        delta = 2 * e / den
    nu, al = 0.0, 0.0
    NE = np.empty((s, L), dtype=U.dtype)
    for i in range(s):
        for u in range(m):
            al += abs(alpha[S[i], u]) ** 2
        for c in range(L):
            NE[i, c] = 0.0
        for j in range(s):
            x = N[S[i], S[j]]
            nu += abs(x) ** 2
            for c in range(L):
                NE[i, c] += x * U[j, k0 + c]
    nu, al = np.sqrt(nu), np.sqrt(al)
    M = np.empty((L, L), dtype=U.dtype)
    R = np.empty((L, m), dtype=U.dtype)
    for a in range(L):
        for c in range(L):
            acc = 0.0 * U[0, 0]
            for i in range(s):
                acc += np.conj(U[i, k0 + a]) * NE[i, c]
            M[a, c] = acc
        for u in range(m):
            acc = 0.0 * U[0, 0]
            for i in range(s):
                acc += np.conj(U[i, k0 + a]) * alpha[S[i], u]
            R[a, u] = acc
    perm = np.empty(L, np.int64)
    if _lu(M, perm) == 0:
        return 0.0, True
    W = np.empty((L, m), dtype=U.dtype)
    _lu_solve(M, perm, R, W)
    mu = _inv_fro_lu(M, perm, np.empty((L, L), dtype=U.dtype), np.empty((L, L), dtype=U.dtype))
    extra, wn, rn = 0.0, 0.0, 0.0
    for a in range(L):
        for u in range(m):
            extra += (np.conj(R[a, u]) * W[a, u]).real
            wn += abs(W[a, u]) ** 2
            rn += abs(R[a, u]) ** 2
    wn, rn = 2 * np.sqrt(wn), np.sqrt(rn)
    eta = 3 * delta * nu + 4 * EPS * nu * (2 * s + 3 * L * 2.0 ** (L - 1) + 5 * L * L)
    dr = delta * al + 4 * s * EPS * al
    if not eta * mu <= 0.5:
        return 0.0, True
    err = max(err_full + extra, 0.0)
    bnd = (2 * (2 * eta * wn * wn + 4 * dr * wn + 2 * mu * dr * dr)
           + 4 * EPS * (abs(err_full) + abs(extra) + L * m * rn * wn))
    if not (np.isfinite(err) and bnd <= 0.25 * TIE_RTOL * max(1.0, err)
            and err + bnd < ceiling and _below_model(err + bnd, bands, lam, s, d, m)
            and abs(err - limit) > bnd):
        return 0.0, True
    return err, False


def _scratch(s: int, Qperp: np.ndarray, N: np.ndarray, alpha: np.ndarray
             ) -> tuple[np.ndarray, ...]:
    """Scratch of :func:`hat_errors` and :func:`hat_range` (allocated here: allocations
    inside a kernel cost compile time; private to the walking thread and kept by it,
    :func:`.private.scratch`): A, G, E, R, rhs, w, H, tau, X, Lp, Ap, y."""
    d, m = Qperp.shape[1], alpha.shape[1]
    r, q = max(min(s, d), 1), max(s - 1, 1)
    return private.scratch(((s, d), Qperp.dtype), ((r, r), Qperp.dtype),
                           ((s, s), N.dtype), ((s, s), N.dtype),
                           ((s, m), alpha.dtype), ((s, m), alpha.dtype),
                           ((max(d, s), s), Qperp.dtype), (s, Qperp.dtype),
                           ((s, s), Qperp.dtype),
                           ((q, q), Qperp.dtype), ((q, d), Qperp.dtype),
                           (q, Qperp.dtype))


@njit
def hat_errors(Sets: Any, Qperp: Any, N: Any, alpha: Any, err_full: float, t: float,
               err: Any, pending: Any, A: Any, G: Any, E: Any, R: Any, rhs: Any,
               w: Any, H: Any, tau: Any, X: Any, floor: float, bands: Any) -> None:
    """Errors of the rows of Sets (err), and their states (pending: 1 where the numpy oracle
    must decide, 2 where the second stage decided; :func:`_hat_one`)."""
    for b in range(Sets.shape[0]):
        err[b], pending[b] = _hat_one(Sets[b], Qperp, N, alpha, err_full, t, A, G, E, R,
                                      rhs, w, H, tau, X, floor, bands, np.inf)


@njit
def _banded(e: float, state: int, lo: float, hi: float) -> int:
    """The state of a set with error e: pending (1) when not already and e is not below lo
    nor above hi, or not finite (the oracle's near-limit band over a chunk,
    :func:`gctool.audit.oracles.optimal.near_limit`, whose two compares these are)."""
    if state != 1 and not ((e < lo or e > hi) and np.isfinite(e)):
        return 1
    return state


@njit
def hat_range(S: Any, n: int, count: int, Qperp: Any, N: Any, alpha: Any, err_full: float,
              t: float, err: Any, pending: Any, A: Any, G: Any, E: Any, R: Any, rhs: Any,
              w: Any, H: Any, tau: Any, X: Any, Lp: Any, Ap: Any, y: Any, rowsq: Any,
              floor: float, bands: Any, limit: float, lo: float, hi: float,
              most: int, halt: Any) -> int:
    """Errors of ``count`` sets from S in lexicographic order (S updated in place) and their
    states (pending, as :func:`_hat_one`'s, and also every set whose error lies in the
    oracle's near-limit band ``[lo, hi]``, :func:`_banded`); stops
    after the first set it settles with an error above ``limit`` (a threshold search needs no
    more), in the band or not, and after the ``most``-th pending set (the numpy route decides
    it: it may be over the limit): returns how many sets it walked.  Ends early, its results
    not to be read, once ``halt[0]`` is set (read every :data:`HALT_EVERY` sets, or at each
    new prefix: the run that wanted them has stopped, :func:`gctool.engine.threads.halt_flag`).

    For s <= d the test is whether ``A A^H - t I`` (s x s) is positive definite; the rows of
    the first s - 1 stragglers are shared by consecutive sets, so their block is factored once
    (Cholesky L) and the inner loop over the last straggler x only checks
    ``|x|^2 - t - |L^{-1} A_p x^H|^2 > 0`` (rowsq: the |x|^2; if the shared block is not
    positive definite, neither is any set: interlacing).  A set neither this test nor the
    QR bound settles goes to the second stage (:func:`_settle`)."""
    s = S.shape[0]
    d = Qperp.shape[1]
    if not 2 <= s <= d:
        for k in range(count):
            if k % HALT_EVERY == HALT_EVERY - 1 and halt[0] != 0:
                return k
            e, state = _hat_one(S, Qperp, N, alpha, err_full, t, A, G, E, R, rhs, w, H,
                                tau, X, floor, bands, limit)
            err[k], pending[k] = e, _banded(e, state, lo, hi)
            if state != 1 and e > limit:
                return k + 1
            if pending[k] == PENDING:
                most -= 1
                if most <= 0:
                    return k + 1
            if k + 1 < count:
                successor(S, n)
        return count
    top = s - 1
    fresh = 0
    prefix_pd = False
    k = 0
    full_state = _banded(err_full, 0, lo, hi)
    while k < count:
        if halt[0] != 0:
            return k
        if fresh < top:
            for i in range(top):
                for j in range(d):
                    Ap[i, j] = Qperp[S[i], j]
            prefix_pd = _well(Ap, Lp, t)
            fresh = top
        xend = min(n, S[top] + (count - k))
        for x in range(S[top], xend):
            ok = prefix_pd
            if ok:
                for i in range(top):  # y = L^{-1} (A_p x^H)
                    acc = 0.0 * y[0]
                    for j in range(d):
                        acc += Ap[i, j] * np.conj(Qperp[x, j])
                    for j in range(i):
                        acc -= Lp[i, j] * y[j]
                    y[i] = acc / Lp[i, i]
                delta = rowsq[x] - t
                for i in range(top):
                    delta -= y[i].real * y[i].real + y[i].imag * y[i].imag
                ok = delta > 0
            state = 0
            if ok:
                err[k], pending[k] = err_full, full_state
            else:  # the QR bound, with the set's own last row, then the second stage
                S[top] = x
                if _clear(S, Qperp, H, tau, X, floor):
                    err[k], pending[k] = err_full, full_state
                else:
                    e, doubt = _settle(S, Qperp, N, alpha, err_full, bands, limit, A)
                    state = 1 if doubt else 2
                    err[k], pending[k] = e, _banded(e, state, lo, hi)
            k += 1
            if state != 1 and err[k - 1] > limit:
                S[top] = x
                return k
            if pending[k - 1] == PENDING:
                most -= 1
                if most <= 0:
                    return k
        if xend < n:  # stopped inside this prefix
            S[top] = xend
            break
        S[top] = n - 1
        if k < count:
            fresh = min(fresh, max(successor(S, n), 0))
    return count


#: the time of an attack's walk per straggler set (:func:`hat_range`, and what the run does
#: with each set besides: the walk's band check, the error's masks in ``errors_range`` and the
#: fold's running maximum, 6-13 ns of it), in ns.  With s <= d: a fixed part ...
WALK_SET_NS = 20
#: ... plus this much per multiply-add of the inner test (y = L^-1 A_p x^H: (s - 1) d +
#: (s - 1)^2 / 2) ...
WALK_FLOP_NS = 0.72
#: ... and, for each prefix of s - 1 stragglers (one per n/s sets: C(n-1, s-1) of the C(n, s)),
#: its Cholesky factorisation: this much fixed (the next prefix, the call) plus WALK_GRAM_NS per
#: multiply-add of its Gram matrix and factor ((s - 1)^2 d + (s - 1)^3 / 6).  The model before
#: left the prefixes out: 0.55 ns per multiply-add of the inner test and 12 ns read real cyclic
#: n=40 s=6 at half its time (the prefix is 30 of its 90 ns per set, and its share grows with
#: s/n: cyclic n=32 s=8 is 1.7 times n=64 s=5 per multiply-add of the test).
WALK_PREFIX_NS = 84
WALK_GRAM_NS = 0.42
#: With s > d (a direction is lost) each set is decided alone: its A's Gram matrix and
#: Cholesky, the lost directions' basis from A's Householder QR and their system R = E^H N_SS E
#: by Cholesky, and the band's second Cholesky (:func:`_hat_one`): this much fixed (the calls
#: of the small kernels: 0.7 us at s = 5, d = 2-4, where their arithmetic is 300 multiply-adds)
#: ...
WALK_KKT_SET_NS = 580
#: ... plus this much per multiply-add of those steps (:func:`gctool.numerics.kkt_muladds`;
#: the (s + d)^3 that counted them before read s = 5, d = 2 at a sixth of its time and s = 12,
#: d = 10 1.2 times high).  Complex codes cost WALK_COMPLEX times as much (1.8-2.4 measured).
WALK_KKT_FLOP_NS = 0.76
WALK_COMPLEX = 2.0
#: Fitted to the minimum CPU time per set of several rounds (one core of the 2-core
#: development machine under load; ``OracleKernel.peak_range`` over tasks of 65,536 sets from
#: the middle of the ranks): s <= d on 24 codes (real and complex cyclic n=24-64 s=3-8, random
#: dense real and complex n=26-64 with d=4-32, s=3-10): measured / estimated 0.85-1.24;
#: s > d on 13 (cyclic n=20-40 with d=2-6, random dense with d=4-10, s=d+1..d+4, real and
#: complex): 0.93-1.13.  Enumerations below about 20,000 sets are dominated by each walk
#: call's fixed cost (20-100 us), which these rates leave out.


def walk_cost(s: int, d: int, n: int, complex_: bool = False) -> float:
    """Estimated time of the compiled walk per set of size s of n (d = dim null(B)), in ns."""
    if s > d:
        t = WALK_KKT_SET_NS + WALK_KKT_FLOP_NS * kkt_muladds(s, d)
    else:
        p = max(s - 1, 0)
        prefix = WALK_PREFIX_NS + WALK_GRAM_NS * (p * p * d + p**3 / 6)
        t = WALK_SET_NS + WALK_FLOP_NS * (p * d + p * p / 2) + prefix * s / max(n, 1)
    return t * (WALK_COMPLEX if complex_ else 1.0)


class HatErrors:
    """The compiled fast path of one OptimalOracle (contiguous copies of its spectral data)."""

    def __init__(self, Qperp: np.ndarray, N: np.ndarray, alpha: np.ndarray, err_full: float,
                 sig_kept: float, sig_full: float, sig_lost: float, ceiling: float,
                 model: tuple[float, ...]) -> None:
        """sig_kept, sig_full, sig_lost: the numpy oracle's singular-value bands; ceiling: the
        largest error numpy's oracle keeps without its decoder (below its near-limit band);
        model: its decoding limit, error model (drho, grow, and the units dunit, gunit of the
        lost directions' terms), relative band, n and K."""
        dt = np.result_type(Qperp, N, alpha, np.float64)
        self.Qperp = np.ascontiguousarray(Qperp, dtype=dt)
        self.N = np.ascontiguousarray(N, dtype=dt)
        self.alpha = np.ascontiguousarray(alpha, dtype=dt)
        self.err_full = float(err_full)
        self.t = float(sig_kept) ** 2 * (1 + 1e-6)
        # twice the numpy oracle's floor: its SVD's singular values are accurate to about
        # 1e-16, far less than sig_full
        self.floor = 2 * float(sig_full)
        self.rowsq = np.ascontiguousarray(np.sum(np.abs(self.Qperp) ** 2, axis=1))
        self.bands = np.array([sig_kept, sig_lost, ceiling, *model], dtype=np.float64)

    def warm(self, s: int, given: bool = False) -> None:
        """Compile (or load from the cache) the entry points a run calls, before its threads
        need them: the walk of rank ranges with the worst of a walked range and its tied
        records, or, ``given``, the kernel of given sets (:meth:`__call__`: a run of one set
        per rotation orbit never walks); each other entry point compiles on its first use."""
        key = ("optimal-given" if given else "optimal", self.Qperp.dtype.str)
        if key in WARM:
            return
        WARM.add(key)
        with compile_notice("attack"):
            if given:
                self(np.arange(s, dtype=np.int64)[None])
                return
            self.walk(self.Qperp.shape[0], s, 0, 1)
            # the worst of a walked range, and its tied records
            tied_records(np.zeros(1), first_max(np.zeros(1), TIE_RTOL))

    def walk(self, n: int, s: int, start: int, stop: int, limit: float = np.inf,
             band: tuple[float, float] = (np.inf, np.inf), most: int = 0
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(errors, pending, unchecked) of the sets with lexicographic ranks start..stop-1, or
        of those up to the first one settled with an error above ``limit`` or up to the
        ``most``-th pending one (0: no such cap), whichever comes first (then the last);
        pending: also the sets whose error is within ``band`` (lo, hi: :func:`_banded`; by
        default only non-finite errors); unchecked: decided with s > d, the oracle's per-set
        band left to its check (:data:`UNCHECKED`)."""
        from gctool.engine.enumeration import unrank_one
        from gctool.engine.threads import halt_flag, raise_if_halted

        S = private.current(unrank_one(n, s, start))
        count = stop - start  # hat_range writes both for every set it walks
        err, state = np.empty(count), np.empty(count, dtype=np.uint8)
        halt = halt_flag()
        walked = hat_range(S, n, count, self.Qperp, self.N, self.alpha, self.err_full, self.t,
                           err, state, *_scratch(s, self.Qperp, self.N, self.alpha),
                           self.rowsq, self.floor, self.bands, float(limit), float(band[0]),
                           float(band[1]), most if most > 0 else count + 1, halt)
        raise_if_halted(halt)
        return err[:walked], state[:walked] == PENDING, state[:walked] == UNCHECKED

    def __call__(self, S: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(errors, pending, unchecked) of the straggler sets S (as :meth:`walk`'s)."""
        b = S.shape[0]
        err, state = np.zeros(b), np.zeros(b, dtype=np.uint8)
        key = ("optimal-sets", self.Qperp.dtype.str)
        with compile_notice("attack") if key not in WARM else nullcontext():
            WARM.add(key)
            hat_errors(np.ascontiguousarray(S, dtype=np.int64), self.Qperp, self.N, self.alpha,
                       self.err_full, self.t, err, state,
                       *_scratch(S.shape[1], self.Qperp, self.N, self.alpha)[:9], self.floor,
                       self.bands)
        return err, state == PENDING, state == UNCHECKED
