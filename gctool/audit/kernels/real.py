"""Compiled left-null-space screen over R/C (see :mod:`gctool.audit.nullspace` for the
mathematics; this is :class:`~gctool.audit.nullspace.FloatNullKernel`'s screen, set by set).

For each straggler set S, with ``A = N[:, S]^T`` (s x d, N orthonormal rows):

* d = s: LU with partial pivoting of A; ``lb = |det A| <= sigma_min(A)``;
* d > s: Householder QR of ``A^H = QR``; ``lb = |det R| <= sigma_min(A)``;
* ``0 < lb < delta``: the tighter ``1 / ||M^{-1}||_F`` (M = A or R) is tried as well;
* ``lb >= delta``: accepted (decodes); the minimum-norm decoder ``a = W + N^T Z`` (Z solves
  ``A Z = -W_S``) gives the exact decoder norm ``||D a||``.

The range walk (:func:`screen_range`) keeps the factorisation of a set's first s - 1 rows
from set to set and runs the witness test too.  The sets it leaves *pending* (singular to
round-off, within 1e-6 of delta, a witness above its margin) go to the second stage
(:func:`settle_sets`, in the thread that walked them, without the GIL): the same tests from
scratch on the set's own factors, with the same margins.  What neither settles goes to the
numpy kernel (witness test, direct decoder, exact escalation), so a set is accepted here
only on a bound or witness that the numpy kernel would accept too."""

from __future__ import annotations

import bisect
import threading
from contextlib import nullcontext
from typing import Any

import numpy as np

from gctool.audit.chunks import WEAKEST
from gctool.audit.kernels import WITNESS_SHARE, private
from gctool.audit.kernels.bounds import SPLIT_SAFE, qr_clears, qr_floor
from gctool.audit.kernels.shared import (
    WARM,
    _dot2,
    _inv_fro_lu,
    _inv_fro_tri,
    _lu,
    _lu_solve,
    _qr,
    _reflector,
    _unreflect,
    bracket,
    res_gamma,
    survivors_into,
)
from gctool.compiled import compile_notice
from gctool.compiled._jit import njit
from gctool.compiled.walk import successor, unrank_into
from gctool.engine.enumeration import sample_sets
from gctool.limits import DECIDE_RTOL, RANK_BAND, REL_SLACK
from gctool.numerics import EPS, complement

#: guards :attr:`RealScreen.floors` (the threads of a run share the screen; a lock of its own
#: would not pickle)
_FLOORS = threading.Lock()
#: :func:`.bounds.qr_floor` and :func:`.bounds.qr_clears`
#: compiled (scalars): the QR certificate of B_F's smallest singular value and its margins
floor_qr = njit(qr_floor)
clears_qr = njit(qr_clears)
@njit
def _tight_witness(av: Any, Bn: Any, T: Any, F: Any, f: int, x: Any, y: Any) -> float:
    """A rigorous upper bound on the squared residual ``||B_F^T a_F - T^T||^2`` of the decoder
    ``av`` (n x m) on the survivors F[:f], its entries in compensated arithmetic (:func:`_dot2`
    of the f products and the target: within ``dot2_bound`` of the exact entries, where the
    plain sum's round-off bound grows with ``|B|^T |a|``), rounded upward as :func:`_witness`;
    inf where an entry of a may overflow Dekker's splitting (real codes only: the caller
    checks).  As :meth:`gctool.audit.nullspace.FloatNullKernel.tight_witness`."""
    K, m = Bn.shape[1], T.shape[0]
    for j in range(f):
        for w in range(m):
            if not abs(av[F[j], w]) < SPLIT_SAFE:
                return np.inf
    r2, e2 = 0.0, 0.0
    for w in range(m):
        for k in range(K):
            for j in range(f):
                x[j], y[j] = av[F[j], w].real, Bn[F[j], k].real  # (real: typed for C too)
            x[f], y[f] = T[w, k].real, -1.0
            v, b = _dot2(x, y, f + 1)
            r2 += v * v
            e2 += b * b
    return bracket(r2, np.sqrt(e2), K * m)[1]


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
            _unreflect(H, tau, c, Z, u)


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
    lb = _factor(S, NT, delta, M, perm, tau, E, X)
    if not lb >= delta:
        return lb, np.nan
    _decoder(S, NT, W, M, perm, tau, Y, Z)
    return lb, _decoder_norm(NT, W, scale, inS, Z)


@njit
def _factor(S: Any, NT: Any, below: float, M: Any, perm: Any, tau: Any, E: Any, X: Any
            ) -> float:
    """Factor ``A = N[:, S]^T`` into M (LU of A when d = s, Householder QR of A^H otherwise)
    and return the proved lower bound on sigma_min(A): |det|, or the tighter
    ``1 / ||M^-1||_F`` when that is larger and |det| is below ``below`` (0 when singular or
    non-finite)."""
    s = S.shape[0]
    d = NT.shape[1]
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
    if 0 < lb < below:
        fro = _inv_fro_lu(M, perm, E, X) if square else _inv_fro_tri(M, X)
        if np.isfinite(fro) and fro > 0 and 1.0 / fro > lb:
            lb = 1.0 / fro
    return lb


@njit
def _decoder(S: Any, NT: Any, W: Any, M: Any, perm: Any, tau: Any, Y: Any, Z: Any) -> None:
    """The minimum-norm Z with ``A Z = -W_S`` from the factors of :func:`_factor`."""
    m = W.shape[1]
    for i in range(S.shape[0]):
        for u in range(m):
            Y[i, u] = -W[S[i], u]
    if NT.shape[1] == S.shape[0]:
        _lu_solve(M, perm, Y, Z)
    else:
        _qr_z(M, tau, Y, Z)


@njit
def _squares(NT: Any, W: Any, scale: Any, inS: Any, Z: Any) -> float:
    """``||D (W + N^T Z)||^2`` over the rows outside S (inS), D = diag(scale), summed as it
    comes (may overflow or underflow)."""
    n, d = NT.shape
    m = W.shape[1]
    acc = 0.0
    for i in range(n):
        if inS[i]:
            continue
        for u in range(m):
            v = W[i, u]
            for j in range(d):
                v += NT[i, j] * Z[j, u]
            acc += abs(v * scale[i]) ** 2
    return acc


@njit
def _decoder_norm(NT: Any, W: Any, scale: Any, inS: Any, Z: Any) -> float:
    """``||D (W + N^T Z)||`` over the rows outside S (inS), D = diag(scale): the norm of the
    decoder of B; 0 or nan (non-finite) as it comes."""
    n, d = NT.shape
    m = W.shape[1]
    acc = _squares(NT, W, scale, inS, Z)
    if np.isfinite(acc) and acc > 0:
        return np.sqrt(acc)
    top = 0.0  # overflow or underflow of the squares: rescale
    for i in range(n):
        if not inS[i]:
            for u in range(m):
                v = W[i, u]
                for j in range(d):
                    v += NT[i, j] * Z[j, u]
                top = max(top, abs(v * scale[i]))
    if top == 0 or not np.isfinite(top):
        return top if top == 0 else np.nan
    acc = 0.0
    for i in range(n):
        if not inS[i]:
            for u in range(m):
                v = W[i, u]
                for j in range(d):
                    v += NT[i, j] * Z[j, u]
                acc += abs(v * scale[i] / top) ** 2
    return top * np.sqrt(acc)


def _work(NT: np.ndarray, W: np.ndarray, s: int) -> tuple[Any, ...]:
    """Scratch arrays of :func:`_screen_one`: M (s x s, or d x s for QR), perm, tau, E, X,
    Y, Z."""
    d, m = NT.shape[1], W.shape[1]
    dt = np.result_type(NT, W)
    return (np.zeros((s, s) if d == s else (d, s), dt), np.zeros(s, np.int64),
            np.zeros(s, dt), np.zeros((s, s), dt), np.zeros((s, s), dt), np.zeros((s, m), dt),
            np.zeros((d, m), dt))


@njit
def _par2(xx: float, nc2: float) -> float:
    """``||x_par||^2 = ||x||^2 - ||c||^2`` (xx, nc2: the part of the row x in the span of the
    rows so far, whose pseudo-inverse it meets), raised by more than its round-off."""
    return max(xx - nc2, 0.0) + 8 * EPS * xx


@njit
def _level(j: int, x: int, NT: Any, W: Any, C: Any, Z: Any, vol: Any, c: Any, u: Any,
           beta: Any, rowsq: Any, fb: Any) -> None:
    """Level j + 1 of the walk's factorisation from level j and the row x (the straggler
    S[j]).  Level j describes the rows ``P_j = N[:, S[:j]]^T`` (j x d):

    * ``C[j, :, :d-j]`` an orthonormal basis of ``{v : P_j v = 0}``;
    * ``Z[j]`` the minimum-norm solution of ``P_j Z = -W_{S[:j]}``;
    * ``vol[j]`` the product of the singular values of P_j (0: rank deficient).

    With ``c = x C_j`` (the part of the new row outside the rows so far): ``vol`` grows by
    ``||c||``, ``Z += g (-W_x - x Z_j)`` with ``g = C_j conj(c) / ||c||^2``, and the new
    basis is ``C_j H`` without its first column, H the Householder reflector taking conj(c)
    to a multiple of e_1 (one pass over C_j gives both: ``C_j u`` with u the reflector's
    vector, ``C_j conj(c) = C_j u + alpha C_j e_1``).

    ``fb[j + 1]`` bounds ``||P_{j+1}^+||_F^2`` from above (inf when rank deficient): the
    pseudo-inverse grows by ``(1 + ||x P_j^+||^2) / ||c||^2`` (:func:`_inverse_fro`) and
    ``||x P_j^+|| <= ||x_par|| ||P_j^+||_F`` with x_par the part of x in the rows so far
    (:func:`_par2`), so the bound costs O(1)."""
    d, m = NT.shape[1], W.shape[1]
    L = d - j
    vol[j + 1] = 0.0
    fb[j + 1] = np.inf
    if not vol[j] > 0:
        return
    nc2 = 0.0
    for k in range(L):
        acc = 0.0 * C[j, 0, 0]
        for i in range(d):
            acc += NT[x, i] * C[j, i, k]
        c[k] = acc
        nc2 += acc.real * acc.real + acc.imag * acc.imag
    if not (nc2 > 0 and np.isfinite(nc2)):
        return
    nc = np.sqrt(nc2)
    vol[j + 1] = vol[j] * nc
    fb[j + 1] = fb[j] + (1.0 + _par2(rowsq[x], nc2) * fb[j]) / nc2
    for w in range(m):
        b = -W[x, w]
        for i in range(d):
            b -= NT[x, i] * Z[j, i, w]
        beta[w] = b / nc2
    if L == 2:  # one vector left (the last level when d = s): (c_1 a - c_0 b) / ||c||
        c0, c1, r = c[0], c[1], 1.0 / nc
        for i in range(d):
            a, b = C[j, i, 0], C[j, i, 1]
            C[j + 1, i, 0] = (c1 * a - c0 * b) * r
            gi = np.conj(c0) * a + np.conj(c1) * b  # (C_j conj(c))_i
            for w in range(m):
                Z[j + 1, i, w] = Z[j, i, w] + gi * beta[w]
        return
    v0 = np.conj(c[0])
    a0 = abs(v0)
    alpha = -(v0 / a0 if a0 != 0 else 1.0 + 0.0 * v0) * nc
    u[0] = v0 - alpha
    for k in range(1, L):
        u[k] = np.conj(c[k])
    tau = 1.0 / (nc * (nc + a0))  # 2 / ||u||^2
    for i in range(d):
        acc = 0.0 * C[j, 0, 0]
        for k in range(L):
            acc += C[j, i, k] * u[k]
        gi = acc + alpha * C[j, i, 0]  # (C_j conj(c))_i
        for w in range(m):
            Z[j + 1, i, w] = Z[j, i, w] + gi * beta[w]
        acc *= tau
        for k in range(1, L):
            C[j + 1, i, k - 1] = C[j, i, k] - acc * np.conj(u[k])


