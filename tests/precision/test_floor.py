"""The underflow floor of the precision report (gctool.precision.bound.floor), in exact arithmetic.

Draws whose non-zero partial-gradient entries sit just above the reported floor decode within
the proved bound coordinate by coordinate, checked against the exact sum as Fractions: one
partition per coordinate, and every partition at once with random signs, whose messages (or a
complex message's parts) cancel, which the floor covers too.  Scaled down by powers of two,
the same draws break the bound somewhere below the floor: the floor is where the relative model
ends, not a formality.
"""

from __future__ import annotations

from fractions import Fraction
from itertools import combinations

import numpy as np
import pytest

from gctool.codes import design
from gctool.decode.table import TableDecoder
from gctool.precision import NAMES, certify, get_format
from gctool.precision import emulate as em
from gctool.precision.bound import ROOM, BoundKernel, floor, master_floor

from corpus import code_of


def _codes():
    frc = design("frc", 6, 2)
    return {
        "frc6": frc,
        # small coefficients (2^-8 1.3): the floor grows by their inverse
        "frc6-small": code_of(np.asarray(frc.B) * (2.0**-8 * 1.3), 2),
        "cyclic8": design("cyclic", 8, 2, seed=1),
        "cyclic-mds-complex": design("cyclic-mds", 6, 2, field="complex"),
    }


def _draws(code, scale: float) -> np.ndarray:
    """(K, W) float32 draws at ``scale``: one partition per coordinate (no message cancels),
    values uniform in [1, 2); for a non-negative code also every partition at once."""
    K = code.B.shape[1]
    v = em.column_values(5, 3 * K)
    G = np.zeros((K, 3 * K), dtype=np.float32)
    G[np.arange(3 * K) % K, np.arange(3 * K)] = v
    B = np.asarray(code.B)
    if not np.iscomplexobj(B) and (B >= 0).all():
        G = np.concatenate([G, em.column_values(6, K * 4).reshape(K, 4)], axis=1)
    return (G.astype(np.float64) * scale).astype(np.float32)


def _decoded(code, fmt, G):
    B, T = np.asarray(code.B), code.targets()
    n, s = code.n, code.s
    F = np.array([[i for i in range(n) if i not in S] for S in combinations(range(n), s)])
    a, *_ = TableDecoder(code, 1e-9, False).vectors(F)
    sb = BoundKernel(B, T, fmt).evaluate(F, a)
    return em.decode(F, a, em.messages(B, G, fmt), fmt), sb.bound  # (b, 1, W) float32, (b,)


def _ratios(code, fmt, G) -> float:
    """The same as :func:`_worst_ratio` in float64 (the sums of a few float32 values of one
    binade are exact; the ratio's own error is about 1e-16), for the draws below the floor."""
    got, bound = _decoded(code, fmt, G)
    G64 = G.astype(np.float64)
    err = np.abs(np.real(got[:, 0]).astype(np.float64) - G64.sum(axis=0))
    if np.iscomplexobj(got):
        err = np.maximum(err, np.abs(np.imag(got[:, 0]).astype(np.float64)))
    scale = np.abs(G64).sum(axis=0)
    keep = scale > 0
    return float(np.max(err[:, keep] / (bound[:, None] * scale[keep])))


def _worst_ratio(code, fmt, G) -> float:
    """max over sets and coordinates of |g^_t - g_t| / (bound * sum_j |g_jt|), exactly."""
    got, bounds = _decoded(code, fmt, G)
    return max(_exact_ratio(got[b, 0], code.targets()[0], bounds[b], G)
               for b in range(got.shape[0]))


