"""Exact threshold T_0 by enumerating elementary vectors (reference §0.3, §7.2).

``T_0 = min{ wt(y) : y in range(B), phi(y) != 0 }`` where ``phi(Bx) = t^T x`` (well defined when
the full set decodes), and the minimum is attained at an *elementary* vector of range(B) (one of
minimal support).  Every elementary vector vanishes on a set Z of r - 1 rows with
``rank(B_Z) = r - 1`` (r = rank B), and is then the unique (up to scale) ``y in range(B)`` with
``y_Z = 0``.  So T_0 is the smallest weight over the ``C(n, r - 1)`` sets Z, which beats straggler
enumeration when r is small.  The support of the best y is a witness straggler set; gctool
checks it with the decoder.

Coordinates: with a basis ``Q`` (n x r) of range(B), ``y = Q c`` and ``phi_u(y) = g_u^H c``.
Over R/C, Q comes from the SVD used by the optimal oracle and ``g_u = Q^H alpha_u``; rank and
zero tests use relative tolerances (1e-9), which prove nothing: the witness is checked by the
decoder, and "no smaller set fails" is checked by the decoder too (its proved float64 verdicts,
escalated to exact arithmetic) on every smaller straggler set, within ``CONFIRM_SETS`` sets.
Past that the answer is a bound (``lower <= T <= witness size``), labelled heuristic.  Over
GF(q), Q is a basis of the column space, ``B = Q R`` and ``g_u`` solves ``R^T g_u = t_u``;
everything is exact.
"""

from __future__ import annotations

from collections.abc import Callable
from math import comb
from typing import Any

import numpy as np

from gctool.algebra.gf import ArithPath, muladd_ns
from gctool.algebra.linalg import elimination_cost, matrix_rank, solve_batch
from gctool.audit.oracles import OptimalOracle
from gctool.audit.outcome import ThresholdOutcome
from gctool.decode.cost import system_time
from gctool.engine.enumeration import straggler_chunks
from gctool.errors import SearchInterrupted
from gctool.limits import REL_SLACK
from gctool.wording import counted

Progress = Callable[[int, int], None]
_RTOL = REL_SLACK
#: over R/C, smaller straggler sets checked by the decoder to prove a primal result
CONFIRM_SETS = 200_000


def cost(oracle: OptimalOracle) -> int:
    """Number of row sets the cheaper enumeration (primal or dual) visits."""
    return _dual_cost(oracle) if _use_dual(oracle) else _primal_cost(oracle)


def _use_dual(oracle: OptimalOracle) -> bool:
    """Does the search enumerate the dual (R/C only: its Gram probes are float64)?"""
    return not oracle.finite and _dual_cost(oracle) < _primal_cost(oracle)


def _primal_cost(oracle: OptimalOracle) -> int:
    r = _rank(oracle)
    return comb(oracle.n, r - 1) if r >= 1 else 1


def _dual_cost(oracle: OptimalOracle) -> int:
    """Dual enumeration (R/C only): every set of at most d = n - r workers, plus a few."""
    d = oracle.n - oracle.rank
    return sum(comb(oracle.n, t) for t in range(d + 1)) + oracle.n


def work(oracle: OptimalOracle) -> float:
    """Estimated work of the enumeration that :func:`elementary_threshold` runs, before it
    starts: the primal's ``C(n, r - 1)`` null vectors of (r - 1) x r systems, or the dual's
    Gram probes of every set of at most d workers and the decoder on the sets of size d + 1
    (the co-rank bound; further sets, and the decoder's confirmation of a primal witness, are
    checked against the budget before each size).  Over GF(q) the rank r takes an elimination
    of B first (:func:`rank_work`): when that does not fit what is left of the budget, its
    estimate alone (the rank is not computed); else the rank is computed (and charged)."""
    from gctool.budget import FAST_SET_COST, SMALL_SOLVE_FACTOR

    if not _rank_affordable(oracle):
        return rank_work(oracle)
    if _use_dual(oracle):
        n, d = oracle.n, oracle.n - oracle.rank
        probes = sum(comb(n, t) * (FAST_SET_COST + SMALL_SOLVE_FACTOR * t * d * max(1, min(t, d)))
                     for t in range(1, d + 1))
        return probes + oracle.set_work(d + 1, comb(n, d + 1)) if d < n else probes
    return _primal_work(oracle, _rank(oracle))


