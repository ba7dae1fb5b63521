"""Compiled optimal-decoder error for ``attack`` (the KKT route of
:class:`gctool.audit.decoders.OptimalOracle`, set by set).

For straggler set S with ``A = Qperp[S]`` (s x d): when the min(s, d)-square Gram matrix of A
has its smallest eigenvalue above ``sig_kept^2`` (here: a Cholesky factorisation of
``G - sig_kept^2 (1 + 1e-6) I`` succeeds, a margin that leaves every borderline set to the
numpy oracle), the lost error solves ``[[N_SS, A], [A^H, 0]] [w; mu] = [alpha_S; 0]`` and
``err = err([n]) + Re(alpha_S^H w)`` (no direction is lost when s <= d).  Every other set
(ill-conditioned, singular or non-finite) is *pending*: the numpy oracle decides it (SVD route,
direct decoder, exact escalation)."""

from __future__ import annotations

from typing import Any

import numpy as np

from gctool.audit.kernels._jit import compile_notice, njit
from gctool.audit.kernels.real import WARM, _lu, _lu_solve


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
    for j in range(r):  # Cholesky G = L L^H in place (lower triangle)
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
def hat_errors(Sets: Any, Qperp: Any, N: Any, alpha: Any, err_full: float, t: float,
               err: Any, pending: Any) -> None:
    """Errors of the rows of Sets (err), or pending[b] = True where the numpy oracle must
    decide."""
    b_count, s = Sets.shape
    d = Qperp.shape[1]
    m = alpha.shape[1]
    r = min(s, d)
    A = np.zeros((s, d), Qperp.dtype)
    G = np.zeros((max(r, 1), max(r, 1)), Qperp.dtype)
    K = np.zeros((s + d, s + d), N.dtype)
    perm = np.zeros(s + d, np.int64)
    rhs = np.zeros((s + d, m), alpha.dtype)
    w = np.zeros((s + d, m), alpha.dtype)
    for b in range(b_count):
        S = Sets[b]
        pending[b] = False
        for i in range(s):
            for j in range(d):
                A[i, j] = Qperp[S[i], j]
        if not _well(A, G, t):
            pending[b] = True
            continue
        if s <= d:
            err[b] = err_full
            continue
        for i in range(s + d):
            for j in range(s + d):
                K[i, j] = 0.0
        for i in range(s):
            for j in range(s):
                K[i, j] = N[S[i], S[j]]
            for j in range(d):
                K[i, s + j] = A[i, j]
                K[s + j, i] = np.conj(A[i, j])
        for i in range(s + d):
            for u in range(m):
                rhs[i, u] = alpha[S[i], u] if i < s else 0.0
        if _lu(K, perm) == 0:
            pending[b] = True
            continue
        _lu_solve(K, perm, rhs, w)
        extra = 0.0
        for i in range(s):
            for u in range(m):
                extra += (np.conj(rhs[i, u]) * w[i, u]).real
        e = err_full + extra
        if not np.isfinite(e):
            pending[b] = True
            continue
        err[b] = max(e, 0.0)


class HatErrors:
    """The compiled fast path of one OptimalOracle (contiguous copies of its spectral data)."""

    def __init__(self, Qperp: np.ndarray, N: np.ndarray, alpha: np.ndarray, err_full: float,
                 sig_kept: float) -> None:
        dt = np.result_type(Qperp, N, alpha, np.float64)
        self.Qperp = np.ascontiguousarray(Qperp, dtype=dt)
        self.N = np.ascontiguousarray(N, dtype=dt)
        self.alpha = np.ascontiguousarray(alpha, dtype=dt)
        self.err_full = float(err_full)
        self.t = float(sig_kept) ** 2 * (1 + 1e-6)

    def warm(self, s: int) -> None:
        key = ("optimal", self.Qperp.dtype.str)
        if key in WARM:
            return
        WARM.add(key)
        with compile_notice("attack"):
            self(np.arange(s, dtype=np.int64)[None, :])

    def __call__(self, S: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(errors, pending) of the straggler sets S."""
        b = S.shape[0]
        err, pending = np.zeros(b), np.zeros(b, dtype=bool)
        hat_errors(np.ascontiguousarray(S, dtype=np.int64), self.Qperp, self.N, self.alpha,
                   self.err_full, self.t, err, pending)
        return err, pending