def _exact_ratio(got, target, bound, G) -> float:
    """max over coordinates t of |got_t - target^T G_t| / (bound sum_j |G_jt|) for a decoded
    row ``got`` (W,) of the real float32 partial gradients G (K, W), in exact arithmetic
    (complex: the modulus, as squares of Fractions); above 1 exactly when the exact maximum
    is."""
    Gf = [[Fraction(float(x)) for x in row] for row in G]
    tr = [Fraction(float(np.real(v))) for v in target]
    ti = [Fraction(float(np.imag(v))) for v in target]
    lim = Fraction(float(bound))
    worst = Fraction(0)
    for t in range(G.shape[1]):
        col = [row[t] for row in Gf]
        scale = sum(abs(v) for v in col)
        if scale == 0:
            continue
        er = Fraction(float(np.real(got[t]))) - sum(c * v for c, v in zip(tr, col, strict=True))
        ei = Fraction(float(np.imag(got[t]))) - sum(c * v for c, v in zip(ti, col, strict=True))
        worst = max(worst, (er * er + ei * ei) / (lim * scale) ** 2)
    ratio = float(worst) ** 0.5
    return max(ratio, float(np.nextafter(1.0, 2.0))) if worst > 1 else min(ratio, 1.0)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("case", ["frc6", "frc6-small", "cyclic8", "cyclic-mds-complex"])
def test_just_above_the_floor_within_the_bound_below_it_broken(case, name):
    code = _codes()[case]
    fmt = get_format(name)
    r = certify(code, fmt, emulate=False)
    assert r.floor is not None and r.bound is not None and 0 < r.floor < r.headroom
    top = 2.0 ** np.ceil(np.log2(r.floor))  # draws in [top, 2 top): at or above the floor
    assert r.floor <= top < 2 * r.floor
    assert _worst_ratio(code, fmt, _draws(code, top)) <= 1
    # below: powers of two down to where the float32 draws still hold 9 bits
    ratios = []
    scale = top / 2
    while scale >= 2.0**-140 and not any(x > 1 for x in ratios):
        ratios.append(_ratios(code, fmt, _draws(code, scale)))
        scale /= 2
    assert any(x > 1 for x in ratios), (case, name, r.floor, ratios)


def test_the_floor_by_hand():
    f16, f32 = get_format("float16"), get_format("float32")
    # messages: float16's smallest normal over B's smallest part
    assert floor(f16, 0.5, 0.0) == pytest.approx(2.0**-13, rel=1e-14)
    assert floor(f16, 0.5, 0.0) >= 2.0**-13
    # the float32 accumulator's part, when it is above the messages'
    assert floor(f32, 1.0, 2.0**-86) == pytest.approx(2.0**-86, rel=1e-14)
    assert floor(f32, 1.0, 2.0**-130) == pytest.approx(2.0**-126, rel=1e-14)  # messages bind
    # the master's part: every product normal (a decoder part of 2^-40, b_min 1; a bound of
    # 2^-60 leaves a room of 12 (1 + 2^-24) 2^-66) ...
    one = np.ones(1)
    assert master_floor(f32, 1.0, 2.0**-40 * one, 3 * one, 2.0**-60 * one, 1, False)[0] \
        == 2.0**-86
    # ... or the room 2^-24 of a bound of 2^-10 for 3 real products, each underflow error
    # carried through 2 additions: 3 * 2^-150 (1 + gamma_2) (1 + 2^-24) / (2^-24 2^-10)
    # = 3 (1 + gamma_2) (1 + 2^-24) 2^-116 (times 1 + 2^-20 for its float64 evaluation),
    # smaller than 2^-40's 2^-86
    room = master_floor(f32, 1.0, 2.0**-100 * one, 3 * one, 2.0**-10 * one, 1, False)[0]
    exact = 3 * (1 + Fraction(2, 2**24 - 2)) * (1 + Fraction(1, 2**24)) * Fraction(1, 2**116)
    assert Fraction(room) >= exact and room == pytest.approx(float(exact), rel=2.0**-19)
    assert room < 2.0**-26 / 2.0**-100
    # complex: 2 sqrt(2) times that, 2N - 1 = 5 additions; m pieces: sqrt(m) times;
    # unbounded sets: no part
    carried = (1 + 5 * 2.0**-24 / (1 - 5 * 2.0**-24)) / (1 + 2 * 2.0**-24 / (1 - 2 * 2.0**-24))
    assert master_floor(f32, 1.0, 2.0**-100 * one, 3 * one, 2.0**-10 * one, 4, True)[0] \
        == pytest.approx(room * 2 * np.sqrt(2) * 2 * carried, rel=1e-12)
    assert master_floor(f32, 1.0, 2.0**-100 * one, 3 * one, np.inf * one, 1, False)[0] == 0
    assert floor(f16, float("inf"), 1.0) == 0.0  # B = 0: nothing is sent
    # the report takes B's and every set's decoder's smallest parts (frc: all 1)
    r = certify(design("frc", 6, 2), "float16", emulate=False)
    assert r.floor == pytest.approx(2.0**-14, rel=1e-14)
    assert certify(design("frc", 6, 2, field="GF(7)"), "float16").floor is None  # exact


