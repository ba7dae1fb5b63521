"""The error oracle protocol: the squared decoding error of batches of straggler sets, the
work they cost (held to the work budget) and diagnostics; the decoders subclass it."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from gctool.budget import NS_PER_S, Budget, Meter, work_refusal
from gctool.decode import DEFAULT_TOL, Decoder, Decoding
from gctool.decode.cost import call_time, decoder_set_time
from gctool.engine.enumeration import survivors_of
from gctool.engine.threads import halt_flag, in_pool_task, raise_if_halted
from gctool.exactls import Undecided
from gctool.model import GradientCode
from gctool.numerics import Tol
from gctool.wording import counted

if TYPE_CHECKING:
    from gctool.audit.symmetry import Held
    from gctool.compiled import Kind

#: a batch of straggler sets given to :meth:`Oracle.errors` costs this much besides its sets,
#: in ns (gathering, Python per call): what the searches that ask a few sets at a time pay
#: (counted once in :meth:`Oracle.set_work` of the fast paths, whose sets cost microseconds)
ERRORS_CALL_NS = 30_000

#: the SVD decoder's charges (:meth:`Oracle.errors`, the sets a search gives as batches) are
#: its calibrated time (:func:`gctool.decode.cost.svd_time`, random dense systems on the 2-core
#: development machine) times the rate timed on the oracle's own first batches, once they have
#: taken TIMED_SAMPLE_S of CPU: a code's systems can decode several times faster than random
#: dense ones of their size (frc's block-structured 0/1 rows, whose Householder reflections
#: LAPACK trims: 0.2-0.4x; 0.55-0.7x for random dense systems on an AMD EPYC); before that,
#: the calibrated time.  Clamped to TIMED_RANGE (a first batch that pays for page faults, a
#: sample of a few tiny systems)
TIMED_SAMPLE_S = 0.02
TIMED_RANGE = (0.125, 2.0)


def decoder_set_work(code: GradientCode, s: int, sets: int) -> float:
    """Estimated work of ``sets`` straggler sets of size s decided by the optimal decoder
    (:func:`gctool.decode.cost.decoder_set_time` each), plus the batch's call
    (:func:`gctool.decode.cost.call_time`: over GF(q) its pivot steps, 1.5-6 ms for 16-42
    survivors, not ERRORS_CALL_NS)."""
    call = call_time(code, code.n - s)
    return sets * decoder_set_time(code, s) + (call if sets else 0)


def upto_first_over(errors: Callable[[np.ndarray], np.ndarray], S: np.ndarray,
                    limit: float) -> np.ndarray:
    """``errors(S)`` of the rows of S, in order, up to the first over ``limit`` (inclusive;
    every row when none is): what a threshold search needs.  A row float64 cannot decide
    (:class:`~gctool.exactls.Undecided`) after that one does not change the search's answer,
    so a batch that raises is narrowed (its first half, then its second): Undecided is raised
    only for a row before the first over ``limit`` (the first such row), whatever the batch
    (a batch's sets, a task's range: they depend on ``jobs``)."""
    try:
        err = np.asarray(errors(S), dtype=np.float64)
    except Undecided:
        if len(S) <= 1:
            raise
        h = len(S) // 2
        head = upto_first_over(errors, S[:h], limit)
        if (head > limit).any():  # (stopped there)
            return head
        return np.concatenate([head, upto_first_over(errors, S[h:], limit)])
    over = np.flatnonzero(err > limit)
    return err[:int(over[0]) + 1] if over.size else err


class Oracle:
    """Squared decoding error of straggler sets, in batches.  Subclasses set the attributes."""

    kind = "optimal"
    label = ""
    monotone = True
    #: the user's weights of the ``fixed`` decoder (None: the decoder's own)
    user: np.ndarray | None = None
    #: the compiled walk this oracle planned (:meth:`plan_compiled`; None: numpy only)
    compiled: Any = None

    def __init__(self, code: GradientCode, tol: Tol = DEFAULT_TOL,
                 budget: Budget | None = None) -> None:
        self.code = code
        self.decoder = Decoder(code, tol)
        self.finite = code.field.is_finite
        self.n = code.n
        #: errors above this do not decode (exact over GF(q); the tolerance tol*k over R/C)
        self.limit = self.decoder.limit
        #: a proven upper bound on every error (None when unknown)
        self.max_error: float | None = 1.0 if self.finite else float(code.m * code.k)
        self.evaluations = 0
        #: the budget of the searches on this oracle (its ``max_sets`` caps exhaustive ones)
        self.budget = Budget.default() if budget is None else budget
        #: the work of the searches (straggler sets, :meth:`set_work`, and their probes), held
        #: to the work budget as it is spent
        self.meter = Meter(self.budget.work_ns, self._refuse)
        #: the sets float64 cannot decide are charged their exact decision's time here too
        self.decoder.meter = self.meter
        #: the estimated time (ns, on their jobs) of the exhaustive searches admitted on this
        #: oracle so far: a curve's points are held to one budget together
        self.estimated = 0.0
        #: the SVD decoder's timed sample (:data:`TIMED_SAMPLE_S`): CPU seconds and
        #: calibrated ns of the batches timed so far, and the rate once timed (None: not yet)
        self._timed_cpu = self._timed_work = 0.0
        self.decoder_rate: float | None = None
        self._timed_lock = threading.Lock()
        #: the last rotation detection held to this oracle's budget
        #: (:func:`gctool.audit.exhaustive.detected`; None: none asked for yet)
        self.rotation_held: Held | None = None
        #: rank B over GF(q), once computed (:func:`gctool.audit.elementary.rank_work`)
        self.exact_rank: int | None = None

    def set_work(self, s: int, sets: int) -> float:
        """Estimated work of ``sets`` straggler sets of size s: one least-squares solve or
        elimination over the n - s survivors each (:func:`decoder_set_time`)."""
        return decoder_set_work(self.code, s, sets)

    def worst_set_work(self, s: int, sets: int) -> float:
        """The most work ``sets`` sets of size s can take (no fast path deciding any of them,
        exact arithmetic aside): :meth:`set_work` by default."""
        return self.set_work(s, sets)

    def batch_work(self, s: int, sets: int) -> float:
        """Estimated work of ``sets`` sets of size s given as explicit batches (one per
        rotation orbit: :meth:`errors`, never a compiled walk of rank ranges):
        :meth:`set_work` by default."""
        return self.set_work(s, sets)

    def decodes_by_svd(self, s: int) -> bool:
        """Are sets of size s given as batches decided by the SVD decoder over R/C (whose
        charges are timed on the oracle's own batches, :data:`TIMED_SAMPLE_S`)?"""
        return False

    def will_walk_compiled(self, s: int, sets: int) -> bool:
        """Will an enumeration of ``sets`` sets of size s walk them in compiled code (threads:
        every job runs), decided before anything is compiled?"""
        return False

    def walk_kind(self, s: int, sets: int) -> Kind | bool:
        """:meth:`will_walk_compiled`, naming the kind of kernels the walk loads
        (:class:`gctool.compiled.Kind`, which the workers of a Dask runner are charged loading
        until they have: :func:`gctool.audit.distributed.kernels_load_ns`); False when not
        walked compiled."""
        return self.will_walk_compiled(s, sets)

    def given_kind(self, s: int, sets: int) -> Kind | bool:
        """The kind of compiled kernels that decide given sets of size s (one per rotation
        orbit of an enumeration of ``sets`` sets: :meth:`errors`) without the GIL, so that
        their tasks run in threads (:func:`gctool.audit.sweep.local_runner`); False when
        numpy decides them (here: always)."""
        return False

    # -- compiled walks of rank ranges (an oracle that has them overrides these) -------------
    def walk_stops(self, s: int) -> bool:
        """Does a compiled walk of sets of size s decide a failing set itself, so that a
        threshold search's task stops there (else the task is walked whole, its doubtful sets
        decided by numpy after it)?"""
        return False

    def plan_compiled(self, s: int, given: bool = False) -> None:
        """Take the compiled path for sets of size s where there is one (here: none)."""

    def walks_compiled(self, s: int) -> bool:
        """Are rank ranges of sets of size s walked in compiled code?"""
        return False

    def errors_range(self, n: int, s: int, start: int, stop: int, limit: float = np.inf
                     ) -> np.ndarray | None:
        """Errors of the sets with lexicographic ranks start..stop-1 walked in compiled code
        (None: not walked; use :meth:`errors`)."""
        return None

    # -- to override ------------------------------------------------------------------------
    def _errors(self, S: np.ndarray) -> np.ndarray:
        """The decoder's errors of ``S``, a chunk at a time (bounded memory, also for callers
        that pass many sets at once: greedy, bnb); a stopped run's task stops between its
        chunks (:func:`gctool.engine.threads.halt_flag`), as its compiled walks do."""
        step = self.decoder.chunk_size(max(1, self.n - S.shape[1]))
        halt, parts = halt_flag(), []
        for lo in range(0, S.shape[0], step):
            raise_if_halted(halt)
            parts.append(self.decoder.evaluate(survivors_of(S[lo:lo + step], self.n)).error)
        return np.concatenate(parts)

    def describe(self) -> dict[str, Any]:
        return {"name": self.kind, "label": self.label, "monotone": self.monotone}

    # -- public -----------------------------------------------------------------------------
    def errors(self, S: np.ndarray) -> np.ndarray:
        """Raw errors of the straggler sets ``S`` (int array (b, s), rows sorted)."""
        S = np.asarray(S, dtype=np.intp)
        if S.ndim != 2:
            raise ValueError("S must be a 2-d array of straggler sets")
        if S.shape[0] == 0:
            return np.zeros(0)
        s, sets = S.shape[1], S.shape[0]
        work = self.batch_work(s, sets)  # given sets: never a compiled walk of rank ranges
        timed = self.decodes_by_svd(s)
        rate = self.decoder_rate if timed else None
        if timed and rate is None and sets > 1 and work > 2 * TIMED_SAMPLE_S * NS_PER_S:
            # a large batch before the rate is timed: its head is the sample (about
            # TIMED_SAMPLE_S calibrated), the rest is charged at the rate it gives (bnb's
            # first level on random dense real n=300: 2,300 sets charged 1.1 s for 0.07 s)
            head = max(1, min(sets - 1, int(sets * TIMED_SAMPLE_S * NS_PER_S / work)))
            return np.concatenate([self.errors(S[:head]), self.errors(S[head:])])
        if not timed and in_pool_task():  # a pool thread's task (one set per rotation orbit
            # on threads): decided first, then charged in task order (the charge waits for the
            # tasks before it to be folded: before the batch, it would wait for them to run),
            # so the meter stops at the same batch, with the same count, for any jobs
            out = np.asarray(self._errors(S), dtype=np.float64)
            self.meter.charge(work)
            self.evaluations += sets
            return out
        self.meter.charge(work if rate is None else work * rate)  # refused: not decoded
        self.evaluations += sets
        if not timed or rate is not None:
            return np.asarray(self._errors(S), dtype=np.float64)
        charges, t0 = self.meter.charges, time.thread_time()
        out = np.asarray(self._errors(S), dtype=np.float64)
        if self.meter.charges == charges:  # (a batch whose doubtful sets were charged their
            # refinement or exact arithmetic as it was spent is no sample, nor one that ran
            # while other threads charged the meter)
            self._time_decoder(time.thread_time() - t0, work)
        return out

    def _time_decoder(self, seconds: float, work: float) -> None:
        """Add a batch of the SVD decoder that took ``seconds`` of CPU (this thread) for
        ``work`` calibrated ns to the timed sample; fix :attr:`decoder_rate` once the sample
        has taken :data:`TIMED_SAMPLE_S`."""
        with self._timed_lock:
            if self.decoder_rate is not None:
                return
            self._timed_cpu += max(0.0, seconds)
            self._timed_work += work
            cpu, calibrated = self._timed_cpu, self._timed_work
            if cpu >= TIMED_SAMPLE_S and calibrated > 0:
                lo, hi = TIMED_RANGE
                self.decoder_rate = min(hi, max(lo, cpu * NS_PER_S / calibrated))

    def _refuse(self, total: float, what: str) -> Exception:
        words = self.meter.words(total, f"{counted(self.evaluations, 'straggler set')} decoded")
        return work_refusal(
            f"the search on this code (n={self.n}, k*m={self.code.B.shape[1]}, "
            f"{self.code.field}) {words}", total / NS_PER_S, self.budget.max_work,
            "use a smaller code, `method`=greedy with fewer `restarts`, a lower `max_nodes`, "
            "or raise `max_work`", self.budget.used)

    def error(self, S: Sequence[int]) -> float:
        row = np.array(sorted({int(i) for i in S}), dtype=np.intp)
        return float(self.errors(row[None, :])[0])

    def errors_masks(self, masks: np.ndarray) -> np.ndarray:
        """Errors of straggler sets given as boolean masks (b, n) of any sizes."""
        masks = np.asarray(masks, dtype=bool)
        out = np.empty(masks.shape[0])
        sizes = masks.sum(axis=1)
        for size in np.unique(sizes):
            rows = np.flatnonzero(sizes == size)
            S = np.nonzero(masks[rows])[1].reshape(rows.size, int(size))
            out[rows] = self.errors(S)
        return out

    def chunk_size(self, s: int, given: bool = False) -> int:
        """How many straggler sets of size s to evaluate per batch (``given``: the run gives
        them as batches, one set per rotation orbit, and walks no rank range)."""
        return self.decoder.chunk_size(max(1, self.n - s))

    def fails(self, err: float | np.ndarray) -> np.ndarray:
        return np.asarray(err) > self.limit

    def diagnose(self, S: Sequence[int]) -> Decoding | None:
        """Optimal-decoding diagnostics of one straggler set (None over GF(q))."""
        if self.finite:
            return None
        return self.decoder.decode([i for i in range(self.n) if i not in set(S)])
