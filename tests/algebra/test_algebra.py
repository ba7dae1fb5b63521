"""The algebra layer against independent oracles: galois (fields, ranks, solutions) and
exact Fractions (rational linear algebra)."""

from __future__ import annotations

import itertools
from fractions import Fraction

import galois
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from gctool.algebra.fields import Field
from gctool.algebra.gf import GFArith, IntArith, plain_arith
from gctool.algebra.linalg import eliminate, matrix_rank, null_space, rref, solve, solve_batch
from gctool.algebra.polynomials import irreducible_poly, is_irreducible
from gctool.algebra.primes import prime_factors, primitive_root
from gctool.algebra.rational import integer_rows, row_basis
from gctool.algebra.rational import rref as rref_q
from gctool.algebra.rational import solve as solve_q


@pytest.mark.parametrize("p", [2, 3, 5, 7, 11, 13, 17, 19, 23, 31, 41, 97, 101, 257, 65537])
def test_primitive_root_is_the_smallest_generator(p: int) -> None:
    g = primitive_root(p)
    assert len({pow(g, e, p) for e in range(p - 1)}) == p - 1
    assert all(len({pow(h, e, p) for e in range(p - 1)}) < p - 1 for h in range(2, g))
    assert g == int(galois.primitive_root(p)) or p == 2


def test_prime_factors_match_galois() -> None:
    for x in range(2, 3000):
        assert prime_factors(x) == sorted(set(galois.factors(x)[0]))