def _real_cases():
    c = _codes()
    return {name: c[name] for name in ("frc6", "frc6-small", "cyclic8")}


@pytest.mark.parametrize("name", NAMES)
def test_cancelling_draws_at_the_floor_stay_within_the_bound(name):
    """Real codes: every partition at once, random signs (messages cancel, even to zero or
    into P's subnormals), entries in [2^e, 2^(e+1)) just above the floor: within the bound on
    every set and coordinate.  A message that cancels is covered: its send error is at most
    u_P tiny_P <= u_P b_min x, and a master product that underflows errs by at most
    2^-150 <= 2^-24 |a_i| b_min x, both inside the bound's own terms.  The errors are exact in
    float64 (a few float32 values of one binade; checked against longdouble)."""
    fmt = get_format(name)
    rng = np.random.default_rng(11)
    draws = 0
    for case, code in _real_cases().items():
        r = certify(code, fmt, emulate=False)
        top = 2.0 ** np.ceil(np.log2(r.floor))
        K = code.B.shape[1]
        mags = rng.uniform(1.0, 2.0, (K, 24 * 64))
        signs = rng.choice([-1.0, 1.0], (K, 24 * 64))
        signs[:, :64] = np.where(np.arange(K)[:, None] % 2 == 0, 1.0, -1.0)  # alternating
        G = (mags * signs * top).astype(np.float32)
        got, bound = _decoded(code, fmt, G)
        G64 = G.astype(np.longdouble)
        err = np.abs(np.real(got[:, 0]).astype(np.longdouble) - G64.sum(axis=0))
        assert np.array_equal(err.astype(np.float64), np.abs(
            np.real(got[:, 0]).astype(np.float64) - G.astype(np.float64).sum(axis=0)))
        scale = np.abs(G64).sum(axis=0)
        ratio = err / (bound[:, None].astype(np.longdouble) * scale)
        assert float(ratio.max()) <= 1, (case, name, float(ratio.max()))
        assert _worst_ratio(code, fmt, G[:, :64]) <= 1  # the alternating signs, as Fractions
        # some messages did cancel far below the floor's b_min x
        msgs = np.abs(em.messages(np.asarray(code.B), G, fmt, sent=False))
        assert (msgs[msgs > 0] < top * smallest(code, fmt) / 4).any()
        draws += G.shape[1]
    assert draws == 3 * 24 * 64


def smallest(code, fmt) -> float:
    from gctool.precision.formats import rounded, smallest_part

    return smallest_part(rounded(np.asarray(code.B), fmt))


@pytest.mark.parametrize(("case", "name"), [("frc6", "float16"), ("cyclic8", "float32"),
                                            ("frc6-small", "bfloat16")])
def test_certify_fails_when_its_floor_is_understated(case, name, monkeypatch):
    """certify emulates draws at its floor (the floor's set and the worst set): with the
    true floor no draw exceeds the bound; with a floor 2^-20 too low the draws leave the
    relative model and the report fails, counting the excess."""
    import sys

    from gctool.precision.bound import floor as true_floor

    code = _codes()[case]
    r = certify(code, name)
    assert r.ok and r.empirical is not None and r.empirical.exceeds_bound == 0
    assert "at the underflow floor" in r.empirical.draws
    module = sys.modules["gctool.precision.certify"]
    monkeypatch.setattr(module, "floor", lambda *args: true_floor(*args) * 2.0**-20)
    low = certify(code, name)
    assert low.floor == pytest.approx(r.floor * 2.0**-20)
    assert low.empirical is not None and low.empirical.exceeds_bound >= 1 and not low.ok
    assert "a bug in gctool" in low.reason


