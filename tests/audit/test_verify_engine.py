"""Pieces of the verify engine: enumeration, GF(q) elimination, the left-null-space lemma,
symmetry, certificates and parallel determinism, each against brute force."""

from __future__ import annotations

import itertools
from math import comb

import galois
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gctool.algebra.fields import parse_field
from gctool.algebra.gf import GFArith, IntArith
from gctool.algebra.linalg import eliminate
from gctool.audit import certificates as cert
from gctool.audit import nullspace as ns
from gctool.audit.rational import RationalKernel, reduce_rational
from gctool.audit.symmetry import (
    Rotation,
    canonical_mask,
    class_pattern_weight,
    class_patterns,
    count_candidates,
    count_class_patterns,
    count_orbits,
    detect_rotation,
    orbit_sizes,
)
from gctool.audit.verify import verify
from gctool.engine.enumeration import (
    sample_sets,
    straggler_chunks,
    unrank_lex,
    unrank_one,
)
from gctool.errors import SearchInterrupted
from gctool.model import GradientCode

from oracles import decodes_gf, decodes_rational, lex_rank, lstsq_error


def cyclic_mds(field: str, n: int, s: int, scale: bool = False) -> GradientCode:
    """Rows = shifts of g(x) = prod_{j=1..s} (x - alpha^j) (reference §2.1), optionally with
    random non-zero row scalings."""
    f = parse_field(field)
    GF = f.galois()
    alpha = GF.primitive_root_of_unity(n)
    g = galois.Poly.Roots(alpha ** np.arange(1, s + 1))
    coeffs = np.zeros(n, dtype=np.int64)
    coeffs[: g.degree + 1] = np.asarray(g.coeffs[::-1].view(np.ndarray))
    B = GF(np.array([np.roll(coeffs, i) for i in range(n)]))
    if scale:
        gamma = GF(np.arange(n) % (f.order - 1) + 1)
        B = B * gamma[:, None]
    return GradientCode(np.asarray(B.view(np.ndarray)), f, s, "cyclic-mds")


# -- enumeration -------------------------------------------------------------------------------


@pytest.mark.parametrize("n", range(0, 9))
def test_chunks_rank_and_unrank_match_itertools(n: int) -> None:
    for s in range(n + 1):
        ref = list(itertools.combinations(range(n), s))
        got = [tuple(r) for c in straggler_chunks(n, s, 5) for r in c.tolist()]
        assert got == ref
        part = [tuple(r) for c in straggler_chunks(n, s, 3, 2, 7) for r in c.tolist()]
        assert part == ref[2:7]
        if s and ref:
            assert [lex_rank(n, list(r)) for r in ref] == list(range(len(ref)))
            assert unrank_lex(n, s, np.arange(len(ref))).tolist() == [list(r) for r in ref]
        assert [tuple(unrank_one(n, s, r)) for r in range(len(ref))] == ref
        with pytest.raises(ValueError):
            unrank_one(n, s, len(ref))


def test_unrank_one_matches_unrank_lex_on_large_ranks() -> None:
    rng = np.random.default_rng(3)
    for n, s in ((30, 5), (40, 6), (64, 32)):
        ranks = np.concatenate([[0, comb(n, s) - 1], rng.integers(0, comb(n, s), 200)])
        ref = unrank_lex(n, s, ranks).tolist()
        assert [unrank_one(n, s, int(r)) for r in ranks] == ref


def test_sample_sets_are_distinct_sorted_and_seeded() -> None:
    a = sample_sets(20, 4, 500, np.random.default_rng(1))
    b = sample_sets(20, 4, 500, np.random.default_rng(1))
    assert np.array_equal(a, b) and len({tuple(r) for r in a.tolist()}) == 500
    assert np.all(np.diff(a, axis=1) > 0)
    assert sample_sets(5, 2, 100, np.random.default_rng(0)).shape == (10, 2)


# -- GF(q) elimination -------------------------------------------------------------------------


