"""The ``natural`` decoder's oracle: the decoder replication schemes ship with (the first
arrival in each group of identical workers, coefficient 1), for schemes registered as
``grouped``."""

from __future__ import annotations

from typing import Any

import numpy as np

from gctool.audit.oracles.base import Oracle
from gctool.budget import Budget
from gctool.decode import DEFAULT_TOL
from gctool.engine.enumeration import straggler_mask
from gctool.errors import InvalidInput
from gctool.model import GradientCode
from gctool.numerics import Tol


class GroupOracle(Oracle):
    """Natural decoder of replication schemes: first arrival per group of identical rows."""

    kind = "natural"

    def set_work(self, s: int, sets: int) -> int:
        """One-step decoding: a weighted sum per set (n K), no solve."""
        from gctool.budget import FAST_SET_COST

        return sets * (FAST_SET_COST + self.n * max(1, int(self.code.B.shape[1])))

    def __init__(self, code: GradientCode, tol: Tol = DEFAULT_TOL,
                 budget: Budget | None = None) -> None:
        super().__init__(code, tol, budget)
        B = np.asarray(code.B)
        _, first, group = np.unique(B, axis=0, return_index=True, return_inverse=True)
        group = group.reshape(-1)
        R = B[first]  # one row per group
        T = code.targets()
        support = R != 0
        if code.m != 1 or np.any(support.sum(axis=0) > 1) or not np.array_equal(
                np.sum(R, axis=0) if not self.finite else np.asarray(
                    np.sum(code.field.to_galois(R), axis=0)), T[0]):
            raise InvalidInput(f"the natural decoder of {code.scheme} needs groups of identical "
                               "workers whose rows add up to the all-ones vector; this code has "
                               "been altered: use `decoder`=optimal or fixed")
        self.group = group
        self.groups = R.shape[0]
        self.weight = np.sum(np.abs(R) ** 2, axis=1).astype(np.float64)  # error of a dead group
        if self.finite:
            self.weight = (self.weight > 0).astype(np.float64)
        self.max_error = 1.0 if self.finite else float(self.weight.sum())
        self.label = (f"natural ({code.scheme}: first arrival in each of the {self.groups} "
                      "groups, coefficient 1)")

    def describe(self) -> dict[str, Any]:
        d = super().describe()
        d["groups"] = [np.flatnonzero(self.group == g).tolist() for g in range(self.groups)]
        return d

    def _errors(self, S: np.ndarray) -> np.ndarray:
        alive = np.zeros((S.shape[0], self.groups), dtype=np.int64)
        mask = ~straggler_mask(S, self.n)
        np.add.at(alive, (np.nonzero(mask)[0], self.group[np.nonzero(mask)[1]]), 1)
        dead = alive == 0
        err = dead.astype(np.float64) @ self.weight
        return np.minimum(err, 1.0) if self.finite else err


def group_schemes() -> list[str]:
    """Schemes whose natural decoder is "first arrival per group of identical workers"
    (``Family.grouped``)."""
    from gctool.registry import SCHEMES

    return [name for name, family in SCHEMES.items() if family.grouped]


def natural_available(code: GradientCode) -> bool:
    from gctool.registry import SCHEMES

    family = SCHEMES.get(code.scheme)
    return family is not None and family.grouped
