"""The ``optimal`` decoder's oracle: least squares over the survivors (exact elimination over
GF(q)).

Its fast path over R/C (derived for gctool, checked against the batched SVD of
:mod:`gctool.decode` in the tests).  Write ``A = B^T = P Sigma Q^H`` (rank r), ``H = Q Q^H`` (the
projector onto range(B)), ``N = Q Sigma^-2 Q^H`` and ``alpha = A^+ t`` (the full decoder).  For
stragglers S, the part of range(A) lost with them is ``{P Sigma^-1 Q_S^H w : H_SS w = w}``, so

    err(F) = err([n]) + alpha_S^H E (E^H N_SS E)^-1 E^H alpha_S,

with E an orthonormal basis of the eigenvectors of H_SS for eigenvalue 1.  Cost O(s^3) per set
instead of an SVD of B_F.  E is read off the SVD of ``Qperp[S]`` (s x (n - r), Qperp an
orthonormal basis of range(B)^perp): its left singular vectors with singular value 0 are exactly
those eigenvectors (CS decomposition), and singular values are accurate to ~1e-16 in absolute
terms where eigenvalues of H_SS near 1 are not.  A singular value <= 1e-14 counts as lost; one
below ``max(1e-6, 100 cond(B) max(n, K) eps)`` but above 1e-14 is ambiguous (an ill-conditioned
B_F, where the SVD decoder's rank cutoff could decide either way), and such sets are recomputed
by the SVD decoder of :mod:`gctool.decode`, which stays gctool's reference; except when s <= d
and every singular value is above ``100 cond(B) max(n, K) eps``: then B_F has full numerical
rank beyond doubt (its smallest singular value is at least sigma_min(Qperp[S]) sigma_r(B), far
above the decoder's rank cut-off and its band) and nothing is lost.  The fast path
is used only when B (row-normalised) has condition number at most ``FAST_KAPPA`` on its
numerical rank: N carries ``sigma^-2``, so its round-off grows like ``cond(B)^2 eps``, and an
ill-conditioned B would make the lost error meaningless.  The lost error is solved by Cholesky
in an orthonormal basis of the lost directions, whose error has an a priori bound (the band
at :data:`FAST_ERR`, :func:`lost_terms`).  Batched solves never raise: a singular or
overflowing system sends its set to the SVD decoder."""

from __future__ import annotations

from collections.abc import Sequence
from math import comb
from typing import TYPE_CHECKING, Any

import numpy as np

from gctool.algebra.spectral import Spectral
from gctool.audit import nullspace
from gctool.audit.oracles.base import ERRORS_CALL_NS, Oracle, decoder_set_work, upto_first_over
from gctool.budget import Budget, product_cost, solve_cost
from gctool.decode import _CHUNK_ENTRIES, DEFAULT_TOL
from gctool.engine.enumeration import survivors_of
from gctool.limits import REL_SLACK
from gctool.model import GradientCode
from gctool.numerics import EPS, Tol, kkt_muladds, lost_terms

if TYPE_CHECKING:
    from gctool.compiled import Kind