def _reducible(p: int, m: int) -> set[int]:
    """Every monic polynomial of degree m over GF(p) that is a product of two of lower degree
    (brute force: all products; integer representation)."""
    def monic(d: int) -> list[list[int]]:
        return [list(t) + [1] for t in itertools.product(range(p), repeat=d)]

    out = set()
    for d in range(1, m // 2 + 1):
        for a in monic(d):
            for b in monic(m - d):
                c = [0] * (m + 1)
                for i, x in enumerate(a):
                    for j, y in enumerate(b):
                        c[i + j] = (c[i + j] + x * y) % p
                out.add(sum(x * p**i for i, x in enumerate(c)))
    return out


@pytest.mark.parametrize(("p", "m"), [(2, 2), (2, 3), (2, 6), (3, 2), (3, 4), (5, 2), (7, 3)])
def test_irreducibility_matches_brute_force(p: int, m: int) -> None:
    reducible = _reducible(p, m)
    for value in range(p**m, 2 * p**m):  # every monic polynomial of degree m
        assert is_irreducible(value, p, m) == (value not in reducible)
    first = irreducible_poly(p, m)
    assert is_irreducible(first, p, m)
    assert all(not is_irreducible(v, p, m) for v in range(p**m, 2 * p**m)
               if _lex_key(v, p, m) < _lex_key(first, p, m) and v % p)


def _lex_key(value: int, p: int, m: int) -> tuple[int, ...]:
    return tuple((value // p**i) % p for i in range(m))


@pytest.mark.parametrize("spec", [(7, 1, None), (2, 4, 19), (5, 2, None)])
def test_gfarith_matches_galois(spec: tuple[int, int, int | None]) -> None:
    fld = Field("gf", *spec).resolved()
    ar, GF = GFArith(fld), fld.galois()
    a = np.arange(fld.order, dtype=np.int64)
    x, y = a[:, None], a[None, :]
    assert np.array_equal(ar.mul(x, y), (GF(x) * GF(y)).view(np.ndarray))
    assert np.array_equal(ar.add(x, y), (GF(x) + GF(y)).view(np.ndarray))
    assert np.array_equal(ar.sub(x, y), (GF(x) - GF(y)).view(np.ndarray))
    assert np.array_equal(ar.inv(a[1:]), (GF(1) / GF(a[1:])).view(np.ndarray))
    assert plain_arith(fld).q == fld.order


@pytest.mark.parametrize("q", [5, 8])
def test_linear_algebra_matches_galois(q: int) -> None:
    fld = _field(q)
    ar, GF = GFArith(fld), fld.galois()
    rng = np.random.default_rng(q)
    for _ in range(30):
        r, c = rng.integers(1, 6, size=2)
        A = rng.integers(0, q, (r, c))
        A[rng.random((r, c)) < 0.4] = 0
        R, piv = rref(ar, A)
        assert np.array_equal(R, GF(A).row_reduce().view(np.ndarray))
        assert len(piv) == np.linalg.matrix_rank(GF(A)) == matrix_rank(fld, A)
        N = null_space(ar, A)
        assert N.shape[0] == c - len(piv) and not np.any(GF(A) @ GF(N).T)
        Y = rng.integers(0, q, (r, 2))
        ok, X = solve(ar, A, Y)
        expect = np.linalg.matrix_rank(GF(np.hstack([A, Y]))) == len(piv)
        assert ok == expect and (not ok or np.array_equal(GF(A) @ GF(X), GF(Y)))


def _field(q: int) -> Field:
    GF = galois.GF(q)
    return Field("gf", int(GF.characteristic), int(GF.degree)).resolved()


def test_batched_eliminations_agree() -> None:
    """Gauss-Jordan (GFArith and galois), fraction-free elimination, and galois' rank."""
    fld = Field("gf", 7)
    GF = fld.galois()
    rng = np.random.default_rng(3)
    M = rng.integers(0, 7, (100, 4, 6))
    M[rng.random(M.shape) < 0.5] = 0
    c1, r1, X1 = solve_batch(GFArith(fld), M, 4)
    c2, r2, X2 = solve_batch(GF, GF(M), 4)
    c3, r3 = eliminate(GFArith(fld), M, 4)
    assert np.array_equal(c1, c2) and np.array_equal(c1, c3)
    assert np.array_equal(r1, r2) and np.array_equal(r1, r3)
    assert np.array_equal(X1, X2.view(np.ndarray))
    for i in range(100):
        assert r1[i] == np.linalg.matrix_rank(GF(M[i, :, :4]))


def test_integer_elimination_decides_over_q() -> None:
    rng = np.random.default_rng(4)
    M = rng.integers(-3, 4, (60, 4, 5)).astype(object)
    M[:, 3, :4] = M[:, 0, :4] + M[:, 1, :4]  # rank <= 3
    consistent, rank = eliminate(IntArith(), M, 4)
    for i in range(60):
        A = [[Fraction(int(x)) for x in row] for row in M[i]]
        R, piv = rref_q(A, 4)
        assert rank[i] == len(piv)
        assert consistent[i] == all(x == 0 for row in R[len(piv):] for x in row[4:])


def test_rational_helpers() -> None:
    rows = [[Fraction(1, 2), Fraction(1, 3)], [Fraction(0), Fraction(2, 5)]]
    assert integer_rows(rows) == [[3, 2], [0, 2]]
    basis = row_basis([[2, 4, 6], [1, 2, 3], [0, 1, 1]])
    assert basis == [[1, 2, 3], [0, 1, 1]]
    G = [[Fraction(2), Fraction(1)], [Fraction(1), Fraction(3)]]
    x = solve_q(G, [Fraction(1), Fraction(2)])
    assert [sum(g * v for g, v in zip(row, x, strict=True)) for row in G] == [1, 2]


def test_design_fields_are_fields() -> None:
    """The tables of codes.difference_sets (fixed first irreducible polynomial) form a field."""
    from gctool.codes.difference_sets import field_tables

    for q in (4, 8, 9, 25, 27):
        add, mul = field_tables(q)
        nonzero = range(1, q)
        assert all(sorted(mul[a, 1:]) == list(nonzero) for a in nonzero)
        assert all(sorted(add[a]) == list(range(q)) for a in range(q))
        for a, b, c in itertools.islice(itertools.product(range(q), repeat=3), 500):
            assert mul[a, add[b, c]] == add[mul[a, b], mul[a, c]]


# -- the SVD of B: one rank for bound, verify and attack ---------------------------------------
def _near_singular(n: int, k: int, rank: int, t: float, seed: int) -> np.ndarray:
    """A real n x k matrix of exact rank ``rank`` plus a perturbation of size about ``t``
    times the rank cut-off along a direction outside its row space (sv near the cut-off)."""
    from gctool.numerics import normalise_rows, rank_cutoff

    rng = np.random.default_rng(seed)
    M = rng.standard_normal((rank, k))
    M[0] = 1.0  # the all-ones target lies in the row space: every n - rank + 1 rows decode
    B = rng.standard_normal((n, rank)) @ M
    Bn, _ = normalise_rows(B)
    cut = float(rank_cutoff(np.linalg.svd(Bn, compute_uv=False)[0], Bn.shape))
    _, _, Vh = np.linalg.svd(B)
    direction = Vh[rank]  # orthogonal to the row space
    B[0] += t * cut * np.linalg.norm(B[0]) * direction
    return B


def test_bound_verify_and_attack_agree_on_the_rank_of_near_singular_codes() -> None:
    import gctool
    from gctool.algebra.spectral import Spectral
    from gctool.audit.nullspace import reduce_float
    from gctool.audit.oracles import OptimalOracle
    from gctool.codes.conditioning import worst_condition
    from gctool.model import GradientCode

    ranks = set()
    for i, t in enumerate(np.geomspace(0.05, 50, 24)):
        n, k, s = 7, 9, 2
        B = _near_singular(n, k, n - s, float(t), i)
        code = GradientCode(B, Field("real"), s)
        sp = Spectral.of(B)
        report = gctool.bound(code)
        assert report.code is not None
        rank = report.code["rank"]
        assert rank == sp.rank == reduce_float(code, 1e-9).rank == OptimalOracle(code).rank
        assert rank == matrix_rank(code.field, B)
        ranks.add(rank)
        kappa, _ = worst_condition(B, 0)
        assert kappa == sp.kappa or (kappa is None and not np.isfinite(sp.kappa))
    assert ranks == {5, 6}  # the perturbation crosses the cut-off inside the sweep


def test_spectral_decoder_and_bases() -> None:
    from gctool.algebra.spectral import Spectral

    rng = np.random.default_rng(5)
    B = rng.standard_normal((6, 4)) @ rng.standard_normal((4, 8))
    B *= 2.0 ** rng.integers(-30, 30, (6, 1))  # row scales do not matter
    sp = Spectral.of(B)
    assert sp.rank == 4 and sp.d == 2
    N, Q = sp.null_basis, sp.range_basis
    assert np.allclose(N @ sp.Bn, 0, atol=1e-12) and np.allclose(N @ Q, 0, atol=1e-12)
    T = np.ones((1, 8))
    W = sp.min_norm(T)
    expect = np.linalg.lstsq(sp.Bn.T, T.T, rcond=None)[0]
    assert np.allclose(W, expect)
    assert np.allclose(sp.errors(W, T), np.sum((sp.Bn.T @ expect - 1) ** 2))


ESTIMATED_FIELDS = ("GF(2^8)", "GF(2^12)", "GF(2^20)", "GF(2)", "GF(7)", "GF(65537)", "GF(3^4)",
                    "GF(2^31)")


@pytest.mark.parametrize("field", ESTIMATED_FIELDS)
def test_the_elimination_estimate_grows_with_rows_columns_and_rank(field: str) -> None:
    """elimination_cost is increasing in rows, in columns and in the rank, across every knot of
    its fault model (the temporaries kept on the heap below 128 x 128 entries, faulted in at
    every pivot from about 180 x 180, by huge pages from 512 x 512 on); a rank above
    min(rows, cols) counts as min(rows, cols), None as that many, 0 as one pivot."""
    from gctool.algebra.fields import parse_field
    from gctool.algebra.linalg import elimination_cost

    fld = parse_field(field)
    sides = [8, 50, 100, 127, 128, 129, 150, 180, 181, 300, 511, 512, 513, 800, 1024, 1025, 3000]
    for other in (64, 700, 4000):
        by_rows = [elimination_cost(side, other, fld, 40) for side in sides]
        by_cols = [elimination_cost(other, side, fld, 40) for side in sides]
        square = [elimination_cost(side, side, fld) for side in sides]
        for seq in (by_rows, by_cols, square):
            assert all(a < b for a, b in zip(seq, seq[1:], strict=False)), (field, other)
    ranks = [elimination_cost(600, 900, fld, r) for r in (1, 2, 10, 100, 599, 600)]
    assert all(a < b for a, b in zip(ranks, ranks[1:], strict=False))
    assert elimination_cost(600, 900, fld, None) == elimination_cost(600, 900, fld, 600) \
        == elimination_cost(600, 900, fld, 10_000)
    assert elimination_cost(600, 900, fld, 0) == elimination_cost(600, 900, fld, 1)


def test_the_elimination_estimate_orders_the_fields_by_their_arithmetic() -> None:
    """At every shape the prime fields (GF(2), GF(7), GF(65537): a product and a difference
    reduced once) cost the same and the least, about a full product table's gather (GF(2^8)),
    which log/exp tables with a logarithm for 0 cost as well (GF(2^12)), log/exp tables out of
    the caches more (GF(2^20)), GF(3^4)'s four digits more again (but less than four GF(2^20)
    eliminations: the columns and the first touch of its memory are paid once), and
    GF(2^31)'s polynomial arithmetic the most."""
    from gctool.algebra.fields import parse_field
    from gctool.algebra.linalg import elimination_cost

    for rows, cols in ((50, 50), (128, 128), (200, 300), (640, 640), (4000, 60), (100, 2000)):
        cost = {f: elimination_cost(rows, cols, parse_field(f)) for f in ESTIMATED_FIELDS}
        assert cost["GF(2)"] == cost["GF(65537)"] == cost["GF(7)"] <= cost["GF(2^8)"] \
            == cost["GF(2^12)"] < cost["GF(2^20)"] < cost["GF(3^4)"] < 4 * cost["GF(2^20)"] \
            < cost["GF(2^31)"], (rows, cols)


def test_the_elimination_estimate_is_cubic_at_every_size() -> None:
    """Per multiply-add an update costs the same at every shape (blocks of rows: the
    temporaries neither leave the caches nor the heap), the columns (a pivot's, or the search
    of a column without one) and the first touch of the matrix's copy aside; the copy is
    charged per byte, once: a matrix of rank 1 costs its columns and its bytes, and more
    entries more."""
    from gctool.algebra.fields import parse_field
    from gctool.algebra.linalg import FRESH_BYTE_NS, GF_COLUMN_NS, GF_SKIP_NS, elimination_cost

    def per_update(rows: int, cols: int, field: str, rank: int = 10) -> float:
        pivots = min(rows, cols, rank)
        fixed = FRESH_BYTE_NS * 8 * rows * cols + pivots * GF_COLUMN_NS \
            + (cols - pivots) * GF_SKIP_NS
        cost = elimination_cost(rows, cols, parse_field(field), rank)
        return (cost - fixed) / (rows * cols * pivots)

    for field in ("GF(2^8)", "GF(65521)", "GF(3^4)"):
        rate = per_update(64, 64, field)
        for rows, cols in ((10, 10), (128, 129), (181, 180), (512, 512), (4000, 4000),
                           (2000, 8000), (5, 3000)):
            assert per_update(rows, cols, field) == pytest.approx(rate), (field, rows, cols)
    fld = parse_field("GF(2^8)")
    one = elimination_cost(4000, 4000, fld, 1)
    assert one > GF_COLUMN_NS + 3999 * GF_SKIP_NS + FRESH_BYTE_NS * 8 * 4000**2
    assert one < elimination_cost(4000, 4001, fld, 1) < elimination_cost(4000, 4000, fld, 2)
    # a column without a pivot costs its search only: a wide matrix of low rank, far less
    assert GF_SKIP_NS < GF_COLUMN_NS / 4
    assert elimination_cost(100, 2000, fld, 100) < 0.7 * (
        2000 * GF_COLUMN_NS + 100 * 2000 * 100 * per_update(64, 64, "GF(2^8)"))


@pytest.mark.parametrize("spec", ["GF(2^8)", "GF(65521)"])
def test_a_large_elimination_updates_blocks_of_rows_as_one(spec: str) -> None:
    """A matrix above UPDATE_BLOCK entries is updated a block of rows at a time (its
    temporaries stay small: glibc gives larger ones back to the system after every pivot, and
    faulting them in again tripled the time): the same reduced echelon form as galois', tall,
    wide, square, of full and deficient rank, each block boundary crossed; in a batch where
    one system alone has a pivot in a column, the others are left as they were."""
    from gctool.algebra.fields import parse_field
    from gctool.algebra.linalg import UPDATE_BLOCK, gauss_jordan

    fld = parse_field(spec)
    GF = fld.galois()
    rng = np.random.default_rng(11)
    for rows, cols, rank in ((90, 70, 70), (3, 1500, 3), (1500, 3, 3), (100, 100, 17)):
        X = GF(rng.integers(0, fld.order, (rows, rank)))
        Y = GF(rng.integers(0, fld.order, (rank, cols)))
        # X @ Y as a sum of products (galois' reference matmul over GF(2^8) took 5x longer)
        A = (X[:, :, None] * Y[None, :, :]).sum(axis=1)
        assert rows * cols > UPDATE_BLOCK
        E, piv = rref(GFArith(fld), np.asarray(A.view(np.ndarray), dtype=np.int64))
        reduced = A.row_reduce().view(np.ndarray)
        assert np.array_equal(E, reduced), (rows, cols)
        # galois' rank: the nonzero rows of its reduced form
        assert len(piv) == np.count_nonzero(reduced.any(axis=1)) == min(rows, cols, rank)
    batch = np.zeros((3, 80, 60), dtype=np.int64)
    batch[1] = rng.integers(0, fld.order, (80, 60))
    batch[2, :, 1:] = rng.integers(0, fld.order, (80, 59))  # no pivot in its column 0
    E, rank_, _ = gauss_jordan(GFArith(fld), batch, 60)
    assert not E[0].any() and rank_.tolist() == [0, 60, 59]
    for i in (1, 2):
        assert np.array_equal(E[i], GF(batch[i]).row_reduce().view(np.ndarray))


#: the fields of the elimination's exact tests: prime fields up to the largest prime gctool
#: admits (2^31 - 1: products of two elements reach 2^62), odd and even extension fields with
#: a product table and with log/exp tables
ROW_UPDATE_FIELDS = ("GF(2)", "GF(3)", "GF(7)", "GF(65521)", "GF(2147483647)", "GF(3^4)",
                     "GF(5^3)", "GF(7^2)", "GF(3^9)", "GF(2^8)", "GF(2^12)")


@pytest.mark.parametrize("spec", ROW_UPDATE_FIELDS)
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_gauss_jordan_matches_galois_row_reduce(spec: str, data: st.DataObject) -> None:
    """gauss_jordan's row update (one reduction per multiply-add over GF(p), one per digit over
    GF(p^m)) gives galois' reduced row echelon form and rank exactly: one matrix updated whole
    and a block of rows at a time, and a batch; entries drawn to include 0, 1 and q - 1, the
    matrices wide or of low rank (a square matrix of full rank reduces to the identity
    whatever its arithmetic)."""
    from unittest import mock

    from gctool.algebra import linalg
    from gctool.algebra.fields import parse_field

    fld = parse_field(spec)
    GF, q = fld.galois(), fld.order
    rows = data.draw(st.integers(1, 8))
    cols = rows + data.draw(st.integers(0, 6))
    entry = st.one_of(st.sampled_from([0, 0, 1, q - 1, q - 2]), st.integers(0, q - 1))
    batch = data.draw(hnp.arrays(np.int64, (data.draw(st.integers(1, 3)), rows, cols),
                                 elements=entry))
    rank_ = data.draw(st.integers(1, rows))
    if rank_ < rows:  # of low rank: a product over the field
        left = data.draw(hnp.arrays(np.int64, (rows, rank_), elements=entry))
        batch[0] = (GF(left) @ GF(batch[0, :rank_, :])).view(np.ndarray)
    if data.draw(st.booleans()):
        batch = batch.transpose(0, 2, 1).copy()  # tall
    block = data.draw(st.sampled_from([linalg.UPDATE_BLOCK, 1, batch.shape[2], 3 * rows]))
    with mock.patch.object(linalg, "UPDATE_BLOCK", block):
        E, piv = rref(GFArith(fld), batch[0])
        together, ranks, _ = linalg.gauss_jordan(GFArith(fld), batch, batch.shape[2])
    assert np.array_equal(E, GF(batch[0]).row_reduce().view(np.ndarray))
    assert len(piv) == np.linalg.matrix_rank(GF(batch[0]))
    for i in range(batch.shape[0]):
        assert np.array_equal(together[i], GF(batch[i]).row_reduce().view(np.ndarray)), i
        assert ranks[i] == np.linalg.matrix_rank(GF(batch[i])), i


@given(st.sampled_from(ROW_UPDATE_FIELDS), st.data())
def test_sub_mul_is_the_field_difference_of_a_product(spec: str, data: st.DataObject) -> None:
    """GFArith.sub_mul(a, f, b) = a - f b, elementwise and broadcast, as galois computes it,
    at the extremes of the largest prime field (f b near 2^62) too."""
    from gctool.algebra.fields import parse_field

    fld = parse_field(spec)
    GF, q = fld.galois(), fld.order
    entry = st.one_of(st.sampled_from([0, 1, q - 1]), st.integers(0, q - 1))
    n = data.draw(st.integers(1, 6))
    a = data.draw(hnp.arrays(np.int64, (n, 5), elements=entry))
    f = data.draw(hnp.arrays(np.int64, (n, 1), elements=entry))
    b = data.draw(hnp.arrays(np.int64, (1, 5), elements=entry))
    ar = GFArith(fld)
    got = ar.sub_mul(a, f, b)
    assert got.dtype == np.int64
    assert np.array_equal(got, (GF(a) - GF(f) * GF(b)).view(np.ndarray))
    assert np.array_equal(ar.sub_mul(a[None], f, b[0]), got[None])  # a batch, one vector
    assert int(ar.sub_mul(a[0, 0], f[0, 0], b[0, 0])) == got[0, 0]  # elements


#: the extremes of the tables: the full product table's last field and the first above it, the
#: last field whose exp table stays in the caches and the first out of them, the largest with
#: tables (GF(2^22), GF(5^9)) and the first above (GF(2^23), GF(5^10)), an odd extension of a
#: large p, and a prime field of 31 bits (no tables)
EXTREME_FIELDS = ("GF(2^8)", "GF(2^9)", "GF(2^16)", "GF(2^17)", "GF(2^22)", "GF(2^23)",
                  "GF(3^9)", "GF(257^2)", "GF(5^9)", "GF(5^10)", "GF(2147483647)")


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(EXTREME_FIELDS), st.data())
def test_products_with_a_logarithm_for_zero_match_galois(spec: str, data: st.DataObject
                                                         ) -> None:
    """Up to TABLE_LIMIT a product is one gather of an exp table padded with zeros at the sum
    of a log table that gives 0 a logarithm past every sum of two nonzero ones (a full
    product table up to FULL_TABLE_LIMIT), above it polynomial arithmetic: galois' product,
    difference of a product and inverse on every pair of a sample that holds 0, 1, the
    primitive element and q - 1, broadcast as the eliminations call it."""
    from gctool.algebra import gf
    from gctool.algebra.fields import parse_field

    fld = parse_field(spec).resolved()
    GF, q = fld.galois(), fld.order
    ar = GFArith(fld)
    assert ar.kind == ("prime" if fld.m == 1 else "table" if q <= gf.TABLE_LIMIT else "calc")
    assert (ar._table is not None) == (fld.m > 1 and q <= gf.FULL_TABLE_LIMIT)
    special = [0, 1, ar.primitive(), q - 1]
    entry = st.one_of(st.sampled_from(special), st.integers(0, q - 1))
    a = np.asarray(special + data.draw(st.lists(entry, min_size=1, max_size=12)),
                   dtype=np.int64)
    b = np.asarray(special + data.draw(st.lists(entry, min_size=1, max_size=12)),
                   dtype=np.int64)
    got = ar.mul(a[:, None], b[None, :])
    assert got.dtype == np.int64
    assert np.array_equal(got, (GF(a[:, None]) * GF(b[None, :])).view(np.ndarray))
    assert int(ar.mul(a[-1], b[-1])) == int(GF(int(a[-1])) * GF(int(b[-1])))
    assert np.array_equal(ar.sub_mul(a[:, None], a[:, None], b[None, :]),
                          (GF(a[:, None]) - GF(a[:, None]) * GF(b[None, :])).view(np.ndarray))
    inv = ar.inv(a)
    assert inv.dtype == np.int64 and not inv[a == 0].any()
    assert np.array_equal(inv[a != 0], (GF(1) / GF(a[a != 0])).view(np.ndarray))


@pytest.mark.parametrize("spec", EXTREME_FIELDS)
@settings(max_examples=8, deadline=None)
@given(data=st.data())
def test_rank_and_solve_at_the_extremes_of_the_tables_match_galois(spec: str,
                                                                   data: st.DataObject) -> None:
    """At the extremes of the tables (:data:`EXTREME_FIELDS`) gctool's reduced row echelon
    form and rank are galois' and its solutions solve: random systems, of low rank when
    drawn so, consistent or not, entries 0, 1 and q - 1 drawn often; eliminate's rank and
    consistency agree."""
    from gctool.algebra.fields import parse_field

    fld = parse_field(spec).resolved()
    GF, q = fld.galois(), fld.order
    rows, cols = data.draw(st.integers(1, 7)), data.draw(st.integers(1, 7))
    entry = st.one_of(st.sampled_from([0, 0, 1, q - 1]), st.integers(0, q - 1))
    A = data.draw(hnp.arrays(np.int64, (rows, cols), elements=entry))
    rank_ = data.draw(st.integers(1, min(rows, cols)))
    if rank_ < min(rows, cols):  # of low rank: a product over the field
        left = data.draw(hnp.arrays(np.int64, (rows, rank_), elements=entry))
        right = data.draw(hnp.arrays(np.int64, (rank_, cols), elements=entry))
        A = (GF(left) @ GF(right)).view(np.ndarray).astype(np.int64)
    Y = data.draw(hnp.arrays(np.int64, (rows, 2), elements=entry))
    if data.draw(st.booleans()):  # consistent
        X0 = data.draw(hnp.arrays(np.int64, (cols, 2), elements=entry))
        Y = (GF(A) @ GF(X0)).view(np.ndarray).astype(np.int64)
    ar = GFArith(fld)
    E, piv = rref(ar, A)
    assert np.array_equal(E, GF(A).row_reduce().view(np.ndarray))
    r = int(np.linalg.matrix_rank(GF(A)))
    assert len(piv) == r
    ok, X = solve(ar, A, Y)
    assert ok == (int(np.linalg.matrix_rank(GF(np.concatenate([A, Y], axis=1)))) == r)
    if ok:
        assert np.array_equal((GF(A) @ GF(X)).view(np.ndarray), Y)
    consistent, ranks = eliminate(ar, np.concatenate([A, Y], axis=1)[None], cols)
    assert int(ranks[0]) == r and bool(consistent[0]) == ok


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(ROW_UPDATE_FIELDS), st.data())
def test_mul_sub_mul_is_the_fraction_free_update(spec: str, data: st.DataObject) -> None:
    """GFArith.mul_sub_mul(c, a, f, b) = c a - f b, elementwise and broadcast as the
    fraction-free elimination calls it, as galois computes it, at the extremes of the largest
    prime field too (both products near 2^62, their difference near -2^62 and 2^62)."""
    from gctool.algebra.fields import parse_field

    fld = parse_field(spec)
    GF, q = fld.galois(), fld.order
    entry = st.one_of(st.sampled_from([0, 1, q - 1]), st.integers(0, q - 1))
    n = data.draw(st.integers(1, 6))
    c = data.draw(hnp.arrays(np.int64, (n, 1), elements=entry))
    a = data.draw(hnp.arrays(np.int64, (n, 5), elements=entry))
    f = data.draw(hnp.arrays(np.int64, (n, 1), elements=entry))
    b = data.draw(hnp.arrays(np.int64, (n, 5), elements=entry))
    ar = GFArith(fld)
    got = ar.mul_sub_mul(c, a, f, b)
    assert got.dtype == np.int64
    assert np.array_equal(got, (GF(c) * GF(a) - GF(f) * GF(b)).view(np.ndarray))
    assert np.array_equal(ar.mul_sub_mul(c, a, f, b[:1]), (GF(c) * GF(a) - GF(f) * GF(
        b[:1])).view(np.ndarray))  # one row for every row
    assert int(ar.mul_sub_mul(c[0, 0], a[0, 0], f[0, 0], b[0, 0])) == got[0, 0]  # elements
    top = np.full((1, 2), q - 1, dtype=np.int64)
    zero = np.zeros((1, 2), dtype=np.int64)
    assert np.array_equal(ar.mul_sub_mul(top, top, zero, top), (GF(top) * GF(top)).view(
        np.ndarray))
    assert np.array_equal(ar.mul_sub_mul(zero, top, top, top), (-(GF(top) * GF(top))).view(
        np.ndarray))
    if fld.m == 1:  # over the integers, exactly, then reduced
        exact = IntArith().mul_sub_mul(c.astype(object), a.astype(object), f.astype(object),
                                       b.astype(object))
        assert np.array_equal(np.asarray(exact % q, dtype=np.int64), got)


@pytest.mark.parametrize("spec", ROW_UPDATE_FIELDS)
@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_fraction_free_elimination_matches_galois(spec: str, data: st.DataObject) -> None:
    """eliminate (row_r <- p row_r - f pivot_row, one reduction per entry over GF(p)) gives
    galois' rank of each system's A and its consistency (rank of [A | Y] equal to A's), on
    batches of random, low-rank and inconsistent systems with entries 0, 1, q - 1 drawn
    often."""
    from gctool.algebra.fields import parse_field

    fld = parse_field(spec)
    GF, q = fld.galois(), fld.order
    entry = st.one_of(st.sampled_from([0, 0, 1, q - 1]), st.integers(0, q - 1))
    b, R, unknowns = data.draw(st.integers(1, 12)), data.draw(st.integers(1, 6)), \
        data.draw(st.integers(1, 6))
    M = data.draw(hnp.arrays(np.int64, (b, R, unknowns + 2), elements=entry))
    if data.draw(st.booleans()) and R > 1:  # a row repeated: rank below R
        M[:, -1] = M[:, 0]
    consistent, rank = eliminate(GFArith(fld), M, unknowns)
    for i in range(b):
        A = GF(M[i, :, :unknowns])
        r = np.linalg.matrix_rank(A)
        assert rank[i] == r, i
        assert consistent[i] == (np.linalg.matrix_rank(GF(M[i])) == r), i


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(("GF(2)", "GF(3)", "GF(7)", "GF(65521)", "GF(65537)", "GF(2147483629)",
                        "GF(2147483647)")), st.data())
