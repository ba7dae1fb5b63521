"""Finite-field designs (rs, cyclic-mds, comm, nested) built on the algebra layer's int64
arithmetic: the matrices against galois-computed ones and against fingerprints of the matrices
the galois-based constructions wrote, and the arithmetic they use against galois."""

from __future__ import annotations

import hashlib
import subprocess
import sys

import galois
import numpy as np
import pytest

from gctool.algebra.fields import Field, parse_field
from gctool.algebra.gf import GFArith, plain_arith
from gctool.algebra.powers import primitive_element, primitive_powers
from gctool.codes import _algebra, design
from gctool.codes._algebra import balanced_mask, holders, node_products, window_products

# sha256 (first 16 hex digits) of B as little-endian int64, written by the galois-based
# constructions these replaced, for the same commands
FINGERPRINTS = [
    ("rs", dict(n=60, s=7, field="GF(2^6)"), "ab3d65ceab875417"),
    ("rs", dict(n=100, k=150, s=9, field="GF(101)"), "b9c1563de70f2169"),
    ("rs", dict(n=63, s=5, field="GF(2^6)", nodes="unity"), "f2708af2fe8a44b4"),
    ("rs", dict(n=40, s=3, field="GF(3^4)"), "0aab3c29f0654b08"),
    ("rs", dict(n=30, s=4, field="GF(2^5, x^5 + x^2 + 1)"), "29c102ddd3f85548"),
    ("rs", dict(n=26, s=4, field="GF(3^3, x^3 + 2x + 1)", nodes="unity"), "a46ba969110a0346"),
    ("cyclic-mds", dict(n=63, s=10, field="GF(2^6)"), "252f612e6144d674"),
    ("cyclic-mds", dict(n=80, s=13, field="auto"), "d6b9a40b0951334f"),
    ("cyclic-mds", dict(n=26, s=5, field="GF(3^3)"), "d0d1cdb8175ed7ec"),
    ("cyclic-mds", dict(n=13, s=4, field="GF(3^3, x^3 + 2x + 1)"), "ecda8672d118ff28"),
    ("comm", dict(n=40, s=3, m=2, field="GF(2^6)"), "f3f841f19b6ecd5d"),
    ("comm", dict(n=30, k=20, s=4, m=3, field="GF(31)"), "91facbcfaab47f0c"),
    ("comm", dict(n=15, s=3, m=2, field="GF(2^4)", nodes="unity"), "a9d3610ba6d34254"),
    ("comm", dict(n=25, s=3, m=2, field="GF(3^3)"), "ff90789a326fb33c"),
    ("nested", dict(n=15, levels=[2, 5], field="GF(2^4)"), "373dc68231c1f7dc"),
    ("nested", dict(n=13, levels=[1, 2, 4], field="GF(3^3)"), "ecda8672d118ff28"),
    ("cyclic", dict(n=6, s=2, field="GF(31)", seed=7), "3326e5ddd0145797"),
    ("cyclic", dict(n=12, s=2, field="GF(3^3)", seed=5), "a553790d8bb96cff"),  # 23 draws
    ("cyclic", dict(n=8, s=7, field="GF(257)", seed=11), "ae1fd128caf85aaf"),
    ("cyclic", dict(n=200, s=1, field="GF(2^13)", seed=1), "b163e2bf5f0facbe"),
]


@pytest.mark.parametrize(("scheme", "kw", "digest"), FINGERPRINTS)
def test_matrix_is_the_one_the_galois_construction_wrote(scheme: str, kw: dict, digest: str
                                                         ) -> None:
    B = np.ascontiguousarray(design(scheme, **kw).B, dtype="<i8")
    assert hashlib.sha256(B.tobytes()).hexdigest()[:16] == digest


