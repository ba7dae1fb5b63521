"""Fractional repetition codes (Tandon et al. 2017, Sec. 3; reference §1.1).

Block form: workers are ordered group by group, ``B = I_g (x) J_{(s+1) x (k/g)}`` with
``g = n/(s+1)`` groups.  Tandon's printed ordering interleaves the groups; it is a row
permutation of this one and gctool treats the two as the same code.  gctool generalises
``k = n`` to any k divisible by g (each group then holds k/g partitions; load k(s+1)/n).
"""

from __future__ import annotations

from typing import Any

from gctool._lazy import numpy as np
from gctool.algebra.fields import Field
from gctool.budget import Budget
from gctool.errors import DesignError
from gctool.family import Family
from gctool.params import Int
from gctool.registry.info import SimulationTraits


def _divisor_hint(n: int) -> str:
    options = [d - 1 for d in range(1, n + 1) if n % d == 0 and d - 1 < n]
    return ", ".join(str(x) for x in options)


def build(n: int, s: int, k: int | None, field: Field, rng: Any, *, budget: Budget
          ) -> tuple[np.ndarray, dict[str, Any]]:
    if n % (s + 1):
        raise DesignError(
            f"frc needs (s+1) | n, but s+1 = {s + 1} does not divide n = {n}; "
            f"with n = {n} use s in {{{_divisor_hint(n)}}}, or use the 'cyclic' scheme"
        )
    groups = n // (s + 1)
    k = n if k is None else k
    if k % groups:
        raise DesignError(
            f"frc needs the {groups} groups to split the k = {k} partitions evenly; "
            f"use k a multiple of n/(s+1) = {groups}"
        )
    block = np.ones((s + 1, k // groups), dtype=np.int64)
    B = np.kron(np.eye(groups, dtype=np.int64), block)
    return B.astype(field.dtype), {"groups": groups}


class FRCFamily(Family):
    name = "frc"
    build = staticmethod(build)
    summary = "Fractional repetition code: groups of s+1 workers share s+1 partitions."
    description = (
        "Workers form n/(s+1) groups of s+1; every worker of a group computes the same "
        "k(s+1)/n partitions and sends their plain sum, so B = I_{n/(s+1)} (x) J. Needs "
        "(s+1) | n and n/(s+1) | k (k defaults to n). Load k(s+1)/n meets the lower bound. "
        "Works over every field (0/1 entries)."
    )
    reference = "Tandon, Lei, Dimakis, Karampatziakis, ICML 2017 (TLDK17), Sec. 3"
    examples = ("gctool design frc -n 6 -s 2",
                "gctool design frc -n 6 -s 1 -k 12 `field` 'GF(2)'")
    self_checked = True
    grouped = True
    simulation = SimulationTraits(lazy_rule="G-LAG")
    file_params = {"groups": Int(1, "n")}
