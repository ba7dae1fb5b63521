"""verify at scale: every path of the engine against independent brute force (tests/oracles.py).

Brute force = one straggler set at a time: numpy.linalg.lstsq over R/C (same tolerance policy,
squared residual <= tol * k), galois matrix_rank over GF(q), Fractions for --exact.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gctool.algebra.fields import parse_field
from gctool.audit.verify import verify
from gctool.budget import Budget
from gctool.errors import BudgetExceeded, InvalidInput
from gctool.model import GradientCode

from oracles import decodes_gf, decodes_rational, exact_lstsq_error, lstsq_error

TOL = 1e-9
FIELDS = ["real", "real-int", "complex", "GF(2)", "GF(3)", "GF(2^2)", "GF(3^2)", "GF(5)",
          "GF(7)"]


def survivors(n: int, S: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(i for i in range(n) if i not in S)


def oracle(code: GradientCode):  # type: ignore[no-untyped-def]
    """decodes(F) by brute force for the code's field."""
    B = np.asarray(code.B)
    if code.field.is_finite:
        GF = code.field.galois()
        return lambda F: decodes_gf(GF, B, F)
    norms = np.linalg.norm(B, axis=1)
    unit = B / np.where(norms > 0, norms, 1.0)[:, None]  # row scaling keeps the error
    return lambda F: bool(F) and lstsq_error(unit, F) <= TOL * code.k


def exact_oracle(code: GradientCode):  # type: ignore[no-untyped-def]
    """decodes(F) in exact rational arithmetic on the binary floating-point entries."""
    B = np.asarray(code.B)
    return lambda F: bool(F) and exact_lstsq_error(B, F) <= TOL * code.k


def failing_sets(code: GradientCode, s: int, exact: bool = False) -> list[tuple[int, ...]]:
    dec = exact_oracle(code) if exact else oracle(code)
    return [S for S in itertools.combinations(range(code.n), s)
            if not dec(survivors(code.n, S))]


def check_against_brute_force(code: GradientCode, s: int, exact: bool = False,
                              **kw: object) -> None:
    bad = failing_sets(code, s, exact)
    report = verify(code, s, **kw)  # type: ignore[arg-type]
    assert report.ok == (not bad), (report.method, report.reason, bad[:3])
    assert report.verdict == ("ok" if not bad else "fail")
    if bad:
        assert report.counterexample is not None and len(report.counterexample) == s
        assert tuple(report.counterexample) in bad
        if kw.get("method") == "exhaustive":
            assert tuple(report.counterexample) == bad[0]  # lexicographically first
    else:
        assert report.represented == report.total


def random_code(rng: np.random.Generator, field: str, n: int, k: int, density: float
                ) -> GradientCode:
    if field == "real-int":  # small integers: exact rank deficiencies are common
        B = rng.integers(-2, 3, (n, k)).astype(float)
        return GradientCode(np.where(rng.random((n, k)) < density, B, 0), parse_field("real"), 0)
    f = parse_field(field)
    if f.is_finite:
        B = rng.integers(0, f.order, (n, k))
    elif f.kind == "complex":
        B = rng.standard_normal((n, k)) + 1j * rng.standard_normal((n, k))
    else:
        B = rng.standard_normal((n, k))
    B = np.where(rng.random((n, k)) < density, B, 0)
    return GradientCode(B, f, 0)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10**6), st.sampled_from(FIELDS), st.integers(3, 6), st.integers(2, 6),
       st.floats(0.3, 0.9))
def test_random_codes_every_field_every_s(seed: int, field: str, n: int, k: int,
                                          density: float) -> None:
    code = random_code(np.random.default_rng(seed), field, n, k, density)
    for s in range(n):
        check_against_brute_force(code, s)
        check_against_brute_force(code, s, method="exhaustive")


def code_with_left_null(N: np.ndarray, field: str, k: int, rng: np.random.Generator
                        ) -> GradientCode:
    """A code of rank n - d whose left null space is the row space of N (d x n) and whose row
    space contains 1."""
    f = parse_field(field)
    n = N.shape[1]
    d = N.shape[0]
    if f.is_finite:
        GF = f.galois()
        P = GF(N).null_space().T  # (n, n - d): columns y with N y = 0
        M = GF.Random((n - d, n - d), seed=rng)  # random basis change (invertible w.h.p.)
        R = GF.Random((n - d, k), seed=rng)
        R[0] = 1
        B = np.asarray((P @ M @ R).view(np.ndarray))
    else:
        from scipy.linalg import null_space

        P = null_space(N) @ rng.standard_normal((n - d, n - d))
        R = rng.standard_normal((n - d, k))
        R[0] = 1
        B = P @ R
    return GradientCode(B, f, d)


