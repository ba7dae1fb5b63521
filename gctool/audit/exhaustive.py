"""Exhaustive attack: every straggler set of a size, in lexicographic order, in batches.

* **Symmetry** (reference §7.7): when a worker rotation is an automorphism of B up to row
  scaling (:func:`gctool.audit.symmetry.detect_rotation`, shared with ``verify``), the optimal
  error is the same on a whole orbit, so one canonical set per orbit is evaluated.  For fixed
  decoding the rotation must map B to itself exactly and keep the weights.  The symmetry is
  checked on B itself, never assumed from the scheme name.
* **Pruning** in threshold mode: the holders of the least replicated partition form a failing
  set under every monotone decoder (reference §0.3, ``T_0 <= min_j c_j``), so the search never
  goes past that size; it stops at the first failing set.
* **Chunking and parallelism**: sets are evaluated in batches (memory bounded by the decoder's
  chunk size); with ``jobs > 1`` the batches are spread over worker processes.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from math import comb
from typing import Any

import numpy as np

from gctool.audit.decoders import Oracle, make_oracle
from gctool.audit.enumeration import straggler_chunks
from gctool.audit.outcome import ThresholdOutcome, WorstOutcome
from gctool.audit.symmetry import (
    Rotation,
    canonical_mask,
    count_candidates,
    count_orbits,
    detect_rotation,
    find_rotation,
)
from gctool.errors import BudgetExceeded, SearchInterrupted
from gctool.model import GradientCode
from gctool.numerics import beats, first_max

Progress = Callable[[int, int], None]


def rotation_for(oracle: Oracle) -> Rotation | None:
    """A worker rotation that leaves every error unchanged (checked on B), or None.

    Optimal decoding: any rotation of :func:`gctool.audit.symmetry.detect_rotation` (row
    scalings do not change the row space, and the column shift fixes the targets).  Fixed
    decoding: only when the rotation maps B to itself exactly (all gamma_i = 1) and the weights
    are invariant too.  Natural decoders: not used."""
    if oracle.kind == "natural":
        return None
    code = oracle.code
    rot = detect_rotation(code)
    if rot is None or oracle.kind == "optimal":
        return rot
    B = np.asarray(code.B)
    j = np.arange(code.k * code.m)
    sigma = (j // code.k) * code.k + (j % code.k + rot.c) % code.k
    D = B[(np.arange(code.n) + rot.t) % code.n][:, sigma]
    user = getattr(oracle, "user", None)
    same_w = user is None or np.array_equal(np.roll(user, -rot.t, axis=1), user)
    return rot if same_w and np.array_equal(D, B) else None


def rotation_note(oracle: Oracle) -> str | None:
    """When no rotation is used because one holds only up to round-off: the note saying so
    (:func:`gctool.audit.symmetry.find_rotation`)."""
    if oracle.kind == "natural" or oracle.code.field.is_finite:
        return None
    return find_rotation(oracle.code)[1]


def _sets(n: int, s: int, size: int, rot: Rotation | None) -> Iterator[np.ndarray]:
    if rot is None or s == 0:
        yield from straggler_chunks(n, s, size)
        return
    for C in straggler_chunks(n, s, size, 0, count_candidates(n, s, rot.t)):
        C = C[canonical_mask(C, rot)]
        if C.shape[0]:
            yield C


def count_evaluated(n: int, s: int, rot: Rotation | None) -> int:
    return comb(n, s) if rot is None or s == 0 else count_orbits(n, s, rot.t)


# -- parallel evaluation --------------------------------------------------------------------------
_WORKER: dict[str, Oracle] = {}


def _init_worker(code: Any, decoder: str, weights: Any, tol: float) -> None:
    from gctool._signals import worker_init

    worker_init()
    _WORKER["oracle"] = make_oracle(code, decoder, weights, tol)


def _eval_chunk(S: np.ndarray) -> np.ndarray:
    return _WORKER["oracle"].errors(S)


def _weights_of(oracle: Oracle) -> Any:
    return getattr(oracle, "user", None)


def evaluate_stream(oracle: Oracle, chunks: Iterator[np.ndarray], jobs: int
                    ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Yield (S, errors) for each chunk, in order; with ``jobs > 1`` over a process pool."""
    if jobs <= 1:
        for S in chunks:
            yield S, oracle.errors(S)
        return
    import multiprocessing as mp

    ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else None
    args = (oracle.code, oracle.kind, _weights_of(oracle), oracle.decoder.tol)
    pool = ProcessPoolExecutor(jobs, mp_context=ctx, initializer=_init_worker, initargs=args)
    try:
        pending: list[tuple[np.ndarray, Future[np.ndarray]]] = []
        for S in chunks:
            pending.append((S, pool.submit(_eval_chunk, S)))
            if len(pending) >= 2 * jobs:
                S0, fut = pending.pop(0)
                oracle.evaluations += S0.shape[0]
                yield S0, fut.result()
        for S0, fut in pending:
            oracle.evaluations += S0.shape[0]
            yield S0, fut.result()
    except BaseException:  # Ctrl-C, SIGTERM, an early stop: end the workers now
        for proc in list((getattr(pool, "_processes", None) or {}).values()):
            proc.terminate()
        # Wait for the pool's manager thread (it ends at once: its workers are gone).  Left
        # running, it can close its wake-up pipe while concurrent.futures' exit hook writes to
        # it, and Python prints "Exception ignored ... Bad file descriptor" after our summary.
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown()


