"""The (B, W, λ)-bursty straggler model of sequential gradient coding (reference §5.2).

A straggler pattern is a sequence of straggler sets, one per round.  gctool stores a set as a
bit mask (bit i = worker i straggles), so that patterns hash cheaply during exhaustive search.

The pattern is *admissible* when, in every window of W consecutive rounds,

(i)  at most λ distinct workers straggle, and
(ii) each worker's straggling rounds inside the window lie within one interval of B rounds
     (one burst of length <= B).

Following the authors' simulator [KEK23, C: mamaj/Sequential-Gradient-Coding-2,
``follows_straggler_model``], both conditions are checked at every round r on the window that
ends at r: (i) the union of the straggler sets of rounds r-W+1..r has at most λ workers;
(ii) a worker straggling in round r did not straggle in rounds r-W+1..r-B.  Checking every
window ending at every round covers every window.  (ii) is equivalent to the interval form: two
straggling rounds t1 < t2 of one worker inside a window violate it exactly when t2 - t1 >= B.
Rounds before round 0 have no stragglers.

Both conditions are monotone: removing workers from the current round's set never breaks them.
:meth:`BurstyModel.allows` is therefore monotone in ``S``, which the simulator's waiting rule
uses (:func:`earliest_admissible`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import TYPE_CHECKING, Any

from gctool.errors import InvalidInput
from gctool.wording import noun

if TYPE_CHECKING:
    import numpy as np

History = tuple[int, ...]  # straggler masks of the last W-1 rounds, oldest first


def popcount(mask: int) -> int:
    return bin(mask).count("1")


def members(mask: int) -> list[int]:
    """The workers in a mask, in increasing order."""
    out, i = [], 0
    while mask:
        if mask & 1:
            out.append(i)
        mask >>= 1
        i += 1
    return out


def to_mask(workers: Sequence[int]) -> int:
    mask = 0
    for i in workers:
        mask |= 1 << int(i)
    return mask


#: largest window W (rounds) of the bursty model; the design's schedule has W slots
MAX_WINDOW = 10_000


@dataclass(frozen=True)
class BurstyModel:
    """(B, W, λ)-bursty stragglers among n workers."""

    n: int
    burst: int  # B
    window: int  # W
    lam: int  # λ

    def __post_init__(self) -> None:
        for name, value, low in (("n", self.n, 1), ("burst", self.burst, 1),
                                 ("window", self.window, 1), ("lambda", self.lam, 0)):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise InvalidInput(f"{name} must be an integer >= {low}, got {value!r}")
        if self.burst >= self.window:
            raise InvalidInput(f"the burst length B = {self.burst} must be smaller than the "
                               f"window W = {self.window}")
        if self.window > MAX_WINDOW:  # schedules and delays grow with W (found by fuzzing)
            raise InvalidInput(f"the window W = {self.window} is above gctool's limit of "
                               f"{MAX_WINDOW:,} rounds")
        if self.lam > self.n:
            raise InvalidInput(f"lambda = {self.lam} cannot exceed n = {self.n}")

    @property
    def full(self) -> int:
        return (1 << self.n) - 1

    # -- one round -------------------------------------------------------------------------------
    def _split(self, history: History) -> tuple[int, int]:
        """(union of the last W-1 rounds, union of rounds r-W+1..r-B) for the next round r."""
        recent = history[-(self.window - 1):] if self.window > 1 else ()
        union = 0
        for m in recent:
            union |= m
        old = 0
        # rounds r-W+1 .. r-B are the first (W-1) - (B-1) = W-B entries of the W-1 recent ones
        pad = (self.window - 1) - len(recent)
        for idx, m in enumerate(recent):
            if idx + pad < self.window - self.burst:
                old |= m
        return union, old

    def allows(self, history: History, S: int) -> bool:
        """Whether straggler set ``S`` in the next round keeps the pattern admissible."""
        union, old = self._split(history)
        return not (S & old) and popcount(union | S) <= self.lam

    def next_sets(self, history: History) -> Iterator[int]:
        """Every admissible straggler set of the next round (the empty set first)."""
        union, old = self._split(history)
        free_old = members(union & ~old & self.full)  # already counted against λ
        fresh = members(self.full & ~union & ~old)
        budget = self.lam - popcount(union)
        for c in range(0, max(budget, 0) + 1):
            for new in combinations(fresh, c):
                base = to_mask(new)
                for a in range(len(free_old) + 1):
                    for again in combinations(free_old, a):
                        yield base | to_mask(again)

    def push(self, history: History, S: int) -> History:
        """The history after a round with straggler set ``S``."""
        if self.window == 1:
            return ()
        return (history + (S,))[-(self.window - 1):]

    # -- whole patterns --------------------------------------------------------------------------
    def violation(self, pattern: Sequence[int]) -> str | None:
        """Why a pattern is not admissible (None if it is)."""
        history: History = ()
        for r, S in enumerate(pattern):
            if S & ~self.full:
                return f"round {r}: a straggler index is outside 0..{self.n - 1}"
            union, old = self._split(history)
            if S & old:
                who = members(S & old)
                return (f"round {r}: {noun(len(who), 'worker')} {who} "
                        f"{noun(len(who), 'straggles', 'straggle')} again after a gap, breaking "
                        f"the burst limit B = {self.burst} inside a window of W = {self.window}")
            if popcount(union | S) > self.lam:
                who = members(union | S)
                return (f"rounds {max(0, r - self.window + 1)}..{r}: {len(who)} distinct "
                        f"stragglers {who} > lambda = {self.lam}")
            history = self.push(history, S)
        return None


def from_bits(bits: Any) -> int:
    """The mask of a boolean array (bit i = entry i)."""
    import numpy as np

    packed = np.packbits(np.asarray(bits, dtype=bool), bitorder="little")
    return int.from_bytes(packed.tobytes(), "little")


def earliest_admissible_sorted(model: BurstyModel, history: History, arrival_order: Any) -> int:
    """:func:`earliest_admissible` in O(n) array operations (the simulator's hot path).

    Declaring the workers after the first p arrivals stragglers (set S) is admissible iff
    (a) every worker that straggled in rounds r-W+1..r-B has arrived, and (b) at most
    λ - |union of the last W-1 rounds| workers outside that union are still running.  Both
    are thresholds on p, so the answer is the larger of the two thresholds.
    """
    import numpy as np

    order = np.asarray(arrival_order, dtype=np.intp)
    n = len(order)
    pos = np.empty(n, dtype=np.intp)
    pos[order] = np.arange(n)
    union, old = model._split(history)
    in_union = _bits(union, n)
    need = 0
    old_bits = _bits(old, n)
    if old_bits.any():
        need = int(pos[old_bits].max()) + 1
    budget = model.lam - int(in_union.sum())
    outside = np.sort(pos[~in_union])
    must = len(outside) - budget  # of the workers outside the union, this many must arrive
    if must > len(outside):
        return n
    if must > 0:
        need = max(need, int(outside[must - 1]) + 1)
    return need


def _bits(mask: int, n: int) -> np.ndarray:
    import numpy as np

    raw = np.frombuffer(mask.to_bytes((n + 7) // 8, "little"), dtype=np.uint8)
    return np.unpackbits(raw, bitorder="little")[:n].astype(bool)


def earliest_admissible(model: BurstyModel, history: History, arrival_order: Sequence[int]
                        ) -> int:
    """Smallest p such that declaring every worker after the first p arrivals a straggler is
    admissible (p = n always is: nobody straggles)."""
    remaining = model.full
    if model.allows(history, remaining):
        return 0
    for p, i in enumerate(arrival_order, start=1):
        remaining &= ~(1 << int(i))
        if model.allows(history, remaining):
            return p
    return len(arrival_order)