@pytest.mark.parametrize("field", ["real", "GF(7)", "GF(2^3)"])
@pytest.mark.parametrize("pairs", [1, 2])
def test_codes_failing_on_one_or_two_sets(field: str, pairs: int) -> None:
    rng = np.random.default_rng(5)
    n, s = 8, 2
    f = parse_field(field)
    # columns = distinct points of the projective line, so every pair is independent ...
    N = (np.array([[1] * (n - 1) + [0], list(range(n - 1)) + [1]]) if f.is_finite
         else rng.standard_normal((s, n)))
    N[:, 3] = N[:, 1]  # ... except {1, 3}: straggling it fails (unless w_1 = w_3)
    if pairs == 2:
        N[:, 6] = N[:, 4]
    for _ in range(10):  # a random R can make w_1 = w_3 (probability 1/q): redraw
        code = code_with_left_null(N, field, n, rng)
        bad = failing_sets(code, s)
        if bad == [(1, 3), (4, 6)][:pairs]:
            break
    assert bad == [(1, 3), (4, 6)][:pairs]
    for method in ("auto", "exhaustive"):
        for kernel in ("auto", "nullspace", "direct"):
            r = verify(code, s, method=method, kernel=kernel)
            assert not r.ok and r.counterexample == [1, 3], (method, kernel)
    assert verify(code, 1).ok


def test_non_mds_cyclic_code_is_valid_real() -> None:
    # reference §2.1: n = 6, g = 1 + x + x^2 has weight-2 codewords but T_0 = 3
    g = np.array([1.0, 1.0, 1.0, 0, 0, 0])
    code = GradientCode(np.array([np.roll(g, i) for i in range(6)]), parse_field("real"), 2)
    r = verify(code)
    assert r.ok and r.method == "symmetry" and r.reduction is not None
    assert r.reduction["checked"] == 3 and r.reduction["represents"] == 15
    check_against_brute_force(code, 2)
    check_against_brute_force(code, 3)


@pytest.mark.parametrize("field", ["GF(7)", "GF(13)"])
def test_non_bch_cyclic_codes_agree_with_brute_force(field: str) -> None:
    f = parse_field(field)
    p = f.order  # a prime: integers mod p (galois' Poly.Roots would JIT-compile per field)
    alpha = next(a for a in range(2, p) if pow(a, 6, p) == 1 and pow(a, 2, p) != 1 != pow(a, 3, p))
    g = [1]  # coefficients, low degree first: prod (x - z) over the zeros z = alpha^2, alpha^4
    for z in (pow(alpha, 2, p), pow(alpha, 4, p)):  # step 2: no BCH run of length 2
        g = [(lo - z * hi) % p for lo, hi in zip([0, *g], [*g, 0], strict=True)]
    assert g == [1, 1, 1]  # the primitive cube roots of unity: 1 + x + x^2
    coeffs = np.zeros(6, dtype=np.int64)
    coeffs[: len(g)] = g
    B = np.array([np.roll(coeffs, i) for i in range(6)])
    code = GradientCode(B, f, 2)
    for s in range(6):
        check_against_brute_force(code, s)
    assert verify(code, 2).method != "certificate:bch"


def test_ill_conditioned_real_codes_keep_the_direct_decoders_verdict() -> None:
    rng = np.random.default_rng(3)
    for trial in range(6):
        n, s = 8, 3
        N = rng.standard_normal((s, n))
        N[:, 5] = N[:, 2] + 10.0 ** -(3 + trial) * rng.standard_normal(s)  # near-singular
        code = code_with_left_null(N, "real", n, rng)
        B = np.asarray(code.B) * np.logspace(-4, 4, n)[:, None]  # wild row scales
        scaled = GradientCode(B, code.field, s)
        check_against_brute_force(scaled, s, exact=True)
        r = verify(scaled, s)
        d = r.diagnostics
        assert d.max_condition is not None and d.max_condition_stragglers is not None
        assert d.condition_bound is not None and d.condition_bound >= d.max_condition * 0.999
        F = survivors(n, tuple(d.max_condition_stragglers))
        # diagnostics are those of the row-normalised B_F (rows scaled by powers of two to
        # norms in [1/2, 1)), so they do not depend on the wild row scales
        _, e = np.frexp(np.linalg.norm(B, axis=1))
        Bn = np.ldexp(B, -e[:, None])
        assert np.linalg.cond(Bn[list(F)]) == pytest.approx(d.max_condition, rel=1e-6)
        base = verify(GradientCode(np.asarray(code.B), code.field, s), s).diagnostics
        assert base.max_condition is not None
        assert np.linalg.cond(Bn[list(F)]) <= 1.000001 * base.max_condition * 4