#: over GF(q) the primal search walks its row sets in chunks of CHUNK_SETS ...
CHUNK_SETS = 20_000
#: ... on galois arrays (:func:`_null_vectors`): each set's (r - 1) x r system in a batch costs
#: GALOIS_SET_NS and its multiply-adds (with the products C Q^T and C G) at galois' rate
#: (:func:`~gctool.algebra.gf.muladd_ns`, "galois"); each chunk up to r passes (one per
#: coordinate fixed to 1, while sets remain whose null vector has it 0: Q is in echelon form,
#: so many do) of r - 1 pivots, GALOIS_PIVOT_NS each (a dozen galois calls over the batch);
#: and the search GALOIS_START_NS once (the basis: galois' column space, a rank per pivot
#: row, an inverse).  Random dense n x k = 14 x 10 to 22 x 6 (560-38,760 sets), best CPU of 3
#: in one process, loaded 2-core machine: 0.14-0.29 s for the 560 sets of 16 x 14, where a
#: flat 50 us a set and 10 ns a multiply-add read 3.4-7, and 0.11-0.53 on 18 x 8 and 22 x 6
GALOIS_SET_NS = 2_000
GALOIS_PIVOT_NS = 400_000
GALOIS_START_NS = 40_000_000


def _null_work(oracle: OptimalOracle, r: int, sets: int) -> float:
    """``sets`` row sets' null vectors, one chunk's or fewer (:func:`_null_vectors`): their
    (r - 1) x r systems of a batch, over R/C SVDs (:func:`gctool.decode.cost.system_time`),
    over GF(q) eliminations on galois arrays (:data:`GALOIS_SET_NS` and after)."""
    if not oracle.finite:
        return sets * system_time(oracle.code.field, r - 1, r)
    muladds = (r - 1) * r * max(1, r - 1) + r * (oracle.n + oracle.code.m)  # and C Q^T, C G
    return (sets * (GALOIS_SET_NS + muladd_ns(oracle.code.field, ArithPath.GALOIS) * muladds)
            + r * max(1, r - 1) * GALOIS_PIVOT_NS)


def _primal_work(oracle: OptimalOracle, r: int) -> float:
    """The primal search's null vectors: :func:`_null_work` of each chunk, and over GF(q) its
    basis (:data:`GALOIS_START_NS`)."""
    sets = _primal_cost(oracle)
    full, rest = divmod(sets, CHUNK_SETS)
    work = full * _null_work(oracle, r, CHUNK_SETS) + (_null_work(oracle, r, rest) if rest else 0)
    return work + (GALOIS_START_NS if oracle.finite else 0)


def affordable(oracle: OptimalOracle, sets: int, s: int) -> bool:
    """Do ``sets`` more straggler sets of size s fit what is left of the oracle's budget?"""
    return oracle.meter.affords(oracle.set_work(s, sets))


def check_budget(oracle: OptimalOracle) -> None:
    """Refuse the enumeration, before it starts, when its estimated :func:`work` (over GF(q),
    first the elimination that gives the rank) does not fit what is left of the oracle's work
    budget (one line with the estimate)."""
    remedy = f"use {methods_instead(oracle)}, a smaller code, or raise `max_work`"
    if not _rank_affordable(oracle):
        K = oracle.code.B.shape[1]
        oracle.budget.check_work(f"elementary-vector search (n={oracle.n}, {oracle.code.field}"
                                 f"; the rank of B, an elimination of {oracle.n} x {K})",
                                 oracle.meter.spent + rank_work(oracle), remedy)
    side = "dual, sets of up to the co-rank" if _use_dual(oracle) \
        else "primal, C(n, rank - 1) row sets"
    oracle.budget.check_work(f"elementary-vector search (n={oracle.n}, {oracle.code.field}; "
                             f"{side}): {cost(oracle):,} sets", oracle.meter.spent + work(oracle),
                             remedy)


def rank_work(oracle: OptimalOracle) -> float:
    """Estimated work of the rank of B still to compute: one elimination over GF(q)
    (:func:`gctool.algebra.linalg.elimination_cost`; none over R/C, where the oracle's SVD
    gave it, or once computed)."""
    if not oracle.finite or oracle.exact_rank is not None:
        return 0.0
    rows, cols = oracle.code.B.shape
    return elimination_cost(rows, cols, oracle.code.field)


def _rank_affordable(oracle: OptimalOracle) -> bool:
    return oracle.meter.affords(rank_work(oracle))


