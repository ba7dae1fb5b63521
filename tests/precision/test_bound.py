"""The precision bound (gctool.precision) against brute force.

* exact rational arithmetic: the true error of the rounded computation (the emulated float32
  result against the exact sum of the float32 partial gradients, as Fractions) is within the
  bound, coordinate by coordinate, for every straggler set of small codes;
* the corpora of the suite (every code with n <= 12): the emulated error of every straggler
  set is at or below its proved bound in float32, bfloat16 and float16, and for the FRC and
  cyclic codes the bound is within 100x of the worst observed error;
* hypothesis: random real and complex codes, every set;
* the bound's value by hand on codes whose every term is known.
"""

from __future__ import annotations

from fractions import Fraction
from itertools import combinations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gctool.codes import design
from gctool.decode.table import TableDecoder
from gctool.precision import NAMES, certify, get_format
from gctool.precision import emulate as em
from gctool.precision.bound import ROOM, BoundKernel
from gctool.precision.formats import gamma, rounded

from corpus import CRC3, RS5, adversarial_corpus, code_of, tandon7
from kernel_corpus import attack_codes, random_codes, walk_codes

U32 = 2.0**-24


def _decoders(code, F):
    a, *_ = TableDecoder(code, 1e-9, False).vectors(F)
    return a


def _exact_check(code, fmt, G):
    """For every straggler set: |g^_t - g_t| <= bound * sum_j |g_jt| exactly, every t."""
    B, T = np.asarray(code.B), code.targets()
    n, s = code.n, code.s
    F = np.array([[i for i in range(n) if i not in S] for S in combinations(range(n), s)])
    a = _decoders(code, F)
    sb = BoundKernel(B, T, fmt).evaluate(F, a)
    got = em.decode(F, a, em.messages(B, G, fmt), fmt)  # (b, m, W), float32
    Gf = [[Fraction(float(x)) for x in row] for row in G]
    checked = 0
    for b in range(F.shape[0]):
        if not np.isfinite(sb.bound[b]):
            continue
        bound = Fraction(float(sb.bound[b]))
        for t in range(G.shape[1]):
            exact = sum(Gf[j][t] for j in range(G.shape[0]))
            value = got[b, 0, t]
            err = abs(Fraction(float(np.real(value))) - exact)
            if np.iscomplexobj(value):  # |z - x| >= |Re z - x|; the bound is on |z - x|
                err = max(err, abs(Fraction(float(np.imag(value)))))
            scale = sum(abs(Gf[j][t]) for j in range(G.shape[0]))
            assert err <= bound * scale, (b, t, float(err), float(bound * scale))
            checked += 1
    return checked


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("case", ["crc3", "rs5", "tandon7", "frc6", "cyclic8"])
def test_true_error_in_exact_arithmetic_is_within_the_bound(case, name):
    code = {"crc3": lambda: code_of(CRC3, 1), "rs5": lambda: code_of(RS5, 1),
            "tandon7": lambda: code_of(tandon7(), 2), "frc6": lambda: design("frc", 6, 2),
            "cyclic8": lambda: design("cyclic", 8, 3, seed=4)}[case]()
    rng = np.random.default_rng(3)
    K = code.B.shape[1]
    G = np.concatenate([rng.standard_normal((K, 6)),
                        np.exp(rng.standard_normal(6)) * (1 + 0.1 * rng.standard_normal((K, 6)))],
                       axis=1).astype(np.float32)
    assert _exact_check(code, get_format(name), G) > 0


def test_the_emulated_worker_sums_in_float32_in_order():
    """messages() is the sequential float32 sum of fl32(b^_ij g_j) over the row's non-zeros,
    then rounded to the format: the same as scalar numpy float32 arithmetic."""
    rng = np.random.default_rng(1)
    B = rng.standard_normal((4, 5)) * (rng.random((4, 5)) < 0.7)
    G = rng.standard_normal((5, 3)).astype(np.float32)
    for name in NAMES:
        fmt = get_format(name)
        got = em.messages(B, G, fmt)
        for i in range(4):
            for t in range(3):
                acc = np.float32(0)
                for j in range(5):
                    if B[i, j] != 0:
                        acc = np.float32(acc + np.float32(rounded(B[i, j], fmt)) * G[j, t])
                want = np.float32(rounded(acc, fmt))
                assert got[i, t] == want


def test_bound_by_hand_uncoded_and_frc():
    # uncoded, n = k = 4, s = 0: a = 1, B = I: bound = gamma_4 + (1 + gamma_4) gamma_1 (float32)
    code = design("uncoded", n=4, k=4)
    r = certify(code, "float32", 0)
    # (every bound is the model's times 1 + ROOM, the room of the underflow floor)
    want = (gamma(4, U32) + (1 + gamma(4, U32)) * gamma(1, U32)) * (1 + ROOM)
    assert r.bound == pytest.approx(float(want), rel=1e-9)
    # the residual is the float64 evaluation's own rigour term gamma_{f+3}(2^-53) (S + |t|)
    assert r.bound >= want
    assert r.residual == pytest.approx(float(gamma(7, 2.0**-53)) * 2 * (1 + ROOM))
    # bfloat16 adds the rounding of each message when it is sent: uS = 2^-8
    r = certify(code, "bfloat16", 0)
    k1 = 2.0**-8 + gamma(4, U32) + 2.0**-8 * gamma(4, U32)
    assert r.bound == pytest.approx(float(k1 + (1 + k1) * gamma(1, U32)) * (1 + ROOM), rel=1e-9)
    assert r.bound > 2.0**-8  # the sent message's rounding dominates