@pytest.mark.parametrize("field", ["GF(2)", "GF(5)", "GF(2^4)", "GF(3^2)", "GF(2147483647)"])
def test_eliminate_matches_galois_rank(field: str) -> None:
    f = parse_field(field)
    GF, arith = f.galois(), GFArith(f)
    rng = np.random.default_rng(2)
    M = rng.integers(0, min(f.order, 2**31 - 1), (150, 4, 6))
    M[rng.random(M.shape) < 0.5] = 0
    consistent, rank = eliminate(arith, M, 4)
    for i in range(M.shape[0]):
        r = np.linalg.matrix_rank(GF(M[i, :, :4]))
        assert rank[i] == r
        assert consistent[i] == (np.linalg.matrix_rank(GF(M[i])) == r)


def test_integer_elimination_decides_over_the_rationals() -> None:
    rng = np.random.default_rng(4)
    M = rng.integers(-2, 3, (80, 3, 5)).astype(object)
    consistent, rank = eliminate(IntArith(), M, 3)
    for i in range(80):
        A = np.array(M[i, :, :3], dtype=float)
        assert rank[i] == np.linalg.matrix_rank(A)
        assert consistent[i] == (np.linalg.matrix_rank(np.array(M[i], dtype=float)) == rank[i])


# -- the left-null-space lemma, set by set -----------------------------------------------------


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 10**6), st.sampled_from(["GF(2)", "GF(3)", "GF(2^2)", "GF(7)"]),
       st.integers(3, 6), st.integers(2, 5))
def test_gf_nullspace_kernel_equals_rank_test_on_every_set(seed: int, field: str, n: int,
                                                           k: int) -> None:
    f = parse_field(field)
    rng = np.random.default_rng(seed)
    B = np.where(rng.random((n, k)) < 0.6, rng.integers(0, f.order, (n, k)), 0)
    code = GradientCode(B, f, 0)
    red = ns.reduce_gf(code)
    if not red.consistent:
        assert not decodes_gf(f.galois(), B, tuple(range(n)))
        return
    kernel = ns.GFNullKernel(code, red)
    for s in range(1, n):
        S = np.array(list(itertools.combinations(range(n), s)))
        ok = kernel.evaluate(S).ok
        for i, row in enumerate(S.tolist()):
            F = tuple(j for j in range(n) if j not in row)
            assert ok[i] == decodes_gf(f.galois(), B, F)


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 10**6), st.sampled_from(["real", "complex"]), st.integers(3, 7),
       st.integers(3, 7))
def test_float_nullspace_kernel_equals_lstsq_on_every_set(seed: int, field: str, n: int,
                                                          k: int) -> None:
    rng = np.random.default_rng(seed)
    B = rng.standard_normal((n, k)) if seed % 2 else rng.integers(-2, 3, (n, k)).astype(float)
    if field == "complex":
        B = B + 1j * rng.standard_normal((n, k))
    B[rng.random((n, k)) < 0.3] = 0
    code = GradientCode(B, parse_field(field), 0)
    red = ns.reduce_float(code, 1e-9)
    if not red.consistent:
        return
    kernel = ns.FloatNullKernel(code, 1e-9, red)
    for s in range(1, n):
        if red.d < s:
            continue
        S = np.array(list(itertools.combinations(range(n), s)))
        r = kernel.evaluate(S)
        for i, row in enumerate(S.tolist()):
            F = tuple(j for j in range(n) if j not in row)
            assert r.ok[i] == (lstsq_error(B, F) <= 1e-9 * k)
            if r.ok[i] and not r.direct[i] and np.isfinite(r.norm[i]):  # exact norm
                # the decoder is the minimum-norm one of the row-normalised B_F (rows scaled
                # by powers of two d_i), mapped back: a = d * a_n
                _, e = np.frexp(np.linalg.norm(B, axis=1))
                d = np.ldexp(1.0, -e)
                Bn = B * d[:, None]
                a = np.linalg.lstsq(Bn[list(F)].T, np.ones(k), rcond=None)[0] * d[list(F)]
                assert r.norm[i] == pytest.approx(np.linalg.norm(a), rel=1e-6)


