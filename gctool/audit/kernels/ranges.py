"""Chunk summaries from the compiled kernels walking a rank range (the enumeration engine's
``(index, start, stop)`` task), merged with the numpy kernel's results on the sets handed
back, exactly as :func:`gctool.audit.chunks.summarise` would summarise the whole chunk."""

from __future__ import annotations

from math import comb
from typing import Any

import numpy as np

from gctool.audit.chunks import WEAKEST, ChunkSummary
from gctool.audit.kernels import private
from gctool.compiled.walk import unrank_into
from gctool.engine.enumeration import binomials, unrank_one
from gctool.engine.sweep import Task
from gctool.engine.threads import ends_run_here

#: pending sets collected before the numpy kernel decides them (bounded memory)
PENDING = 4096
#: sets of a range the real screen walks before the sets it left pending are decided: a
#: failing set (always pending) is found within this many sets of it, not at the end of a
#: range of up to millions (the first ranges of ``jobs`` threads are a quarter of the run);
#: a walk's set-up costs about what a few sets do
WALK_PIECE = 1 << 16
#: the sets the second stage leaves doubtful are handed to the kernel's decide (the compiled
#: direct decoder, then numpy's route, which holds the GIL) together, once the walk has done
#: this many pieces since the first of them, or at the end of the range, or once there are
#: PENDING of them: numpy's route costs about 0.5 ms a call whatever its batch (one or two
#: sets, 34 calls in verify of real cyclic n=48 s=6, about 5 % of its time); a failing set is
#: still found within DECIDE_PIECES * WALK_PIECE sets of it
DECIDE_PIECES = 8
#: each piece of a range starts its walk (its ``floor``,
#: :func:`gctool.audit.kernels.real.screen_range`) from the largest decoder norm known before it
#: instead of from none: the range's earlier pieces', and for the kernel of a run
#: (``run_floors``, :class:`gctool.audit.nullspace.FloatNullKernel`) the largest of the ranges
#: before it that the run has summarised so far (``RealScreen.floor``).  The verdict and the
#: run's largest norm and its set are the same either way (the range that holds the run's
#: largest norm finds it, and its first set, whatever its floor); a range whose own largest
#: norm is below the ranges' before it may report a smaller one, or none.  Sets whose norm is
#: computed in full: rs real n=40 s=5, one job, 17 % of them without the floor, 8 % with the
#: range's own, 0.02 % with the run's
CARRY = True


def _first_set(n: int, s: int, start: int) -> np.ndarray:
    """The set of rank ``start``, which the walk then updates in place (its own cache lines)."""
    return private.current(unrank_one(n, s, start))


def _sets(n: int, s: int, ranks: list[int]) -> list[list[int]]:
    """The sets of the given ranks (a chunk's largest norm and weakest bounds: unranked in
    compiled code, which costs the walking thread a microsecond where :func:`unrank_lex` costs
    a numpy call per position)."""
    if len(ranks) <= 1:
        return [unrank_one(n, s, r) for r in ranks]
    out = np.empty((len(ranks), s), dtype=np.int64)
    unrank_into(binomials(n, s), comb(n, s), np.asarray(ranks, dtype=np.int64), out)
    return out.tolist()


