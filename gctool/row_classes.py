"""Classes of proportional rows of a code (reference §7.7): rows that are non-zero multiples of
each other span the same line, so whether survivors decode depends only on which classes lose
every member.  Over GF(q) rows are compared exactly; over R/C candidates keyed to 11 significant
digits are confirmed exactly (:func:`gctool.numerics.proportional_rows`), and rows proportional
only up to round-off are named in a note, not merged.

Below the audits and the decoders, which both use it (:mod:`gctool.audit.symmetry` reduces
enumerations by these classes; :class:`gctool.decode.generic` certifies ranks with them).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from gctool.model import GradientCode
from gctool.numerics import proportional_rows


def row_classes(code: GradientCode) -> list[list[int]]:
    """Classes of proportional non-zero rows (zero rows are singleton classes), ordered by
    their smallest member."""
    return find_row_classes(code)[0]


#: entries of B whose rows :func:`row_keys` keys at once (blocks of 1 MB of float64): the
#: allocator reuses their temporaries, where the ten temporaries of a whole B (134 MB each at
#: n = K = 4096) were fresh memory every time, whose page faults made the row-class
#: certificate's system time 0.3-4 s, above its 0.4 s of user time
CLASS_BLOCK_ENTRIES = 1 << 17


def row_keys(code: GradientCode) -> Iterator[bytes | int]:
    """The class key of each row of B, in order: its support and its non-zero entries
    scaled so that the first is 1 (over GF(q) exactly; over R/C to 12 significant digits, a
    candidate that :func:`find_row_classes` confirms exactly), or for a zero row its index
    (a class of its own).  Computed in blocks of about :data:`CLASS_BLOCK_ENTRIES` entries,
    on the non-zero entries only; a row's key does not depend on the blocks."""
    B = np.asarray(code.B)
    n, K = B.shape
    step = max(1, CLASS_BLOCK_ENTRIES // max(1, K))
    ar = None
    if code.field.is_finite:
        from gctool.algebra.gf import GFArith

        ar = GFArith(code.field)
    for a in range(0, n, step):
        nz = B[a:a + step] != 0
        vals = B[a:a + step][nz]  # row by row
        counts = np.count_nonzero(nz, axis=1)
        ends = np.cumsum(counts)
        starts = ends - counts
        held = counts > 0
        lead = np.repeat(vals[starts[held]], counts[held])  # each row's first non-zero
        if ar is not None:
            normal = ar.mul(vals, ar.inv(lead))
        else:
            r = vals / lead
            mag = np.where(r == 0, 1.0, 10.0 ** np.floor(np.log10(np.where(r == 0, 1.0,
                                                                           np.abs(r)))))
            normal = np.round(r / mag, 11) * mag + 0.0
        packed = np.packbits(nz, axis=1)
        for i in range(nz.shape[0]):
            yield (packed[i].tobytes() + normal[starts[i]:ends[i]].tobytes() if held[i]
                   else a + i)


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
        for members in classes:
            groups: list[list[int]] = []
            cols = np.flatnonzero(B[members[0]])  # the support its candidates share
            step = max(1, CLASS_BLOCK_ENTRIES // max(1, cols.size))
            rest = members
            while rest:  # the rows exactly proportional to the first one left, in blocks
                first, others = rest[0], np.array(rest[1:], dtype=np.int64)
                ok = np.concatenate([np.zeros(0, dtype=bool)] + [
                    proportional_rows(B[np.ix_(others[a:a + step], cols)], B[first, cols])
                    for a in range(0, others.size, step)])
                groups.append([first] + others[ok].tolist())
                rest = others[~ok].tolist()
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


def row_class_ids(code: GradientCode) -> np.ndarray:
    """The classes of :func:`find_row_classes` as one id per row: the class's smallest member,
    or -1 for a zero row."""
    ids = np.full(code.n, -1, dtype=np.int64)
    held = code.loads > 0  # the non-zero rows
    for members in find_row_classes(code)[0]:
        if held[members[0]]:
            ids[members] = members[0]
    return ids
