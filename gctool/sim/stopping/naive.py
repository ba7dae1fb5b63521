"""The naive stopping path.

**Naive** (codes over GF(q) without the group shape, and every round a fast path cannot decide
clearly): :class:`PrefixDecoder` binary-searches the earliest decodable prefix of an arrival
order with the generic decoder (decodability is monotone in the set), with a cache.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from gctool.budget import Meter
from gctool.limits import DEFAULT_TOL
from gctool.model import GradientCode
from gctool.sim.budget import alone

if TYPE_CHECKING:
    from gctool.decode import Decoder


class PrefixDecoder:
    """Earliest decodable prefix of an arrival order by binary search with the generic decoder
    (the naive path; decodability is monotone in the set)."""

    def __init__(self, code: GradientCode, tol: float = DEFAULT_TOL,
                 meter: Meter | None = None) -> None:
        self.code, self.tol = code, tol
        self.cache: dict[frozenset[int], bool] = {}
        self.meter = meter if meter is not None else alone(
            f"simulating the {code.scheme} code (n={code.n}, k*m={code.B.shape[1]})")
        self._decoder: Any = None

    @property
    def decoder(self) -> Decoder:
        """The generic decoder, built on first use (its set-up passes over every entry of B,
        and the fast paths decide most codes without it)."""
        if self._decoder is None:
            from gctool.decode import Decoder

            self._decoder = Decoder(self.code, self.tol)
        return self._decoder

    def ok(self, workers: np.ndarray) -> bool:
        key = frozenset(int(i) for i in workers)
        hit = self.cache.get(key)
        if hit is None:
            from gctool.decode.cost import single_call_time

            self.meter.charge(single_call_time(self.code, len(key)),
                              "exact decodes of arrival prefixes")
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


def search_cost(code: GradientCode, rounds: int, cap: int, probes: int = 0,
                decodes: bool = True) -> float:
    """Estimated work of :class:`PrefixDecoder` before any of it is done: ``rounds`` binary
    searches with ``cap`` (:meth:`PrefixDecoder.earliest`: the cap's prefix, then one decode
    per halving) and ``probes`` single sets, one decode each, at most one per distinct set:
    a call on one set, :func:`~gctool.decode.cost.single_call_time` of the cap's survivors.
    The rounds' prefixes of each size the search asks (of a round decoding at the cap) are
    decoded once each: their expected number of distinct sets (:func:`distinct`; a cap of
    all n workers is one set).  ``decodes`` False: not even all n workers decode, so a search
    ends at the cap's prefix, which fails (one decode per distinct prefix of ``cap``
    workers)."""
    from math import comb

    from gctool.decode.cost import single_call_time

    n, cap = code.n, min(max(cap, 1), code.n)
    sizes = [cap]  # the cap's prefix, then the bisection's (a round decoding at the cap)
    lo, hi = 1, cap
    while decodes and lo < hi:
        mid = (lo + hi) // 2
        sizes.append(mid)
        lo = mid + 1
    decoded = probes + sum(distinct(rounds, comb(n, f)) for f in sizes)
    return single_call_time(code, cap) * min(decoded, 2 ** min(n, 62))


def distinct(draws: int, kinds: int) -> float:
    """The expected number of distinct sets among ``draws`` drawn uniformly from ``kinds``
    (the generic decoder decodes each set once: its cache), at most ``draws``."""
    from math import expm1, log1p

    if draws <= 0 or kinds <= 0:
        return 0.0
    if kinds > 1e15:
        return float(draws)
    return min(float(draws), -kinds * expm1(draws * log1p(-1.0 / kinds)) if kinds > 1
               else 1.0)