def real_summary(kernel: Any, task: Task, n: int, s: int, numeric: bool) -> ChunkSummary:
    """Summary of the chunk ``task`` for :class:`gctool.audit.nullspace.FloatNullKernel`,
    decided in this thread: the compiled screen accepts what it proves, its second stage
    (:func:`_second`) what it can of the sets the walk leaves doubtful (after each piece of at
    most :data:`WALK_PIECE` sets), and the kernel's
    :meth:`~gctool.audit.nullspace.FloatNullKernel.decide` the rest (the compiled direct
    decoder, then numpy for what it does not prove), several pieces' sets in one batch
    (:data:`DECIDE_PIECES`; each set's result does not depend on its batch); a failing set
    before the end cuts the chunk there (walked again up to it)."""
    index, start, stop = task
    best: tuple[float, int] | None = None  # (norm, rank), ties to the smaller rank
    weak: list[tuple[float, int]] = []
    batches: list[np.ndarray] = []  # the ranks left to the kernel's decide, and its results
    evals: list[Any] = []
    held: list[tuple[np.ndarray, tuple[np.ndarray, ...]]] = []  # not yet decided
    held_sets, held_pieces = 0, 0
    S = _first_set(n, s, start)
    pend = np.zeros(PENDING, dtype=np.int64)
    screen = kernel.compiled_screen
    pos, count = 0, stop - start
    shared = CARRY and kernel.run_floors  # the largest norm of the ranges before it
    known = screen.floor(s, start) if shared else -np.inf
    while pos < count:
        floor = max(best[0] if best is not None else -np.inf, known) if CARRY else -np.inf
        done, npend, nrm, at, wlb, wat = screen.walk(S, min(count - pos, WALK_PIECE), pend,
                                                     floor)
        base = start + pos
        if at >= 0 and (best is None or nrm > best[0]):
            best = (nrm, base + at)
        weak += [(v, base + a) for v, a in zip(wlb.tolist(), wat.tolist(), strict=True)
                 if a >= 0]
        if npend:  # the second stage here; the kernel's decide gets what it still leaves
            ranks, rest, best = _second(screen, weak, best, n, s, base + pend[:npend])
            if ranks.size:
                held.append((ranks, rest))
                held_sets += ranks.size
        pos += done
        held_pieces += 1 if held else 0
        if held and (pos >= count or held_pieces >= DECIDE_PIECES or held_sets >= PENDING):
            ranks = np.concatenate([r for r, _ in held])
            ev = kernel.decide(*(np.concatenate([x[i] for _, x in held])
                                 for i in range(len(held[0][1]))))
            held, held_sets, held_pieces = [], 0, 0
            bad = np.flatnonzero(~ev.ok)
            if bad.size and int(ranks[bad[0]]) < stop - 1:  # cut the chunk there
                ends_run_here()  # (the tasks after this one are not wanted)
                return real_summary(kernel, (index, start, int(ranks[bad[0]]) + 1), n, s,
                                    numeric)
            batches.append(ranks)
            evals.append(ev)
    out = _merge(index, count, n, s, best, weak, batches, evals, numeric)
    if shared and out.max_norm is not None:
        screen.found(s, stop, out.max_norm[0])
    return out


def _second(screen: Any, weak: list[tuple[float, int]], best: tuple[float, int] | None,
            n: int, s: int, ranks: np.ndarray
            ) -> tuple[np.ndarray, tuple[np.ndarray, ...], tuple[float, int] | None]:
    """The compiled second stage (:meth:`gctool.audit.kernels.real.RealScreen.settle`, in
    the walking thread, without the GIL) on the sets of ``ranks`` that the walk left doubtful:
    the sets it accepts join the walk's weakest bounds (``weak``, extended) and largest norm
    (as the numpy kernel's would in :func:`_merge`); returns the ranks still doubtful, their
    sets with the second stage's bounds and witnesses, and the largest norm."""
    from gctool.audit.kernels.real import BY_BOUND, DOUBTFUL

    S = np.empty((ranks.size, s), dtype=np.int64)
    unrank_into(binomials(n, s), comb(n, s), ranks, S)
    what, lb, norm, wit = screen.settle(S)
    ok = what != DOUBTFUL
    if not ok.any():
        return ranks, (S, lb, wit), best
    r, v = ranks[ok], lb[ok]
    low = np.lexsort((r, v))[:WEAKEST]  # ties to the earlier set
    weak += list(zip(v[low].tolist(), r[low].tolist(), strict=True))
    top = _arg(np.where(what == BY_BOUND, norm, np.nan), ranks, largest=True)
    return (ranks[~ok], (S[~ok], lb[~ok], wit[~ok]),
            _pick(top + ([best] if best is not None else []), largest=True))


