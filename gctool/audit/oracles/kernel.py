"""An attack oracle as a kernel of the enumeration engine (:mod:`gctool.engine.sweep`):
:class:`OracleKernel` is what :class:`~gctool.engine.sweep.PeakWorker` (worst case),
:class:`~gctool.engine.sweep.ExceedWorker` (threshold) and
:class:`~gctool.engine.sweep.SumWorker` (random-set means) evaluate, in processes, threads or on
Dask workers, and it walks rank ranges in compiled code where its oracle does."""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from gctool.audit.oracles.base import Oracle, upto_first_over
from gctool.budget import Budget
from gctool.engine.enumeration import unrank_one
from gctool.engine.sweep import ExceedSummary, PeakSummary, RangeWalker, Task
from gctool.limits import TIE_RTOL
from gctool.model import GradientCode


@dataclass
class OracleKernel(RangeWalker):
    """An attack oracle as a picklable kernel: it travels as its recipe (code, decoder, weights,
    tol, and whether the oracle had planned its compiled path) and is rebuilt where it runs,
    taking the same path, so every executor computes the same floats; in this process (and in
    forked workers) the oracle it was made from is used as is.  The rebuilt oracle keeps the
    original's :class:`~gctool.budget.Budget` (a Dask worker does not see the client's
    ``max_work``)."""

    code: GradientCode
    kind: str
    weights: np.ndarray | None
    tol: float | Fraction
    _oracle: Oracle | None = field(default=None, repr=False, compare=False)
    compiled: bool = False  # the original oracle planned its compiled path (set when pickled)
    budget: Budget | None = None  # the original oracle's budget (set when pickled)

    @staticmethod
    def of(oracle: Oracle) -> OracleKernel:
        return OracleKernel(oracle.code, oracle.kind, oracle.user, oracle.decoder.tol, oracle)

    def __getstate__(self) -> dict[str, Any]:
        planned = self.compiled or (self._oracle is not None and (
            self._oracle.compiled is not None or getattr(self._oracle, "direct", None)
            is not None))
        budget = self.budget if self._oracle is None else self._oracle.budget
        return dict(self.__dict__, _oracle=None, compiled=planned, budget=budget)

    @property
    def oracle(self) -> Oracle:
        if self._oracle is None:
            from gctool.audit.oracles import make_oracle  # (the package imports this module)

            self._oracle = make_oracle(self.code, self.kind, self.weights, self.tol,
                                       budget=self.budget)
        return self._oracle

    def _for(self, s: int, given: bool = False) -> Oracle:
        """The oracle, on the path the original one took for sets of size s: planned for a
        walk of rank ranges, or with ``given`` for given sets (:meth:`errors`: one per
        rotation orbit), which loads only the kernels of given sets
        (:meth:`Oracle.plan_compiled`), as the original planned them (planning the walk
        there would read the walk's kernels from numba's cache, 28-31 ms of a fresh Dask
        worker's CPU, and off the fast path its brackets, which given sets never call)."""
        oracle = self.oracle
        if self.compiled and oracle.compiled is None:
            oracle.plan_compiled(s, given)
        return oracle

    def walks_compiled(self, s: int) -> bool:
        """Does the oracle walk rank ranges of sets of size s in compiled code?"""
        return bool(self._for(s).walks_compiled(s))

    def errors(self, S: np.ndarray) -> np.ndarray:
        return self._for(S.shape[1], given=True).errors(S)

    def errors_upto(self, S: np.ndarray, limit: float) -> np.ndarray:
        """:meth:`errors` up to the first set over ``limit``: a set float64 cannot decide after
        it is no verdict's (:func:`~gctool.audit.oracles.base.upto_first_over`)."""
        return upto_first_over(self.errors, S, limit)

    def _range(self, task: Task, n: int, s: int, limit: float = np.inf) -> np.ndarray | None:
        return self._for(s).errors_range(n, s, task[1], task[2], limit)

    def peak_range(self, task: Task, n: int, s: int) -> PeakSummary | None:
        """The worst set of a rank range walked by a compiled oracle (None: not compiled)."""
        err = self._range(task, n, s)
        out = PeakSummary(task[0])
        if err is None:
            return None
        if err.size:
            # a compiled walk ran: numba is loaded
            from gctool.compiled.walk import first_max, tied_records

            i = first_max(err, TIE_RTOL)  # numerics.first_max's index, without the GIL
            for j in tied_records(err, i).tolist():  # numerics.tied_records', for a
                # FirstMaxFold (the same for any tasks)
                out.peaks.append((float(err[j]), unrank_one(n, s, task[1] + j)))
            out.checked = err.size
        return out

    def exceed_range(self, task: Task, n: int, s: int, limit: float) -> ExceedSummary | None:
        """The first set over ``limit`` of a rank range walked by a compiled oracle (the walk
        stops there)."""
        err = self._range(task, n, s, limit)
        if err is None:
            return None
        out = ExceedSummary(task[0], evaluated=err.size, checked=err.size)
        over = np.flatnonzero(err > limit)
        if over.size:
            i = int(over[0])
            out.checked, out.fail_err = i + 1, float(err[i])
            out.fail_set = unrank_one(n, s, task[1] + i)
        return out
