"""Algebraic schemes (cyclic-mds, rs, comm): constructions against the reference's worked
examples (§2.1-§2.3) and independent brute force / exact arithmetic on small cases."""

from __future__ import annotations

import itertools
from fractions import Fraction
from math import ceil

import galois
import numpy as np
import pytest

from gctool.audit.attack import threshold
from gctool.audit.verify import verify
from gctool.codes import design
from gctool.codes.cyclic_mds import symmetric_zero_sets
from gctool.errors import DesignError, InvalidInput
from gctool.model import GradientCode

from corpus import GF7_B, RS5
from jsondoc import loads
from oracles import decodes_gf, decodes_rational, lstsq_error, threshold_by


def survivor_sets(n: int, s: int) -> list[tuple[int, ...]]:
    return [tuple(i for i in range(n) if i not in S) for S in itertools.combinations(range(n), s)]


def min_weight_gf(B: np.ndarray, q: int) -> int:
    """min wt(Bx) over every x in GF(q)^k with sum(x) = 1 (reference §2.1: T_0 over GF(7))."""
    k = B.shape[1]
    X = np.array(list(itertools.product(range(q), repeat=k - 1)), dtype=np.int64)
    X = np.hstack([X, (1 - X.sum(axis=1, keepdims=True)) % q])
    return int(((X @ B.T) % q != 0).sum(axis=1).min())


# -- cyclic-mds over GF(q) ---------------------------------------------------------------------
def test_cyclic_mds_gf7_reference_example() -> None:
    code = design("cyclic-mds", 6, 2, field="GF(7)")
    assert np.array_equal(code.B, np.array(GF7_B))
    assert code.params["zeros"] == [1, 2] and code.params["root"] == 3
    assert min_weight_gf(np.asarray(code.B), 7) == 3  # T_0 over all 7^5 vectors
    assert threshold(code).threshold == 3
    assert threshold_by(lambda F: decodes_gf(galois.GF(7), np.asarray(code.B), F), 6) == 3


@pytest.mark.parametrize(("field", "n", "s"), [
    ("GF(7)", 6, 3), ("GF(11)", 10, 2), ("GF(11)", 5, 2), ("GF(2^4)", 5, 2), ("GF(2^4)", 3, 1),
    ("GF(13)", 12, 1), ("GF(13)", 4, 3), ("GF(7)", 3, 1),
])
def test_cyclic_mds_gf_is_mds_exactly(field: str, n: int, s: int) -> None:
    code = design("cyclic-mds", n, s, field=field)
    B = np.asarray(code.B)
    assert (code.loads == s + 1).all() and (code.replication == s + 1).all()
    for i in range(n):  # row i: window {i..i+s}, a cyclic shift of row 0
        assert np.array_equal(B[i], np.roll(B[0], i))
        assert set(np.flatnonzero(B[i])) == {(i + t) % n for t in range(s + 1)}
    GF = code.field.galois()
    for F in survivor_sets(n, s):
        assert decodes_gf(GF, B, F)
    assert threshold(code).threshold == s + 1


def test_cyclic_mds_gf_wrong_field_names_suitable_ones() -> None:
    with pytest.raises(DesignError) as err:
        design("cyclic-mds", 10, 3, field="GF(13)")
    msg = str(err.value)
    assert "n = 10 must divide q - 1 = 12" in msg and "GF(11), GF(31), GF(41)" in msg
    with pytest.raises(DesignError, match=r"GF\(2\^4\)"):  # n odd: GF(2^m) is suggested too
        design("cyclic-mds", 15, 2, field="GF(7)")


@pytest.mark.parametrize(("n", "expected"), [
    (6, "GF(7)"), (10, "GF(11)"), (7, "GF(2^3)"), (255, "GF(2^8)"), (5, "GF(11)"),
    (8, "GF(17)"), (4, "GF(5)"),
])
def test_field_auto_picks_smallest(n: int, expected: str) -> None:
    from gctool.codes.cyclic_mds import choose_field

    field = choose_field(n)
    assert str(field) == expected
    q = field.order
    assert (q - 1) % n == 0
    smaller = [p for p in range(2, q) if all(p % f for f in range(2, p)) and (p - 1) % n == 0]
    assert not smaller  # no smaller prime field qualifies either


