"""``verify exact``: exact rational decisions for real codes with integer/rational entries.

Entries are read as fractions (``Fraction(x).limit_denominator(10**6)`` must give back x
exactly, so 0.5 and 0.1 qualify and random Gaussian entries do not).  Rows are scaled to
integers (row scaling never changes decodability), the left null space N and a particular W
are computed in exact rational arithmetic once, and every straggler set is decided by the
reduced test of :mod:`gctool.audit.nullspace`:

* fast and rigorous: if ``N[:, S]^T`` has rank s modulo the prime p = 2^31 - 1, it has rank s
  over Q (a non-zero minor mod p is a non-zero integer), so the set decodes;
* every other set: fraction-free elimination of ``[N[:, S]^T | W_S]`` over the integers
  (numpy object arrays, vectorised over the batch).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from gctool.algebra.fields import Field
from gctool.algebra.gf import GFArith, IntArith
from gctool.algebra.linalg import eliminate
from gctool.algebra.rational import integer_rows, rref
from gctool.audit.chunks import ChunkEval, Kernel
from gctool.audit.nullspace import Reduction
from gctool.budget import RATIONAL_OP_COST, Budget
from gctool.errors import InvalidInput
from gctool.model import GradientCode

PRIME = 2**31 - 1
MAX_DENOMINATOR = 10**6


def _fraction(x: float) -> Fraction | None:
    f = Fraction(x).limit_denominator(MAX_DENOMINATOR)
    return f if float(f) == x else None


def input_work(values: int) -> float:
    """Estimated work of reading ``values`` distinct entries of B as fractions (:func:`_fraction`:
    ``limit_denominator`` and the check that it gives the entry back), in ns of one core: one
    exact rational operation each (:data:`gctool.budget.RATIONAL_OP_COST`, as the
    exact reduction and decisions count theirs; measured 2-9 us a value, thread CPU time, one
    core of the 2-core development machine under load: halves 2.3 us, p/q with p, q < 1000
    8 us, random reals 9 us)."""
    return float(values * RATIONAL_OP_COST)


def check_exact_input(code: GradientCode, budget: Budget | None = None) -> float:
    """Check that ``code`` is one ``exact`` decides: real, with integer or rational entries
    (:data:`MAX_DENOMINATOR`); else one line of :class:`~gctool.errors.InvalidInput`.  Each
    distinct non-integer entry is read as a fraction, held to ``budget`` (estimated by
    :func:`input_work`, refused in one line above it; integers need no look); the first is
    read before (a random real code is refused as not rational).  Returns the work admitted
    (ns of one core), for the run to spend."""
    if code.field.kind != "real":
        raise InvalidInput(
            f"`exact` applies to real codes with rational entries; the field is {code.field}"
            + (" (finite-field audits are always exact)" if code.field.is_finite else ""))
    B = np.asarray(code.B)
    whole = B == np.round(B)
    if whole.all():  # integers need no look at each value
        return 0.0
    values = np.unique(B[~whole])
    work = input_work(values.size)
    if _fraction(float(values[0])) is not None and budget is not None:
        n, K = B.shape
        budget.check_work(f"verify (n={n}, k*m={K}, real) with `exact`: reading the "
                          f"{values.size:,} distinct non-integer entries of B as fractions",
                          work, "raise `max_work`")
    bad = next((x for x in values if _fraction(float(x)) is None), None)
    if bad is not None:  # the first one: a random real code fails at its first entry
        raise InvalidInput(
            f"`exact` needs integer or rational entries (denominators <= "
            f"{MAX_DENOMINATOR:,}); B has {float(bad)!r}")
    return work


def _integer_rows(code: GradientCode) -> list[list[int]]:
    """B with every row scaled by the lcm of its denominators (exact)."""
    return integer_rows([_fraction(float(x)) or Fraction(0) for x in row]
                        for row in np.asarray(code.B))


def _integral(vec: list[Fraction]) -> list[int]:
    return integer_rows([vec])[0]


def reduce_rational(code: GradientCode) -> Reduction:
    """Exact left null space N (integer rows) and W (integer columns, scaled) of B."""
    Bz = _integer_rows(code)
    n, K = code.n, len(Bz[0])
    T = code.targets().astype(np.int64)
    m = T.shape[0]
    aug = [[Fraction(Bz[i][j]) for i in range(n)] + [Fraction(int(T[u, j])) for u in range(m)]
           for j in range(K)]  # [B^T | T^T]
    R, piv = rref(aug, n)
    rank = len(piv)
    consistent = all(all(x == 0 for x in row[n:]) for row in R[rank:])
    W = [[Fraction(0)] * m for _ in range(n)]
    for r, c in enumerate(piv):
        for u in range(m):
            W[c][u] = R[r][n + u]
    free = [c for c in range(n) if c not in set(piv)]
    N = []
    for f in free:
        vec = [Fraction(0)] * n
        vec[f] = Fraction(1)
        for r, c in enumerate(piv):
            vec[c] = -R[r][f]
        N.append(_integral(vec))
    Wz = np.array([_integral([W[i][u] for i in range(n)]) for u in range(m)], dtype=object).T
    Nz = np.array(N, dtype=object).reshape(len(N), n)
    return Reduction(Nz, Wz, rank, consistent)


@dataclass
class RationalKernel(Kernel):
    """Exact decision of straggler sets over Q (mod-p screen, integer elimination)."""

    code: GradientCode
    red: Reduction
    _mod: GFArith | None = field(default=None, repr=False)
    _np: np.ndarray | None = field(default=None, repr=False)

    name = "rational"

    def __getstate__(self) -> dict[str, Any]:
        return {"code": self.code, "red": self.red, "_mod": None, "_np": None}

    def chunk_size(self, s: int, given: bool = False) -> int:
        return max(1, min(8192, 200_000 // max(1, s * (self.red.d + self.code.m))))

    def set_time(self, s: int, sets: int) -> float:
        """Estimated time per set of size s, in ns: the mod-p screen of the numpy null-space
        kernel over GF(p) (the sets it does not settle are decided with integers)."""
        from gctool.audit.nullspace import nullspace_time

        return nullspace_time(self.red, s, self.code.m, Field("gf", PRIME))

    def evaluate(self, S: np.ndarray) -> ChunkEval:
        if self._mod is None:
            self._mod = GFArith(Field("gf", PRIME))
        out = ChunkEval.blank(S.shape[0])
        d, s = self.red.d, S.shape[1]
        NT = self.red.N.T  # (n, d) Python ints
        if d >= s and s > 0:
            if self._np is None:  # N^T modulo p, once
                self._np = np.array([[int(x) % PRIME for x in row] for row in NT],
                                    dtype=np.int64).reshape(NT.shape)
            _, rank = eliminate(self._mod, self._np[S], d)
            out.ok[:] = rank == s
        doubt = np.flatnonzero(~out.ok)
        if doubt.size:
            Sd = S[doubt]
            aug = np.concatenate([NT[Sd], self.red.W[Sd]], axis=2)
            out.ok[doubt], _ = eliminate(IntArith(), aug, d)
        return out