def _rank(oracle: OptimalOracle) -> int:
    """rank B: the oracle's over R/C; over GF(q) one exact elimination, charged to the meter
    (callers check :func:`rank_work` first) and kept."""
    if not oracle.finite:
        return oracle.rank
    if oracle.exact_rank is None:
        oracle.meter.charge(rank_work(oracle))
        oracle.exact_rank = matrix_rank(oracle.code.field, oracle.code.B)
    return oracle.exact_rank


def methods_instead(oracle: OptimalOracle) -> str:
    """The methods a refusal of the elementary search suggests: those that ``auto`` tries
    after it and that apply to the code (no milp over GF(q))."""
    from gctool.audit.attack.options import methods_after

    return methods_after("elementary", oracle)


def elementary_threshold(oracle: OptimalOracle, *, progress: Progress | None = None
                         ) -> ThresholdOutcome:
    """The exact threshold from the elementary vectors of range(B), within ``oracle.budget``
    (its ``max_sets`` caps the row sets or straggler sets enumerated)."""
    n = oracle.n
    full = oracle.error([])
    if full > oracle.limit:
        return ThresholdOutcome(0, [], full, True, "elementary", 0, 1, 1,
                                notes=["the full set of workers does not decode"])
    check_budget(oracle)
    need = cost(oracle)
    oracle.budget.check_sets(f"the elementary-vector search (n={n})", need,
                             f"raise `max_sets`, or use {methods_instead(oracle)}")
    if _use_dual(oracle):
        return dual_threshold(oracle, need, progress)
    if oracle.finite:
        oracle.meter.charge(GALOIS_START_NS)
    Q, G = _basis(oracle)
    r = Q.shape[1]
    best_w, best_y, done = n + 1, None, 0
    try:
        for Z in straggler_chunks(n, r - 1, CHUNK_SETS):
            oracle.meter.charge(_null_work(oracle, r, Z.shape[0]))
            C, ok = _null_vectors(oracle, Q, Z)
            nz = _nonzero(oracle, C @ Q.T)  # support of y = Q c
            phi = _phi_nonzero(oracle, G, C)  # (b, m): phi_u(y) != 0
            valid = ok & phi.any(axis=1)
            if valid.any():
                w = np.where(valid, nz.sum(axis=1), n + 1)
                i = int(np.argmin(w))
                if w[i] < best_w:
                    best_w, best_y = int(w[i]), nz[i]
            done += Z.shape[0]
            if progress is not None:
                progress(done, need)
    except KeyboardInterrupt:
        raise SearchInterrupted(f"elementary-vector search interrupted after {done:,} of "
                                f"{need:,} row sets; no verdict") from None
    if best_y is None:
        out = ThresholdOutcome(None, None, None, True, "elementary", n + 1, done, need)
        if not oracle.finite:  # removing every worker fails, so float64 missed something
            out.exact, out.lower = False, 0
            out.notes.append("numerical trouble: no elementary vector found in float64; the "
                             "result is not certified")
        return out
    S = np.flatnonzero(best_y).tolist()
    err = oracle.error(S)
    out = ThresholdOutcome(best_w, S, err, True, "elementary", best_w, done, need)
    out.notes.append(f"elementary vectors of range(B): rank {r}, {done:,} row sets")
    if not oracle.fails(err):  # no witness under the tolerance rule: claim no threshold
        out = ThresholdOutcome(None, None, None, False, "elementary", 0, done, need)
        out.notes.append(f"elementary vectors of range(B): rank {r}, {done:,} row sets")
        out.notes.append(f"numerical trouble: the elementary witness {S} decodes under the "
                         "decoder's tolerance; no witness, the result is not certified")
    elif not oracle.finite:
        _confirm(oracle, out, min(oracle.budget.max_sets or CONFIRM_SETS, CONFIRM_SETS))
    return out


