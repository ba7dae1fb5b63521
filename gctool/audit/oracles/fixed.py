"""The ``fixed`` decoder's oracle: one-step decoding with one weight per worker (the user's,
or the scaled uniform weights), used on the survivors only; not monotone."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from gctool.audit.oracles.base import Oracle
from gctool.budget import Budget
from gctool.decode import DEFAULT_TOL
from gctool.engine.enumeration import straggler_mask
from gctool.errors import InvalidInput
from gctool.exactls import ExactClock, vector_error
from gctool.model import GradientCode
from gctool.numerics import EPS, Tol, on_side

#: the largest float64: an exact error above it is reported as inf
FLOAT_MAX = float(np.finfo(np.float64).max)


def _shift(x: np.ndarray, e: int) -> np.ndarray:
    """``x * 2^e`` (real or complex), exact unless an entry underflows."""
    if np.iscomplexobj(x):
        return np.ldexp(x.real, e) + 1j * np.ldexp(x.imag, e)
    return np.ldexp(np.asarray(x, dtype=np.float64), e)


class FixedOracle(Oracle):
    """One-step decoding with fixed per-worker weights (reference §0.1)."""

    kind = "fixed"
    monotone = False

    def set_work(self, s: int, sets: int) -> int:
        """One-step decoding: a weighted sum per set (n K), no solve."""
        from gctool.budget import FAST_SET_COST

        return sets * (FAST_SET_COST + self.n * max(1, int(self.code.B.shape[1])))

    def __init__(self, code: GradientCode, weights: Sequence[float] | np.ndarray | None = None,
                 tol: Tol = DEFAULT_TOL, budget: Budget | None = None) -> None:
        super().__init__(code, tol, budget)
        self.max_error = None
        self.user = None if weights is None else self._check_weights(weights)
        if self.user is None:
            if self.finite:
                raise InvalidInput(f"scaled uniform weights are not defined over {code.field}; "
                                   "give `weights` with field elements, or use the optimal "
                                   "decoder")
            if code.m != 1:
                raise InvalidInput("scaled uniform weights need m = 1; give `weights` with m rows "
                                   "for a communication-efficient code")
            rep = code.replication
            self.r = float(rep.mean())
            if self.r == 0:
                raise InvalidInput("scaled uniform weights n/(r(n-s)) are not defined when B "
                                   "has no non-zero entry (r = 0); give `weights`, or use the "
                                   "optimal decoder")
            regular = bool(np.all(rep == rep[0]))
            self.label = ("fixed (scaled uniform n/(r(n-s)), r = "
                          f"{self.r:g}{'' if regular else ', the mean column weight'})")
        else:
            self.label = "fixed (user weights)"
        self._quads: dict[int, tuple[float, np.ndarray, np.ndarray]] = {}

    def _check_weights(self, weights: Sequence[float] | np.ndarray) -> np.ndarray:
        W = np.atleast_2d(np.asarray(weights))
        if W.shape != (self.code.m, self.n):
            raise InvalidInput(f"fixed weights must have {self.n} entries per target "
                               f"(shape ({self.code.m}, {self.n})), got shape {W.shape}")
        return self.code.field.coerce(W, "weights")

    def weights(self, s: int) -> np.ndarray:
        """The (m, n) weight matrix used for sets of s stragglers."""
        if self.user is not None:
            return self.user
        if s >= self.n:
            return np.zeros((1, self.n))
        return np.full((1, self.n), self.n / (self.r * (self.n - s)))

    def describe(self) -> dict[str, Any]:
        d = super().describe()
        if self.user is not None:
            d["weights"] = self.user.tolist() if not np.iscomplexobj(self.user) else None
        else:
            d["rule"] = "w_i = n / (r (n - s)), s = number of stragglers of the set"
            d["r"] = self.r
        return d

    def quad(self, s: int) -> tuple[float, np.ndarray, np.ndarray]:
        """``err(S) = c0 + sum_{i in S} h_i + sum_{i,j in S} G_ij`` for sets of size s."""
        if s not in self._quads:
            W = self.weights(s)
            B, T = self.code.B, self.code.targets().astype(self.code.B.dtype)
            with np.errstate(over="ignore", invalid="ignore"):  # inf: checked by the callers
                X = W[:, :, None] * B[None, :, :]  # (m, n, K): worker i's part of target u
                V = np.einsum("un,nk->uk", W, B) - T  # (m, K): error when everyone responds
                c0 = float(np.sum(np.abs(V) ** 2))
                h = -2 * np.real(np.einsum("uk,unk->n", np.conj(V), X))
                G = np.real(np.einsum("uik,ujk->ij", np.conj(X), X))
            self._quads[s] = (c0, h, G)
        return self._quads[s]

    def _errors(self, S: np.ndarray) -> np.ndarray:
        b, s = S.shape
        if self.finite:
            return self._gf_errors(S)
        if s * s > self.n * self.code.B.shape[1]:
            return self._settle(S, self._direct(S))
        c0, h, G = self.quad(s)
        if not (np.isfinite(c0) and np.isfinite(h).all() and np.isfinite(G).all()):
            return self._settle(S, self._direct(S))  # too large for the quadratic form
        return self._settle(S, np.maximum(
            c0 + h[S].sum(axis=1) + G[S[:, :, None], S[:, None, :]].sum(axis=(1, 2)), 0.0))

    def _settle(self, S: np.ndarray, err: np.ndarray) -> np.ndarray:
        """Errors within round-off (:meth:`band`) of the limit, recomputed exactly (the weights
        and B are binary floating-point numbers: the error is a rational) and rounded to the
        limit's side (:func:`gctool.numerics.on_side`): float64 never decides a verdict at the
        limit."""
        W = self.weights(S.shape[1])
        T = self.code.targets()
        band = self.band(S.shape[1])
        if not np.isfinite(band):  # a term beyond float64: inf or nan errors
            return self._settle_scaled(S, W, T)
        near = np.flatnonzero(~(np.abs(err - self.limit) > band))  # nan too
        return self._exact(S, err, near, W, T)

    def band(self, s: int) -> float:
        """A bound on the round-off of either formula's float64 error of a set of s
        stragglers (every term is at most ``scale``, the square of the largest possible
        residual entry sum); inf when a term overflows float64."""
        W = self.weights(s)
        with np.errstate(over="ignore", invalid="ignore"):
            scale = float(np.sum((np.abs(W) @ np.abs(self.code.B) + np.abs(self.code.targets()))
                                 ** 2))
        return 4.0 * (s + 1) ** 2 * (self.n + self.code.B.shape[1] + 4) * EPS * scale

    def _exact(self, S: np.ndarray, err: np.ndarray, rows: np.ndarray, W: np.ndarray,
               T: np.ndarray) -> np.ndarray:
        """``err`` with the sets ``rows`` given their exact errors, on the limit's side (inf
        beyond float64)."""
        exact = self.decoder.exact_limit
        clock = ExactClock(self.meter, str)  # their time is charged to the search's meter
        for i in rows:
            alive = np.ones(self.n, dtype=bool)
            alive[S[i]] = False
            value = vector_error(W[:, alive], self.code.B[alive], T)
            clock()
            err[i] = np.inf if value > FLOAT_MAX else on_side(value, exact)
        return err

    def _settle_scaled(self, S: np.ndarray, W: np.ndarray, T: np.ndarray) -> np.ndarray:
        """:meth:`_settle` for weights and rows whose products or errors overflow float64: the
        errors computed with W and B scaled by powers of two (2^-ew, 2^-eb: every product and
        sum is then at most about 1, never inf, and exact scaling loses only what underflows),
        the band of :meth:`_settle` in those units plus what underflow can lose, and the sets
        within it of the scaled limit decided exactly.  An error that overflowed in the plain
        formulas (an inf or nan, or a cancellation after an inf) is thus either proved beyond
        the limit, with its value (inf when beyond float64), or exact, never taken as is."""
        B = self.code.B
        n, K = B.shape
        ew = int(np.frexp(np.max(np.abs(W)))[1])
        eb = int(np.frexp(np.max(np.abs(B)))[1]) + (n + 2).bit_length()
        Ws, Bs, Ts = _shift(W, -ew), _shift(B, -eb), _shift(T, -ew - eb)
        es = self._direct(S, Ws, Bs, Ts)
        scale = float(np.sum((np.abs(Ws) @ np.abs(Bs) + np.abs(Ts)) ** 2))
        lost = T.size * n * 2.0 ** -1070 * (1 + np.sqrt(scale))  # underflow of W, B, T
        band = 4.0 * (S.shape[1] + 1) ** 2 * (n + K + 4) * EPS * scale + lost + 2.0 ** -1073
        limit = np.ldexp(self.limit, -2 * (ew + eb))  # may underflow: within the band's 2^-1073
        near = np.flatnonzero(~(np.abs(es - limit) > band))
        with np.errstate(over="ignore"):
            err = np.ldexp(es, 2 * (ew + eb))  # exact, or inf beyond float64
        return self._exact(S, err, near, W, T)

    def _direct(self, S: np.ndarray, W: np.ndarray | None = None, B: np.ndarray | None = None,
                T: np.ndarray | None = None) -> np.ndarray:
        """The errors ``||W_F B_F - T||^2`` summed directly (the oracle's weights, B and targets
        unless given: :meth:`_settle_scaled` gives them scaled)."""
        W = self.weights(S.shape[1]) if W is None else W
        B = self.code.B if B is None else B
        T = self.code.targets() if T is None else T
        out = np.empty(S.shape[0])
        for lo in range(0, S.shape[0], 4096):
            chunk = S[lo:lo + 4096]
            mask = (~straggler_mask(chunk, self.n)).astype(np.float64)
            D = np.einsum("bn,un,nk->buk", mask, W, B) - T[None]
            with np.errstate(over="ignore"):  # an error beyond float64 is inf
                out[lo:lo + 4096] = np.sum(np.abs(D) ** 2, axis=(1, 2))
        return out

    def _gf_errors(self, S: np.ndarray) -> np.ndarray:
        GF = self.code.field.galois()
        assert self.user is not None
        mask = (~straggler_mask(S, self.n)).astype(np.int64)
        B, T = GF(np.asarray(self.code.B)), GF(self.code.targets())
        bad = np.zeros(S.shape[0], dtype=bool)
        for u in range(self.code.m):
            got = GF(mask * self.user[u][None, :]) @ B
            bad |= np.any(got != T[u][None, :], axis=1)
        return bad.astype(np.float64)

