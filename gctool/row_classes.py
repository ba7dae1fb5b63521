"""Classes of proportional rows of a code (reference §7.7): rows that are non-zero multiples of
each other span the same line, so whether survivors decode depends only on which classes lose
every member.  Over GF(q) rows are compared exactly; over R/C candidates keyed to 11 significant
digits are confirmed exactly (:func:`gctool.numerics.proportional_rows`), and rows proportional
only up to round-off are named in a note, not merged.

Below the audits and the decoders, which both use it (:mod:`gctool.audit.symmetry` reduces
enumerations by these classes; :class:`gctool.decode.generic` certifies ranks with them).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

from gctool.model import GradientCode
from gctool.numerics import proportional_pairs, proportional_rows


def row_classes(code: GradientCode) -> list[list[int]]:
    """Classes of proportional non-zero rows (zero rows are singleton classes), ordered by
    their smallest member."""
    return find_row_classes(code)[0]


#: entries of B whose rows :func:`row_keys` keys at once (blocks of 1 MB of float64): the
#: allocator reuses their temporaries, where the ten temporaries of a whole B (134 MB each at
#: n = K = 4096) were fresh memory every time, whose page faults made the row-class
#: certificate's system time 0.3-4 s, above its 0.4 s of user time
CLASS_BLOCK_ENTRIES = 1 << 17


def row_keys(code: GradientCode, rows: np.ndarray | None = None,
             seen: Callable[[np.ndarray, np.ndarray], None] | None = None
             ) -> Iterator[bytes | int]:
    """The class key of each row of B (or of B's ``rows``, in their order), in order: its
    support and its non-zero entries scaled so that the first is 1 (over GF(q) exactly; over
    R/C to 12 significant digits, a candidate that :func:`find_row_classes` confirms exactly),
    or for a zero row its position in the order (a class of its own).  Computed in blocks of
    about :data:`CLASS_BLOCK_ENTRIES` entries, on the non-zero entries only; a row's key does
    not depend on the blocks.  ``seen``, when given, is called with each block's non-zero
    entries (row by row) and their count per row, as the block is keyed (what the row-class
    estimate reads of its sampled rows besides their keys, with no second pass over them); it
    keeps what it needs of them, not the entries (a sample's entries beside B)."""
    B = np.asarray(code.B)
    n, K = B.shape if rows is None else (len(rows), B.shape[1])
    step = max(1, CLASS_BLOCK_ENTRIES // max(1, K))
    ar = None
    if code.field.is_finite:
        from gctool.algebra.gf import GFArith

        ar = GFArith(code.field)
    for a in range(0, n, step):
        block = B[a:a + step] if rows is None else B[rows[a:a + step]]  # (no copy of all rows)
        nz = block != 0
        vals = block[nz]  # row by row
        counts = np.count_nonzero(nz, axis=1)
        ends = np.cumsum(counts)
        starts = ends - counts
        if seen is not None:
            seen(vals, counts)
        held = counts > 0
        lead = np.repeat(vals[starts[held]], counts[held])  # each row's first non-zero
        if ar is not None:
            normal = ar.mul(vals, ar.inv(lead))
        else:
            r = vals / lead
            if np.iscomplexobj(r):  # each part to 11 digits of its own; a part below
                # 1e-12 of |r| is zero (a rounded ratio of modulus 1 read 0.99...9 or 1.0...1,
                # and one magnitude for both parts split exactly proportional rows)
                small = 1e-12 * np.abs(r)
                normal = (_significant(np.where(np.abs(r.real) <= small, 0.0, r.real))
                          + 1j * _significant(np.where(np.abs(r.imag) <= small, 0.0, r.imag)))
            else:
                normal = _significant(r)
        packed = np.packbits(nz, axis=1)
        for i in range(nz.shape[0]):
            yield (packed[i].tobytes() + normal[starts[i]:ends[i]].tobytes() if held[i]
                   else a + i)


def _significant(v: np.ndarray) -> np.ndarray:
    """The real ``v`` rounded to 11 significant digits (zeros stay 0.0, never -0.0)."""
    mag = np.where(v == 0, 1.0, 10.0 ** np.floor(np.log10(np.where(v == 0, 1.0, np.abs(v)))))
    return np.round(v / mag, 11) * mag + 0.0


def find_row_classes(code: GradientCode) -> tuple[list[list[int]], str | None]:
    """:func:`row_classes`, and a note naming rows that are proportional to 11 significant
    digits but not exactly: they are kept in separate classes.  Rows are grouped by their
    keys (:func:`row_keys`: no temporary of B's size) and, over R/C, confirmed exactly on
    their common support."""
    B = np.asarray(code.B)
    keys: dict[bytes | int, list[int]] = {}
    for i, key in enumerate(row_keys(code)):
        keys.setdefault(key, []).append(i)
    classes = list(keys.values())
    split: list[list[int]] = []
    if not code.field.is_finite:  # split candidates into exactly proportional classes
        exact: list[list[int]] = []
        held = _exactly_held(B, classes)
        for members, ok in zip(classes, held, strict=True):
            groups = [[members[0]] + [i for i, good in zip(members[1:], ok, strict=True)
                                      if good]]
            rest = [i for i, good in zip(members[1:], ok, strict=True) if not good]
            cols = np.flatnonzero(B[members[0]]) if rest else None  # the support they share
            while rest:  # the rows exactly proportional to the first one left (rare)
                assert cols is not None
                first, others = rest[0], np.array(rest[1:], dtype=np.int64)
                good = proportional_rows(B[np.ix_(others, cols)], B[first, cols])
                groups.append([first] + others[good].tolist())
                rest = others[~good].tolist()
            exact.extend(groups)
            if len(groups) > 1:
                split.append(sorted(g[0] for g in groups))
        classes = exact
    note = None
    if split:
        rows = "; ".join(str(g) for g in split[:3]) + ("; ..." if len(split) > 3 else "")
        note = (f"rows {rows} proportional only up to round-off (to 11 digits, not exactly): "
                "not merged into row classes")
    return sorted(classes, key=lambda c: c[0]), note


def _exactly_held(B: np.ndarray, classes: list[list[int]]) -> list[np.ndarray]:
    """Per candidate class (rows of one key: the same support), which of its rows after the
    first are exactly proportional to the first (:func:`gctool.numerics.proportional_pairs`).
    The rows of all classes whose supports have the same size are tested together, in blocks
    of about :data:`CLASS_BLOCK_ENTRIES` entries: one call per support size and block, not one
    per class (a code of many small classes made thousands of calls)."""
    out = [np.ones(len(c) - 1, dtype=bool) for c in classes]
    multi = [g for g, c in enumerate(classes) if len(c) > 1]
    if not multi:
        return out
    lead = np.array([classes[g][0] for g in multi], dtype=np.int64)
    for at, cols in support_groups(B, lead):
        count = np.array([len(classes[multi[a]]) - 1 for a in at], dtype=np.int64)
        rows = np.concatenate([classes[multi[a]][1:] for a in at]).astype(np.int64)
        which = np.repeat(np.arange(at.size), count)  # each row's class (in at)
        step = max(1, CLASS_BLOCK_ENTRIES // max(1, cols.shape[1]))
        ok = np.concatenate([proportional_pairs(
            B[rows[a:a + step, None], cols[which[a:a + step]]],
            B[lead[at][which[a:a + step], None], cols[which[a:a + step]]])
            for a in range(0, rows.size, step)])
        ends = np.cumsum(count)
        for a, end, c in zip(at, ends, count, strict=True):
            out[multi[a]] = ok[end - c:end]
    return out


def support_groups(M: np.ndarray, rows: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """The ``rows`` of ``M`` grouped by their number w of non-zero entries: per group,
    ``(at, cols)`` with ``cols[r]`` the w columns (ascending) where row ``rows[at[r]]`` is
    non-zero, so that rows of one group can be compared entry by entry, all at once.  The
    non-zero entries are found in blocks of about :data:`CLASS_BLOCK_ENTRIES` entries (no
    temporary of M's size)."""
    M = np.asarray(M)
    step = max(1, CLASS_BLOCK_ENTRIES // max(1, M.shape[1]))
    sizes, flat = [], []
    for a in range(0, rows.size, step):
        r, c = np.nonzero(M[rows[a:a + step]] != 0)  # row by row, columns ascending
        sizes.append(np.bincount(r, minlength=min(step, rows.size - a)))
        flat.append(c)
    size = np.concatenate(sizes) if sizes else np.zeros(0, dtype=np.int64)
    cols = np.concatenate(flat) if flat else np.zeros(0, dtype=np.int64)
    starts = np.cumsum(size) - size
    out = []
    for w in sorted(set(size.tolist())):  # (np.unique imports numpy.ma: 6-10 ms)
        at = np.flatnonzero(size == w)
        out.append((at, cols[starts[at][:, None] + np.arange(w)]))
    return out


def row_class_ids(code: GradientCode) -> np.ndarray:
    """The classes of :func:`find_row_classes` as one id per row: the class's smallest member,
    or -1 for a zero row."""
    ids = np.full(code.n, -1, dtype=np.int64)
    held = code.loads > 0  # the non-zero rows
    for members in find_row_classes(code)[0]:
        if held[members[0]]:
            ids[members] = members[0]
    return ids