def test_ill_conditioned_code_warns() -> None:
    rng = np.random.default_rng(11)
    N = rng.standard_normal((2, 7))
    N[:, 4] = N[:, 1] + 1e-11 * rng.standard_normal(2)
    code = code_with_left_null(N, "real", 7, rng)
    r = verify(code, 2)
    if r.ok:
        assert r.warnings and "ill-conditioned" in r.warnings[0]
    check_against_brute_force(code, 2, exact=True)  # float lstsq is not the truth here


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10**6), st.integers(3, 6), st.integers(2, 5))
def test_exact_rational_mode_matches_fractions(seed: int, n: int, k: int) -> None:
    rng = np.random.default_rng(seed)
    B = np.where(rng.random((n, k)) < 0.6, rng.integers(-3, 4, (n, k)), 0) / 2.0
    code = GradientCode(B, parse_field("real"), 0)
    for s in range(n):
        bad = [S for S in itertools.combinations(range(n), s)
               if not decodes_rational(B, survivors(n, S))]
        for method in ("auto", "exhaustive"):
            r = verify(code, s, exact=True, method=method)
            assert r.ok == (not bad) and r.arithmetic == "rational"
            if bad:
                assert tuple(r.counterexample or ()) in bad


def test_exact_mode_rejects_irrational_and_finite_fields(gf7: GradientCode) -> None:
    with pytest.raises(InvalidInput, match="rational"):
        verify(GradientCode(np.array([[np.pi, 1.0], [1.0, 1.0]]), parse_field("real"), 0),
               exact=True)
    with pytest.raises(InvalidInput, match="always exact"):
        verify(gf7, exact=True)


def test_budget_counts_evaluations_after_reduction(frc6: GradientCode) -> None:
    # one row-class pattern stands for all 15 sets
    assert verify(frc6, 2, budget=Budget(max_sets=1)).ok
    with pytest.raises(BudgetExceeded) as err:
        verify(frc6, 2, budget=Budget(max_sets=3), method="exhaustive")
    text = str(err.value)
    assert "15" in text and "`max_sets`" in text and "`sample`" in text  # the library's terms
    assert "--" not in text and err.value.kind == "sets" and err.value.needed == 15


def test_sample_is_never_ok(crc3: GradientCode, frc6: GradientCode) -> None:
    r = verify(frc6, 2, sample=5, seed=1)
    assert not r.ok and r.verdict == "inconclusive" and not r.exact
    assert r.sample == {"requested": 5, "seed": 1} and r.checked == 5
    again = verify(frc6, 2, sample=5, seed=1, jobs=2)
    assert again.diagnostics == r.diagnostics
    bad = GradientCode(np.kron(np.eye(3), np.ones((2, 2))), parse_field("real"), 1)
    found = verify(bad, 2, sample=200, seed=0)
    assert found.verdict in ("fail",) and found.counterexample is not None
    assert not oracle(bad)(survivors(6, tuple(found.counterexample)))


def test_s_zero_and_full_set_failure(crc3: GradientCode) -> None:
    assert verify(crc3, 0).ok
    broken = GradientCode(np.array([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]]), parse_field("real"), 1)
    r = verify(broken, 1)
    assert not r.ok and r.method == "full-set" and r.counterexample == [0]


def test_bad_arguments(frc6: GradientCode, crc3: GradientCode) -> None:
    with pytest.raises(InvalidInput):
        verify(frc6, 2, method="magic")
    with pytest.raises(InvalidInput):
        verify(frc6, 2, kernel="magic")
    with pytest.raises(InvalidInput):
        verify(frc6, 2, sample=0)
    with pytest.raises(InvalidInput, match="certificate"):
        verify(crc3, 1, method="structural")
    # FRC groups of 3 > s = 2 with disjoint supports: the row-class certificate applies
    assert verify(frc6, 2, method="structural").method == "certificate:classes"


@pytest.mark.parametrize("field", ["real", "GF(7)"])
def test_m_piece_codes_against_brute_force(field: str) -> None:
    from gctool.codes import design

    code = design("comm", n=6, s=2, field=field, m=2)
    T = code.targets()
    B = np.asarray(code.B)
    for s in range(4):
        bad = []
        for S in itertools.combinations(range(6), s):
            F = list(survivors(6, S))
            if code.field.is_finite:
                GF = code.field.galois()
                ok = (np.linalg.matrix_rank(GF(np.vstack([B[F], T])))
                      == np.linalg.matrix_rank(GF(B[F])))
            else:
                A = np.linalg.lstsq(B[F].T, T.T.astype(float), rcond=None)[0]
                ok = float(np.sum((B[F].T @ A - T.T) ** 2)) <= TOL * code.k
            if not ok:
                bad.append(S)
        for method in ("auto", "exhaustive"):
            r = verify(code, s, method=method)
            assert r.ok == (not bad), (s, method)
            if bad:
                assert tuple(r.counterexample or ()) in bad


