"""Heuristic worst-case search (reference §7.5): column-support seeding, greedy completion,
1-swap local search, and seeded restarts.

Plain greedy (add the worker whose loss hurts most) is known to miss the worst case often
(reference §7.5: 32 of 60 random 0/1 codes).  So every column j held by at most s workers
seeds a start at ``supp(col j)``; each start is completed greedily to s stragglers and then
improved by steepest-ascent 1-swaps (swap a straggler with a survivor while the error grows).
Restarts then alternate between random s-sets and perturbations of the best set (two random
swaps), each followed by the same local search.  Random choices (restarts, ties) come from one
seeded generator, so a run can be redone.

The result is a lower bound on the worst case (heuristic); the caller may certify it by an
upper bound.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from math import comb

import numpy as np

from gctool.audit.oracles import Oracle
from gctool.audit.outcome import WorstOutcome
from gctool.errors import BudgetExceeded, SearchInterrupted
from gctool.exactls import Undecided
from gctool.numerics import TIE_RTOL, beats
from gctool.wording import counted

Progress = Callable[[int, int], None]
_REL = TIE_RTOL
MAX_SEEDS = 64
_better = beats


def _pick(err: np.ndarray, rng: np.random.Generator) -> int:
    err = np.where(np.isnan(err), -np.inf, err)
    top = float(err.max())
    ties = (np.flatnonzero(err == top) if not np.isfinite(top)
            else np.flatnonzero(err >= top - _REL * max(1.0, abs(top))))
    return int(ties[0] if ties.size == 1 else rng.choice(ties))


def complete(oracle: Oracle, start: Sequence[int], s: int, rng: np.random.Generator) -> list[int]:
    """Grow ``start`` greedily to s stragglers (each step adds the most damaging worker)."""
    S = sorted(set(int(i) for i in start))[:s]
    n = oracle.n
    while len(S) < s:
        rest = np.setdiff1d(np.arange(n), S)
        held = np.tile(np.asarray(S, dtype=np.intp), (rest.size, 1))  # [] would be float
        cand = np.sort(np.concatenate([held, rest[:, None]], axis=1), axis=1)
        S = cand[_pick(oracle.errors(cand), rng)].tolist()
    return S


def swaps(S: Sequence[int], n: int) -> np.ndarray:
    """All sets obtained from S by swapping one straggler for one survivor (sorted rows)."""
    S_arr = np.asarray(S, dtype=np.intp)
    rest = np.setdiff1d(np.arange(n), S_arr)
    s = S_arr.size
    base = np.repeat(np.tile(S_arr, (s, 1)), rest.size, axis=0)  # (s * |rest|, s)
    pos = np.repeat(np.arange(s), rest.size)
    base[np.arange(base.shape[0]), pos] = np.tile(rest, s)
    return np.sort(base, axis=1)


def local_search(oracle: Oracle, S: Sequence[int], err: float, max_rounds: int = 200
                 ) -> tuple[list[int], float]:
    """Steepest-ascent 1-swap local search from S."""
    cur, cur_err = list(S), err
    if not cur or len(cur) >= oracle.n:
        return cur, cur_err
    for _ in range(max_rounds):
        cand = swaps(cur, oracle.n)
        errs = oracle.errors(cand)
        i = int(np.argmax(errs))
        if not _better(float(errs[i]), cur_err):
            break
        cur, cur_err = cand[i].tolist(), float(errs[i])
    return cur, cur_err


def column_seeds(oracle: Oracle, s: int) -> list[list[int]]:
    """Supports of columns held by at most s workers, fewest holders first, deduplicated."""
    support = oracle.code.support
    rep = support.sum(axis=0)
    seen: set[tuple[int, ...]] = set()
    seeds: list[list[int]] = []
    for j in np.argsort(rep, kind="stable"):
        if rep[j] > s or len(seeds) >= MAX_SEEDS:
            break
        key = tuple(np.flatnonzero(support[:, j]).tolist())
        if key and key not in seen:
            seen.add(key)
            seeds.append(list(key))
    return seeds


def greedy(oracle: Oracle, s: int, *, seed: int = 0, restarts: int = 20,
           starts: Sequence[Sequence[int]] = (), progress: Progress | None = None,
           stop_at: float | None = None, keep_at_budget: bool = False) -> WorstOutcome:
    """Seeded greedy + local search + restarts; a lower bound on the worst error at size s.

    ``keep_at_budget``: when the work budget stops it after a set was found, return the best
    so far (``budget_stopped``) instead of raising :class:`~gctool.errors.BudgetExceeded`."""
    n = oracle.n
    rng = np.random.default_rng(seed)
    before = oracle.evaluations
    if s in (0, n):
        S = list(range(s))
        return WorstOutcome(S, oracle.error(S), True, "greedy", 1, 1)
    best: tuple[list[int], float] = ([], -np.inf)
    plan = [list(x) for x in starts] + column_seeds(oracle, s) + [[]]
    total_steps = len(plan) + restarts
    stopped = False
    try:
        for step in range(total_steps):
            if step < len(plan):
                S = complete(oracle, plan[step], s, rng)
            elif (step - len(plan)) % 2 == 0 or not best[0]:
                S = np.sort(rng.choice(n, size=s, replace=False)).tolist()
            else:
                S = _perturb(best[0], n, rng)
            S, err = local_search(oracle, S, oracle.error(S))
            if _better(err, best[1]):
                best = (S, err)
            if progress is not None:
                progress(step + 1, total_steps)
            if stop_at is not None and best[1] >= stop_at - _REL * max(1.0, stop_at):
                break
    except KeyboardInterrupt:
        raise SearchInterrupted(f"greedy interrupted; best error so far {best[1]:.6g} at "
                                f"{best[0]}") from None
    except BudgetExceeded as exc:
        if isinstance(exc, Undecided) or not (keep_at_budget and best[0]):
            raise
        stopped = True
    out = WorstOutcome(best[0], best[1], False, "greedy", oracle.evaluations - before,
                       comb(n, s), budget_stopped=stopped)
    out.notes.append(f"greedy: {counted(len(plan) - 1, 'column-support seed')} + plain greedy, "
                     f"1-swap local search, {counted(restarts, 'seeded restart')} (seed {seed})"
                     + ("; stopped by the work budget (`max_work`)" if stopped else ""))
    return out


def _perturb(S: list[int], n: int, rng: np.random.Generator) -> list[int]:
    cur = list(S)
    for _ in range(min(2, len(cur), n - len(cur))):
        rest = np.setdiff1d(np.arange(n), cur)
        cur[int(rng.integers(len(cur)))] = int(rng.choice(rest))
    return sorted(cur)