#: searches over fewer straggler sets than this run in one process whatever ``jobs`` says
#: (starting processes costs more than it saves)
PARALLEL_MIN_SETS = 50_000


def resolve_jobs(jobs: int, need: int | None = None) -> int:
    """Processes to use: ``jobs`` (0 = every core), but one for small searches."""
    if need is not None and need < PARALLEL_MIN_SETS:
        return 1
    return max(1, os.cpu_count() or 1) if jobs == 0 else max(1, jobs)


def set_work(code: GradientCode, s: int, sets: int) -> int:
    """Estimated work of evaluating ``sets`` straggler sets of size s (one least-squares or
    elimination over the n - s survivors each; see :func:`gctool.limits.solve_cost`)."""
    from gctool.limits import solve_cost

    return sets * solve_cost(max(1, code.n - s), code.B.shape[1], code.field.is_finite)


def check_set_work(code: GradientCode, s: int, sets: int, what: str) -> None:
    """Refuse (before any set is evaluated) when ``sets`` sets of size s exceed the work
    budget."""
    from gctool.limits import check_work

    check_work(f"{what} (n={code.n}, k*m={code.B.shape[1]}, s={s}): {sets:,} straggler sets, "
               f"one {code.n - s} x {code.B.shape[1]} system each", set_work(code, s, sets),
               "attack a smaller code or a finite-field version of it, or raise "
               "--max-work")


# -- worst case -----------------------------------------------------------------------------------
def worst(oracle: Oracle, s: int, *, max_sets: int, symmetry: bool = True, jobs: int = 1,
          progress: Progress | None = None) -> WorstOutcome:
    """The worst straggler set of size s (exact)."""
    n = oracle.n
    rot = rotation_for(oracle) if symmetry else None
    need = count_evaluated(n, s, rot)
    if need > max_sets:
        raise BudgetExceeded(
            f"exhaustive attack (n={n}, s={s}) needs {need:,} straggler sets ({need:.2g}), above "
            f"the budget of {max_sets:,}; raise it with --max-sets or use --method bnb/greedy")
    check_set_work(oracle.code, s, need, "exhaustive attack")
    size = oracle.chunk_size(s)
    best_err, best_set, checked = -np.inf, None, 0
    # -- rank-range tasks on a Dask cluster (gctool.audit.distributed.use_runner) ----
    from gctool.audit.distributed import current_runner, worst_ranked

    runner = current_runner() if s > 0 else None
    # -------------------------------------------------------------------------------------------
    try:
        if runner is not None:
            best_err, best_set, checked = worst_ranked(oracle, s, rot, need, runner, progress)
        stream: Any = (() if runner is not None
                       else evaluate_stream(oracle, _sets(n, s, size, rot),
                                            resolve_jobs(jobs, need)))
        for S, err in stream:
            i = first_max(err)  # first (tied) maximum: lexicographically smallest set
            if best_set is None or beats(float(err[i]), best_err):
                best_err, best_set = float(err[i]), S[i].tolist()
            checked += S.shape[0]
            if progress is not None:
                progress(checked, need)
    except KeyboardInterrupt:
        raise SearchInterrupted(
            f"interrupted after checking {checked:,} of {need:,} straggler sets (size {s}); "
            f"worst error so far {best_err:.6g} at {best_set}") from None
    out = WorstOutcome(best_set, best_err, True, "exhaustive", checked, comb(n, s))
    if rot is not None:
        out.notes.append(f"rotation symmetry (i -> i + {rot.t}): evaluated one set per orbit "
                         f"({checked:,} of {comb(n, s):,})")
    elif symmetry and s > 0:
        out.notes.extend(note for note in [rotation_note(oracle)] if note)
    return out