@pytest.mark.parametrize("spec", ["GF(2)", "GF(31)", "GF(257)", "GF(2^13)", "GF(65537)"])
def test_cyclic_draws_galois_random_stream(spec: str) -> None:
    """A GF(q) cyclic draw takes H from the seeded stream exactly as galois' Random did."""
    from gctool.codes.cyclic import _draw_gf

    fld = parse_field(spec)
    expect = fld.galois().Random((3, 9), seed=np.random.default_rng(4))
    H = expect.view(np.ndarray).astype(np.int64)
    B = _draw_gf(9, 3, fld, np.random.default_rng(4))
    if B is not None:  # every row is in the null space of H: B H^T = 0
        GF = fld.galois()
        H[:, -1] = (-np.sum(GF(H[:, :-1]), axis=1)).view(np.ndarray)
        assert not np.any(GF(B) @ GF(H).T)
    rng = np.random.default_rng(4)
    dtype = {2: np.uint8, 31: np.uint8, 257: np.uint16, 8192: np.uint16, 65537: np.uint32}
    assert np.array_equal(rng.integers(0, fld.order, (3, 9), dtype=dtype[fld.order]),
                          expect.view(np.ndarray))


def _galois_nodes(GF: type, n: int, kind: str) -> galois.FieldArray:
    if kind == "unity":
        return (GF.primitive_element ** ((GF.order - 1) // n)) ** np.arange(n)
    return GF(np.arange(n))


@pytest.mark.parametrize(("n", "k", "s", "spec", "kind"), [
    (20, 33, 13, "GF(2^5)", "integers"), (13, 13, 11, "GF(3^3)", "unity"),
    (16, 7, 9, "GF(17)", "unity"), (9, 9, 8, "GF(2^4, x^4 + x^3 + x^2 + x + 1)", "integers"),
])
def test_rs_against_galois(n: int, k: int, s: int, spec: str, kind: str) -> None:
    """B[i, j] = prod over the non-holders l of column j of (alpha_i - alpha_l), in galois."""
    code = design("rs", n=n, k=k, s=s, field=spec, nodes=kind)
    GF = code.field.galois()
    alpha = _galois_nodes(GF, n, kind)
    mask = balanced_mask(n, k, s + 1)
    expect = GF.Zeros((n, k))
    for j in range(k):
        others = alpha[~mask[:, j]]
        for i in np.nonzero(mask[:, j])[0]:
            expect[i, j] = np.prod(alpha[i] - others) if others.size else GF(1)
    assert np.array_equal(code.B, expect.view(np.ndarray))


@pytest.mark.parametrize(("n", "s", "spec"), [
    (26, 20, "GF(3^3)"), (8, 3, "GF(3^2, x^2 + 2x + 2)"),
])
def test_cyclic_mds_against_galois(n: int, s: int, spec: str) -> None:
    code = design("cyclic-mds", n=n, s=s, field=spec)
    GF = code.field.galois()
    w = GF.primitive_element ** ((GF.order - 1) // n)
    g = galois.Poly.Roots(w ** np.arange(1, s + 1)).coeffs[::-1]
    row = np.concatenate([g.view(np.ndarray), np.zeros(n - g.size, dtype=np.int64)])
    expect = np.array([np.roll(row, i) for i in range(n)])
    assert np.array_equal(code.B, expect)
    assert code.params["root"] == int(w)


@pytest.mark.parametrize(("n", "k", "s", "m", "spec"), [
    (15, 10, 3, 3, "GF(2^5)"), (9, 9, 1, 4, "GF(3^3)"),
])
def test_comm_against_galois(n: int, k: int, s: int, m: int, spec: str) -> None:
    """Column u*k + j holds p(alpha_i) for the unique p = Z_j q (deg q < m) whose coefficients
    of x^(L-m)..x^(L-1) are e_u (L = n - s), solved here as an m x m system in galois."""
    code = design("comm", n=n, k=k, s=s, m=m, field=spec)
    GF = code.field.galois()
    alpha = GF(np.arange(n))
    mask = balanced_mask(n, k, s + m)
    L = n - s
    for j in range(k):
        Z = galois.Poly.Roots(alpha[~mask[:, j]]) if (~mask[:, j]).any() else galois.Poly.One(GF)
        z = Z.coeffs[::-1]  # ascending, degree L - m
        M = GF.Zeros((m, m))
        for a in range(m):
            for w in range(m):
                if 0 <= L - m + a - w <= L - m:
                    M[a, w] = z[L - m + a - w]
        for u in range(m):
            q = np.linalg.solve(M, GF(np.eye(m, dtype=np.int64)[u]))
            p = Z * galois.Poly(q[::-1])
            values = np.where(mask[:, j], p(alpha).view(np.ndarray), 0)
            assert np.array_equal(code.B[:, u * k + j], values)


@pytest.mark.parametrize("spec", ["GF(2^6)", "GF(67)", "GF(3^4)", "GF(2^5, x^5 + x^2 + 1)"])
@pytest.mark.parametrize(("n", "k", "r"), [
    (30, 30, 1), (30, 30, 7), (30, 50, 15), (30, 37, 29), (30, 30, 30), (17, 40, 9), (1, 1, 1),
])
def test_window_products_equal_node_products(spec: str, n: int, k: int, r: int,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    ar = plain_arith(parse_field(spec))
    alpha, _ = _algebra.nodes(n, parse_field(spec), "integers")
    hold = holders(balanced_mask(n, k, r))
    expect = node_products(alpha, hold, ar)
    assert np.array_equal(window_products(alpha, hold, ar), expect)
    monkeypatch.setattr(_algebra, "WINDOW_BLOCK", 40)  # several blocks of workers
    assert np.array_equal(window_products(alpha, hold, ar), expect)


@pytest.mark.parametrize("spec", ["GF(2^5)", "GF(3^3)", "GF(17)"])
def test_products_sums_and_windows_against_galois(spec: str) -> None:
    fld = parse_field(spec).resolved()
    ar, GF = GFArith(fld), fld.galois()
    rng = np.random.default_rng(3)
    a = rng.integers(0, fld.order, size=(6, 9))
    assert np.array_equal(ar.prod(a), np.prod(GF(a), axis=-1).view(np.ndarray))
    assert np.array_equal(ar.sum(a), np.sum(GF(a), axis=-1).view(np.ndarray))
    assert np.array_equal(ar.prod(a[:, :0]), np.ones(6, dtype=np.int64))
    nz = rng.integers(1, fld.order, size=(11, 4))
    lo = np.array([0, 3, 5, 10, 2])
    hi = np.array([11, 3, 9, 11, 4])
    col = np.array([0, 1, 2, 3, 1])
    expect = [np.prod(GF(nz[x:y, c])) if y > x else GF(1) for x, y, c in zip(lo, hi, col,
                                                                              strict=True)]
    assert np.array_equal(ar.window_prod(nz, lo, hi, col), np.array(expect, dtype=np.int64))


@pytest.mark.parametrize(("p", "m"), [(2, 2), (2, 8), (2, 12), (3, 3), (5, 2), (7, 3), (2, 16)])
def test_default_polynomial_and_power_table_are_galois(p: int, m: int) -> None:
    GF = galois.GF(p, m)
    fld = Field("gf", p, m).resolved()
    assert fld.poly == int(GF.irreducible_poly)
    powers = primitive_powers(p, m, fld.poly)
    assert int(powers[1]) == int(GF.primitive_element)
    step = max(1, (p**m - 1) // 500)
    expect = GF.primitive_element ** np.arange(0, p**m - 1, step)
    assert np.array_equal(powers[::step], expect.view(np.ndarray))


def test_power_table_of_a_non_primitive_x_uses_the_smallest_primitive_element() -> None:
    # x^4 + x^3 + x^2 + x + 1 is irreducible over GF(2), but x has order 5: x + 1 (3) is the
    # smallest primitive element, and its powers are every non-zero element once
    powers = primitive_powers(2, 4, 0b11111)
    assert primitive_element(2, 4, 0b11111) == 3 == int(powers[1])
    assert sorted(powers.tolist()) == list(range(1, 16))


def test_large_field_designs_do_not_construct_galois_fields() -> None:
    """Constructing a galois field class compiles its arithmetic (seconds per process): the
    GF(q) designs do not import galois at all."""
    code = ("import sys\n"
            "from gctool.codes import design\n"
            "design('rs', n=40, s=30, field='GF(2^12)')\n"
            "design('rs', n=40, s=3, field='GF(41)', nodes='unity')\n"
            "design('cyclic-mds', n=63, s=10, field='GF(2^6)')\n"
            "design('comm', n=20, s=3, m=2, field='GF(3^3)')\n"
            "design('nested', n=15, levels=[1, 3], field='GF(2^4)')\n"
            "print('galois' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, check=True)
    assert out.stdout.strip() == "False"
