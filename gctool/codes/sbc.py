"""Stochastic block codes (after Charles & Papailiopoulos 2018; reference §3.4).

The reference reconstructs the scheme from the abstract only, so this is gctool's exact recipe:

1. Workers and partitions are split into c communities of consecutive indices and near-equal
   sizes: worker i is in community ``floor(i c / n)``, partition j in ``floor(j c / k)``.
2. Every (worker, partition) pair is an edge independently, with probability ``p_in`` inside a
   community and ``p_out`` across communities; ``B[i, j] = 1`` on edges (0/1, any field).
3. Nothing is redrawn; empty partitions and idle workers are counted in the recorded params.

``p_in = 1, p_out = 0`` with c = n/(s+1) communities and k = n gives the fractional repetition
code.  Charles & Papailiopoulos decode in one step; gctool's audits decode optimally.
"""

from __future__ import annotations

from typing import Any

from gctool._lazy import numpy as np
from gctool.algebra.fields import Field
from gctool.budget import Budget
from gctool.errors import DesignError
from gctool.family import Family
from gctool.params import Int, Num
from gctool.registry.info import Param


def community_of(size: int, c: int) -> np.ndarray:
    out: np.ndarray = np.arange(size) * c // size
    return out


def build(n: int, s: int, k: int | None, field: Field, rng: np.random.Generator,  # noqa: PLR0913 (the scheme's options)
          communities: int = 2, p_in: float = 0.5, p_out: float = 0.0, *, budget: Budget
          ) -> tuple[np.ndarray, dict[str, Any]]:
    k = n if k is None else k
    c = communities
    if not 1 <= c <= min(n, k):
        raise DesignError(f"`communities` must be between 1 and min(n, k) = {min(n, k)}, got {c}")
    for name, p in (("`p_in`", p_in), ("`p_out`", p_out)):
        if not 0 <= p <= 1:
            raise DesignError(f"{name} must be a probability in [0, 1], got {p}")
    if not 0 <= s < n:
        raise DesignError(f"s = {s} must be smaller than n = {n}")
    same = community_of(n, c)[:, None] == community_of(k, c)[None, :]
    B = (rng.random((n, k)) < np.where(same, p_in, p_out)).astype(np.int64)
    from gctool.codes.bgc import support_stats

    recorded = {"communities": c, "p_in": p_in, "p_out": p_out, **support_stats(B)}
    return B.astype(field.dtype), recorded


class SBCFamily(Family):
    name = "sbc"
    build = staticmethod(build)
    summary = "Stochastic block code: SBM support with c communities (seeded)."
    description = (
        "Worker i is in community floor(ic/n), partition j in floor(jc/k); a pair is an "
        "edge with probability `p_in` inside a community and `p_out` across (0/1 entries, "
        "any field; nothing redrawn). `p_in` 1 `p_out` 0 with n/(s+1) communities is the "
        "FRC. gctool's recipe; the reference has the scheme from the abstract only."
    )
    reference = "Charles & Papailiopoulos 2018 (CP18), recipe by gctool; reference §3.4"
    randomized = True
    s_default = 0
    params = (
        Param("communities", "int", "Number of communities c.", default=2, short="-c"),
        Param("p_in", "float", "Edge probability inside a community.", default=0.5),
        Param("p_out", "float", "Edge probability across communities.", default=0.0),
    )
    report_keys = ("empty_partitions", "idle_workers")
    examples = ("gctool design sbc -n 12 -c 4 `p_in` 0.8 `p_out` 0.05 `seed` 3",)
    file_params = {"communities": Int(1, "n"), "p_in": Num(0, 1), "p_out": Num(0, 1)}
