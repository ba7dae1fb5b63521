"""Scratch arrays that a compiled walk writes in its inner loop, private to the thread running it.

numpy serves small arrays (under a kilobyte) from one cache of small buffers shared by every
thread, so two threads walking at once often get scratch arrays (and current straggler sets)
in the same 64-byte cache line: every write of one thread then evicts the line from the other
core (false sharing) and both walks slow down.  :func:`zeros` carves a walk's arrays from
one block of its own, each starting on a boundary of :data:`LINE` bytes, with at least that
much padding before and after, so no other allocation shares a cache line with them.  The
arrays are C-contiguous and aligned, as ``np.zeros`` gives them (the kernels see the same
types: nothing is compiled again)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from math import prod
from typing import Any

import numpy as np

#: the unit of privacy: a 64-byte cache line and its neighbour (x86 cores prefetch lines in
#: pairs); a larger unit only costs padding
LINE = 128

Spec = tuple[int | tuple[int, ...], Any]  # (shape, dtype)


def _up(nbytes: int) -> int:
    return -(-nbytes // LINE) * LINE


def zeros(*specs: Spec) -> tuple[np.ndarray, ...]:
    """Zero arrays of the given (shape, dtype), each on cache lines of its own."""
    return _carve(specs)[1]


def _carve(specs: tuple[Spec, ...]) -> tuple[np.ndarray, tuple[np.ndarray, ...]]:
    """(the block, the arrays carved from it) of :func:`zeros`."""
    shapes = [(shape,) if isinstance(shape, int) else tuple(shape) for shape, _ in specs]
    dtypes = [np.dtype(dt) for _, dt in specs]
    sizes = [_up(max(1, prod(sh)) * dt.itemsize) for sh, dt in zip(shapes, dtypes, strict=True)]
    block = np.zeros(sum(sizes) + 3 * LINE, dtype=np.uint8)
    off = LINE + (-block.ctypes.data) % LINE  # a line of padding before the first array
    out = []
    for sh, dt, size in zip(shapes, dtypes, sizes, strict=True):
        count = prod(sh)
        out.append(block[off:off + count * dt.itemsize].view(dt).reshape(sh))
        off += size
    return block, tuple(out)



_threads = threading.local()

#: sets of arrays a thread keeps (more, from many codes in one process: it starts again)
CACHED = 32


def scratch(*specs: Spec) -> tuple[np.ndarray, ...]:
    """:func:`zeros`, but the same arrays (zeroed again) at every call with the same specs in
    one thread: the caller must be done with them before it asks again."""
    cache: dict[tuple[Spec, ...], tuple[np.ndarray, tuple[np.ndarray, ...]]] | None = \
        getattr(_threads, "cache", None)
    if cache is None:
        cache = _threads.cache = {}
    hit = cache.get(specs)
    if hit is None:
        if len(cache) >= CACHED:  # bounded; emptied only to add (a hit is always kept)
            cache.clear()
        hit = cache[specs] = _carve(specs)
    else:
        hit[0].fill(0)
    return hit[1]


def current(a: Sequence[Any] | np.ndarray, dtype: Any = np.int64) -> np.ndarray:
    """A private copy of the 1-d ``a`` (the current straggler set of a walk, updated in
    place), in the same array at every call with the same length and dtype in one thread:
    the caller must be done with it before it asks again (a walk of the thread overwrites
    it)."""
    values = np.asarray(a, dtype=dtype)
    key = (values.shape, values.dtype.str)
    cache: dict[tuple[Any, str], np.ndarray] | None = getattr(_threads, "current", None)
    if cache is None:
        cache = _threads.current = {}
    out = cache.get(key)
    if out is None:
        if len(cache) >= CACHED:  # bounded, as scratch's
            cache.clear()
        (out,) = zeros((values.shape, dtype))
        cache[key] = out
    out[...] = values
    return out
