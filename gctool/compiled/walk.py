"""Primitives of the compiled walks over straggler sets in lexicographic order, shared by the
audit kernels (:mod:`gctool.audit.kernels.real`) and design's conditioning screen
(:mod:`gctool.codes._screen_walk`)."""

from __future__ import annotations

from typing import Any

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