@njit
def _inverse_fro(lo: int, top: int, S: Any, NT: Any, C: Any, P: Any, fro: Any, c: Any,
                 g: Any) -> None:
    """The pseudo-inverses of levels lo + 1 .. top from level lo (on demand: only sets near
    delta need them): ``P_{j+1}^+ = [P_j^+ - g (x P_j^+), g]`` with x = S[j],
    ``g = C_j conj(c) / ||c||^2``, and ``fro[j] = ||P_j^+||_F^2 = fro[j-1] +
    (1 + ||x P_j^+||^2) / ||c||^2``."""
    d = NT.shape[1]
    for j in range(lo, top):
        x = S[j]
        L = d - j
        nc2 = 0.0
        for k in range(L):
            acc = 0.0 * C[j, 0, 0]
            for i in range(d):
                acc += NT[x, i] * C[j, i, k]
            c[k] = acc
            nc2 += acc.real * acc.real + acc.imag * acc.imag
        for i in range(d):
            acc = 0.0 * C[j, 0, 0]
            for k in range(L):
                acc += C[j, i, k] * np.conj(c[k])
            g[i] = acc / nc2
        xp2 = 0.0
        for col in range(j):
            acc = 0.0 * C[j, 0, 0]
            for i in range(d):
                acc += NT[x, i] * P[j, i, col]
            xp2 += acc.real * acc.real + acc.imag * acc.imag
            for i in range(d):
                P[j + 1, i, col] = P[j, i, col] - g[i] * acc
        for i in range(d):
            P[j + 1, i, j] = g[i]
        fro[j + 1] = fro[j] + (1.0 + xp2) / nc2


@njit
def _norm_cut(best: float, rc0: float, dn: float, zz: float) -> float:
    """Q such that a set with ``|beta|^2 < Q ||c||^2`` (see :func:`screen_range`) has a
    decoder norm bound ``(rc0 + dn sqrt(zz + |beta|^2 / ||c||^2)) (1 + 1e-6)`` below
    ``best (1 - REL_SLACK)``: it cannot be the largest; -1 when every set may be."""
    cut = best * (1 - REL_SLACK) / (1 + 1e-6)
    if not (cut > rc0 and dn > 0):
        return -1.0
    q = ((cut - rc0) / dn) ** 2 - zz
    return q * (1 - REL_SLACK) if q > 0 else -1.0


@njit
def _prefix_norm(NT: Any, W: Any, scale: Any, Z: Any) -> float:
    """``||D (W + N^T Z)||`` over every row (Z: d x m, the decoder of a prefix of stragglers,
    D = diag(scale)); nan when its square is not finite or below 1e-250 (where the squares
    of its entries may have lost more than round-off)."""
    acc = _squares(NT, W, scale, np.zeros(NT.shape[0], dtype=np.bool_), Z)
    return np.sqrt(acc) if np.isfinite(acc) and acc >= 1e-250 else np.nan


@njit
def _prefix_cut(best: float, rp: float, dn: float) -> float:
    """Q such that a set with ``|beta|^2 < Q ||c||^2`` has a decoder norm bound
    ``(rp + dn |beta| / ||c||) (1 + 1e-6)`` below ``best (1 - REL_SLACK)`` (rp: the norm of
    its prefix's decoder, :func:`_prefix_norm`; the set's decoder adds ``g beta`` to it,
    ``||g|| = 1 / ||c||``); -1 when every set may be the largest."""
    cut = best * (1 - REL_SLACK) / (1 + 1e-6)
    if not (cut > rp and dn > 0):
        return -1.0
    q = ((cut - rp) / dn) ** 2
    return q * (1 - REL_SLACK) if q > 0 else -1.0


@njit
def _witness(NT: Any, W: Any, Bn: Any, T: Any, inS: Any, Z: Any, av: Any, tail: float
             ) -> float:
    """Rigorous upper bound on the error the decoding rule gives B_F, from the decoder
    ``a = W + N^T Z`` cut to the survivors (inS: the stragglers), as
    :meth:`gctool.audit.nullspace.FloatNullKernel.witness_error` (why it is sound whatever the
    rank of B_F is argued there; the same slack, band term and upward rounding): the computed
    residual plus ``residual_gamma(n) (|a|^T |B| + |t|)``, the bound on its round-off, plus
    ``tail ||a||`` (:func:`gctool.numerics.band_tail`); inf or nan when it overflows."""
    r2, e2, aa = _witness_parts(NT, W, Bn, T, inS, Z, av)
    return bracket(r2, np.sqrt(e2) + tail * np.sqrt(aa), Bn.shape[1] * W.shape[1])[1]


@njit
def _witness_parts(NT: Any, W: Any, Bn: Any, T: Any, inS: Any, Z: Any, av: Any
                   ) -> tuple[float, float, float]:
    """(the computed squared residual, the squared 2-norm of its round-off bound, ``||a||^2``)
    of the decoder ``a = W + N^T Z`` cut to the survivors (into av): :func:`_witness` before
    its bracket, rounded upward there (with or without the band term)."""
    n, d = NT.shape
    m = W.shape[1]
    aa = 0.0
    for i in range(n):
        for w in range(m):
            v = W[i, w]
            for j in range(d):
                v += NT[i, j] * Z[j, w]
            av[i, w] = 0.0 * v if inS[i] else v
            if not inS[i]:
                aa += abs(v) ** 2
    r2, e2 = _residual(av, Bn, T, inS,
                       res_gamma(n, np.iscomplexobj(av) or np.iscomplexobj(Bn)))
    return r2, e2, aa


@njit
def _residual(av: Any, Bn: Any, T: Any, inS: Any, gamma: float) -> tuple[float, float]:
    """``(||B_F^T a_F - T^T||^2, ||gamma (|B_F^T| |a_F| + |T^T|) ||^2)`` over the rows outside
    S (inS): the computed residual of the decoder ``av`` (n x m) and the bound on its
    round-off (its products, sums and the subtraction of t, as
    :meth:`gctool.audit.nullspace.FloatNullKernel.witness_error`)."""
    n, m, K = av.shape[0], av.shape[1], Bn.shape[1]
    r2, e2 = 0.0, 0.0
    for w in range(m):
        for k in range(K):
            acc = 0.0 * av[0, 0]
            mag = 0.0
            for i in range(n):
                if not inS[i]:
                    acc += av[i, w] * Bn[i, k]
                    mag += abs(av[i, w]) * abs(Bn[i, k])
            r2 += abs(acc - T[w, k]) ** 2
            e2 += (gamma * (mag + abs(T[w, k]))) ** 2
    return r2, e2


@njit
def _beta(x: int, NT: Any, W: Any, zT: Any, bw: Any) -> float:
    """``beta = -W_x - x Z_{s-1}`` into bw; returns ``||beta||^2``."""
    d, m = NT.shape[1], W.shape[1]
    aa = 0.0
    for w in range(m):
        b = -W[x, w]
        for i in range(d):
            b -= NT[x, i] * zT[w, i]
        bw[w] = b
        aa += b.real * b.real + b.imag * b.imag
    return aa


@njit
def _set_decoder(top: int, C: Any, Zl: Any, c: Any, nc2: float, bw: Any, g: Any,
                 Zs: Any) -> None:
    """The set's minimum-norm ``Z = Z_{s-1} + g beta``, ``g = C_{s-1} conj(c) / ||c||^2``."""
    d, L = C.shape[1], C.shape[1] - top
    for i in range(d):
        acc = 0.0 * C[top, 0, 0]
        for k in range(L):
            acc += C[top, i, k] * np.conj(c[k])
        g[i] = acc / nc2
    for w in range(Zs.shape[1]):
        for i in range(d):
            Zs[i, w] = Zl[top, i, w] + g[i] * bw[w]


