"""glibc's heap for the processes gctool runs itself: the command line, the benchmarks and the
Dask workers its engine tasks run in (:mod:`gctool.audit.distributed`).

glibc serves an allocation of 128 KB or more with a fresh mapping, raises that threshold to
the size of such a block once one is freed, and hands freed memory at the top of its heap back
to the system beyond twice the threshold: a loop of temporaries of a few hundred KB (a block
of B's rows being keyed, a compiled walk's errors) faults their pages in again on every call.
The row classes of a dense 256 x 256 real code took 3.5-4.4x their estimate so (about 3,000
page faults a call; with the heap kept, none and 1.5-1.7x: docs/performance.md).
:func:`keep_heap` lets arrays of up to :data:`HEAP_KEPT` bytes come from the heap, which keeps
that much freed memory at its top for the next ones; memory above it is still returned.

It changes the whole process, so the library never calls it in its caller's process (only in a
Dask worker under the nanny, which runs its engine tasks): a program that imports gctool keeps
its allocator as it set it.  A setting of glibc's own environment variables
(``MALLOC_MMAP_THRESHOLD_``, ``MALLOC_TOP_PAD_`` or their ``GLIBC_TUNABLES``) wins.

This module imports nothing from gctool.
"""

from __future__ import annotations

import contextlib
import os

#: bytes of freed memory the heap keeps for the next allocations, and the size up to which
#: arrays come from the heap (:func:`keep_heap`)
HEAP_KEPT = 1 << 25
_HEAP_KEPT: list[bool] = []  # (set once per process)
#: glibc's environment settings of what :func:`keep_heap` sets: they win
OWN_SETTINGS = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TOP_PAD_")
TUNABLES = ("glibc.malloc.mmap_threshold", "glibc.malloc.top_pad")


def keep_heap() -> bool:
    """Once per process: glibc's mmap threshold and the heap's kept top at :data:`HEAP_KEPT`
    (``mallopt``), unless the environment sets either already.  True when set (False off
    glibc, and when the environment's setting wins); later calls return the first one's
    answer and change nothing."""
    if _HEAP_KEPT:
        return _HEAP_KEPT[0]
    done = False
    tunables = os.environ.get("GLIBC_TUNABLES", "")
    if not any(os.environ.get(v) is not None for v in OWN_SETTINGS) and \
            not any(t in tunables for t in TUNABLES):
        with contextlib.suppress(Exception):  # not glibc (no mallopt): nothing to do
            import ctypes

            libc = ctypes.CDLL(None)
            m_top_pad, m_mmap_threshold = -2, -3  # (glibc's malloc.h)
            done = bool(libc.mallopt(m_mmap_threshold, HEAP_KEPT)) and bool(
                libc.mallopt(m_top_pad, HEAP_KEPT))
    _HEAP_KEPT.append(done)
    return done
