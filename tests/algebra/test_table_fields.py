"""GF(p^m) up to 2^22 elements has exp/log tables built here, larger ones polynomial
arithmetic on bits or digits, never galois' arithmetic.

galois' arithmetic of GF(3^11) cost 25-28 s of CPU per process (its lookup tables built
element by element, then compiled): a 3 x 2 code over GF(3^11) took 28 s to verify under the
default budget of 5 s.  The tables are checked against polynomial arithmetic modulo the field's
polynomial in plain Python (elements: base-p digits = coefficients, lowest first).
"""

from __future__ import annotations

import numpy as np
import pytest

from gctool.algebra.fields import parse_field
from gctool.algebra.gf import GFArith
from gctool.algebra.primes import prime_factors
from gctool.audit.verify import verify
from gctool.model import GradientCode


def _digits(x: int, p: int, m: int) -> list[int]:
    return [(x // p**i) % p for i in range(m)]


def _mul(a: int, b: int, p: int, m: int, poly: int) -> int:
    """a * b modulo the monic polynomial ``poly`` (its integer representation, degree m)."""
    f = _digits(poly, p, m + 1)
    prod = [0] * (2 * m - 1)
    for i, x in enumerate(_digits(a, p, m)):
        for j, y in enumerate(_digits(b, p, m)):
            prod[i + j] = (prod[i + j] + x * y) % p
    for d in range(2 * m - 2, m - 1, -1):  # x^d = x^(d-m) * (x^m - f(x))
        c, prod[d] = prod[d], 0
        for i in range(m):
            prod[d - m + i] = (prod[d - m + i] - c * f[i]) % p
    return sum(c * p**i for i, c in enumerate(prod[:m]))


@pytest.mark.parametrize("spec,kind", [
    ("GF(3^11)", "table"), ("GF(2^18)", "table"), ("GF(5^7)", "table"),
    ("GF(3^12)", "table"), ("GF(7^7)", "table"), ("GF(2^20)", "table"), ("GF(2^22)", "table"),
    ("GF(2^23)", "calc"), ("GF(2^31)", "calc"), ("GF(3^15)", "calc"), ("GF(5^13)", "calc"),
    ("GF(46337^2)", "calc"), ("GF(2^20, x^20 + x^3 + x^2 + x + 1)", "table"),
    ("GF(2^24, x^24 + x^6 + x^5 + x^3 + x^2 + x + 1)", "calc"),
    ("GF(3^16, x^16 + x^3 + x^2 + 1)", "calc")])
def test_table_arithmetic_against_polynomials(spec: str, kind: str) -> None:
    f = parse_field(spec).resolved()
    arith = GFArith(f)
    assert arith.kind == kind
    rng = np.random.default_rng(f.order)
    a, b = rng.integers(0, f.order, 300), rng.integers(0, f.order, 300)
    got = arith.mul(a, b)
    assert [int(x) for x in got] == [_mul(int(x), int(y), f.p, f.m, f.poly or 0)
                                     for x, y in zip(a, b, strict=True)]
    nonzero = a[a != 0]
    assert (arith.mul(nonzero, arith.inv(nonzero)) == 1).all()
    assert [int(x) for x in arith.add(a, b)] == [
        sum(((u + v) % f.p) * f.p**i for i, (u, v) in enumerate(
            zip(_digits(int(x), f.p, f.m), _digits(int(y), f.p, f.m), strict=True)))
        for x, y in zip(a, b, strict=True)]


def _sub(a: int, b: int, p: int, m: int) -> int:
    return sum(((u - v) % p) * p**i for i, (u, v) in enumerate(
        zip(_digits(a, p, m), _digits(b, p, m), strict=True)))


def test_a_small_code_over_gf_3_11_needs_no_galois(monkeypatch: pytest.MonkeyPatch) -> None:
    """The 3 x 2 code over GF(3^11) (target: the row [1, 1]) at s = 1 and 2, without galois'
    field: two survivors decode when their 2 x 2 determinant is non-zero (rank 2), one when
    its row is a non-zero multiple of [1, 1] (equal entries)."""
    import galois

    def no_galois(*args: object, **kwargs: object) -> None:
        raise AssertionError("galois' field was built")

    f = parse_field("GF(3^11)").resolved()
    p, m, poly = f.p, f.m, f.poly or 0
    B = np.random.default_rng(0).integers(0, f.order, (3, 2))
    rows = [[int(x) for x in row] for row in B]
    dets = [_sub(_mul(rows[i][0], rows[j][1], p, m, poly),
                 _mul(rows[i][1], rows[j][0], p, m, poly), p, m) for i, j in
            ((0, 1), (0, 2), (1, 2))]
    assert all(dets)  # so every pair spans GF(q)^2: s = 1 is ok
    assert all(r[0] != r[1] for r in rows)  # no single row is a multiple of [1, 1]
    monkeypatch.setattr(galois, "GF", no_galois)
    code = GradientCode(B, f, 0)
    assert verify(code, 1).ok
    r2 = verify(code, 2)
    assert not r2.ok and r2.counterexample is not None and len(r2.counterexample) == 2


@pytest.mark.parametrize("spec", ["GF(3^12)", "GF(2^23)", "GF(7^8)", "GF(2^14, x^14 + x^5 + 1)",
                                  "GF(3^8, x^8 + x^2 + 2)",
                                  "GF(2^24, x^24 + x^6 + x^5 + x^3 + x^2 + x + 1)"])
def test_arithmetic_and_primitive_element_against_galois(spec: str) -> None:
    """Products, inverses, sums and the primitive element (the generator of every table and
    root of unity) are galois' own on random elements, for tables and for the polynomial
    arithmetic above them, and for polynomials whose x is not primitive (the smallest
    primitive element, galois' choice, is found here by an order test, without a table)."""
    f = parse_field(spec).resolved()
    arith, GF = GFArith(f), f.galois()
    rng = np.random.default_rng(f.order % 1000)
    a, b = rng.integers(0, f.order, (2, 400))
    a[:5] = 0
    assert np.array_equal(arith.mul(a, b), (GF(a) * GF(b)).view(np.ndarray))
    assert np.array_equal(arith.add(a, b), (GF(a) + GF(b)).view(np.ndarray))
    assert np.array_equal(arith.sub(a, b), (GF(a) - GF(b)).view(np.ndarray))
    nz = b[b != 0]
    assert np.array_equal(arith.inv(nz), (GF(1) / GF(nz)).view(np.ndarray))
    g = arith.primitive()
    order = [(f.order - 1) // r for r in prime_factors(f.order - 1)]
    assert all(GF(g) ** e != 1 for e in order)  # primitive, checked in galois' arithmetic
    assert all(any(GF(h) ** e == 1 for e in order) for h in range(f.p, g))  # the smallest
    assert (g == f.p) == ("x^" not in spec)  # x is primitive for the Conway polynomials


def test_bch_certificate_above_the_tables_needs_no_galois(monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    """cyclic-MDS over GF(2^24) itself (63 | 2^24 - 1): the certificate computes with gctool's
    polynomial arithmetic, never a galois field, and its estimate counts that arithmetic
    (more than the same shape over GF(2^6)'s tables) without galois' seconds of set-up."""
    from gctool.algebra.fields import Field
    from gctool.audit import certificates as cert
    from gctool.audit.symmetry import find_rotation
    from gctool.codes import design

    def no_galois(self: Field) -> None:
        raise AssertionError("galois' field was built")

    big, small = (design("cyclic-mds", n=63, s=10, field=f) for f in ("GF(2^24)", "GF(2^6)"))
    costs = [cert.bch_cost(c, 10, find_rotation(c)[0]) for c in (big, small)]
    assert costs[1] < costs[0] < cert.EXTENSION_CLASS_NS
    monkeypatch.setattr(Field, "galois", no_galois)
    report = verify(big, 10, method="structural")
    assert report.ok and report.method.startswith("certificate")


def test_compiled_test_over_the_larger_tables_agrees_with_numpy() -> None:
    """GF(2^20) and GF(2^22) now have tables, so the compiled consistency test runs on them
    (2^20-entry exp/log arrays): it decides random straggler sets of a code with failing and
    passing sets exactly as the numpy elimination does; above the tables there is none."""
    from gctool.algebra.linalg import left_null_reduction, reduced_decodes
    from gctool.audit.kernels.gf import compiles, for_arith

    rng = np.random.default_rng(5)
    for spec in ("GF(2^20)", "GF(2^22)"):
        f = parse_field(spec).resolved()
        ar = GFArith(f)
        B = np.where(rng.random((14, 6)) < 0.5, rng.integers(1, f.order, (14, 6)), 0)
        N, W, _ = left_null_reduction(ar, B, np.ones((1, 6), dtype=np.int64))
        test = for_arith(N.T, W, ar)
        assert test is not None and compiles(f)
        S = np.array([np.sort(rng.choice(14, 8, replace=False)) for _ in range(300)])
        expect = reduced_decodes(ar, N, W, S)
        assert 0 < expect.sum() < len(S)
        assert np.array_equal(test.sets(S), expect)
    big = parse_field("GF(2^23)").resolved()
    assert not compiles(big) and for_arith(np.zeros((3, 1)), np.zeros((3, 1)), GFArith(big)) \
        is None