@njit
def screen_range(S: Any, n: int, count: int, NT: Any, W: Any, scale: Any, delta: float,
                 rc0: float, dn: float, pend: Any, weak_lb: Any, weak_at: Any, Zs: Any,
                 C: Any, Zl: Any, P: Any, vol: Any, fro: Any, c: Any, g: Any, u: Any, bw: Any,
                 Ct: Any, zT: Any, inS: Any, rowsq: Any, fb: Any, Bn: Any, T: Any,
                 wlim: float, tail: float, free: float, av: Any, floor: float, halt: Any
                 ) -> tuple[int, int, float, int, int]:
    """Walk ``count`` sets from S (updated in place to the next set to do).

    Stops early when the pending buffer is full, and ends, its results not to be read, once
    ``halt[0]`` is set (read at each new prefix: :func:`gctool.engine.threads.halt_flag`).
    Returns ``(done, pending, max_norm, max_norm_at, full)``; positions are offsets from the
    first set; ``full`` counts the sets whose decoder norm it computed in full (the share
    :func:`norm_share` estimates).  ``weak_lb``/``weak_at`` keep the smallest accepted lower
    bounds (ascending, ties to the earlier set).

    The factorisation is kept level by level (:func:`_level`): sets that share their first
    s - 1 stragglers share it whole (the inner loop runs over the last straggler x), and a
    new prefix only redoes the levels from its first changed row.  For the last straggler,
    with ``c = x C_{s-1}``: the lower bound on sigma_min(N[:, S]) is ``vol_{s-1} ||c||`` (the
    |det| of the square case, |det R| of ``A^H = QR`` otherwise) and, when that is below
    delta, the tighter ``1 / ||A^+||_F`` (as the numpy kernel: :func:`_inverse_fro`).  A set
    is accepted here only with a bound at least ``delta (1 + 1e-6)``, and the tighter bound
    is tried only below ``delta (1 - 1e-6)`` (round-off cannot move a bound that far, so the
    numpy kernel would take the same branch).  The tighter bound costs O(d s) per set and
    the pseudo-inverses of the prefix, so it is first bounded in O(1)
    (``||A^+||_F^2 <= fb_{s-1} + (1 + ||x||^2 fb_{s-1}) / ||c||^2``, see :func:`_level`): a
    set whose bound clears both delta and the weakest bounds kept (by the same 1e-6) is
    accepted without it, since its own bound is larger still (|det| falls far below
    sigma_min as s grows: without this most sets of n=64, s=7 need it).

    A set below ``delta (1 - 1e-6)`` that is not singular gets the numpy kernel's second
    test here (unless ``wlim < 0``): its decoder ``z = Z_{s-1} + g beta`` is a witness when
    the rigorous bound on its residual (:func:`_witness`) is at most ``wlim`` (the tolerance
    with a margin, so that the numpy kernel, whose decoder differs by round-off, accepts it
    too); it counts as accepted by the screen (no decoder norm: not the optimal decoder).
    Its bound has the rank band's term ``tail ||a||`` unless d = s and the set's bound is at
    least ``free (1 + 1e-6)`` (:attr:`gctool.audit.nullspace.FloatNullKernel.band_free`, which
    the numpy kernel then reaches too).  Every other set is pending, for the numpy kernel to
    decide.

    The decoder ``z`` has ``||z||^2 = zz + |beta|^2 / ||c||^2``, its norm is bounded by ``||D
    W|| + ||D N^T||_2 ||z||`` (rc0, dn) and, once that leaves a set of a prefix uncut, by ``||D
    (W + N^T Z_{s-1})|| + dn |beta| / ||c||`` too (the prefix's decoder's norm, worked out then,
    once per prefix: :func:`_prefix_cut`; frc, whose first bound cut no set, computes 1-5 % of
    its norms, rs real n=30-48 s=5 7-11 % where it computed 41-84 %), and computed in full
    (:func:`_decoder_norm`) only when it may be the largest so far, or at least ``floor`` (the
    norm of a set before this range: -inf for none; the caller's running maximum, so that a
    range need not find its own first): a set whose norm is at least max(largest so far, floor)
    is never cut, so the largest norm returned, and its first set, are the range's own whenever
    they are at least ``floor`` (below it, the range's largest norm may be missed: an earlier
    set's is larger).  When d = s and m = 1 (the usual case: one
    vector c of one entry, one beta), c and beta are summed in one pass over x's row: the
    same sums in the same order, so the same floats, in 0.6-0.8 times the time."""
    s = S.shape[0]
    d = NT.shape[1]
    m = W.shape[1]
    L = d - s + 1
    for i in range(d):
        for k in range(d):
            C[0, i, k] = 1.0 if i == k else 0.0
    vol[0], fro[0], fb[0] = 1.0, 0.0, 0.0
    inverse = 0  # P and fro hold the levels up to this one
    thr = delta * (1 + 1e-6)
    near = delta * (1 - 1e-6)  # bounds in [near, thr) are left to the numpy kernel
    free_hi = free * (1 + 1e-6) if L == 1 else np.inf  # no band term from this bound on
    K = weak_lb.shape[0]
    # vol^2 ||c||^2 above this: the bound is at least thr and weak_lb[-1] (no sqrt needed)
    t2 = (thr * (1 + 1e-12)) ** 2
    big2 = max(t2, (weak_lb[K - 1] * (1 + 1e-12)) ** 2)
    # ||A^+||_F^2 below 1 / cheap2: the tighter bound clears thr and weak_lb[-1] by 1e-6
    cheap2 = (max(thr, weak_lb[K - 1]) * (1 + 1e-6)) ** 2
    top = s - 1
    vol2, zz, qcut, fbt = 0.0, 0.0, -1.0, 0.0
    rp, qp, pknown = np.nan, -1.0, False  # the prefix's own bound (:func:`_prefix_cut`)
    one = L == 1 and m == 1
    b1 = 0.0 * bw[0]  # beta of x when ``one`` (typed here, set per set)
    stale = 1  # lowest level whose rows changed (s: none)
    npend = 0
    best, best_at = -np.inf, -1
    done, full_norms = 0, 0
    while done < count:
        if halt[0] != 0:
            break
        if stale < s:
            for j in range(stale - 1, top):
                _level(j, S[j], NT, W, C, Zl, vol, c, u, bw, rowsq, fb)
            inverse = min(inverse, stale - 1)
            zz = 0.0
            for i in range(d):
                for k in range(L):
                    Ct[k, i] = C[top, i, k]
                for w in range(m):
                    zT[w, i] = Zl[top, i, w]
                    zz += abs(Zl[top, i, w]) ** 2
            vol2, fbt = vol[top] * vol[top], fb[top]
            qcut = _norm_cut(max(best, floor), rc0, dn, zz)
            rp, qp, pknown = np.nan, -1.0, False
            stale = s
        x = S[top]
        xend = min(n, x + (count - done))
        full = False
        while x < xend:
            nc2 = 0.0
            if one:  # d = s and m = 1: c and beta in one pass (the same sums, same order)
                acc = 0.0 * Ct[0, 0]
                b1 = -W[x, 0]
                for i in range(d):
                    acc += NT[x, i] * Ct[0, i]
                    b1 -= NT[x, i] * zT[0, i]
                c[0] = acc
                nc2 += acc.real * acc.real + acc.imag * acc.imag
            else:
                for k in range(L):
                    acc = 0.0 * Ct[0, 0]
                    for i in range(d):
                        acc += NT[x, i] * Ct[k, i]
                    c[k] = acc
                    nc2 += acc.real * acc.real + acc.imag * acc.imag
            quick = vol2 * nc2 > big2  # accepted, and not among the weakest
            ok = quick
            lb = 0.0
            if not quick:
                lb = vol[top] * np.sqrt(nc2)
                par2 = _par2(rowsq[x], nc2)
                if 0 < lb < near and (fbt + (1.0 + par2 * fbt) / nc2) * cheap2 < 1.0:
                    quick = True  # the O(1) bound on the tighter one clears both
                elif 0 < lb < near:  # the tighter 1 / ||A^+||_F
                    if inverse < top:
                        _inverse_fro(inverse, top, S, NT, C, P, fro, u, g)
                        inverse = top
                    if (fro[top] + (1.0 + par2 * fro[top]) / nc2) * cheap2 < 1.0:
                        quick = True  # the same bound with the prefix's own ||P^+||_F
                if 0 < lb < near and not quick:
                    xp2 = 0.0
                    for col in range(top):
                        acc = 0.0 * C[top, 0, 0]
                        for i in range(d):
                            acc += NT[x, i] * P[top, i, col]
                        xp2 += acc.real * acc.real + acc.imag * acc.imag
                    inv2 = fro[top] + (1.0 + xp2) / nc2
                    if np.isfinite(inv2) and inv2 > 0 and 1.0 / np.sqrt(inv2) > lb:
                        lb = 1.0 / np.sqrt(inv2)
                # sound with sigma_min(B_F) in the rank band (tol > 1): FloatNullKernel.delta
                ok = quick or (np.isfinite(lb) and lb >= thr)
            witness = False
            if ok:
                aa = 0.0
                if one:
                    bw[0] = b1
                    aa += b1.real * b1.real + b1.imag * b1.imag
                else:
                    aa = _beta(x, NT, W, zT, bw)
                if not aa < qcut * nc2 and not pknown and np.isfinite(max(best, floor)):
                    rp = _prefix_norm(NT, W, scale, Zl[top])  # once per prefix, on demand
                    qp = _prefix_cut(max(best, floor), rp, dn)
                    pknown = True
                if not (aa < qcut * nc2 or aa < qp * nc2):  # may be the largest
                    _set_decoder(top, C, Zl, c, nc2, bw, g, Zs)
                    S[top] = x
                    for i in range(s):
                        inS[S[i]] = True
                    nrm = _decoder_norm(NT, W, scale, inS, Zs)
                    full_norms += 1
                    for i in range(s):
                        inS[S[i]] = False
                    if np.isfinite(nrm) and nrm > best:
                        best, best_at = nrm, done
                        qcut = _norm_cut(max(best, floor), rc0, dn, zz)
                        qp = _prefix_cut(max(best, floor), rp, dn) if pknown else -1.0
            elif wlim >= 0 and 0 < lb < near:  # the numpy kernel's witness test
                if one:
                    bw[0] = b1
                else:
                    _beta(x, NT, W, zT, bw)
                _set_decoder(top, C, Zl, c, nc2, bw, g, Zs)
                S[top] = x
                for i in range(s):
                    inS[S[i]] = True
                witness = _witness(NT, W, Bn, T, inS, Zs, av,
                                   0.0 if lb >= free_hi else tail) <= wlim
                for i in range(s):
                    inS[S[i]] = False
            if (ok or witness) and not quick and lb < weak_lb[K - 1]:
                j = K - 1
                while j > 0 and weak_lb[j - 1] > lb:
                    weak_lb[j], weak_at[j] = weak_lb[j - 1], weak_at[j - 1]
                    j -= 1
                weak_lb[j], weak_at[j] = lb, done
                big2 = max(t2, (weak_lb[K - 1] * (1 + 1e-12)) ** 2)
                cheap2 = (max(thr, weak_lb[K - 1]) * (1 + 1e-6)) ** 2
            elif not (ok or witness):
                pend[npend] = done
                npend += 1
            done += 1
            x += 1
            if npend == pend.shape[0]:
                full = True
                break
        if x < n:  # stopped inside this prefix: S is the next set
            S[top] = x
            break
        S[top] = n - 1
        i = successor(S, n)
        if i < 0 or full:
            if i >= 0 and i + 1 < stale:
                stale = i + 1
            break
        if i + 1 < stale:
            stale = i + 1
    return done, npend, best, best_at, full_norms