def test_prime_inverses_match_galois_one_at_a_time_and_on_arrays(spec: str,
                                                                  data: st.DataObject) -> None:
    """GFArith.inv over GF(p) is galois' inverse (0 maps to 0) on a pivot or a few elements
    (Python's pow, one at a time: up to SCALAR_INV_MAX) and on larger arrays (square and
    multiply), p up to 2^31 - 1; so is the inverse of the norm in an odd extension field."""
    from gctool.algebra import gf
    from gctool.algebra.fields import parse_field

    fld = parse_field(spec).resolved()
    GF, q = fld.galois(), fld.order
    ar = GFArith(fld)
    entry = st.one_of(st.sampled_from([0, 1, 2 % q, q - 1]), st.integers(0, q - 1))
    for size in (1, data.draw(st.integers(2, gf.SCALAR_INV_MAX)),
                 data.draw(st.integers(gf.SCALAR_INV_MAX + 1, 60))):
        a = data.draw(hnp.arrays(np.int64, size, elements=entry))
        got = ar.inv(a)
        assert got.dtype == np.int64 and got.shape == a.shape
        nz = a != 0
        assert not got[~nz].any()
        assert np.array_equal(got[nz], (GF(1) / GF(a[nz])).view(np.ndarray))
    block = data.draw(hnp.arrays(np.int64, (2, 3), elements=st.integers(1, q - 1)))
    assert np.array_equal(ar.inv(block), (GF(1) / GF(block)).view(np.ndarray))  # 2-d


