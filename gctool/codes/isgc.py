"""IS-GC: gradient coding with arbitrary ignorance of stragglers ("On Arbitrary Ignorance of
Stragglers with Gradient Coding", 2022; the IS-GC/IS-GC repository's ``IS_GC_FR``,
``IS_GC_CR``, ``IS_GC_HR``).

Every worker holds c partitions (k = n) and sends their plain sum (a 0/1 row of B).  However
many workers the master waits for, it *ignores* the rest: among the workers that arrived it
takes a largest set whose partitions do not overlap and sums their messages, which gives the
exact sum of the partitions they cover (all k when the set covers every partition; otherwise
the master rescales the partial sum by k / covered).  Three placements, one scheme each:

* ``is-fr`` (fractional repetition): groups of c consecutive workers hold the same c
  partitions (the FRC support); the set is one worker per group that arrived.
* ``is-cr`` (cyclic repetition): worker i holds ``i, ..., i+c-1 (mod n)``; the set is a largest
  family of disjoint arcs of length c among the arrived workers (exact, by the greedy from
  every start).
* ``is-hr`` (hybrid repetition): n = g n0 workers in g groups; worker i (position p in its group)
  holds the c1 partitions before p in its group (cyclically) and the c2 partitions i, ...,
  i+c2-1 (mod n); the set is found by an exact search over the arrived workers.

``s`` is the number of stragglers the IS decoder tolerates *exactly*: c - 1 for ``is-fr`` and
``is-cr`` (with c | n some group, or residue class mod c, has every worker), and for ``is-hr``
the largest t such that every set of t stragglers leaves a disjoint cover (found by exhaustive
search at design time, recorded as ``is_tolerance``; -1 when even all n workers have no
disjoint cover, and the file then records s = 0: the IS decoder is approximate always; over
GF(q) such a placement is refused when its rows do not span the all-ones vector, e.g. GF(2)).
The optimal decoder of the same B is at least as good, so ``gctool verify`` passes at that s.
``gctool simulate`` races the files with the IS decoder (:mod:`gctool.sim.contenders.isgc`).
"""

from __future__ import annotations

from collections.abc import Callable
from math import comb
from typing import TYPE_CHECKING, Any

from gctool._lazy import numpy as np
from gctool.algebra.fields import Field
from gctool.budget import Budget
from gctool.errors import DesignError
from gctool.family import Family
from gctool.params import LABEL, Int
from gctool.registry.info import Param

if TYPE_CHECKING:
    from gctool.model import GradientCode
    from gctool.sim.contenders.base import Contender

#: straggler sets the design of ``is-hr`` may try to find its exact tolerance
MAX_TOLERANCE_SETS = 200_000