@njit
def screen_sets(Sets: Any, n: int, NT: Any, W: Any, scale: Any, delta: float, lb_out: Any,
                norm_out: Any, M: Any, perm: Any, tau: Any, E: Any, X: Any, Y: Any,
                Z: Any) -> None:
    """The screen on given sets (rows of Sets): lower bounds and norms (nan if pending)."""
    inS = np.zeros(n, np.bool_)
    for b in range(Sets.shape[0]):
        lb_out[b], norm_out[b] = _screen_one(Sets[b], NT, W, scale, inS, delta, M, perm, tau,
                                             E, X, Y, Z)


#: what :func:`settle_sets` makes of a set the walk left doubtful
DOUBTFUL, BY_BOUND, BY_WITNESS = 0, 1, 2


@njit
def _qr_rows(G: Any, tau: Any) -> None:
    """Householder QR of ``A = G^T`` (G: p x rows, p <= rows; each row of G a column of A,
    so every loop runs along a row) in place, the reflectors as :func:`_qr`'s (its inner
    products in four partial sums: Householder QR's backward error bound holds for any
    summation order): ``R[i, j] = G[j, i]`` for j >= i, the reflector of column c in
    ``G[c, c + 1:]``."""
    p, rows = G.shape
    for c in range(p):
        nrm2 = 0.0
        for r in range(c, rows):
            nrm2 += abs(G[c, r]) ** 2
        nrm = np.sqrt(nrm2)
        if nrm == 0:
            tau[c] = 0.0
            continue
        beta, v0, tau[c] = _reflector(G[c, c], nrm)
        for r in range(c + 1, rows):
            G[c, r] = G[c, r] / v0
        G[c, c] = beta
        for j in range(c + 1, p):
            w0, w1, w2, w3 = G[j, c], 0.0 * G[j, c], 0.0 * G[j, c], 0.0 * G[j, c]
            r = c + 1
            while r + 4 <= rows:  # four partial sums (any order: the backward error holds)
                w0 += np.conj(G[c, r]) * G[j, r]
                w1 += np.conj(G[c, r + 1]) * G[j, r + 1]
                w2 += np.conj(G[c, r + 2]) * G[j, r + 2]
                w3 += np.conj(G[c, r + 3]) * G[j, r + 3]
                r += 4
            while r < rows:
                w0 += np.conj(G[c, r]) * G[j, r]
                r += 1
            w = ((w0 + w1) + (w2 + w3)) * np.conj(tau[c])
            G[j, c] -= w
            for r in range(c + 1, rows):
                G[j, r] -= w * G[c, r]


@njit
def _clear_one(S: Any, Bn: Any, inS: Any, F: Any, H: Any, tau: Any, X: Any, tail: float
               ) -> tuple[bool, bool]:
    """(clears, fails) of the QR certificate of B_F (:meth:`gctool.audit.nullspace.
    FloatNullKernel.band_clear`, :func:`.bounds.qr_floor` and the compiled
    margins of :func:`.bounds.qr_clears`): a Householder QR of ``B_F^T`` (K x
    f, f <= K; H: f x K, B_F itself, :func:`_qr_rows`) and the back-substituted inverse of its
    R (:func:`_inv_fro_tri`).  Neither where R is singular."""
    n, K = Bn.shape
    f = n - S.shape[0]
    survivors_into(S, inS, F)
    for i in range(f):
        for k in range(K):
            H[i, k] = Bn[F[i], k]
    _qr_rows(H, tau)
    for i in range(f):
        if H[i, i] == 0:
            return False, False
    ninv = _inv_fro_tri(H.T, X)
    if not (np.isfinite(ninv) and ninv > 0):
        return False, False
    cx = np.iscomplexobj(H)
    sig, eta, gna = floor_qr(ninv, np.sqrt(f) * (1 + 4 * EPS), K, f, cx, res_gamma(f, cx))
    return clears_qr(sig, eta, gna, ninv, tail, True)


@njit
def _settle_one(S: Any, NT: Any, W: Any, scale: Any, inS: Any, delta: float, Bn: Any, T: Any,
                wlim: float, tail: float, free: float, M: Any, perm: Any, tau: Any, E: Any,
                X: Any, Y: Any, Z: Any, av: Any, F: Any, H: Any, tau2: Any, X2: Any, Xd: Any,
                Yd: Any) -> tuple[int, float, float, float]:
    """(what, lb, norm, witness) of one set, from scratch: the numpy kernel's test
    (:meth:`gctool.audit.nullspace.FloatNullKernel.evaluate_numpy`) up to and including its
    witness test, with the walk's margins.

    :func:`_factor` (LU of A when d = s, Householder QR of A^H otherwise) gives
    ``lb = |det|`` and, below ``delta (1 - 1e-6)``, the tighter ``1 / ||M^-1||_F``; a bound
    at least ``delta (1 + 1e-6)`` accepts the set (:data:`BY_BOUND`, with the exact decoder
    norm); a non-singular set below ``delta (1 - 1e-6)`` whose decoder ``a = W + N^T Z``
    (Z from the same factors) has a rigorous residual bound (:func:`_witness`) at most
    ``wlim`` is accepted too (:data:`BY_WITNESS`, with that bound as its error; no norm: not
    the optimal decoder; the band term as in :func:`screen_range`, left out from ``free (1 +
    1e-6)`` when d = s, or where the QR certificate of B_F (:func:`_clear_one`, when d = s and
    n - s <= K) proves every singular value above the band, with the margins under which
    numpy's certificate holds too).  A witness the plain bound leaves above wlim has its
    residual summed again in compensated arithmetic (:func:`_tight_witness`, as numpy's
    kernel does: :meth:`~gctool.audit.nullspace.FloatNullKernel.tight_witness`).  Everything
    else (singular, within 1e-6 of delta, a witness above wlim, non-finite) is
    :data:`DOUBTFUL`: the numpy kernel decides it, so that a set is
    accepted here only where the numpy kernel, whose floats differ by round-off, accepts it
    too (or, where its own floats make N[:, S] exactly singular, its direct decoder).  The
    witness is returned for a doubtful set too (nan where not computed): one far above the
    limit sends the set to the direct decoder (:meth:`RealScreen.direct`): where the
    certificate was tried, the bound without the band term unless the certificate surely
    fails in numpy too (numpy's route may leave the term out)."""
    d, m = NT.shape[1], W.shape[1]
    thr, near = delta * (1 + 1e-6), delta * (1 - 1e-6)
    lb = _factor(S, NT, near, M, perm, tau, E, X)
    if not lb > 0 or near <= lb < thr or (lb < near and not wlim >= 0):
        return DOUBTFUL, lb, np.nan, np.nan
    _decoder(S, NT, W, M, perm, tau, Y, Z)
    for i in range(S.shape[0]):
        inS[S[i]] = True
    what, nrm, err, bare, band = DOUBTFUL, np.nan, np.nan, np.inf, True
    K = Bn.shape[1]
    if lb >= thr:
        what, nrm = BY_BOUND, _decoder_norm(NT, W, scale, inS, Z)
    else:
        finite = True
        for i in range(d):
            for u in range(m):
                finite = finite and np.isfinite(Z[i, u])
        if finite:
            band = not (d == S.shape[0] and lb >= free * (1 + 1e-6))
            r2, e2, aa = _witness_parts(NT, W, Bn, T, inS, Z, av)
            err = bracket(r2, np.sqrt(e2) + (tail * np.sqrt(aa) if band else 0.0), K * m)[1]
            if err <= wlim:
                what = BY_WITNESS
            elif not band:
                bare = err
            elif tail > 0 and d == S.shape[0] and NT.shape[0] - d <= K:
                bare = bracket(r2, np.sqrt(e2), K * m)[1]
    for i in range(S.shape[0]):
        inS[S[i]] = False
    if bare > wlim and bare < np.inf and not np.iscomplexobj(av):
        survivors_into(S, inS, F)  # the residual in compensated arithmetic
        bare = min(bare, _tight_witness(av, Bn, T, F, NT.shape[0] - S.shape[0], Xd, Yd))
    if bare < np.inf and not band:  # no band term to leave out
        if bare <= wlim:
            what = BY_WITNESS
        err = bare
    elif bare <= wlim / (WITNESS_SHARE * WITNESS_SHARE):  # else the direct decoder's anyway
        clears, fails = _clear_one(S, Bn, inS, F, H, tau2, X2, tail)
        if clears and bare <= wlim:
            what, err = BY_WITNESS, bare
        elif not fails:
            err = bare  # numpy's route may prove it: it decides (RealScreen.direct)
    return what, lb, nrm, np.nan if what == BY_BOUND else err


@njit
def settle_sets(Sets: Any, NT: Any, W: Any, scale: Any, delta: float, Bn: Any, T: Any,
                wlim: float, tail: float, free: float, what: Any, lb_out: Any, norm_out: Any,
                err_out: Any, inS: Any, M: Any, perm: Any, tau: Any, E: Any, X: Any, Y: Any,
                Z: Any, av: Any, F: Any, H: Any, tau2: Any, X2: Any, Xd: Any, Yd: Any) -> None:
    """:func:`_settle_one` on the rows of Sets (the second stage of the walk's doubtful
    sets, without the GIL in the thread that found them)."""
    for b in range(Sets.shape[0]):
        what[b], lb_out[b], norm_out[b], err_out[b] = _settle_one(
            Sets[b], NT, W, scale, inS, delta, Bn, T, wlim, tail, free, M, perm, tau, E, X, Y, Z,
            av, F, H, tau2, X2, Xd, Yd)


#: what :func:`direct_sets` makes of a set the second stage leaves doubtful
UNDECIDED, DIRECT_OK, DIRECT_FAIL = 0, 1, 2
#: the compiled direct decoder keeps a verdict only when its proof holds with this factor of
#: the decoding limit to spare (a residual bound at most DIRECT_SHARE of it, an error bound
#: above it by 1 / DIRECT_SHARE): numpy's decoder, whose floats differ by round-off, then
#: proves the same verdict without exact arithmetic
DIRECT_SHARE = 0.5


