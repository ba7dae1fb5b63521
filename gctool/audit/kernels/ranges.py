"""Chunk summaries from the compiled kernels walking a rank range (the enumeration engine's
``(index, start, stop)`` task), merged with the numpy kernel's results on the sets handed
back, exactly as :func:`gctool.audit.chunks.summarise` would summarise the whole chunk."""

from __future__ import annotations

from dataclasses import dataclass, field
from math import comb
from typing import Any, ClassVar

import numpy as np

from gctool.audit.chunks import WEAKEST, ChunkSummary
from gctool.audit.kernels import private
from gctool.compiled.walk import unrank_into
from gctool.engine.enumeration import binomials, unrank_lex, unrank_one
from gctool.engine.sweep import Task

#: pending sets collected before the numpy kernel decides them (bounded memory)
PENDING = 4096


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


#: a walk leaves at most this many doubtful sets to the fold (:class:`Walked`); with more, the
#: thread that walked the chunk decides them (the fold would become the bottleneck), and so
#: it does when one of them is singular to the second stage (:attr:`Walked.costly`)
DEFER_MAX = 64


def real_summary(kernel: Any, task: Task, n: int, s: int, numeric: bool,
                 defer: bool = False) -> ChunkSummary | Walked:
    """Summary of the chunk ``task`` for :class:`gctool.audit.nullspace.FloatNullKernel`:
    the compiled screen accepts what it proves, its second stage (:func:`_second`, in this
    thread) what it can of the sets the walk leaves doubtful, and the kernel's numpy path
    decides the rest.

    With ``defer``, a chunk with 1 to :data:`DEFER_MAX` sets still doubtful, none of them
    singular to the second stage (:attr:`Walked.costly`), comes back as a
    :class:`Walked`, whose :meth:`~Walked.settle` decides them later (the fold does, in task
    order, in its own thread: the walking threads never hold the GIL for numpy); the summary
    is the same either way."""
    index, start, stop = task
    w = Walked(kernel, index, start, stop, n, s, numeric)
    S = _first_set(n, s, start)
    pend = np.zeros(PENDING, dtype=np.int64)
    screen = kernel.compiled_screen
    pos, count = 0, stop - start
    while pos < count:
        done, npend, nrm, at, wlb, wat = screen.walk(S, count - pos, pend)
        base = start + pos
        if at >= 0 and (w.best is None or nrm > w.best[0]):
            w.best = (nrm, base + at)
        w.weak += [(v, base + a) for v, a in zip(wlb.tolist(), wat.tolist(), strict=True)
                   if a >= 0]
        if npend:  # the second stage here; the numpy kernel gets what it still leaves
            doubtful = _second(screen, w, n, s, base + pend[:npend])
            if doubtful.size:
                w.batches.append(doubtful)
        pos += done
        left = defer and w.deferrable  # still few and cheap enough to leave to the fold
        if not left and w.decide() is not None:
            return w.settle()  # a failing set before the end: the chunk is cut there
    # a chunk without doubtful sets is summarised here (no numpy: the fold only merges)
    return w if defer and w.pending and w.deferrable else w.settle()


def _second(screen: Any, w: Walked, n: int, s: int, ranks: np.ndarray) -> np.ndarray:
    """The compiled second stage (:meth:`gctool.audit.kernels.real.RealScreen.settle`, in
    the walking thread, without the GIL) on the sets of ``ranks`` that the walk left doubtful:
    the sets it accepts join the walk's largest norm and weakest bounds (as the numpy kernel's
    would in :func:`_merge`); returns the ranks still doubtful (and marks ``w``
    :attr:`~Walked.costly` when one of them is singular to the second stage)."""
    from gctool.audit.kernels.real import BY_BOUND, DOUBTFUL

    S = np.empty((ranks.size, s), dtype=np.int64)
    unrank_into(binomials(n, s), comb(n, s), ranks, S)
    what, lb, norm, _ = screen.settle(S)
    ok = what != DOUBTFUL
    w.costly = w.costly or bool((lb[~ok] == 0).any())
    if not ok.any():
        return ranks
    r, v = ranks[ok], lb[ok]
    weak = np.lexsort((r, v))[:WEAKEST]  # ties to the earlier set
    w.weak += list(zip(v[weak].tolist(), r[weak].tolist(), strict=True))
    top = _arg(np.where(what == BY_BOUND, norm, np.nan), ranks, largest=True)
    w.best = _pick(top + ([w.best] if w.best is not None else []), largest=True)
    return ranks[~ok]


@dataclass
class Walked:
    """A rank range ``[start, stop)`` walked by the compiled screen: the largest decoder norm
    and the weakest bounds it proved, and the ranks of the sets it left doubtful, in batches
    (one per call of the walk), of which the first ``len(evals)`` are decided."""

    kernel: Any
    index: int
    start: int
    stop: int
    n: int
    s: int
    numeric: bool
    best: tuple[float, int] | None = None  # (norm, rank), ties to the smaller rank
    weak: list[tuple[float, int]] = field(default_factory=list)
    batches: list[np.ndarray] = field(default_factory=list)
    evals: list[Any] = field(default_factory=list)
    cut: int | None = None
    #: a doubtful set is singular to the second stage: the numpy kernel will most likely
    #: need the direct decoder (an SVD, perhaps exact arithmetic: a millisecond, not the
    #: tens of microseconds of its witness test), too much for the fold's one thread
    costly: bool = False
    #: what the fold reads before settling it: no count yet, no failing set (only its last set
    #: could fail, decided when the fold settles it)
    covered: ClassVar[None] = None
    fail_set: ClassVar[None] = None

    @property
    def pending(self) -> int:
        return sum(b.size for b in self.batches)

    @property
    def deferrable(self) -> bool:
        """May the fold decide the doubtful sets (few and none :attr:`costly`)?"""
        return self.pending <= DEFER_MAX and not self.costly

    def decide(self) -> int | None:
        """Decide the undecided batches in order with the numpy kernel; the rank of a failing
        set before the last of the range, if any (the chunk must be cut there)."""
        while self.cut is None and len(self.evals) < len(self.batches):
            ranks = self.batches[len(self.evals)]
            ev = self.kernel.evaluate_numpy(unrank_lex(self.n, self.s, ranks))
            bad = np.flatnonzero(~ev.ok)
            if bad.size and int(ranks[bad[0]]) < self.stop - 1:
                self.cut = int(ranks[bad[0]])
            else:
                self.evals.append(ev)
        return self.cut

    def settle(self) -> ChunkSummary:
        """The chunk summary (cut at the first failing set, walked again up to it)."""
        cut = self.decide()
        if cut is not None:
            out = real_summary(self.kernel, (self.index, self.start, cut + 1), self.n, self.s,
                               self.numeric)
            assert isinstance(out, ChunkSummary)
            return out
        return _merge(self.index, self.stop - self.start, self.n, self.s, self.best,
                      self.weak, self.batches, self.evals, self.numeric)


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
    """The first best finite value (as :func:`gctool.audit.chunks._argbest`) with its rank."""
    fin = np.isfinite(values)
    if not fin.any():
        return []
    v = np.where(fin, values, -np.inf if largest else np.inf)
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