_SIG_LOST = 1e-14
FAST_KAPPA = 1e4  # largest cond(B) (row-normalised) for the fast path of OptimalOracle
#: a fast-path error this close to the decoding limit (relative) is not trusted: the set goes
#: to the SVD decoder, which proves its verdict or decides it in exact arithmetic.  (Errors
#: 3.4e-13 below the limit were put above it; few sets of any code come within 1e-3 of it.)
NEAR_LIMIT_RTOL = 1e-3
#: the fast path's error model: with rho = sqrt(err) as computed, the exact err(F) lies in
#:     [(rho - off)^2, (rho + off)^2],  off = drho + grow rho, drho = FAST_ERR max(n, K) eps
#:     kappa ||t||, grow = FAST_ERR max(n, K) eps kappa^2
#: for a set that loses no direction (its error is err_full), and with off widened by
#: :func:`lost_terms` for one that loses directions (the terms of its Cholesky route, some
#: times h = 1 / sqrt(lam), lam the smallest kept eigenvalue of the Gram matrix of Qperp[S],
#: at most 1: :meth:`OptimalOracle.kept_floor`); kappa = cond(B) row-normalised, ||t||^2 =
#: m k.  An error whose interval holds the limit is not trusted, whatever the tolerance (0
#: too): the decoder decides it.
#:
#: What is proved, and what is assumed.  One assumption, (S): LAPACK's SVD of Bn is backward
#: stable with ||E||_2 <= p eps ||Bn||_2 and its factors within p eps of exactly unitary ones
#: (LAPACK Users' Guide 4.9: p a "modestly growing function" of the size; taken as
#: p <= 10 max(n, K)).  First order in eps throughout (eps kappa <= 2.2e-12 here).
#:
#: * Sets that lose no direction (s <= d with every singular value of Qperp[S] at least
#:   sig_full; the bulk of every walk): bounded to first order under (S), no measured
#:   constant.  Write B' for the exact matrix of the computed SVD truncated at rank r,
#:   ||B' - B_r|| <= 2 (p + max(n, K)) eps ||Bn|| (the cut-off included).  Rows of an orthonormal
#:   [Q Qperp] give sigma_min(Q_F)^2 = 1 - sigma_max(Q_S)^2 = sigma_min(Qperp[S])^2 (s <= d), so
#:   sigma_min(B_F) >= sig_full sigma_r = 100 max(n, K) eps sigma_1, far above the rank cut-off
#:   of B_F and above Qperp's own error 2 (p + max(n, K)) eps kappa (Wedin): row(B_F) = row(B)
#:   and err(F) = err([n]) exactly.  The computed err_full is the float residual of the
#:   computed minimum-norm decoder W^: |sqrt(err_full^) - sqrt(err_full)| is at most the sum of
#:   the projector change ||P_R' - P_R|| ||t|| <= 2 (p + max(n, K)) eps kappa ||t|| (Wedin /
#:   Stewart, rank kept), the truncation and backward error applied to W', (p + max(n, K)) eps
#:   kappa ||t||, the error of forming W^ against W' (two products through the rank),
#:   (2 p + K + 1 + r^1.5) eps kappa ||t||, and the residual's evaluation (Higham, Accuracy and
#:   Stability, 3.5: gamma_{n+1} (||Bn||_F ||W^|| + ||t||), ||Bn||_F <= sqrt(n), ||W^|| <=
#:   2 kappa ||t||), 2 (n + 1)^1.5 eps kappa ||t||: in all C eps kappa ||t|| with C <= 5 p +
#:   5 max(n, K) + 3 max(n, K)^1.5 <= FAST_ERR max(n, K) for max(n, K) <= 99,000 (limits:
#:   65,536).  drho's kappa^2 rho term is not needed there (margin only).  Remaining: (S), and
#:   the rule's own boundary: a tail singular value of Bn (below B's cut-off) that B_F's
#:   smaller cut-off would keep (a factor at most 2 sqrt(n) max(n, K) / max(f, K) between the
#:   two cut-offs) changes err(F) under the rule; such a B is at the rank cut-off, where the
#:   tests' reference calls a set ambiguous.
#: * Sets that lose directions: bounded to first order under (S) too, from the route every
#:   path now takes (numpy's, the compiled walk's; the compiled second stage proves its value
#:   within a tie of numpy's SVD route): E an orthonormal basis of the lost directions (the
#:   complement of range(Qperp[S]) from a Householder QR, or the left singular vectors of
#:   Qperp[S] with singular value <= 1e-14), R = E^H N_SS E (Hermitian, eigenvalues in
#:   [sigma_1^-2, sigma_r^-2] exactly), b = E^H alpha_S, R = L L^H by Cholesky, y = L^-1 b by
#:   forward substitution, extra = ||y||^2, err = err_full + extra.  With w = R^-1 b,
#:   ||w|| <= sigma_1 sqrt(extra) and g = alpha_S - N_SS E w, ||g|| <= (||t|| + kappa
#:   sqrt(extra)) / sigma_r, each source moves sqrt(extra) by at most (first order; eps
#:   kappa ||t|| and eps kappa^2 rho the units of drho and grow):
#:   - the problem itself, B' for B: ||dP|| ||t||, ||dP|| <= 2 (p + max(n, K)) eps kappa_F,
#:     kappa_F <= kappa h (sigma_min(B_F) >= sigma_r sqrt(lam));
#:   - E's span: off the exact lost space by delta <= c_E eps h (Qperp's defect p eps, the
#:     QR's backward error 4 s d^1.5 eps, over sigma_min(Qperp[S]) = sqrt(lam): Wedin), and
#:     only the part outside span(E) matters (extra is invariant under a change of basis):
#:     d extra <= 2 delta ||w|| ||g||, i.e. 2 c_E h in both units;
#:   - b and alpha: forming b (gamma_s s^1.5 ||alpha_S||) and alpha's defect (p eps ||alpha||,
#:     ||alpha|| <= ||t|| / sigma_r): d extra <= 2 ||w|| ||db||, 2 (p + s^1.5) eps kappa ||t||;
#:   - R: forming it (gamma_2s |E^H| |N_SS| |E|, ||N_SS||_F <= sqrt(n) sigma_r^-2), N's defect
#:     (2 p eps sigma_r^-2), and the Cholesky factor with the substitution (Higham Thm 10.3
#:     and 8.5: L L^H = R + dR, (L + dL) y = b, || |L| |L^H| || <= q ||R||): d extra <=
#:     ||dR|| ||w||^2, (2 s q sqrt(n) + 3 q^2 + 2 p) eps kappa^2 extra, and the final sum's
#:     2 q m eps extra.
#:   The KKT system ([[N_SS, A], [A^H, 0]], LU) would have no such bound (it is indefinite:
#:   its LU's backward error meets the multiplier block at kappa^4 / lam), hence the Cholesky
#:   route; tests/audit/test_crosscheck_band.py and test_crosscheck_lostband.py check the band
#:   against exact rational errors.
FAST_ERR = 1e3
#: sets per task of the compiled direct walk (:mod:`gctool.audit.kernels.direct`): numpy's
#: decoder then decides the few near each task's largest error in one batch
DIRECT_CHUNK = 8192



def near_limit(err: float | np.ndarray, limit: float, drho: float | np.ndarray = 0.0,
               grow: float | np.ndarray = 0.0) -> np.ndarray:
    """Are these computed errors too close to ``limit`` for their verdict to stand?  Within
    NEAR_LIMIT_RTOL (relative), or within the error model: sqrt(err) may be off by
    ``drho + grow * sqrt(err)`` (per set when arrays; non-finite errors are doubtful too)."""
    err = np.asarray(err, dtype=np.float64)
    if err.size > 64 and np.ndim(drho) == 0 and np.ndim(grow) == 0 and grow < 1:
        lo, hi = _clear_outside(limit, float(drho), float(grow))  # a walk's chunk: two compares
        with np.errstate(invalid="ignore"):
            return np.asarray(~((err < lo) | (err > hi)) | ~np.isfinite(err))
    with np.errstate(invalid="ignore"):
        rho = np.sqrt(np.maximum(err, 0.0))
        off = drho + grow * rho
        clear = (np.maximum(rho - off, 0.0) ** 2 > limit) | ((rho + off) ** 2 <= limit)
    return np.asarray((np.abs(err - limit) <= NEAR_LIMIT_RTOL * limit) | ~clear)


