"""The rate of a GF(q) multiply-add follows the path that runs it (gctool.algebra.gf.muladd_ns):
int64 tables, digits or polynomial products for gctool's own eliminations, galois' lookup or
computed arithmetic for galois arrays; every estimate that counts GF(q) multiply-adds asks it
(the flat 10 ns of budget.GF_OP_COST is gone).  Structural: no timing."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gctool.algebra import gf
from gctool.algebra.fields import parse_field
from gctool.algebra.gf import (
    ArithPath,
    GFArith,
    calc_call_ns,
    calc_entry_ns,
    calc_inverse_ns,
    muladd_ns,
)

TABLE = ("GF(2)", "GF(7)", "GF(65521)", "GF(2^8)", "GF(2^16)", "GF(2^22)", "GF(3^4)",
         "GF(3^12)")
CALC = ("GF(2^23)", "GF(2^31)", "GF(46337^2)", "GF(7^11)", "GF(3^15)")


@pytest.mark.parametrize("name", TABLE + CALC)
def test_int64_paths_price_the_arithmetic_that_gfarith_runs(name: str) -> None:
    """Above the tables (GFArith multiplies polynomials) both int64 paths charge the
    polynomial products; with tables or a prime field, their table or modular rates, which
    depend on the field's kind only as GFArith's arithmetic does (GF(2^31) was charged
    GF(2^8)'s 11 ns by the decoder's estimate)."""
    fld = parse_field(name).resolved()
    kind = GFArith(fld).kind
    for path in (ArithPath.GAUSS_JORDAN, ArithPath.DECODER):
        rate = muladd_ns(fld, path)
        if kind == "calc":
            entry = calc_entry_ns(fld) or 0.0
            assert rate == pytest.approx(
                gf.DECODER_CALC_NS + gf.DECODER_CALC_SHARE * entry if path == ArithPath.DECODER
                else gf.CALC_PRODUCT_SHARE * entry)
            assert rate > 4 * muladd_ns(parse_field("GF(2^8)"), path)
        else:
            assert calc_entry_ns(fld) is None
            assert rate < 20 * fld.m
    assert (kind == "calc") == (calc_inverse_ns(fld) > 0)


def test_decoder_rates_by_kind() -> None:
    """The decoder's rate: one for GF(2^m) with tables whatever m, one for GF(p), one per
    digit for GF(p^m), p odd."""
    rates = {name: muladd_ns(parse_field(name), ArithPath.DECODER) for name in TABLE}
    assert rates["GF(2^8)"] == rates["GF(2^16)"] == rates["GF(2^22)"] == gf.DECODER_GF2_NS
    assert rates["GF(7)"] == rates["GF(65521)"] == gf.DECODER_PRIME_NS
    assert rates["GF(3^12)"] == 3 * rates["GF(3^4)"] == 12 * gf.DECODER_DIGIT_NS


def test_galois_rate_follows_galois_ufunc_mode() -> None:
    """galois arrays: its lookup tables up to GALOIS_LOOKUP_LIMIT elements (one rate), its
    computed arithmetic above (a rate per bit or digit, GF(p) its own); the limit is galois'
    own default ufunc mode (checked on fields cheap to build on either side of it)."""
    for name in ("GF(2^8)", "GF(2^21)", "GF(2^31)"):
        fld = parse_field(name)
        lookup = fld.galois().default_ufunc_mode == "jit-lookup"  # (tests run galois in python)
        assert lookup == (fld.order <= gf.GALOIS_LOOKUP_LIMIT)
        assert (muladd_ns(fld, ArithPath.GALOIS) == gf.GALOIS_LOOKUP_NS) == lookup
    assert muladd_ns(parse_field("GF(2^31)"), ArithPath.GALOIS) > muladd_ns(parse_field("GF(2^21)"),
                                                                     ArithPath.GALOIS)
    assert muladd_ns(parse_field("GF(7^11)"), ArithPath.GALOIS) == 11 * gf.GALOIS_DIGIT_NS
    assert muladd_ns(parse_field("GF(2147483647)"), ArithPath.GALOIS) == gf.GALOIS_PRIME_NS
    with pytest.raises(ValueError, match="no GF"):
        muladd_ns(parse_field("real"), ArithPath.GALOIS)
    with pytest.raises(ValueError, match="no GF"):
        muladd_ns(parse_field("GF(7)"), "flat")


@pytest.mark.parametrize(("name", "side"), [("GF(2^31)", 64), ("GF(2^31)", 200),
                                            ("GF(7^11)", 64), ("GF(46337^2)", 100)])
def test_elimination_above_the_tables_pays_each_pivots_inverse(name: str, side: int) -> None:
    """A Gauss-Jordan elimination above the tables pays at each pivot an inverse (a chain of
    products: many calls, ten or so times a product's) and one call per block of rows it
    updates, besides its multiply-adds (two calls a pivot read GF(2^31) 64 x 64 2.36x low)."""
    from gctool.algebra.linalg import (
        FRESH_BYTE_NS,
        GF_COLUMN_NS,
        UPDATE_BLOCK,
        elimination_cost,
    )

    fld = parse_field(name).resolved()
    assert calc_inverse_ns(fld) > 3 * calc_call_ns(fld) > 0
    blocks = 1 if side * side <= UPDATE_BLOCK else math.ceil(side / (UPDATE_BLOCK // side))
    per_pivot = GF_COLUMN_NS + calc_inverse_ns(fld) + (1 + blocks) * calc_call_ns(fld)
    want = (side * per_pivot + side**3 * muladd_ns(fld, ArithPath.GAUSS_JORDAN)
            + FRESH_BYTE_NS * 8 * side * side)
    assert elimination_cost(side, side, fld) == pytest.approx(want)
    if name == "GF(2^31)" and side == 64:  # where the calls are most of the time
        assert side * (per_pivot - GF_COLUMN_NS) > side**3 * muladd_ns(fld, ArithPath.GAUSS_JORDAN)


def test_elimination_rates_with_tables_are_the_gauss_jordan_path() -> None:
    """With tables the elimination's multiply-add is muladd_ns' gauss-jordan rate (no calls
    per pivot besides its columns)."""
    from gctool.algebra.linalg import FRESH_BYTE_NS, GF_COLUMN_NS, elimination_cost

    for name in TABLE:
        fld = parse_field(name)
        want = 100 * GF_COLUMN_NS + 100**3 * muladd_ns(fld, ArithPath.GAUSS_JORDAN) \
            + FRESH_BYTE_NS * 8 * 100 * 100
        assert elimination_cost(100, 100, fld) == pytest.approx(want)


def test_no_flat_gf_rate_is_left() -> None:
    """budget has no flat GF(q) rate, and solve_cost prices the factorisations over R/C."""
    import inspect

    from gctool import budget

    assert not hasattr(budget, "GF_OP_COST")
    assert list(inspect.signature(budget.solve_cost).parameters) == ["rows", "cols"]


def test_the_decoders_systems_above_the_tables_cost_polynomial_products() -> None:
    """The decoder's f x K systems over GF(2^31) cost its polynomial products: many times
    GF(2^8)'s (both were charged 11 ns a multiply-add)."""
    from gctool.decode.cost import ELIMINATION_SET_NS, system_time

    big, small = parse_field("GF(2^31)"), parse_field("GF(2^8)")
    f, K = 26, 24
    assert system_time(big, f, K) == pytest.approx(
        ELIMINATION_SET_NS + muladd_ns(big, ArithPath.DECODER) * f * K * min(f, K))
    assert system_time(big, f, K) > 8 * system_time(small, f, K)


@pytest.mark.parametrize(("q", "path", "field"), [(13, ArithPath.GAUSS_JORDAN, "GF(13)"),
                                                  (1009, ArithPath.GAUSS_JORDAN, "GF(1009)"),
                                                  (125, ArithPath.GALOIS, "GF(5^3)"),
                                                  (729, ArithPath.GALOIS, "GF(3^6)")])
def test_paley_table_costs_the_arithmetic_that_builds_it(q: int, path: ArithPath, field: str
                                                         ) -> None:
    """The Paley frame's character table over GF(q) is built with int64 numpy for a prime q
    (two of GF(p)'s multiply-adds an entry) and with galois arrays for a prime power (one of
    galois'): build_cost charges that besides the eigendecomposition and the analysis (a flat
    160 ns an entry was 8-20 times what either takes)."""
    from gctool.budget import solve_cost
    from gctool.codes.encoded import Analysis, build_cost, paley_entry_ns, paley_frame

    n = q + 1
    per = muladd_ns(parse_field(field), path) * (2 if path == ArithPath.GAUSS_JORDAN else 1)
    assert paley_entry_ns(q) == per
    work, _ = build_cost("paley", n, n // 2)
    assert work == solve_cost(n, n) + int(per * n * n) + Analysis.work(n, n // 2)
    if q < 200:  # the construction runs on that path: the frame is an ETF
        S = paley_frame(q)
        assert np.allclose(S.T @ S, 2 * np.eye(n // 2))


class _Planes(np.ndarray):
    """Digit planes that count the elements of the plane products made from them."""

    products = 0

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: object,
                        **kwargs: object) -> object:
        plain = [x.view(np.ndarray) if isinstance(x, _Planes) else x for x in inputs]
        if "out" in kwargs:
            kwargs["out"] = tuple(o.view(np.ndarray) if isinstance(o, _Planes) else o
                                  for o in kwargs["out"])  # type: ignore[union-attr]
        result = getattr(ufunc, method)(*plain, **kwargs)
        if ufunc is np.multiply and sum(isinstance(x, _Planes) for x in inputs) == 2:
            _Planes.products += int(np.size(result))
        return result


def test_digit_charge_grows_as_the_counted_plane_products(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Above the tables GF(p^m), p odd, multiplies digit planes by schoolbook: a fraction-free
    entry (two products) makes 2 m^2 plane products, Gauss-Jordan's update (one) m^2, counted
    here; calc_entry_ns charges CALC_DIGIT_PAIR_NS per pair of digits of each entry's products
    besides CALC_DIGIT_NS per digit, so its growth beyond the linear term follows the count
    (150 ns per digit at every m read the decoder 2-4x over at m = 2, 0.8 at m = 19)."""
    planes = gf.digit_planes
    monkeypatch.setattr(gf, "digit_planes", lambda a, p, m: planes(a, p, m).view(_Planes))
    rng = np.random.default_rng(3)
    for spec in ("GF(46337^2)", "GF(13^7)", "GF(5^10)", "GF(7^11)", "GF(3^15)", "GF(3^19)"):
        fld = parse_field(spec).resolved()
        ar = GFArith(fld)
        assert ar.kind == "calc"
        a, b = (rng.integers(0, fld.order, (40, 5)) for _ in range(2))
        c, f = (rng.integers(1, fld.order, (40, 1)) for _ in range(2))
        _Planes.products = 0
        ar.mul_sub_mul(c, a, f, b)
        entry = _Planes.products / a.size
        _Planes.products = 0
        ar.sub_mul(a, f, b)
        assert _Planes.products / a.size == entry / 2 == fld.m**2, spec
        charge = calc_entry_ns(fld) or 0.0
        assert charge - gf.CALC_DIGIT_NS * fld.m == pytest.approx(
            gf.CALC_DIGIT_PAIR_NS * entry / 2), spec
        assert muladd_ns(fld, ArithPath.GAUSS_JORDAN) == pytest.approx(
            gf.CALC_PRODUCT_SHARE * charge)
        assert muladd_ns(fld, ArithPath.DECODER) == pytest.approx(
            gf.DECODER_CALC_NS + gf.DECODER_CALC_SHARE * charge)
    # the same entry as the exact check's update (one formula, one place)
    from gctool.audit.nullspace import entry_ns

    for spec in ("GF(46337^2)", "GF(7^11)", "GF(2^31)"):
        fld = parse_field(spec).resolved()
        assert entry_ns(fld) == calc_entry_ns(fld)


def test_the_decoders_batches_above_the_tables_update_a_block_at_a_time(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The decoder's batch of systems above the tables (gauss_jordan on [B_F^T | T^T]) is
    updated CALC_BLOCK entries at a time: no digit plane of its polynomial products is larger
    (counted; whole, a batch's planes were 2 M entries, faulted in afresh at every pivot: twice
    the time), and the answers are those of each system solved alone.  Its rate per
    multiply-add is a fixed part (the passes over the block: gathered, scattered back, the
    factors and the pivot row broadcast) plus a share of the entry, the same fixed part at
    every m."""
    from gctool.algebra.linalg import solve_batch

    largest = [0]
    planes = gf.digit_planes

    def counted(a: np.ndarray, p: int, m: int) -> np.ndarray:
        largest[0] = max(largest[0], int(np.size(a)))
        return planes(a, p, m)

    monkeypatch.setattr(gf, "digit_planes", counted)
    fld = parse_field("GF(46337^2)").resolved()
    ar = GFArith(fld)
    rng = np.random.default_rng(5)
    M = rng.integers(0, fld.order, (300, 8, 11))  # 26,400 entries: two blocks and a part
    M[7, 1, :10] = M[7, 0, :10]  # a system short of rank
    consistent, rank, X = solve_batch(ar, M, 10)
    assert 0 < largest[0] <= gf.CALC_BLOCK < M.size and rank[7] == 7 < rank[0]
    for i in (0, 7, 150, 299):
        alone = solve_batch(ar, M[i:i + 1], 10)
        assert (consistent[i], rank[i]) == (alone[0][0], alone[1][0])
        assert np.array_equal(X[i], alone[2][0])
    fixed = [muladd_ns(parse_field(name), ArithPath.DECODER)
             - gf.DECODER_CALC_SHARE * (calc_entry_ns(parse_field(name).resolved()) or 0.0)
             for name in CALC]
    assert fixed == pytest.approx([gf.DECODER_CALC_NS] * len(CALC))


def test_the_exact_checks_columns_cost_their_rows_and_the_rows_entries(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The numpy null-space test over GF(q) (eliminate on a batch of s x (d + m) systems)
    visits each of the d columns, and each visit selects two rows of d + m entries per set
    (the pivot row and the top row swapped: counted here on its np.where calls) besides its
    pivot search over the set's s rows: nullspace.gf_column_ns charges a fixed part, a part
    per row and a part per entry, d times (a flat 350 ns a column read s = 3 0.8 and d = 50
    1.2-1.5)."""
    from gctool.algebra import linalg
    from gctool.audit import nullspace as ns
    from gctool.codes import design

    selected: list[tuple[int, ...]] = []

    class Counted:
        def __getattr__(self, name: str) -> object:
            return getattr(np, name)

        @staticmethod
        def where(*args: object) -> np.ndarray:
            out = np.where(*args)  # type: ignore[call-overload]
            selected.append(np.shape(out))
            return np.asarray(out)

    monkeypatch.setattr(linalg, "np", Counted())
    for n, s in ((40, 4), (30, 5)):
        code = design("rs", n=n, s=s, field="GF(3^4)")
        red = ns.reduce_gf(code)
        rng = np.random.default_rng(n)
        S = np.sort(np.argsort(rng.random((500, n)), axis=1)[:, :s], axis=1)
        selected.clear()
        linalg.reduced_decodes(GFArith(code.field), np.asarray(red.N), np.asarray(red.W), S)
        assert selected == [(len(S), red.d + code.m)] * (2 * red.d), (n, s)
        per = ns.gf_nullspace_time(red, s, code.m, code.field)
        updates = ns.entry_ns(code.field) * ns.updated_rows(red, s, code.field) * (red.d + code.m)
        assert per - ns.GF_NULL_SET_NS - updates == pytest.approx(red.d * (
            ns.GF_NULL_COLUMN_NS + ns.GF_NULL_COLUMN_ROW_NS * s
            + ns.GF_NULL_COLUMN_ENTRY_NS * (red.d + code.m)))