def _confirm(oracle: OptimalOracle, out: ThresholdOutcome, budget: int) -> None:
    """Over R/C: prove "no smaller set fails" with the decoder on every straggler set smaller
    than the witness, smallest first, within ``budget`` sets; else label the result a bound."""
    n, w = oracle.n, int(out.threshold or 0)
    checked = 0
    for t in range(1, w):
        over_work = not affordable(oracle, comb(n, t), t)
        if checked + comb(n, t) > budget or over_work:
            out.exact, out.lower = False, t
            limit = ("the work budget (`max_work`)" if over_work
                     else f"the check budget of {budget:,}")
            out.notes.append(
                f"float64 support tests (relative {_RTOL:g}) are not a proof and the "
                f"{sum(comb(n, u) for u in range(1, w)):,} smaller straggler sets exceed "
                f"{limit}: {t} <= threshold <= {w} (every set of fewer than "
                f"{counted(t, 'straggler')} decodes, checked by the decoder)")
            out.checked += checked
            return
        for S in straggler_chunks(n, t, 20_000):
            err = oracle.errors(S)
            bad = np.flatnonzero(oracle.fails(err))
            if bad.size:  # a smaller elementary vector that the float64 tests missed
                i = int(bad[0])
                out.threshold, out.stragglers, out.error = t, S[i].tolist(), float(err[i])
                out.lower, out.checked = t, out.checked + checked + i + 1
                out.notes.append(f"the decoder found a failing set of "
                                 f"{counted(t, 'straggler')} that the float64 support tests "
                                 "missed")
                return
            checked += S.shape[0]
    out.lower, out.checked = w, out.checked + checked
    out.notes.append(f"no smaller set fails: all {checked:,} straggler sets of fewer than {w} "
                     "checked by the decoder")


def _basis(oracle: OptimalOracle) -> tuple[Any, Any]:
    """(Q, G): a basis of range(B) (n x r) and the functionals g_u as columns (r x m)."""
    if not oracle.finite:
        return oracle.Q, oracle.Q.conj().T @ oracle.alpha
    code = oracle.code
    GF = code.field.galois()
    B = GF(np.asarray(code.B))
    Qt = B.column_space()  # (r, n)
    Q = Qt.T
    piv = _pivot_rows(GF, Q)
    R = np.linalg.inv(Q[piv]) @ B[piv]  # B = Q R
    T = GF(code.targets())
    aug = GF(np.concatenate([np.asarray(R.T), np.asarray(T.T)], axis=1))[None]
    consistent, _, X = solve_batch(GF, aug, R.shape[0])
    assert bool(consistent[0]), "the full set decodes, so every target lies in row(B)"
    return Q, X[0]


def _pivot_rows(GF: Any, Q: Any) -> list[int]:
    rows: list[int] = []
    for i in range(Q.shape[0]):
        trial = rows + [i]
        if np.linalg.matrix_rank(Q[trial]) == len(trial):
            rows = trial
        if len(rows) == Q.shape[1]:
            break
    return rows


def _null_vectors(oracle: OptimalOracle, Q: Any, Z: np.ndarray) -> tuple[Any, np.ndarray]:
    """For each Z (b, r-1): c spanning null(Q_Z) and whether rank(Q_Z) = r - 1."""
    b, r = Z.shape[0], Q.shape[1]
    if r == 1:
        one = np.ones((b, 1))
        return (oracle.code.field.galois()(one.astype(np.int64)) if oracle.finite else one,
                np.ones(b, dtype=bool))
    if not oracle.finite:
        QZ = Q[Z]  # (b, r-1, r)
        _, sv, Vh = np.linalg.svd(QZ, full_matrices=True)
        ok = sv[:, -1] > _RTOL * np.maximum(sv[:, 0], 1e-300)
        return np.conj(Vh[:, -1, :]), ok
    GF = oracle.code.field.galois()
    QZ = Q[Z]
    C = GF.Zeros((b, r))
    ok = np.zeros(b, dtype=bool)
    for c0 in range(r):
        todo = np.flatnonzero(~ok)
        if todo.size == 0:
            break
        others = [c for c in range(r) if c != c0]
        A = QZ[todo][:, :, others]
        rhs = -QZ[todo][:, :, [c0]]
        consistent, rank, X = solve_batch(GF, np.concatenate([A, rhs], axis=2), r - 1)
        good = consistent & (rank == r - 1)
        rows = todo[good]
        C[rows, c0] = 1
        C[np.ix_(rows, others)] = X[good][:, :, 0]
        ok[rows] = True
    return C, ok


def _phi_nonzero(oracle: OptimalOracle, G: Any, C: Any) -> np.ndarray:
    """phi_u(Q c) = g_u^H c != 0 (c is a unit vector over R/C, so |phi_u| <= ||g_u||)."""
    if oracle.finite:
        return np.asarray((C @ G).view(np.ndarray)) != 0
    scale = np.maximum(np.linalg.norm(G, axis=0), 1e-300)
    return np.abs(C @ G.conj()) > _RTOL * scale[None, :]


