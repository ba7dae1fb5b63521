"""Error oracles for ``attack``: the squared error of a straggler set under one decoder.

Three decoders (reference §0.1):

* ``optimal`` -- least squares, ``err(F) = min_a ||a^T B_F - t||^2`` summed over the targets.
  Over GF(q) the error is an indicator (0 decodes exactly, 1 fails).  Monotone: removing
  survivors never lowers it.
* ``fixed`` -- one pre-chosen weight per worker, used on the survivors only:
  ``err_w(F) = ||w_F^T B_F - t||^2``.  Either the user's weights or the *scaled uniform* weights
  ``w_i = n / (r (n - s))`` with r the column weight (the mean column weight when the code is not
  column-regular) and s = |S| the number of stragglers of the set being evaluated (so in worst
  mode, s is the attacked s).  Not monotone in general.
* ``natural`` -- the decoder a scheme ships with, where one exists: for replication schemes
  (``frc``, ``uncoded``) the master keeps the first message to arrive from each group of
  identical workers, with coefficient 1.  Which member arrives first does not change the error.

Fast path for optimal decoding over R/C (derived for gctool, checked against the batched SVD of
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
by the SVD decoder of :mod:`gctool.decode`, which stays gctool's reference.  The fast path
is used only when B (row-normalised) has condition number at most ``FAST_KAPPA`` on its
numerical rank: N carries ``sigma^-2``, so its round-off grows like ``cond(B)^2 eps``, and an
ill-conditioned B would make the lost error meaningless.  Batched solves never raise: a
singular or overflowing system sends its set to the SVD decoder.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import comb
from typing import Any

import numpy as np

from gctool.algebra.spectral import Spectral
from gctool.decode import _CHUNK_ENTRIES, DEFAULT_TOL, Decoder, Decoding
from gctool.engine.enumeration import straggler_mask, survivors_of
from gctool.errors import InvalidInput
from gctool.model import GradientCode
from gctool.numerics import EPS

DECODERS = ("optimal", "fixed", "natural")
_SIG_LOST = 1e-14
FAST_KAPPA = 1e4  # largest cond(B) (row-normalised) for the fast path of OptimalOracle


class Oracle:
    """Squared decoding error of straggler sets, in batches.  Subclasses set the attributes."""

    kind = "optimal"
    label = ""
    monotone = True

    def __init__(self, code: GradientCode, tol: float = DEFAULT_TOL) -> None:
        self.code = code
        self.decoder = Decoder(code, tol)
        self.finite = code.field.is_finite
        self.n = code.n
        #: errors above this do not decode (exact over GF(q); the tolerance tol*k over R/C)
        self.limit = self.decoder.limit
        #: a proven upper bound on every error (None when unknown)
        self.max_error: float | None = 1.0 if self.finite else float(code.m * code.k)
        self.evaluations = 0
        #: estimated work spent on straggler sets (:meth:`set_work`), held to the work budget
        self.spent = 0
        from gctool.limits import max_work

        self.budget = max_work()

    def set_work(self, s: int, sets: int) -> int:
        """Estimated work of ``sets`` straggler sets of size s: one least-squares solve or
        elimination over the n - s survivors each (:func:`gctool.limits.set_cost`)."""
        from gctool.limits import set_cost

        return sets * set_cost(max(1, self.n - s), self.code.B.shape[1], self.finite)

    # -- to override ------------------------------------------------------------------------
    def _errors(self, S: np.ndarray) -> np.ndarray:
        step = self.decoder.chunk_size(max(1, self.n - S.shape[1]))  # bounded memory, also
        return np.concatenate([  # for callers that pass many sets at once (greedy, bnb)
            self.decoder.evaluate(survivors_of(S[lo:lo + step], self.n)).error
            for lo in range(0, S.shape[0], step)])

    def describe(self) -> dict[str, Any]:
        return {"name": self.kind, "label": self.label, "monotone": self.monotone}

    # -- public -----------------------------------------------------------------------------
    def errors(self, S: np.ndarray) -> np.ndarray:
        """Raw errors of the straggler sets ``S`` (int array (b, s), rows sorted)."""
        S = np.asarray(S, dtype=np.intp)
        if S.ndim != 2:
            raise ValueError("S must be a 2-d array of straggler sets")
        self.evaluations += S.shape[0]
        if S.shape[0] == 0:
            return np.zeros(0)
        self.charge(self.set_work(S.shape[1], S.shape[0]))
        return np.asarray(self._errors(S), dtype=np.float64)

    def charge(self, work: int) -> None:
        """Add ``work`` to what the search has spent (straggler sets, and the probes a search
        makes without the decoder) and stop it above the work budget."""
        from gctool._signals import checkpoint

        checkpoint()
        self.spent += work
        if self.spent > self.budget:  # the budget enforced while any search runs
            from gctool.errors import BudgetExceeded

            raise BudgetExceeded(
                f"the search on this code (n={self.n}, k*m={self.code.B.shape[1]}, "
                f"{self.code.field}) has spent about {self.spent:.2g} operations "
                f"({self.evaluations:,} straggler sets decoded), above the work budget of "
                f"{self.budget:.2g} (--max-work, GCTOOL_MAX_WORK); use a smaller code, "
                "--method greedy with fewer --restarts, a lower --max-nodes, or raise "
                "--max-work")

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

    def chunk_size(self, s: int) -> int:
        """How many straggler sets of size s to evaluate per batch."""
        return self.decoder.chunk_size(max(1, self.n - s))

    def fails(self, err: float | np.ndarray) -> Any:
        return np.asarray(err) > self.limit

    def diagnose(self, S: Sequence[int]) -> Decoding | None:
        """Optimal-decoding diagnostics of one straggler set (None over GF(q))."""
        if self.finite:
            return None
        return self.decoder.decode([i for i in range(self.n) if i not in set(S)])


class OptimalOracle(Oracle):
    kind = "optimal"

    def __init__(self, code: GradientCode, tol: float = DEFAULT_TOL) -> None:
        super().__init__(code, tol)
        self.label = ("optimal (exact solve over " + str(code.field) + ")" if self.finite
                      else "optimal (least squares)")
        #: gctool.audit.kernels.optimal.HatErrors, when planned (R/C only)
        self.compiled: Any = None
        if not self.finite:
            self._spectral()

    def _spectral(self) -> None:
        n, K = self.code.B.shape  # the set-up counts toward the work budget of the searches
        self.spent += K * n * min(n, K) + n**3 + 2 * n * n * min(n, K)
        # the one SVD of the row-normalised B (exact power-of-two scaling: same errors)
        sp = Spectral.of(self.code.B)
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
        self.sig_kept = max(1e-6, 100 * kappa * max(sp.Bn.shape) * EPS)
        #: the fast path works with N = Q Sigma^-2 Q^H, whose round-off grows like
        #: kappa^2 eps; beyond FAST_KAPPA every set goes to the SVD decoder instead
        self.kappa = kappa
        self.fast = kappa <= FAST_KAPPA

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

    def set_work(self, s: int, sets: int) -> int:
        """The fast path costs about (s + dim N)^3 per set; other sets one solve each."""
        from gctool.limits import FAST_SET_COST, SMALL_SOLVE_FACTOR

        if self._uses_hat(s):
            return sets * (FAST_SET_COST + SMALL_SOLVE_FACTOR * (s + int(self.Qperp.shape[1])) ** 3)
        return super().set_work(s, sets)

    def _uses_hat(self, s: int) -> bool:
        f, K = self.n - s, self.code.B.shape[1]
        return (not self.finite and self.fast and 0 < s <= 64 and f > 0
                and s**3 <= f * K * min(f, K))

    def chunk_size(self, s: int) -> int:
        """Sets per batch; plans the compiled fast path (:mod:`gctool.audit.kernels`) for
        large enumerations, compiling or loading it now."""
        from gctool.audit.kernels import wanted

        if self._uses_hat(s) and wanted(comb(self.n, s)):
            self._plan(s)
        return 65_536 if self._uses_hat(s) else super().chunk_size(s)

    def plan_compiled(self, s: int) -> None:
        """Take the compiled fast path for sets of size s where it applies: a copy of an
        oracle that planned it must, so that both give the same floats (the choice in
        :meth:`chunk_size` depends on GCTOOL_COMPILED, which a worker may not share)."""
        if self._uses_hat(s):
            self._plan(s)

    def _plan(self, s: int) -> None:
        if self.compiled is None and self.Qperp.shape[1] > 0:
            from gctool.audit.kernels.optimal import HatErrors

            self.compiled = HatErrors(self.Qperp, self.N, self.alpha, self.err_full,
                                      self.sig_kept)
            self.compiled.warm(s)

    def _errors(self, S: np.ndarray) -> np.ndarray:
        b, s = S.shape
        if s == 0 and not self.finite:
            return np.full(b, self.err_full)
        if not self._uses_hat(s):
            return super()._errors(S)
        return self._hat_errors(S)

    def _hat_errors(self, S: np.ndarray) -> np.ndarray:
        out = np.empty(S.shape[0])
        s, d = S.shape[1], self.Qperp.shape[1]  # K is (s+d)^2 and A is s*d per set: bounded
        step = max(1, min(400_000 // max(1, s**2), _CHUNK_ENTRIES // max(1, (s + d) ** 2 + s * d)))
        for lo in range(0, S.shape[0], step):
            out[lo:lo + step] = self._hat_chunk(S[lo:lo + step])
        return out

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
        # the s - d directions beyond d are lost by dimension count (exactly); a computed
        # singular value <= _SIG_LOST is an *accidental* loss that round-off cannot prove
        accidental = np.asarray((sv[:, : min(s, d)] <= _SIG_LOST).any(axis=1))
        return E, lost, unsure, accidental

    def errors_range(self, n: int, s: int, start: int, stop: int) -> np.ndarray | None:
        """Errors of the sets with lexicographic ranks start..stop-1, walked by the compiled
        kernel (None when it is not planned for sets of size s: use :meth:`errors`)."""
        if self.compiled is None or not self._uses_hat(s) or s < 1:
            return None
        from gctool.engine.enumeration import unrank_lex

        err, pending = self.compiled.walk(n, s, start, stop)
        self.evaluations += stop - start
        if pending.any():  # the numpy route decides what the compiled walk does not settle
            rows = np.flatnonzero(pending)
            err[rows] = self._hat_chunk_numpy(unrank_lex(n, s, start + rows))
        return err

    def _hat_chunk(self, S: np.ndarray) -> np.ndarray:
        from gctool.audit.kernels import mode

        if self.compiled is None and mode() == "always":
            self._plan(S.shape[1])
        if self.compiled is None:
            return self._hat_chunk_numpy(S)
        err, pending = self.compiled(S)
        if pending.any():  # what the compiled path does not settle: the numpy route decides
            err[pending] = self._hat_chunk_numpy(S[pending])
        return err

    def _hat_chunk_numpy(self, S: np.ndarray) -> np.ndarray:
        """Fast path: when ``A = Qperp[S]`` has full rank min(s, d) with a margin (smallest
        eigenvalue of its min(s, d)-square Gram matrix >= sig_kept^2, reliable to ~1e-16), the
        lost subspace is exactly null(A^H), and the lost error solves the KKT system
        ``[[N_SS, A], [A^H, 0]] [w; mu] = [alpha_S; 0]``, ``extra = Re(alpha_S^H w)``.
        Other sets take the SVD route of :meth:`_svd_chunk`."""
        b, s = S.shape
        d = self.Qperp.shape[1]
        if d == 0:
            return self._svd_chunk(S)
        A = self.Qperp[S]
        AH = np.conj(np.swapaxes(A, 1, 2))
        G = AH @ A if s >= d else A @ AH
        well = np.linalg.eigvalsh(G)[:, 0] >= self.sig_kept**2
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
        m = self.alpha.shape[1]
        K = np.zeros((rows.size, s + d, s + d), dtype=self.N.dtype)
        K[:, :s, :s] = self.N[Sw[:, :, None], Sw[:, None, :]]
        K[:, :s, s:], K[:, s:, :s] = A[rows], AH[rows]
        rhs = np.zeros((rows.size, s + d, m), dtype=self.alpha.dtype)
        rhs[:, :s] = self.alpha[Sw]
        w, solved = _guarded_solve(K, rhs)
        extra = np.sum(np.real(np.conj(rhs[:, :s]) * w[:, :s]), axis=(1, 2))
        err[rows] = np.maximum(self.err_full + extra, 0.0)
        bad = rows[~solved | ~np.isfinite(err[rows])]
        if bad.size:  # a singular or overflowing system: the SVD decoder decides
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
        w, solved = _guarded_solve(M, rhs)
        extra = np.sum(np.real(np.conj(rhs) * w), axis=(1, 2))
        err = np.maximum(self.err_full + extra, 0.0)
        # failures resting on an accidental loss go to the decoder, which proves them or
        # decides them in exact arithmetic
        unsure = unsure | ~solved | ~np.isfinite(err) | (accidental & (err > self.limit))
        if unsure.any():
            rows = np.flatnonzero(unsure)
            err[rows] = self.decoder.evaluate(survivors_of(S[rows], self.n)).error
        return err


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


class FixedOracle(Oracle):
    """One-step decoding with fixed per-worker weights (reference §0.1)."""

    kind = "fixed"
    monotone = False

    def set_work(self, s: int, sets: int) -> int:
        """One-step decoding: a weighted sum per set (n K), no solve."""
        from gctool.limits import FAST_SET_COST

        return sets * (FAST_SET_COST + self.n * max(1, int(self.code.B.shape[1])))

    def __init__(self, code: GradientCode, weights: Sequence[float] | np.ndarray | None = None,
                 tol: float = DEFAULT_TOL) -> None:
        super().__init__(code, tol)
        self.max_error = None
        self.user = None if weights is None else self._check_weights(weights)
        if self.user is None:
            if self.finite:
                raise InvalidInput(f"scaled uniform weights are not defined over {code.field}; "
                                   "give --weights with field elements, or use the optimal "
                                   "decoder")
            if code.m != 1:
                raise InvalidInput("scaled uniform weights need m = 1; give --weights with m rows "
                                   "for a communication-efficient code")
            rep = code.replication
            self.r = float(rep.mean())
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
            return self._direct(S)
        c0, h, G = self.quad(s)
        if not (np.isfinite(c0) and np.isfinite(h).all() and np.isfinite(G).all()):
            return self._direct(S)  # entries too large for the quadratic form: directly
        return np.maximum(c0 + h[S].sum(axis=1) + G[S[:, :, None], S[:, None, :]].sum(axis=(1, 2)),
                          0.0)

    def _direct(self, S: np.ndarray) -> np.ndarray:
        W = self.weights(S.shape[1])
        T = self.code.targets()
        out = np.empty(S.shape[0])
        for lo in range(0, S.shape[0], 4096):
            chunk = S[lo:lo + 4096]
            mask = (~straggler_mask(chunk, self.n)).astype(np.float64)
            D = np.einsum("bn,un,nk->buk", mask, W, self.code.B) - T[None]
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


class GroupOracle(Oracle):
    """Natural decoder of replication schemes: first arrival per group of identical rows."""

    kind = "natural"

    def set_work(self, s: int, sets: int) -> int:
        """One-step decoding: a weighted sum per set (n K), no solve."""
        from gctool.limits import FAST_SET_COST

        return sets * (FAST_SET_COST + self.n * max(1, int(self.code.B.shape[1])))

    def __init__(self, code: GradientCode, tol: float = DEFAULT_TOL) -> None:
        super().__init__(code, tol)
        B = np.asarray(code.B)
        _, first, group = np.unique(B, axis=0, return_index=True, return_inverse=True)
        group = group.reshape(-1)
        R = B[first]  # one row per group
        T = code.targets()
        support = R != 0
        if code.m != 1 or np.any(support.sum(axis=0) > 1) or not np.array_equal(
                np.sum(R, axis=0) if not self.finite else np.asarray(
                    np.sum(code.field.to_galois(R), axis=0)), T[0]):
            raise InvalidInput(f"the natural decoder of {code.scheme} needs groups of identical "
                               "workers whose rows add up to the all-ones vector; this code has "
                               "been altered: use --decoder optimal or fixed")
        self.group = group
        self.groups = R.shape[0]
        self.weight = np.sum(np.abs(R) ** 2, axis=1).astype(np.float64)  # error of a dead group
        if self.finite:
            self.weight = (self.weight > 0).astype(np.float64)
        self.max_error = 1.0 if self.finite else float(self.weight.sum())
        self.label = (f"natural ({code.scheme}: first arrival in each of the {self.groups} "
                      "groups, coefficient 1)")

    def describe(self) -> dict[str, Any]:
        d = super().describe()
        d["groups"] = [np.flatnonzero(self.group == g).tolist() for g in range(self.groups)]
        return d

    def _errors(self, S: np.ndarray) -> np.ndarray:
        alive = np.zeros((S.shape[0], self.groups), dtype=np.int64)
        mask = ~straggler_mask(S, self.n)
        np.add.at(alive, (np.nonzero(mask)[0], self.group[np.nonzero(mask)[1]]), 1)
        dead = alive == 0
        err = dead.astype(np.float64) @ self.weight
        return np.minimum(err, 1.0) if self.finite else err


def group_schemes() -> list[str]:
    """Schemes whose natural decoder is "first arrival per group of identical workers"
    (``SchemeInfo.grouped``)."""
    from gctool.registry import SCHEMES

    return [name for name, info in SCHEMES.items() if info.grouped]


def natural_available(code: GradientCode) -> bool:
    from gctool.registry import feature

    return bool(feature(code.scheme, "grouped", False))


def make_oracle(code: GradientCode, decoder: str = "optimal",
                weights: Sequence[float] | np.ndarray | None = None,
                tol: float = DEFAULT_TOL) -> Oracle:
    """Build the error oracle for ``decoder`` (one of :data:`DECODERS`)."""
    if decoder not in DECODERS:
        raise InvalidInput(f"decoder must be one of {', '.join(DECODERS)}, got {decoder!r}")
    if weights is not None and decoder != "fixed":
        raise InvalidInput("weights are only used by the fixed decoder (--decoder fixed)")
    if decoder == "optimal":
        return OptimalOracle(code, tol)
    if decoder == "fixed":
        return FixedOracle(code, weights, tol)
    if not natural_available(code):
        raise InvalidInput(f"scheme {code.scheme!r} has no natural decoder in gctool (natural "
                           f"decoders: {', '.join(group_schemes())}); use --decoder optimal or "
                           "fixed")
    return GroupOracle(code, tol)