@pytest.mark.parametrize("spec", ["GF(3^15)", "GF(46337^2)"])
def test_inverses_above_the_tables_match_galois(spec: str) -> None:
    """Above the tables an inverse takes the norm's inverse in GF(p) (a few elements or an
    array): galois' inverse on a pivot and on an array."""
    from gctool.algebra.fields import parse_field

    fld = parse_field(spec).resolved()
    GF, q = fld.galois(), fld.order
    ar = GFArith(fld)
    a = np.random.default_rng(q % 1000).integers(1, q, 40)
    assert np.array_equal(ar.inv(a[:1]), (GF(1) / GF(a[:1])).view(np.ndarray))
    assert np.array_equal(ar.inv(a), (GF(1) / GF(a)).view(np.ndarray))


def _null_space_by_entry(ar: GFArith, A: np.ndarray) -> np.ndarray:
    """The former null_space: one ``neg`` call per entry (the reference for its vectorised
    replacement)."""
    R, piv = rref(ar, A)
    n = A.shape[1]
    free = [c for c in range(n) if c not in set(piv)]
    N = np.zeros((len(free), n), dtype=np.int64)
    for i, f in enumerate(free):
        N[i, f] = 1
        for r, c in enumerate(piv):
            N[i, c] = ar.neg(R[r, f])
    return N


