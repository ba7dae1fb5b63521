"""Chunked enumeration of straggler sets in lexicographic order."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from math import comb

import numpy as np


def count_sets(n: int, s: int) -> int:
    """Number of straggler sets of size s among n workers."""
    return comb(n, s)


def straggler_chunks(n: int, s: int, size: int) -> Iterator[np.ndarray]:
    """Yield all s-subsets of range(n) in lexicographic order, as (b, s) int arrays."""
    it = itertools.combinations(range(n), s)
    if s == 0:
        yield np.zeros((1, 0), dtype=np.intp)
        return
    while True:
        flat = np.fromiter(
            itertools.chain.from_iterable(itertools.islice(it, size)), dtype=np.intp
        )
        if flat.size == 0:
            return
        yield flat.reshape(-1, s)


def survivors_of(S: np.ndarray, n: int) -> np.ndarray:
    """Complement of each straggler set: (b, s) -> (b, n - s), rows sorted."""
    b, s = S.shape
    mask = np.ones((b, n), dtype=bool)
    mask[np.arange(b)[:, None], S] = False
    return np.nonzero(mask)[1].reshape(b, n - s)


def pad_to(S: list[int], size: int, n: int) -> list[int]:
    """Extend S with the smallest other indices until it has ``size`` elements (sorted)."""
    extra = [i for i in range(n) if i not in set(S)][: max(0, size - len(S))]
    return sorted(S + extra)
