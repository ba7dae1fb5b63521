"""Compiled brackets of the optimal decoder's error for ``attack`` where the oracle has no fast
path (cond(B) above :data:`gctool.audit.oracles.optimal.FAST_KAPPA`, a full set near the
limit, or s too large for the KKT route): every set would be one SVD of B_F by numpy's
decoder (:meth:`gctool.decode.Decoder.evaluate`) in the caller's thread.

Here a rank range is walked in compiled code, without the GIL, in the thread that runs its
task.  Per set, with ``A = B_F^T`` (K x f, rows of B row-normalised, so ``||A||_F <=
sqrt(f)``) and the targets T (``||T||_F = tnorm``), a Householder QR of the tall one of A and
A^T gives:

* the least-squares residual, from ``Q^H T`` (f <= K: the last K - f rows; f > K: A has rank K
  and the error is 0);
* a lower bound ``sig_lo`` on sigma_min(A): when rank(B) = n, one for every set
  (:func:`floor`, from B's SVD); else ``1 / ||R^-1||_F`` (the computed inverse, lowered by
  its first-order error) less the QR's backward error.

Householder QR is backward stable: ``A + dA = Q R^``, ``Q^H (T + dT)`` computed, with
``||dA||_F <= g ||A||_F`` and ``||dT||_F <= g tnorm``, g = gamma~(rows p) (Higham, Accuracy and
Stability, Thms 19.4 and 20.3; the constant taken as :data:`QR_C`).  The least-squares residual
is 1-Lipschitz in T and moves by at most ``||dA|| max(||X||, ||X'||)`` with A (X, X' the two
solutions, ``||X|| <= tnorm / sigma_min``), so the exact residual norm is within ``d_c`` of
the one computed.  numpy's decoder returns its own float (or, where its float cannot decide, a
refined or exact value, closer still): under the assumption the oracle states for LAPACK's SVD
(backward error ``p eps ||A||``, p <= 10 max(f, K)), its residual norm is within ``d_np =
NUMPY_C (f + K) eps (1 + 2 kappa) tnorm`` of the exact one, plus the rounding of its residual
(``residual_gamma(f) ||A||_F ||a||``, :func:`gctool.numerics.residual_gamma`).  So numpy's
value lies in ``[(r - d)^2, (r + d)^2]`` (r the
computed residual norm, d = d_c + d_np), rounded outward
(:func:`gctool.numerics.residual_bracket`).  A set is bracketed only when numpy's decoder
surely takes the full numerical rank with no singular value in its rank band (its lower
bound far above the cut-off and the band): such a set is never undecided, and its value is
one number.  Every other set is *unknown* (numpy decides it).

:func:`errors_of` turns the brackets into the errors a search reads: numpy's decoder evaluates
(in one batch, in the walking thread) only the sets whose bracket does not place them below the
largest error by more than the tie rule (worst case), or above the limit (threshold), and the
others keep their upper bound, which no search can tell from numpy's value: the worst set, its
error, the first set over a limit and its error are numpy's, exactly."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from gctool.audit.kernels import private
from gctool.audit.kernels.bounds import QR_C  # Householder QR's backward error constant
from gctool.audit.kernels.shared import (
    HALT_EVERY,
    WARM,
    _inv_fro_tri,
    _qr,
    _qr_step,
    _reflect,
    bracket,
    res_gamma,
    survivors_into,
)
from gctool.audit.oracles.base import upto_first_over
from gctool.compiled import compile_notice
from gctool.compiled._jit import njit
from gctool.compiled.walk import first_max, successor, tied_records
from gctool.limits import RANK_BAND, REL_SLACK, TIE_RTOL
from gctool.numerics import EPS

#: numpy's decoder's residual norm within NUMPY_C (f + K) eps (1 + 2 kappa) tnorm of the exact
#: one: first order, with LAPACK's SVD backward error at most 10 max(f, K) eps ||A|| (the
#: oracle's assumption (S)), twice over; the decoder's own failure proof takes 10 (f + K) eps
#: kappa tnorm
NUMPY_C = 40.0
#: numpy's computed smallest singular value must clear its rank band (cut-off times
#: RANK_BAND) by this factor: the set then has full numerical rank, certified
RANK_MARGIN = 4.0
UNKNOWN, BRACKETED = 0, 1


@njit
def _bracket_one(S: Any, Bn: Any, T: Any, tnorm: float, floor: float, inS: Any, F: Any,
                 W: Any, tau: Any, Y: Any, X: Any) -> tuple[int, float, float]:
    """(state, lo, hi) of one straggler set S: numpy's decoder's error of S lies in [lo, hi]
    (:data:`BRACKETED`), or nothing is said (:data:`UNKNOWN`).  ``floor``: a lower bound on
    sigma_min(B_F) for every F (rank(B) = n), or 0 (per set, from R)."""
    n, K = Bn.shape
    m = T.shape[0]
    f = n - S.shape[0]
    if f == 0:
        return UNKNOWN, np.nan, np.nan
    survivors_into(S, inS, F)
    tall = f <= K  # A = B_F^T (K x f) is tall: QR of A; else QR of A^T = B_F (f x K)
    for i in range(f):
        for k in range(K):
            v = Bn[F[i], k]
            if not np.isfinite(v):
                return UNKNOWN, np.nan, np.nan
            if tall:
                W[k, i] = v
            else:
                W[i, k] = v
    if tall:
        for k in range(K):
            for u in range(m):
                Y[k, u] = T[u, k]
        return _tall_bracket(W, Y, tau, f, K, tnorm, floor, X)
    _qr(W, tau)
    return _bounds(W, X, 0.0, f, K, m, False, tnorm, floor)


@njit
def _tall_bracket(W: Any, Y: Any, tau: Any, f: int, K: int, tnorm: float, floor: float,
                  X: Any) -> tuple[int, float, float]:
    """The bracket of a set of f <= K survivors from the QR of W: the set's last
    ``q = W.shape[1]`` survivors' rows as columns, their rows j..K-1 (j = f - q), the
    reflectors of the first j survivors already applied to them and to the targets Y ((K - j)
    x m; j = 0: the whole QR).  The residual is Y's last K - f rows once W's reflectors are
    applied too."""
    m = Y.shape[1]
    q = W.shape[1]
    _qr(W, tau)
    for c in range(q):
        for u in range(m):
            _reflect(W, tau, c, Y, u)
    e_c = 0.0
    for k in range(q, Y.shape[0]):
        for u in range(m):
            e_c += abs(Y[k, u]) ** 2
    return _bounds(W, X, e_c, f, K, m, True, tnorm, floor)


@njit
def _bounds(W: Any, X: Any, e_c: float, f: int, K: int, m: int, tall: bool, tnorm: float,
            floor: float) -> tuple[int, float, float]:
    """(state, lo, hi) from the computed residual e_c (a sum of (K - f) m squares; 0 when
    f > K) and, without a ``floor``, R in W (the whole QR)."""
    if not np.isfinite(e_c):
        return UNKNOWN, np.nan, np.nan
    rows, p = (K, f) if tall else (f, K)
    norm_a = np.sqrt(f) * (1 + 4 * EPS)  # ||A||_F: rows of norm below 1
    g = QR_C * rows * p * EPS
    g = g / (1 - g)
    if floor > 0:  # sigma_min(A) >= floor, sigma_min(R^) = sigma_min(A + dA) >= floor - dA
        sig_lo = floor
        sig_r = floor - g * norm_a
    else:
        for i in range(p):
            if W[i, i] == 0:  # R singular
                return UNKNOWN, np.nan, np.nan
        ninv = _inv_fro_tri(W, X)  # ||R^-1||_F
        if not (np.isfinite(ninv) and ninv > 0):
            return UNKNOWN, np.nan, np.nan
        # the computed inverse's columns solve (R + dR) x = e_j, |dR| <= gamma_p |R|:
        # relative error of ||R^-1||_F at most eta (first order)
        eta = 2 * p * np.sqrt(p) * EPS * norm_a * ninv
        if not eta <= 0.01:
            return UNKNOWN, np.nan, np.nan
        sig_r = (1 - 2 * eta) / ninv  # <= sigma_min(R^) = sigma_min(A + dA)
        sig_lo = sig_r - g * norm_a  # <= sigma_min(A)
    # numpy's decoder: singular values of A + E, ||E|| <= 10 max(f, K) eps ||A|| (assumption
    # (S)); its cut-off max(f, K) eps sigma_max, its rank band RANK_BAND times that
    big = max(f, K)
    e_np = 10 * big * EPS * norm_a
    sig_np = sig_lo - e_np
    band = RANK_BAND * big * EPS * norm_a * (1 + e_np)
    if not (sig_np > RANK_MARGIN * band and sig_r > 0):
        return UNKNOWN, np.nan, np.nan
    kappa = norm_a / sig_lo
    d_c = 0.0
    if tall:  # the exact residual of (A, T) against the computed one of (A + dA, T + dT)
        x_norm = max(tnorm / sig_lo, tnorm * (1 + g) / sig_r)
        d_c = g * tnorm + g * norm_a * x_norm
    ev = res_gamma(f, np.iscomplexobj(W))  # the rounding of numpy's residual, any BLAS order
    d_np = NUMPY_C * (f + K) * EPS * (1 + 2 * kappa) * tnorm \
        + ev * norm_a * tnorm * 1.01 / sig_np
    d = (d_c + d_np) * (1 + 1e-6)
    terms = (K - f) * m if tall else 0
    lo, hi = bracket(e_c, d, terms + K * m)
    return BRACKETED, lo, hi


@njit
def bracket_range(S: Any, n: int, count: int, Bn: Any, T: Any, tnorm: float, floor: float,
                  state: Any, lo: Any, hi: Any, inS: Any, F: Any, W: Any, tau: Any, Y: Any,
                  X: Any, limit: float, most: int, halt: Any) -> int:
    """:func:`_bracket_one` of ``count`` sets in lexicographic order from S (updated in
    place), up to the first set surely over ``limit`` or the ``most``-th that numpy's
    decoder must decide for a search of the first set over it (:func:`_stops`): returns how
    many it walked.  Ends early, its results not to be read, once ``halt[0]`` is set (read
    every HALT_EVERY sets: :func:`gctool.engine.threads.halt_flag`)."""
    for b in range(count):
        if b % HALT_EVERY == HALT_EVERY - 1 and halt[0] != 0:
            return b
        state[b], lo[b], hi[b] = _bracket_one(S, Bn, T, tnorm, floor, inS, F, W, tau, Y, X)
        stop = _stops(state[b], lo[b], hi[b], limit)
        if stop:
            most -= 1 if stop == 1 else most
            if most <= 0:
                return b + 1
        if b + 1 < count:
            successor(S, n)
    return count


@njit
def _stops(state: int, lo: float, hi: float, limit: float) -> int:
    """For a search of the first set over ``limit``: 2 when a set's bracket puts it surely
    over (the walk stops there), 1 when numpy's decoder must decide it (unknown, or its
    bracket reaches above the limit: :func:`errors_of`), else 0."""
    if state == BRACKETED and lo > limit:
        return 2
    return 1 if state != BRACKETED or not hi <= limit else 0


@njit
def bracket_walk(S: Any, n: int, count: int, Bn: Any, T: Any, tnorm: float, floor: float,
                 state: Any, lo: Any, hi: Any, H: Any, tau: Any, Y: Any, tail: Any,
                 ytail: Any, tau2: Any, limit: float, most: int, halt: Any) -> int:
    """:func:`bracket_range` of sets of a code with a ``floor`` (rank(B) = n) and n - s <= K,
    the QR of a set's first survivors kept from set to set: the sets that share their first
    s - 1 stragglers P share the reflectors of their survivors below the last straggler x,
    and those applied to every later column and to the targets (H, tau, Y: columns not in P,
    in order; the first j processed); a set then only factors its columns after x (tail,
    ytail), and moving x to x + 1 processes column x.  The same floating-point operations,
    in the same order, as :func:`_qr` on the set's own columns: the same brackets.  Stops
    as :func:`bracket_range` does (returns how many sets it walked); ends early, its results
    not to be read, once ``halt[0]`` is set (read at each new prefix)."""
    K = Bn.shape[1]
    m = T.shape[0]
    s = S.shape[0]
    f = n - s
    b = 0
    while b < count:
        if halt[0] != 0:
            return b
        # a new prefix P = S[:s - 1]: its columns, then those below S[s - 1] processed
        c = 0
        k = 0
        for i in range(n):
            if k < s - 1 and S[k] == i:
                k += 1
                continue
            for r in range(K):
                H[r, c] = Bn[i, r]
            c += 1
        for r in range(K):
            for u in range(m):
                Y[r, u] = T[u, r]
        x = S[s - 1]
        j = x - (s - 1)
        for col in range(j):
            _qr_step(H, tau, col)
            for u in range(m):
                _reflect(H, tau, col, Y, u)
        while True:
            q = f - j  # the columns after x
            rows = K - j
            tv = tail[:rows * q].reshape((rows, q))
            yv = ytail[:rows * m].reshape((rows, m))
            for r in range(rows):
                for t in range(q):
                    tv[r, t] = H[j + r, j + 1 + t]
                for u in range(m):
                    yv[r, u] = Y[j + r, u]
            state[b], lo[b], hi[b] = _tall_bracket(tv, yv, tau2, f, K, tnorm, floor, tv)
            b += 1
            stop = _stops(state[b - 1], lo[b - 1], hi[b - 1], limit)
            if stop:
                most -= 1 if stop == 1 else most
                if most <= 0:
                    return b
            if b == count or x == n - 1:
                break
            _qr_step(H, tau, j)  # column x joins the survivors below the last straggler
            for u in range(m):
                _reflect(H, tau, j, Y, u)
            x += 1
            j += 1
            S[s - 1] = x
        if b == count:
            break
        if successor(S, n) < 0:
            break
    return b


@njit
def bracket_sets(Sets: Any, Bn: Any, T: Any, tnorm: float, floor: float, state: Any,
                 lo: Any, hi: Any, inS: Any, F: Any, W: Any, tau: Any, Y: Any, X: Any) -> None:
    """:func:`_bracket_one` of the rows of Sets."""
    for b in range(Sets.shape[0]):
        state[b], lo[b], hi[b] = _bracket_one(Sets[b], Bn, T, tnorm, floor, inS, F, W, tau, Y,
                                              X)


#: the compiled walk per set, in ns: this much per multiply-add of a whole QR (rows p^2) ...
DIRECT_FLOP_NS = 0.4
#: ... or, when a set's first survivors' QR is kept from set to set (:func:`bracket_walk`),
#: this fixed part plus DIRECT_KEPT_NS per rows p^2.  Measured on one core of the 2-core
#: development machine: real Gaussian n = K = 24 s = 4, 2.2 us a set; n = K = 36 s = 5, 4.4 us
#: (numpy's decoder: 55-175 us)
DIRECT_SET_NS = 1000
DIRECT_KEPT_NS = 0.1


def direct_cost(n: int, K: int, s: int, kept: bool = False) -> float:
    """Estimated time of the compiled brackets per set of size s, in ns (numpy's decoder
    then decides a few sets more per task); ``kept``: rank(B) = n, the walk keeps the QR of
    the first survivors (:func:`bracket_walk`)."""
    f = n - s
    rows, p = max(f, K), min(f, K)
    flops = rows * p * p
    if kept and f <= K:
        return DIRECT_SET_NS + DIRECT_KEPT_NS * flops
    return DIRECT_SET_NS + DIRECT_FLOP_NS * flops


def floor(Bn: np.ndarray) -> float:
    """A lower bound on sigma_min(B_F) for every survivor set F when rank(Bn) = n (n <= K:
    the rows of B_F are some of Bn's, and sigma_f(B_F) >= sigma_n(Bn) by interlacing), from
    Bn's SVD less its backward error (assumption (S): 10 max(n, K) eps ||Bn||_2), halved; 0
    otherwise (each set bounds its own from its QR)."""
    n, K = Bn.shape
    if n > K or n == 0 or not np.isfinite(Bn).all():
        return 0.0
    sv = np.linalg.svd(Bn, compute_uv=False)
    low = float(sv[-1]) - 10 * max(n, K) * EPS * float(sv[0])
    return 0.5 * low if low > 1e3 * max(n, K) * EPS * float(sv[0]) else 0.0


class DirectBrackets:
    """The compiled brackets of one code's optimal decoder (row-normalised B and targets)."""

    def __init__(self, Bn: np.ndarray, T: np.ndarray) -> None:
        dt = np.result_type(Bn, T, np.float64)
        self.Bn = np.ascontiguousarray(Bn, dtype=dt)
        self.T = np.ascontiguousarray(np.atleast_2d(T), dtype=dt)
        self.n = self.Bn.shape[0]
        # ||T||_F, raised past the rounding of its sum
        self.tnorm = float(np.sqrt(np.sum(np.abs(self.T) ** 2))) * (1 + 1e-12)
        self.floor = floor(self.Bn)

    def _scratch(self, s: int) -> tuple[np.ndarray, ...]:
        """inS, F, W, tau, Y, X (private to the calling thread)."""
        n, K = self.Bn.shape
        m, dt = self.T.shape[0], self.Bn.dtype
        f = max(n - s, 1)
        rows, p = (K, f) if f <= K else (f, K)
        return private.scratch((n, np.bool_), (n, np.int64), ((rows, p), dt), (p, dt),
                               ((K, m), dt), ((p, p), dt))

    def _walk_scratch(self, s: int) -> tuple[np.ndarray, ...]:
        """H, tau, Y, tail, ytail, tau2 of :func:`bracket_walk` (private to the calling
        thread)."""
        n, K = self.Bn.shape
        m, dt = self.T.shape[0], self.Bn.dtype
        c = n - s + 1
        return private.scratch(((K, c), dt), (c, dt), ((K, m), dt), (K * c, dt), (K * m, dt),
                               (c, dt))

    def warm(self, s: int) -> None:
        key = ("direct", self.Bn.dtype.str)
        if key in WARM:
            return
        WARM.add(key)
        with compile_notice("attack"):
            self.walk(s, 0, 1)
            self.sets(np.arange(s, dtype=np.int64)[None])
            tied_records(np.zeros(1), first_max(np.zeros(1), TIE_RTOL))

    def walk(self, s: int, start: int, stop: int, limit: float = np.inf, most: int = 0
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(state, lo, hi) of the sets with lexicographic ranks start..stop-1, or of those up
        to the first surely over ``limit`` or the ``most``-th that numpy's decoder must
        decide for a search of the first set over it (0: no such cap; :func:`bracket_range`),
        whichever comes first."""
        from gctool.engine.enumeration import unrank_one
        from gctool.engine.threads import halt_flag, raise_if_halted

        count = stop - start
        state, lo, hi = np.zeros(count, np.uint8), np.empty(count), np.empty(count)
        halt, walked = halt_flag(), count
        cap = (most if most > 0 else count + 1, float(limit))
        if count and self.floor > 0 and self.n - s <= self.Bn.shape[1]:
            S = private.current(unrank_one(self.n, s, start))
            walked = bracket_walk(S, self.n, count, self.Bn, self.T, self.tnorm, self.floor,
                                  state, lo, hi, *self._walk_scratch(s), cap[1], cap[0],
                                  halt)
        elif count:
            S = private.current(unrank_one(self.n, s, start))
            walked = bracket_range(S, self.n, count, self.Bn, self.T, self.tnorm, self.floor,
                                   state, lo, hi, *self._scratch(s), cap[1], cap[0], halt)
        raise_if_halted(halt)
        return state[:walked], lo[:walked], hi[:walked]

    def sets(self, S: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(state, lo, hi) of the rows of S."""
        b, s = S.shape
        state, lo, hi = np.zeros(b, np.uint8), np.empty(b), np.empty(b)
        if b:
            bracket_sets(np.ascontiguousarray(S, dtype=np.int64), self.Bn, self.T, self.tnorm,
                         self.floor, state, lo, hi, *self._scratch(s))
        return state, lo, hi


def errors_of(state: np.ndarray, lo: np.ndarray, hi: np.ndarray,
              decide: Callable[[np.ndarray], np.ndarray], limit: float = np.inf) -> np.ndarray:
    """The errors a search reads of sets in enumeration order, from their brackets: numpy's
    (``decide(rows)``: numpy's decoder on those rows) where a search could tell, else the
    upper bound ``hi``.

    * ``limit`` infinite (worst case): with L the largest lower bound (or numpy's error of an
      unknown set), every set whose ``hi`` reaches ``L - TIE_RTOL max(1, |L|)`` (lowered by
      REL_SLACK) is decided: the largest error M is at least L, and a set left at ``hi`` is
      below ``M - TIE_RTOL max(1, |M|)`` (that cut grows with M), so the first set tied
      with the maximum (:func:`gctool.numerics.first_max`) and M are numpy's;
    * a finite ``limit`` (threshold): the sets whose ``hi`` exceeds it, in order, until the
      first whose error does: the errors stop there (the walk stops at the first set over
      ``limit``, as the oracle's walk does), and every set before it is at most ``limit``."""
    err = hi.astype(np.float64, copy=True)
    unknown = np.flatnonzero(state != BRACKETED)
    if np.isfinite(limit):
        cand = np.flatnonzero((state != BRACKETED) | ~(hi <= limit))
        step = 256
        for a in range(0, cand.size, step):
            part = cand[a:a + step]
            got = upto_first_over(decide, part, limit)
            err[part[:got.size]] = got
            over = part[:got.size][got > limit]
            if over.size:
                return err[:int(over[0]) + 1]
        return err
    if unknown.size:
        err[unknown] = decide(unknown)
    known = state == BRACKETED
    top = max(float(lo[known].max()) if known.any() else -np.inf,
              float(err[unknown].max()) if unknown.size else -np.inf)
    if np.isfinite(top):
        cut = top - TIE_RTOL * max(1.0, abs(top))
        cut -= REL_SLACK * max(1.0, abs(cut))
        cand = np.flatnonzero(known & (hi >= cut))
        if cand.size:
            err[cand] = decide(cand)
    elif known.any():  # no finite value to compare with: numpy decides every set
        cand = np.flatnonzero(known)
        err[cand] = decide(cand)
    return err