def test_field_auto_for_rs_comm_and_unsupported_scheme() -> None:
    assert str(design("cyclic-mds", 10, 3, field="auto").field) == "GF(11)"
    assert str(design("rs", 10, 2, field="auto").field) == "GF(11)"
    assert str(design("rs", 8, 2, field="auto", nodes="unity").field) == "GF(17)"
    assert str(design("comm", 12, 2, field="auto", m=2).field) == "GF(13)"
    with pytest.raises(InvalidInput, match="cannot choose a field"):
        design("frc", 6, 2, field="auto")


# -- cyclic-mds over C and R -------------------------------------------------------------------
def test_cyclic_mds_complex_reference_example() -> None:
    code = design("cyclic-mds", 6, 2, field="complex")
    B = np.asarray(code.B)
    assert np.allclose(B[0], [-1, -1j * np.sqrt(3), 1, 0, 0, 0])
    conds = [np.linalg.cond(B[list(F)]) for F in survivor_sets(6, 2)]
    assert round(min(conds), 2) == 2.48 and round(max(conds), 2) == 6.71
    assert code.params["worst_condition"] == pytest.approx(max(conds), rel=1e-9)
    assert code.params["worst_condition_method"].startswith("exact")
    assert threshold(code).threshold == 3


def test_cyclic_mds_real_odd_reference_example() -> None:
    code = design("cyclic-mds", 7, 2, field="real")
    assert code.params["zeros"] == [3, 4]
    assert np.allclose(np.asarray(code.B)[0], [1, 1.8019377, 1, 0, 0, 0, 0], atol=1e-7)
    assert threshold(code).threshold == 3
    assert all(lstsq_error(np.asarray(code.B), F) < 1e-18 for F in survivor_sets(7, 2))


