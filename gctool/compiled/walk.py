"""Primitives of the compiled walks over straggler sets in lexicographic order, shared by the
audit kernels (:mod:`gctool.audit.kernels.real` and the others)."""

from __future__ import annotations

from typing import Any

import numpy as np

from gctool.compiled._jit import njit


@njit
def successor(S: Any, n: int) -> int:
    """Next s-subset of range(n) in lexicographic order, in place; returns the first position
    that changed (-1 after the last set, which is left unchanged)."""
    s = S.shape[0]
    i = s - 1
    while i >= 0 and S[i] == n - s + i:
        i -= 1
    if i < 0:
        return -1
    S[i] += 1
    for j in range(i + 1, s):
        S[j] = S[j - 1] + 1
    return i


@njit
def unrank_into(T: Any, total: int, ranks: Any, out: Any) -> None:
    """``out[b]`` = the s-subset of ``range(n)`` of lexicographic rank ``ranks[b]`` (s =
    ``out.shape[1]``), with ``T[j, d] = C(d, j)`` for d < n = ``T.shape[1]`` and ``total`` =
    C(n, s): :func:`gctool.engine.enumeration.unrank_lex` (the same bisection per position,
    on the same table) without a numpy call per position."""
    s, n = out.shape[1], T.shape[1]
    for b in range(ranks.shape[0]):
        rest = total - 1 - ranks[b]
        for i in range(s):
            j = s - i
            lo, hi = 0, n  # the first d with C(d, j) > rest
            while lo < hi:
                mid = (lo + hi) // 2
                if T[j, mid] <= rest:
                    lo = mid + 1
                else:
                    hi = mid
            rest -= T[j, lo - 1]
            out[b, i] = n - 1 - (lo - 1)


@njit
def first_max(err: Any, rtol: float) -> int:
    """:func:`gctool.numerics.first_max` of the 1-d float64 ``err`` with ``rtol`` =
    :data:`gctool.limits.TIE_RTOL` (the same index: +inf first, nan as -inf, the first value
    within ``rtol`` of the maximum), in one pass without the GIL where numpy makes three with
    it (a compiled walk's errors)."""
    n = err.shape[0]
    for i in range(n):
        if err[i] == np.inf:
            return i
    top = -np.inf
    seen = False  # a value that is not nan
    for i in range(n):
        v = err[i]
        if v == v:
            seen = True
            if v > top:
                top = v
    if not seen:
        return 0
    cut = top - rtol * max(1.0, abs(top))
    for i in range(n):
        v = err[i]
        if v != v:
            v = -np.inf
        if v >= cut:
            return i
    return 0


@njit
def tied_records(err: Any, first: int) -> np.ndarray:
    """:func:`gctool.numerics.tied_records` of the 1-d float64 ``err`` with ``first`` its
    :func:`first_max` (the same indices, as an int64 array: ``first``, then each later value
    above every value before it, nan never one), in two passes without the GIL where numpy
    makes four with it and a copy of the errors (a compiled walk's 65,536: 0.28 ms of its
    task's 6)."""
    n = err.shape[0]
    count, top = 1, err[first] if n else 0.0
    if n and np.isfinite(top):
        for j in range(first + 1, n):
            if err[j] > top:
                count += 1
                top = err[j]
    out = np.empty(count, dtype=np.int64)
    out[0] = first
    if count > 1:
        k, top = 1, err[first]
        for j in range(first + 1, n):
            if err[j] > top:
                out[k] = j
                k += 1
                top = err[j]
    return out
