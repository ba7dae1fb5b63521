"""``simulate sgc search``: the SR-SGC and M-SGC baselines' (B, W, λ) chosen under a load
budget, trying every λ (the authors' parameter search).

Candidates (:func:`candidates`): every W <= ``max_window``, every B < W (SR-SGC also needs
B | W-1) and *every* λ in 1..n whose load is at most the budget (s + 1)/n of the file's GC.  No
grid: neither the time per job nor its order in λ is monotone (a larger λ lets a round end
earlier but puts more workers into the window's history, which later rounds must respect),
so a grid could miss the best λ.

Every candidate is scored by its time per job on the same delays: the sum of the round times
over the R - T jobs whose deadline falls in the run.  A round's end does not depend on what the
schedule decodes — gctool's rule stops at the earliest arrival that keeps the straggler pattern
(B, W, λ)-admissible, the authors' rule at (1 + μ) x the fastest (or the slowest, when that
is earlier) when that pattern is admissible and at the slowest otherwise — so the scoring
replays the bursty model alone (:func:`round_times`, a compiled loop over rounds; O(n W) per
round), without designing the candidate or running its schedule.  The winner is then designed
and run in full like any other contender (deadlines checked); tests check that its full run has
exactly the scored round times.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np

#: the parameter search's largest window W (the candidates' delay grows with W)
SEARCH_MAX_WINDOW = 4


def _figures(scheme: str) -> Callable[..., Any]:
    """The closed-form figures (load, delay, s) of a sequential scheme, from the registry."""
    from gctool.sequential.schedule import schedule_family

    return schedule_family(scheme).figures


def candidates(n: int, s: int, scheme: str, max_window: int = SEARCH_MAX_WINDOW
               ) -> list[tuple[int, int, int]]:
    """Every (B, W, λ) of ``scheme`` with W <= ``max_window`` whose load is at most the load
    (s + 1)/n of an (n, s)-GC."""
    budget = Fraction(s + 1, n)
    fig_of = _figures(scheme)
    out = []
    for window in range(2, max_window + 1):
        for burst in range(1, window):
            out += [(burst, window, lam) for lam in range(1, n + 1)
                    if (f := fig_of(n, burst, window, lam).load) is not None and f <= budget]
    return out


def _select(vals: Any, m: int, k: int) -> float:
    """The k-th smallest (0-based) of ``vals[:m]``, reordering them in place (Hoare's
    selection with a median-of-three pivot)."""
    lo, hi = 0, m - 1
    while lo < hi:
        mid = (lo + hi) // 2
        a, b, c = vals[lo], vals[mid], vals[hi]
        pivot = max(min(a, b), min(max(a, b), c))
        i, j = lo, hi
        while i <= j:
            while vals[i] < pivot:
                i += 1
            while vals[j] > pivot:
                j -= 1
            if i <= j:
                vals[i], vals[j] = vals[j], vals[i]
                i += 1
                j -= 1
        if k <= j:
            hi = j
        elif k >= i:
            lo = i
        else:
            return float(vals[k])
    return float(vals[k])


def _kth(times: Any, r: int, mask: Any, k: int, vals: Any) -> int:
    """The worker with the k-th smallest key (time, index) (k >= 1) among ``mask``: O(n)
    (a partition of the times, then the ties in index order), as in a stable sort; ``vals``
    is scratch space of n floats."""
    n = times.shape[1]
    m = 0
    for i in range(n):
        if mask[i]:
            vals[m] = times[r, i]
            m += 1
    tau = _select(vals, m, k - 1)
    less = 0
    for i in range(n):
        if mask[i] and times[r, i] < tau:
            less += 1
    seen = 0
    for i in range(n):
        if mask[i] and times[r, i] == tau:
            seen += 1
            if less + seen == k:
                return i
    return -1  # not reached


def _rank(times: Any, r: int, w: int) -> int:
    """Position of worker w in the stable arrival order of round r."""
    t = times[r, w]
    rank = 0
    for j in range(times.shape[1]):
        if times[r, j] < t or (times[r, j] == t and j < w):
            rank += 1
    return rank


#: the round loop reads its stop flag every this many rounds
HALT_EVERY = 256


def _rounds(times: Any, burst: int, window: int, lam: int, mu: float, halt: Any  # noqa: C901 (a numba kernel: one flat loop)
            ) -> tuple[Any, Any]:
    """Round times and straggler sets of the bursty model (``mu < 0``: gctool's rule, the
    earliest admissible arrival, at least one; else the authors' (1 + mu) rule).  The same
    decisions as :func:`gctool.sequential.model.earliest_admissible_sorted` over the stable
    arrival order and :meth:`gctool.sequential.model.BurstyModel.allows` (tests compare
    them), in O(n W) per round without sorting: gctool's rule needs the arrival positions of
    three workers only (the last old straggler, the (n - λ)-th arrival outside the window's
    stragglers, and the p-th arrival)."""
    R, n = times.shape
    h = window - 1  # history of the last W-1 rounds, oldest first (rounds < 0: empty)
    hist = np.zeros((h, n), dtype=np.bool_)
    late = np.zeros((R, n), dtype=np.bool_)
    durations = np.empty(R)
    union = np.empty(n, dtype=np.bool_)
    outside = np.empty(n, dtype=np.bool_)
    old = np.empty(n, dtype=np.bool_)
    everyone = np.ones(n, dtype=np.bool_)
    vals = np.empty(n)
    for r in range(R):
        if r % HALT_EVERY == HALT_EVERY - 1 and halt[0] != 0:
            break  # (the caller raises: gctool.engine.threads.raise_if_halted)
        in_union = 0
        last_old = -1
        for i in range(n):
            u = False
            o = False
            for j in range(h):
                if hist[j, i]:
                    u = True
                    if j < window - burst:  # rounds r-W+1 .. r-B
                        o = True
            union[i] = u
            outside[i] = not u
            old[i] = o
            in_union += u
            if o and (last_old < 0 or times[r, i] >= times[r, last_old]):
                last_old = i  # the latest key (time, index) among the old stragglers
        if mu < 0:
            # p = the larger of two arrival positions, at least 1; the p-th arrival w is
            # the worker that set it (or the fastest)
            need, w = 0, -1
            if last_old >= 0:
                need, w = _rank(times, r, last_old) + 1, last_old
            must = n - lam  # of the n - |union| outside workers, all but lam - |union|
            if lam < in_union:
                need, w = n, _kth(times, r, everyone, n, vals)
            elif must > 0:
                v = _kth(times, r, outside, must, vals)
                at = _rank(times, r, v) + 1
                if at > need:
                    need, w = at, v
            if need == 0:
                w = _kth(times, r, everyone, 1, vals)
            durations[r] = times[r, w]
            for i in range(n):
                late[r, i] = times[r, i] > times[r, w] or (times[r, i] == times[r, w] and i > w)
        else:
            fastest = times[r, 0]
            slowest = times[r, 0]
            for i in range(n):
                fastest = min(fastest, times[r, i])
                slowest = max(slowest, times[r, i])
            wait = fastest * (1.0 + mu)
            ok = True
            count = 0
            for i in range(n):
                is_late = times[r, i] > wait
                if is_late and old[i]:
                    ok = False
                if is_late or union[i]:
                    count += 1
            if ok and count <= lam:
                durations[r] = min(wait, slowest)
                for i in range(n):
                    late[r, i] = times[r, i] > wait
            else:
                durations[r] = slowest
        for j in range(h - 1):
            hist[j] = hist[j + 1]
        if h:
            hist[h - 1] = late[r]
    return durations, late


_compiled: Callable[..., tuple[Any, Any]] | None = None


def _kernel() -> Callable[..., tuple[Any, Any]]:
    """The compiled loop (``GCTOOL_COMPILED=0``: the same function interpreted)."""
    global _compiled
    from gctool.compiled import compile_notice, mode, numba_available

    if mode() == "never" or not numba_available():
        return _rounds
    if _compiled is None:
        from gctool.compiled._jit import njit

        global _kth, _rank, _select
        with compile_notice("simulator"):
            _select, _kth, _rank = njit(_select), njit(_kth), njit(_rank)
            _compiled = njit(_rounds)
            _compiled(np.zeros((1, 1)), 1, 2, 1, -1.0, np.zeros(1, dtype=np.uint8))
    return _compiled


def round_times(times: np.ndarray, burst: int, window: int, lam: int, mu: float | None
                ) -> tuple[np.ndarray, np.ndarray]:
    """(durations, late) per round of a (B, W, λ) sequential scheme under gctool's rule
    (``mu`` None) or the authors' (1 + mu) rule; ``late[r]`` is round r's straggler set.
    The loop ends early on a signal (or its pool's stop: :func:`gctool.engine.threads.
    halt_flag`), which is then raised."""
    from gctool.engine.threads import halt_flag, raise_if_halted

    times = np.ascontiguousarray(times, dtype=np.float64)
    halt = halt_flag()
    d, late = _kernel()(times, int(burst), int(window), int(lam),
                        -1.0 if mu is None else float(mu), halt)
    raise_if_halted(halt)
    return np.asarray(d), np.asarray(late)


def best(n: int, s: int, scheme: str, times_at: Callable[[float, float], np.ndarray],
         rounds: int, mu: float | None) -> tuple[tuple[int, int, int], float, int] | None:
    """(B, W, λ), its time per job and the number of candidates tried: the candidate of
    ``scheme`` with the smallest time per job (the first of equals, in the order of
    :func:`candidates`); ``times_at(load, size)`` gives the arrival times at the master of
    workers with that load sending ``size`` gradient vectors a round (M-SGC: one per mini-task
    slot, delay + 1)."""
    from gctool.registry import get_scheme

    fig_of = _figures(scheme)
    multiplexed = get_scheme(scheme).simulation.multiplexed
    found: tuple[tuple[int, int, int], float] | None = None
    cands = candidates(n, s, scheme)
    for burst, window, lam in cands:
        fig = fig_of(n, burst, window, lam)
        assert fig.load is not None and fig.delay is not None
        if fig.delay >= rounds:
            continue
        size = float(fig.delay + 1) if multiplexed else 1.0
        durations, _ = round_times(times_at(float(fig.load), size), burst, window, lam, mu)
        per_job = float(durations.sum() / (rounds - fig.delay))
        if found is None or per_job < found[1]:
            found = ((burst, window, lam), per_job)
    return None if found is None else (found[0], found[1], len(cands))
