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

import numba
import numpy as np

from gctool.numerics import EPS

#: nopython, cached on disk, no fast-math (the intervals assume IEEE round-off)
njit: Any = numba.njit(cache=True, nogil=True)

#: safety factor on the first-order round-off bounds of the two inverses (see the docstring)
ERR = 64.0
#: sets whose relative interval exceeds this are left to numpy (nearly singular G)
MAX_REL = 1e-3


@njit
def successor(S: Any, n: int) -> bool:
    """Next s-subset of range(n) in lexicographic order, in place; False after the last."""
    s = S.shape[0]
    i = s - 1
    while i >= 0 and S[i] == n - s + i:
        i -= 1
    if i < 0:
        return False
    S[i] += 1
    for j in range(i + 1, s):
        S[j] = S[j - 1] + 1
    return True


@njit
def _mag(z: Any) -> float:
    """|Re z| + |Im z| (LAPACK's cabs1: within sqrt(2) of |z|, without a square root)."""
    return abs(z.real) + abs(z.imag)


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
        p = c
        big = _mag(G[c, c])
        for r in range(c + 1, s):
            v = _mag(G[r, c])
            if v > big:
                big, p = v, r
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
