"""The stopping rule of one code: which oracle decides it, and how its rounds are split
between the fast paths and the naive one (see :mod:`gctool.sim.stopping`)."""

from __future__ import annotations

from collections.abc import Callable
from math import ceil, comb

import numpy as np

from gctool.budget import Meter
from gctool.limits import DEFAULT_TOL
from gctool.model import GradientCode
from gctool.numerics import EPS, decode_limit
from gctool.sim.stopping.dual import (
    DUAL_FROM,
    WALK,
    Dual,
    DualWalk,
    dual_of,
    near_share,
    verdict_cost,
)
from gctool.sim.stopping.groups import Groups, group_labels
from gctool.sim.stopping.naive import PrefixDecoder, search_cost
from gctool.sim.stopping.qr import MARGIN, PrefixQR, qr_cost, qr_decides
from gctool.sim.stopping.sparse import SPARSE_DENSITY, SPARSE_FROM, dual_for


class StopRule:
    """Decodability oracle of one code; ``kind`` says which (a label): ``"groups"``, ``"qr"``
    (real and complex codes, with the dual walk for real ones) or ``"naive"``."""

    def __init__(self, code: GradientCode, tol: float = DEFAULT_TOL, dual: str = "auto",
                 meter: Meter | None = None) -> None:
        self.code, self.tol = code, tol
        self.naive = PrefixDecoder(code, tol, meter)
        self.dual_method: str | None = None  # "svd" | "sparse" (real codes), see dual_for
        self.labels = group_labels(code)
        self.fallbacks = 0  # rounds the fast path handed to the naive one
        self._masks: dict[int, bool] = {}
        self._dual: Dual | None = None
        self._walk: DualWalk | None = None
        limit = decode_limit(code.k, tol)
        if self.labels is not None:
            self.kind = "groups"
            self._groups = Groups(self.labels)
            self._prefixes = self._group_prefixes
            self._verdict = self._group_verdict
        elif not code.field.is_finite:
            self.kind = "qr"
            Bt = np.ascontiguousarray(np.asarray(code.B).T)  # (K, n)
            Tt = code.targets().T.astype(Bt.dtype)  # (K, m)
            self._qr = PrefixQR(Bt, Tt, limit, self.naive.meter)
            if not np.iscomplexobj(Bt):
                self._dual = dual_for(Bt.T, Tt, limit / MARGIN, code.s, dual, self.naive.meter)
                self.dual_method = None if self._dual is None else self._dual.method
            if self._dual is not None:
                self._walk = DualWalk(self._dual, limit, code.n, self.naive.meter)
            self._prefixes = self._algebra_prefixes
            self._verdict = self._algebra_verdict
        else:
            self.kind = "naive"
            self._prefixes = self._naive_prefixes
            self._verdict = self._naive_verdict

    # -- whole runs ------------------------------------------------------------------------------
    def earliest(self, times: np.ndarray, cap: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(order, p, exact) per round: stable arrival order, stopping prefix, exact decoding."""
        order = np.argsort(times, axis=1, kind="stable")
        if len(times) == 0:
            return order, np.zeros(0, np.int64), np.zeros(0, bool)
        p, exact = self._prefixes(order, cap)
        return order, p, exact

    def _group_prefixes(self, order: np.ndarray, cap: int) -> tuple[np.ndarray, np.ndarray]:
        return self._groups.earliest(order, cap)

    def _naive_prefixes(self, order: np.ndarray, cap: int, todo: np.ndarray | None = None,
                        p: np.ndarray | None = None, exact: np.ndarray | None = None
                        ) -> tuple[np.ndarray, np.ndarray]:
        R = len(order)
        p = np.empty(R, np.int64) if p is None else p
        exact = np.empty(R, bool) if exact is None else exact
        for r in (range(R) if todo is None else todo):
            p[r], exact[r] = self.naive.earliest(order[r], cap)
        return p, exact

    def _algebra_prefixes(self, order: np.ndarray, cap: int) -> tuple[np.ndarray, np.ndarray]:
        """The dual walk (large caps), then batched QR, then the naive path for the rounds
        neither decides clearly."""
        R = len(order)
        p = np.empty(R, np.int64)
        exact = np.empty(R, bool)
        todo = np.arange(R)
        if cap >= DUAL_FROM and self._walk is not None:
            todo = self._walk.walk(order, cap, p, exact)
            if len(todo):
                sub_p, sub_e = np.empty(len(todo), np.int64), np.empty(len(todo), bool)
                rest = self._qr.decide(order[todo], cap, sub_p, sub_e)
                done = np.setdiff1d(np.arange(len(todo)), rest)
                p[todo[done]], exact[todo[done]] = sub_p[done], sub_e[done]
                todo = todo[rest]
        elif cap > 0:
            todo = self._qr.decide(order, cap, p, exact)
        self.fallbacks += len(todo)
        return self._naive_prefixes(order, cap, todo, p, exact)

    # -- one set of workers ----------------------------------------------------------------------
    def decodes_mask(self, mask: int) -> bool:
        """Whether the workers in ``mask`` (bit i = worker i delivered) decode exactly."""
        return self._verdict(mask)

    def _group_verdict(self, mask: int) -> bool:
        return self._groups.decodes_mask(mask)

    def _cached(self, mask: int, decide: Callable[[np.ndarray], bool]) -> bool:
        hit = self._masks.get(mask)
        if hit is None:
            from gctool.sequential.model import _bits

            hit = decide(np.flatnonzero(_bits(mask, self.code.n)))
            if len(self._masks) < 200_000:
                self._masks[mask] = hit
        return hit

    def _naive_verdict(self, mask: int) -> bool:
        return self._cached(mask, self.naive.ok)

    def _algebra_verdict(self, mask: int) -> bool:
        def decide(F: np.ndarray) -> bool:
            from gctool.sequential.model import _bits

            hit = None
            if self._walk is not None:
                hit = self._walk.verdict(np.flatnonzero(~_bits(mask, self.code.n)))
            if hit is None and len(F):
                p, exact = np.empty(1, np.int64), np.empty(1, bool)
                if not len(self._qr.decide(F[None, :], len(F), p, exact)):
                    hit = bool(exact[0])
            return self.naive.ok(F) if hit is None else hit

        return self._cached(mask, decide)


#: a set asked by mask (:meth:`StopRule.decodes_mask`, each distinct set once: its cache) and
#: not decided by groups: its workers and stragglers unpacked from the mask and the cache, a
#: few numpy calls on n bits, in ns (18-29 us measured at n = 16-128 with the verdict itself
#: stubbed, under load; 36-62 us when the members were a Python loop over the bits)
MASK_COST = 20_000

#: a real code with fewer workers than B has columns (rank at most n < K, so the targets lie
#: in its row space only by design) is factorised by :func:`decodes_in_full` when its SVD
#: (``solve_cost``) is estimated at most this many ns
FULL_CHECK_NS = 10_000_000


def decodes_in_full(code: GradientCode) -> bool:
    """Whether all n workers decode, as far as the support of B tells without factorising it:
    not when a partition is held by fewer than m workers (``verify``'s column-support check at
    s = 0, :func:`gctool.audit.certificates.column_support`: its pieces are out of reach of
    every set; Bernoulli and block codes with a partition nobody holds).  A real code of full
    support with fewer workers than B has columns whose SVD costs at most
    :data:`FULL_CHECK_NS` is factorised: the dual data's own check (:func:`dual_of`, as the
    rule's set-up does); a larger one whose rows are independent by one QR of
    ``[B^T | T^T]`` when that costs at most :data:`FULL_CHECK_NS` (the residual of the targets
    on the rows of B: the same verdict).  A code larger still, or with dependent rows, whose
    rank leaves the targets out does not decode either; the estimate takes it for one that
    does, and its rounds are charged to the run's meter as they are spent."""
    from gctool.budget import solve_cost

    if code.k == 0:
        return True
    if int(code.replication.min()) < code.m:
        return False
    B = np.asarray(code.B)
    n, K = B.shape
    if np.iscomplexobj(B) or n >= K:
        return True
    Tt = code.targets().T.astype(B.dtype)
    certain = decode_limit(code.k, DEFAULT_TOL) / MARGIN
    if solve_cost(n, K) <= FULL_CHECK_NS:
        return dual_of(B, Tt, certain) is not None
    if qr_cost(1, K, n, code.m, False) > FULL_CHECK_NS:
        return True
    # a larger code: the residual of the targets on the rows of B by one QR of [B^T | T^T]
    # (the prefix QR's of all n workers), which dual_of's verdict is where B has full rank
    R: np.ndarray = np.asarray(np.linalg.qr(np.hstack([B.T, Tt]), mode="r"))
    diag = np.abs(np.diagonal(R[:n, :n]))
    if diag.min() <= diag.max() * K * EPS * 1e4:  # rows of B dependent: not told this way
        return True
    return float(np.sum(np.abs(R[n:, n:]) ** 2)) <= certain


#: rounds of a run's draws on which an estimate finds where the dual walk stops
#: (:func:`walk_stops`)
STOP_SAMPLE = 16


def walk_stops(code: GradientCode, arrivals: np.ndarray, cap: int,
               unknown: int | None = None) -> np.ndarray | None:
    """The earliest decodable prefixes (at most ``cap + 1``: none) of a sample of
    :data:`STOP_SAMPLE` rounds of ``arrivals`` (rounds, n: a run's arrival times, drawn before
    its estimate), for :func:`rule_cost`'s ``stops``, where :class:`StopRule` walks down from
    the cap with the dual residual; None where it does not (a code over C or GF(q), of the
    group shape, or a cap below :data:`DUAL_FROM`).  A round whose prefix :data:`WALK`
    arrivals below the cap decodes walks to its end, wherever it stops (it is given that
    prefix); the others stop within the walk, found by bisection.  The code's own rule decides
    (its set-up, the SVD of B, made here when it costs at most :data:`FULL_CHECK_NS`; above,
    every round is given ``unknown``, or None is returned)."""
    from gctool.budget import solve_cost
    from gctool.sequential.model import from_bits
    from gctool.sim.budget import alone

    B = np.asarray(code.B)
    if (cap < DUAL_FROM or code.field.is_finite or np.iscomplexobj(B)
            or group_labels(code) is not None):
        return None
    R, n = arrivals.shape
    rows = np.unique(np.linspace(0, R - 1, min(R, STOP_SAMPLE)).astype(np.intp))
    if solve_cost(*B.shape) > FULL_CHECK_NS:
        return None if unknown is None else np.full(len(rows), unknown, np.int64)
    order = np.argsort(arrivals[rows], axis=1, kind="stable")
    rule = StopRule(code, meter=alone(f"estimating the walks of the {code.scheme} code"))

    def decodes(r: int, p: int) -> bool:
        prefix = np.zeros(n, bool)
        prefix[order[r, :p]] = True
        return rule.decodes_mask(from_bits(prefix))

    out = np.full(len(rows), cap - WALK, np.int64)
    for r in range(len(rows)):
        if decodes(r, cap - WALK):
            continue
        lo, hi = cap - WALK + 1, cap + 1  # the earliest decodable prefix lies in [lo, hi]
        while lo < hi:
            mid = (lo + hi) // 2
            if decodes(r, mid):
                hi = mid
            else:
                lo = mid + 1
        out[r] = lo
    return out


def rank_of(code: GradientCode) -> int:
    """The numerical rank of B over R or C (its singular values, as :func:`dual_of` cuts them)
    when they cost at most :data:`FULL_CHECK_NS`, else at most what its shape allows.  A QR of
    more arrivals than that is rank-deficient: the round goes on to the generic decoder."""
    from gctool.budget import solve_cost
    from gctool.numerics import numerical_rank

    B = np.asarray(code.B)
    n, K = B.shape
    if solve_cost(n, K) > FULL_CHECK_NS:
        return min(n, K)
    return int(numerical_rank(np.linalg.svd(B, compute_uv=False), B.shape))


def rule_cost(code: GradientCode, rounds: int, cap: int, probes: int | np.ndarray = 0,
              stops: np.ndarray | None = None) -> float:
    """Estimated work of :class:`StopRule` on ``code`` with the choices it makes, before any of
    it is done: its set-up, ``rounds`` stopping prefixes with ``cap`` (:meth:`StopRule.earliest`)
    and ``probes`` single sets (:meth:`StopRule.decodes_mask`): the workers of each distinct
    set, or how many sets of unknown size (by QR or the generic decoder counted at their
    largest, all n workers, by the dual residual at s stragglers), each with its mask's
    unpacking (:data:`MASK_COST`) unless groups decide it.

    The dual walk (:func:`walk_cost`) counts, without ``stops``, two residuals a round (at the
    cap and one arrival below: a code that decodes at the cap and not before), and for the
    expected share of rounds whose residual below the cap is near the tolerance
    (:func:`~gctool.sim.stopping.dual.near_share`) a QR and the generic decoder's search;
    longer walks are charged to the run's meter as they are spent.  ``stops``: where the
    rounds' earliest decodable prefixes are (a sample of them, read off the run's draws by the
    contender): each round's walk is counted as it runs.  A probe missing more workers than B
    has columns has no dual residual (G_SS, of rank at most K, is singular): it goes on to the
    QR or the generic decoder.  Codes over GF(q)
    without the group shape, and rounds no fast path can decide (below :data:`DUAL_FROM`, or
    complex, with more arrivals than B has columns: :func:`qr_decides`), count the generic
    decoder's binary search (:func:`~gctool.sim.stopping.naive.search_cost`).  A code that not
    even all n workers decode (:func:`decodes_in_full`) has no dual walk: every round and
    probe is a QR, and the generic decoder's one failing decode of the set where no set of
    that size has full rank (more arrivals than B has columns, or than columns held)."""
    from gctool.budget import PY_OP_COST, solve_cost
    from gctool.sim.stopping.sparse import SPARSE_SETUP_FACTOR

    n, K, m = code.n, int(code.B.shape[1]), code.m
    sized = not isinstance(probes, int)  # the workers of each probe are known
    if isinstance(probes, int):
        sizes, counts = np.array([n]), np.array([probes])
    else:
        sizes, counts = np.unique(np.asarray(probes, dtype=np.int64), return_counts=True)
    by_size = [(int(f), int(c)) for f, c in zip(sizes, counts, strict=True) if c]
    labels = group_labels(code)
    if labels is not None:  # counting
        return n * K + rounds * n + int(counts.sum()) * (int(labels.max()) + 1) * PY_OP_COST
    masks = int(counts.sum()) * MASK_COST  # every probe is asked by its mask
    if code.field.is_finite:
        if not sized:
            return masks + search_cost(code, rounds, cap, int(counts.sum()))
        return masks + search_cost(code, rounds, cap) + sum(search_cost(code, 0, f, c)
                                                            for f, c in by_size)
    B = np.asarray(code.B)
    full, complex_ = decodes_in_full(code), bool(np.iscomplexobj(B))
    nonzero = B != 0
    active = int(np.count_nonzero(nonzero.any(axis=1)))  # workers that hold something
    held = int(np.count_nonzero(nonzero.any(axis=0)))  # columns some worker holds
    rank = rank_of(code)

    def qr(sets: int, f: int, searches: bool) -> float:
        """``sets`` rounds (``searches``: prefixes of f arrivals) or probes of f workers by
        QR, and by the generic decoder where the rows of the set cannot have full rank: more
        of them than B has columns (:func:`qr_decides`), than it has columns held or than
        its rank (:func:`rank_of`), or an idle worker among them (the share of sets of f
        workers that have none)."""
        if not sets:
            return 0.0
        work = ((qr_cost(sets, K, f, m, complex_) if searches
                 else sets * qr_cost(1, K, f, m, complex_)) if qr_decides(K, f) else 0.0)
        share = (comb(active, f) / comb(n, f) if f <= n and qr_decides(min(K, held, rank), f)
                 else 0.0)
        naive = ceil(sets * (1.0 - share))
        if not naive:
            return work
        if not searches:  # one decode a probe
            return work + search_cost(code, 0, f, naive)
        return work + search_cost(code, naive, f, decodes=full)

    qr_rounds, qr_probes = qr(rounds, cap, True), sum(qr(c, f, False) for f, c in by_size)
    if complex_:
        return masks + qr_rounds + qr_probes
    s = code.s
    square, dense = n == K and 0 < s < n, np.count_nonzero(B) > SPARSE_DENSITY * B.size
    sparse = square and n >= SPARSE_FROM and not dense
    if sparse:
        work = SPARSE_SETUP_FACTOR * n * (s + 8) ** 2
    else:  # the SVD of B with its vectors (dual_of)
        work = solve_cost(n, K)
    if not full:  # dual_of finds no dual data: no walk
        return masks + work + qr_rounds + qr_probes

    def verdict(f: int) -> float:  # the dual residual of f stragglers (DualWalk.verdict)
        return verdict_cost(f, n, s > 0 or n > K, sparse)

    rounds_work = (walk_cost(code, rounds, cap, stops, verdict, rank) if cap >= DUAL_FROM
                   else qr_rounds)
    if not sized:
        return masks + work + rounds_work + int(counts.sum()) * verdict(max(s, 1))
    return masks + work + rounds_work + sum(
        c * verdict(n - f) + (qr(c, f, False) if n - f > K else 0.0) for f, c in by_size)


def walk_cost(code: GradientCode, rounds: int, cap: int, stops: np.ndarray | None,
              verdict: Callable[[int], float], rank: int) -> float:
    """The dual walk (:meth:`DualWalk.walk`) of ``rounds`` rounds.  ``stops`` None: two
    residuals a round (at the cap and one arrival below: a code that decodes at the cap and
    not before), and for the share near the tolerance a QR and the generic decoder's search.
    Else the rounds' earliest decodable prefixes are a sample ``stops`` (each standing for
    ``rounds / len(stops)`` rounds): a round stopping at p has the residual at the cap, one
    per prefix walked down while it decodes and the failing one below p (``verdict(f)``: f
    stragglers); a round still decoding
    :data:`WALK` arrivals below the cap leaves the walk after WALK + 1 residuals for the QR of
    the cap's prefix, and the generic decoder's search where the QR cannot decide (more
    arrivals than B has columns, :func:`qr_decides`, or than its ``rank``).  The walks that
    end count the share near the tolerance as :func:`rule_cost` does."""
    n, K, m = code.n, int(code.B.shape[1]), code.m
    if stops is None or not len(stops):
        near = rounds * near_share(decode_limit(code.k, DEFAULT_TOL))
        return (rounds * 2 * verdict(max(n - cap, code.s, 1))
                + near * (qr_cost(1, K, cap, m, False) + search_cost(code, 1, cap)))
    first = n - cap
    steps = np.clip(cap - np.asarray(stops, dtype=np.int64), -1, WALK)  # prefixes that decode
    weight = rounds / len(steps)
    counted = {int(j): float(c) * weight for j, c in zip(*np.unique(steps, return_counts=True),
                                                         strict=True)}
    residuals = [verdict(first + f) for f in range(WALK + 2)]  # f stragglers past the cap's
    work, cumulative = 0.0, np.cumsum(residuals)
    for j, c in counted.items():
        work += c * float(cumulative[j + 1 if j < WALK else WALK])
    ended = sum(c for j, c in counted.items() if j < WALK)
    left = ceil(counted.get(WALK, 0.0))
    near = ended * near_share(decode_limit(code.k, DEFAULT_TOL))
    work += near * (qr_cost(1, K, cap, m, False) + search_cost(code, 1, cap))
    if left and qr_decides(K, cap):
        work += qr_cost(left, K, cap, m, False)
    if left and not qr_decides(min(K, rank), cap):  # the cap's prefix is rank-deficient
        work += search_cost(code, left, cap)
    return work
