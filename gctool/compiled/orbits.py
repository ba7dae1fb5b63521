"""The compiled orbit filter: the canonical sets (the lexicographically smallest of their
rotation orbit) among a rank range of orbit candidates, and their orbit sizes, in one pass
without the GIL (:func:`gctool.audit.symmetry.canonical_mask` and
:func:`~gctool.audit.symmetry.orbit_sizes` make s numpy passes over an unranked array, about
150 ns per rank and set position).  The same sets and sizes, in the same order."""

from __future__ import annotations

from typing import Any

import numpy as np

from gctool.compiled._jit import njit
from gctool.compiled.walk import successor


@njit
def canonical_range(first: Any, count: int, n: int, t: int, weighted: bool, out: Any,
                    sizes: Any) -> int:
    """Walk ``count`` s-subsets of range(n) in lexicographic order from the sorted set
    ``first`` (int64, s = ``first.shape[0]``; changed in place), and write those that are the
    smallest rotation of their orbit under ``i -> i + t`` into the rows of ``out`` (and, when
    ``weighted``, their orbit sizes into ``sizes``); returns how many.

    A rotation that brings position p's block (``S[p] // t``) to block 0 adds ``r t`` to
    every member (mod n): the members that wrap come first, so the rotated set is sorted
    without a sort.  A set is canonical when no such rotation is lexicographically smaller;
    its stabiliser counts the positions whose rotation gives the set back, one per block, as
    :func:`gctool.audit.symmetry.orbit_sizes` counts them."""
    s = first.shape[0]
    g = n // t
    S = first
    R = np.empty(s, dtype=np.int64)
    found = 0
    for _ in range(count):
        keep = True
        stab = 0
        prev = -1
        for p in range(s):
            block = S[p] // t
            shift = ((g - block) % g) * t
            k = 0
            while k < s and S[k] + shift < n:
                k += 1
            for i in range(k, s):  # the members that wrap, first
                R[i - k] = S[i] + shift - n
            for i in range(k):
                R[s - k + i] = S[i] + shift
            equal = True
            for i in range(s):
                if R[i] != S[i]:
                    equal = False
                    if R[i] < S[i]:
                        keep = False
                    break
            if not keep:
                break
            if equal and block != prev:
                stab += 1
            prev = block
        if keep:
            for i in range(s):
                out[found, i] = S[i]
            if weighted:
                sizes[found] = g // max(stab, 1)
            found += 1
        if successor(S, n) < 0:
            break
    return found
