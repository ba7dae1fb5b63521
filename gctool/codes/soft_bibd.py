"""Soft-BIBD codes: gctool's variant of the probabilistic relaxation of Sakorikar & Wang 2021
(reference §3.6).  The paper's exact sampling rule could not be checked, so this is gctool's own
recipe, labelled as such in every file:

1. **Bi-regular support.**  Every worker computes exactly d partitions and the column weights are
   as equal as possible (``floor(nd/k)`` or ``ceil(nd/k)``): rows are filled one after another
   in a random order, each taking the d columns with the most remaining capacity (ties broken at
   random), which always succeeds (Gale–Ryser).
2. **Randomise.**  ``10 · nnz`` random degree-preserving swaps (worker i trades partition j for
   j', worker i' trades j' for j) mix the support.
3. **Balance the overlaps toward a BIBD.**  ``sweeps · nnz`` more proposed swaps, each accepted
   only when it lowers ``Σ_{i ≠ i'} |supp b_i ∩ supp b_i'|^2``.  With the column weights fixed
   the overlaps sum to a constant, so this pushes every overlap toward their mean
   ``λ̄ = Σ_j c_j (c_j - 1) / (n (n-1))`` (``d(d-1)/(n-1)`` when n = k): the closer
   ``B B^T`` is to ``(d - λ̄) I + λ̄ J``, the closer σ_2² is to its minimum and the stronger the
   worst-case guarantee (reference §3.5).  A symmetric BIBD is a zero of the excess.

Entries are 0/1 (any field).  The file records λ̄, the final overlap range and the excess
``Σ_{i≠i'} (overlap - λ̄)^2`` before and after step 3.  Always audit the realised B.
"""

from __future__ import annotations

from typing import Any

from gctool._lazy import numpy as np
from gctool.algebra.fields import Field
from gctool.budget import Budget
from gctool.errors import DesignError
from gctool.family import Family
from gctool.params import Int
from gctool.registry.info import Param