def test_rounded_coefficients_enter_exactly():
    """A coefficient that P cannot hold shows up as the residual |c^ - t|, exactly."""
    B = np.array([[1.0 + 2.0**-10, 0.0], [0.0, 1.0]])  # bfloat16 rounds 1 + 2^-10 to 1
    code = code_of(B, 0)
    r = certify(code, "bfloat16", 0)
    # decoder a = (1/(1 + 2^-10), 1): a^ = fl(a) = 1 - 2^-10 rounded to bfloat16 = 1
    a0 = float(rounded(1 / (1 + 2.0**-10), get_format("bfloat16")))
    assert r.residual == pytest.approx(abs(a0 * 1.0 - 1) + 3 * 2.0**-53 * 2, abs=1e-15)


# -- the corpora ---------------------------------------------------------------------------
def _corpus():
    out = [("crc3", code_of(CRC3, 1)), ("rs5", code_of(RS5, 1)),
           ("tandon7", code_of(tandon7(), 2))]
    out += [(name, code_of(B, s, f)) for name, B, s, f in adversarial_corpus()]
    out += [(name, c.with_s(s)) for name, c, s in random_codes() + walk_codes()
            if c.n <= 12]
    out += [(name, c) for name, c in attack_codes() if c.n <= 12 and not c.field.is_finite]
    out += [("frc-12-2", design("frc", 12, 2)), ("frc-12-3", design("frc", 12, 3)),
            ("cyclic-12-4", design("cyclic", 12, 4, seed=1)),
            ("cyclic-9-2", design("cyclic", 9, 2, seed=3)),
            ("comm-6-1-2", design("comm", n=6, s=1, m=2)),  # two pieces: sqrt(m) max_c sum_u
            ("comm-7-2-2-complex", design("comm", n=7, s=2, m=2, field="complex"))]
    return out


CORPUS = _corpus()


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("label,code", CORPUS, ids=[c[0] for c in CORPUS])
def test_corpus_every_set_is_within_its_bound(label, code, name):
    r = certify(code, name)
    emp = r.empirical
    assert emp is not None and emp.sets == r.sets  # small codes: every set emulated
    assert emp.exceeds_bound == 0, r.reason
    if r.bound is not None:  # the model's range: nothing overflows where the bound is finite
        assert emp.out_of_range == 0 and emp.max_error is not None
        assert emp.max_error <= r.bound
    if code.scheme in ("frc", "cyclic"):
        assert r.bound is not None and emp.tightness is not None
        assert 1 <= emp.tightness <= 100, (label, name, emp.tightness)


def test_gf_codes_are_exact():
    code = design("cyclic-mds", n=6, s=2, field="GF(7)")
    r = certify(code, "bfloat16")
    assert r.exact and r.bound == 0 and r.ok and "exact arithmetic over GF(7)" in r.reason


# -- random codes --------------------------------------------------------------------------
@st.composite
def random_code(draw):
    n = draw(st.integers(2, 7))
    k = draw(st.integers(1, 6))
    s = draw(st.integers(0, n - 1))
    seed = draw(st.integers(0, 2**32 - 1))
    cplx = draw(st.booleans())
    rng = np.random.default_rng(seed)
    B = rng.standard_normal((n, k)) * 10.0 ** rng.uniform(-3, 3, (n, 1))
    B *= rng.random((n, k)) < draw(st.floats(0.3, 1.0))
    if cplx:
        B = B + 1j * rng.standard_normal((n, k)) * (B != 0)
    B[0, 0] = B[0, 0] or 1.0
    return code_of(B, s, "complex" if cplx else "real")


@settings(max_examples=40, deadline=None)
@given(code=random_code(), name=st.sampled_from(NAMES))
def test_random_codes_every_set_is_within_its_bound(code, name):
    r = certify(code, name)
    assert r.empirical is not None and r.empirical.exceeds_bound == 0
    if r.bound is not None and r.empirical.max_error is not None:
        assert r.empirical.max_error <= r.bound


# worker 2's message 6.68e-6 g is subnormal in float16 and its decoder entry is 6e4: the
# underflow's absolute error, outside the bound's relative model, exceeds the bound
UNDERFLOW_B = np.array([[4.43115651e-02, 0], [-7.19615087e+00, 0], [0, 6.68197389e-06],
                        [1.17410469e-01, 1.21625154e+01], [-2.14546050e-01, -1.26447079e-01],
                        [0, 0]])