@pytest.mark.parametrize("q", [2, 3, 7, 16, 81, 256])
def test_null_space_is_the_entrywise_one_and_annihilates(q: int) -> None:
    """Seeded random matrices (sparse, of low rank, zero, with repeated rows, wider and
    taller): the same rows as the entry-by-entry construction, d = columns - rank of them,
    the identity on the free columns, and A N^T = 0 over GF(q) (galois)."""
    fld = _field(q)
    ar, GF = GFArith(fld), fld.galois()
    rng = np.random.default_rng(100 + q)
    for trial in range(60):
        r, c = (int(x) for x in rng.integers(1, 14, size=2))
        A = rng.integers(0, q, (r, c))
        if trial % 4 == 1:  # low rank: a product of random factors
            t = int(rng.integers(1, min(r, c) + 1))
            A = (GF(rng.integers(0, q, (r, t))) @ GF(rng.integers(0, q, (t, c)))).view(
                np.ndarray).astype(np.int64)
        elif trial % 4 == 2:
            A[rng.random((r, c)) < 0.6] = 0
            A[rng.integers(0, r)] = A[0]
        elif trial == 3:
            A[:] = 0
        N = null_space(ar, A)
        assert N.dtype == np.int64
        assert np.array_equal(N, _null_space_by_entry(ar, A)), (q, A)
        rk = int(np.linalg.matrix_rank(GF(A)))
        assert N.shape == (c - rk, c)
        assert not np.any(GF(A) @ GF(N).T), (q, A)
        free = np.flatnonzero(~np.isin(np.arange(c), rref(ar, A)[1]))
        assert np.array_equal(N[:, free], np.eye(free.size, dtype=np.int64))
