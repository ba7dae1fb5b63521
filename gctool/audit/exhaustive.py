"""Exhaustive attack: every straggler set of a size, in lexicographic order, in batches.

* **Symmetry** (reference §7.7): when B is cyclic up to row scaling,
  ``B[i+1, j+1] = gamma_i B[i, j]`` (indices mod n, k = n, m = 1), the optimal error is invariant
  under rotating S, and every rotation orbit has a member containing worker 0; so only the
  ``C(n-1, s-1)`` sets with ``0 in S`` are evaluated.  For fixed decoding the same holds when
  ``gamma_i = 1`` and the weights are constant.  gctool checks the symmetry on B itself (exactly
  over GF(q), to 1e-12 relative over R/C) and never assumes it from the scheme name.
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
from gctool.errors import BudgetExceeded, SearchInterrupted

Progress = Callable[[int, int], None]


def cyclic_symmetry(oracle: Oracle) -> bool:
    """Is the error invariant under rotating straggler sets (checked on B)?"""
    code = oracle.code
    if code.m != 1 or code.k != code.n or code.n < 2 or oracle.kind == "natural":
        return False
    B = np.asarray(code.B)
    rolled = np.roll(np.roll(B, 1, axis=0), 1, axis=1)  # rolled[i+1, j+1] = B[i, j]
    if oracle.kind == "fixed":
        user = getattr(oracle, "user", None)
        if user is not None and not np.all(user == user.flat[0]):
            return False
        return _close(rolled, B, code.field.is_finite)
    if not np.array_equal(rolled != 0, B != 0):
        return False
    nz = B != 0
    if not nz.any(axis=1).all():
        return bool(np.array_equal(rolled, B) if code.field.is_finite else np.allclose(rolled, B))
    first = np.argmax(nz, axis=1)
    rows = np.arange(code.n)
    if code.field.is_finite:
        GF = code.field.galois()
        G = GF(B)
        gamma = GF(rolled)[rows, first] / G[rows, first]
        return bool(np.array_equal(gamma[:, None] * G, GF(rolled)))
    gamma = rolled[rows, first] / B[rows, first]
    return _close(rolled, gamma[:, None] * B, False)


def _close(X: np.ndarray, Y: np.ndarray, finite: bool) -> bool:
    if finite:
        return bool(np.array_equal(X, Y))
    scale = max(1.0, float(np.max(np.abs(Y)))) if Y.size else 1.0
    return bool(np.max(np.abs(X - Y)) <= 1e-12 * scale)


def _sets(n: int, s: int, size: int, reps: bool) -> Iterator[np.ndarray]:
    if reps and s >= 1:
        for S in straggler_chunks(n - 1, s - 1, size):
            yield np.concatenate([np.zeros((S.shape[0], 1), dtype=np.intp), S + 1], axis=1)
    else:
        yield from straggler_chunks(n, s, size)


def count_evaluated(n: int, s: int, reps: bool) -> int:
    return comb(n - 1, s - 1) if reps and s >= 1 else comb(n, s)


# -- parallel evaluation --------------------------------------------------------------------------
_WORKER: dict[str, Oracle] = {}


def _init_worker(code: Any, decoder: str, weights: Any, tol: float) -> None:
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
    with ProcessPoolExecutor(jobs, mp_context=ctx, initializer=_init_worker,
                             initargs=args) as pool:
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


def resolve_jobs(jobs: int) -> int:
    return max(1, os.cpu_count() or 1) if jobs == 0 else max(1, jobs)


# -- worst case -----------------------------------------------------------------------------------
def worst(oracle: Oracle, s: int, *, max_sets: int, symmetry: bool = True, jobs: int = 1,
          progress: Progress | None = None) -> WorstOutcome:
    """The worst straggler set of size s (exact)."""
    n = oracle.n
    reps = symmetry and cyclic_symmetry(oracle)
    need = count_evaluated(n, s, reps)
    if need > max_sets:
        raise BudgetExceeded(
            f"exhaustive attack (n={n}, s={s}) needs {need:,} straggler sets ({need:.2g}), above "
            f"the budget of {max_sets:,}; raise it with --max-sets or use --method bnb/greedy")
    size = oracle.decoder.chunk_size(max(1, n - s))
    best_err, best_set, checked = -np.inf, None, 0
    try:
        for S, err in evaluate_stream(oracle, _sets(n, s, size, reps), resolve_jobs(jobs)):
            i = int(np.argmax(err))  # first maximum: lexicographically smallest set
            if best_set is None or err[i] > best_err + 1e-12 * max(1.0, abs(best_err)):
                best_err, best_set = float(err[i]), S[i].tolist()
            checked += S.shape[0]
            if progress is not None:
                progress(checked, need)
    except KeyboardInterrupt:
        raise SearchInterrupted(
            f"interrupted after checking {checked:,} of {need:,} straggler sets (size {s}); "
            f"worst error so far {best_err:.6g} at {best_set}") from None
    out = WorstOutcome(best_set, best_err, True, "exhaustive", checked, comb(n, s))
    if reps:
        out.notes.append(f"cyclic symmetry: evaluated the {checked:,} sets containing worker 0, "
                         "one per rotation orbit or more")
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
    reps = symmetry and cyclic_symmetry(oracle)
    witness = column_witness(oracle, limit) if oracle.monotone else None
    top = len(witness[0]) if witness else n
    grand = sum(count_evaluated(n, t, reps) for t in range(top + 1))
    checked = 0
    try:
        for t in range(top + 1):
            need = count_evaluated(n, t, reps)
            if checked + need > max_sets:
                raise BudgetExceeded(
                    f"threshold search (n={n}) needs more than {max_sets:,} straggler sets; so "
                    f"far no set of size < {t} exceeds epsilon, so the threshold is >= {t}")
            size = oracle.decoder.chunk_size(max(1, n - t))
            for S, err in evaluate_stream(oracle, _sets(n, t, size, reps), resolve_jobs(jobs)):
                over = np.flatnonzero(err > limit)
                if over.size:
                    i = int(over[0])
                    checked += i + 1
                    out = ThresholdOutcome(t, S[i].tolist(), float(err[i]), True, "exhaustive",
                                           t, checked, grand)
                    _note_reps(out, reps)
                    return out
                checked += S.shape[0]
                if progress is not None:
                    progress(checked, grand)
    except KeyboardInterrupt:
        raise SearchInterrupted(f"interrupted after checking {checked:,} straggler sets; "
                                "no verdict") from None
    return ThresholdOutcome(None, None, None, True, "exhaustive", n + 1, checked, grand)


def _note_reps(out: ThresholdOutcome, reps: bool) -> None:
    if reps:
        out.notes.append("cyclic symmetry: only sets containing worker 0 were evaluated")