# -- threshold ------------------------------------------------------------------------------------
def column_witness(oracle: Oracle, limit: float) -> tuple[list[int], float] | None:
    """Holders of the least replicated partition(s), if their loss exceeds ``limit``."""
    code = oracle.code
    rep = code.replication
    order = np.argsort(rep, kind="stable")
    for j in order[: min(8, order.size)]:
        S = np.flatnonzero(code.support[:, j]).tolist()
        if not S:
            continue
        err = oracle.error(S)
        if err > limit:
            return S, err
    return None


def threshold(oracle: Oracle, limit: float, *, max_sets: int, symmetry: bool = True,
              jobs: int = 1, progress: Progress | None = None) -> ThresholdOutcome:
    """Fewest stragglers whose error exceeds ``limit`` (exact); raises BudgetExceeded."""
    n = oracle.n
    rot = rotation_for(oracle) if symmetry else None
    witness = column_witness(oracle, limit) if oracle.monotone else None
    top = len(witness[0]) if witness else n
    grand = sum(count_evaluated(n, t, rot) for t in range(top + 1))
    checked = 0
    try:
        for t in range(top + 1):
            need = count_evaluated(n, t, rot)
            if checked + need > max_sets:
                raise BudgetExceeded(
                    f"threshold search (n={n}) needs more than {max_sets:,} straggler sets; so "
                    f"far no set of size < {t} exceeds epsilon, so the threshold is >= {t}")
            # -- rank-range tasks on a Dask cluster (gctool.audit.distributed) ----------
            from gctool.audit.distributed import current_runner, threshold_ranked

            runner = current_runner() if t > 0 else None
            if runner is not None:
                found, found_err, done = threshold_ranked(oracle, t, rot, limit, runner)
                checked += done
                if found is not None:
                    out = ThresholdOutcome(t, found, found_err, True, "exhaustive", t, checked,
                                           grand)
                    _note_reps(out, rot, oracle, symmetry)
                    return out
                if progress is not None:
                    progress(checked, grand)
                continue
            # -------------------------------------------------------------------------------------
            size = oracle.chunk_size(t)
            for S, err in evaluate_stream(oracle, _sets(n, t, size, rot),
                                          resolve_jobs(jobs, need)):
                over = np.flatnonzero(err > limit)
                if over.size:
                    i = int(over[0])
                    checked += i + 1
                    out = ThresholdOutcome(t, S[i].tolist(), float(err[i]), True, "exhaustive",
                                           t, checked, grand)
                    _note_reps(out, rot, oracle, symmetry)
                    return out
                checked += S.shape[0]
                if progress is not None:
                    progress(checked, grand)
    except KeyboardInterrupt:
        raise SearchInterrupted(f"interrupted after checking {checked:,} straggler sets; "
                                "no verdict") from None
    out = ThresholdOutcome(None, None, None, True, "exhaustive", n + 1, checked, grand)
    _note_reps(out, rot, oracle, symmetry)
    return out


def _note_reps(out: ThresholdOutcome, rot: Rotation | None, oracle: Oracle, symmetry: bool
               ) -> None:
    if rot is not None:
        out.notes.append(f"rotation symmetry (i -> i + {rot.t}): one set per orbit evaluated")
    elif symmetry:
        out.notes.extend(note for note in [rotation_note(oracle)] if note)
