"""The stopping rule of codes of the group shape, by counting.

**Groups** (FRC, BCC and any code of the same shape, recognised from B itself, any field): the
non-zero rows fall into classes of rows with one support, each row constant on its support,
and the supports of the classes partition the k columns.  Then F decodes exactly iff it holds
a row of every class (every column must be covered, and one row of a class gives that class's
indicator).  Per round: the earliest prefix is the latest of the classes' first arrivals,
``max_g min_{i in g} pos_i + 1`` — no linear algebra at all.
"""

from __future__ import annotations

import numpy as np

from gctool.model import GradientCode


def group_labels(code: GradientCode) -> np.ndarray | None:
    """Class of every worker (-1: a zero row) when the code has the group shape, else None."""
    if code.m != 1:
        return None
    B = np.asarray(code.B)
    nz = B != 0
    labels = np.full(code.n, -1, dtype=np.int64)
    supports: dict[bytes, int] = {}
    reps: list[np.ndarray] = []
    for i in range(code.n):
        if not nz[i].any():
            continue
        vals = B[i, nz[i]]
        if not np.all(vals == vals[0]):
            return None
        key = np.packbits(nz[i]).tobytes()
        if key not in supports:
            supports[key] = len(reps)
            reps.append(nz[i])
        labels[i] = supports[key]
    if not reps:
        return None
    cover = np.sum(reps, axis=0)
    return labels if np.all(cover == 1) else None


class Groups:
    """The decodability oracle of a code of the group shape, from its :func:`group_labels`."""

    def __init__(self, labels: np.ndarray) -> None:
        used = labels >= 0
        self.count = int(labels.max()) + 1
        self._by_class = np.argsort(np.where(used, labels, self.count),
                                    kind="stable")[: int(used.sum())]
        sizes = np.bincount(labels[used], minlength=self.count)
        self._starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        self._masks = [sum(1 << int(i) for i in np.flatnonzero(labels == g))
                       for g in range(self.count)]

    def earliest(self, order: np.ndarray, cap: int) -> tuple[np.ndarray, np.ndarray]:
        """(p, exact) per round (row of the arrival ``order``): the stopping prefix, capped."""
        pos = np.empty_like(order)
        np.put_along_axis(pos, order, np.arange(order.shape[1])[None, :], axis=1)
        first = np.minimum.reduceat(pos[:, self._by_class], self._starts, axis=1)
        p = first.max(axis=1) + 1
        exact = p <= cap
        return np.where(exact, p, cap), exact

    def decodes_mask(self, mask: int) -> bool:
        """Whether the workers in ``mask`` (bit i = worker i) hold a row of every class."""
        return all(mask & cm for cm in self._masks)