def _clear_outside(limit: float, drho: float, grow: float) -> tuple[float, float]:
    """The errors :func:`near_limit` clears, with scalar ``grow`` < 1: those below ``lo`` and
    above ``hi``.  Below: sqrt(err) (1 + grow) + drho <= sqrt(limit), outside the relative
    band; above: sqrt(err) (1 - grow) - drho > sqrt(limit), outside it too.  Both widened by
    REL_SLACK, so that rounding in the bounds can only send more sets to the decoder, never
    fewer."""
    r_lo = (np.sqrt(limit) - drho) / (1 + grow)
    lo = min(r_lo * r_lo, limit * (1 - NEAR_LIMIT_RTOL)) if r_lo >= 0 else -np.inf
    r_hi = (np.sqrt(limit) + drho) / (1 - grow)
    hi = max(r_hi * r_hi, limit * (1 + NEAR_LIMIT_RTOL))
    return (lo * (1 - REL_SLACK) if lo > 0 else lo), hi * (1 + REL_SLACK) + np.finfo(float).tiny


def below_band(limit: float, *band: float) -> float:
    """An error below this is not :func:`near_limit` (``band``: its drho, grow; the
    compiled second stage keeps only errors proved below it: numpy's oracle would keep them
    without its decoder)."""
    ceiling = float(limit) * (1 - 2 * NEAR_LIMIT_RTOL)
    for _ in range(64):  # the model's band can be wider than the relative one: halve
        if ceiling <= 0 or not near_limit(ceiling, limit, *band):
            break
        ceiling /= 2
    return ceiling if ceiling > 0 and not near_limit(ceiling, limit, *band) else 0.0


def setup_work(code: GradientCode) -> int:
    """The set-up of the optimal oracle over R/C, in ns: one SVD of B with its vectors
    (:class:`~gctool.algebra.spectral.Spectral`: the n x n left ones, the complement among
    them) and the n x n projectors H and N (two products through the rank).  Measured: 0.6-1x
    of this, real B of n = 150-1000 (it counted n^3 + 2 n^2 min(n, K) more: 0.14-0.3x)."""
    n, K = code.B.shape
    return solve_cost(n, K) + 2 * product_cost(n, min(n, K), n)


#: the numpy fast path (:meth:`OptimalOracle._hat_chunk_numpy`) per straggler set in a batch,
#: in ns: with s <= d this much fixed (the batched calls' share) ...
HAT_SET_NS = 290
#: ... plus this much per min(s, d)^2 (the Gram matrix, its eigenvalues) ...
HAT_GRAM_NS = 74
#: ... and with s > d (a direction is lost) this much fixed, plus HAT_KKT_GRAM_NS per d^2 and
#: HAT_KKT_FLOP_NS per multiply-add of the lost error's steps
#: (:func:`gctool.numerics.kkt_muladds`, replacing 1.5 ns per (s + d)^3, which read s = 5, d = 2
#: at 0.4 of its time and s = 12, d = 10 at 1.3); complex codes cost HAT_COMPLEX times as much.
#: Fitted to the minimum CPU time per set of batches of the run's size (20,000 sets from the
#: middle of the ranks; real and complex cyclic n=20-40, random dense d=6-32; s <= d on 8
#: codes: measured / estimated 0.85-1.27, s = d + 1..d + 4 on 10: 0.92-1.14), one core of the
#: 2-core development machine under load (the model before, 55 ns per min(s, d)^2 alone, read
#: them at 1.3-2.6x)
HAT_KKT_SET_NS = 1350
HAT_KKT_GRAM_NS = 118
HAT_KKT_FLOP_NS = 0.97
HAT_COMPLEX = 1.5
#: with d = 0 (rank(B) = n: every straggler loses a direction) a set's s x s system instead,
#: this much fixed plus HAT_LOST_NS per s^2 (expander n=36 and random dense n=30, s = 2-7:
#: 0.36-1.2 us per set, 0.9-1.2x of this)
HAT_LOST_SET_NS = 250
HAT_LOST_NS = 20


def hat_time(s: int, d: int, complex_: bool = False) -> float:
    """Estimated time of the numpy fast path per set of size s (d = dim null(B)), in ns."""
    t: float
    if d == 0:
        t = HAT_LOST_SET_NS + HAT_LOST_NS * s * s
    elif s > d:
        t = HAT_KKT_SET_NS + HAT_KKT_GRAM_NS * d * d + HAT_KKT_FLOP_NS * kkt_muladds(s, d)
    else:
        t = HAT_SET_NS + HAT_GRAM_NS * s * s
    return t * (HAT_COMPLEX if complex_ else 1.0)