@njit
def _direct_one(S: Any, Bn: Any, T: Any, scale: Any, limit: float, inS: Any, F: Any
                ) -> tuple[int, float, float, float]:
    """(state, error, cond, norm) of one straggler set S by the direct decoder
    (:meth:`gctool.decode.Decoder.evaluate`, one set): the minimum-norm least squares of the
    row-normalised ``B_F`` through its SVD (LAPACK's, called from compiled code), the numerical
    rank by :func:`gctool.numerics.rank_cutoff`, the error ``||B_F^T a - t||^2``, the condition
    on that rank and the norm of B's decoder ``D a``.

    The verdict is kept (:data:`DIRECT_OK`, :data:`DIRECT_FAIL`) only where the decoder's own
    proofs (``Decoder._doubtful``) hold with :data:`DIRECT_SHARE` to spare: decodes when the
    residual plus its rigorous round-off bound ``residual_gamma(f) (|B_F^T| |a| + |t|)``, rounded
    upward, is at most ``DIRECT_SHARE * limit`` (a witness: the least-squares error is at most
    that); fails when the kept singular values are at least ``DECIDE_RTOL`` of the largest and
    the error less its perturbation bound exceeds ``limit / DIRECT_SHARE`` (or the rank is 0
    and the error exceeds it).  A singular value within ``RANK_BAND`` of the cut-off (counted
    or not, the verdict may hinge on it: the decoder's hinge proves the error without it
    below the limit, f56971d, and the error with it is no proof of a fail, DECIDE_RTOL), a
    non-finite value, or no proof: :data:`UNDECIDED` (numpy's decoder decides, with its hinge,
    rank certificate and exact arithmetic)."""
    n, K = Bn.shape
    m = T.shape[0]
    s = S.shape[0]
    f = n - s
    if f == 0:
        return UNDECIDED, np.nan, np.nan, np.nan
    survivors_into(S, inS, F)
    BF = np.empty((f, K), dtype=Bn.dtype)
    for i in range(f):
        for k in range(K):
            v = Bn[F[i], k]
            if not np.isfinite(v):
                return UNDECIDED, np.nan, np.nan, np.nan
            BF[i, k] = v
    U, sv, Vh = np.linalg.svd(BF, full_matrices=False)
    p = sv.shape[0]
    smax = sv[0]
    cut = smax * max(f, K) * EPS
    rank, r_lo = 0, 0
    for i in range(p):
        if sv[i] > cut:
            rank += 1
        if sv[i] > cut * RANK_BAND:
            r_lo += 1
    if r_lo != rank:  # a singular value in the rank band: numpy's decoder (its hinge) decides
        return UNDECIDED, np.nan, np.nan, np.nan
    coeff = np.empty((p, m), dtype=BF.dtype)  # conj(Vh) t
    tt = 0.0
    for u in range(m):
        for k in range(K):
            tt += abs(T[u, k]) ** 2
    for i in range(p):
        for u in range(m):
            c = 0.0 * BF[0, 0]
            for k in range(K):
                c += np.conj(Vh[i, k]) * T[u, k]
            coeff[i, u] = c
    a = np.zeros((f, m), dtype=BF.dtype)
    av = np.zeros((n, m), dtype=BF.dtype)  # a on the survivors, 0 on the stragglers
    for i in range(f):
        for u in range(m):
            v = 0.0 * BF[0, 0]
            for j in range(rank):
                v += np.conj(U[i, j]) * (coeff[j, u] / sv[j])
            a[i, u] = av[F[i], u] = v
    for i in range(s):
        inS[S[i]] = True
    err, e2 = _residual(av, Bn, T, inS,
                       res_gamma(f, np.iscomplexobj(av) or np.iscomplexobj(Bn)))
    for i in range(s):
        inS[S[i]] = False
    bound = bracket(err, np.sqrt(e2), K * m)[1]  # rounded upward
    sr = sv[rank - 1] if rank > 0 else 0.0
    cond = smax / sr if rank > 0 and sr > 0 else np.inf
    top = 0.0  # the norm of D a, scaled (no overflow or underflow in the squares)
    for i in range(f):
        for u in range(m):
            top = max(top, abs(a[i, u] * scale[F[i]]))
    nrm = 0.0
    if top > 0 and np.isfinite(top):
        for i in range(f):
            for u in range(m):
                nrm += abs(a[i, u] * scale[F[i]] / top) ** 2
        nrm = top * np.sqrt(nrm)
    else:
        nrm = top if top == 0 else np.nan
    if not (np.isfinite(err) and np.isfinite(bound) and np.isfinite(nrm)):
        return UNDECIDED, np.nan, np.nan, np.nan
    if bound <= DIRECT_SHARE * limit:
        return DIRECT_OK, err, cond, nrm
    fails = rank == 0 and err > limit / DIRECT_SHARE
    if rank > 0 and sr >= DECIDE_RTOL * smax:
        slack = 10 * (f + K) * EPS * (smax / sr) * np.sqrt(tt)
        fails = np.sqrt(err) - slack > np.sqrt(limit / DIRECT_SHARE)
    return (DIRECT_FAIL if fails else UNDECIDED), err, cond, nrm


@njit
def direct_sets(Sets: Any, Bn: Any, T: Any, scale: Any, limit: float, state: Any, err: Any,
                cond: Any, norm: Any, inS: Any, F: Any) -> None:
    """:func:`_direct_one` on the rows of Sets (the third stage of the walk's doubtful sets,
    without the GIL in the thread that found them)."""
    for b in range(Sets.shape[0]):
        state[b], err[b], cond[b], norm[b] = _direct_one(Sets[b], Bn, T, scale, limit, inS, F)


def _walk_work(NT: np.ndarray, W: np.ndarray, s: int) -> tuple[np.ndarray, ...]:
    """Scratch arrays of :func:`screen_range` (allocated here: numpy allocations inside a
    kernel cost seconds of compilation; private to the walking thread and kept by it for its
    next walk, :func:`.private.scratch`): Zs, C, Zl, P, vol, fro, c, g, u, bw, Ct, zT, inS,
    weak_lb, weak_at, fb, av (rowsq, Bn, T, wlim from the screen)."""
    n, d = NT.shape
    m = W.shape[1]
    dt, zt = NT.dtype, np.result_type(NT, W)
    return private.scratch(((d, m), zt), ((s, d, d), dt), ((s, d, m), zt),
                           ((s, d, max(s - 1, 1)), dt), (s, np.float64), (s, np.float64),
                           (d, dt), (d, dt), (d, dt), (m, zt), ((d - s + 1, d), dt),
                           ((m, d), zt), (n, np.bool_), (WEAKEST, np.float64),
                           (WEAKEST, np.int64), (s + 1, np.float64), (W.shape, W.dtype))


#: the time of :func:`screen_range` per straggler set, in ns, with the doubtful sets the numpy
#: kernel then decides: a fixed part (24 read real cyclic codes 1.2-2.1x low: n=48 s=6 36.5
#: ns per set where it said 29, n=64 s=7 38-69 ns by the seed, 31 said; n=64 s=8 52 ns) ...
SCREEN_SET_NS = 32
#: ... plus this much per s x d x (d - s + 1) (the new row against the d - s + 1 columns that
#: complement the prefix, and the prefix's levels kept from set to set).  Fitted to the CPU time
#: per set of the walk on real cyclic n=36-64 s=4-8 (20-36 ns), random dense real d=5-24
#: (28-557 ns), rs real n=40 d=20 (280 ns), one core of the 2-core development machine:
#: measured / estimated 0.7-1.4 (the model before, 30 ns + 0.7 ns per s x d, was twice the time
#: of cyclic codes and a fifth of random dense d=24's)
SCREEN_ENTRY_NS = 0.15
#: over C the fixed part is SCREEN_COMPLEX_SET_NS and each multiply-add costs SCREEN_COMPLEX
#: times a real one's (a complex multiply-add is four real products, which the walk's loops
#: pipeline).  Fitted to the walk's CPU time per set without the decoder norms it computes in
#: full (their bound made to cut every set; medians of 3 fresh processes, each the best of 3
#: runs over 12 spread chunks of 25,000 sets, load 1.8-5) on 17 complex codes: random dense
#: d=6-30 s=4-7, rs n=30-48 s=4-6 (d=6-40), cyclic-MDS n=36 s=5, nested n=40 (45-1,830 ns):
#: measured / estimated 0.75-1.32, where four times the real rate read 0.42-0.62 on every code
#: of d >= 14 (rs n=40 s=5: 513 ns per set for 992) and 1.2-1.5 at d = 6.  The real walk
#: read 0.78-1.15 on the same chunks (6 codes).  Cyclic-MDS complex n=48 s=6 walked whole reads
#: 2.7: most of its sets get the witness test (verify takes its rotation orbits)
SCREEN_COMPLEX_SET_NS = 52
SCREEN_COMPLEX = 2.0


def screen_cost(s: int, d: int, complex_: bool = False) -> float:
    """Estimated time of the compiled screen per set of size s (d = dim null(B)), in ns: a
    fixed part and a part per multiply-add, ``s d (d - s + 1)``, each with its own rate over
    C (:data:`SCREEN_COMPLEX_SET_NS`, :data:`SCREEN_COMPLEX`)."""
    entries = s * d * max(1, d - s + 1)
    if complex_:
        return SCREEN_COMPLEX_SET_NS + SCREEN_ENTRY_NS * SCREEN_COMPLEX * entries
    return SCREEN_SET_NS + SCREEN_ENTRY_NS * entries