@pytest.mark.parametrize(("n", "s"), [(9, 4), (8, 3), (11, 6), (5, 4), (6, 1)])
def test_cyclic_mds_real_odd_is_real_and_tolerates_s(n: int, s: int) -> None:
    code = design("cyclic-mds", n, s, field="real")
    J = code.params["zeros"]
    assert sorted(J) == sorted((n - j) % n for j in J) and 0 not in J  # conjugation-closed
    assert J == list(range((n - s + 1) // 2, (n + s - 1) // 2 + 1))
    assert threshold(code).threshold == s + 1


def _real_cyclic(n: int, J: list[int]) -> np.ndarray:
    """Independent construction: real part of prod (x - w^j), shifted cyclically."""
    g = np.real(np.poly(np.exp(2j * np.pi * np.array(J) / n))[::-1])
    row = np.concatenate([g, np.zeros(n - g.size)])
    return np.array([np.roll(row, i) for i in range(n)])


def test_real_search_matches_reference_table() -> None:
    """Reference §2.1: exhaustive search over symmetric J for n <= 10."""
    assert design("cyclic-mds", 6, 2, field="real").params["zeros"] == [2, 4]
    assert design("cyclic-mds", 10, 2, field="real").params["zeros"] in ([2, 8], [4, 6])
    assert design("cyclic-mds", 10, 4, field="real").params["zeros"] == [2, 4, 6, 8]
    for n, s in [(4, 2), (8, 2), (8, 4), (6, 4)]:
        with pytest.raises(DesignError, match="no real cyclic code exists") as err:
            design("cyclic-mds", n, s, field="real")
        assert "'rs'" in str(err.value) and "complex" in str(err.value)


@pytest.mark.parametrize(("n", "s"), [(6, 2), (8, 2), (10, 2), (10, 4), (12, 4)])
def test_real_search_against_brute_force(n: int, s: int) -> None:
    """Every symmetric J, judged by an independent least-squares oracle over all sets."""
    valid = [J for J in symmetric_zero_sets(n, s)
             if all(lstsq_error(_real_cyclic(n, J), F) < 1e-12 * n for F in survivor_sets(n, s))]
    if not valid:
        with pytest.raises(DesignError):
            design("cyclic-mds", n, s, field="real")
        return
    code = design("cyclic-mds", n, s, field="real")
    assert code.params["zeros"] in valid
    assert code.params["search"] == {"candidates": len(symmetric_zero_sets(n, s)),
                                     "valid": len(valid)}
    assert np.allclose(code.B, _real_cyclic(n, code.params["zeros"]))
    assert threshold(code).threshold == s + 1


def test_real_search_mds_not_necessary() -> None:
    """n = 6, s = 2, J = {2, 4}: d(C) = 2 (1 - x^3 is a codeword) yet T_0 = 3."""
    B = np.asarray(design("cyclic-mds", 6, 2, field="real").B)
    y = np.array([1, 0, 0, -1, 0, 0.0])
    x = np.linalg.lstsq(B, y, rcond=None)[0]
    assert np.allclose(B @ x, y) and abs(x.sum()) < 1e-12  # weight 2, zero coordinate sum
    assert np.linalg.matrix_rank(B[[0, 1, 3, 4]]) < 4  # a rank-deficient survivor set ...
    assert lstsq_error(B, (0, 1, 3, 4)) < 1e-20  # ... that still decodes


def test_real_cyclic_impossible_cases_explain() -> None:
    with pytest.raises(DesignError, match="for odd n has even size"):
        design("cyclic-mds", 9, 3, field="real")
    with pytest.raises(DesignError, match="n <= 20"):
        design("cyclic-mds", 22, 2, field="real")
    with pytest.raises(DesignError, match="k = n"):
        design("cyclic-mds", 6, 2, 12, field="complex")


def test_cyclic_mds_s0_is_identity() -> None:
    for field in ("real", "complex", "GF(7)"):
        code = design("cyclic-mds", 4, 0, field=field)
        assert np.array_equal(np.asarray(code.B).real, np.eye(4)) and verify(code).ok


# -- rs -----------------------------------------------------------------------------------------
def test_rs_reference_integer_example() -> None:
    code = design("rs", 5, 1, field="real", nodes="integers")
    assert np.array_equal(code.B, np.array(RS5, dtype=float))
    B = np.asarray(code.B)
    assert threshold_by(lambda F: decodes_rational(B, F), 5) == 2
    from gctool.decode.structured import structured_decode

    a = structured_decode(code, [0, 1, 2, 3]).a[0]
    assert np.allclose(a, [-1 / 6, 1 / 2, -1 / 2, 1 / 6])
    exact = [Fraction(-1, 6), Fraction(1, 2), Fraction(-1, 2), Fraction(1, 6)]
    assert all(sum(c * int(B[i, j]) for c, i in zip(exact, range(4), strict=True)) == 1
               for j in range(5))


def test_rs_n4_k6_chebyshev() -> None:
    code = design("rs", 4, 1, 6)
    assert code.params["nodes"] == "chebyshev" and (code.loads == 3).all()
    assert threshold(code).threshold == 2


@pytest.mark.parametrize(("n", "k", "s"), [(7, 9, 2), (5, 3, 1), (6, 6, 5), (8, 13, 3), (4, 1, 2),
                                           (9, 20, 0)])
def test_rs_balanced_mask_meets_load_bound(n: int, k: int, s: int) -> None:
    code = design("rs", n, s, k, field="GF(13)")
    assert (code.replication == s + 1).all()
    assert code.loads.max() == ceil(k * (s + 1) / n) and code.loads.max() - code.loads.min() <= 1
    GF = code.field.galois()
    assert all(decodes_gf(GF, np.asarray(code.B), F) for F in survivor_sets(n, s))
    assert verify(code).ok


@pytest.mark.parametrize("field", ["real", "complex", "GF(11)", "GF(2^4)"])
def test_rs_every_field_tolerates_exactly_s(field: str) -> None:
    code = design("rs", 7, 2, 10, field=field)
    assert verify(code).ok and threshold(code).threshold == 3
    if not code.field.is_finite:
        B = np.asarray(code.B)
        assert max(lstsq_error(B, F) for F in survivor_sets(7, 2)) < 1e-16


def test_rs_node_errors() -> None:
    with pytest.raises(DesignError, match=r"GF\(11\)"):
        design("rs", 10, 2, field="GF(7)")
    with pytest.raises(DesignError, match="complex"):
        design("rs", 5, 1, field="real", nodes="unity")
    with pytest.raises(DesignError, match="Chebyshev"):
        design("rs", 5, 1, field="GF(7)", nodes="chebyshev")
    code = design("rs", 6, 2, field="GF(7)", nodes="unity")
    assert code.params["nodes"] == "unity" and verify(code).ok


# -- comm ---------------------------------------------------------------------------------------
def piece_recoverable(code: GradientCode, F: tuple[int, ...], u: int) -> bool:
    """Independent oracle: is the u-th piece target in the row space of B_F?"""
    B = np.asarray(code.B)
    t = np.zeros(B.shape[1], dtype=B.dtype)
    t[u * code.k:(u + 1) * code.k] = 1
    if code.field.is_finite:
        GF = code.field.galois()
        BF = GF(B[list(F)])
        return bool(np.linalg.matrix_rank(np.vstack([BF, GF(t[None, :])]))
                    == np.linalg.matrix_rank(BF))
    a = np.linalg.lstsq(B[list(F)].T, t, rcond=None)[0]
    return bool(np.sum(np.abs(B[list(F)].T @ a - t) ** 2) < 1e-12 * code.k)


@pytest.mark.parametrize("field", ["real", "GF(11)", "complex"])
@pytest.mark.parametrize(("n", "s", "m", "k"), [(4, 1, 2, None), (6, 2, 2, None), (6, 1, 3, None),
                                                (7, 2, 3, 9), (5, 0, 2, 3)])
def test_comm_every_piece_recoverable_brute_force(field: str, n: int, s: int, m: int,
                                                  k: int | None) -> None:
    code = design("comm", n, s, k, field=field, m=m)
    kk = n if k is None else k
    assert code.m == m and code.k == kk and code.B.shape == (n, kk * m)
    assert code.params["replication"] == s + m
    assert code.params["column_order"].startswith("piece-major")
    assert (code.replication == s + m).all()
    assert code.loads.max() == code.params["load"] == ceil(kk * (s + m) / n)
    for F in survivor_sets(n, s):
        assert all(piece_recoverable(code, F, u) for u in range(m))
    if s + 1 < n:  # one more straggler loses some piece
        assert not all(piece_recoverable(code, F, u)
                       for F in survivor_sets(n, s + 1) for u in range(m))


def test_comm_matches_its_definition() -> None:
    """B[i, u k + j] = p_{j,u}(alpha_i) with p = Z_j q, top m coefficients e_u (reference §2.3),
    built here by plain polynomial algebra with integer nodes."""
    n, s, m = 6, 1, 3
    code = design("comm", n, s, field="real", m=m, nodes="integers")
    L, d = n - s, s + m
    alpha = np.arange(n, dtype=float)
    for j in range(n):
        holders = {(j * d + t) % n for t in range(d)}
        Z = np.poly([alpha[i] for i in range(n) if i not in holders])[::-1]  # ascending
        for u in range(m):
            # unknown q (m coefficients): coefficients L-m..L-1 of Z*q must be e_u
            M = np.array([[np.convolve(Z, np.eye(m)[w])[L - m + v] for w in range(m)]
                          for v in range(m)])
            q = np.linalg.solve(M, np.eye(m)[u])
            p = np.convolve(Z, q)
            col = [np.polyval(p[::-1], a) if i in holders else 0 for i, a in enumerate(alpha)]
            assert np.allclose(np.asarray(code.B)[:, u * n + j], col)


def test_comm_m1_equals_rs_and_errors() -> None:
    assert np.allclose(design("comm", 7, 2, 9, m=1).B, design("rs", 7, 2, 9).B)
    with pytest.raises(DesignError, match="largest m for n = 5, s = 2 is 3"):
        design("comm", 5, 2, m=4)
    with pytest.raises(DesignError, match="`m` must be"):
        design("comm", 5, 2, m=0)


def test_comm_verify_attack_export() -> None:
    from gctool.audit.attack import attack
    from gctool.exports import build_export

    code = design("comm", 6, 2, field="GF(7)", m=2)
    assert verify(code).ok and not verify(code, 3).ok
    assert attack(code, 2).raw_error == 0 and attack(code, 3).raw_error == 1
    assert threshold(code).threshold == 3
    out = build_export(code, decoders=True)
    A, pats, ok = out.arrays["A"], out.arrays["patterns"], out.arrays["decodable"]
    assert A.shape == (15, 2, 6) and ok.all() and out.all_decodable
    GF = galois.GF(7)
    for S, Ap in zip(pats, A, strict=True):
        assert not Ap[:, list(S)].any()  # zero on the stragglers
        assert np.array_equal(GF(Ap) @ GF(np.asarray(code.B)), GF(code.targets()))
    real = design("comm", 5, 1, field="real", m=2)
    out = build_export(real, decoders=True)
    assert out.all_decodable
    assert np.allclose(out.arrays["A"] @ np.asarray(real.B), real.targets(), atol=1e-9)


# -- structured decoders ------------------------------------------------------------------------
@pytest.mark.parametrize(("scheme", "field", "n", "s", "extra"), [
    ("cyclic-mds", "GF(7)", 6, 2, {}), ("cyclic-mds", "GF(2^4)", 5, 2, {}),
    ("cyclic-mds", "complex", 8, 3, {}), ("cyclic-mds", "real", 9, 4, {}),
    ("cyclic-mds", "real", 8, 3, {}), ("rs", "GF(13)", 7, 2, {}), ("rs", "real", 7, 3, {}),
    ("rs", "complex", 6, 2, {}), ("comm", "GF(11)", 7, 2, {"m": 3}),
    ("comm", "real", 6, 1, {"m": 2}),
    ("comm", "complex", 6, 2, {"m": 2}),
])
def test_structured_decoders_match_generic(scheme: str, field: str, n: int, s: int,
                                           extra: dict[str, int]) -> None:
    from gctool.decode import decode
    from gctool.decode.structured import structured_decode

    code = design(scheme, n, s, field=field, **extra)
    B = np.asarray(code.B)
    for F in survivor_sets(n, s):
        r = structured_decode(code, F)
        assert r.ok and r.a.shape == (code.m, n - s)
        if code.field.is_finite:
            GF = code.field.galois()
            assert np.array_equal(GF(r.a) @ GF(B[list(F)]), GF(code.targets()))
        else:
            assert np.allclose(r.a @ B[list(F)], code.targets(), atol=1e-9)
        if scheme == "cyclic-mds":  # B_F is invertible on its row space: the solution is unique
            g = decode(code, F, decoder="generic")  # elimination / SVD, not structured
            assert np.allclose(g.a, r.a, atol=1e-8) if not code.field.is_finite \
                else np.array_equal(g.a, r.a)


def test_structured_decoder_reference_vectors_and_errors() -> None:
    from gctool.decode.structured import structured_decode

    gf7 = design("cyclic-mds", 6, 2, field="GF(7)")
    assert structured_decode(gf7, [0, 1, 2, 3]).a.tolist() == [[6, 4, 6, 1]]
    assert structured_decode(gf7, [0, 2, 3, 5]).a.tolist() == [[3, 2, 3, 2]]
    cpx = design("cyclic-mds", 6, 2, field="complex")
    r3 = np.sqrt(3)
    assert np.allclose(structured_decode(cpx, [0, 1, 2, 3]).a[0],
                       [-1, -1 + 1j * r3, 1 + 1j * r3, 1])
    more = structured_decode(gf7, [0, 1, 2, 3, 4])  # extra survivors get coefficient 0
    assert more.ok and more.a.tolist() == [[6, 4, 6, 1, 0]]
    with pytest.raises(InvalidInput, match="at least n - s = 4"):
        structured_decode(gf7, [0, 1, 2])
    with pytest.raises(InvalidInput, match="not a cyclic interval"):  # searched real J = {2, 4}
        structured_decode(design("cyclic-mds", 6, 2, field="real"), [0, 1, 2, 3])
    with pytest.raises(InvalidInput, match="no structured decoder"):
        structured_decode(design("frc", 6, 2), [0, 1, 2, 3])
    tampered = GradientCode(np.asarray(gf7.B)[::-1], gf7.field, 2, "cyclic-mds", gf7.params)
    assert not structured_decode(tampered, [0, 1, 2, 3]).ok  # checked, never trusted


# -- conditioning -------------------------------------------------------------------------------
def test_condition_exact_small_and_estimated_large() -> None:
    small = design("rs", 8, 2, field="real")
    B = np.asarray(small.B)
    _, e = np.frexp(np.linalg.norm(B, axis=1))  # rows to a 2-norm in [1/2, 1), as verify does
    B = B * np.ldexp(1.0, -e)[:, None]
    conds = []
    for F in survivor_sets(8, 2):
        sv = np.linalg.svd(B[list(F)], compute_uv=False)
        keep = sv > sv[0] * max(B[list(F)].shape) * np.finfo(float).eps
        conds.append(sv[0] / sv[keep][-1])
    assert small.params["worst_condition"] == pytest.approx(max(conds), rel=1e-9)
    assert small.params["worst_condition_method"] == "exact: maximum over all 28 straggler sets"
    mid = design("rs", 40, 5, field="complex")  # 658,008 sets: screened
    assert mid.params["worst_condition_method"].startswith("screened")
    assert 1 < mid.params["worst_condition"] <= mid.params["condition_bound"]
    big = design("rs", 60, 10, field="complex")  # 7.5e10 sets: estimated
    assert big.params["worst_condition_method"].startswith("estimate (lower bound)")
    assert big.params["worst_condition"] > 1 and "condition_bound" not in big.params
    assert "worst_condition" not in design("rs", 8, 2, field="GF(11)").params


@pytest.mark.parametrize(("scheme", "n", "s", "k", "field"), [
    ("rs", 6, 2, None, "real"), ("rs", 7, 2, None, "real"), ("rs", 5, 1, None, "real"),
    ("cyclic-mds", 6, 2, None, "complex")])
def test_design_condition_is_verify_condition(scheme: str, n: int, s: int, k: int | None,
                                              field: str) -> None:
    """design records the condition number of the row-normalised B_F, the quantity verify
    reports: on small codes where both take the maximum over every set they are equal (the
    unnormalised B_F of rs n=7 would give 65 against verify's 42)."""
    code = design(scheme, n, s, k, field=field)
    assert code.params["worst_condition_method"].startswith("exact")
    report = verify(code, method="exhaustive")  # every set (no certificate, no reduction)
    assert report.ok and report.diagnostics.max_condition is not None
    assert code.params["worst_condition"] == pytest.approx(report.diagnostics.max_condition,
                                                           rel=1e-9)


def test_real_and_complex_designs_check_themselves() -> None:
    """A design float64 cannot decode is refused with what would work; one that loses many
    digits carries a warning; what is written verifies."""
    from gctool.audit.verify import verify
    from gctool.errors import DesignError

    with pytest.raises(DesignError, match="finite field"):
        design("rs", 200, 20, 300, field="real")
    with pytest.raises(DesignError, match="float64"):
        design("rs", 60, 12, field="complex")
    ok = design("rs", 200, 20, 300, field="auto")
    assert ok.field.is_finite
    warned = design("rs", 40, 5, field="real")
    assert warned.params["worst_condition"] > 1e7
    assert any("digits" in w for w in warned.params.get("warnings", [])) == (
        warned.params["worst_condition"] > 1e8)
    small = design("rs", 10, 2, field="real")
    assert "warnings" not in small.params and verify(small).ok


# -- bounds -------------------------------------------------------------------------------------
def test_load_bounds_with_pieces_and_load() -> None:
    from gctool.bounds import bounds, load_bounds

    items = {b.name: b for b in load_bounds(10, 10, 2, 3)}
    assert items["balanced_load"].value == 5 and items["replication"].value == 5
    items = {b.name: b for b in load_bounds(10, 10, 2, 3, d=5)}
    assert items["given_load"].holds and items["max_m_for_load"].value == 3
    items = {b.name: b for b in load_bounds(10, 10, 2, 3, d=4)}
    assert items["given_load"].holds is False and items["max_m_for_load"].value == 2
    items = {b.name: b for b in load_bounds(8, 12, 1, 1, d=2)}
    assert items["max_m_for_load"].value == 0 and "no m >= 1 works" in items[
        "max_m_for_load"].statement
    for n, k, s, d in itertools.product(range(2, 7), range(1, 7), range(0, 3), range(1, 7)):
        if s < n and d <= k:
            m_max = {b.name: b for b in load_bounds(n, k, s, 1, d=d)}["max_m_for_load"].value
            feasible = [m for m in range(1, 20) if n * d >= k * (s + m)]  # d >= k(s+m)/n
            assert m_max == (max(feasible) if feasible else 0)
    code = design("comm", 6, 2, field="GF(7)", m=2)
    got = {b.name: b for b in bounds(code).bounds}
    assert got["given_load"].value == 4 and got["max_m_for_load"].value == 2
    with pytest.raises(InvalidInput, match="load d"):
        load_bounds(6, 6, 1, 1, d=0)


def test_bound_cli_load_option(runner) -> None:  # type: ignore[no-untyped-def]

    from gctool.cli.main import cli

    res = runner.invoke(cli, ["bound", "-n", "10", "-k", "10", "-s", "2", "-m", "3", "-d", "5",
                              "--json"])
    assert res.exit_code == 0, res.stderr
    got = {b["name"]: b for b in loads(res.stdout)["bounds"]}
    assert got["balanced_load"]["value"] == 5 and got["max_m_for_load"]["value"] == 3


# -- CLI -----------------------------------------------------------------------------------------
def test_design_cli_auto_and_errors(runner, tmp_path) -> None:  # type: ignore[no-untyped-def]

    from gctool.cli.main import cli

    out = tmp_path / "mds.json"
    res = runner.invoke(cli, ["design", "cyclic-mds", "-n", "10", "-s", "3", "--field", "auto",
                              "-o", str(out), "--json"])
    assert res.exit_code == 0, res.stderr
    summary = loads(res.stdout)
    assert summary["field"] == "GF(11)" and summary["report"]["zeros"] == [1, 2, 3]
    assert runner.invoke(cli, ["verify", str(out)]).exit_code == 0
    res = runner.invoke(cli, ["design", "cyclic-mds", "-n", "8", "-s", "2"])
    assert res.exit_code == 2 and res.stdout == ""
    assert "no real cyclic code exists" in res.stderr and len(res.stderr.strip().splitlines()) == 1
    res = runner.invoke(cli, ["design", "cyclic-mds", "-n", "10", "-s", "3", "--field", "GF(13)"])
    assert res.exit_code == 2 and "GF(11)" in res.stderr


def test_comm_cli_design_verify_attack_export(runner, tmp_path) -> None:  # type: ignore[no-untyped-def]

    from gctool.cli.main import cli

    f = tmp_path / "comm.json"
    res = runner.invoke(cli, ["design", "comm", "-n", "6", "-s", "2", "-m", "2", "-o", str(f)])
    assert res.exit_code == 0, res.stderr
    doc = loads(f.read_text())
    assert doc["params"]["m"] == 2 and len(doc["B"][0]) == 12
    assert runner.invoke(cli, ["verify", str(f)]).exit_code == 0
    assert runner.invoke(cli, ["verify", str(f), "-s", "3"]).exit_code == 1
    res = runner.invoke(cli, ["attack", str(f), "--threshold", "--json"])
    assert res.exit_code == 0 and loads(res.stdout)["threshold"] == 3
    res = runner.invoke(cli, ["export", str(f), "-o", "-", "--decoders"])
    assert res.exit_code == 0 and all(loads(res.stdout)["decodable"])


def test_condition_record_switches_to_estimate_when_exact_work_is_large() -> None:
    """Few sets but large systems: the exact worst case would cost ~2e11 flops, so the
    null-space screen (labelled, with its proved bound) is recorded instead of running for
    minutes."""
    from gctool.codes.conditioning import EXACT_LIMIT, EXACT_WORK, worst_condition

    code = design("rs", 200, 2, 300)  # screened instead: 19,900 sets of 2 x 2 null blocks
    assert code.params["worst_condition_method"].startswith("screened")
    small = np.asarray(design("rs", 8, 2, 8).B)
    value, method = worst_condition(small, 2)
    assert method.startswith("exact") and value is not None
    assert 28 <= EXACT_LIMIT and 28 * 6 * 8 * 6 <= EXACT_WORK


@pytest.mark.parametrize("field", ["real", "complex", "GF(13)"])
@pytest.mark.parametrize(("n", "s", "k"), [(6, 1, 6), (12, 2, 12), (12, 3, 7), (12, 3, 2),
                                           (8, 1, 20), (9, 2, 9), (8, 2, 8), (10, 3, 10),
                                           (7, 2, 10), (6, 0, 6)])
def test_rs_says_when_it_is_a_fractional_repetition_code(field: str, n: int, s: int,
                                                          k: int) -> None:
    """With (s + 1) | n (s >= 1) the rs design's rows fall into groups of s + 1 consecutive
    workers, each group's rows exactly proportional (its row classes) with supports disjoint
    from the other groups', and its rank is min(k, n/(s+1)): the design says so in its
    warnings, and the design's JSON report carries them.  Otherwise (the holders' windows
    overlap) it says nothing."""
    from gctool.row_classes import row_classes

    code = design("rs", n, s, k, field=field)
    said = [w for w in code.params.get("warnings", []) if "fractional repetition" in w]
    B = np.asarray(code.B)
    if s >= 1 and n % (s + 1) == 0:
        groups = [list(range(g, g + s + 1)) for g in range(0, n, s + 1)]
        held = [g for g in groups if B[g[0]].any()]
        assert [c for c in row_classes(code) if B[c[0]].any()] == held
        rank = (np.linalg.matrix_rank(np.asarray(code.field.galois()(B.astype(np.int64))))
                if code.field.is_finite else np.linalg.matrix_rank(B))
        assert rank == len(held) == min(k, n // (s + 1))
        assert said == [f"s + 1 = {s + 1} divides n = {n}: each group of {s + 1} consecutive "
                        f"workers holds its own partitions, with equal columns, so the rows "
                        f"of a group are proportional and this rs design is a fractional "
                        f"repetition code in disguise (rank {rank}: one per group holding a "
                        f"partition); 'gctool design frc' builds that code with rows of ones"]
    else:
        assert said == []


def test_design_rs_reports_the_repetition(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The CLI prints the note on stderr with the design's other warnings, and its --json
    report carries it (real rs n = 12, s = 2: groups of 3); none for n = 11."""
    from helpers import run

    out = tmp_path / "rs.json"
    r = run("design", "rs", "-n", "12", "-s", "2", "-o", str(out), "--json")
    assert r.exit_code == 0, r.output
    doc = loads(r.stdout)
    assert any("fractional repetition code in disguise (rank 4" in w
               for w in doc["report"]["warnings"]), doc
    assert "gctool: warning: s + 1 = 3 divides n = 12" in r.stderr
    r = run("design", "rs", "-n", "11", "-s", "2", "-o", str(tmp_path / "b.json"), "--json")
    assert r.exit_code == 0 and "warnings" not in loads(r.stdout)["report"], r.output
