"""``bound``'s numbers against brute force on small codes (tests/hunt_oracles.py: exact
rational least squares over R/C, finite-field tables over GF(q)).

* Codes of no scheme (zero, repeated and scaled rows, zero columns, wide codes; real, complex,
  GF(5), GF(7), GF(2^3)): the rank of B; T_0 <= the replication and rank rows (unless the rank
  row says it is not a bound for this code); the largest tolerated s <= ``max_s_for_load``; a
  rank finding only when s stragglers really break the code; every row of the approximate table
  that has the code's value: that value (worst and mean error at s, the iid expectation, T_eps)
  equals brute force, and lower/upper/exact bounds hold against it.
* Designed codes whose structure triggers the closed forms, the spectral and the T_eps rows
  (bibd, graph, frc, uncoded, expander, soft-bibd, cyclic, bgc, sbc), with rows scaled by
  constants and rows and columns permuted (the bounds' quantities do not change), at error
  levels eps in {0, 1/3, 1, 5/2}.
* hetero: the recorded expected one-step error and the table's value against the expectation
  over every arrival pattern, in Fractions; the one-step weights are unbiased.

A hunt over 1,440 random codes, 300 designed ones and 253 hetero designs found no wrong value.
"""

from __future__ import annotations

import itertools
import json
import math
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from hunt_oracles import errors_by_set, random_code, rank_gf, threshold

import gctool
from gctool.codes import design
from gctool.errors import DesignError, GctoolError
from gctool.io import code_to_doc, dumps_document
from gctool.model import GradientCode

from helpers import run
from oracles import rational_rank

FIELDS = ("real", "real", "complex", "GF(7)", "GF(5)", "GF(2^3)")
EPSILONS = (Fraction(0), Fraction(1, 3), Fraction(1), Fraction(5, 2))


def _rank(code: GradientCode) -> int:
    B = np.asarray(code.B)
    if code.field.is_finite:
        return rank_gf(code.field, B)
    rows = [[Fraction(float(x)) for x in r.real] + [Fraction(float(x)) for x in np.imag(r)]
            for r in B]
    if np.iscomplexobj(B):  # the complex row space is the real span of b and i b
        rows += [[-Fraction(float(x)) for x in r.imag] + [Fraction(float(x)) for x in r.real]
                 for r in B]
        return rational_rank(rows) // 2
    return rational_rank(rows)


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-7 * max(1.0, abs(b))


def _table_wrong(rows: list[dict[str, Any]], errors: dict[tuple[int, ...], Fraction],
                 n: int, s: int, p: float, T: int | None) -> list[object]:
    """Rows of the approximate table whose code value differs from brute force, or whose
    bound does not hold against it (T: the brute-force T_eps)."""
    at_s = [e for S, e in errors.items() if len(S) == s]
    ref = {"worst": float(max(at_s)), "mean": float(sum(at_s, Fraction(0)) / math.comb(n, s)),
           "expected": float(sum(e * Fraction(p) ** len(S) * (1 - Fraction(p)) ** (n - len(S))
                                 for S, e in errors.items()))}
    wrong: list[object] = []
    for b in rows:
        if "kind" not in b:
            continue
        if b["quantity"].startswith("threshold"):
            if b["actual"] != T:
                wrong.append((b["name"], b["actual"], T))
            value = T
        else:
            value = ref.get(b["quantity"].split()[0])
            if value is None:
                continue
            if b["actual"] is not None and not _close(b["actual"], value):
                wrong.append((b["name"], b["actual"], value))
        if value is None:
            continue
        if ((b["kind"] == "lower" and b["value"] > value + 1e-9)
                or (b["kind"] == "upper" and b["value"] < value - 1e-9)
                or (b["kind"] == "exact" and not _close(b["value"], value))):
            wrong.append((b["name"], b["kind"], b["value"], value))
    return wrong


