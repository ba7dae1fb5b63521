"""Uncoded baseline (s = 0): partition j is computed by worker j mod n."""

from __future__ import annotations

from typing import Any

import numpy as np

from gctool.algebra.fields import Field
from gctool.errors import DesignError


def build(n: int, s: int, k: int | None, field: Field, rng: Any
          ) -> tuple[np.ndarray, dict[str, Any]]:
    if s != 0:
        raise DesignError(f"uncoded tolerates no stragglers: use -s 0 (got {s}), or 'frc'/'cyclic'")
    k = n if k is None else k
    B = np.zeros((n, k), dtype=np.int64)
    B[np.arange(k) % n, np.arange(k)] = 1
    return B.astype(field.dtype), {}
