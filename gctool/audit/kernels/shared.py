"""What the compiled kernels share, apart from any one walk (importing it costs none of
theirs): the period at which a walk reads its stop flag, the record of kernels compiled or
loaded in this process, and the compiled factorisations and compensated sums that the
real/complex screen (:mod:`.real`), the optimal decoder's walk (:mod:`.optimal`) and the
direct decoder's brackets (:mod:`.direct`) call: an attack worker that runs the last two loads
no module of the first (:mod:`.real`, whose kernels it never calls)."""

from __future__ import annotations

from typing import Any

import numpy as np

from gctool.audit.kernels.bounds import dot2_bound, two_sum
from gctool.compiled._jit import njit
from gctool.numerics import residual_bracket, residual_gamma, two_product

#: the compiled walks read their stop flag (:func:`gctool.engine.threads.halt_flag`) every
#: this many sets, or at each new prefix of their stragglers (a set costs 0.05-5 us)
HALT_EVERY = 1024

#: kernels compiled or loaded in this process (by kind and dtypes)
WARM: set[tuple[str, ...]] = set()
#: :func:`gctool.numerics.residual_bracket` compiled (scalars): the one outward-rounded
#: bracket of a squared residual from its computed value and the 2-norm of its round-off
bracket = njit(residual_bracket)
#: :func:`gctool.numerics.residual_gamma` compiled: the round-off constant of a residual entry
#: for any summation order (the kernels' loops have their own order, whose constant is smaller
#: over C, sqrt(2) gamma_{f+2}; the one constant keeps its proofs those of numpy's decoder)
res_gamma = njit(residual_gamma)
#: :func:`.bounds.dot2_bound` compiled: Dot2's error bound
bound_dot2 = njit(dot2_bound)


#: a + b = x + y exactly (Knuth's TwoSum), compiled
_two_sum = njit(two_sum)


#: a b = x + y exactly (Dekker's TwoProduct; finite |a|, |b| far below 2^996, no underflow:
#: the caller's slack covers it), compiled
_two_prod = njit(two_product)


@njit
def _dot2(x: Any, y: Any, k: int) -> tuple[float, float]:
    """(value, bound) of the real dot product of x[:k] and y[:k] in twice the working
    precision (Ogita, Rump and Oishi's Dot2): the exact value is within bound of value,
    ``bound = 2 eps |value| + 2 gamma_k^2 |x|^T |y|`` (their error bound, solved for the
    computed value; raised for the rounding of |x|^T |y| and by 2^-1000 per term for
    underflow)."""
    p, q = _two_prod(x[0], y[0])
    a = abs(x[0] * y[0])
    for i in range(1, k):
        h, r = _two_prod(x[i], y[i])
        p, e = _two_sum(p, h)
        q += e + r
        a += abs(x[i] * y[i])
    v = p + q
    return v, bound_dot2(v, a, k)


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
def _unreflect(H: Any, tau: Any, c: int, Y: Any, j: int) -> None:
    """Apply the reflector of column c of H itself (``I - tau v v^H``) to column j of Y: the
    steps of ``Q = H_0 ... H_{s-1}`` applied right to left."""
    d = H.shape[0]
    w = Y[c, j]
    for r in range(c + 1, d):
        w += np.conj(H[r, c]) * Y[r, j]
    w *= tau[c]
    Y[c, j] -= w
    for r in range(c + 1, d):
        Y[r, j] -= w * H[r, c]


@njit
def _qr(H: Any, tau: Any) -> float:
    """Householder QR of the tall H (d x s) in place: R above the diagonal, the reflectors
    ``I - tau v v^H`` (v[0] = 1) below; returns |det R|."""
    det = 1.0
    for c in range(H.shape[1]):
        det *= _qr_step(H, tau, c)
    return det


@njit
def _reflector(x0: Any, nrm: float) -> tuple[Any, Any, Any]:
    """``(beta, v0, tau)`` of the Householder reflector ``I - tau v v^H`` (v[0] = 1, the rest
    of v the column's entries below x0 divided by v0) that maps a column with leading entry
    x0 and 2-norm ``nrm > 0`` to ``beta e_1`` (beta = -phase(x0) nrm: R's diagonal entry);
    tau = (beta - x0) / beta, conjugated for the complex convention.  One convention for
    :func:`_qr_step` and :func:`_qr_rows`."""
    ax0 = abs(x0)
    phase = x0 / ax0 if ax0 != 0 else 1.0 + 0 * x0
    beta = -phase * nrm
    return beta, x0 - beta, np.conj((beta - x0) / beta)


@njit
def _qr_step(H: Any, tau: Any, c: int) -> float:
    """Column c of :func:`_qr` (the columns before it done): its reflector, applied to every
    column after it; returns |R[c, c]|."""
    d, s = H.shape
    nrm2 = 0.0
    for r in range(c, d):
        nrm2 += abs(H[r, c]) ** 2
    nrm = np.sqrt(nrm2)
    if nrm == 0:
        tau[c] = 0.0
        return nrm
    beta, v0, tau[c] = _reflector(H[c, c], nrm)
    for r in range(c + 1, d):
        H[r, c] = H[r, c] / v0
    H[c, c] = beta
    for j in range(c + 1, s):
        _reflect(H, tau, c, H, j)
    return nrm


@njit
def _inv_fro_tri(H: Any, X: Any) -> float:
    """||R^{-1}||_F for the upper triangle R of H (s x s)."""
    s = X.shape[0]
    acc = 0.0
    for u in range(s):
        for i in range(s - 1, u, -1):  # below the diagonal: 0 (R is finite)
            X[i, u] = 0.0
        for i in range(u, -1, -1):
            v = (1.0 if i == u else 0.0) + 0 * H[0, 0]
            for j in range(i + 1, u + 1):
                v -= H[i, j] * X[j, u]
            X[i, u] = v / H[i, i]
            acc += abs(X[i, u]) ** 2
    return np.sqrt(acc)


@njit
def survivors_into(S: Any, inS: Any, F: Any) -> None:
    """The survivors of the straggler set S (the others of range(n), n = ``inS.shape[0]``)
    into F[:n - s], in increasing order, by the membership mask inS (all False, and so
    left)."""
    for i in range(S.shape[0]):
        inS[S[i]] = True
    j = 0
    for i in range(inS.shape[0]):
        if not inS[i]:
            F[j] = i
            j += 1
    for i in range(S.shape[0]):
        inS[S[i]] = False