def _nonzero(oracle: OptimalOracle, Y: Any) -> np.ndarray:
    if oracle.finite:
        return np.asarray(Y.view(np.ndarray)) != 0
    mag = np.abs(Y)
    scale = np.maximum(mag.max(axis=1, keepdims=True), 1e-300)
    return mag > _RTOL * scale


def dual_threshold(oracle: OptimalOracle, need: int, progress: Progress | None = None
                   ) -> ThresholdOutcome:
    """T_0 through the circuits of range(B)^perp (R/C, cheap when the co-rank d is small).

    y in range(B) is supported on S iff ``Qperp[S]^H y_S = 0`` (Qperp: orthonormal basis of
    range(B)^perp, n x d), so a set S of t <= d stragglers can only fail when the t x d matrix
    ``A = Qperp[S]`` is rank deficient.  Its singular values are at most 1, so
    ``sigma_min(A) >= sqrt(det(A A^H))``: a set whose Gram determinant clears the oracle's
    ``sig_kept`` margin provably decodes; the others get the exact smallest eigenvalue of the
    Gram matrix, and the few still below the margin go to the oracle (and its SVD decoder).
    By the Singleton-type bound T_0 <= d + 1 the scan stops at size d + 1 for an exact rank;
    under the tolerance rule (a singular value above the rank cut-off may still be too small to
    decode) it goes on with larger sets, checked by the decoder, within ``CONFIRM_SETS``
    further sets; past that the answer is a bound, labelled heuristic.
    """
    n, d = oracle.n, oracle.n - oracle.rank
    done, beyond = 0, 0
    try:
        for t in range(1, n + 1):
            if t > d + 1:
                over_work = not affordable(oracle, comb(n, t), t)
                if beyond + comb(n, t) > CONFIRM_SETS or over_work:
                    out = ThresholdOutcome(None, None, None, False, "elementary", t, done,
                                           max(need, done))
                    out.notes.append(
                        f"dual elementary vectors: no failing set of up to "
                        f"{counted(t - 1, 'straggler')} "
                        f"(beyond the co-rank bound {d + 1}, which float64 ranks do not prove); "
                        f"larger sets exceed {'the work' if over_work else 'the check'} "
                        f"budget: threshold >= {t}")
                    return out
                beyond += comb(n, t)
            for chunk in straggler_chunks(n, t, 50_000):
                # sets of at most d workers: only those the Gram screen cannot clear (at their
                # places in the chunk) go to the decoder
                where = _screen(oracle, chunk) if t <= d else np.arange(chunk.shape[0])
                if where.size:
                    S = chunk[where]
                    err = oracle.errors(S)
                    bad = np.flatnonzero(oracle.fails(err))
                    if bad.size:
                        i = int(bad[0])
                        seen = done + int(where[i]) + 1  # sets walked up to the witness
                        out = ThresholdOutcome(t, S[i].tolist(), float(err[i]), True,
                                               "elementary", t, seen, max(need, seen))
                        out.notes.append(f"dual elementary vectors: co-rank d = {d}, every "
                                         f"set of < {t} workers provably decodes")
                        return out
                done += chunk.shape[0]
                if progress is not None:
                    progress(min(done, need), need)
    except KeyboardInterrupt:
        raise SearchInterrupted(f"elementary-vector search (dual) interrupted after {done:,} of "
                                f"{need:,} straggler sets; no verdict") from None
    out = ThresholdOutcome(None, None, None, False, "elementary", 0, done, max(need, done))
    out.notes.append("numerical trouble: even with every worker straggling the decoder does not "
                     "fail; the result is not certified")
    return out


def _screen(oracle: OptimalOracle, S: np.ndarray) -> np.ndarray:
    """The rows of S (sets of t <= d workers) that are not provably decodable, as indices
    into S, increasing."""
    from gctool.budget import FAST_SET_COST, SMALL_SOLVE_FACTOR

    b, t = S.shape
    d = oracle.Qperp.shape[1]
    oracle.meter.charge(b * (FAST_SET_COST + SMALL_SOLVE_FACTOR * t * d * max(1, min(t, d))))
    A = oracle.Qperp[S]
    G = A @ np.conj(np.swapaxes(A, 1, 2))
    floor = oracle.sig_kept**2
    unsure = np.real(np.linalg.det(G)) < floor
    rows = np.flatnonzero(unsure)
    if rows.size:
        unsure[rows] = np.linalg.eigvalsh(G[rows])[:, 0] < floor
    return np.flatnonzero(unsure)
