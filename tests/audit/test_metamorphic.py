"""Metamorphic properties of the audits over real, complex and GF(q) codes.

Decodability and the optimal error do not change when a row of B is multiplied by a non-zero
number, when B is scaled, or when rows or columns are permuted (straggler sets relabelled);
duplicating a worker can only help; a zero column adds exactly its target to every error.  So
verify, attack (worst case and threshold, every method) and bound must give the same answers
on the transformed code.  Hypothesis runs with a fixed, derandomised profile.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gctool.algebra.fields import parse_field
from gctool.audit.attack import attack, threshold
from gctool.audit.verify import verify
from gctool.bounds import bounds
from gctool.model import GradientCode

from bands import attack_interval
from oracles import exact_lstsq_error

CI = settings(max_examples=8, deadline=None, derandomize=True, database=None)


def random_code(seed: int, field: str, n: int, k: int) -> GradientCode:
    """A sparse random code: real/complex Gaussian or small-integer entries, or GF(q)."""
    rng = np.random.default_rng(seed)
    f = parse_field(field)
    load = int(rng.integers(2, k + 1))
    mask = np.zeros((n, k), dtype=bool)
    for i in range(n):
        mask[i, rng.choice(k, size=load, replace=False)] = True
    if f.is_finite:
        B = rng.integers(1, f.order, (n, k)) * mask
    elif seed % 3 == 0:  # small integers: exact rank deficiencies
        B = rng.integers(-2, 3, (n, k)) * mask.astype(float)
    else:
        B = rng.standard_normal((n, k)) * mask
        if field == "complex":
            B = B + 1j * rng.standard_normal((n, k)) * mask
    return GradientCode(B, f, 0)


def answers(code: GradientCode, s: int) -> tuple[bool, int | None, float]:
    """(verify verdict at s, exact threshold, worst error at s) of a code."""
    v = verify(code, s)
    t = threshold(code)
    w = attack(code, s)
    assert t.exact and w.exact
    return v.ok, t.threshold, float(w.raw_error or 0.0)


def worst_interval(code: GradientCode, s: int) -> tuple[float, float]:
    """Where an exact worst error of s stragglers of a real or complex code may lie in float64:
    at least the low end of the true worst set's interval, at most the high end of any set's,
    each set's interval the error model attack states for it around its exact rational error
    (tests/bands.py).  A fixed relative tolerance flakes on an ill-conditioned draw and hides
    errors on a well-conditioned one."""
    B, n = np.asarray(code.B), code.n
    bands = []
    for S in itertools.combinations(range(n), s):
        e = exact_lstsq_error(B, tuple(i for i in range(n) if i not in S))
        bands.append((e, attack_interval(code, S, e)))
    top = max(bands, key=lambda b: b[0])
    return top[1][0], max(hi for _, (_, hi) in bands)


def check_error(code: GradientCode, s: int, error: float, base: float) -> None:
    """A worst error of s stragglers: over GF(q) the same as the base code's; over R/C within
    the code's own :func:`worst_interval` (a transformed code is checked against its own exact
    errors: scaling by 10^u rounds its entries)."""
    if code.field.is_finite:
        assert error == base
    else:
        lo, hi = worst_interval(code, s)
        assert lo <= error <= hi, (error, lo, hi)


fields = st.sampled_from(["real", "real", "complex", "GF(5)", "GF(2^2)"])
shapes = st.tuples(st.integers(4, 6), st.integers(2, 5))


@CI
@given(st.integers(0, 10**6), fields, shapes, st.data())
def test_row_scaling_and_permutations_change_nothing(seed: int, field: str,
                                                     shape: tuple[int, int],
                                                     data: st.DataObject) -> None:
    n, k = shape
    code = random_code(seed, field, n, k)
    s = data.draw(st.integers(1, n - 1))
    base = answers(code, s)
    check_error(code, s, base[2], base[2])
    rng = np.random.default_rng(seed + 1)
    B = np.asarray(code.B)
    if code.field.is_finite:
        GF = code.field.galois()
        c = GF(rng.integers(1, code.field.order, n))
        scaled = np.asarray((GF(B) * c[:, None]).view(np.ndarray))
        variants = [scaled]
    else:
        u = data.draw(st.lists(st.integers(-150, 150), min_size=n, max_size=n))
        v = data.draw(st.integers(-150, 150))
        variants = [B * 10.0 ** np.array(u, dtype=float)[:, None], B * 10.0**v]
    rows, cols = rng.permutation(n), rng.permutation(k)
    variants += [B[rows], B[:, cols]]
    for V in variants:
        variant = GradientCode(V, code.field, 0)
        got = answers(variant, s)
        assert got[0] == base[0] and got[1] == base[1], (base, got)
        check_error(variant, s, got[2], base[2])


@CI
@given(st.integers(0, 10**6), fields, shapes)
def test_duplicate_worker_and_zero_column(seed: int, field: str,
                                          shape: tuple[int, int]) -> None:
    n, k = shape
    code = random_code(seed, field, n, k)
    B = np.asarray(code.B)
    t = threshold(code).threshold
    dup = GradientCode(np.vstack([B, B[:1]]), code.field, 0)
    t_dup = threshold(dup).threshold
    assert t is None or t_dup is None or t_dup >= t  # one more worker can only help
    if code.field.is_finite:
        return
    zero = GradientCode(np.hstack([B, np.zeros((n, 1))]), code.field, 0)
    for s in (0, 1, n - 1):  # the new target is lost: every exact error grows by exactly 1,
        # and each code's worst error lies within the interval of its own exact errors
        e = attack(code, s).raw_error or 0.0
        e0 = attack(zero, s).raw_error or 0.0
        (lo, hi), (lo0, hi0) = worst_interval(code, s), worst_interval(zero, s)
        assert lo <= e <= hi and lo0 <= e0 <= hi0, (s, e, e0, lo, hi, lo0, hi0)
    assert threshold(zero).threshold == 0


@CI
@given(st.integers(0, 10**6), st.sampled_from(["real", "complex", "GF(3)"]), shapes)
def test_every_method_and_jobs_agree_with_exhaustive(seed: int, field: str,
                                                     shape: tuple[int, int]) -> None:
    n, k = shape
    code = random_code(seed, field, n, k)
    s = max(1, n // 2)
    ref = attack(code, s, method="exhaustive")
    finite = code.field.is_finite
    lo, hi = (0.0, 0.0) if finite else worst_interval(code, s)
    assert finite or lo <= float(ref.raw_error or 0) <= hi, (ref.raw_error, lo, hi)
    for method in ("auto", "bnb", "greedy") + (("milp",) if field != "GF(3)" else ()):
        r = attack(code, s, method=method, time_limit=20)
        err = float(r.raw_error or 0)
        if r.exact:
            assert err == ref.raw_error if finite else lo <= err <= hi, (method, err, lo, hi)
        elif finite:  # heuristic: a lower bound, never above the true worst
            assert err <= float(ref.raw_error or 0), method
        else:  # a heuristic's set is real: its error is that set's, within the model
            assert r.stragglers is not None, method
            S = tuple(r.stragglers)
            B = np.asarray(code.B)
            exact = exact_lstsq_error(B, tuple(i for i in range(n) if i not in S))
            slo, shi = attack_interval(code, S, exact)
            assert slo <= err <= shi, (method, S, err, float(exact))
    tref = threshold(code, method="exhaustive").threshold
    methods = ("auto", "bnb", "elementary") + (("milp",) if field != "GF(3)" else ())
    for method in methods:
        r = threshold(code, method=method, time_limit=20)
        if r.exact:
            assert r.threshold == tref, method
    assert verify(code, s, method="exhaustive").ok == verify(code, s).ok


def test_jobs_do_not_change_answers() -> None:
    code = random_code(4, "real", 9, 6)
    for s in (2, 4):
        one, two = attack(code, s, jobs=1), attack(code, s, jobs=2)
        assert one.raw_error == pytest.approx(two.raw_error, rel=1e-12)
        assert one.stragglers == two.stragglers
        assert verify(code, s, jobs=1).ok == verify(code, s, jobs=2).ok
    assert threshold(code, jobs=2).threshold == threshold(code).threshold


@CI
@given(st.integers(0, 10**6), fields, shapes)
def test_verify_threshold_and_bound_agree(seed: int, field: str,
                                          shape: tuple[int, int]) -> None:
    n, k = shape
    code = random_code(seed, field, n, k)
    t = threshold(code).threshold
    for s in range(n):
        assert verify(code, s).ok == (t is None or t > s), s
    b = bounds(code, s=max(0, (n if t is None else t) - 1))
    assert b.code is not None
    rank_finding = any("rank(B)" in x for x in b.findings)
    assert not rank_finding  # s = T - 1 is tolerated, so no rank finding may say otherwise
    by_rank = next(x for x in b.bounds if x.name == "threshold_by_rank")
    if t is not None and "not a bound" not in by_rank.statement:
        assert t <= n - b.code["rank"] + 1