def test_rational_kernel_matches_fractions() -> None:
    rng = np.random.default_rng(8)
    for _ in range(10):
        B = np.where(rng.random((6, 5)) < 0.6, rng.integers(-3, 4, (6, 5)), 0).astype(float)
        code = GradientCode(B, parse_field("real"), 0)
        red = reduce_rational(code)
        kernel = RationalKernel(code, red)
        for s in range(1, 6):
            S = np.array(list(itertools.combinations(range(6), s)))
            ok = kernel.evaluate(S).ok
            for i, row in enumerate(S.tolist()):
                F = tuple(j for j in range(6) if j not in row)
                assert ok[i] == (red.consistent and decodes_rational(B, F)) or not red.consistent


# -- symmetry ----------------------------------------------------------------------------------


@pytest.mark.parametrize("n", range(2, 11))
def test_orbit_representatives_cover_every_set_once(n: int) -> None:
    for t in (d for d in range(1, n) if n % d == 0):
        rot = Rotation(n, t, 0, True)
        for s in range(1, n + 1):
            C = unrank_lex(n, s, np.arange(count_candidates(n, s, t)))
            reps = C[canonical_mask(C, rot)]
            assert orbit_sizes(reps, rot).sum() == comb(n, s)
            assert reps.shape[0] == count_orbits(n, s, t)
            brute = {min(tuple(sorted((x + r * t) % n for x in S)) for r in range(n // t))
                     for S in itertools.combinations(range(n), s)}
            assert brute == {tuple(r) for r in reps.tolist()}


def test_burnside_counts_from_the_reference() -> None:
    assert (count_orbits(6, 2), count_orbits(7, 3), count_orbits(12, 4)) == (3, 5, 43)


def test_rotation_up_to_row_scaling_is_detected_and_preserves_decodability() -> None:
    code = cyclic_mds("GF(7)", 6, 2, scale=True)
    rot = detect_rotation(code)
    assert rot is not None and rot.t == 1 and not rot.unimodular
    GF = code.field.galois()
    for s in (2, 3):
        for S in itertools.combinations(range(6), s):
            F = [i for i in range(6) if i not in S]
            G = [(i + 1) % 6 for i in F]
            assert decodes_gf(GF, code.B, tuple(F)) == decodes_gf(GF, code.B, tuple(sorted(G)))
    rng = np.random.default_rng(0)
    assert detect_rotation(GradientCode(rng.standard_normal((6, 6)), parse_field("real"),
                                        1)) is None


def test_class_patterns_weights_sum_to_all_sets() -> None:
    sizes = [3, 3, 2, 1, 1]
    for s in range(0, 11):
        pats = list(class_patterns(sizes, s))
        assert len(pats) == count_class_patterns(sizes, s)
        assert sum(class_pattern_weight(sizes, p, s) for p in pats) == comb(10, s)


@pytest.mark.parametrize("s", [1, 2, 3, 4])
def test_row_classes_against_brute_force(s: int) -> None:
    # FRC-like groups of sizes 3, 2, 2 with proportional (not equal) rows, k = 3
    rows = [[1, 1, 0], [2, 2, 0], [-1, -1, 0], [0, 1, 1], [0, 3, 3], [1, 0, 1], [5, 0, 5]]
    B = np.array(rows, dtype=float)
    code = GradientCode(B, parse_field("real"), 0)
    r = verify(code, s)
    bad = [S for S in itertools.combinations(range(7), s)
           if lstsq_error(B, tuple(i for i in range(7) if i not in S)) > 1e-9 * 3]
    assert r.ok == (not bad)
    if r.method == "row-classes":
        assert r.reduction is not None and r.reduction["represents"] == comb(7, s)
    if bad:
        assert tuple(r.counterexample or ()) in bad


# -- certificates and cheap checks -------------------------------------------------------------


def test_bch_certificate_on_cyclic_mds_and_brute_force_agrees() -> None:
    code = cyclic_mds("GF(2^4)", 15, 6)
    r = verify(code)
    assert r.ok and r.method == "certificate:bch" and r.exact and r.certificate
    assert r.represented == comb(15, 6)
    brute = verify(code, method="exhaustive")
    assert brute.ok and brute.checked == comb(15, 6)
    sym = verify(cyclic_mds("GF(2^4)", 15, 6, scale=True))
    assert sym.ok and sym.method == "certificate:bch"
    over = verify(code, 7)
    assert not over.ok and over.counterexample is not None
    assert not decodes_gf(code.field.galois(), code.B,
                          tuple(i for i in range(15) if i not in over.counterexample))


def test_bch_certificate_needs_enough_consecutive_zeros() -> None:
    code = cyclic_mds("GF(7)", 6, 2)
    rot = detect_rotation(code)
    assert cert.bch_certificate(code, 2, rot) is not None
    assert cert.bch_certificate(code, 3, rot) is None


def test_rank_bound_witness_really_fails() -> None:
    rng = np.random.default_rng(1)
    for field in ("real", "GF(5)"):
        f = parse_field(field)
        B = rng.integers(1, 5, (6, 6)) if f.is_finite else rng.standard_normal((6, 6))
        code = GradientCode(B, f, 2)  # full rank 6 > n - s = 4
        finding = cert.rank_bound(code, 2, 6)
        assert finding is not None and len(finding.stragglers) == 2
        F = tuple(i for i in range(6) if i not in finding.stragglers)
        if f.is_finite:
            assert not decodes_gf(f.galois(), B, F)
        else:
            assert lstsq_error(B, F) > 1e-6
        r = verify(code)
        assert not r.ok and r.method == "rank-bound"


def test_m_piece_column_support_needs_s_plus_m_holders() -> None:
    # m = 2: partition 0 (columns 0 and 2) held by 3 workers < s + m = 4
    B = np.array([[1, 0, 1, 0], [1, 1, 0, 1], [0, 1, 1, 1], [1, 1, 1, 1]], dtype=float)
    code = GradientCode(B, parse_field("real"), 2, params={"m": 2})
    finding = cert.column_support(code, 2)
    assert finding is not None
    assert not verify(code, 2).ok
    assert not verify(code, 2, method="exhaustive").ok


# -- parallel determinism, progress, interrupts ------------------------------------------------


@pytest.mark.parametrize("field", ["real", "GF(101)"])
def test_parallel_runs_equal_single_core(monkeypatch: pytest.MonkeyPatch, field: str) -> None:
    import importlib

    from gctool.codes import design

    vmod = importlib.import_module("gctool.audit.verify.enumeration")
    monkeypatch.setattr(vmod, "PARALLEL_MIN_S", 0.0)  # always start processes
    monkeypatch.setattr(vmod, "PILOT", 8)
    for kernel in (ns.FloatNullKernel, ns.GFNullKernel, ns.GFDirectKernel, ns.DirectKernel):
        monkeypatch.setattr(kernel, "chunk_size", lambda self, s, given=False: 13)
    valid = design("cyclic", n=11, s=3, field=field, seed=3)
    B = np.asarray(valid.B).copy()
    B[9] = B[8]  # rows 8 and 9 equal: straggling two late sets' partners breaks decoding
    broken = GradientCode(B, valid.field, 3)
    for code in (valid, broken):
        for method in ("auto", "exhaustive"):
            one = verify(code, 3, method=method, jobs=1).to_dict()
            two = verify(code, 3, method=method, jobs=2).to_dict()
            assert one["jobs"] == 1
            if method == "exhaustive" and code is valid:
                assert two["jobs"] == 2 and one["checked"] == comb(11, 3)
            for d in (one, two):
                d.pop("elapsed_s"), d.pop("estimate"), d.pop("jobs")
            assert one == two
    bad = verify(broken, 3, method="exhaustive", jobs=2)
    assert not bad.ok and bad.counterexample == failing_first(broken, 3)


def failing_first(code: GradientCode, s: int) -> list[int]:
    GF = code.field.galois() if code.field.is_finite else None
    for S in itertools.combinations(range(code.n), s):
        F = tuple(i for i in range(code.n) if i not in S)
        ok = (decodes_gf(GF, code.B, F) if GF is not None
              else lstsq_error(np.asarray(code.B), F) <= 1e-9 * code.k)
        if not ok:
            return list(S)
    return []


def test_progress_reports_covered_sets() -> None:
    seen: list[tuple[int, int]] = []
    code = cyclic_mds("GF(7)", 6, 2)
    verify(code, 2, method="exhaustive", progress=lambda d, t: seen.append((d, t)))
    assert seen[-1] == (15, 15)


def test_interrupt_reports_how_far_it_got(monkeypatch: pytest.MonkeyPatch) -> None:
    from gctool.audit import sweep

    def boom(self: object, task: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(sweep.SweepWorker, "run", boom)
    with pytest.raises(SearchInterrupted, match="interrupted after checking 0 of 15"):
        verify(cyclic_mds("GF(7)", 6, 2), method="exhaustive")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.integers(0, 6), max_size=20), min_size=1, max_size=12))
