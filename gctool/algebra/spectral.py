"""The SVD of B for real and complex codes: one object, one numerical rank.

Every real/complex computation that needs the rank of B, a basis of its range or of its left
null space, the minimum-norm decoder of all n workers or cond(B) takes it from
:class:`Spectral`: the verifier's null-space reduction, the attack oracles, ``bound``'s rank,
and design's conditioning.  So ``bound`` and ``verify`` cannot disagree on rank(B): the rank is
computed once, from one factorisation, under the one cut-off of
:func:`gctool.numerics.numerical_rank`.

The factorisation is of the row-normalised ``Bn = D B`` (:func:`gctool.numerics.normalise_rows`:
rows scaled exactly by powers of two), which has the row spaces, errors and decodability of B
and a condition number independent of how the rows were scaled:

    Bn = U diag(sv) Vh,   U n x n (square, also for a wide B), sv descending.

With r the numerical rank:

* ``range_basis = conj(U[:, :r])`` (n x r): orthonormal, spans conj(range(Bn)), the
  complement of the left null space;
* ``null_basis = conj(U[:, r:])^T`` (d x n, d = n - r): orthonormal rows y with ``y^T Bn = 0``;
* ``min_norm(T)``: the minimum-norm W (n x m) with ``W^T Bn = T`` in the least-squares sense,
  ``W = conj(U_r) diag(1/sv_r) conj(Vh_r) T^T``;
* ``kappa = sv[0] / sv[r-1]``: cond(Bn) on its numerical rank.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from gctool.numerics import condition, normalise_rows, numerical_rank

if TYPE_CHECKING:  # pragma: no cover
    from gctool.model import GradientCode


@dataclass(frozen=True)
class Spectral:
    """The SVD of the row-normalised B (see the module docstring)."""

    Bn: np.ndarray  # D B (n x K)
    row_scale: np.ndarray  # the powers of two d (n,): Bn = diag(d) B
    U: np.ndarray  # n x n
    sv: np.ndarray  # descending
    Vh: np.ndarray  # min(n, K) x K or K x K
    rank: int  # numerical rank (the one cut-off)

    @classmethod
    def of(cls, B: np.ndarray) -> Spectral:
        return cls._of(*normalise_rows(np.asarray(B)))

    @classmethod
    def of_code(cls, code: GradientCode) -> Spectral:
        """:meth:`of` the code's B, from its row normalisation and its factorisation, both
        computed once per code (:meth:`~gctool.model.GradientCode.row_normalised_svd`)."""
        Bn, d = code.row_normalised()
        U, sv, Vh = code.row_normalised_svd()
        return cls(Bn, d, U, sv, Vh, int(numerical_rank(sv, Bn.shape)))

    @classmethod
    def _of(cls, Bn: np.ndarray, d: np.ndarray) -> Spectral:
        n, K = Bn.shape
        U, sv, Vh = np.linalg.svd(Bn, full_matrices=K < n)
        return cls(Bn, d, U, sv, Vh, int(numerical_rank(sv, Bn.shape)))

    @property
    def n(self) -> int:
        return int(self.Bn.shape[0])

    @property
    def d(self) -> int:
        """Dimension of the left null space, ``n - rank``."""
        return self.n - self.rank

    @property
    def kappa(self) -> float:
        """cond(Bn) on its numerical rank (inf for rank 0)."""
        return float(condition(self.sv, self.rank)) if self.sv.size else float("inf")

    @property
    def range_basis(self) -> np.ndarray:
        """Orthonormal n x r basis (columns) of the decoders that matter: every a with
        ``a^T Bn = t`` is ``range_basis z`` plus a left-null vector (conj(range(Bn)))."""
        return np.conj(self.U[:, :self.rank])

    @property
    def null_basis(self) -> np.ndarray:
        """Orthonormal rows (d x n) y with ``y^T Bn = 0``."""
        return np.conj(self.U[:, self.rank:]).T

    def min_norm(self, T: np.ndarray) -> np.ndarray:
        """The minimum-norm least-squares W (n x m) of ``W^T Bn = T`` (T is m x K)."""
        r = self.rank
        Tt = np.asarray(T).T.astype(self.U.dtype)  # (K, m)
        return np.conj(self.U[:, :r]) @ ((np.conj(self.Vh[:r]) @ Tt) / self.sv[:r, None])

    def errors(self, W: np.ndarray, T: np.ndarray) -> np.ndarray:
        """Squared residual ``||Bn^T w_u - t_u||^2`` of each target u."""
        Tt = np.asarray(T).T.astype(self.U.dtype)
        return np.asarray(np.sum(np.abs(self.Bn.T @ W - Tt) ** 2, axis=0))
