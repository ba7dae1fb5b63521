"""The QR certificate of B_F's smallest singular value and the compensated witness
(FloatNullKernel.band_clear, tight_witness; kernels/real._clear_one, _tight_witness).

Where cond(B) is large, the bound sigma_min(B_F) >= sigma_min(N[:, S]) sigma_r(B) behind
band_free is loose: rs real n=36 s=6 sent 4.7 % of its sets to the direct decoder, whose B_F
all have sigma_min 1.4e-10 or more where the band ends at 2.6e-13.  A Householder QR of B_F^T
with a rigorous bound on ||R^-1||_F (qr_floor) proves them above the band, and their
witnesses' residuals, summed in compensated arithmetic, are 30-100 times below the plain
sum's round-off bound.  Checked here against SVDs, rational arithmetic, the direct decoder
and attack, on near-singular matrices and codes built to sit at the band's edge."""

from __future__ import annotations

from fractions import Fraction
from math import comb

import numpy as np
import pytest

import gctool
from gctool.algebra.fields import parse_field
from gctool.audit import nullspace as ns
from gctool.audit.chunks import ChunkEval
from gctool.audit.kernels.bounds import qr_clears, qr_floor
from gctool.decode.generic import Decoder
from gctool.engine.enumeration import sample_sets, survivors_of, unrank_lex
from gctool.exactls import Undecided, vector_error
from gctool.model import GradientCode
from gctool.numerics import EPS, residual_gamma

from helpers import built


def _with_singular_values(rng: np.random.Generator, K: int, f: int, sv: np.ndarray,
                          complex_: bool) -> np.ndarray:
    """A (K x f) with the given singular values, its columns then scaled into [1/2, 1)
    (as B's rows are): near-singular where sv says so."""
    def orth(m: int, k: int) -> np.ndarray:
        X = rng.standard_normal((m, k)) + (1j * rng.standard_normal((m, k)) if complex_ else 0)
        return np.linalg.qr(X)[0]

    A = orth(K, f) @ np.diag(sv) @ np.conj(orth(f, f).T)
    return A / (np.linalg.norm(A, axis=0) * 1.01)


def _compiled_floor(A: np.ndarray, tail: float) -> tuple[float, float, float, float, bool, bool]:
    """(sig, eta, gna, ninv, clears, fails) of the compiled certificate of A (K x f)."""
    from gctool.audit.kernels.real import _inv_fro_tri, _qr_rows, clears_qr, floor_qr, res_gamma

    K, f = A.shape
    G = np.ascontiguousarray(A.T)
    tau = np.zeros(f, G.dtype)
    _qr_rows(G, tau)
    ninv = _inv_fro_tri(G.T, np.zeros((f, f), G.dtype))
    cx = bool(np.iscomplexobj(A))
    sig, eta, gna = floor_qr(ninv, np.sqrt(f) * (1 + 4 * EPS), K, f, cx, res_gamma(f, cx))
    clears, fails = clears_qr(sig, eta, gna, ninv, tail, True)
    return sig, eta, gna, ninv, bool(clears), bool(fails)