def biregular_support(n: int, k: int, d: int, rng: np.random.Generator) -> np.ndarray:
    """A random 0/1 n x k matrix with row weights d and column weights within one of nd/k."""
    total = n * d
    cap = np.full(k, total // k)
    cap[rng.permutation(k)[: total % k]] += 1
    B = np.zeros((n, k), dtype=np.int64)
    for i in rng.permutation(n):
        key = cap + rng.random(k) * 0.5  # most remaining capacity first, random ties
        cols = np.argsort(-key)[:d]
        if np.any(cap[cols] <= 0):
            raise DesignError("internal error: no bi-regular support")  # pragma: no cover
        B[i, cols] = 1
        cap[cols] -= 1
    return B


def support_gram(B: np.ndarray) -> np.ndarray:
    """The overlaps ``|supp b_i ∩ supp b_i'|`` (``Z Z^T`` for the 0/1 support Z of B, int64) by a
    sparse product: O(n^2 + Σ_j c_j^2) for column weights c_j, where numpy's integer matmul
    (no BLAS) costs n^2 k, minutes at n = k = 4096, in one call that no signal interrupts."""
    from scipy.sparse import csr_matrix

    Z = csr_matrix((B != 0).astype(np.int64))
    return np.asarray((Z @ Z.T).toarray(), dtype=np.int64)


def overlap_excess(B: np.ndarray) -> float:
    """``Σ_{i≠i'} (|supp b_i ∩ supp b_i'| - λ̄)^2``: 0 exactly for a (dual) BIBD support."""
    G = support_gram(B)
    n = G.shape[0]
    off = G[~np.eye(n, dtype=bool)]
    return float(((off - off.mean()) ** 2).sum()) if n > 1 else 0.0


class _Swapper:
    """Degree-preserving swaps with incremental updates of the overlap matrix."""

    def __init__(self, B: np.ndarray, rng: np.random.Generator) -> None:
        self.B, self.rng = B, rng
        self.G = support_gram(B)
        self.ones = np.argwhere(B == 1)

    def propose(self) -> tuple[int, int, int, int] | None:
        a, b = self.rng.integers(len(self.ones), size=2)
        (i, j), (i2, j2) = self.ones[a], self.ones[b]
        if i == i2 or j == j2 or self.B[i, j2] or self.B[i2, j]:
            return None
        return int(a), int(b), int(j2), int(j)

    def delta(self, a: int, b: int) -> tuple[int, np.ndarray, np.ndarray]:
        """Change of Σ_{i≠i'} overlap² if the swap is applied, and the new rows i, i2 of G."""
        (i, j), (i2, j2) = self.ones[a], self.ones[b]
        col = self.B[:, j2] - self.B[:, j]  # row i trades j for j2, row i2 trades j2 for j
        new_i, new_i2 = self.G[i] + col, self.G[i2] - col
        new_i[i], new_i2[i2] = self.G[i, i], self.G[i2, i2]
        Bi, Bi2 = self.B[i].copy(), self.B[i2].copy()
        Bi[j], Bi[j2], Bi2[j2], Bi2[j] = 0, 1, 0, 1
        new_i[i2] = new_i2[i] = int(Bi @ Bi2)
        mask = np.ones(len(new_i), dtype=bool)
        mask[[i, i2]] = False
        old = (self.G[i, mask] ** 2).sum() + (self.G[i2, mask] ** 2).sum() + self.G[i, i2] ** 2
        new = (new_i[mask] ** 2).sum() + (new_i2[mask] ** 2).sum() + new_i[i2] ** 2
        return int(2 * (new - old)), new_i, new_i2

    def apply(self, a: int, b: int, new_i: np.ndarray, new_i2: np.ndarray) -> None:
        (i, j), (i2, j2) = self.ones[a], self.ones[b]
        self.B[i, j], self.B[i, j2], self.B[i2, j2], self.B[i2, j] = 0, 1, 0, 1
        self.G[i], self.G[:, i] = new_i, new_i
        self.G[i2], self.G[:, i2] = new_i2, new_i2
        self.ones[a] = (i, j2)
        self.ones[b] = (i2, j)


def balance(B: np.ndarray, rng: np.random.Generator, randomise: int, improve: int) -> np.ndarray:
    """Randomise by ``randomise`` swaps, then hill-climb ``improve`` proposals (see module doc)."""
    sw = _Swapper(B.copy(), rng)
    for budget, greedy in ((randomise, False), (improve, True)):
        for _ in range(budget):
            move = sw.propose()
            if move is None:
                continue
            a, b = move[0], move[1]
            change, new_i, new_i2 = sw.delta(a, b)
            if not greedy or change < 0:
                sw.apply(a, b, new_i, new_i2)
    return sw.B


#: one degree-preserving swap (propose it, the change of the overlaps, apply it), in ns: about
#: five interpreted steps plus SWAP_WORKER_COST per worker for the strided column of B and the
#: row and column of the overlap matrix that it reads and writes (measured about 30-60 us +
#: 50-90 ns per worker at n = 256..4096)
SWAP_COST = 50_000
SWAP_WORKER_COST = 64


def build(n: int, s: int, k: int | None, field: Field, rng: np.random.Generator,
          d: int = 3, sweeps: int = 50, *, budget: Budget) -> tuple[np.ndarray, dict[str, Any]]:
    k = n if k is None else k
    if not 1 <= d <= k:
        raise DesignError(f"the load -d must satisfy 1 <= d <= k = {k}, got {d}")
    if (n * d + k - 1) // k > n:
        raise DesignError(f"n = {n} workers with load {d} cannot spread over k = {k} partitions")
    if not 0 <= s < n:
        raise DesignError(f"s = {s} must be smaller than n = {n}")
    if not 0 <= sweeps <= 10_000:
        raise DesignError(f"`sweeps` must be between 0 and 10000, got {sweeps}")
    nnz = n * d
    budget.check_work(f"soft-bibd (n={n}, k={k}, d={d}, {sweeps} sweeps): "
                      f"{(10 + sweeps) * nnz:,} support swaps of O(n) each",
                      (10 + sweeps) * nnz * (SWAP_COST + SWAP_WORKER_COST * n),
                      "use fewer `sweeps` or a smaller n or d, or raise `max_work`")
    B0 = biregular_support(n, k, d, rng)
    B1 = balance(B0, rng, 10 * nnz, 0)
    B = balance(B1, rng, 0, sweeps * nnz)
    G = support_gram(B)
    off = G[~np.eye(n, dtype=bool)] if n > 1 else np.zeros(1, dtype=np.int64)
    recorded = {
        "d": d, "sweeps": sweeps, "variant": "gctool soft-bibd (reference §3.6)",
        "lambda_bar": float(off.mean()), "overlap_min": int(off.min()),
        "overlap_max": int(off.max()), "excess_before": overlap_excess(B1),
        "excess_after": overlap_excess(B),
    }
    return B.astype(field.dtype), recorded


class SoftBIBDFamily(Family):
    name = "soft-bibd"
    build = staticmethod(build)
    summary = "gctool's soft-BIBD: random bi-regular support, overlaps balanced toward a BIBD."
    description = (
        "Rows of weight d, columns as equal as possible; random degree-preserving swaps, "
        "then swaps that only lower sum_(i != i') overlap^2, pushing B B^T toward "
        "(d - lambda_bar) I + lambda_bar J (a BIBD is a zero of the excess). gctool's "
        "variant of Sakorikar-Wang's probabilistic relaxation (their exact rule is not "
        "reproduced). 0/1 entries, any field."
    )
    reference = "Sakorikar & Wang 2021 (SW21), variant by gctool; reference §3.6"
    randomized = True
    s_default = 0
    params = (
        Param("d", "int", "Load of every worker.", default=3, short="-d", flag="load"),
        Param("sweeps", "int", "Improvement proposals per nonzero of B.", default=50),
    )
    report_keys = ("lambda_bar", "overlap_min", "overlap_max", "excess_after")
    examples = ("gctool design soft-bibd -n 13 -d 4 `seed` 5",)
    file_params = {"d": Int(0, "k"), "sweeps": Int(0, 10**9)}