def test_a_message_underflow_is_out_of_range_not_a_broken_bound():
    code = code_of(UNDERFLOW_B, 0, "real")
    r = certify(code, "float16")
    assert r.bound is not None and r.empirical is not None
    assert r.empirical.exceeds_bound == 0 and r.empirical.out_of_range == 1, r.reason
    assert any("underflow" in note for note in r.notes)
    # the emulation itself: beyond the bound without the underflow allowance, within it with
    fmt = get_format("float16")
    B, T = np.asarray(code.B), code.targets()
    F = np.arange(6)[None]
    a = _decoders(code, F)
    sb = BoundKernel(B, T, fmt).evaluate(F, a)
    G = [np.ones((2, 8), dtype=np.float32)]
    args = (B, T, F, a, fmt, G, sb.column, em.column_values(1))
    plain = em.empirical_errors(*args)
    assert plain[0] > sb.bound[0] * 1.2
    assert np.isnan(em.empirical_errors(*args, sb.bound)[0])
    # without underflow a draw beyond the bound still counts (here: beyond a quarter of it)
    code = design("cyclic", 9, 2, seed=3)
    B, T = np.asarray(code.B), code.targets()
    F = np.array([[i for i in range(9) if i not in S] for S in combinations(range(9), 2)])
    a = _decoders(code, F)
    sb = BoundKernel(B, T, fmt).evaluate(F, a)
    args = (B, T, F, a, fmt, em.draws(9, 2, 0), sb.column, em.column_values(1))
    plain = em.empirical_errors(*args)
    assert (plain > sb.bound / 4).any()
    assert np.array_equal(em.empirical_errors(*args, sb.bound / 4), plain)
    # in float32 nothing underflows: the same code is within its bound
    r32 = certify(code, "float32")
    assert r32.empirical is not None and r32.empirical.out_of_range == 0
    assert r32.empirical.exceeds_bound == 0


def test_underflow_is_the_half_spacing_of_the_subnormals():
    fmt = get_format("float16")
    x = np.array([0.0, 2.0**-20, -(2.0**-15), 2.0**-14, 1.0], dtype=np.float32)
    assert em.underflow(x, fmt).tolist() == [0, 2.0**-25, 2.0**-25, 0, 0]
    assert not em.underflow(x, get_format("float32")).any()


@pytest.mark.parametrize("name", NAMES)
def test_the_simulations_rounding_is_within_the_bound(name):
    """emulate.Rounding (float32 matrix products, any order) stays within each set's bound."""
    code = design("cyclic", 9, 2, seed=3)
    fmt = get_format(name)
    B, T = np.asarray(code.B), code.targets()
    F = np.array([[i for i in range(9) if i not in S] for S in combinations(range(9), 2)])
    a = _decoders(code, F)
    bounds = BoundKernel(B, T, fmt).evaluate(F, a).bound
    G = np.random.default_rng(2).standard_normal((9, 64)).astype(np.float32)
    exact = G.astype(np.float64).sum(axis=0)
    r = em.Rounding(fmt)
    for b in range(len(F)):
        got = r.decode(a[b], r.messages(B[F[b]], G))[0]
        err = np.max(np.abs(got - exact)) / np.sum(np.max(np.abs(G), axis=1))
        assert err <= bounds[b]


def test_the_complex_inner_product_constant_holds_for_a_chained_float32_order() -> None:
    """A worker or master that sums all 2f real products of a component in one float32 chain
    (each addition rounding up by almost u) exceeds Higham's complex-arithmetic constant
    gamma_{f+2} but stays within formats.dot_gamma's sqrt(2) gamma_{2f}; checked exactly."""
    from fractions import Fraction

    from gctool.precision.formats import dot_gamma, gamma

    u = 2.0**-24
    f = 12
    v = np.float32(u * (1 + 2.0**-20))
    x = [complex(1, 1)] * f
    y = [complex(0.5, -0.5)] + [complex(v, -v)] * (f - 1)
    re = [np.float32(a.real * b.real) for a, b in zip(x, y, strict=True)]
    re += [np.float32(-(a.imag * b.imag)) for a, b in zip(x, y, strict=True)]
    re = re[:1] + re[f:f + 1] + re[1:f] + re[f + 1:]  # 1/2, 1/2, then the 2f - 2 small ones
    acc = np.float32(0)
    for term in re:
        acc = np.float32(acc + term)
    pairs = list(zip(x, y, strict=True))
    exact = sum(Fraction(float(a.real)) * Fraction(float(b.real))
                - Fraction(float(a.imag)) * Fraction(float(b.imag)) for a, b in pairs)
    ratio = abs(Fraction(float(acc)) - exact) / sum(
        Fraction(abs(a)) * Fraction(abs(b)) for a, b in zip(x, y, strict=True))
    assert ratio > float(gamma(f + 2, u))  # the complex-arithmetic constant does not cover it
    assert ratio <= float(dot_gamma(f, u, True))
    assert float(dot_gamma(f, u, False)) == float(gamma(f, u))