def _random_wrong(seed: int) -> list[object]:
    rng = np.random.default_rng(seed)
    code = random_code(rng, FIELDS)
    n, s = code.n, code.s
    errors = errors_by_set(code)
    T0 = threshold(errors, n)
    doc = gctool.bound(code).to_dict()
    row = {b["name"]: b for b in doc["bounds"]}
    wrong: list[object] = []
    if doc["code"]["rank"] != _rank(code):
        wrong.append(("rank", doc["code"]["rank"], _rank(code)))
    by_rank = row["threshold_by_rank"]
    if T0 is not None and (T0 > row["threshold_by_replication"]["value"] or (
            T0 > by_rank["value"] and "not a bound" not in by_rank["statement"])):
        wrong.append(("T_0", T0, row["threshold_by_replication"]["value"], by_rank["value"]))
    if (n if T0 is None else T0 - 1) > row["max_s_for_load"]["value"]:
        wrong.append(("max_s_for_load", T0, row["max_s_for_load"]["value"]))
    if any("tolerates" in f for f in doc["findings"]) and (T0 is None or T0 > s):
        wrong.append(("finding", T0, doc["findings"]))
    return wrong + _table_wrong(doc["bounds"], errors, n, s, s / n, T0)


@pytest.mark.parametrize("block", range(2))
def test_bound_of_random_codes(block: int) -> None:
    wrong = {seed: w for seed in range(30 * block, 30 * block + 30)
             if (w := _random_wrong(seed))}
    assert wrong == {}


def _designed(rng: np.random.Generator) -> GradientCode | None:
    field = str(rng.choice(["real", "complex"]))
    which = int(rng.integers(0, 9))
    n = int(rng.integers(3, 8))
    try:
        code = [
            lambda: design("bibd", design="fano", field=field),
            lambda: design("graph", vertices=n, field=field),
            lambda: design("frc", n=6, s=int(rng.choice([0, 1, 2, 5])), field=field, seed=1),
            lambda: design("uncoded", n=n - 1, field=field),
            lambda: design("expander", graph="random-regular", vertices=6, d=3, field=field,
                           seed=int(rng.integers(100))),
            lambda: design("soft-bibd", n=7, k=7, field=field, seed=int(rng.integers(100))),
            lambda: design("cyclic", n=n - 1, s=int(rng.integers(0, n - 1)), field=field,
                           seed=2),
            lambda: design("bgc", n=6, k=int(rng.integers(3, 8)), field=field,
                           seed=int(rng.integers(100))),
            lambda: design("sbc", n=6, k=6, field=field, seed=int(rng.integers(100))),
        ][which]()
    except DesignError:
        return None
    B = np.asarray(code.B).copy()
    if rng.random() < 0.5:  # scaled rows: every optimal-decoding error stays the same
        scale = rng.choice([-2.0, 0.5, 3.0, -1.0], size=B.shape[0])
        B = B * (scale * 1j if np.iscomplexobj(B) and rng.random() < 0.5 else scale)[:, None]
    if rng.random() < 0.5:
        B = B[rng.permutation(B.shape[0])][:, rng.permutation(B.shape[1])]
    return GradientCode(B, code.field, int(rng.integers(0, B.shape[0])))


def _designed_wrong(seed: int) -> list[object]:
    rng = np.random.default_rng(1000 + seed)
    code = _designed(rng)
    if code is None:
        return []
    eps = EPSILONS[int(rng.integers(0, len(EPSILONS)))]
    errors = errors_by_set(code)
    doc = gctool.bound(code, epsilon=eps).to_dict()
    T = threshold(errors, code.n, eps)
    return _table_wrong(doc["bounds"], errors, code.n, code.s, code.s / code.n, T)


def test_bound_of_designed_codes_scaled_and_permuted() -> None:
    wrong = {seed: w for seed in range(12) if (w := _designed_wrong(seed))}
    assert wrong == {}


