"""The witness test of the verifier's null-space kernel (FloatNullKernel.witness_error, and the
compiled walk's _witness) against the decoding rule's rank band.

A witness is a concrete decoder: its residual, with a rigorous round-off bound, bounds the
least-squares error of B_F in exact arithmetic whatever the rank of B_F.  But the rule counts
no singular value of the row-normalised B_F at or below the rank cut-off (and leaves a verdict
that hinges on one in the band above it to exact arithmetic), and a witness of norm about
1/sigma reaches through such a direction.  The code below has survivors u and u + 1e-14 w
(K = 64 columns, t = (8/c) u - beta w with beta^2 = 10.67 above the limit 6.4): their B_F has
singular values sqrt(2) and 7e-15, below the cut-off 2e-14, so the rule's error is beta^2 and
the set fails (direct decoder, attack), while the witness ``a = W + N^T Z`` (norm 3.6e14)
has a residual bound of 1.24 (its round-off slack is about n eps ||a||, far below the
cut-off's cut ||a|| at K >> n): verify said the code tolerates the straggler.  The bound now
adds ``band_tail ||a||`` (gctool.numerics.band_tail), as the direct decoder's hinge does."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import gctool
from gctool.algebra.fields import parse_field
from gctool.audit import nullspace as ns
from gctool.decode.generic import Decoder
from gctool.exactls import exact_value, vector_error
from gctool.model import GradientCode

from helpers import run

TOL = 0.1  # limit 0.1 * 64 = 6.4


def _band_code(field: str = "real") -> GradientCode:
    """Rows u, u + 1e-14 w and w (w alternating, u mostly ones; entries from two patterns, so
    every row space is exactly 2-dimensional and every set decodes in exact arithmetic); the
    complex one multiplies the rows by phases (no error changes)."""
    K = 64
    ones = np.ones(K) / 8
    w = np.array([(-1) ** i for i in range(K)], float) / 8
    c, sn = 1 / np.sqrt(1.2), np.sqrt(0.2 / 1.2)
    u = c * ones + sn * w
    B = np.stack([u, u + 1e-14 * w, w])
    if field == "complex":
        B = B * np.exp(1j * np.array([[0.3], [1.1], [2.0]]))
    return GradientCode(B, parse_field(field), 1)


def _kernel(code: GradientCode) -> ns.FloatNullKernel:
    return ns.FloatNullKernel(code, TOL, ns.reduce_float(code, TOL))


def _exploit(kernel: ns.FloatNullKernel) -> np.ndarray:
    """Z of the decoder ``a = W + N^T Z`` that vanishes on worker 2 (d = s = 1)."""
    red = kernel.red
    return (-red.W[2] / red.N.T[2]).reshape(1, 1, -1)


@pytest.mark.parametrize("field", ["real", "complex"])
def test_the_witness_does_not_decode_through_a_direction_below_the_cut_off(field: str) -> None:
    """The witness proves the set decodes in exact arithmetic (its vector's exact error is
    below its residual bound), yet the rule's error, at B_F's numerical rank 1, is 10.67: the
    band term puts the bound above the limit and the kernel leaves the set to the direct
    decoder, which proves it fails."""
    code = _band_code(field)
    kernel = _kernel(code)
    limit = TOL * code.k
    S, Z = np.array([[2]]), _exploit(kernel)
    bound = kernel.witness_error(S, Z)[0]
    assert bound > limit
    kernel.tail = 0.0  # the residual alone: what the witness proved before
    alone = kernel.witness_error(S, Z)[0]
    assert alone < limit / 2  # proves decodes (complex: 2.06, its round-off slack sqrt(2) more)
    a = kernel.red.W + kernel.red.N.T @ Z[0]
    F = [0, 1]
    assert vector_error(a[F].T, kernel.Bn[F], code.targets()) <= Fraction(alone)
    assert exact_value(kernel.Bn[F], code.targets()) == 0  # exactly rank 2
    r = Decoder(code, TOL).evaluate(np.array([F]))
    assert r.rank[0] == 1 and r.error[0] > limit and not r.ok[0]
    ev = _kernel(code).evaluate_numpy(S)
    assert ev.direct[0] and not ev.ok[0]


@pytest.mark.parametrize("field", ["real", "complex"])
def test_compiled_witness_has_the_band_term(field: str) -> None:
    """kernels/real._witness is witness_error, band term included, on the exploiting decoder
    (to round-off: the residual of a decoder of norm 3.6e14 is round-off itself, summed in
    another order)."""
    from gctool.audit.kernels.real import _witness

    kernel = _kernel(_band_code(field))
    Z = _exploit(kernel)
    dt = np.result_type(kernel.red.N, kernel.Bn)
    NT = np.ascontiguousarray(kernel.red.N.T, dtype=dt)
    W = np.ascontiguousarray(kernel.red.W, dtype=dt)
    inS = np.array([False, False, True])
    args = (NT, W, np.ascontiguousarray(kernel.Bn, dtype=dt),
            np.ascontiguousarray(kernel.T, dtype=dt), inS, np.ascontiguousarray(Z[0], dtype=dt),
            np.zeros_like(W))
    bound = _witness(*args, kernel.tail)
    assert bound == pytest.approx(kernel.witness_error(np.array([[2]]), Z)[0], rel=1e-4)
    assert bound > TOL * 64 > _witness(*args, 0.0)


@pytest.mark.parametrize("field", ["real", "complex"])
@pytest.mark.parametrize("compiled", ["0", "1"])
def test_verify_agrees_with_the_direct_decoder_and_attack(
        monkeypatch: pytest.MonkeyPatch, field: str, compiled: str) -> None:
    """verify's null-space kernel (numpy's, or the compiled walk with its second stage), its
    direct kernel and attack give the set [2] one verdict, with 1 and 2 jobs: it fails (it
    said 'tolerates 1 straggler' on the null-space kernel)."""
    monkeypatch.setenv("GCTOOL_COMPILED", compiled)
    code = _band_code(field)
    for jobs in (1, 2):
        for kernel in ("nullspace", "direct", "auto"):
            assert not gctool.verify(code, 1, kernel=kernel, tol=TOL, jobs=jobs).ok, kernel
    worst = gctool.attack(code, 1, tol=TOL)
    assert worst.stragglers == [2] and worst.error > TOL * code.k


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_cli_verify_exits_1_on_every_kernel(tmp_path: object, jobs: str) -> None:
    """The CLI: a finding (exit 1) on the null-space kernel as on the direct one."""
    path = f"{tmp_path}/band.json"
    gctool.write_code(_band_code(), path)
    for kernel in ("nullspace", "direct"):
        r = run("verify", path, "-s", "1", "--tol", str(TOL), "--kernel", kernel,
                "--jobs", jobs)
        assert r.exit_code == 1, (kernel, r.output)


@pytest.mark.parametrize("field", ["real", "complex"])
def test_witness_bound_is_above_the_exact_error_of_its_vector(field: str) -> None:
    """Whatever Z (decoders of norm 1 to 1e12, residuals cancelling to round-off when Z is
    the set's own solution), the bound is at least the exact error of the vector it tests
    (exact rational arithmetic on the floats of a and B): soundness does not rest on the rank
    of N[:, S] or of B_F."""
    rng = np.random.default_rng(7)
    n, K = 7, 4
    B = rng.standard_normal((n, K))
    if field == "complex":
        B = B + 1j * rng.standard_normal((n, K))
    B[3] = B[1] + 1e-9 * B[2]  # a near-dependent pair
    code = GradientCode(B, parse_field(field), 2)
    kernel = _kernel(code)
    red = kernel.red
    S = np.array([[0, 2], [1, 5], [2, 6]])
    for scale in (1.0, 1e6, 1e12):
        Z = rng.standard_normal((3, red.d, code.m)) * scale
        if field == "complex":
            Z = Z + 1j * rng.standard_normal(Z.shape) * scale
        own = np.linalg.lstsq(red.N.T[S[0]], -red.W[S[0]], rcond=None)[0]
        Z[0] = own + Z[0] * 1e-16
        bound = kernel.witness_error(S, Z)
        for i in range(S.shape[0]):
            a = red.W + red.N.T @ Z[i]
            F = [j for j in range(n) if j not in S[i]]
            assert vector_error(a[F].T, kernel.Bn[F], code.targets()) <= Fraction(bound[i])


def test_decoders_of_moderate_norm_keep_their_witness() -> None:
    """is-cr n=24 s=3: N[:, S] is exactly singular on 1,160 of the 2,024 sets, with W_S in its
    range.  The witness of moderate norm settles most of them and the direct decoder the rest:
    which few go to the decoder is round-off, so it depends on the BLAS kernels of the CPU
    (OpenBLAS' Haswell kernels: 1,140 and 20; Sandybridge: 1,147 and 13; an AMD EPYC's
    default: 1,084 and 76).  Every set is decided, and none of the 1,160 is lost between the
    two (a band term that cost the witness its sets would send them all to the decoder)."""
    from math import comb

    from gctool.codes import design
    from gctool.engine.enumeration import unrank_lex

    code = design("is-cr", n=24, s=3)
    kernel = ns.FloatNullKernel(code, 1e-9, ns.reduce_float(code, 1e-9))
    ev = kernel.evaluate_numpy(unrank_lex(24, 3, np.arange(comb(24, 3))))
    assert ev.ok.all()
    settled = int((~ev.direct & (ev.screen < kernel.delta)).sum())
    direct = int(ev.direct.sum())
    assert settled + direct == 1160
    assert direct <= 100


def _walsh(K: int, j: int) -> np.ndarray:
    return np.array([(-1) ** bin(x & j).count("1") for x in range(K)], float) / np.sqrt(K)


def _hunted(seed: int) -> tuple[GradientCode, float]:
    """The random hunt's family: rows u and u + delta w (delta 1e-7 to 1e-15.5, or along
    another pattern), 1-2 rows near w (the stragglers), the rest from other patterns; rows
    scaled by powers of two, permuted, complex ones by phases."""
    rng = np.random.default_rng(seed)
    K = int(rng.choice([16, 32, 64, 128]))
    n = int(rng.integers(3, 8))
    field = "complex" if rng.random() < 0.35 else "real"
    th, w, v3 = (_walsh(K, j) for j in (0, 1, 3))
    delta = float(10.0 ** -rng.uniform(7, 15.5))
    ang = rng.uniform(0.2, 1.2)
    u = np.cos(ang) * th + np.sin(ang) * w * rng.choice([-1, 1]) + rng.uniform(-.3, .3) * v3
    rows = [u, u + delta * (w if rng.random() < .7 else v3)]
    s = int(rng.integers(1, 3))
    rows += [w + rng.uniform(-.5, .5) * v3 for _ in range(s)]
    while len(rows) < n:
        rows.append(rng.uniform(-1, 1) * th + rng.uniform(-1, 1) * v3)
    B = np.array(rows)
    if field == "complex":
        B = B * np.exp(1j * rng.uniform(0, 2 * np.pi, (B.shape[0], 1)))
    B = (B * 2.0 ** rng.integers(-30, 30, (B.shape[0], 1)))[rng.permutation(B.shape[0])]
    return GradientCode(B, parse_field(field), s), float(rng.choice([0.05, 0.1, 0.2, 0.3, 0.5]))


@pytest.mark.parametrize("seed", [3, 45])  # complex n=3 K=128 s=1; real n=5 K=128 s=2
@pytest.mark.parametrize("compiled", ["0", "1"])
def test_hunted_codes_get_one_verdict(monkeypatch: pytest.MonkeyPatch, seed: int,
                                      compiled: str) -> None:
    """Two of the 4 codes of 150 on which the null-space kernel decoded what the direct
    kernel and attack prove fails."""
    monkeypatch.setenv("GCTOOL_COMPILED", compiled)
    code, tol = _hunted(seed)
    worst = gctool.attack(code, code.s, tol=tol)
    assert worst.error > tol * code.k
    for kernel in ("nullspace", "direct"):
        assert not gctool.verify(code, code.s, kernel=kernel, tol=tol).ok, kernel


# -- the band term left out (FloatNullKernel.band_free) ------------------------------------------
# For s = d stragglers whose bound on sigma_min(N[:, S]) is far above cond(B) times the band,
# B_F has full row rank with every singular value above the band, so the witness's residual
# bound alone bounds the rule's error.  On rs real codes the band term (decoders of norm
# 1e7-1e10) put the witness of about half the sets below delta above the limit, and the direct
# decoder took three quarters of verify's time (n=36 s=6).


def _rs_sets(n: int, s: int, tol: float) -> tuple[ns.FloatNullKernel, np.ndarray]:
    from math import comb

    from gctool.codes import design
    from gctool.engine.enumeration import unrank_lex

    code = design("rs", n=n, s=s, field="real")
    red = ns.reduce_float(code, tol)
    assert red.d == s
    return ns.FloatNullKernel(code, tol, red), unrank_lex(n, s, np.arange(comb(n, s)))


def test_sets_above_band_free_have_every_singular_value_above_the_band() -> None:
    """rs real n=20 s=6 at tol 1e-14 (15,003 of its 38,760 sets below delta): every set whose
    bound is at least band_free has a B_F whose SVD counts all of its n - s rows, the smallest
    singular value more than 10 RANK_BAND times the cut-off, and the kernel's witness, which
    leaves the band term out there, accepts sets the one with it sent to the direct decoder,
    which decodes them too (at full rank)."""
    from gctool.audit.chunks import ChunkEval
    from gctool.engine.enumeration import survivors_of
    from gctool.numerics import RANK_BAND, rank_cutoff

    kernel, S = _rs_sets(20, 6, 1e-14)
    out, wit = ChunkEval.blank(S.shape[0]), np.full(S.shape[0], np.nan)
    kernel.screen_numpy(S, out, wit)
    free = out.screen >= kernel.band_free
    assert free.mean() > 0.99
    BF = kernel.Bn[survivors_of(S[free], 20)]
    sv = np.linalg.svd(BF, compute_uv=False)
    assert np.all(sv[:, -1] > 10 * RANK_BAND * rank_cutoff(sv[:, :1], BF.shape)[:, 0])
    below = np.flatnonzero(free & ~(out.screen >= kernel.delta))
    assert below.size > 10_000
    Z = -np.linalg.solve(kernel.red.N.T[S[below]], kernel.red.W[S[below]])
    banded = kernel.witness_error(S[below], Z)
    bare = kernel.witness_error(S[below], Z, out.screen[below])
    assert np.all(bare <= banded) and np.all(wit[below] == bare)
    limit = 1e-14 * kernel.code.k
    moved = below[(banded > limit) & (bare <= limit)]
    assert moved.size > 20
    r = Decoder(kernel.code, 1e-14).evaluate(survivors_of(S[moved], 20))
    assert r.ok.all() and np.all(r.rank == 14)


@pytest.mark.parametrize("field", ["real", "complex"])
def test_the_band_code_keeps_its_band_term_given_its_bound(field: str) -> None:
    """The exploiting set above (a singular value of B_F below the cut-off) has a bound far
    below band_free: given it, the witness still adds the band term and stays above the
    limit, and the numpy kernel's tests do not accept the set."""
    from gctool.audit.chunks import ChunkEval

    kernel = _kernel(_band_code(field))
    S, Z = np.array([[2]]), _exploit(kernel)
    lb = np.abs(kernel.red.N.T[S[0], 0])
    assert kernel.red.d == 1 and lb[0] < kernel.band_free / 100
    assert kernel.witness_error(S, Z, lb)[0] > TOL * kernel.code.k
    assert not kernel.screen_numpy(S, ChunkEval.blank(1))[0]


def test_verify_compiled_equals_numpy_without_the_band_term(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """rs real n=18 s=6 at tol 1e-14: the band term sent 34 sets to the direct decoder and
    513 past the compiled witness's margin; without it the compiled walk settles them and no
    set is decoded directly but the 17 weakest (re-evaluated for the diagnostics), with one
    report on both routes and for 1 and 2 jobs."""
    from gctool.codes import design

    code = design("rs", n=18, s=6, field="real")
    names = ("max_condition", "max_residual", "max_decoder_norm", "condition_bound")
    docs, values = [], []
    for compiled, jobs in (("0", 1), ("1", 1), ("1", 2)):
        monkeypatch.setenv("GCTOOL_COMPILED", compiled)
        r = gctool.verify(code, 6, method="exhaustive", tol=1e-14, jobs=jobs)
        d = r.diagnostics
        assert r.ok and d.exact_evaluations == 17
        docs.append((r.checked, d.max_condition_stragglers, d.max_residual_stragglers,
                     d.max_decoder_norm_stragglers, d.note))
        values.append([float(getattr(d, name)) for name in names])
    assert docs[0] == docs[1] == docs[2]
    assert values[1] == pytest.approx(values[0], rel=1e-6) and values[2] == values[1]
