"""The generic (optimal) decoder over every field, one survivor set at a time or in batches.

For survivors F the master looks for ``a`` with ``a^T B_F = t^T`` for every target ``t`` (the
all-ones vector, or the m piece targets of a communication-efficient code).

* Reals / complex numbers: minimum-norm least squares through a batched SVD of the
  row-normalised B_F (:mod:`gctool.numerics`: rows scaled exactly by powers of two, one rank
  cut-off).  The raw squared error is ``||B_F^T a - t||^2`` summed over targets; F *decodes*
  when that error is at most ``tol * k`` (``tol`` defaults to
  :data:`gctool.limits.DEFAULT_TOL`, reference §0.2).  Every
  result carries diagnostics: the numerical rank, the condition number ``sigma_max /
  sigma_min`` of the row-normalised B_F restricted to its numerical rank (independent of how
  the rows are scaled), and the decoder norm ``||a||_2`` of the decoder for B itself.  That
  decoder is ``a = D a_n`` with ``a_n`` the minimum-norm decoder of the row-normalised ``D B_F``
  (the same vector as B's minimum-norm decoder when B_F has full row rank).
* GF(q): exact Gaussian elimination of ``[B_F^T | T^T]`` (batched; the table
  arithmetic of :mod:`gctool.algebra.gf`, which needs no run-time compilation).  The
  error is an indicator: 0 when every target is recovered exactly, 1 otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from gctool.algebra.gf import GFArith
from gctool.algebra.linalg import solve_batch
from gctool.budget import Meter
from gctool.errors import InvalidInput
from gctool.exactls import (
    ExactClock,
    Undecided,
    charge_exact,
    exact_meter,
    exact_value,
    refined_error,
)
from gctool.model import GradientCode
from gctool.numerics import (
    DECIDE_RTOL,
    DEFAULT_TOL,
    EPS,
    RANK_BAND,
    Tol,
    check_tol,
    condition,
    exact_limit,
    integer_code,
    limit_bracket,
    on_side,
    rank_cutoff,
    residual_bracket,
    residual_gamma,
    structural_rank,
)
from gctool.wording import counted

__all__ = ["DEFAULT_TOL", "BatchResult", "Decoder", "Decoding", "check_tol", "chunk_size",
           "safe_norm"]

_CHUNK_ENTRIES = 2_000_000  # entries of B_F per batch (memory bound for the SVD)


#: a 2-norm of at least this is summed from plain squares (:func:`safe_norm`): any square
#: lost to underflow (below 2.3e-308) is then below 1e-28 of the sum
PLAIN_NORM_MIN = 1e-140


def safe_norm(a: np.ndarray, axis: tuple[int, ...]) -> np.ndarray:
    """2-norm over ``axis`` without overflow or underflow in the squares: the plain sum of
    squares where it is finite and at least :data:`PLAIN_NORM_MIN`, else scaled by the
    largest magnitude (the scaled passes cost twice the plain one: 1 ms of the 10 ms a
    verify of 10,626 sets takes)."""
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        sq = a.real * a.real + a.imag * a.imag if np.iscomplexobj(a) else a * a
        out = np.sqrt(np.sum(sq, axis=axis))
    redo = ~((out >= PLAIN_NORM_MIN) & (out < np.inf))  # nan too
    if not redo.any():
        return np.asarray(out)
    mag = np.abs(a)
    top = mag.max(axis=axis, keepdims=True) if mag.size else mag
    # an entry that overflowed (inf) makes the norm inf, not nan (inf / inf): the largest
    # decoder of a run is then the one that overflows, never left out as 'not computed'
    scale = np.where((top > 0) & (top < np.inf), top, 1.0)
    with np.errstate(over="ignore", invalid="ignore"):
        scaled = np.sqrt(np.sum((mag / scale) ** 2, axis=axis)) * np.squeeze(scale, axis=axis)
    return np.asarray(np.where(redo, scaled, out))


def chunk_size(code: GradientCode, f: int) -> int:
    """How many survivor sets of size f to evaluate per batch (memory bound on B_F)."""
    return max(1, min(65536, _CHUNK_ENTRIES // max(1, f * code.B.shape[1])))


@dataclass(frozen=True)
class BatchResult:
    """Decoding results for a batch of survivor sets (arrays indexed by set)."""

    error: np.ndarray  # raw squared error (indicator 0/1 over GF(q))
    ok: np.ndarray  # bool: decodes within tolerance / exactly
    rank: np.ndarray
    cond: np.ndarray  # nan over GF(q)
    norm: np.ndarray  # ||a|| (Frobenius over targets); nan over GF(q)
    a: np.ndarray | None  # (b, m, f) decoding vectors when requested


@dataclass(frozen=True)
class Decoding:
    """Decoding of one survivor set."""

    survivors: tuple[int, ...]
    a: np.ndarray  # (m, f): row u decodes target u
    ok: bool
    error: float
    rank: int | None  # None when a structured decoder produced ``a`` (no elimination)
    cond: float | None
    norm: float | None
    method: str = "generic"  # which decoder produced ``a``
    note: str | None = None  # e.g. why the structured decoder was not used

    @property
    def residual(self) -> float:
        return float(np.sqrt(self.error))

    def padded(self, n: int) -> np.ndarray:
        """Decoding vectors zero-padded to length n (Tandon's A matrix rows)."""
        out = np.zeros((self.a.shape[0], n), dtype=self.a.dtype)
        out[:, list(self.survivors)] = self.a
        return out


class Decoder:
    """Batched optimal decoder for one code."""

    def __init__(self, code: GradientCode, tol: Tol = DEFAULT_TOL) -> None:
        self.code = code
        self.tol = check_tol(tol)
        self.exact = code.field.is_finite
        self.T = code.targets()  # (m, K)
        # table arithmetic (gctool.algebra.gf): no galois class, so no run-time compilation
        self._gf: Any = GFArith(code.field) if self.exact else None
        if not self.exact:  # exact power-of-two row scaling: same errors, scale-free numerics
            self.Bn, self.row_scale = code.row_normalised()
        self.exact_work = exact_meter()  # exact rational work spent on undecidable sets
        #: the run's work meter (:class:`gctool.budget.Meter`, ns of one core), which the
        #: sets float64 cannot decide are charged their CPU time as it is spent (the refined
        #: proof, then exact arithmetic: :class:`gctool.exactls.ExactClock`); None: a caller
        #: without a run budget (the exact work's size alone bounds them)
        self.meter: Meter | None = None
        self._classes: np.ndarray | None = None
        self._integer = False
        #: the rule's limit exactly (typed tol times k; 0 over GF(q)), its nearest float (what
        #: errors are compared with) and the floats just below and above it (what proofs of
        #: decoding and failing compare bounds with)
        self.exact_limit = Fraction(0) if self.exact else exact_limit(code.k, self.tol)
        self.limit = float(self.exact_limit)
        self.limit_lo, self.limit_hi = limit_bracket(self.exact_limit)

    def chunk_size(self, f: int) -> int:
        """How many survivor sets of size f to evaluate per batch."""
        return chunk_size(self.code, f)

    def evaluate(self, F: np.ndarray, with_vectors: bool = False) -> BatchResult:
        """Evaluate survivor sets ``F`` (int array of shape (b, f), each row sorted)."""
        F = np.asarray(F, dtype=np.intp)
        if F.ndim != 2:
            raise ValueError("F must be a 2-d array of survivor sets")
        if F.shape[1] == 0:
            return self._empty(F.shape[0], with_vectors)
        if self.exact:
            return self._evaluate_gf(F, with_vectors)
        return self._evaluate_numeric(F, with_vectors)

    # -- reals / complex -----------------------------------------------------------------------
    def _evaluate_numeric(self, F: np.ndarray, with_vectors: bool) -> BatchResult:
        BF = self.Bn[F]  # (b, f, K), rows normalised
        b, f, K = BF.shape
        U, S, Vh = np.linalg.svd(BF, full_matrices=False)
        keep = S > rank_cutoff(S[:, :1], BF.shape)
        rank = keep.sum(axis=1)
        Sinv = np.where(keep, 1.0 / np.where(keep, S, 1.0), 0.0)
        Tt = self.T.T.astype(BF.dtype)  # (K, m)
        # a = pinv(B_F^T) t = conj(U) diag(1/S) conj(Vh) t   -> (b, f, m)
        coeff = np.conj(Vh) @ Tt  # (b, r, m)
        a = np.conj(U) @ (Sinv[:, :, None] * coeff)
        resid = np.swapaxes(BF, 1, 2) @ a - Tt  # (b, K, m)
        error = np.sum(np.abs(resid) ** 2, axis=(1, 2))
        cond = condition(S, rank)
        doubt = self._doubtful(F, BF, S, coeff, rank, error, a)
        clock = ExactClock(self.meter, self._exact_done) if doubt.any() else None
        for i in np.flatnonzero(doubt):  # float64 cannot decide: exact rational arithmetic
            what = f"straggler set {self._stragglers(F[i])}"
            if not self._rank_certified(F[i:i + 1], S[i:i + 1], rank[i:i + 1])[0]:
                raise Undecided(
                    f"float64 cannot decide {what}: B_F (rows normalised) has condition "
                    f"{cond[i]:.3g} on its numerical rank {int(rank[i])} and an error of "
                    f"{error[i]:.3g} against the tolerance {self.limit:.3g}, and its exact rank "
                    "cannot be certified; use a finite field or a better-conditioned code")
            assert clock is not None
            refined = refined_error(self.Bn[F[i]], self.T, self.limit_lo)
            clock()
            if refined is not None:  # proved to decode, at twice float64's precision
                error[i] = refined
                continue
            charge_exact(self.exact_work, f, K, what)
            # the exact error against the exact limit; its float is on the verdict's side of
            # self.limit, so every later comparison with the limit gives the same verdict
            error[i] = on_side(exact_value(self.Bn[F[i]], self.T, clock), self.exact_limit)
            clock()
        with np.errstate(over="ignore"):  # inf: an entry beyond float64 (norm inf)
            a = a * self.row_scale[F][:, :, None]  # the decoder of B itself: a = D a_n
        norm = safe_norm(a, (1, 2))
        ok = error <= self.limit
        vectors = np.swapaxes(a, 1, 2) if with_vectors else None
        if vectors is not None and not np.isfinite(vectors).all():
            raise InvalidInput(
                "the decoding vectors of this code overflow float64 (its non-zero entries are "
                "so small that their inverses exceed about 1.8e308): out of range; scale B "
                "(the verdicts of verify and attack do not depend on the scale)")
        return BatchResult(error, ok, rank, cond, norm, vectors)

    def _exact_done(self) -> str:
        """What a refusal by :attr:`meter` in exact arithmetic says was done."""
        sets = self.exact_work.charges
        return f"{counted(sets, 'set')} in exact arithmetic" if sets else ""

    def _stragglers(self, F: np.ndarray) -> list[int]:
        return sorted(set(range(self.code.n)) - set(F.tolist()))

    def _doubtful(self, F: np.ndarray, BF: np.ndarray, S: np.ndarray, coeff: np.ndarray,
                  rank: np.ndarray, error: np.ndarray, a: np.ndarray) -> np.ndarray:
        """Sets whose float64 verdict is not proved under the rule of :mod:`gctool.numerics`
        (singular values of the row-normalised B_F at or below the cut-off do not count).

        * a singular value above the cut-off but within a factor ``RANK_BAND`` of it (it might
          be at or below the cut-off exactly): the verdict must be the same whether it counts
          or not, else the set is undecided (:class:`Undecided`).  Values at or below the
          cut-off are the round-off level of an exact zero and never count;
        * decodes: proved when the computed decoder's residual plus a rigorous round-off bound
          (``g (|B_F^T| |a| + |t|)``, g of :func:`gctool.numerics.residual_gamma`: any BLAS
          order) is within the tolerance;
        * fails: proved when the kept singular values are well separated from round-off
          (``sigma_r >= DECIDE_RTOL sigma_1``) and the error clears the tolerance by more than
          its perturbation bound.
        Every other set is doubtful: it is decided exactly when the exact rank of B_F is the
        numerical rank (full row rank, rank deficiency explained by exactly proportional rows,
        or a Hadamard-type bound for integer codes), else undecided."""
        b, f, K = BF.shape
        smax = S[:, 0]
        cut = rank_cutoff(S[:, :1], BF.shape)
        tt = float(np.sum(np.abs(self.T) ** 2))
        proj = np.cumsum(np.sum(np.abs(coeff) ** 2, axis=2), axis=1)  # (b, p)
        r_lo = np.sum(S > cut * RANK_BAND, axis=1)
        r_hi = np.sum(S > cut, axis=1)  # the numerical rank
        idx = np.arange(b)

        def err_at(r: np.ndarray) -> np.ndarray:
            return tt - np.where(r > 0, proj[idx, np.maximum(r - 1, 0)], 0.0)

        tnorm = float(np.sqrt(tt))

        def accuracy(sr: np.ndarray) -> np.ndarray:  # perturbation of sqrt(error) at sigma_r
            with np.errstate(all="ignore"):
                return 10 * (f + K) * EPS * np.where(sr > 0, smax / sr, np.inf) * tnorm

        def above(r: np.ndarray) -> np.ndarray:  # err_at(r) above the limit (r = 0: exactly)
            return np.where(r > 0, err_at(r) > self.limit, Fraction(tt) > self.exact_limit)

        band = r_lo != r_hi
        split = np.zeros(b, dtype=bool)
        if band.any():
            split = above(r_lo) != above(r_hi)
            split &= band
            if split.any():  # fine when the singular values at the cut-off are exact zeros
                rows = np.flatnonzero(split)
                sure = self._rank_certified(F[rows], S[rows], r_lo[rows])
                rows = rows[~sure]
            if split.any() and rows.size:
                i = int(rows[0])
                raise Undecided(
                    f"float64 cannot decide straggler set {self._stragglers(F[i])}: a singular "
                    f"value of B_F (rows normalised) lies at the rank cut-off "
                    f"{float(cut[i, 0]):.3g}, and whether it counts decides the verdict; use a "
                    "finite field or a better-conditioned code")
        gamma = residual_gamma(f, np.iscomplexobj(BF) or np.iscomplexobj(a))  # any BLAS order
        with np.errstate(all="ignore"):
            slack = gamma * (np.abs(np.swapaxes(BF, 1, 2)) @ np.abs(a))  # (b, K, m)
            # rounded upward: the computed error (its subtraction of t and its sum of 2 K m
            # squares), the square roots, the sum and the square each lose a few ulps, and an
            # error on the limit's float must not come out below it (the exact error of
            # 30991039/3874033 at the limit 24999011850183/3125000000000 was proved to decode)
            bound = residual_bracket(error, np.sqrt(np.sum(slack**2, axis=(1, 2))),
                                     K * self.T.shape[0])[1]
        proved_ok = bound <= self.limit_lo
        sr = np.take_along_axis(S, np.maximum(rank - 1, 0)[:, None], axis=1)[:, 0]
        well = (rank > 0) & (sr >= DECIDE_RTOL * smax)
        with np.errstate(all="ignore"):
            proved_fail = well & (np.sqrt(error) - accuracy(sr) > np.sqrt(self.limit_hi))
        proved_fail |= (rank == 0) & (error > self.limit_hi)  # error = ||T||^2, exact
        # proved to decode with the values in the band counted: without them too?  (Else the
        # verdict may hinge on them: decided exactly once the numerical rank is certified, like
        # every doubtful set.  Both float errors at or below the limit do not prove it: err_at
        # is ||t||^2 minus a projection, and loses (f + K) ulps of ||t||^2.)
        hinge = band & proved_ok
        if hinge.any():
            rows = np.flatnonzero(hinge)
            hinge[rows] = ~self._decodes_truncated(BF[rows], r_lo[rows])
        return ~(proved_ok | proved_fail) | split | hinge

    def _decodes_truncated(self, BF: np.ndarray, r: np.ndarray) -> np.ndarray:
        """Is ``err_r(F) <= exact_limit`` proved, ``err_r`` the error of ``B_F`` with every
        singular value after the r largest dropped (``||t||^2`` exactly for r = 0)?  Rigorous
        but for one assumption, LAPACK's SVD backward error (at most ``10 max(f, K) eps
        ||B_F||``, as the attack oracle's (S)): for any decoder a, ``sqrt(err_r) <=
        ||B_F^T a - t|| + sigma_{r+1}(B_F) ||a||`` (the rank-r truncation B_r has
        ``||B_F - B_r|| = sigma_{r+1}`` and ``err_r = min_a ||B_r^T a - t||^2``).  a: the
        rank-r minimum-norm decoder of this SVD; its residual with its rigorous round-off
        bound, rounded upward (:func:`gctool.numerics.residual_bracket`)."""
        b, f, K = BF.shape
        Tt = self.T.T.astype(BF.dtype)
        U, S, Vh = np.linalg.svd(BF, full_matrices=False)
        p = S.shape[1]
        keep = np.arange(p)[None, :] < r[:, None]
        with np.errstate(all="ignore"):
            Sinv = np.where(keep, 1.0 / np.where(keep, S, 1.0), 0.0)
            a = np.conj(U) @ (Sinv[:, :, None] * (np.conj(Vh) @ Tt))  # (b, f, m)
            error = np.sum(np.abs(np.swapaxes(BF, 1, 2) @ a - Tt) ** 2, axis=(1, 2))
            gamma = residual_gamma(f, np.iscomplexobj(BF) or np.iscomplexobj(a))
            slack = gamma * (np.abs(np.swapaxes(BF, 1, 2)) @ np.abs(a))
            nxt = np.take_along_axis(S, np.minimum(r, p - 1)[:, None], axis=1)[:, 0]
            nxt = np.where(r < p, nxt + 10 * max(f, K) * EPS * S[:, 0], 0.0)
            tail = nxt * np.sqrt(np.sum(np.abs(a) ** 2, axis=(1, 2))) * (1 + (2 * f + 8) * EPS)
            bound = residual_bracket(error, np.sqrt(np.sum(slack**2, axis=(1, 2))) + tail,
                                     K * Tt.shape[1])[1]
        ok = bound <= self.limit_lo
        return np.where(r > 0, ok, Fraction(float(np.sum(np.abs(Tt) ** 2))) <= self.exact_limit)

    def _rank_certified(self, F: np.ndarray, S: np.ndarray, rank: np.ndarray) -> np.ndarray:
        """For numerically rank-deficient B_F: is the exact rank the numerical rank?"""
        if self._classes is None:  # _integer first: threads of a run test _classes
            self._integer = integer_code(np.asarray(self.code.B))
            from gctool.row_classes import row_class_ids

            self._classes = row_class_ids(self.code)
        ids = np.sort(self._classes[F], axis=1)
        distinct = np.sum((ids >= 0) & np.concatenate(
            [np.ones((F.shape[0], 1), bool), ids[:, 1:] != ids[:, :-1]], axis=1), axis=1)
        ok = (distinct == rank) | (rank == min(F.shape[1], self.code.B.shape[1]))
        if (~ok).any():  # the exact rank is at most the structural rank of the support
            for i in np.flatnonzero(~ok):
                ok[i] = structural_rank(np.asarray(self.code.B)[F[i]]) == rank[i]
        if self._integer and (~ok).any():
            # B_F = D^-1 Bn_F with B integer: a non-zero (r+1)-minor of Bn_F is at least
            # prod(d_i) >= d_min^(r+1), and sigma_(r+1) >= minor / prod_(j<=r) sigma_j
            f, K = F.shape[1], self.code.B.shape[1]
            dmin = np.min(self.row_scale[F], axis=1)
            r = rank
            idx = np.arange(F.shape[0])
            with np.errstate(all="ignore"):
                logs = np.cumsum(np.log(np.maximum(S, 1e-300)), axis=1)
                logprod = logs[idx, np.maximum(r - 1, 0)]
                lower = np.exp((r + 1) * np.log(dmin) - logprod)
                noise = 10 * max(f, K) * EPS * S[:, 0]
                nxt = S[idx, np.minimum(r, S.shape[1] - 1)]
            ok |= nxt + noise < 0.5 * lower
        return ok

    # -- finite fields -------------------------------------------------------------------------
    def _evaluate_gf(self, F: np.ndarray, with_vectors: bool) -> BatchResult:
        GF = self._gf
        b, f = F.shape
        m = self.T.shape[0]
        BF = np.asarray(self.code.B)[F]  # (b, f, K)
        aug = np.concatenate(
            [np.swapaxes(BF, 1, 2), np.broadcast_to(self.T.T[None], (b, BF.shape[2], m))], axis=2
        )
        consistent, rank, sol = solve_batch(GF, aug.astype(np.int64), f)
        error = (~consistent).astype(np.float64)
        nan = np.full(b, np.nan)
        vectors = None
        if with_vectors:  # (b, m, f); zero where the system is inconsistent
            vectors = np.swapaxes(sol, 1, 2).astype(np.int64)
            vectors[~consistent] = 0
        return BatchResult(error, consistent, rank, nan, nan.copy(), vectors)

    def _empty(self, b: int, with_vectors: bool) -> BatchResult:
        # ||T||^2 exactly, on its side of the limit's float (k = 65 at tol 0.9999999999999999:
        # the limit's float is 65.0, the exact limit below it, and the empty set fails); it
        # decodes by the rule when the limit is at least that (tol >= m over R/C), never over
        # GF(q)
        err = 1.0 if self.exact else on_side(exact_value(self.Bn[:0], self.T), self.exact_limit)
        m = self.T.shape[0]
        vec = np.zeros((b, m, 0), dtype=self.code.field.dtype) if with_vectors else None
        return BatchResult(
            np.full(b, err), np.full(b, err <= self.limit), np.zeros(b, np.int64),
            np.full(b, np.nan), np.zeros(b), vec,
        )

    # -- one set -------------------------------------------------------------------------------
    def decode(self, survivors: Sequence[int]) -> Decoding:
        F = np.array(sorted(set(int(i) for i in survivors)), dtype=np.intp)
        if F.size and (F[0] < 0 or F[-1] >= self.code.n):
            raise InvalidInput(f"survivor indices must lie in 0..{self.code.n - 1}")
        r = self.evaluate(F[None, :], with_vectors=True)
        assert r.a is not None
        numeric = not self.exact
        return Decoding(
            tuple(F.tolist()), r.a[0], bool(r.ok[0]), float(r.error[0]), int(r.rank[0]),
            float(r.cond[0]) if numeric else None, float(r.norm[0]) if numeric else None,
        )