def test_closed_forms_appear_and_match() -> None:
    """The rows the designed hunt checks are really there: the uniform-Gram closed form of
    Fano with permuted rows and columns (every set of s has error s(k-l)/(k-l+l(n-s))), the
    spectral bound, and T_eps beside the threshold rows.  (Rows scaled by different constants
    keep every error but lose the uniform Gram matrix: no closed form row then.)"""
    code = design("bibd", design="fano")
    rng = np.random.default_rng(5)
    B = np.asarray(code.B)[rng.permutation(7)][:, rng.permutation(7)]
    scaled = GradientCode(B, code.field, 3)
    doc = gctool.bound(scaled, epsilon=1).to_dict()
    row = {b["name"]: b for b in doc["bounds"]}
    assert row["closed_form_worst_error"]["value"] == pytest.approx(3 * 2 / (2 + 4))
    assert row["closed_form_worst_error"]["holds"] is True
    assert row["spectral_error_ub"]["holds"] is True
    errors = errors_by_set(scaled)
    T = threshold(errors, 7, Fraction(1))
    assert row["threshold_ub"]["actual"] == T == 4  # 3 stragglers cost exactly 1, not above
    assert _table_wrong(doc["bounds"], errors, 7, 3, 3 / 7, T) == []


def test_bound_cli_matches_library(tmp_path: Any) -> None:
    """``gctool bound FILE --json`` reports the library's rows (one random code per field)."""
    for seed in (2, 5, 11):
        code = random_code(np.random.default_rng(seed), FIELDS)
        path = tmp_path / f"c{seed}.json"
        path.write_text(dumps_document(code_to_doc(code)))
        r = run("bound", str(path), "--json")
        assert r.exit_code in (0, 1), r.stderr
        report = json.loads(r.stdout)["files"][0]["report"]
        assert report["bounds"] == gctool.bound(code).to_dict()["bounds"]


def test_hetero_expected_error_by_every_arrival_pattern() -> None:
    checked = 0
    for seed in range(40):
        rng = np.random.default_rng(seed)
        n, k = int(rng.integers(2, 6)), int(rng.integers(1, 6))
        p = [float(x) for x in rng.choice([0.0, 0.1, 0.25, 0.5, 0.75, 1.0], size=n)]
        try:
            code = design("hetero", p=p, k=k, load=int(rng.integers(1, k + 1)))
        except GctoolError:  # e.g. every p_i = 1
            continue
        checked += 1
        W = np.asarray(code.B)
        expected, mean = Fraction(0), [Fraction(0)] * k
        for arrived in itertools.product([0, 1], repeat=n):
            prob = math.prod((1 - Fraction(p[i])) if arrived[i] else Fraction(p[i])
                             for i in range(n))
            c = [sum((Fraction(float(W[i, j])) for i in range(n) if arrived[i]), Fraction(0))
                 for j in range(k)]
            expected += prob * sum((x - 1) ** 2 for x in c)
            mean = [mj + prob * cj for mj, cj in zip(mean, c, strict=True)]
        row = {b["name"]: b for b in gctool.bound(code).to_dict()["bounds"]}
        assert _close(code.params["expected_error"], float(expected)), seed
        assert _close(row["hetero_expected_error"]["actual"], float(expected)), seed
        for j in range(k):  # unbiased wherever some holder can arrive
            if any(W[i, j] != 0 and p[i] < 1 for i in range(n)):
                assert mean[j] == pytest.approx(1, abs=1e-12), (seed, j)
    assert checked >= 25


def test_bound_of_a_code_refuses_m() -> None:
    """``gctool.bound(code, m=2)`` reported the bounds of the code's own m = 1 and dropped
    m = 2 silently (``bound FILE -m 2`` is refused); the code's own m is what its file has."""
    from gctool.errors import InvalidInput

    code = design("frc", n=6, s=2)
    with pytest.raises(InvalidInput, match="`m`"):
        gctool.bound(code, m=2)
    comm = design("comm", n=5, s=1, m=2, field="GF(5)")
    assert gctool.bound(comm).m == 2