def _numpy_floor(A: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    K, f = A.shape[-2:]
    ninv = ns.tri_inverse_fro(np.asarray(np.linalg.qr(A, mode="r")))
    cx = bool(np.iscomplexobj(A))
    sig, eta, gna = qr_floor(ninv, np.sqrt(f) * (1 + 4 * EPS), K, f, cx, residual_gamma(f, cx))
    return sig, eta, gna, ninv


@pytest.mark.parametrize("complex_", [False, True])
def test_qr_floor_is_below_sigma_min_and_compiled_clears_imply_numpy_clears(
        complex_: bool) -> None:
    """On 600 matrices whose smallest singular value sweeps 1e-15..1e-2 (near-singular and at
    the thresholds), both routes' bounds stay below sigma_min (the SVD's, less its error), are
    within a factor sqrt(f) + margin of it when far above the backward error, and the compiled
    margins hold: where the compiled certificate clears a tail, numpy's clears it; where it
    says numpy's fails, numpy's fails."""
    rng = np.random.default_rng(11)
    K, f = 24, 18
    smin = 10.0 ** rng.uniform(-15, -2, 600)
    seen = {"clears": 0, "fails": 0, "between": 0}
    for v in smin:
        sv = np.sort(np.concatenate([[v], 10.0 ** rng.uniform(np.log10(v), 0, f - 1)]))[::-1]
        A = _with_singular_values(rng, K, f, sv, complex_)
        exact_low = np.linalg.svd(A, compute_uv=False)[-1] + 10 * K * EPS  # above the true one
        sig_c, eta_c, gna, ninv_c, clears, fails = _compiled_floor(A, tail := 1e-10)
        sig_n, eta_n, _, ninv_n = _numpy_floor(A[None])
        for sig, eta in ((sig_c, eta_c), (float(sig_n[0]), float(eta_n[0]))):
            assert not (eta < 1) or sig <= exact_low
        if v > 100 * gna:
            assert sig_c >= np.linalg.svd(A, compute_uv=False)[-1] / np.sqrt(f) / 1.1 - gna
        ok_n, no_n = qr_clears(sig_n, eta_n, gna, ninv_n, tail, False)
        if clears:
            assert ok_n[0]
        if fails:
            assert no_n[0]
        seen["clears" if clears else "fails" if fails else "between"] += 1
    assert min(seen.values()) > 20  # every branch exercised


def _squeezed_rs(f: float) -> GradientCode:
    """rs real n=18 s=6 with the smaller half of B's singular values scaled by f: the same row
    space (every set decodes in exact arithmetic as before), cond(B) 7.9e6 at f = 1e-4, so
    band_free is large and the band term sends sets to the direct decoder."""
    from gctool.codes import design

    code = design("rs", n=18, s=6, field="real")
    U, sv, Vh = np.linalg.svd(np.asarray(code.B, float), full_matrices=False)
    r = int(np.sum(sv > sv[0] * 1e-12))
    sv[r // 2:r] *= f
    return GradientCode(U @ np.diag(sv) @ Vh, code.field, 6)


def test_cleared_sets_decode_at_full_rank_and_their_witness_bounds_the_exact_error() -> None:
    """rs real n=36 s=6 (a sample) and the squeezed n=18 code: every set the certificate
    clears has a B_F whose SVD counts all of its rows, the smallest singular value far above
    the band, and the direct decoder decodes it at full rank; the compensated witness bounds
    the exact residual of its decoder (rationals) and is far below the plain bound."""
    for code, count in ((built("rs", 36, 6, field="real"), 3000), (_squeezed_rs(1e-4), 0)):
        tol = 1e-9
        k = ns.FloatNullKernel(code, tol, ns.reduce_float(code, tol))
        n, s = code.n, code.s
        S = (np.sort(sample_sets(n, s, count, np.random.default_rng(3)), axis=1) if count
             else unrank_lex(n, s, np.arange(comb(n, s))))
        out, wit = ChunkEval.blank(S.shape[0]), np.full(S.shape[0], np.nan)
        k.screen_numpy(S, out, wit)
        low = np.flatnonzero(~(out.screen >= k.band_free) & (out.screen > 0))
        Z = -np.linalg.solve(k.red.N.T[S[low]], k.red.W[S[low]])
        banded, bare = k.witness_errors(S[low], Z)
        limit = tol * code.k
        moved = low[(banded > limit) & out.ok[low]]
        assert moved.size > 30 and not out.direct[moved].any()
        assert k.band_clear(S[moved]).all()
        BF = k.Bn[survivors_of(S[moved], n)]
        sv = np.linalg.svd(BF, compute_uv=False)
        assert np.all(sv[:, -1] > 100 * k.tail)
        r = Decoder(code, tol).evaluate(survivors_of(S[moved], n))
        assert r.ok.all() and np.all(r.rank == n - s)
        pick = moved[:5]
        Zp = -np.linalg.solve(k.red.N.T[S[pick]], k.red.W[S[pick]])
        tight = k.tight_witness(S[pick], Zp)
        assert np.all(tight < k.witness_errors(S[pick], Zp)[1] / 10)
        for i, row in enumerate(pick):
            a = k.red.W + np.einsum("nd,bdm->bnm", k.red.N.T, Zp[i:i + 1])[0]  # its floats
            F = survivors_of(S[row:row + 1], n)[0]
            assert vector_error(a[F].T, k.Bn[F], k.T) <= Fraction(float(tight[i]))


def test_compiled_tight_witness_is_numpys() -> None:
    """The compiled compensated residual sums the same terms in the same order as numpy's
    (Dot2 term by term): the same bound on the same decoders."""
    from gctool.audit.kernels.real import _tight_witness, survivors_into

    code = built("rs", 36, 6, field="real")
    k = ns.FloatNullKernel(code, 1e-9, ns.reduce_float(code, 1e-9))
    S = np.sort(sample_sets(36, 6, 40, np.random.default_rng(4)), axis=1)
    Z = -np.linalg.solve(k.red.N.T[S], k.red.W[S])
    want = k.tight_witness(S, Z)
    inS, F = np.zeros(36, bool), np.zeros(36, np.int64)
    x, y = np.zeros(37), np.zeros(37)
    for i in range(S.shape[0]):
        a = k.red.W + np.einsum("nd,dm->nm", k.red.N.T, Z[i])
        survivors_into(S[i], inS, F)
        got = _tight_witness(np.ascontiguousarray(a), k.Bn, np.ascontiguousarray(k.T), F, 30,
                             x, y)
        assert got == pytest.approx(want[i], rel=1e-12)


def _edge_code(eps: float) -> GradientCode:
    """test_witness_band's code with survivors u and u + eps w: B_F's smaller singular value
    is about 0.7 eps (below the rule's cut-off 2e-14 for eps = 1e-14, above the band 2e-13
    from about 3e-13), the targets' part along it beta^2 = 10.67 past the rank-1 limit."""
    K = 64
    ones = np.ones(K) / 8
    w = np.array([(-1) ** i for i in range(K)], float) / 8
    c, sn = 1 / np.sqrt(1.2), np.sqrt(0.2 / 1.2)
    u = c * ones + sn * w
    return GradientCode(np.stack([u, u + eps * w, w]), parse_field("real"), 1)


@pytest.mark.parametrize("eps", [1e-14, 1e-13, 3e-13, 1e-12, 3e-12, 1e-11, 1e-10])
def test_verify_agrees_with_the_direct_decoder_at_the_band_edge(
        monkeypatch: pytest.MonkeyPatch, eps: float) -> None:
    """Survivor pairs whose B_F has a singular value from below the cut-off to above the
    certificate's reach, at a tolerance where the band term decides the witness: verify
    (numpy's kernel, the compiled walk, 1 and 2 jobs) gives the direct kernel's verdict, and
    attack's worst set fails exactly when verify does.  The certificate clears only where
    the SVD counts the value."""
    code = _edge_code(eps)
    tol = 1e-4  # limit 6.4e-3: the band term of a decoder of norm 1e11-1e14 is above it
    k = ns.FloatNullKernel(code, tol, ns.reduce_float(code, tol))
    S = np.array([[2]])
    if k.clears(1) and k.band_clear(S)[0]:
        BF = k.Bn[[0, 1]]
        assert np.linalg.svd(BF, compute_uv=False)[-1] > k.tail
    def outcome(kernel: str, jobs: int = 1) -> bool | str:
        try:
            return gctool.verify(code, 1, kernel=kernel, tol=tol, jobs=jobs).ok
        except Undecided:  # a singular value in the band decides: float64 does not say
            return "undecided"

    truth = outcome("direct")
    for compiled in ("0", "1"):
        monkeypatch.setenv("GCTOOL_COMPILED", compiled)
        for jobs in (1, 2):
            assert outcome("nullspace", jobs) == truth
    if truth != "undecided":
        worst = gctool.attack(code, 1, tol=tol)
        assert (worst.error <= tol * code.k) == truth
    if eps >= 3e-12:  # far above the band: decodes at full rank
        assert truth is True
    if eps == 3e-12:  # the band term puts the witness above the limit; the certificate clears
        Z = (-k.red.W[2] / k.red.N.T[2]).reshape(1, 1, -1)
        banded, bare = k.witness_errors(S, Z)
        assert banded[0] > tol * code.k > 100 * bare[0] and k.band_clear(S)[0]


def test_verify_compiled_equals_numpy_with_the_certificate(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The squeezed rs code (cond(B) 7.9e6): the band term sent 140 of its 18,564 sets to the
    direct decoder; with the certificate and the compensated witness none goes (but the
    17 weakest, re-evaluated for the diagnostics), with one report on numpy's route and the
    compiled walk, for 1 and 2 jobs; and at f = 1e-7, where some sets fail, one verdict."""
    names = ("max_condition", "max_residual", "max_decoder_norm", "condition_bound")
    for f, ok in ((1e-4, True), (1e-7, False)):
        code = _squeezed_rs(f)
        docs, values = [], []
        for compiled, jobs in (("0", 1), ("1", 1), ("1", 2)):
            monkeypatch.setenv("GCTOOL_COMPILED", compiled)
            r = gctool.verify(code, 6, method="exhaustive", jobs=jobs)
            assert r.ok == ok
            d = r.diagnostics
            docs.append((r.checked, r.counterexample, d.max_condition_stragglers,
                         d.max_residual_stragglers, d.max_decoder_norm_stragglers, d.note,
                         d.exact_evaluations))
            values.append([float(getattr(d, name) or 0) for name in names])
            if ok:
                assert d.exact_evaluations == 17
        assert docs[0] == docs[1] == docs[2]
        assert values[1] == pytest.approx(values[0], rel=1e-6) and values[2] == values[1]
