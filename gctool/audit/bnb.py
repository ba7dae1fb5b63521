"""Branch and bound over workers (straggle / survive), reference §7.5.

Workers are decided one at a time in a fixed order; a node knows its stragglers S (|S| <= s)
and its decided survivors P.  Bounds on the error of every completion (exactly s stragglers):

* monotone decoders (optimal, natural): ``err(P)`` -- the error when *only* P responds.  Every
  completion keeps P (and more), and the error only grows as survivors are removed.
* fixed decoding (not monotone): with ``err(S u R) = E_S + sum_{i in R} l_i +
  sum_{i,j in R} G_ij`` (``l_i = h_i + 2 sum_{j in S} G_ij``), any completion R of r undecided
  workers satisfies ``err <= E_S + (sum of the r largest l_i) + (sum of the r largest
  sqrt(G_ii))^2`` (Cauchy-Schwarz on the Gram matrix G of the weighted rows).

A node is pruned when its bound is at most the incumbent.  The search runs level by level so
that every level's bounds are computed in batches.  Stopped by the node budget, it still
returns a proven upper bound: the largest bound among the nodes left open.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from math import comb

import numpy as np

from gctool.audit.oracles import FixedOracle, Oracle
from gctool.audit.outcome import WorstOutcome
from gctool.errors import InvalidInput, SearchInterrupted
from gctool.request import DEFAULT_MAX_NODES

Progress = Callable[[int, int], None]


@dataclass
class BnbResult:
    stragglers: list[int] | None  # best set found above the floor (None if none)
    error: float
    complete: bool  # the whole tree was explored (or pruned)
    open_bound: float | None  # when incomplete: max bound over the open nodes
    nodes: int


class _Bounds:
    def __init__(self, oracle: Oracle, s: int, order: np.ndarray) -> None:
        self.oracle, self.s, self.order = oracle, s, order
        self.n = oracle.n
        self.quad: tuple[float, np.ndarray, np.ndarray] | None
        if isinstance(oracle, FixedOracle) and not oracle.finite:
            self.quad = oracle.quad(s)
            self.band = oracle.band(s)  # the round-off of the quadratic form (inf: overflow)
        elif oracle.monotone:
            self.quad = None
        else:
            raise InvalidInput(f"branch and bound needs a monotone decoder, or fixed weights "
                               f"over R/C; {oracle.label} over {oracle.code.field} is neither")

    def bound(self, S: np.ndarray, p: int) -> np.ndarray:
        """Upper bounds for nodes with stragglers S (b, j) after deciding order[:p]."""
        b, j = S.shape
        undecided = self.order[p:]
        if self.quad is None:
            mask = np.zeros((b, self.n), dtype=bool)
            mask[:, undecided] = True
            mask[np.arange(b)[:, None], S] = True
            return self.oracle.errors_masks(mask)
        c0, h, G = self.quad
        r = self.s - j
        with np.errstate(over="ignore", invalid="ignore"):
            E_S = c0 + h[S].sum(axis=1) + G[S[:, :, None], S[:, None, :]].sum(axis=(1, 2))
            if r == 0 or undecided.size == 0:
                out = E_S
            else:
                lin = h[undecided][None, :] + 2 * G[S][:, :, undecided].sum(axis=1)
                top = -np.sort(-lin, axis=1)[:, :r].sum(axis=1)
                norms = np.sort(np.sqrt(np.maximum(np.diag(G)[undecided], 0)))[::-1][:r].sum()
                out = E_S + top + norms**2
            # rounded up by the form's round-off; a term that overflowed bounds nothing (inf,
            # never nan, which would prune the node): an error beyond the limit was missed
            return np.where(np.isnan(out), np.inf, out + 2 * self.band)


def _order(oracle: Oracle) -> np.ndarray:
    """Decide heavy workers first: their survival shrinks the bound fastest."""
    B = np.asarray(oracle.code.B)
    with np.errstate(over="ignore"):  # huge rows sort first either way
        weight = np.sum(np.abs(B) ** 2, axis=1) if not oracle.finite else (B != 0).sum(axis=1)
    return np.argsort(-weight, kind="stable").astype(np.intp)


Frontier = dict[int, tuple[np.ndarray, np.ndarray]]
Branches = dict[int, list[tuple[np.ndarray, np.ndarray]]]


def search(oracle: Oracle, s: int, floor: float, *, max_nodes: int = DEFAULT_MAX_NODES,
           first: bool = False, progress: Progress | None = None) -> BnbResult:
    """Best set of exactly s stragglers with error above ``floor`` (or the first one found)."""
    n = oracle.n
    order = _order(oracle)
    bounds = _Bounds(oracle, s, order)
    best: list[int] | None = None
    nodes = 0
    frontier: Frontier = {0: (np.zeros((1, 0), dtype=np.intp), np.array([np.inf]))}
    try:
        for p in range(n):
            new, leaves = _branch(frontier, p, order, s, floor, bounds)
            for L in leaves:
                if L.shape[0] == 0:
                    continue
                L = np.sort(L, axis=1)
                err = oracle.errors(L)
                nodes += L.shape[0]
                i = int(np.argmax(err))
                if err[i] > floor:
                    floor, best = float(err[i]), L[i].tolist()
                    if first:
                        return BnbResult(best, floor, True, None, nodes)
            frontier, kept = _prune(new, floor)
            nodes += kept
            if progress is not None:
                progress(min(nodes, max_nodes), max_nodes)
            if not frontier:
                break
            if nodes > max_nodes:
                open_ub = max(float(ub.max()) for _, ub in frontier.values() if ub.size)
                return BnbResult(best, floor, False, max(open_ub, floor), nodes)
    except KeyboardInterrupt:
        at = f"at {best}" if best is not None else "(the incumbent's, not improved)"
        raise SearchInterrupted(f"branch and bound interrupted after {nodes:,} nodes; best "
                                f"error so far {floor:.6g} {at}") from None
    return BnbResult(best, floor, True, None, nodes)


def _branch(frontier: Frontier, p: int, order: np.ndarray, s: int, floor: float,
            bounds: _Bounds) -> tuple[Branches, list[np.ndarray]]:
    """Decide worker ``order[p]`` for every open node above ``floor``: the children (by
    number of stragglers, with their bounds) and the complete sets (leaves) to evaluate."""
    n, w = len(order), order[p]
    new: Branches = {}
    leaves: list[np.ndarray] = []
    for j, (S, ub) in frontier.items():
        keep = ub > floor
        S, ub = S[keep], ub[keep]
        if S.shape[0] == 0:
            continue
        rest = n - p - 1
        if j < s:  # w straggles; a monotone bound does not change (same survivors)
            S2 = np.concatenate([S, np.full((S.shape[0], 1), w, dtype=np.intp)], axis=1)
            if j + 1 == s or rest == s - j - 1:
                leaves.append(_fill(S2, order[p + 1:], s))
            else:
                ub2 = ub if bounds.quad is None else bounds.bound(S2, p + 1)
                new.setdefault(j + 1, []).append((S2, ub2))
        if rest >= s - j:  # w survives
            if rest == s - j:
                leaves.append(_fill(S, order[p + 1:], s))
            else:
                new.setdefault(j, []).append((S, bounds.bound(S, p + 1)))
    return new, leaves


def _prune(new: Branches, floor: float) -> tuple[Frontier, int]:
    """The next frontier: the children whose bound is above ``floor``, and how many."""
    frontier: Frontier = {}
    kept = 0
    for j, parts in new.items():
        S = np.concatenate([x[0] for x in parts])
        ub = np.concatenate([x[1] for x in parts])
        keep = ub > floor
        frontier[j] = (S[keep], ub[keep])
        kept += int(keep.sum())
    return frontier, kept


def _fill(S: np.ndarray, undecided: np.ndarray, s: int) -> np.ndarray:
    """Complete sets to s stragglers with all undecided workers (forced leaves)."""
    need = s - S.shape[1]
    if need == 0:
        return S
    return np.concatenate([S, np.tile(undecided[:need], (S.shape[0], 1))], axis=1)


def bnb_worst(oracle: Oracle, s: int, *, incumbent: WorstOutcome | None = None,
              max_nodes: int = DEFAULT_MAX_NODES, progress: Progress | None = None
              ) -> WorstOutcome:
    """Worst error at size s by branch and bound (exact when the tree is exhausted)."""
    floor = incumbent.error if incumbent is not None else -np.inf
    if incumbent is not None and incumbent.exact:
        return incumbent
    if s in (0, oracle.n):
        S0 = list(range(s))
        return WorstOutcome(S0, oracle.error(S0), True, "bnb", 1, 1)
    res = search(oracle, s, floor, max_nodes=max_nodes, progress=progress)
    S: list[int] | None
    if res.stragglers is not None:
        S, err = res.stragglers, res.error
    elif incumbent is not None:
        S, err = incumbent.stragglers, incumbent.error
    else:  # nothing beats -inf: impossible unless the tree is empty
        S, err = list(range(s)), oracle.error(list(range(s)))
    # (its count is the nodes; a report gives the decoder's evaluations, options.CHECKED)
    out = WorstOutcome(S, err, res.complete, "bnb", res.nodes, comb(oracle.n, s))
    if incumbent is not None:
        out.notes.extend(incumbent.notes)
        out.notes.append(f"branch and bound seeded with the {incumbent.method} incumbent "
                         f"{incumbent.error:.6g}")
    if res.complete:
        out.notes.append(f"branch and bound explored or pruned every branch ({res.nodes:,} "
                         "nodes)")
    else:
        out.notes.append(f"branch and bound stopped at the node budget ({max_nodes:,}); the "
                         "largest bound left open is an upper bound")
        out.tighten(res.open_bound, "branch-and-bound open nodes")
    return out
