"""Uncoded baseline (s = 0): partition j is computed by worker j mod n."""

from __future__ import annotations

from typing import Any

from gctool._lazy import numpy as np
from gctool.algebra.fields import Field
from gctool.budget import Budget
from gctool.errors import DesignError
from gctool.family import Family


def build(n: int, s: int, k: int | None, field: Field, rng: Any, *, budget: Budget
          ) -> tuple[np.ndarray, dict[str, Any]]:
    if s != 0:
        raise DesignError(f"uncoded tolerates no stragglers: use -s 0 (got {s}), or 'frc'/'cyclic'")
    k = n if k is None else k
    B = np.zeros((n, k), dtype=np.int64)
    B[np.arange(k) % n, np.arange(k)] = 1
    return B.astype(field.dtype), {}


class UncodedFamily(Family):
    name = "uncoded"
    build = staticmethod(build)
    summary = "No redundancy (s = 0): each partition is computed by exactly one worker."
    description = (
        "Partition j goes to worker j mod n; worker loads differ by at most one. Tolerates "
        "no stragglers; the baseline for comparisons."
    )
    reference = "baseline"
    s_default = 0
    examples = ("gctool design uncoded -n 4", "gctool design uncoded -n 4 -k 8")
    self_checked = True
    grouped = True
