"""Shared machinery of the audits: budgets, batched scans, interrupts and diagnostics.

The pieces of the verify engine that other audits can reuse live next to this module:
:mod:`gctool.audit.enumeration` (ranked, chunked enumeration), :mod:`gctool.audit.symmetry`
(rotations up to row scaling, row classes), :mod:`gctool.audit.parallel` (ordered process
pool), :mod:`gctool.audit.nullspace` (reduced decodability test) and
:mod:`gctool.algebra.gf` (vectorised GF(q) elimination).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from gctool.audit.enumeration import count_sets, straggler_chunks, survivors_of
from gctool.decode import BatchResult, Decoder
from gctool.errors import BudgetExceeded, InvalidInput, SearchInterrupted
from gctool.reports import Diagnostics

#: default largest number of straggler sets an exhaustive search may evaluate
DEFAULT_MAX_SETS = 5_000_000

Progress = Callable[[int, int], None]


def check_s(s: int, n: int, what: str = "s", allow_all: bool = False) -> None:
    top = n if allow_all else n - 1
    if isinstance(s, bool) or not isinstance(s, int | np.integer) or not 0 <= s <= top:
        rel = "<=" if allow_all else "<"
        raise InvalidInput(f"{what} must satisfy 0 <= {what} {rel} n = {n}, got {s}")


def check_budget(needed: int, max_sets: int, task: str) -> None:
    if needed > max_sets:
        raise BudgetExceeded(
            f"{task} needs {needed:,} straggler sets ({needed:.2g}), above the budget of "
            f"{max_sets:,}; raise it with --max-sets"
        )


@dataclass
class Scan:
    """Exhaustive scan over all straggler sets of one size, in lexicographic order."""

    decoder: Decoder
    s: int
    progress: Progress | None = None
    done_before: int = 0  # sets already checked by earlier scans (for progress)
    grand_total: int | None = None
    checked: int = 0

    @property
    def total(self) -> int:
        return count_sets(self.decoder.code.n, self.s)

    def batches(self) -> Iterator[tuple[np.ndarray, BatchResult]]:
        n = self.decoder.code.n
        size = self.decoder.chunk_size(n - self.s)
        grand = self.grand_total if self.grand_total is not None else self.total
        try:
            for S in straggler_chunks(n, self.s, size):
                result = self.decoder.evaluate(survivors_of(S, n))
                self.checked += S.shape[0]
                if self.progress is not None:
                    self.progress(self.done_before + self.checked, grand)
                yield S, result
        except KeyboardInterrupt:
            done = self.done_before + self.checked
            raise SearchInterrupted(
                f"interrupted after checking {done:,} of {grand:,} straggler sets "
                f"(size {self.s}); no verdict"
            ) from None


class DiagnosticsTracker:
    """Accumulates numerical diagnostics over batches (reals / complex only)."""

    def __init__(self, numeric: bool) -> None:
        self.numeric = numeric
        self.d = Diagnostics()

    def update(self, S: np.ndarray, r: BatchResult) -> None:
        if not self.numeric:
            return
        ok, d = r.ok, self.d
        if ok.any():
            resid = np.where(ok, np.sqrt(r.error), -np.inf)
            i = int(np.argmax(resid))
            if d.max_residual is None or resid[i] > d.max_residual:
                d.max_residual, d.max_residual_stragglers = float(resid[i]), S[i].tolist()
            cond = np.where(ok, r.cond, -np.inf)
            i = int(np.argmax(cond))
            if d.max_condition is None or cond[i] > d.max_condition:
                d.max_condition, d.max_condition_stragglers = float(cond[i]), S[i].tolist()
            nrm = np.where(ok, r.norm, -np.inf)
            i = int(np.argmax(nrm))
            if d.max_decoder_norm is None or nrm[i] > d.max_decoder_norm:
                d.max_decoder_norm, d.max_decoder_norm_stragglers = float(nrm[i]), S[i].tolist()
        if (~ok).any():
            low = float(r.error[~ok].min())
            if d.min_failing_error is None or low < d.min_failing_error:
                d.min_failing_error = low

    def result(self, note: str) -> Diagnostics:
        if self.numeric:
            self.d.note = note
        return self.d