class OptimalOracle(Oracle):
    kind = "optimal"

    def __init__(self, code: GradientCode, tol: Tol = DEFAULT_TOL,
                 budget: Budget | None = None) -> None:
        super().__init__(code, tol, budget)
        self.label = ("optimal (exact solve over " + str(code.field) + ")" if self.finite
                      else "optimal (least squares)")
        #: gctool.audit.kernels.optimal.HatErrors, when planned (R/C only)
        self.compiled: Any = None
        #: gctool.audit.kernels.direct.DirectBrackets, when planned (R/C, sets of a size
        #: without the fast path: :meth:`_walks_direct`)
        self.direct: Any = None
        if not self.finite:
            self._spectral()

    def _spectral(self) -> None:
        self.meter.spent += setup_work(self.code)  # counts toward the searches' budget
        # the one SVD of the row-normalised B (exact power-of-two scaling: same errors)
        sp = Spectral.of_code(self.code)
        T = self.code.targets()
        r = self.rank = sp.rank
        self.sigma = sp.sv[:r]
        self.P = sp.Vh[:r].T  # K x r
        self.Q = sp.range_basis  # n x r, orthonormal
        self.alpha = sp.min_norm(T)  # n x m, the minimum-norm decoder of all n workers
        self.err_full_targets = sp.errors(self.alpha, T)
        self.err_full = float(self.err_full_targets.sum())
        self.H = self.Q @ self.Q.conj().T
        self.N = (self.Q / self.sigma**2) @ self.Q.conj().T
        self.Qperp = sp.null_basis.T  # n x d, orthonormal complement of Q
        kappa = sp.kappa if r else 1.0
        #: a singular value of Qperp[S] this far above round-off keeps the decoder's numerical
        #: rank of B_F exact (sigma_min(B_F) >= sigma_min(Qperp[S]) sigma_r(B), far above the
        #: rank cut-off and its band): with s <= d such a set loses nothing
        self.sig_full = 100 * kappa * max(sp.Bn.shape) * EPS
        self.sig_kept = max(1e-6, self.sig_full)
        #: the fast path works with N = Q Sigma^-2 Q^H, whose round-off grows like
        #: kappa^2 eps; beyond FAST_KAPPA every set goes to the SVD decoder instead
        self.kappa = kappa
        #: FAST_ERR's model: sqrt(err) is off by at most drho + grow * sqrt(err); a set that
        #: loses directions adds lost_terms in the units dunit and gunit
        tt = float(np.sum(np.abs(T) ** 2))
        self.dunit, self.gunit = EPS * kappa * np.sqrt(tt), EPS * kappa**2
        scale = FAST_ERR * max(self.code.B.shape)
        self.drho, self.grow = scale * self.dunit, scale * self.gunit
        #: the fast path's errors rest on err_full, a float64 value nothing proves; a full
        #: set's error near the decoding limit (:meth:`near_limit`) leaves every set to the
        #: SVD decoder, which proves its verdicts or decides them in exact arithmetic
        self.fast = bool(kappa <= FAST_KAPPA and not self.near_limit(self.err_full))

    def near_limit(self, err: float | np.ndarray, lam: float | np.ndarray = np.inf,
                   s: int = 0) -> np.ndarray:
        """Fast-path errors whose verdict float64 does not settle (:func:`near_limit`); a set
        of s stragglers that lost directions takes ``lam``, the smallest kept eigenvalue of
        the Gram matrix of Qperp[S] (:meth:`kept_floor`), whose inverse square root its band
        carries (:func:`lost_terms`); one that lost none (lam = inf: its error is err_full)
        has the full set's band."""
        drho, grow = self.band(lam, s)
        return near_limit(err, self.limit, drho, grow)

    def band(self, lam: float | np.ndarray = np.inf, s: int = 0
             ) -> tuple[float | np.ndarray, float | np.ndarray]:
        """(drho, grow) of the error model for sets of size s with these lam (inf: no
        direction lost): sqrt(err) is off by at most drho + grow sqrt(err)."""
        if np.ndim(lam) == 0 and np.isinf(lam):
            return self.drho, self.grow
        lam = np.asarray(lam, dtype=np.float64)
        dl, gl, dc, gc = lost_terms(s, int(self.Qperp.shape[1]), self.n,
                                    int(self.code.B.shape[1]), int(self.alpha.shape[1]))
        with np.errstate(divide="ignore", invalid="ignore"):
            h = np.where(np.isinf(lam), 0.0, 1.0 / np.sqrt(np.minimum(lam, 1.0)))
        lost = ~np.isinf(lam)
        return (self.drho + np.where(lost, (dl * h + dc) * self.dunit, 0.0),
                self.grow + np.where(lost, (gl * h + gc) * self.gunit, 0.0))

    def kept_floor(self, S: np.ndarray) -> np.ndarray:
        """Per set, the smallest eigenvalue of the min(s, d)-square Gram matrix of Qperp[S]
        that is kept (>= sig_kept^2 / 2; 1 when none is, or when it is above 1)."""
        if self.Qperp.shape[1] == 0:
            return np.ones(S.shape[0])
        ev = np.linalg.eigvalsh(self._gram(S)[2])
        ev = np.where(ev >= 0.5 * self.sig_kept**2, ev, np.inf).min(axis=1)
        return np.where(np.isfinite(ev), np.minimum(ev, 1.0), 1.0)

    def _gram(self, S: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(A, A^H, G) per set: A = Qperp[S] and its min(s, d)-square Gram matrix G."""
        A = self.Qperp[S]
        AH = np.conj(np.swapaxes(A, 1, 2))
        return A, AH, (AH @ A if S.shape[1] >= A.shape[2] else A @ AH)

    def near_limit_lost(self, err: np.ndarray, S: np.ndarray) -> np.ndarray:
        """:meth:`near_limit` of sets that lose directions with every Gram eigenvalue kept (the
        compiled walk's), each with its own lam: first det(G), a lower bound (the eigenvalues
        are at most 1) from one LU, then the eigenvalue where that leaves the set doubtful."""
        G = self._gram(S)[2]
        with np.errstate(all="ignore"):
            lam = np.clip(np.real(np.linalg.det(G)), 1e-300, 1.0)
        doubt = self.near_limit(err, lam, S.shape[1])
        rows = np.flatnonzero(doubt)
        if rows.size:
            doubt[rows] = self.near_limit(err[rows], self.kept_floor(S[rows]), S.shape[1])
        return doubt

    def maximizer(self, S: Sequence[int]) -> np.ndarray:
        """The y in range(B) (n x m, supported on S) attaining the lost error of S (R/C):
        ``err(F) = err([n]) + sum_u 2 Re(alpha_u^H y_u) - y_u^H N y_u`` at its maximum."""
        idx = np.array(sorted(set(S)), dtype=np.intp)
        y = np.zeros((self.n, self.alpha.shape[1]), dtype=self.alpha.dtype)
        if idx.size == 0:
            return y
        E_all, lost, _, _ = self._lost_basis(idx[None, :])
        E = E_all[0][:, lost[0]]
        if E.shape[1] == 0:
            return y
        M = E.conj().T @ self.N[np.ix_(idx, idx)] @ E
        rhs = E.conj().T @ self.alpha[idx]
        w, solved = _guarded_solve(M[None], rhs[None])
        y[idx] = E @ (w[0] if solved[0] else np.linalg.lstsq(M, rhs, rcond=None)[0])
        return y

    def set_work(self, s: int, sets: int) -> float:
        """The fast path costs about (s + dim N)^3 per set (compiled: see
        :func:`gctool.audit.kernels.optimal.walk_cost`); other sets one solve each (or,
        walked compiled, :func:`gctool.audit.kernels.direct.direct_cost`)."""
        if not self._uses_hat(s):
            if self.will_walk_compiled(s, sets):
                from gctool.audit.kernels.direct import direct_cost

                return sets * direct_cost(self.n, self.code.B.shape[1], s,
                                          self.rank == self.n)
            return super().set_work(s, sets)
        d = int(self.Qperp.shape[1])
        if self.will_walk_compiled(s, sets) or self.walks_compiled(s):
            from gctool.audit.kernels.optimal import walk_cost

            return sets * walk_cost(s, d, self.n, bool(np.iscomplexobj(self.Qperp)))
        return sets * hat_time(s, d, bool(np.iscomplexobj(self.Qperp))) + (
            ERRORS_CALL_NS if sets else 0)

    def batch_work(self, s: int, sets: int) -> float:
        """Sets given as batches are decided by the numpy fast path or the SVD decoder (the
        compiled kernel of batches, where planned, took 0.5-1x of this on frc n=40, 48 at
        sizes 3-5, where the compiled walk of the same sets takes 0.1-0.2x)."""
        if self._uses_hat(s):
            d = int(self.Qperp.shape[1])
            return sets * hat_time(s, d, bool(np.iscomplexobj(self.Qperp))) + (
                ERRORS_CALL_NS if sets else 0)
        return decoder_set_work(self.code, s, sets)

    def worst_set_work(self, s: int, sets: int) -> float:
        """:meth:`set_work`, plus every set left to the numpy fast path by the compiled walk
        and to the SVD decoder by the fast path."""
        if not self._uses_hat(s):  # the direct walk's unknown sets: numpy's decoder
            return self.set_work(s, sets) + (decoder_set_work(self.code, s, sets) if
                                             self.will_walk_compiled(s, sets) else 0.0)
        d = int(self.Qperp.shape[1])
        return (self.set_work(s, sets) + sets * hat_time(s, d, bool(np.iscomplexobj(self.Qperp)))
                + decoder_set_work(self.code, s, sets))

    def decodes_by_svd(self, s: int) -> bool:
        """Sets of size s given as batches go to the SVD decoder over R/C (no fast path)."""
        return not self.finite and not self._uses_hat(s)

    def will_walk_compiled(self, s: int, sets: int) -> bool:
        from gctool.audit.kernels import wanted

        return (self._walks_direct(s) or self._uses_hat(s) and self.Qperp.shape[1] > 0) and \
            wanted(sets)

    def walk_kind(self, s: int, sets: int) -> Kind | bool:
        from gctool.audit.kernels import attack_kind

        return self.will_walk_compiled(s, sets) and attack_kind(
            self._walks_direct(s), bool(np.iscomplexobj(self.code.B)))

    def given_kind(self, s: int, sets: int) -> Kind | bool:
        """Given sets on the fast path are decided by the compiled kernel of given sets
        (:meth:`_hat_chunk`: :class:`gctool.audit.kernels.optimal.HatErrors`, without the
        GIL) where :meth:`chunk_size` plans it (``sets``: C(n, s) or more), numpy deciding only
        the few it leaves pending; off the fast path, numpy's decoder decides them."""
        from gctool.audit.kernels import attack_kind, wanted

        return (s >= 1 and self._uses_hat(s) and self.Qperp.shape[1] > 0
                and (self.compiled is not None or wanted(sets))) and attack_kind(
            False, bool(np.iscomplexobj(self.code.B)), given=True)

    def walk_stops(self, s: int) -> bool:
        """With s > d the compiled walk solves each set's lost error itself and stops at the
        first failing one; with s <= d a failing set loses a direction its rank test cannot
        clear, and goes to numpy after the walk (:func:`gctool.audit.kernels.optimal.hat_range`)."""
        return self._walks_direct(s) or self._uses_hat(s) and s > self.Qperp.shape[1]

    def _walks_direct(self, s: int) -> bool:
        """Do sets of size s go to numpy's decoder one SVD each (no fast path), so that a
        compiled walk brackets them first (:mod:`gctool.audit.kernels.direct`)?"""
        return not self.finite and 0 < s < self.n and not self._uses_hat(s)

    def _uses_hat(self, s: int) -> bool:
        f, K = self.n - s, self.code.B.shape[1]
        return (not self.finite and self.fast and 0 < s <= 64 and f > 0
                and s**3 <= f * K * min(f, K))

    def chunk_size(self, s: int, given: bool = False) -> int:
        """Sets per batch; plans the compiled fast path (:mod:`gctool.audit.kernels`) for
        large enumerations, compiling or loading it now (``given``: a run of given sets, one
        per rotation orbit, loads only the kernel of given sets: :meth:`plan_compiled`)."""
        from gctool.audit.kernels import wanted

        if (self._uses_hat(s) or self._walks_direct(s)) and wanted(comb(self.n, s)):
            self.plan_compiled(s, given)
        if self._uses_hat(s):
            return nullspace.COMPILED_CHUNK
        return DIRECT_CHUNK if self.walks_compiled(s) else super().chunk_size(s)

    def plan_compiled(self, s: int, given: bool = False) -> None:
        """Take the compiled fast path for sets of size s where it applies: a copy of an
        oracle that planned it must, so that both give the same floats (the choice in
        :meth:`chunk_size` depends on GCTOOL_COMPILED, which a worker may not share).  The
        fast path's kernels loaded now are the walk's, or with ``given`` those of given sets
        (:meth:`HatErrors.warm <gctool.audit.kernels.optimal.HatErrors.warm>`); either kind
        loads the other on its first use.  Off the fast path given sets go to numpy's decoder
        (:meth:`_errors`), so a run of given sets plans no brackets (their walk would load
        for nothing)."""
        if self._uses_hat(s):
            self._plan(s, given)
        elif self._walks_direct(s) and self.direct is None and not given:
            from gctool.audit.kernels.direct import DirectBrackets

            self.direct = DirectBrackets(self.decoder.Bn, self.decoder.T)
            self.direct.warm(s)

    def _plan(self, s: int, given: bool = False) -> None:
        if self.compiled is not None:
            self.compiled.warm(s, given)
        elif self.Qperp.shape[1] > 0:
            from gctool.audit.kernels.optimal import HatErrors

            self.compiled = HatErrors(self.Qperp, self.N, self.alpha, self.err_full,
                                      self.sig_kept, self.sig_full, _SIG_LOST,
                                      below_band(self.limit, self.drho, self.grow),
                                      (self.limit, self.drho, self.grow, self.dunit,
                                       self.gunit, NEAR_LIMIT_RTOL, self.n,
                                       self.code.B.shape[1]))
            self.compiled.warm(s, given)

    def _errors(self, S: np.ndarray) -> np.ndarray:
        if not self._uses_hat(S.shape[1]):  # the full set (s = 0) too: err_full is not proved
            return super()._errors(S)
        return self._hat_errors(S)

    def _hat_errors(self, S: np.ndarray) -> np.ndarray:
        """The fast path's errors of ``S``, a batch at a time; a stopped run's task stops
        between its batches (:func:`gctool.engine.threads.halt_flag`: a pool thread's, a Dask
        task's once it is cancelled), as its compiled walks do."""
        from gctool.engine.threads import halt_flag, raise_if_halted

        out = np.empty(S.shape[0])
        step = self._batch(S.shape[1])
        halt = halt_flag()
        for lo in range(0, S.shape[0], step):
            raise_if_halted(halt)
            out[lo:lo + step] = self._hat_chunk(S[lo:lo + step])
        return out

    def _batch(self, s: int) -> int:
        """Sets of size s per batch of the numpy route (K is (s+d)^2 and A is s*d per set:
        bounded; a batch of every doubtful set of a 188,496-set task, is-cr n=36 at size 5,
        allocated arrays afresh: 1.7 s of page faults on 1.8 s of work)."""
        d = self.Qperp.shape[1]
        return max(1, min(400_000 // max(1, s**2), _CHUNK_ENTRIES // max(1, (s + d) ** 2 + s * d)))

    def _lost_basis(self, S: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(E, lost, unsure, accidental): orthonormal bases (b, s, s), which columns are lost,
        which sets need the SVD decoder, and which lose a direction beyond the dimension
        count (a computed singular value <= _SIG_LOST, which round-off cannot prove)."""
        b, s = S.shape
        d = self.Qperp.shape[1]
        if d == 0:  # rank(B) = n: every straggler takes a dimension with it
            E = np.broadcast_to(np.eye(s), (b, s, s))
            return E, np.ones((b, s), dtype=bool), np.zeros(b, dtype=bool), np.zeros(b, bool)
        E, sv, _ = np.linalg.svd(self.Qperp[S], full_matrices=True)
        full = np.zeros((b, s))
        full[:, : min(s, d)] = sv[:, : min(s, d)]
        lost = full <= _SIG_LOST
        unsure = ((full < self.sig_kept) & ~lost).any(axis=1)
        if s <= d:  # nothing is lost by the dimension count, and every singular value above
            # sig_full proves that nothing is lost at all (the error is err_full)
            unsure &= ~(sv[:, :s] >= self.sig_full).all(axis=1)
        # the s - d directions beyond d are lost by dimension count (exactly); a computed
        # singular value <= _SIG_LOST is an *accidental* loss that round-off cannot prove
        accidental = np.asarray((sv[:, : min(s, d)] <= _SIG_LOST).any(axis=1))
        return E, lost, unsure, accidental

    def walks_compiled(self, s: int) -> bool:
        """Are rank ranges of sets of size s walked by the compiled kernel (which releases the
        GIL: ``jobs`` runs in threads)?"""
        if self._walks_direct(s):
            return self.direct is not None
        return self.compiled is not None and self._uses_hat(s) and s >= 1

    def errors_range(self, n: int, s: int, start: int, stop: int, limit: float = np.inf
                     ) -> np.ndarray | None:
        """Errors of the sets with lexicographic ranks start..stop-1, walked by the compiled
        kernel (None when it is not planned for sets of size s: use :meth:`errors`).  With a
        ``limit``, the walk may stop after a set above it (a search for the first such set
        needs no more): the errors then stop there, and the first above ``limit`` among them
        is the first of the whole range.  The direct walk (no fast path) gives the sets that
        no search can tell from their bracket their upper bound instead of numpy's error
        (:func:`gctool.audit.kernels.direct.errors_of`): the largest error, its first set and
        the first set over ``limit`` are numpy's."""
        if not self.walks_compiled(s):
            return None
        # a search for the first set over a finite limit: the walk stops at its first
        # pending set (the numpy route decides it: it may be that set), then at the 2nd,
        # 4th, ... of the rest of the range (a few walks even when many sets are pending)
        most, parts = (1 if np.isfinite(limit) else 0), []
        part = self._direct_part if self._walks_direct(s) else self._walk_part
        while start < stop:
            err = part(n, s, start, stop, limit, most)
            parts.append(err)
            start += err.size
            if limit < np.inf and (err > limit).any():  # (the worst case: no limit, one part)
                break
            most = min(2 * most, stop - start)
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def _direct_part(self, n: int, s: int, start: int, stop: int, limit: float, most: int
                     ) -> np.ndarray:
        """:meth:`_walk_part` of the direct walk (no fast path): numpy's decoder decides what
        the brackets cannot (:func:`gctool.audit.kernels.direct.errors_of`), the walk
        stopping at the ``most``-th set it must decide (0: no such cap)."""
        from gctool.audit.kernels.direct import errors_of
        from gctool.engine.enumeration import unrank_lex
        from gctool.engine.threads import halt_flag, raise_if_halted

        halt = halt_flag()

        def decide(rows: np.ndarray) -> np.ndarray:  # numpy's decoder, as _errors (a stopped
            raise_if_halted(halt)  # run's task stops before it: see _walk_part)
            return super(OptimalOracle, self)._errors(unrank_lex(n, s, start + rows))

        state, lo, hi = self.direct.walk(s, start, stop, limit, most)
        err = errors_of(state, lo, hi, decide, limit)
        self.evaluations += err.size
        return err

    def _walk_part(self, n: int, s: int, start: int, stop: int, limit: float, most: int
                   ) -> np.ndarray:
        """Errors of the sets with ranks start..stop-1 (at least one) up to the first over
        ``limit`` or up to the compiled walk's ``most``-th pending set (:meth:`HatErrors.walk`:
        0, no such cap), those the walk leaves pending decided by the numpy route."""
        from gctool.engine.enumeration import unrank_lex
        from gctool.engine.threads import halt_flag, raise_if_halted

        # the near-limit band over a chunk (near_limit's two compares), checked by the walk
        band = (_clear_outside(self.limit, self.drho, self.grow) if self.grow < 1
                else None)
        err, pending, unchecked = self.compiled.walk(n, s, start, stop, limit,
                                                     band or (np.inf, np.inf), most)
        self.evaluations += err.size
        done = np.flatnonzero(unchecked)  # lost directions, each set's own band not proved
        if done.size:  # by the walk (the second stage checks its own)
            pending[done] |= self.near_limit_lost(err[done], unrank_lex(n, s, start + done))
        if band is None:  # not proved by the walk: the decoder decides
            pending |= self.near_limit(err)
        rows, step = np.flatnonzero(pending), self._batch(s)
        finite = limit < np.inf  # (else no set is over it: the worst case's walks)
        over = np.flatnonzero((err > limit) & ~pending) if finite else rows[:0]  # decided by
        if over.size:  # the walk; the sets after it do not matter
            rows = rows[rows < over[0]]

        def numpy_route(part: np.ndarray) -> np.ndarray:
            return self._hat_chunk_numpy(unrank_lex(n, s, start + part))

        # the numpy route decides what the walk does not, up to the first set over the limit
        # (a set float64 cannot decide after it does not matter); a stopped run's task stops
        # between its batches (:func:`gctool.engine.threads.halt_flag`), as the walk does
        halt = halt_flag()
        for lo in range(0, rows.size, step):
            raise_if_halted(halt)
            part = rows[lo:lo + step]
            got = upto_first_over(numpy_route, part, limit)
            err[part[:got.size]] = got
            if (got > limit).any():
                break
        over = np.flatnonzero(err > limit) if finite else rows[:0]
        return err[:int(over[0]) + 1] if over.size else err

    def _hat_chunk(self, S: np.ndarray) -> np.ndarray:
        from gctool.compiled import mode

        if self.compiled is None and mode() == "always":
            self._plan(S.shape[1], given=True)
        if self.compiled is None:
            return self._hat_chunk_numpy(S)
        err, pending, unchecked = self.compiled(S)
        done = np.flatnonzero(unchecked)  # lost directions, each set's own band not proved
        if done.size:  # by the walk (the second stage checks its own)
            pending[done] |= self.near_limit_lost(err[done], S[done])
        pending |= self.near_limit(err)
        if pending.any():  # what the compiled path does not settle: the numpy route decides
            err[pending] = self._hat_chunk_numpy(S[pending])
        return err

    def _hat_chunk_numpy(self, S: np.ndarray) -> np.ndarray:
        """Fast path: when ``A = Qperp[S]`` has full rank min(s, d) with a margin (smallest
        eigenvalue of its min(s, d)-square Gram matrix >= sig_kept^2, reliable to ~1e-16), the
        lost subspace is exactly null(A^H): E, the last s - d columns of the complete
        Householder QR of A, is an orthonormal basis of it, and the lost error is
        ``b^H R^-1 b`` (R = E^H N_SS E, b = E^H alpha_S) by Cholesky (:func:`_cholesky_extra`;
        its band: :func:`lost_terms`).  Other sets take the SVD route of :meth:`_svd_chunk`."""
        b, s = S.shape
        d = self.Qperp.shape[1]
        if d == 0:
            return self._svd_chunk(S)
        A, AH, G = self._gram(S)
        lam = np.linalg.eigvalsh(G)[:, 0]
        well = lam >= self.sig_kept**2
        err = np.empty(b)
        if (~well).any():
            err[~well] = self._svd_chunk(S[~well])
        rows = np.flatnonzero(well)
        if rows.size == 0:
            return err
        if s <= d:  # no direction is lost
            err[rows] = self.err_full
            return err
        Sw = S[rows]
        E = np.linalg.qr(A[rows], mode="complete")[0][:, :, d:]  # (b, s, s - d)
        EH = np.conj(np.swapaxes(E, 1, 2))
        extra, solved = _cholesky_extra(EH @ self.N[Sw[:, :, None], Sw[:, None, :]] @ E,
                                        EH @ self.alpha[Sw])
        err[rows] = np.maximum(self.err_full + extra, 0.0)
        bad = rows[~solved | ~np.isfinite(err[rows]) | self.near_limit(err[rows], lam[rows], s)]
        if bad.size:  # a singular or overflowing system, or an error too close to the
            # decoding limit for float64 to decide: the SVD decoder decides (proved or exact)
            err[bad] = self.decoder.evaluate(survivors_of(S[bad], self.n)).error
        return err

    def _svd_chunk(self, S: np.ndarray) -> np.ndarray:
        s = S.shape[1]
        ii, jj = S[:, :, None], S[:, None, :]
        E, lost, unsure, accidental = self._lost_basis(S)
        EH = np.conj(np.swapaxes(E, 1, 2))
        M = EH @ self.N[ii, jj] @ E
        rhs = EH @ self.alpha[S]  # (b, s, m)
        both = lost[:, :, None] & lost[:, None, :]
        M = np.where(both, M, np.eye(s))
        rhs = np.where(lost[:, :, None], rhs, 0)
        extra, solved = _cholesky_extra(M, rhs)
        err = np.maximum(self.err_full + extra, 0.0)
        # failures resting on an accidental loss go to the decoder, which proves them or
        # decides them in exact arithmetic
        unsure = (unsure | ~solved | ~np.isfinite(err) | (accidental & (err > self.limit))
                  | self.near_limit(err, np.where(lost.any(axis=1), self.kept_floor(S), np.inf)
                                    if lost.any() else np.inf, s))
        if unsure.any():
            rows = np.flatnonzero(unsure)
            err[rows] = self.decoder.evaluate(survivors_of(S[rows], self.n)).error
        return err


def _cholesky_extra(M: np.ndarray, rhs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(rhs^H M^-1 rhs, solved)`` per set (real part, summed over the targets) of Hermitian
    positive definite M (b, q, q): Cholesky ``M = L L^H`` (its lower triangle), forward
    substitution ``y = L^-1 rhs``, ``||y||^2``; never raises: solved is False (the value 0)
    where M is not numerically positive definite or a value is not finite."""
    b, q = M.shape[0], M.shape[1]
    solved = np.ones(b, dtype=bool)
    with np.errstate(all="ignore"):
        try:
            L = np.linalg.cholesky(M)
        except np.linalg.LinAlgError:  # one failure spoils the batch: one by one
            L = np.zeros_like(M)
            for i in range(b):
                try:
                    L[i] = np.linalg.cholesky(M[i])
                except np.linalg.LinAlgError:
                    solved[i] = False
                    L[i] = np.eye(q)
        y = np.empty(np.broadcast_shapes(rhs.shape), dtype=np.result_type(L, rhs))
        for i in range(q):
            acc = rhs[:, i] - np.einsum("bk,bkm->bm", L[:, i, :i], y[:, :i])
            y[:, i] = acc / L[:, i, i][:, None]
        extra = np.sum(np.abs(y) ** 2, axis=(1, 2))
    solved &= np.isfinite(extra)
    return np.where(solved, extra, 0.0), solved


def _guarded_solve(M: np.ndarray, rhs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Batched ``solve(M, rhs)`` that never raises: ``(X, solved)``, where ``solved`` is False
    for the systems that are singular or give non-finite values (X is 0 there)."""
    X = np.zeros(np.broadcast_shapes(rhs.shape), dtype=np.result_type(M, rhs))
    solved = np.zeros(M.shape[0], dtype=bool)
    if M.shape[0] == 0:
        return X, solved
    with np.errstate(all="ignore"):
        try:
            X = np.linalg.solve(M, rhs)
            solved[:] = True
        except np.linalg.LinAlgError:  # one singular system spoils the batch: one by one
            for i in range(M.shape[0]):
                try:
                    X[i] = np.linalg.solve(M[i], rhs[i])
                    solved[i] = True
                except np.linalg.LinAlgError:
                    pass
        solved &= np.all(np.isfinite(X), axis=tuple(range(1, X.ndim)))
    X[~solved] = 0
    return X, solved
