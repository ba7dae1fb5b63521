"""Batched enumeration of straggler sets (s-subsets of ``range(n)``) in lexicographic order.

Every set has a *lexicographic rank* in ``[0, C(n, s))`` (the position of its sorted tuple in
``itertools.combinations(range(n), s)`` order).  Chunks are rank ranges, and a chunk is built
by unranking all of its ranks at once with numpy (no Python loop per set), so any chunk can be
produced independently: this is what the parallel engine hands to worker processes.

Unranking uses the combinatorial number system: with ``d_i = n - 1 - c_i`` (a decreasing
sequence) the lexicographic rank of ``c_0 < ... < c_{s-1}`` is
``C(n, s) - 1 - sum_i C(d_i, s - i)``; inverting it is one ``searchsorted`` per position.

Public API (shared with ``attack``):

* :func:`count_sets` - ``C(n, s)``
* :func:`unrank_lex` / :func:`rank_lex` - ranks <-> sets, vectorised (a checkpoint's sets are
  checked against their task's range by rank); :func:`unrank_one`
  for a single rank
* :func:`rank_ranges` - split ``[start, stop)`` into chunks
* :func:`guided_ranges` - the same in shrinking chunks (threads that finish together)
* :func:`straggler_chunks` - iterate over all (or a rank range of) sets as ``(b, s)`` arrays
* :func:`sample_sets` - uniformly random distinct sets (seeded)
* :func:`straggler_mask` / :func:`survivors_of` / :func:`pad_to` - masks, complements and
  padding
"""

from __future__ import annotations

import functools
from bisect import bisect_right
from collections.abc import Iterator
from functools import lru_cache
from math import comb

import numpy as np

from gctool.numerics import sorted_distinct

#: largest C(n, s) that can be ranked with int64 arithmetic
MAX_RANKABLE = 2**62


def count_sets(n: int, s: int) -> int:
    """Number of straggler sets of size s among n workers."""
    return comb(n, s)


@lru_cache(maxsize=256)
def _binom_table(n: int, j: int) -> np.ndarray:
    """``C(d, j)`` for d = 0..n-1 as int64 (saturated at MAX_RANKABLE); read-only, cached."""
    table = np.array([min(comb(d, j), MAX_RANKABLE) for d in range(n)], dtype=np.int64)
    table.setflags(write=False)
    return table


@lru_cache(maxsize=64)
def binomials(n: int, s: int) -> np.ndarray:
    """``T[j, d] = C(d, j)`` for j = 0..s and d = 0..n-1, as int64 (saturated at
    MAX_RANKABLE): the tables of :func:`unrank_lex` in one array (for the compiled unranking
    of :func:`gctool.compiled.walk.unrank_into`); cached, not to be written."""
    return np.stack([_binom_table(n, j) for j in range(s + 1)])


def unrank_lex(n: int, s: int, ranks: np.ndarray) -> np.ndarray:
    """The s-subsets of ``range(n)`` with the given lexicographic ranks, as a (b, s) array."""
    ranks = np.asarray(ranks, dtype=np.int64)
    total = comb(n, s)
    if total > MAX_RANKABLE:
        raise ValueError(f"C({n}, {s}) is too large to rank with 64-bit integers")
    out = np.empty((ranks.size, s), dtype=np.intp)
    rest = (total - 1) - ranks  # colex rank of the complementary sequence d_i = n - 1 - c_i
    for i in range(s):
        table = _binom_table(n, s - i)
        d = np.searchsorted(table, rest, side="right") - 1  # largest d with C(d, s-i) <= rest
        rest = rest - table[d]
        out[:, i] = n - 1 - d
    return out


def unrank_one(n: int, s: int, rank: int) -> list[int]:
    """The one s-subset of ``range(n)`` with lexicographic rank ``rank`` (as
    :func:`unrank_lex`, in Python integers: no arrays for a single set)."""
    total = comb(n, s)
    if not 0 <= rank < total:
        raise ValueError(f"rank {rank} is outside [0, C({n}, {s}))")
    out, rest = [], total - 1 - rank  # as unrank_lex, one bisection per position
    for i in range(s):
        table = _binom_list(n, s - i)
        d = bisect_right(table, rest) - 1  # largest d with C(d, s-i) <= rest
        rest -= table[d]
        out.append(n - 1 - d)
    return out


@lru_cache(maxsize=256)
def _binom_list(n: int, j: int) -> tuple[int, ...]:
    """``C(d, j)`` for d = 0..n-1, exact (Python integers); cached: a compiled walk unranks
    the first set of every task (:func:`unrank_one`)."""
    return tuple(comb(d, j) for d in range(n))


