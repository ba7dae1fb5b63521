"""The naive stopping path and the work meter of a simulation.

**Naive** (codes over GF(q) without the group shape, and every round a fast path cannot decide
clearly): :class:`PrefixDecoder` binary-searches the earliest decodable prefix of an arrival
order with the generic decoder (decodability is monotone in the set), with a cache.
"""

from __future__ import annotations

import numpy as np

from gctool.limits import DEFAULT_TOL
from gctool.model import GradientCode


class WorkMeter:
    """The work budget (:func:`gctool.limits.check_work`) enforced while a simulation runs:
    how many rounds need linear algebra depends on the drawn delays, so the work is counted as
    it is spent, and the run is refused (exit 2) as soon as the total passes the budget."""

    def __init__(self, code: GradientCode) -> None:
        self.code, self.spent = code, 0

    def charge(self, work: int, what: str) -> None:
        from gctool._signals import checkpoint
        from gctool.limits import check_work

        checkpoint()
        self.spent += int(work)
        check_work(f"simulating the {self.code.scheme} code (n={self.code.n}, "
                   f"k*m={self.code.B.shape[1]}): {what} so far", self.spent,
                   "simulate fewer --iterations, a smaller or better-conditioned code, or a "
                   "code with the group shape (FRC), or raise --max-work")


class PrefixDecoder:
    """Earliest decodable prefix of an arrival order by binary search with the generic decoder
    (the naive path; decodability is monotone in the set)."""

    def __init__(self, code: GradientCode, tol: float = DEFAULT_TOL) -> None:
        from gctool.decode import Decoder

        self.decoder = Decoder(code, tol)
        self.code_columns = int(code.B.shape[1])
        self.cache: dict[frozenset[int], bool] = {}
        self.meter = WorkMeter(code)

    def ok(self, workers: np.ndarray) -> bool:
        key = frozenset(int(i) for i in workers)
        hit = self.cache.get(key)
        if hit is None:
            from gctool.limits import set_cost

            self.meter.charge(set_cost(len(key), self.code_columns,
                                         self.decoder.exact), "exact decodes of arrival prefixes")
            hit = bool(self.decoder.decode(sorted(key)).ok) if key else False
            if len(self.cache) < 200_000:
                self.cache[key] = hit
        return hit

    def earliest(self, order: np.ndarray, cap: int) -> tuple[int, bool]:
        """(p, exact): smallest p <= cap whose prefix decodes, else (cap, False)."""
        if not self.ok(order[:cap]):
            return cap, False
        lo, hi = 1, cap
        while lo < hi:
            mid = (lo + hi) // 2
            if self.ok(order[:mid]):
                hi = mid
            else:
                lo = mid + 1
        return lo, True