#: a set whose decoder-norm bound ``||D W|| + ||D N^T||_2 ||z||`` does not cut it (below the
#: largest norm the walk has found) gets its decoder and its norm computed in full
#: (:func:`_set_decoder`, :func:`_decoder_norm`): a fixed part per set ...
NORM_SET_NS = 100
#: ... plus this much per multiply-add of them, ``d (d - s + 1) + n d m`` (complex:
#: NORM_COMPLEX times as much) ...
NORM_ENTRY_NS = 0.44
NORM_COMPLEX = 2.0
#: ... plus, over C, this much per entry of ``D (W + N^T z)`` (``n m``: its modulus squared,
#: ``abs(v) ** 2``, a hypot per entry).  Fitted by benchmarks/fit_norms.py: the CPU time of
#: the walk (:func:`screen_range`, best of 5 on 40,000 sets, one fresh process per code, the
#: 2-core development machine at load 4-5) with every accepted set's norm computed in full,
#: less the same walk with every set cut and less its prefixes' norms, per norm: random dense
#: real and complex n=30-72 d=6-48 s=3-6, rs real and complex n=40 s=5, frc n=48 s=5, cyclic
#: n=48 s=6 (218-2,840 ns real, 840-6,270 complex): measured / estimated 0.89-1.13, where
#: 0.5 ns per multiply-add alone (4x over C) read 1.7-2.3 at d = 6 and 0.57-0.83 at complex
#: d >= 24
NORM_ROW_COMPLEX_NS = 22
#: the sets :func:`norm_share` draws; the spread of their norms (largest / smallest) up to
#: which they are taken to hold the walk's largest norm too (within this margin); and the size
#: beyond which it bounds ``||D N^T||_2`` by the largest row scale instead of an SVD of
#: ``D N^T`` (n x d)
SHARE_SAMPLE = 256
SHARE_MARGIN = 1.15
#: the share of the sets whose bound is above every sampled norm that :func:`norm_share` counts
#: as computed in full, on codes whose sampled norms spread wider than SHARE_MARGIN and whose
#: local search finds no norm SHARE_TAIL times theirs: the walk, carrying its largest norm
#: over the run, computed 0.0001-0.53 of its sets on such codes with its first bound alone
#: (its own count, :meth:`RealScreen.walked_share`, whole enumerations at one and two jobs:
#: rs real n=30 s=5 0.52-0.53, n=36 s=5 0.41-0.47, n=36 s=6 0.04; random dense real d=10-16
#: 0.0001-0.02), which a sample cannot tell apart; 0.3 put the estimate of both ends within 2x
#: of their time (a norm in full costs 1.5-3 times the screen's set).  With the prefix's bound
#: too (rs n=30-48 0.07-0.11, random dense 0.0001-0.01) it reads 1.1-1.2x of their time
SHARE_UNSEEN = 0.3
#: a local search (:func:`_climb`) that finds a norm this many times the sample's largest says
#: the norms have a tail the walk's running maximum reaches early: 180-1,600 on rs real n=28,
#: 40, 44 s=5 (the walk computes 0.01-0.1 % of the sets), 1.6-2.9 where it computes 0.01-53 %
SHARE_TAIL = 10.0
#: that search starts from the SHARE_STARTS largest sampled norms in turn (rs real n=40 s=5:
#: the first two end at 3-5 times the sample's largest, the third at the run's own), up to
#: SHARE_CLIMB moves each (a move evaluates up to SHARE_SAMPLE sets)
SHARE_STARTS = 4
SHARE_CLIMB = 6
SHARE_SVD_MAX = 20_000_000


def norm_cost(n: int, s: int, d: int, m: int, complex_: bool = False) -> float:
    """Estimated time of one set's decoder and its norm computed in full by the walk, in ns
    (:data:`NORM_SET_NS`, :data:`NORM_ENTRY_NS`, :data:`NORM_COMPLEX`,
    :data:`NORM_ROW_COMPLEX_NS`)."""
    entries = d * max(1, d - s + 1) + n * d * m
    if complex_:
        return NORM_SET_NS + NORM_ENTRY_NS * NORM_COMPLEX * entries + NORM_ROW_COMPLEX_NS * n * m
    return NORM_SET_NS + NORM_ENTRY_NS * entries


#: a square s x s matrix A with ``|det A| >= SOLVE_COND * ||A||_F^s`` has a condition number
#: at most 1 / SOLVE_COND (``sigma_min >= |det A| / sigma_max^(s-1)``, ``sigma_max <=
#: ||A||_F``), far below 1 / (pinv's cut-off, about 1e-15): its pseudo-inverse is its
#: inverse, solved by LU
SOLVE_COND = 1e-8