def _merge(index: int, count: int, n: int, s: int, best: tuple[float, int] | None,
           weak: list[tuple[float, int]], p_ranks: list[np.ndarray], p_evals: list[Any],
           numeric: bool) -> ChunkSummary:
    out = ChunkSummary(index, count, count)
    if not p_ranks:  # every set accepted by the compiled screen
        return _screened(out, n, s, best, weak) if numeric else out
    ranks = np.concatenate(p_ranks)
    ok = np.concatenate([e.ok for e in p_evals])
    direct = np.concatenate([e.direct for e in p_evals])
    fields = {k: np.concatenate([getattr(e, k) for e in p_evals])
              for k in ("error", "cond", "norm", "screen")}
    out.direct = int(direct.sum())
    if (~ok).any():  # only the last set of the chunk can fail (see real_summary)
        out.fail_set = _sets(n, s, [int(ranks[np.flatnonzero(~ok)[0]])])[0]
    if not numeric:
        return out
    cands: list[tuple[float, int]] = [best] if best is not None else []
    cands += _arg(np.where(ok, fields["norm"], np.nan), ranks, largest=True)
    norm = _pick(cands, largest=True)
    good_direct = ok & direct
    cond = _pick(_arg(np.where(good_direct, fields["cond"], np.nan), ranks, True), True)
    resid = _pick(_arg(np.where(good_direct, np.sqrt(fields["error"]), np.nan), ranks, True),
                  True)
    if (~ok).any():
        out.min_fail_err = float(np.nanmin(np.where(~ok, fields["error"], np.nan)))
    screened = ok & ~direct
    weak += [(float(v), int(r)) for v, r in zip(fields["screen"][screened], ranks[screened],
                                                strict=True) if np.isfinite(v)]
    weak.sort()
    if weak:
        out.min_screen = weak[0][0]
    weak = weak[:WEAKEST]
    picks = [x for x in (norm, cond, resid) if x is not None] + weak
    sets = dict(zip([r for _, r in picks], _sets(n, s, [r for _, r in picks]), strict=True))
    out.max_norm = None if norm is None else (norm[0], sets[norm[1]])
    out.max_cond = None if cond is None else (cond[0], sets[cond[1]])
    out.max_resid = None if resid is None else (resid[0], sets[resid[1]])
    out.weakest = [(v, sets[r]) for v, r in weak]
    return out


def _screened(out: ChunkSummary, n: int, s: int, best: tuple[float, int] | None,
              weak: list[tuple[float, int]]) -> ChunkSummary:
    """:func:`_merge` of a chunk without pending sets: no direct decoding, so only the
    largest decoder norm and the weakest bounds of the compiled walk."""
    weak = sorted(weak)
    if weak:
        out.min_screen = weak[0][0]
    weak = weak[:WEAKEST]
    picks = ([best] if best is not None else []) + weak
    sets = dict(zip([r for _, r in picks], _sets(n, s, [r for _, r in picks]), strict=True))
    out.max_norm = None if best is None else (best[0], sets[best[1]])
    out.weakest = [(v, sets[r]) for v, r in weak]
    return out


def _arg(values: np.ndarray, ranks: np.ndarray, largest: bool) -> list[tuple[float, int]]:
    """The first best value, nan left out (as :func:`gctool.audit.chunks._argbest`), with its
    rank."""
    known = ~np.isnan(values)
    if not known.any():
        return []
    v = np.where(known, values, -np.inf if largest else np.inf)
    i = int(np.argmax(v) if largest else np.argmin(v))
    return [(float(v[i]), int(ranks[i]))]


def _pick(cands: list[tuple[float, int]], largest: bool) -> tuple[float, int] | None:
    """Best value; ties to the smaller rank (the earlier set)."""
    if not cands:
        return None
    return min(cands, key=lambda c: (-c[0] if largest else c[0], c[1]))


def gf_summary(kernel: Any, task: Task, n: int, s: int) -> ChunkSummary:
    """Summary of the chunk ``task`` for :class:`gctool.audit.nullspace.GFNullKernel`: exact,
    so the compiled walk is the whole verdict (cut at the first failing set)."""
    index, start, stop = task
    S = _first_set(n, s, start)
    fail = kernel.compiled_test.walk(S, stop - start)
    if fail < 0:
        return ChunkSummary(index, stop - start, stop - start)
    out = ChunkSummary(index, fail + 1, fail + 1)
    out.fail_set = _sets(n, s, [start + fail])[0]
    return out