def test_the_fold_keeps_the_weakest_sets_as_one_sort_does(chunks: list[list[int]]) -> None:
    """The fold's weakest sets (ties to the earlier chunk) are the WEAKEST first of one stable
    sort of every chunk's, in order, whether or not it skips the merge of a chunk whose
    values are all at or above the last kept one (values of few levels: many ties)."""
    from gctool.audit.chunks import WEAKEST, Accumulator, ChunkSummary

    acc, every = Accumulator(), []
    for i, values in enumerate(chunks):
        weak = sorted((float(v), [i, j]) for j, v in enumerate(values))[:WEAKEST]
        every += weak
        acc.merge(ChunkSummary(i, 1, 1, weakest=weak))
    assert acc.weakest == sorted(every, key=lambda b: b[0])[:WEAKEST]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([0.0, 1.0, 2.0, 3.0, np.inf, np.nan]), max_size=60))
def test_a_chunks_weakest_sets_are_those_of_a_stable_sort(values: list[float]) -> None:
    """chunks.weakest picks the WEAKEST smallest screen values from those at or below the
    WEAKEST-th alone: the indices of one stable sort of them all, ties (many here) in index
    order, inf and nan (the unscreened sets) last."""
    from gctool.audit.chunks import WEAKEST, weakest

    lb = np.array(values, dtype=float)
    assert weakest(lb).tolist() == np.argsort(lb, kind="stable")[:WEAKEST].tolist()


