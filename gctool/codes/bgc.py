"""Bernoulli gradient codes (Charles, Papailiopoulos, Ellenberg 2017; reference §3.4).

Recipe (gctool): every entry of the n x k support is drawn independently,
``B[i, j] = 1`` with probability ``d / k`` (so the expected load of a worker is d and the
expected replication of a partition is ``d n / k``; with k = n both are d, the paper's
``Bernoulli(d/n)``).  Entries are 0/1, so the code exists over every field.  Nothing is redrawn:
a partition that nobody holds, or an idle worker, is possible and counted in the recorded
params (``empty_partitions``, ``idle_workers``); audit the realised B.
"""

from __future__ import annotations

from typing import Any

from gctool._lazy import numpy as np
from gctool.algebra.fields import Field
from gctool.budget import Budget
from gctool.errors import DesignError
from gctool.family import Family
from gctool.params import Num
from gctool.registry.info import Param


def check_sizes(n: int, s: int, k: int | None, d: float) -> int:
    k = n if k is None else k
    if not 0 < d <= k:
        raise DesignError(f"the expected load -d must satisfy 0 < d <= k = {k}, got {d}")
    if not 0 <= s < n:
        raise DesignError(f"s = {s} must be smaller than n = {n}")
    return k


def support_stats(B: np.ndarray) -> dict[str, Any]:
    nz = B != 0
    return {"empty_partitions": int((~nz.any(axis=0)).sum()),
            "idle_workers": int((~nz.any(axis=1)).sum()),
            "load_max": int(nz.sum(axis=1).max()), "replication_min": int(nz.sum(axis=0).min())}


def build(n: int, s: int, k: int | None, field: Field, rng: np.random.Generator,
          d: float = 3.0, *, budget: Budget) -> tuple[np.ndarray, dict[str, Any]]:
    k = check_sizes(n, s, k, d)
    B = (rng.random((n, k)) < d / k).astype(np.int64)
    return B.astype(field.dtype), {"d": d, "probability": d / k, **support_stats(B)}


class BGCFamily(Family):
    name = "bgc"
    build = staticmethod(build)
    summary = "Bernoulli gradient code: B[i,j] = 1 with probability d/k (seeded)."
    description = (
        "Every entry of the support is drawn independently with probability d/k, so the "
        "expected load is d (Charles-Papailiopoulos-Ellenberg's Bernoulli(d/n) for k = n). "
        "Nothing is redrawn: the file counts empty partitions and idle workers. 0/1 "
        "entries, any field. -s (default 0) is recorded as the audit default."
    )
    reference = "Charles, Papailiopoulos, Ellenberg 2017 (CPE17); reference §3.4"
    randomized = True
    s_default = 0
    params = (Param("d", "float", "Expected load of a worker.", default=3.0, short="-d",
                    flag="load"),)
    report_keys = ("empty_partitions", "idle_workers", "load_max")
    examples = ("gctool design bgc -n 12 -d 3 `seed` 1",)
    file_params = {"d": Num(0), "probability": Num(0, 1)}