@pytest.mark.parametrize("name", NAMES)
def test_the_floor_under_scaling_and_permutation(name):
    """Metamorphic: permuting B's rows or columns leaves the floor as it is (up to the float64
    evaluation of the bound, which its room term divides by); B times 2^p (decoders times
    2^-p, the bound unchanged) divides the messages' part tiny_P / b_min by 2^p and leaves the
    master's part unchanged."""
    fmt = get_format(name)
    code = _codes()["cyclic8"]
    B = np.asarray(code.B)
    base = certify(code, fmt, emulate=False).floor
    rng = np.random.default_rng(3)
    perm = certify(code_of(B[rng.permutation(code.n)][:, rng.permutation(code.k)], code.s),
                   fmt, emulate=False).floor
    assert perm == pytest.approx(base, rel=1e-12)
    bmin, master = _parts(code, fmt)
    assert base == floor(fmt, bmin, master)
    for p in (-6, 5):
        scaled = code_of(B * 2.0**p, code.s)
        got = certify(scaled, fmt, emulate=False).floor
        assert got == pytest.approx(max(fmt.tiny / bmin * 2.0**-p, master), rel=1e-12)


def _parts(code, fmt):
    """(b_min, the master's part) of the floor, from every set's decoder by itself."""
    n, s = code.n, code.s
    F = np.array([[i for i in range(n) if i not in S] for S in combinations(range(n), s)])
    a, *_ = TableDecoder(code, 1e-9, False).vectors(F)
    sb = BoundKernel(np.asarray(code.B), code.targets(), fmt).evaluate(F, a)
    return smallest(code, fmt), float(sb.master.max())


@pytest.mark.parametrize("name", ["float32", "bfloat16"])
@pytest.mark.parametrize("field", ["real", "complex"])
def test_the_room_holds_underflowing_decoding_products(name, field):
    """A decoder with tiny parts (2^-e u, u in [1, 2); complex: both parts) beside parts of 1,
    on a 0/1 B (complex: 0/1 parts): the normal-products condition tiny_32 / (b_min a_min) is
    far above the floor, which the room sets; at the floor the master's products with the
    tiny parts land in float32's subnormals (each errs by up to 2^-150), and every coordinate
    of real gradients with random signs stays within the bound, as Fractions (complex: the
    modulus).  Every entry of these draws lies below the floor of a room 4 times as cautious
    (a factor 2 for 1 + gamma and one for the float64 evaluation, where 1 + gamma_p and
    1 + 2^-20 are enough): the tightened room is what they check."""
    fmt = get_format(name)
    rng = np.random.default_rng(7)
    k, R = 4, 8
    B = np.vstack([np.eye(k), (rng.random((R, k)) < 0.5).astype(float)])
    B[k:][B[k:].sum(axis=1) == 0, 0] = 1.0
    tiny_parts = rng.uniform(1.0, 2.0, R)
    if field == "complex":
        B = B + 1j * np.vstack([np.zeros((k, k)), (rng.random((R, k)) < 0.5)])
        tiny_parts = tiny_parts + 1j * rng.uniform(1.0, 2.0, R)
    n = k + R
    kernel = BoundKernel(B, np.ones((1, k)), fmt)

    def decoder(e: int) -> np.ndarray:
        a = np.ones((1, 1, n), dtype=B.dtype)
        a[0, 0, k:] = tiny_parts * 2.0**-e
        return a

    x0 = floor(fmt, kernel.bmin, float(kernel.evaluate_padded(decoder(60)).master[0]))
    e = int(np.round(-np.log2(2.0**-147 / x0)))  # products near 2^-147 at the floor
    a = decoder(e)
    sb = kernel.evaluate_padded(a)
    x = floor(fmt, kernel.bmin, float(sb.master[0]))
    normal = fmt.accumulator_tiny / (kernel.bmin * float(sb.amin[0]))
    assert x < normal / 2.0**16 and x > fmt.tiny / kernel.bmin  # the room decides
    top = 2.0 ** np.ceil(np.log2(x))
    G = (rng.uniform(1.0, 2.0, (k, 256)) * rng.choice([-1.0, 1.0], (k, 256)) * top)
    G = G.astype(np.float32)
    c = 2 * np.sqrt(2.0) if field == "complex" else 1.0
    cautious = 4 * c * n * 2.0**-150 * (1 + ROOM) / (ROOM * float(sb.bound[0]))
    assert float(np.abs(G).max()) < cautious
    F = np.arange(n)[None]
    msgs = em.messages(B, G, fmt)
    ah = em.coefficients(a[0, 0, k:], fmt)[:, None]
    prods = np.abs(np.concatenate([ah.real * msgs[k:].real, ah.imag * msgs[k:].imag,
                                   ah.real * msgs[k:].imag, ah.imag * msgs[k:].real]))
    assert ((prods > 0) & (prods < fmt.accumulator_tiny)).sum() > 100  # subnormal products
    got = em.decode(F, a, msgs, fmt)[0, 0]
    assert _exact_ratio(got, np.ones(k), sb.bound[0], G) <= 1