def test_witness_bound_is_rounded_upward_at_a_tie() -> None:
    """The witness decoder's error bound (FloatNullKernel.witness_error) is an upper bound on
    the exact error of the decoder it tests, also when nothing but rounding separates them: a
    decoder 0 on the survivors has residual -t exactly and no round-off slack, and its error
    3 came out sqrt(3)^2 = 2.9999999999999996, 'proving' that it decodes at the exact limit
    2.9999999999999996 (tol that / 3, k = 3)."""
    from fractions import Fraction

    from gctool.numerics import proves_decodes

    code = GradientCode(np.ones((2, 3)), parse_field("real"), 0)
    red = ns.reduce_float(code, 1e-9)
    kernel = ns.FloatNullKernel(code, 1e-9, red)
    S = np.array([[0]])
    Z = (-red.W[1] / red.N.T[1]).reshape(1, 1, 1)  # a = W + N^T Z vanishes on worker 1
    a = red.W + red.N.T @ Z[0]
    assert a[1, 0] == 0
    exact = sum((Fraction(float(a[1, 0])) * Fraction(float(x)) - 1) ** 2 for x in kernel.Bn[1])
    bound = kernel.witness_error(S, Z)
    assert exact == 3 and Fraction(float(bound[0])) >= exact
    tie = Fraction(float(np.nextafter(3.0, 0))) / 3  # exact limit: the float just below 3
    assert not proves_decodes(bound, 3, tie)[0]
