"""The stopping rule of one code: which oracle decides it, and how its rounds are split
between the fast paths and the naive one (see :mod:`gctool.sim.stopping`)."""

from __future__ import annotations

import numpy as np

from gctool.limits import DEFAULT_TOL
from gctool.model import GradientCode
from gctool.numerics import decode_limit
from gctool.sim.stopping.dual import DUAL_FROM, Dual, DualWalk
from gctool.sim.stopping.groups import Groups, group_labels
from gctool.sim.stopping.naive import PrefixDecoder
from gctool.sim.stopping.qr import MARGIN, PrefixQR
from gctool.sim.stopping.sparse import dual_for


class StopRule:
    """Decodability oracle of one code; ``kind`` says which: ``"groups"``, ``"qr"`` (real and
    complex codes, with the dual walk for real ones) or ``"naive"``."""

    def __init__(self, code: GradientCode, tol: float = DEFAULT_TOL, dual: str = "auto") -> None:
        self.code, self.tol = code, tol
        self.naive = PrefixDecoder(code, tol)
        self.dual_method: str | None = None  # "svd" | "sparse" (real codes), see dual_for
        self.labels = group_labels(code)
        self.fallbacks = 0  # rounds the fast path handed to the naive one
        self._masks: dict[int, bool] = {}
        self._dual: Dual | None = None
        self._walk: DualWalk | None = None
        limit = decode_limit(code.k, tol)
        if self.labels is not None:
            self.kind = "groups"
            self._groups = Groups(self.labels)
        elif not code.field.is_finite:
            self.kind = "qr"
            Bt = np.ascontiguousarray(np.asarray(code.B).T)  # (K, n)
            Tt = code.targets().T.astype(Bt.dtype)  # (K, m)
            self._qr = PrefixQR(Bt, Tt, limit, self.naive.meter)
            if not np.iscomplexobj(Bt):
                self._dual = dual_for(Bt.T, Tt, limit / MARGIN, code.s, dual, self.naive.meter)
                self.dual_method = None if self._dual is None else self._dual.method
            if self._dual is not None:
                self._walk = DualWalk(self._dual, limit, code.n, self.naive.meter)
        else:
            self.kind = "naive"

    # -- whole runs ------------------------------------------------------------------------------
    def earliest(self, times: np.ndarray, cap: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(order, p, exact) per round: stable arrival order, stopping prefix, exact decoding."""
        order = np.argsort(times, axis=1, kind="stable")
        R = len(times)
        if R == 0:
            return order, np.zeros(0, np.int64), np.zeros(0, bool)
        if self.kind == "groups":
            p_groups, exact_groups = self._groups.earliest(order, cap)
            return order, p_groups, exact_groups
        p = np.empty(R, np.int64)
        exact = np.empty(R, bool)
        todo = np.arange(R)
        if self.kind == "qr" and cap >= DUAL_FROM and self._walk is not None:
            todo = self._walk.walk(order, cap, p, exact)
            if len(todo):
                sub_p, sub_e = np.empty(len(todo), np.int64), np.empty(len(todo), bool)
                rest = self._qr.decide(order[todo], cap, sub_p, sub_e)
                done = np.setdiff1d(np.arange(len(todo)), rest)
                p[todo[done]], exact[todo[done]] = sub_p[done], sub_e[done]
                todo = todo[rest]
        elif self.kind == "qr" and cap > 0:
            todo = self._qr.decide(order, cap, p, exact)
        for r in todo:
            p[r], exact[r] = self.naive.earliest(order[r], cap)
        self.fallbacks += len(todo) if self.kind == "qr" else 0
        return order, p, exact

    # -- one set of workers ----------------------------------------------------------------------
    def decodes_mask(self, mask: int) -> bool:
        """Whether the workers in ``mask`` (bit i = worker i delivered) decode exactly."""
        if self.kind == "groups":
            return self._groups.decodes_mask(mask)
        hit = self._masks.get(mask)
        if hit is not None:
            return hit
        from gctool.sequential.model import _bits, members

        F = np.array(members(mask), dtype=np.intp)
        hit = None
        if self._walk is not None:
            hit = self._walk.verdict(np.flatnonzero(~_bits(mask, self.code.n)))
        if hit is None and self.kind == "qr" and len(F):
            p, exact = np.empty(1, np.int64), np.empty(1, bool)
            if not len(self._qr.decide(F[None, :], len(F), p, exact)):
                hit = bool(exact[0])
        if hit is None:
            hit = self.naive.ok(F)
        if len(self._masks) < 200_000:
            self._masks[mask] = hit
        return hit