def rank_lex(n: int, S: np.ndarray) -> np.ndarray:
    """Lexicographic ranks of sorted sets ``S`` (b, s) among the s-subsets of ``range(n)``."""
    S = np.asarray(S, dtype=np.int64)
    s = S.shape[1]
    total = comb(n, s)
    acc = np.zeros(S.shape[0], dtype=np.int64)
    for i in range(s):
        acc += _binom_table(n, s - i)[n - 1 - S[:, i]]
    return (total - 1) - acc


def rank_ranges(start: int, stop: int, size: int) -> list[tuple[int, int]]:
    """Split the rank range ``[start, stop)`` into consecutive chunks of at most ``size``."""
    size = max(1, int(size))
    return [(a, min(a + size, stop)) for a in range(start, stop, size)]


def guided_ranges(start: int, stop: int, size: int, jobs: int) -> list[tuple[int, int]]:
    """Split ``[start, stop)`` into consecutive chunks of ``1 / (2 jobs)`` of what is left, at
    least ``size // 4`` and at most ``4 * size`` ranks: a few large chunks first and small ones
    at the end, so ``jobs`` threads taking them in turn finish close together, with fewer
    chunks (less per-chunk work) than ``size`` alone gives (as OpenMP's guided schedule).
    Depends on the range and ``jobs`` only (results never depend on the chunks)."""
    return list(_guided(int(start), int(stop), max(1, int(size)), max(1, int(jobs))))


@functools.lru_cache(maxsize=64)
def _guided(start: int, stop: int, size: int, jobs: int) -> tuple[tuple[int, int], ...]:
    """:func:`guided_ranges`, kept: a threshold search plans each size twice or more (its
    look-ahead, then its turn), and a range of 1e7 sets on 16 jobs has hundreds of chunks."""
    div = 2 * jobs
    out, a = [], start
    while a < stop:
        b = min(stop, a + max(size // 4, 1, min(4 * size, (stop - a) // div)))
        out.append((a, b))
        a = b
    return tuple(out)


def straggler_chunks(
    n: int, s: int, size: int, start: int = 0, stop: int | None = None
) -> Iterator[np.ndarray]:
    """Yield the s-subsets of range(n) with ranks in ``[start, stop)`` in lexicographic order,
    as (b, s) int arrays of at most ``size`` rows."""
    total = comb(n, s)
    stop = total if stop is None else min(stop, total)
    if s == 0:
        if start < stop:
            yield np.zeros((1, 0), dtype=np.intp)
        return
    for a, b in rank_ranges(start, stop, size):
        yield unrank_lex(n, s, np.arange(a, b, dtype=np.int64))


def sample_sets(n: int, s: int, count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` uniformly random straggler sets of size s, sorted rows.

    Distinct (sampled without replacement) when ``C(n, s)`` is rankable; otherwise drawn
    independently (repeats are then possible but have negligible probability)."""
    total = comb(n, s)
    if total <= MAX_RANKABLE:
        count = min(count, total)
        if total <= 4 * count:
            ranks = rng.permutation(total)[:count]
        else:
            ranks = sorted_distinct(rng.integers(0, total, size=count + count // 8 + 16))
            while ranks.size < count:
                extra = rng.integers(0, total, size=count)
                ranks = sorted_distinct(np.concatenate([ranks, extra]))
            ranks = rng.permutation(ranks)[:count]
        return unrank_lex(n, s, np.sort(ranks))
    keys = rng.random((count, n))
    return np.sort(np.argpartition(keys, s - 1, axis=1)[:, :s], axis=1).astype(np.intp)


def straggler_mask(S: np.ndarray, n: int) -> np.ndarray:
    """Boolean (b, n) mask of each set's members: ``mask[i, j]`` iff j is in ``S[i]``."""
    S = np.asarray(S, dtype=np.intp)
    mask = np.zeros((S.shape[0], n), dtype=bool)
    mask[np.arange(S.shape[0])[:, None], S] = True
    return mask


def survivors_of(S: np.ndarray, n: int) -> np.ndarray:
    """Complement of each straggler set: (b, s) -> (b, n - s), rows sorted."""
    b, s = np.shape(S)
    return np.nonzero(~straggler_mask(S, n))[1].reshape(b, n - s)


def pad_to(S: list[int], size: int, n: int) -> list[int]:
    """Extend S with the smallest other indices until it has ``size`` elements (sorted)."""
    have = set(S)
    extra = [i for i in range(n) if i not in have][: max(0, size - len(S))]
    return sorted(S + extra)


def lex_less(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Row-wise lexicographic ``A < B`` for two (b, s) arrays."""
    less = np.zeros(A.shape[0], dtype=bool)
    equal = np.ones(A.shape[0], dtype=bool)
    for i in range(A.shape[1]):
        less |= equal & (A[:, i] < B[:, i])
        equal &= A[:, i] == B[:, i]
    return less
