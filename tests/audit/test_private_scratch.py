"""Scratch arrays of the compiled walks are private to their thread: each on cache lines of its
own (no false sharing with another thread's arrays), zero, and typed as np.zeros gives them."""

import numpy as np

from gctool.audit.kernels import private

from helpers import joined


def test_private_arrays_are_zero_typed_and_on_lines_of_their_own() -> None:
    specs = [((3, 2), np.float64), (5, np.int64), (7, np.bool_), ((2, 2), np.complex128),
             (1, np.float64)]
    arrays = private.zeros(*specs)
    base = arrays[0].base
    while getattr(base, "base", None) is not None:
        base = base.base
    lo, hi = base.ctypes.data, base.ctypes.data + base.nbytes
    spans = []
    for a, (shape, dt) in zip(arrays, specs, strict=True):
        ref = np.zeros(shape, dt)
        assert a.shape == ref.shape and a.dtype == ref.dtype and not a.any()
        assert a.flags.c_contiguous and a.flags.aligned and a.flags.writeable
        start = a.ctypes.data
        assert start % private.LINE == 0
        spans.append((start, start + a.nbytes))
    # a unit of padding before the first array and after the last, none shared between arrays
    assert spans[0][0] - lo >= private.LINE and hi - spans[-1][1] >= private.LINE
    for (_, end), (nxt, _) in zip(spans, spans[1:], strict=False):
        assert -(-end // private.LINE) * private.LINE <= nxt


def test_a_walks_current_set_is_its_threads_own_and_kept() -> None:
    import threading

    S = private.current([1, 4, 9])
    assert S.dtype == np.int64 and S.tolist() == [1, 4, 9]
    assert S.ctypes.data % private.LINE == 0
    again = private.current(np.array([2, 5, 7]))
    assert again is S and S.tolist() == [2, 5, 7]  # the same array, overwritten
    assert private.current([1, 2]).shape == (2,) and private.current([3, 4, 5]) is S
    other: list[np.ndarray] = []
    t = threading.Thread(target=lambda: other.append(private.current([1, 4, 9])))
    t.start()
    joined(t)
    assert other[0].ctypes.data != S.ctypes.data and other[0].tolist() == [1, 4, 9]


def test_scratch_is_kept_by_its_thread_and_zeroed_again() -> None:
    import threading

    specs = [((3, 2), np.float64), (4, np.int64)]
    first = private.scratch(*specs)
    for a in first:
        a[...] = 7
    again = private.scratch(*specs)
    assert all(a is b for a, b in zip(first, again, strict=True))  # kept, not built anew
    assert not any(a.any() for a in again)  # zero again, as private.zeros gives them
    assert private.scratch(((3, 2), np.float64), (5, np.int64))[1].shape == (5,)  # other specs
    other: list[tuple[np.ndarray, ...]] = []
    t = threading.Thread(target=lambda: other.append(private.scratch(*specs)))
    t.start()
    joined(t)
    # another thread's arrays are its own (and on other cache lines)
    assert all(a.ctypes.data != b.ctypes.data for a in other[0] for b in first)


def test_a_full_cache_keeps_what_it_hits() -> None:
    """A thread's cache is bounded (CACHED) and emptied only to add: with it full, a repeated
    call still gets its arrays (it failed when an earlier test left it at exactly CACHED)."""
    import threading

    out: list[bool] = []

    def run() -> None:
        for i in range(private.CACHED):  # a fresh thread's cache, filled
            private.scratch((i + 1, np.float64))
            private.current(np.arange(i + 1))
        first = private.scratch((99, np.int64))
        out.append(private.scratch((99, np.int64))[0] is first[0])
        S = private.current(np.arange(99))
        out.append(private.current(np.arange(99)) is S)

    t = threading.Thread(target=run)  # a fresh thread: an empty cache
    t.start()
    joined(t)
    assert out == [True, True]

