"""Compiled walk of design's null-space screen (:class:`gctool.codes.conditioning.ScreenKernel`):
per straggler set S the same bound ``kappa * ||G^-1||_F`` (``G = N_S``; ``G = N_S N_S^H`` and its
square root when d > s), computed by LU with partial pivoting in a different order than numpy's
batched inverse, with a certified interval around numpy's value.

For each block of ``chunk`` consecutive sets (the screen's tasks) the walk writes:

* ``hi[b]``: an upper bound on numpy's value of every set of the block;
* ``lo[b]``: a lower bound on numpy's value of at least one set of the block;
* ``doubt[b]``: some set of the block is too close to singular for the interval (or numpy might
  meet an exactly singular matrix in this block and give every set of it the SVD bound).

The interval: LU with partial pivoting gives the inverse with a normwise relative error at most
about ``s^2 rho eps cond(G)`` (rho the growth of the elimination, cond(G) <= ||G^-1||_F since
||G|| <= 1: N has orthonormal columns), for numpy's LAPACK inverse and for this one alike, plus
``d eps cond(G)`` for forming ``N_S N_S^H``.  The walk takes ``ERR`` times that (eight times
more over C, whose growth is measured in |Re| + |Im|) as the relative distance between the two
values and leaves sets where it exceeds ``MAX_REL`` to numpy.  numpy replaces its value by the
SVD bound ``kappa / sigma_s(N_S)`` when it exceeds ``cut`` (``SCREEN_SVD``): that one lies
between the inverse bound divided by ``root`` (sqrt(s), or s^(1/4) when d > s) and the inverse
bound, so where the value may be above ``cut`` the lower end is divided by ``root``.

This is an optimisation, never a new semantics: the caller takes the exact worst set from
numpy's own values on the blocks that could hold it (see :func:`gctool.codes.conditioning`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from gctool.compiled._jit import njit
from gctool.compiled.walk import successor
from gctool.numerics import EPS

#: safety factor on the first-order round-off bounds of the two inverses (see the docstring)
ERR = 64.0
#: sets whose relative interval exceeds this are left to numpy (nearly singular G)
MAX_REL = 1e-3


@njit
def _mag(z: Any) -> float:
    """|Re z| + |Im z| (LAPACK's cabs1: within sqrt(2) of |z|, without a square root)."""
    return abs(z.real) + abs(z.imag)


@njit
def _pivot(M: Any, c: int, s: int) -> tuple[int, float]:
    """Partial pivoting: the row at or below c (of s) whose entry in column c is largest in
    :func:`_mag`, and that magnitude."""
    p, big = c, _mag(M[c, c])
    for r in range(c + 1, s):
        v = _mag(M[r, c])
        if v > big:
            big, p = v, r
    return p, big


@njit
def _inverse_fro2(G: Any, perm: Any, X: Any) -> tuple[float, float]:  # noqa: C901
    """(||G^-1||_F^2, growth max|U| / max|G| (in :func:`_mag`)) by LU with partial pivoting
    of G (s x s, in place); (inf, inf) when a pivot is exactly 0."""
    s = G.shape[0]
    top = 0.0
    for i in range(s):
        perm[i] = i
        for j in range(s):
            a = _mag(G[i, j])
            if a > top:
                top = a
    for c in range(s):
        p, big = _pivot(G, c, s)
        if big == 0:
            return np.inf, np.inf
        if p != c:
            for j in range(s):
                G[c, j], G[p, j] = G[p, j], G[c, j]
            perm[c], perm[p] = perm[p], perm[c]
        inv = 1.0 / G[c, c]
        for r in range(c + 1, s):
            f = G[r, c] * inv
            G[r, c] = f
            for j in range(c + 1, s):
                G[r, j] -= f * G[c, j]
    grown = 0.0
    for i in range(s):
        for j in range(i, s):
            a = _mag(G[i, j])
            if a > grown:
                grown = a
    for i in range(s):  # G^-1 = U^-1 L^-1 P, all columns at once (row operations)
        for u in range(s):
            X[i, u] = (1.0 if perm[i] == u else 0.0) + 0 * G[0, 0]
        for j in range(i):
            f = G[i, j]
            for u in range(s):
                X[i, u] -= f * X[j, u]
    acc = 0.0
    for i in range(s - 1, -1, -1):
        for j in range(i + 1, s):
            f = G[i, j]
            for u in range(s):
                X[i, u] -= f * X[j, u]
        f = 1.0 / G[i, i]
        for u in range(s):
            v = X[i, u] * f
            X[i, u] = v
            acc += v.real * v.real + v.imag * v.imag
    return acc, max(grown / top, 1.0) if top > 0 else np.inf


@njit
def screen_blocks(S: Any, count: int, NT: Any, kappa: float, cut: float,  # noqa: PLR0913
                  chunk: int, cplx: bool, hi: Any, lo: Any, doubt: Any, M: Any, G: Any,
                  perm: Any, X: Any) -> None:
    """Walk ``count`` sets from S (in place: S ends on the last one walked, or the next set
    when the walk stopped inside the enumeration) and fill ``hi``, ``lo``, ``doubt`` of the
    blocks of ``chunk`` sets (block b holds sets b * chunk .. (b + 1) * chunk - 1 of the walk);
    NT is N (n x d, orthonormal columns), M (s x d), G (s x s), perm (s), X (s x s) scratch."""
    n, d = NT.shape
    s = S.shape[0]
    square = d == s
    root = np.sqrt(s) if square else np.sqrt(np.sqrt(s))
    k = ERR * (8.0 if cplx else 1.0) * EPS  # complex: round-off, and growth in _mag
    for b in range(hi.shape[0]):
        hi[b], lo[b], doubt[b] = -np.inf, -np.inf, False
    for i in range(count):
        if i > 0:
            successor(S, n)
        b = i // chunk
        if square:
            for r in range(s):
                for j in range(s):
                    G[r, j] = NT[S[r], j]
        else:
            for r in range(s):
                for j in range(d):
                    M[r, j] = NT[S[r], j]
            for r in range(s):
                for c in range(s):
                    acc = 0.0 * G[0, 0]
                    for j in range(d):
                        acc += M[r, j] * np.conj(M[c, j])
                    G[r, c] = acc
        fro2, rho = _inverse_fro2(G, perm, X)
        inv = np.sqrt(fro2) if square else np.sqrt(np.sqrt(fro2))
        value = kappa * inv
        # cond(G) <= ||G^-1||_2 <= ||G^-1||_F = inv (square) or inv^2 (Gram), ||G|| <= 1
        cond = inv * (1 + MAX_REL) if square else (inv * (1 + MAX_REL)) ** 2
        rel = k * (s * s * rho + d) * cond
        if not (np.isfinite(value) and rel <= MAX_REL):
            doubt[b] = True
            hi[b] = np.inf
            continue
        top = value * (1 + 2 * rel) * (1 + 1e-12)
        low = value * (1 - 2 * rel)
        if top > cut:  # numpy may give the SVD bound instead: as low as value / root
            low = low * (1 - 2 * rel) / root
        hi[b] = max(hi[b], top)
        lo[b] = max(lo[b], low)


def scratch(NT: np.ndarray, s: int) -> tuple[np.ndarray, ...]:
    """The scratch arrays of :func:`screen_blocks` (M, G, perm, X)."""
    d, dt = NT.shape[1], NT.dtype
    return (np.zeros((s, d), dt), np.zeros((s, s), dt), np.zeros(s, np.int64),
            np.zeros((s, s), dt))


@njit
def _column(j: int, x: int, NT: Any, Wl: Any, Pl: Any) -> bool:
    """Level j + 1 of the LU with partial pivoting of G^T (columns: the rows of N of the
    stragglers) from level j (j < s - 1): column j is the row x of N, eliminated by the
    columns before it (left-looking), then pivoted (rows swapped across every column) and
    scaled.  False when its pivot is exactly 0."""
    s = NT.shape[1]
    W0, W1, p0, p1 = Wl[j], Wl[j + 1], Pl[j], Pl[j + 1]
    for r in range(s):
        p1[r] = p0[r]
        for c in range(j):
            W1[r, c] = W0[r, c]
    for r in range(s):
        W1[r, j] = NT[x, p1[r]]
    for c in range(j):
        f = W1[c, j]
        for r in range(c + 1, s):
            W1[r, j] -= W1[r, c] * f
    p, big = _pivot(W1, j, s)
    if big == 0:
        return False
    if p != j:
        for c in range(j + 1):
            W1[j, c], W1[p, c] = W1[p, c], W1[j, c]
        p1[j], p1[p] = p1[p], p1[j]
    inv = 1.0 / W1[j, j]
    for r in range(j + 1, s):
        W1[r, j] *= inv
    return True


@njit
def _prefix(W: Any, K: Any, A: Any, h: Any) -> tuple[float, float, float]:
    """From the factors of the first s - 1 columns (W: L below, U_p on and above the
    diagonal): ``K = L^-1``, ``A = U_p^-1 K_top``, ``h = A conj(k_l)`` (k_l the last row of
    K); returns (||A||_F^2, ||k_l||^2, max |U_p|)."""
    s = W.shape[0]
    for i in range(s):  # K = L^-1, row by row
        for c in range(s):
            K[i, c] = (1.0 if c == i else 0.0) + 0 * W[0, 0]
        for m in range(min(i, s - 1)):
            f = W[i, m]
            for c in range(m + 1):
                K[i, c] -= f * K[m, c]
    top = 0.0
    for i in range(s - 2, -1, -1):  # A = U_p^-1 K_top
        for c in range(s):
            A[i, c] = K[i, c]
        for m in range(i + 1, s - 1):
            f = W[i, m]
            for c in range(s):
                A[i, c] -= f * A[m, c]
        f = 1.0 / W[i, i]
        for c in range(s):
            A[i, c] *= f
        for m in range(i, s - 1):
            v = _mag(W[i, m])
            if v > top:
                top = v
    aa, kk = 0.0, 0.0
    for c in range(s):
        kk += K[s - 1, c].real ** 2 + K[s - 1, c].imag ** 2
    for i in range(s - 1):
        acc = 0.0 * W[0, 0]
        for c in range(s):
            aa += A[i, c].real ** 2 + A[i, c].imag ** 2
            acc += A[i, c] * np.conj(K[s - 1, c])
        h[i] = acc
    return aa, kk, top


@njit
def screen_square(S: Any, count: int, NT: Any, rowmag: Any, kappa: float,  # noqa: C901, PLR0913
                  cut: float, chunk: int, cplx: bool, hi: Any, lo: Any, doubt: Any, Wl: Any,
                  Pl: Any, K: Any, A: Any, h: Any, y: Any, w: Any) -> None:
    """:func:`screen_blocks` for d = s, the same values to round-off at a fraction of the cost:
    the LU with partial pivoting of ``G^T`` (columns: the stragglers' rows of N) is kept level
    by level (:func:`_column`), so its first s - 1 columns, whose pivots do not depend on the
    last straggler x, are shared by the sets of one prefix, with ``K = L^-1``,
    ``A = U_p^-1 K_top`` (:func:`_prefix`).  For each x, the last column of U is
    ``(u, mu) = L^-1 P N_x`` and ``G^-T = U^-1 L^-1 P`` has the rows ``A_i - q_i k_l`` and
    ``k_l / mu`` (``q = U_p^-1 u / mu``), so ``||G^-1||_F^2 = ||A||^2 - 2 Re sum conj(q_i) h_i
    + ||q||^2 ||k_l||^2 + ||k_l||^2 / |mu|^2`` costs O(s^2).  Where the sum cancels (its terms'
    magnitudes above 16 times the result) the rows are summed one by one instead; the
    interval's width is multiplied by that ratio.  rowmag: the largest |Re| + |Im| of each row
    of N; Wl (s + 1, s, s), Pl (s + 1, s) levels, K (s, s), A (s, s), h, y, w (s) scratch."""
    n, s = NT.shape
    root = np.sqrt(s)
    k = ERR * (8.0 if cplx else 1.0) * EPS
    for b in range(hi.shape[0]):
        hi[b], lo[b], doubt[b] = -np.inf, -np.inf, False
    for r in range(s):
        Pl[0, r] = r
    ok = np.zeros(s, np.bool_)  # ok[j]: level j + 1 is regular
    stale, i, first, good = 0, 0, True, True
    aa, kk, utop, gtop = 0.0, 0.0, 0.0, 0.0
    while i < count:
        if first or stale < s - 1:
            good = True if stale == 0 else ok[stale - 1]
            for j in range(stale, s - 1):
                good = good and _column(j, S[j], NT, Wl, Pl)
                ok[j] = good
            if good:
                aa, kk, utop = _prefix(Wl[s - 1], K, A, h)
                gtop = 0.0
                for j in range(s - 1):
                    gtop = max(gtop, rowmag[S[j]])
            stale, first = s - 1, False
        W, p = Wl[s - 1], Pl[s - 1]
        x = S[s - 1]
        while x < n and i < count:
            b = i // chunk
            i += 1
            x += 1
            if not good:
                doubt[b], hi[b] = True, np.inf
                continue
            for r in range(s):
                y[r] = NT[x - 1, p[r]]
            for c in range(s - 1):
                f = y[c]
                for r in range(c + 1, s):
                    y[r] -= W[r, c] * f
            mu = y[s - 1]
            big = max(utop, _mag(mu))
            for m in range(s - 2, -1, -1):  # w = U_p^-1 u / mu
                v = y[m]
                big = max(big, _mag(v))
                for c in range(m + 1, s - 1):
                    v -= W[m, c] * w[c]
                w[m] = v / W[m, m]
            if mu == 0:
                doubt[b], hi[b] = True, np.inf
                continue
            t = 1.0 / mu
            qq, cross, mag = 0.0, 0.0, 0.0
            for m in range(s - 1):
                q = w[m] * t
                qq += q.real ** 2 + q.imag ** 2
                z = np.conj(q) * h[m]
                cross += z.real
                mag += _mag(z)
            tt = t.real ** 2 + t.imag ** 2
            fro2 = aa - 2 * cross + qq * kk + kk * tt
            total = aa + 2 * mag + qq * kk + kk * tt
            ratio = total / fro2 if fro2 > 0 else np.inf
            if not ratio <= 16:
                fro2 = kk * tt
                for m in range(s - 1):
                    q = w[m] * t
                    for c in range(s):
                        z = A[m, c] - q * K[s - 1, c]
                        fro2 += z.real ** 2 + z.imag ** 2
                ratio = 1.0
            inv = np.sqrt(fro2)
            value = kappa * inv
            rho = big / max(gtop, rowmag[x - 1])
            rel = k * (s * s * max(rho, 1.0) + s) * inv * (1 + MAX_REL) * ratio
            if not (np.isfinite(value) and rel <= MAX_REL):
                doubt[b], hi[b] = True, np.inf
                continue
            top = value * (1 + 2 * rel) * (1 + 1e-12)
            low = value * (1 - 2 * rel)
            if top > cut:
                low = low * (1 - 2 * rel) / root
            hi[b] = max(hi[b], top)
            lo[b] = max(lo[b], low)
        if i >= count:
            S[s - 1] = x - 1  # the last set walked
            break
        S[s - 1] = n - 1
        stale = successor(S, n)
        if stale < 0:
            break


def square_scratch(NT: np.ndarray) -> tuple[np.ndarray, ...]:
    """rowmag and the scratch arrays of :func:`screen_square` (Wl, Pl, K, A, h, y, w)."""
    s, dt = NT.shape[1], NT.dtype
    rowmag = np.max(np.abs(NT.real) + np.abs(NT.imag), axis=1) if NT.size else np.zeros(0)
    return (np.ascontiguousarray(rowmag, dtype=np.float64), np.zeros((s + 1, s, s), dt),
            np.zeros((s + 1, s), np.int64), np.zeros((s, s), dt), np.zeros((s, s), dt),
            np.zeros(s, dt), np.zeros(s, dt), np.zeros(s, dt))
