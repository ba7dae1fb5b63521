"""Processing orders of multi-message codes (the ``order`` key of a code file).

A multi-message worker does not send one message at the end: it processes its partitions in a
fixed order and sends a message after each *group* of them, ``sum_{j in group} B[i, j] g_j``.
So a worker that has finished its first c_i partitions has delivered every group that ends at
or before position c_i, and the master can use that partial work (partial stragglers, named as
an open direction in Tandon, Lei, Dimakis, Karampatziakis, "Gradient coding", ICML 2017 and the
accompanying talk).  One group holding the whole support is the ordinary one-message code.

``order[i]`` is a list of groups (lists of partition indices) whose concatenation is a
permutation of ``supp(b_i)``; in files, a flat list of partitions is accepted as shorthand for
one message per partition.  Codes with m > 1 pieces have no order.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gctool.errors import InvalidInput

#: worker -> groups -> partitions
Order = tuple[tuple[tuple[int, ...], ...], ...]
ORDER_KINDS = ("natural", "rotated")


def _is_int(x: Any) -> bool:
    return isinstance(x, int | np.integer) and not isinstance(x, bool)


def normalize_order(raw: Any, support: np.ndarray) -> Order:
    """Validate an order against the support of B (n x k boolean) and return its tuple form."""
    n = support.shape[0]
    if not isinstance(raw, list | tuple) or len(raw) != n:
        raise InvalidInput(f"order must be a list with one entry per worker ({n})")
    out = []
    for i, groups in enumerate(raw):
        if not isinstance(groups, list | tuple):
            raise InvalidInput(f"order[{i}] must be a list of partitions or of groups")
        if all(_is_int(x) for x in groups):
            groups = [[x] for x in groups]
        if not all(isinstance(g, list | tuple) and g and all(_is_int(x) for x in g)
                   for g in groups):
            raise InvalidInput(f"order[{i}] must be a list of partitions or of non-empty groups "
                               "of partitions")
        flat = [int(x) for g in groups for x in g]
        want = np.flatnonzero(support[i]).tolist()
        if sorted(flat) != want:
            raise InvalidInput(f"order[{i}] must list each partition worker {i} computes "
                               f"({want}) exactly once, got {sorted(flat)}")
        out.append(tuple(tuple(int(x) for x in g) for g in groups))
    return tuple(out)


def order_to_json(order: Order) -> list[list[list[int]]]:
    return [[list(g) for g in groups] for groups in order]


def make_order(support: np.ndarray, kind: str = "natural", message_size: int = 1) -> Order:
    """An order for every worker: ``natural`` (ascending partitions) or ``rotated`` (worker i
    goes through its partitions cyclically from partition floor(i k / n), so the workers
    sharing a partition reach it at different times: a cyclic repetition code's worker i runs
    i, i+1, ..., i+s), cut into messages of ``message_size`` partitions."""
    if kind not in ORDER_KINDS:
        raise InvalidInput(f"order must be one of {', '.join(ORDER_KINDS)}, got {kind!r}")
    if not _is_int(message_size) or message_size < 1:
        raise InvalidInput(f"message size must be a positive integer, got {message_size!r}")
    n, k = support.shape
    out = []
    for i, row in enumerate(support):
        parts = np.flatnonzero(row).tolist()
        if kind == "rotated" and parts:
            start = (i * k) // n
            parts = sorted(parts, key=lambda j: (j - start) % k)
        out.append(tuple(tuple(parts[a:a + message_size])
                         for a in range(0, len(parts), message_size)))
    return tuple(out)