def test_sample_of_a_space_too_large_to_rank() -> None:
    B = np.kron(np.eye(2), np.ones((50, 50)))  # FRC, n = 100, groups of 50
    code = GradientCode(B, parse_field("real"), 49)
    r = verify(code, sample=40, seed=2)  # C(100, 49) ~ 1e29 > 2^62: independent draws
    assert r.verdict == "inconclusive" and r.checked == 40
    assert verify(code).ok and verify(code).method == "row-classes"


def test_complex_rotation_with_unimodular_scaling() -> None:
    g = np.array([-1, -1j * np.sqrt(3), 1, 0, 0, 0])
    gamma = 1j ** np.arange(6)  # |gamma_i| = 1, exact: cond and ||a|| are orbit invariants
    B = np.array([np.roll(g, i) for i in range(6)]) * gamma[:, None]
    code = GradientCode(B, parse_field("complex"), 2)
    r = verify(code)
    assert r.ok and r.method == "symmetry" and r.reduction and r.reduction["unimodular"]
    assert r.diagnostics.max_condition == pytest.approx(6.7082, rel=1e-4)  # reference §2.1
    check_against_brute_force(code, 3)


def test_rotation_only_up_to_round_off_is_not_used() -> None:
    """exp(1j k) scalings make the rows proportional only up to round-off: the reduction
    cannot be proved, so every set is enumerated (same verdict, same diagnostics)."""
    g = np.array([-1, -1j * np.sqrt(3), 1, 0, 0, 0])
    B = np.array([np.roll(g, i) for i in range(6)]) * np.exp(1j * np.arange(6))[:, None]
    code = GradientCode(B, parse_field("complex"), 2)
    r = verify(code)
    assert r.ok and r.method == "enumeration" and r.reduction is None
    assert r.checked == 15
    assert r.diagnostics.max_condition == pytest.approx(6.7082, rel=1e-4)
    check_against_brute_force(code, 3)


def test_budget_refusal_for_astronomically_many_sets() -> None:
    rng = np.random.default_rng(0)
    B = np.zeros((100, 100))
    for i in range(100):
        B[i, (i + np.arange(51)) % 100] = rng.standard_normal(51)
    with pytest.raises(BudgetExceeded, match="straggler sets needs about .* years"):
        verify(GradientCode(B, parse_field("real"), 50), method="exhaustive")


@pytest.mark.parametrize("spec,kind", [("GF(2^17)", "table"), ("GF(2^24)", "calc")])
def test_large_extension_fields_against_brute_force(spec: str, kind: str) -> None:
    """Tables up to 2^22 elements, polynomial arithmetic above (the oracle is galois')."""
    from gctool.algebra.gf import GFArith

    f = parse_field(spec)
    assert GFArith(f).kind == kind
    rng = np.random.default_rng(1)
    B = np.where(rng.random((5, 4)) < 0.7, rng.integers(0, f.order, (5, 4)), 0)
    code = GradientCode(B, f, 0)
    for s in range(3):
        check_against_brute_force(code, s)


@pytest.mark.parametrize("spec", ["real", "GF(7)", "GF(2^4)"])
def test_class_certificate_quick_rejection_changes_no_statement(spec: str,
                                                                monkeypatch: pytest.MonkeyPatch
                                                                ) -> None:
    """The rejection of two non-proportional rows with one support (before every row is
    classified) gives the statement the full classification gives, on block codes whose rows
    are scaled copies, perturbed copies, or zero."""
    from gctool.audit import certificates

    fld = parse_field(spec)
    top = 7 if fld.is_finite else 3
    seen = set()
    for seed in range(60):
        rng = np.random.default_rng(seed)
        rows = []
        for cols in np.split(np.arange(8), sorted(rng.choice(np.arange(1, 8), 2, replace=False))):
            base = np.zeros(8, dtype=np.int64)
            base[cols] = rng.integers(1, top, size=1 if rng.random() < 0.7 else cols.size)
            for _ in range(int(rng.integers(1, 4))):
                row = base * int(rng.integers(1, top))
                if fld.is_finite:
                    row = np.asarray(fld.galois()(base) * fld.galois()(int(rng.integers(1, top))))
                if rng.random() < 0.1:  # same support, not proportional
                    row = row.copy()
                    row[cols[0]] = row[cols[0]] % (top - 1) + 1
                rows.append(row)
        if rng.random() < 0.3:
            rows.append(np.zeros(8, dtype=np.int64))
        code = GradientCode(np.array(rows)[rng.permutation(len(rows))], fld, 1)
        quick = certificates.class_certificate(code, 1)
        with monkeypatch.context() as m:
            m.setattr(certificates, "_shared_support", lambda *_: False)
            assert certificates.class_certificate(code, 1) == quick
        seen.add(quick is None)
    assert seen == {True, False}  # both outcomes exercised