def _cancelling(K: int, width: int, top: float, rng) -> np.ndarray:
    """(K, width) float32 draws with entries in [top, 2 top), random signs: half with
    mantissas 1 + q 2^-23 (q < 4), whose signed sums cancel to a few units of 2^-23 top or to
    zero, half uniform in [1, 2)."""
    signs = rng.choice([-1.0, 1.0], (K, width))
    mags = rng.uniform(1.0, 2.0, (K, width))
    mags[:, : width // 2] = 1 + rng.integers(0, 4, (K, width // 2)) * 2.0**-23
    return (signs * mags * top).astype(np.float32)


@pytest.mark.parametrize("name", NAMES)
def test_complex_floor_holds_when_message_parts_cancel(name):
    """Complex codes: the floor holds whatever the signs (the proof: the comment in
    gctool.precision.bound.master_floor).  A complex B of small Gaussian integers and a
    decoder whose parts are all tiny (2^-12 {1, 3}: the master's terms are as small as the
    floor lets them be), so that tiny_32 / (b_min a_min) sets the floor in float32 and
    bfloat16 (float16: its messages' tiny_P / b_min).  Real gradients at the floor with
    random signs: message parts cancel far below b_min x, to zero or into P's subnormals,
    and the master's products with them land in float32's subnormals; every coordinate is
    within the bound, its complex modulus as Fractions.  The same draws scaled down by
    powers of two exceed it somewhere below: these draws do reach the underflow."""
    fmt = get_format(name)
    rng = np.random.default_rng(5)
    n, k = 10, 4
    B = rng.integers(-2, 3, (n, k)) + 1j * rng.integers(-2, 3, (n, k))
    B[B == 0] = 1 + 1j
    a = ((rng.choice([-3, -1, 1, 3], n) + 1j * rng.choice([-3, -1, 0, 1, 3], n))
         * 2.0**-12)[None, None]
    target = a[0, 0] @ B  # exact (few bits): the decoder decodes it exactly
    kernel = BoundKernel(B, target[None], fmt)
    sb = kernel.evaluate_padded(a)
    x = floor(fmt, kernel.bmin, float(sb.master[0]))
    normal = fmt.accumulator_tiny / (kernel.bmin * float(sb.amin[0]))
    assert kernel.bmin == 1 and float(sb.amin[0]) == 2.0**-12
    if fmt.tiny > normal:  # float16: the messages' part
        assert x == floor(fmt, 1.0, 0.0)
    else:  # the normal-products condition, not the room, sets the floor
        assert float(sb.master[0]) == normal and x == floor(fmt, 1.0, normal)
    top = 2.0 ** np.ceil(np.log2(x))
    G = _cancelling(k, 256, top, rng)
    F = np.arange(n)[None]
    msgs = em.messages(B, G, fmt)
    parts = np.abs(np.concatenate([msgs.real, msgs.imag]))
    assert ((parts > 0) & (parts < top / 4)).sum() > 100  # cancelled below b_min x
    assert (parts == 0).sum() > 10
    ah = em.coefficients(a[0, 0], fmt)[:, None]
    prods = np.abs(np.concatenate([ah.real * msgs.real, ah.imag * msgs.imag,
                                   ah.real * msgs.imag, ah.imag * msgs.real]))
    if fmt.tiny > normal:
        assert ((parts > 0) & (parts < fmt.tiny)).sum() > 50  # sent as float16 subnormals
    else:
        assert ((prods > 0) & (prods < fmt.accumulator_tiny)).sum() > 100
    got = em.decode(F, a, msgs, fmt)[0, 0]
    assert _exact_ratio(got, target, sb.bound[0], G) <= 1
    below = [_exact_ratio(em.decode(F, a, em.messages(B, low, fmt), fmt)[0, 0], target,
                          sb.bound[0], low)
             for low in ((G.astype(np.float64) * 2.0**-p).astype(np.float32)
                         for p in range(1, 24))]
    assert any(r > 1 for r in below), below


@pytest.mark.parametrize("name", NAMES)
def test_complex_design_at_its_floor_with_random_signs(name):
    """cyclic-mds over the complex numbers, every set with its own decoder: real gradients of
    every partition at once with random signs, at the reported floor, within the bound on
    every set and coordinate (complex modulus, as Fractions)."""
    code = _codes()["cyclic-mds-complex"]
    fmt = get_format(name)
    r = certify(code, fmt, emulate=False)
    top = 2.0 ** np.ceil(np.log2(r.floor))
    G = _cancelling(code.k, 64, top, np.random.default_rng(9))
    assert _worst_ratio(code, fmt, G) <= 1


def _in(fmt, value: float, direction: float) -> float:
    """The nearest number of ``fmt`` to ``value`` on the side of ``direction`` (+1 up, -1
    down), or ``value`` itself when it is one."""
    v = np.asarray(value).astype(fmt.dtype)
    if (float(v) - value) * direction < 0:
        v = np.nextafter(v, np.asarray(direction * np.inf).astype(fmt.dtype))
    return float(np.asarray(v).astype(np.float64))


@pytest.mark.parametrize(("name", "below"), [("float32", 2.0**-8), ("bfloat16", 2.0**-4)])
def test_the_room_floor_is_sharp(name, below):
    """The room's floor is where the bound ends, not a formality: a decoder that decodes
    almost nothing (4 workers sending the one partition, each decoded by alpha, about 2^-24;
    target 1) has a bound of almost 1, made of the residual |4 alpha - 1|, which the error
    attains: only the room 2^-24 is left for the master's products alpha g, each just below
    3 2^-150 (alpha: the largest number of the format for which it is), which round down to
    2^-149, 2^-150 off in the residual's direction.  At the floor (the first number of the
    format at or above it) every such draw is within the bound, as Fractions; a little
    below it (1 - 2^-8 of it in float32, 1 - 2^-4 in bfloat16) the bound is exceeded.  So no
    smaller floor holds: the room's factors (1 + gamma_p, 1 + 2^-20) are all it can spare."""
    fmt = get_format(name)
    n = 4
    B, target = np.ones((n, 1)), np.ones(1)
    kernel = BoundKernel(B, target[None], fmt)

    def alpha(g: float) -> float:
        al = _in(fmt, 3 * 2.0**-150 / g, -1.0)
        while Fraction(al) * Fraction(g) >= Fraction(3, 2**150):
            al = _in(fmt, al * (1 - 2.0**-30), -1.0)
        return al

    def case(g: float):
        a = np.full((1, 1, n), alpha(g))
        sb = kernel.evaluate_padded(a)
        x = floor(fmt, kernel.bmin, float(sb.master[0]))
        assert float(sb.master[0]) < fmt.accumulator_tiny / float(sb.amin[0])  # the room
        G = np.full((1, 4), g, dtype=np.float32)
        msgs = em.messages(B, G, fmt)
        assert (msgs == np.float32(g)).all()  # sent exactly
        prods = em.coefficients(a[0, 0], fmt)[:, None] * msgs
        assert ((prods > 0) & (prods < fmt.accumulator_tiny)).all()  # all subnormal
        got = em.decode(np.arange(n)[None], a, msgs, fmt)[0, 0]
        return x, _exact_ratio(got, target, sb.bound[0], G)

    x, _ = case(n * 2.0**-126)
    g = _in(fmt, x, 1.0)
    x, ratio = case(g)
    assert x <= g < x * (1 + 2.0**-7) and g > fmt.tiny  # at the floor, messages normal
    assert ratio <= 1
    g = _in(fmt, x * (1 - below), -1.0)
    x, ratio = case(g)
    assert g < x and ratio > 1, (g / x, ratio)
