r"""The minimum-norm decoders of many survivor sets through the left null space of B (R/C).

With ``W`` (n x m) the minimum-norm solution of ``W^T Bn = T`` and the orthonormal rows of
``N`` (d x n) spanning the left null space of the row-normalised ``Bn``
(:class:`gctool.algebra.spectral.Spectral`), every decoder is ``a = W + N^T Z``; the one that
vanishes on the stragglers S solves ``N[:, S]^T Z = -W_S`` (s x d), and since W is orthogonal
to the rows of N, ``||a||^2 = ||W||^2 + ||Z||^2``: the minimum-norm Z gives the minimum-norm
decoder on F, the vector the generic decoder (:mod:`gctool.decode.generic`) computes by an SVD
of B_F.  This costs an s x s solve (d = s) or the QR of an s x d matrix (d > s) per set instead
of the SVD of an (n - s) x k one.  B's decoder is ``D a`` (the row scaling).

Sets whose system is singular (or d < s: some set fails, the rank bound) get no vector
(``ok`` False); the caller decodes them otherwise.
"""

from __future__ import annotations

import numpy as np

from gctool.algebra.spectral import Spectral
from gctool.model import GradientCode


class NullspaceDecoder:
    """Minimum-norm decoders of chunks of straggler sets of one real or complex code."""

    def __init__(self, code: GradientCode) -> None:
        sp = Spectral.of_code(code)
        self.N = sp.null_basis  # (d, n)
        self.NT = self.N.T  # (n, d)
        self.W = sp.min_norm(code.targets())  # (n, m)
        self.scale = sp.row_scale
        self.d = sp.d

    @staticmethod
    def rank_gap(code: GradientCode) -> int:
        """d = n - rank(B): the formula applies to sets of at most d stragglers."""
        return Spectral.of_code(code).d

    def applies(self, s: int) -> bool:
        """Whether sets of s stragglers can decode at all by this formula (d >= s)."""
        return self.d >= s

    def vectors(self, S: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(a, ok)``: the decoders of B zero-padded to all n workers, a (b, m, n), and
        whether each was computed (False: singular system, the caller decodes that set)."""
        b, s = S.shape
        W, NT = self.W, self.NT
        m = W.shape[1]
        if s == 0:
            a = np.broadcast_to((W * self.scale[:, None]).T, (b, m, W.shape[0])).copy()
            return a, np.ones(b, dtype=bool)
        A = NT[S]  # (b, s, d)
        WS = W[S]  # (b, s, m)
        with np.errstate(all="ignore"):
            if self.d == s:
                Z = _solve(A, -WS)
            else:  # minimum-norm Z of A Z = -W_S through A^H = Q R (never A A^H)
                Q, R = np.linalg.qr(np.conj(np.swapaxes(A, 1, 2)))  # (b, d, s), (b, s, s)
                Z = Q @ _solve(np.conj(np.swapaxes(R, 1, 2)), -WS)
            ok = np.isfinite(Z).all(axis=(1, 2))
            Z = np.where(ok[:, None, None], Z, 0)
            a = W[None] + NT[None] @ Z  # (b, n, m)
        a[np.arange(b)[:, None], S] = 0
        a = a * self.scale[None, :, None]
        return np.swapaxes(a, 1, 2), ok & np.isfinite(a).all(axis=(1, 2))


def _solve(A: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """``A X = Y`` for a batch of square systems; a singular system's X is nan."""
    try:
        return np.asarray(np.linalg.solve(A, Y))
    except np.linalg.LinAlgError:
        pass
    X = np.full(Y.shape, np.nan, dtype=np.result_type(A, Y))
    for i in range(A.shape[0]):  # rare: an exactly singular system in the batch
        try:
            X[i] = np.linalg.solve(A[i], Y[i])
        except np.linalg.LinAlgError:
            continue
    return X
