"""The analysis of a frame S (rows = workers): G = S^T S and its eigenvalues, the row Gram, the
frame's statistics and the proved upper bound on epsilon.  Shared by the ``encoded`` scheme
(:mod:`gctool.codes.encoded`, which records them in its files) and its audits
(:mod:`gctool.audit.spectrum`, :mod:`gctool.audit.frames`)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from gctool._lazy import numpy as np
from gctool.budget import Budget

#: rows of the n x n row Gram handled at once when its rows are scaled or partially sorted
_ROW_BLOCK_ENTRIES = 1 << 21


class Analysis:
    """What every statistic and bound of a frame S (rows = vectors) reads, each computed once:
    G = S^T S and its eigenvalues (k x k), and on demand the row Gram S S^T and the squared
    row norms (n x n: only the coherence, the upper bound on
    epsilon, and the tight frames' straggler sets, need it).

    The work and memory of each part are estimated by :meth:`work` and :meth:`memory` (the
    ns of :mod:`gctool.budget`), and :meth:`of` refuses a frame above the budget before
    anything is computed."""

    def __init__(self, S: np.ndarray) -> None:
        self.S = S
        self.G = S.T @ S
        self.ev = np.linalg.eigvalsh(self.G)  # ascending
        self._rows: tuple[np.ndarray, np.ndarray] | None = None

    @staticmethod
    def work(n: int, k: int, rows: bool = True) -> int:
        """Work of :meth:`of` (G, its eigenvalues) and, with ``rows``, of :meth:`rows` and
        the passes over it (the coherence, the upper bound)."""
        from gctool.budget import eigvalsh_cost, product_cost

        gram = product_cost(k, n, k) + int(eigvalsh_cost(k))
        return gram + ((product_cost(n, k, n) + 4 * n * n) if rows else 0)

    @staticmethod
    def memory(n: int, k: int, rows: bool = True) -> int:
        """Bytes of the arrays :meth:`of` and :meth:`rows` hold at once (G and the eigen
        solver's copy; the n x n row Gram)."""
        return 8 * (2 * k * k + (n * n if rows else 0))

    @classmethod
    def of(cls, S: np.ndarray, budget: Budget, rows: bool = True) -> Analysis:
        """The analysis of S, refused (BudgetExceeded) above the work or memory ``budget``
        (``rows``: the n x n row Gram will be needed too)."""
        n, k = S.shape
        what = f"the spectral analysis of the frame (n={n}, k={k})"
        budget.check_work(what, cls.work(n, k, rows), "use a smaller frame, or raise `max_work`")
        budget.check_memory(what, cls.memory(n, k, rows), "use a smaller frame")
        return cls(S)

    @property
    def has_rows(self) -> bool:
        """Has the row Gram been computed?"""
        return self._rows is not None

    def rows(self) -> tuple[np.ndarray, np.ndarray]:
        """(the row Gram P = S S^T, the squared row norms), computed once."""
        if self._rows is None:
            P = self.S @ self.S.T
            self._rows = (P, np.diagonal(P).copy())
        return self._rows

    def _abs_blocks(self) -> Iterator[tuple[slice, np.ndarray]]:
        """(rows, |P[rows]| with the diagonal entries set to 0), a block of rows at a time."""
        P, _ = self.rows()
        n = P.shape[0]
        step = max(1, _ROW_BLOCK_ENTRIES // max(n, 1))
        for i in range(0, n, step):
            b = slice(i, min(i + step, n))
            block = np.abs(P[b])
            block[np.arange(b.stop - i), np.arange(i, b.stop)] = 0.0
            yield b, block

    def stats(self) -> dict[str, Any]:
        """Redundancy, coherence, Welch bound and tightness."""
        n, k = self.S.shape
        coherence = 0.0
        if n > 1:
            norms = np.sqrt(self.rows()[1])
            norms[norms == 0] = 1.0
            for b, A in self._abs_blocks():  # max |<s_i, s_j>| / (|s_i| |s_j|)
                coherence = max(coherence, float((A / norms[b, None] / norms[None, :]).max()))
        c = float(np.trace(self.G)) / k
        welch = math.sqrt((n - k) / (k * (n - 1))) if n > 1 else 0.0
        # G is symmetric: ||G - cI||_2 is the largest |eigenvalue - c|
        tight = max(abs(float(self.ev[-1]) - c), abs(float(self.ev[0]) - c)) / c if c > 0 else 0.0
        return {"beta": n / k, "coherence": coherence, "welch_bound": welch, "tightness": tight}

    def upper_bound(self, s: int) -> float:
        """Proved upper bound on eps_F over all straggler sets of size s (Weyl + Gershgorin; the
        derivation is in :mod:`gctool.audit.spectrum`)."""
        n, k = self.S.shape
        f = n - s
        if f <= 0:
            return float("inf")
        if s == 0:
            mu = 0.0
        else:
            sq = self.rows()[1]
            top = np.zeros(n)
            if s > 1:  # the s - 1 largest |<s_i, s_j>| of each row
                for b, A in self._abs_blocks():
                    top[b] = -np.partition(-A, s - 2, axis=1)[:, : s - 1].sum(axis=1)
            mu = float(min((sq + top).max(), np.sort(sq)[::-1][:s].sum()))
        norm = k / f
        lmin = max(0.0, float(self.ev[0]) - mu) * norm
        lmax = float(self.ev[-1]) * norm
        return float(epsilon_of(lmin, lmax))


def frame_stats(S: np.ndarray, budget: Budget | None = None) -> dict[str, Any]:
    """Redundancy, coherence, Welch bound and tightness of a frame (rows = vectors)."""
    return Analysis.of(S, Budget.default() if budget is None else budget).stats()


def epsilon_of(lmin: np.ndarray | float, lmax: np.ndarray | float) -> np.ndarray:
    return np.maximum(1.0 - np.asarray(lmin), np.asarray(lmax) - 1.0)


def epsilon_upper_bound(S: np.ndarray, s: int, budget: Budget | None = None) -> float:
    """Proved upper bound on eps_F over all straggler sets of size s (Weyl + Gershgorin; the
    derivation is in :mod:`gctool.audit.spectrum`)."""
    return Analysis.of(S, Budget.default() if budget is None else budget,
                       rows=s > 0).upper_bound(s)