def _min_norm_solve(A: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """``pinv(A) @ Y`` for a stack of s x d matrices A (the minimum-norm solutions): LU solves
    (``np.linalg.solve``) of A, or for s < d of its Gram matrix ``G = A A^H`` (``Z = A^H
    G^{-1} Y``), where that square matrix is far from singular (:data:`SOLVE_COND`: cond(G) at
    most 1e8, so the solution is pinv's to about 1e-8 relative, enough for an estimate),
    ``np.linalg.pinv`` for the others: in a tenth of the time of pinv's SVDs (1.3 ms of the 1.7
    of :func:`norm_share` for 256 sets of s = d = 6, in the caller's thread before any walk)."""
    Z = np.empty((A.shape[0], A.shape[2], Y.shape[2]), dtype=np.result_type(A, Y))
    far = np.zeros(A.shape[0], dtype=bool)
    square = A.shape[1] == A.shape[2]
    if A.shape[1] <= A.shape[2] and A.shape[0]:
        AH = np.conj(np.swapaxes(A, 1, 2))
        M = A if square else A @ AH
        with np.errstate(all="ignore"):
            det = np.abs(np.linalg.det(M))
            fro = np.sqrt(np.sum(np.abs(M) ** 2, axis=(1, 2)))
            far = np.isfinite(det) & np.isfinite(fro) & (det > 0) \
                & (det >= SOLVE_COND * fro ** M.shape[1])
        if far.any():
            X = np.linalg.solve(M[far], Y[far])
            Z[far] = X if square else AH[far] @ X
    if not far.all():
        Z[~far] = np.linalg.pinv(A[~far]) @ Y[~far]
    return Z


def _sample_norms(NT: np.ndarray, W: np.ndarray, scale: np.ndarray, S: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray]:
    """(decoder norm, ``||z||``) of the minimum-norm decoders of the sets S (rows)."""
    Z = -_min_norm_solve(NT[S], W[S])  # (sets, d, m): the minimum-norm decoders' z
    return _norms_of(NT, W, scale, Z), np.sqrt(np.sum(np.abs(Z) ** 2, axis=(1, 2)))


def _norms_of(NT: np.ndarray, W: np.ndarray, scale: np.ndarray, Z: np.ndarray) -> np.ndarray:
    """``||D (W + N^T z)||`` over every row, for each z of the stack Z (sets, d, m)."""
    a = (W[None] + NT[None] @ Z) * scale[None, :, None]
    return np.sqrt(np.sum(np.abs(a) ** 2, axis=(1, 2)))


def _bounds(NT: np.ndarray, W: np.ndarray, scale: np.ndarray, S: np.ndarray, rc0: float,
            dn: float) -> tuple[np.ndarray, np.ndarray]:
    """(decoder norm, the walk's bound on it) of the sets S (rows, increasing): the smaller of
    ``rc0 + dn ||z||`` (:func:`_norm_cut`) and ``||D (W + N^T z_p)|| + dn ||z - z_p||`` with
    z_p the decoder of the set's first s - 1 stragglers (:func:`_prefix_cut`)."""
    Z = -_min_norm_solve(NT[S], W[S])
    norm = _norms_of(NT, W, scale, Z)
    bound = rc0 + dn * np.sqrt(np.sum(np.abs(Z) ** 2, axis=(1, 2)))
    if S.shape[1] > 1:
        P = S[:, :-1]
        Zp = -_min_norm_solve(NT[P], W[P])
        rp = _norms_of(NT, W, scale, Zp)
        bound = np.minimum(bound, rp + dn * np.sqrt(np.sum(np.abs(Z - Zp) ** 2, axis=(1, 2))))
    return norm, bound


def _swap_norms(NT: np.ndarray, W: np.ndarray, scale: np.ndarray, S: np.ndarray,
                pairs: np.ndarray, cand: np.ndarray) -> np.ndarray:
    """The decoder norms of the sets ``cand`` (sorted rows), each S with the straggler at
    position ``pairs[:, 0]`` swapped for worker ``pairs[:, 1]``: ``_sample_norms(...)[0]`` of
    them, for :func:`_climb`.  Where ``A = N^T[S]`` is square, by rank-one updates of its one
    inverse instead of a solve per set (the climbs of cyclic n=48 s=6 decided 1,764 sets one
    solve each: two thirds of the estimate's time in the caller's thread): swapping row i of A
    for ``v = N^T[j]`` gives ``A'^{-1} = A^{-1} - A^{-1} e_i (G[j] - e_i) / g`` with ``G =
    N^T A^{-1}`` and ``g = G[j, i]`` (Sherman-Morrison), so the new decoder is ``W + N^T z' =
    a - G[:, i] a[j] / g``, ``a = W + N^T z`` S's own.  Only where both A and A' have
    ``||.||_F ||.^{-1}||_F`` (at least their condition number) at most 1 / :data:`SOLVE_COND`,
    the bound under which :func:`_min_norm_solve` solves a system by LU as pinv's: the
    updated norm is then pinv's to about 1e-8 relative, as an LU solve's is (the share
    compares norms that differ by factors); every other set takes :func:`_sample_norms`."""
    s, d = S.size, NT.shape[1]
    got = np.full(cand.shape[0], np.nan)
    slow = np.ones(cand.shape[0], dtype=bool)
    A = NT[S]
    if s == d:
        with np.errstate(all="ignore"):
            try:
                Ainv = np.linalg.inv(A)  # (d, s)
            except np.linalg.LinAlgError:  # exactly singular
                Ainv = np.full((d, s), np.nan)
            rows = np.sum(np.abs(NT) ** 2, axis=1)
            fro = float(np.sqrt(np.sum(rows[S])))
            cols = np.sqrt(np.sum(np.abs(Ainv) ** 2, axis=0))  # ||A^{-1} e_i||
            inv_fro = float(np.sqrt(np.sum(cols ** 2)))
            if np.isfinite(fro * inv_fro) and fro * inv_fro * SOLVE_COND <= 1.0:
                G = NT @ Ainv  # (n, s): G[j, i] = N^T[j] A^{-1} e_i
                a = W - NT @ (Ainv @ W[S])  # (n, m): S's decoder, unscaled
                i, j = pairs[:, 0], pairs[:, 1]
                g = G[j, i]
                Gj = G[j]
                Gj[np.arange(i.size), i] -= 1.0  # u^T A^{-1} = G[j] - e_i
                r = np.sqrt(np.sum(np.abs(Gj) ** 2, axis=1))
                bound = np.sqrt(fro ** 2 - rows[S[i]] + rows[j]) * (
                    inv_fro + cols[i] * r / np.abs(g))  # ||A'||_F ||A'^{-1}||_F at most
                far = np.isfinite(bound) & (bound * SOLVE_COND <= 1.0)
                if far.any():
                    i, j, g = i[far], j[far], g[far]
                    new = a[None] - G[:, i].T[:, :, None] * (a[j] / g[:, None])[:, None, :]
                    got[far] = np.sqrt(np.sum(np.abs(new * scale[None, :, None]) ** 2,
                                              axis=(1, 2)))
                    slow = ~far
    if slow.any():
        got[slow] = _sample_norms(NT, W, scale, cand[slow])[0]
    return got


def _climb(NT: np.ndarray, W: np.ndarray, scale: np.ndarray, S: np.ndarray, norm: float,
           goal: float) -> float:
    """The largest decoder norm a local search from the set S (norm ``norm``) finds: at most
    :data:`SHARE_CLIMB` moves to the best of up to :data:`SHARE_SAMPLE` sets that swap one
    straggler (a fixed seed), until none is larger or one passes ``goal``."""
    n, s = NT.shape[0], S.size
    rng = np.random.default_rng(1)
    for _ in range(SHARE_CLIMB):
        if norm > goal:
            break
        out = complement(n, S)
        pairs = np.stack(np.meshgrid(np.arange(s), out, indexing="ij"), -1).reshape(-1, 2)
        if pairs.shape[0] > SHARE_SAMPLE:
            pairs = pairs[rng.choice(pairs.shape[0], SHARE_SAMPLE, replace=False)]
        cand = np.repeat(S[None], pairs.shape[0], axis=0)
        cand[np.arange(pairs.shape[0]), pairs[:, 0]] = pairs[:, 1]
        cand.sort(axis=1)
        got = _swap_norms(NT, W, scale, S, pairs, cand)
        got[~np.isfinite(got)] = -np.inf
        i = int(np.argmax(got))
        if not got[i] > norm:
            break
        S, norm = cand[i], float(got[i])
    return norm


def norm_share(NT: np.ndarray, W: np.ndarray, scale: np.ndarray, s: int) -> float:
    """The share of a walk's sets whose decoder norm it computes in full (heuristic), from
    :data:`SHARE_SAMPLE` random s-sets (a fixed seed): their norms and their bounds
    (:func:`_norm_cut`).  A property of the code, not of its scheme's name.

    The walk computes a set's norm in full when its bound is above the largest norm found
    before it in the run (:data:`gctool.audit.kernels.ranges.CARRY`; lexicographic order, in
    each job's share of it).  So:

    * the bound of a set is the smaller of the walk's two (:func:`_bounds`);
    * when the sampled norms lie within :data:`SHARE_MARGIN` of each other (frc: 1.01-1.08;
      every other code measured spreads 1.5 or more), the walk's largest norm is taken to be
      near theirs: a set whose bound is SHARE_MARGIN above them is computed (frc n=24 s=5:
      0.13, the walk 0.013; n=36 0.05 for 0.054);
    * otherwise a local search from the largest sampled norms (:func:`_climb`, 2-20 ms) looks
      for the run's largest: when it finds one :data:`SHARE_TAIL` times the sample's or more,
      the norms have a tail that the walk's running maximum reaches early (rs real n=28, 40,
      44 s=5: the search finds 180-1,600 times the sample's largest, 4.49 on n=40, the run's
      own), and only sets whose bound is above the norm found are counted (the walk: 0.01-0.1
      % of its sets);
    * else a set whose bound is above every sampled norm is counted at :data:`SHARE_UNSEEN`:
      the largest norms are near the typical ones, and the walk meets the sets above its
      running maximum all along (rs real n=30, 36, 48 s=5: 0.07-0.11 of the sets, predicted
      0.13-0.22; random dense 0.0001-0.01, predicted 0.001-0.05).

    ``||D N^T||_2`` is the largest row scale (an upper bound: N has orthonormal rows) beyond
    :data:`SHARE_SVD_MAX` multiply-adds of its SVD."""
    n, d = NT.shape
    if s < 1 or d < s or n < s:
        return 0.0
    with np.errstate(all="ignore"):
        DN = NT * scale[:, None]
        rc0 = float(np.sqrt(np.sum(np.abs(W * scale[:, None]) ** 2)))
        if n * d * d <= SHARE_SVD_MAX and np.isfinite(DN).all():
            dn = float(np.linalg.svd(DN, compute_uv=False)[0]) if DN.size else 0.0
        else:
            dn = float(np.max(scale))
        if not (np.isfinite(rc0) and np.isfinite(dn)):
            return 1.0  # the walk computes every norm in full (RealScreen: rc0 is nan)
        S = np.sort(sample_sets(n, s, SHARE_SAMPLE, np.random.default_rng(0)), axis=1)
        norm, bound = _bounds(NT, W, scale, S, rc0, dn)
        if not np.all(np.isfinite(norm)):
            return 1.0
        top = float(norm.max())
        if top <= SHARE_MARGIN * float(norm.min()):
            return float(np.mean(bound >= SHARE_MARGIN * top))
        high = top
        for i in np.argsort(-norm, kind="stable")[:SHARE_STARTS].tolist():
            high = max(high, _climb(NT, W, scale, S[i], float(norm[i]), SHARE_TAIL * top))
            if high >= SHARE_TAIL * top:
                break
        if high >= SHARE_TAIL * top:
            return float(np.mean(bound >= high))
        return SHARE_UNSEEN * float(np.mean(bound >= top))


#: the time of the screen on given sets (:func:`screen_sets`: the orbit representatives of a
#: rotation, which no walk reaches) per set, in ns: a fixed part ...
GIVEN_SET_NS = 500
#: ... plus this much per multiply-add of a set's factorisation from scratch and its decoder's
#: norm, ``s^2 d + n d m`` (complex: GIVEN_COMPLEX times as much).  A walk keeps its prefix's
#: factors from set to set and cuts most norms by a bound; on given sets every set is factored
#: whole and its norm computed in full.  Fitted to the CPU time per set (best of 3) of cyclic-MDS
#: real n=45-53 s=4-6 (1.1-1.7 us) and complex n=40-60 s=4-7 (1.8-4.4 us), random dense real
#: n=30-60 d=3-30 (0.5-4.7 us) and complex d=10-20 (3.9-7.9 us), one core of the 2-core
#: development machine under load: measured / estimated 0.67-1.35, where the walk's cost
#: (:func:`screen_cost`) said 0.02-0.05 of it on cyclic-MDS.  Re-measured (best of 3 on 8,192
#: random sets, thread CPU time, loaded) after the kernels' later changes: 1.8 read 0.51-0.84
#: of cyclic-MDS real n=47, 53 s=6 and complex n=40-60 s=6-7, random dense real d=16-20 and
#: complex d=6-20, is-cr n=48 s=5; 1.2 reads 0.64-1.2 of them
GIVEN_ENTRY_NS = 1.2
GIVEN_COMPLEX = 3


def given_cost(n: int, s: int, d: int, m: int, complex_: bool = False) -> float:
    """Estimated time of the screen on one given set of size s (n workers, d = dim null(B),
    m targets), in ns (:data:`GIVEN_SET_NS`, :data:`GIVEN_ENTRY_NS`)."""
    return GIVEN_SET_NS + GIVEN_ENTRY_NS * (s * s * d + n * d * m) * (
        GIVEN_COMPLEX if complex_ else 1)


#: the time of the second stage (:func:`settle_sets`) per set, in ns: a fixed part ...
SETTLE_SET_NS = 500
#: ... plus this much per multiply-add of its factorisation and witness test
#: (``s d^2 + n d m + 2 n K m``: the decoder, its residual and the residual's round-off bound);
#: complex codes cost SETTLE_COMPLEX times as much (the witness's moduli).  Fitted to the CPU
#: time per set of sets it leaves doubtful (the costliest: the whole witness test) on real
#: cyclic n=30-64 s=3-7 and is-cr n=48 s=5 (1.1-3.4 us) and complex cyclic n=48 s=6 (25 us),
#: one core of the 2-core development machine
SETTLE_ENTRY_NS = 0.33
SETTLE_COMPLEX = 11


def settle_cost(n: int, K: int, m: int, s: int, d: int, complex_: bool = False) -> float:
    """Estimated time of the second stage per set of size s (n workers, K columns of B, m
    targets, d = dim null(B)), in ns."""
    work = s * d * d + n * d * m + 2 * n * K * m
    return SETTLE_SET_NS + SETTLE_ENTRY_NS * work * (SETTLE_COMPLEX if complex_ else 1)


#: the second stage's compensated residual (:func:`_tight_witness`) and QR certificate
#: (:func:`_clear_one`) of a set the plain witness test fails, in ns: a fixed part, this much
#: per term of the residual's Dot2 sums (f K m) and, with the certificate, per multiply-add of
#: the QR of the K x f matrix B_F^T and the inverse of its R (``K f^2 + f^3 / 6``).  Measured
#: (thread CPU time, the sets rs real n=36 s=6 sends there, the 2-core development machine
#: under load): 4.5 us for the residual (1,080 terms), 18 us for the certificate (f=30, K=36)
CERT_SET_NS = 500
CERT_TERM_NS = 4.0
CERT_ENTRY_NS = 0.48


def cert_cost(n: int, K: int, m: int, s: int, certificate: bool) -> float:
    """Estimated time of the compensated residual of one set of size s (n workers, K columns
    of B, m targets) and, with ``certificate``, its QR certificate, in ns."""
    f = n - s
    work = CERT_TERM_NS * f * K * m
    if certificate:
        work += CERT_ENTRY_NS * (K * f * f + f**3 / 6)
    return CERT_SET_NS + work


def warm_unrank() -> None:
    """Compile (or load) :func:`gctool.compiled.walk.unrank_into` for the types the walks'
    summaries give it (:mod:`.ranges`), before the threads need it."""
    unrank_into(np.zeros((2, 2), np.int64), 1, np.zeros(1, np.int64), np.zeros((1, 1), np.int64))


class RealScreen:
    """The compiled screen of one reduction (contiguous copies of N^T, W, the row scale).

    With the row-normalised ``Bn``, the targets ``T``, the decoding limit ``tol * k`` and the
    witness's band term ``tail`` (:func:`gctool.numerics.band_tail`; without it no witness
    proves anything), the walk also runs the numpy kernel's witness test on the sets below
    delta (:func:`screen_range`), so that only the rare sets neither test settles are left to
    the numpy kernel."""

    def __init__(self, NT: np.ndarray, W: np.ndarray, scale: np.ndarray, delta: float,
                 Bn: np.ndarray | None = None, T: np.ndarray | None = None,
                 limit: float = -1.0, tail: float = np.inf, free: float = np.inf) -> None:
        witness = Bn is not None and T is not None and limit >= 0 and np.isfinite(limit)
        dt = np.result_type(NT, W, np.float64, *((Bn, T) if witness else ()))
        self.NT = np.ascontiguousarray(NT, dtype=dt)
        self.W = np.ascontiguousarray(W, dtype=dt)
        self.scale = np.ascontiguousarray(scale, dtype=np.float64)
        self.delta = float(delta)
        self.n = self.NT.shape[0]
        #: (sets walked, decoder norms computed in full) by :meth:`walk`, per thread: what
        #: :func:`norm_share` predicts, measured (:meth:`walked_share`)
        self.counted: dict[int, tuple[int, int]] = {}
        #: by set size, the largest decoder norms of the ranges summarised so far
        #: (:meth:`found`), as (end of the range, norm) ascending in both: each norm larger
        #: than every one that ends no later (the others are of no use to :meth:`floor`)
        self.floors: dict[int, list[tuple[int, float]]] = {}
        self.rowsq = np.ascontiguousarray(np.sum(np.abs(self.NT) ** 2, axis=1))
        if witness:
            assert Bn is not None and T is not None
            self.Bn = np.ascontiguousarray(Bn, dtype=dt)
            self.T = np.ascontiguousarray(T, dtype=dt)
            self.wlim = float(limit) * WITNESS_SHARE
            self.limit = float(limit)
            self.tail = float(tail)  # the witness's band term (numerics.band_tail)
            # ... left out of sets of s = d from this bound (FloatNullKernel.band_free)
            self.free = float(free) if np.isfinite(free) else np.inf
        else:
            self.Bn = np.zeros((self.n, 1), dt)
            self.T = np.zeros((self.W.shape[1], 1), dt)
            self.wlim = self.limit = -1.0
            self.tail, self.free = 0.0, np.inf
        # the decoder norm ||D (W + N^T z)|| <= ||D W|| + ||D N^T||_2 ||z|| (rc0, dn; the
        # computed spectral norm is raised by far more than its round-off); nan when either
        # overflows: then every norm is computed in full
        with np.errstate(all="ignore"):
            DN = self.NT * self.scale[:, None]
            self.rc0 = float(np.sqrt(np.sum(np.abs(self.W * self.scale[:, None]) ** 2)))
            fin = bool(np.isfinite(DN).all())
            sv = np.linalg.svd(DN, compute_uv=False) if fin and DN.size else np.zeros(1)
            self.dn = float(sv[0]) * (1 + 1e-8)
        if not (np.isfinite(self.rc0) and np.isfinite(self.dn) and fin):
            self.rc0 = np.nan

    def floor(self, s: int, start: int) -> float:
        """The largest decoder norm of sets of size s found in ranges that end at or before
        rank ``start`` (:meth:`found`), -inf for none: a floor of the walk of a range from
        ``start`` (:func:`screen_range`), since a run that merges that range has merged every
        set before it."""
        with _FLOORS:
            kept = self.floors.get(s, [])
            i = bisect.bisect_right(kept, (start, np.inf))
            return kept[i - 1][1] if i else -np.inf

    def found(self, s: int, stop: int, norm: float) -> None:
        """Record the largest decoder norm of a range of sets of size s that ends at rank
        ``stop`` (excluded; finite norms only)."""
        if not np.isfinite(norm):
            return
        with _FLOORS:
            kept = self.floors.setdefault(s, [])
            i = bisect.bisect_right(kept, (stop, np.inf))
            if i and kept[i - 1][1] >= norm:
                return  # a range that ends no later has a norm as large
            while i and kept[i - 1][0] == stop:
                i -= 1  # as early, smaller
            j = i
            while j < len(kept) and kept[j][1] <= norm:
                j += 1  # later, no larger
            kept[i:j] = [(stop, norm)]

    def walked_share(self) -> float:
        """The share of the sets :meth:`walk` walked whose decoder norm it computed in full
        (0 before any walk)."""
        walked = sum(w for w, _ in self.counted.values())
        return sum(f for _, f in self.counted.values()) / walked if walked else 0.0

    def warm(self, s: int, given: bool = False) -> None:
        """Compile (or load from the cache) for this dtype the entry points a run calls,
        before its threads need them: the walk of rank ranges (:meth:`walk`), its second
        stage (:meth:`settle`) and the unranking of its summaries; or, ``given``, those of
        given sets (:meth:`sets`, :meth:`settle`: a run of one set per rotation orbit never
        walks; the walk after them loads in 32-34 ms of CPU, is-cr n=48 s=5).  Each compiles
        on its first use otherwise, as :meth:`direct` does either way (71-83 ms after the
        others, paid only by a run that hands it a set)."""
        key = ("real-given" if given else "real", self.NT.dtype.str, self.W.dtype.str)
        if key in WARM:
            return
        WARM.add(key)
        S = np.arange(s, dtype=np.int64)[None]
        with compile_notice("audit"):
            if given:
                self.sets(S)
            else:
                self.walk(S[0], 1, np.zeros(1, np.int64))
                warm_unrank()
            self.settle(S)

    def sets(self, S: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(lower bound, decoder norm) of the given sets (:func:`screen_sets`)."""
        b, s = S.shape
        lb, norm = np.empty(b), np.empty(b)
        key = ("real-sets", self.NT.dtype.str, self.W.dtype.str)
        with compile_notice("audit") if key not in WARM else nullcontext():
            WARM.add(key)
            screen_sets(np.ascontiguousarray(S, dtype=np.int64), self.n, self.NT, self.W,
                        self.scale, self.delta, lb, norm, *_work(self.NT, self.W, s))
        return lb, norm

    def settle(self, S: np.ndarray) -> tuple[np.ndarray, ...]:
        """(what, lower bound, decoder norm, error) of the given sets by the second stage
        (:func:`settle_sets`: :data:`DOUBTFUL`, :data:`BY_BOUND` or :data:`BY_WITNESS`; the
        norm is nan unless by the bound, the error is the witness's bound where it was
        computed, accepted or not, else nan).  Compiled on its first use; its scratch is
        private to the calling thread."""
        b, s = S.shape
        what, lb, norm, err = np.empty(b, np.int64), np.empty(b), np.empty(b), np.empty(b)
        if b == 0:
            return what, lb, norm, err
        n, d = self.NT.shape
        m, dt = self.W.shape[1], self.NT.dtype
        K, f = self.Bn.shape[1], max(n - s, 1)  # the QR certificate's B_F^T (K x f, f <= K)
        qr = (f, K) if f <= K else (1, 1)
        work = private.scratch((n, np.bool_), ((s, s) if d == s else (d, s), dt), (s, np.int64),
                               (s, dt), ((s, s), dt), ((s, s), dt), ((s, m), dt), ((d, m), dt),
                               (self.W.shape, dt), (n, np.int64), (qr, dt), (qr[0], dt),
                               ((qr[0], qr[0]), dt), (n + 1, np.float64), (n + 1, np.float64))
        key = ("real-settle", self.NT.dtype.str, self.W.dtype.str)
        with compile_notice("audit") if key not in WARM else nullcontext():
            WARM.add(key)
            settle_sets(np.ascontiguousarray(S, dtype=np.int64), self.NT, self.W, self.scale,
                         self.delta, self.Bn, self.T, self.wlim, self.tail, self.free, what, lb,
                         norm, err, *work)
        return what, lb, norm, err

    def direct(self, S: np.ndarray, lb: np.ndarray, witness: np.ndarray
               ) -> tuple[np.ndarray, ...]:
        """(state, error, cond, norm) of sets the second stage left doubtful (its ``lb`` and
        ``witness``, :meth:`settle`) by the compiled direct decoder (:func:`direct_sets`:
        :data:`UNDECIDED`, :data:`DIRECT_OK` or :data:`DIRECT_FAIL`), on those the numpy
        kernel would decide directly too: singular, or below delta (1 - 1e-6) with no finite
        witness or one above ``limit / WITNESS_SHARE`` (numpy's own bound and witness then
        fail too); the others, within the second stage's margins (of delta, of the limit, and
        of ``free`` where the witness's band term starts), are :data:`UNDECIDED`, as is every
        set without the witness test's data (no limit).  Compiled on its first use; its
        scratch is private to the calling thread."""
        b = S.shape[0]
        state = np.zeros(b, np.int64)
        err, cond, norm = np.full(b, np.nan), np.full(b, np.nan), np.full(b, np.nan)
        if b == 0 or not self.limit >= 0:
            return state, err, cond, norm
        with np.errstate(invalid="ignore"):
            # numpy's bound may fall on the other side of free, and its witness with it
            edge = (S.shape[1] == self.NT.shape[1]) & (lb >= self.free * (1 - 1e-6)) \
                & (lb < self.free * (1 + 1e-6))
            rows = np.flatnonzero((lb == 0) | ((lb < self.delta * (1 - 1e-6)) & ~edge
                                               & ~(witness <= self.limit / WITNESS_SHARE)))
        if rows.size == 0:
            return state, err, cond, norm
        inS, F = private.scratch((self.n, np.bool_), (self.n, np.int64))
        key = ("real-direct", self.Bn.dtype.str)
        out = state[rows], err[rows], cond[rows], norm[rows]
        with compile_notice("audit") if key not in WARM else nullcontext():
            WARM.add(key)
            direct_sets(np.ascontiguousarray(S[rows], dtype=np.int64), self.Bn, self.T,
                        self.scale, self.limit, *out, inS, F)
        state[rows], err[rows], cond[rows], norm[rows] = out
        return state, err, cond, norm

    def walk(self, S: np.ndarray, count: int, pend: np.ndarray, floor: float = -np.inf
             ) -> tuple[int, int, float, int, np.ndarray, np.ndarray]:
        """See :func:`screen_range` (``floor``: a decoder norm of a set before S, or -inf;
        not finite: -inf); also returns the weakest (lb, offset) pairs, and adds the
        sets walked and the decoder norms computed in full to :attr:`counted`.  In a pool
        thread whose run has stopped it raises :class:`~gctool.engine.threads.Cancelled`
        (:func:`~gctool.engine.threads.halt_flag`)."""
        from gctool.engine.threads import halt_flag, raise_if_halted

        (Zs, C, Zl, P, vol, fro, c, g, u, bw, Ct, zT, inS, weak_lb, weak_at, fb,
         av) = _walk_work(self.NT, self.W, S.shape[0])
        weak_lb[:], weak_at[:] = np.inf, -1
        halt = halt_flag()
        done, npend, best, at, full = screen_range(
            S, self.n, count, self.NT, self.W, self.scale, self.delta, self.rc0, self.dn, pend,
            weak_lb, weak_at, Zs, C, Zl, P, vol, fro, c, g, u, bw, Ct, zT, inS, self.rowsq, fb,
            self.Bn, self.T, self.wlim, self.tail, self.free, av,
            float(floor) if np.isfinite(floor) else -np.inf, halt)
        raise_if_halted(halt)
        me = threading.get_ident()  # each thread adds to its own count (no lock to pickle)
        walked, norms = self.counted.get(me, (0, 0))
        self.counted[me] = (walked + int(done), norms + int(full))
        return int(done), int(npend), float(best), int(at), weak_lb.copy(), weak_at.copy()