# -- decoders: a largest set of arrived workers with disjoint supports ----------------------------
def fr_set(c: int, arrived: np.ndarray) -> np.ndarray:
    """IS-FR: the first arrived worker of every group (groups of c consecutive workers)."""
    arrived = np.asarray(arrived)
    _, first = np.unique(arrived // c, return_index=True)
    return np.asarray(arrived[np.sort(first)])


def cr_set(n: int, c: int, arrived: np.ndarray) -> np.ndarray:
    """IS-CR: a largest set of pairwise disjoint arcs {i, ..., i+c-1} (mod n) among the arrived
    workers.  With the first arc fixed the problem is interval scheduling on a line, which the
    greedy (next arc starting at least c further) solves; every arrived start is tried, all at
    once (numpy over the starts, one step per arc)."""
    starts = np.unique(np.asarray(arrived, dtype=np.int64))
    A = len(starts)
    if A == 0:
        return starts
    ext = np.concatenate([starts, starts + n, [np.iinfo(np.int64).max]])  # unrolled circle
    nxt = np.searchsorted(ext[:-1], ext[:-1] + c)  # the next arc that does not overlap
    nxt = np.append(nxt, 2 * A)
    limit = starts + n - c  # later arcs would overlap the first one again
    cur, count = np.arange(A), np.ones(A, dtype=np.int64)
    alive = np.ones(A, dtype=bool)
    while alive.any():
        cand = nxt[cur]
        alive &= ext[cand] <= limit
        cur = np.where(alive, cand, cur)
        count += alive
    at = int(np.argmax(count))
    out = []
    for _ in range(int(count[at])):
        out.append(int(ext[at] % n))
        at = int(nxt[at])
    return np.array(sorted(out), dtype=np.int64)


def masks_of(supports: list[np.ndarray]) -> list[int]:
    return [sum(1 << int(j) for j in sup) for sup in supports]


def exact_set(masks: list[int], arrived: np.ndarray, k: int) -> np.ndarray:
    """A largest set of arrived workers with pairwise disjoint supports (bit masks), by an
    exact branch and bound on the lowest partition not yet decided (take one of the arrived
    workers holding it, or leave it uncovered)."""
    workers = [int(i) for i in arrived]
    holders: dict[int, list[int]] = {}
    for w in workers:
        m = masks[w]
        while m:
            j = (m & -m).bit_length() - 1
            holders.setdefault(j, []).append(w)
            m &= m - 1
    width = max(1, min((bin(masks[w]).count("1") for w in workers), default=1))
    best: list[int] = []

    def search(j: int, used: int, chosen: list[int]) -> None:
        nonlocal best
        while j < k and (used >> j) & 1:
            j += 1
        if len(chosen) > len(best):
            best = list(chosen)
        free = k - j - bin(used >> j).count("1")  # partitions still coverable
        if j >= k or len(chosen) + free // width <= len(best):
            return
        for w in holders.get(j, ()):
            if not masks[w] & used:
                chosen.append(w)
                search(j + 1, used | masks[w], chosen)
                chosen.pop()
        search(j + 1, used | (1 << j), chosen)  # leave partition j uncovered

    search(0, 0, [])
    return np.array(sorted(best), dtype=np.int64)


# -- placements ----------------------------------------------------------------------------------
def _check_c(n: int, s: int, scheme: str) -> int:
    c = s + 1
    if n % c:
        raise DesignError(f"{scheme} needs c = s + 1 to divide n (the IS decoder is exact with "
                          f"up to s stragglers only then); s + 1 = {c} does not divide n = {n}")
    return c


def build_fr(n: int, s: int, k: int | None, field: Field, rng: Any, *, budget: Budget
             ) -> tuple[np.ndarray, dict[str, Any]]:
    c = _check_c(n, s, "is-fr")
    _k_is_n(k, n, "is-fr")
    B = np.kron(np.eye(n // c, dtype=np.int64), np.ones((c, c), dtype=np.int64))
    return B.astype(field.dtype), {"c": c, "placement": "fractional: groups of c workers "
                                   "share c partitions"}


def build_cr(n: int, s: int, k: int | None, field: Field, rng: Any, *, budget: Budget
             ) -> tuple[np.ndarray, dict[str, Any]]:
    c = _check_c(n, s, "is-cr")
    _k_is_n(k, n, "is-cr")
    B = np.zeros((n, n), dtype=np.int64)
    for i in range(n):
        B[i, [(i + t) % n for t in range(c)]] = 1
    return B.astype(field.dtype), {"c": c, "placement": "cyclic: worker i holds i..i+c-1 mod n"}


def hybrid_supports(n: int, groups: int, c1: int, c2: int) -> list[list[int]]:
    n0 = n // groups
    out = []
    for w in range(n):
        p, base = w % n0, w - w % n0
        own = [base + (p + j) % n0 for j in range(n0 - c1, n0)]
        cyc = [(w + t) % n for t in range(c2)]
        out.append(sorted(set(own) | set(cyc)))
    return out


def build_hr(n: int, s: int | None, k: int | None, field: Field, rng: Any, groups: int = 2,  # noqa: PLR0913 (the scheme's options)
             within: int = 1, across: int = 1, *, budget: Budget
             ) -> tuple[np.ndarray, dict[str, Any]]:
    _k_is_n(k, n, "is-hr")
    for name, v, lo in (("groups", groups, 1), ("within", within, 0), ("across", across, 0)):
        if isinstance(v, bool) or not isinstance(v, int) or v < lo:
            raise DesignError(f"is-hr: {name} must be an integer >= {lo}, got {v!r}")
    if n % groups:
        raise DesignError(f"is-hr needs the groups to divide n: {groups} does not divide {n}")
    n0, c = n // groups, within + across
    if c < 1 or c > n0:
        raise DesignError(f"is-hr needs 1 <= within + across <= n/groups = {n0}")
    sup = hybrid_supports(n, groups, within, across)
    if any(len(x) != c for x in sup):
        raise DesignError("is-hr: the within-group and cyclic partitions of a worker overlap "
                          "(choose within + across <= n/groups)")
    B = np.zeros((n, n), dtype=np.int64)
    for w, x in enumerate(sup):
        B[w, x] = 1
    masks = masks_of([np.array(x) for x in sup])
    sets = sum(comb(n, t) for t in range(c + 1))
    budget.check_work(f"is-hr (n={n}): its exact IS tolerance over {sets:,} straggler sets",
                      sets * n * 50, "choose a smaller n")
    if sets > MAX_TOLERANCE_SETS:
        raise DesignError(f"is-hr: finding its exact tolerance needs {sets:,} straggler sets, "
                          f"above {MAX_TOLERANCE_SETS:,}; choose a smaller n")
    tol = tolerance(masks, n)
    if tol < 0 and field.is_finite:  # s = 0 rests on the optimal decoder with every worker
        _refuse_undecodable(B, field, n)
    return B.astype(field.dtype), {
        "s": max(tol, 0), "is_tolerance": tol, "c": c, "groups": groups, "within": within,
        "across": across,
        "placement": f"hybrid: {groups} groups of {n0}; worker at position p holds the "
                     f"{within} partitions before p in its group and {across} from itself on"}


def _refuse_undecodable(B: np.ndarray, field: Field, n: int) -> None:
    """Refuse a placement whose rows do not span the all-ones vector over the finite
    ``field`` (exact ranks): with no disjoint cover its file records s = 0, which only the
    optimal decoder with all n workers can meet (over R/C the design's self-check refuses the
    same, :func:`gctool.codes.self_check`)."""
    from gctool.algebra.linalg import matrix_rank

    ones = np.ones((1, n), dtype=np.int64)
    if matrix_rank(field, np.vstack([B, ones])) > matrix_rank(field, B):
        raise DesignError(f"is-hr over {field}: no set of workers covers every partition "
                          f"disjointly, and over {field} the rows cannot decode even with all "
                          f"{n} workers (they do not span the all-ones vector); use `field`=real "
                          "or another `within`/`across`")


def tolerance(masks: list[int], n: int) -> int:
    """The largest t such that every set of t stragglers leaves a disjoint cover of all n
    partitions (exhaustive, with the exact decoder); -1 when not even everyone covers them."""
    from itertools import combinations

    everyone = np.arange(n)
    if _covered(masks, exact_set(masks, everyone, n)) < n:
        return -1
    for t in range(1, n + 1):
        for S in combinations(range(n), t):
            if _covered(masks, exact_set(masks, np.setdiff1d(everyone, S), n)) < n:
                return t - 1
    return n


def _covered(masks: list[int], chosen: np.ndarray) -> int:
    return sum(bin(masks[int(w)]).count("1") for w in chosen)


def _k_is_n(k: int | None, n: int, scheme: str) -> None:
    if k is not None and k != n:
        raise DesignError(f"{scheme} has k = n partitions (got k = {k}); drop -k")


_FILE = {"c": Int(1, "n"), "placement": LABEL}
_DECODER = ("every worker sends the plain sum of its c partitions; the master sums a largest "
            "set of arrived workers with disjoint partitions and rescales by k / covered")
REFERENCE = ("IS-GC, 'On Arbitrary Ignorance of Stragglers with Gradient Coding' (2022); "
             "IS-GC/IS-GC ray_gc.py")


class ISFamily(Family):
    """The IS-GC families: in ``gctool simulate`` a file is decoded by its IS decoder."""

    def chooser(self, code: GradientCode) -> Callable[[np.ndarray], np.ndarray]:
        """The IS decoder: arrived workers -> the disjoint set the master sums (a search over
        the file's supports; the repetition placements override it with their rule)."""
        masks = masks_of([np.flatnonzero(row) for row in np.asarray(code.B) != 0])
        return lambda arrived: exact_set(masks, arrived, code.k)

    def contender(self, code: GradientCode, label: str) -> Contender:
        from gctool.sim.contenders.isgc import ISDecoding

        return ISDecoding(code, label, self.chooser(code))


class ISFRFamily(ISFamily):
    name = "is-fr"
    build = staticmethod(build_fr)
    summary = "IS-GC on fractional repetition: one worker per group, ignoring the rest."
    description = (
        "Groups of c = s+1 workers share c partitions (needs (s+1) | n); "
        + _DECODER + ". Exact with up to s stragglers, approximate beyond."
    )
    reference = REFERENCE
    examples = ("gctool design is-fr -n 12 -s 2",)
    self_checked = True
    grouped = True
    file_params = _FILE

    def chooser(self, code: GradientCode) -> Callable[[np.ndarray], np.ndarray]:
        c = int(code.params.get("c", 1))
        return lambda arrived: fr_set(c, arrived)


class ISCRFamily(ISFamily):
    name = "is-cr"
    build = staticmethod(build_cr)
    summary = "IS-GC on cyclic repetition (0/1): a largest set of disjoint arcs."
    description = (
        "Worker i holds partitions i..i+c-1 mod n, c = s+1 (needs (s+1) | n); "
        + _DECODER + ". Exact with up to s stragglers (some residue class mod c "
        "arrives whole), approximate beyond."
    )
    reference = REFERENCE
    examples = ("gctool design is-cr -n 12 -s 2",)
    self_checked = True
    file_params = _FILE

    def chooser(self, code: GradientCode) -> Callable[[np.ndarray], np.ndarray]:
        c = int(code.params.get("c", 1))
        return lambda arrived: cr_set(code.n, c, arrived)


class ISHRFamily(ISFamily):
    name = "is-hr"
    build = staticmethod(build_hr)
    summary = "IS-GC on hybrid repetition: partitions within a group and across groups."
    description = (
        "n = g n0 workers in g groups; a worker holds `within` partitions of its "
        "group (cyclically before it) and `across` partitions from itself on "
        "(cyclically over all n); " + _DECODER + ". s is the exact IS tolerance, "
        "found by exhaustive search at design time."
    )
    reference = REFERENCE
    uses = frozenset({"n", "field"})
    params = (Param("groups", "int", "Groups g (g | n).", default=2),
              Param("within", "int", "Partitions within the worker's group (c1).", default=1),
              Param("across", "int", "Partitions across groups (c2).", default=1))
    report_keys = ("c",)
    examples = ("gctool design is-hr -n 12 `groups` 2 `within` 2 `across` 1",)
    self_checked = True
    file_params = {**_FILE, "groups": Int(1, "n"), "within": Int(0, "n"),
                   "across": Int(0, "n"), "is_tolerance": Int(-1, "n")}
