"""The schemes ``gctool train`` runs: a code file (:class:`Coded`) and the two baselines on the
same cluster and delays, uncoded (:class:`Uncoded`: wait for all n) and ignore-stragglers
(:class:`IgnoreStragglers`: the fastest n - s, rescaled by n/(n - s)).

Each scheme says what every logical worker sends (:meth:`Scheme.rows`), when the master can
stop waiting (:meth:`Scheme.done`, the waiting rule of ``gctool simulate``) and how it turns
the messages it holds into a gradient (:meth:`Scheme.combine`).  Names and loads are those of
the simulator's contenders (:mod:`gctool.sim.contenders`), so a row of the training report and
a row of ``gctool simulate`` on the recorded trace are the same scheme.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gctool.errors import InvalidInput
from gctool.model import GradientCode
from gctool.sim.contenders import Contender
from gctool.trainer.worker import Row

#: scheme kinds of the simulator that run as single-round codes (hetero: as an ordinary code)

class Scheme:
    """One scheme of a run on ``n`` logical workers."""

    #: the simulator's contender of this scheme (name, kind, n, s, loads)
    contender: Contender
    #: which partitioning of the data the rows refer to, and its partition count
    layout: str
    parts: int
    pieces: int = 1
    #: the code file a baseline was added for (label, code); a code file's own
    origin: tuple[str, GradientCode]

    @property
    def name(self) -> str:
        return self.contender.name

    @property
    def n(self) -> int:
        return self.contender.n

    @property
    def s(self) -> int:
        return self.contender.s

    def rows(self, d: int) -> list[Row]:
        raise NotImplementedError

    def done(self, arrived: list[int]) -> bool:
        raise NotImplementedError

    def combine(self, arrived: list[int], msgs: np.ndarray, d: int
                ) -> tuple[np.ndarray, bool, list[int]]:
        """The gradient estimate from the messages ``msgs[j]`` of workers ``arrived[j]`` (in
        the order they arrived), whether it is the exact sum (up to rounding), and the workers
        it used (sorted)."""
        raise NotImplementedError


class Coded(Scheme):
    """A code file: stop at the earliest arrival after which the arrived rows decode exactly
    (the simulator's oracle, :class:`gctool.sim.stopping.StopRule`), or at the (n - s)-th
    arrival with the optimal approximate decoder; decode with :class:`gctool.decode.Decoder`
    (the optimal decoder, the one of ``gctool export``'s tables over R and C)."""

    def __init__(self, code: GradientCode, label: str, index: int) -> None:
        from gctool.decode import Decoder
        from gctool.sim.contenders.code import CodeFile
        from gctool.sim.lineup import for_code
        from gctool.sim.stopping import StopRule

        contender = for_code(code, label)
        if not isinstance(contender, CodeFile):  # a code file or a heterogeneous code
            raise InvalidInput(f"{label}: gctool train runs single-round codes; this is a "
                               f"{code.scheme} code (simulator kind {contender.kind!r})")
        if code.field.is_finite:
            raise InvalidInput(f"{label}: training needs a real or complex code, not "
                               f"{code.field}")
        self.code, self.origin = code, (label, code)
        self.contender = contender
        self.layout, self.parts, self.pieces = f"code{index}", code.k, code.m
        self._rule = StopRule(code)
        self._decoder = Decoder(code)
        self._decoders: dict[tuple[int, ...], np.ndarray] = {}
        self._exact: dict[tuple[int, ...], bool] = {}

    def rows(self, d: int) -> list[Row]:
        B, k, m = np.asarray(self.code.B), self.code.k, self.code.m
        width = -(-d // m)
        out = []
        for i in range(self.code.n):
            parts = tuple(int(j) for j in np.flatnonzero(self.code.support[i]))
            coef = np.array([[B[i, u * k + j] for u in range(m)] for j in parts],
                            dtype=B.dtype).reshape(len(parts), m)
            out.append(Row(i, self.layout, parts, coef, width))
        return out

    def exact(self, arrived: list[int]) -> bool:
        key = tuple(sorted(arrived))
        hit = self._exact.get(key)
        if hit is None:
            mask = sum(1 << i for i in key)
            hit = self._exact[key] = bool(self._rule.decodes_mask(mask))
        return hit

    def done(self, arrived: list[int]) -> bool:
        return len(arrived) >= self.n - self.s or self.exact(arrived)

    def combine(self, arrived: list[int], msgs: np.ndarray, d: int
                ) -> tuple[np.ndarray, bool, list[int]]:
        order = np.argsort(arrived)
        key = tuple(int(arrived[j]) for j in order)
        a = self._decoders.get(key)
        if a is None:  # the optimal decoder (gctool.decode, as gctool export's tables)
            a = self._decoders[key] = np.asarray(self._decoder.decode(list(key)).a)  # (m, |F|)
        pieces = a @ np.asarray(msgs)[order]  # (m, width)
        return np.asarray(pieces.reshape(-1)[:d].real), self.exact(list(key)), list(key)


class _Plain(Scheme):
    """Every logical worker computes one of n equal partitions and sends its gradient."""

    def __init__(self, contender: Contender) -> None:
        self.contender = contender
        self.layout, self.parts = f"plain{contender.n}", contender.n

    def rows(self, d: int) -> list[Row]:
        return [Row(i, self.layout, (i,), np.ones((1, 1)), d) for i in range(self.n)]


class Uncoded(_Plain):
    def __init__(self, n: int) -> None:
        from gctool.sim.contenders.uncoded import Uncoded as Plain

        super().__init__(Plain(n))

    def done(self, arrived: list[int]) -> bool:
        return len(arrived) >= self.n

    def combine(self, arrived: list[int], msgs: np.ndarray, d: int
                ) -> tuple[np.ndarray, bool, list[int]]:
        return np.asarray(np.sum(msgs, axis=0)), True, sorted(arrived)


class IgnoreStragglers(_Plain):
    def __init__(self, n: int, s: int) -> None:
        from gctool.sim.contenders.ignore import IgnoreStragglers as Plain

        super().__init__(Plain(n, s))

    def done(self, arrived: list[int]) -> bool:
        return len(arrived) >= self.n - self.s

    def combine(self, arrived: list[int], msgs: np.ndarray, d: int
                ) -> tuple[np.ndarray, bool, list[int]]:
        """The first n - s to arrive (as the simulator's baseline), rescaled by n/(n - s)."""
        keep = self.n - self.s
        total = np.sum(np.asarray(msgs)[:keep], axis=0) * self.n / keep
        return np.asarray(total), keep == self.n, sorted(arrived[:keep])


def schemes_for(codes: list[tuple[str, GradientCode]], baselines: bool) -> list[Scheme]:
    """The code files, then (``baselines``) uncoded for every distinct n of the files and
    ignore-stragglers for every distinct (n, s) with s >= 1."""
    out: list[Scheme] = [Coded(code, label, i) for i, (label, code) in enumerate(codes)]
    if baselines:
        seen: set[tuple[int, int]] = set()
        for scheme in list(out):
            added: list[Scheme] = []
            if (scheme.n, 0) not in seen:
                added.append(Uncoded(scheme.n))
            if scheme.s >= 1 and (scheme.n, scheme.s) not in seen:
                added.append(IgnoreStragglers(scheme.n, scheme.s))
            seen |= {(scheme.n, 0), (scheme.n, scheme.s)}
            for b in added:
                b.origin = scheme.origin
            out += added
    return out


def partition_data(X: np.ndarray, y: np.ndarray, schemes: list[Scheme]
                   ) -> dict[str, np.ndarray]:
    """Partition boundaries of every layout the schemes use (contiguous, as
    ``simulate`` with ``train``: :func:`gctool.sim.problem.bounds_for`)."""
    from gctool.sim.problem import bounds_for

    return {sch.layout: bounds_for(len(X), np.ones(sch.parts)) for sch in schemes}


def group_data(X: np.ndarray, y: np.ndarray, bounds: dict[str, np.ndarray],
               rows: dict[str, list[Row]], members: list[int]) -> dict[Any, Any]:
    """The partitions that logical workers ``members`` use in any scheme:
    ``{(layout, j): (X_j, y_j)}``."""
    out: dict[Any, Any] = {}
    for layout, layout_rows in rows.items():
        b = bounds[layout]
        for i in members:
            if i >= len(layout_rows):
                continue
            for j in layout_rows[i].parts:
                out[(layout, j)] = (np.ascontiguousarray(X[b[j]:b[j + 1]]),
                                    np.ascontiguousarray(y[b[j]:b[j + 1]]))
    return out
