"""Decoders whose vectors or errors overflow float64, against exact rational brute force.

* Optimal decoder: B = [[1e-300, 0], [1e-300, 1e-309], [1, 0], [0, 1]] (every row normal)
  decodes every set of one straggler exactly (error 0), but straggling [3] needs a
  coefficient of about 1e309 on row 1: its decoder norm is inf.  The largest decoder of verify
  is that set (inf), never a smaller finite one (it was 6.4e299 at [0]: inf was dropped as
  'not computed'); the verdicts follow the exact errors.
* Fixed decoder: rows of 1e308 whose weighted sum cancels exactly.  Summed in float64 the
  full set's error came out inf (exact: 0), so ``attack -s 0`` said inf and every threshold
  method said 0, exact (truth 1); bnb's bound was nan and pruned the failing branch.  Now an
  error whose terms overflow is computed in scaled units and decided exactly near the limit.
"""

from __future__ import annotations

import itertools
import json
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import gctool
from gctool.decode import Decoder
from gctool.errors import InvalidInput
from gctool.exactls import vector_error
from gctool.io import write_code

from corpus import code_of
from helpers import run
from oracles import exact_lstsq_error

#: the optimal decoder's overflow (ux's note, 12:40)
B1 = np.array([[1e-300, 0.0], [1e-300, 1e-309], [1.0, 0.0], [0.0, 1.0]])
#: the fixed decoder's: weights 1 on rows 0-4, the 1e308 rows cancel exactly in the full set
B2 = np.array([[1e308, 0.0], [1e308, 0.0], [-1e308, 0.0], [-1e308, 0.0], [1.0, 1.0],
               [0.5, 0.5]])
W2 = np.array([[1.0, 1.0, 1.0, 1.0, 1.0, 0.0]])
FLOAT_MAX = Fraction(np.finfo(np.float64).max)


def optimal_errors(B: np.ndarray) -> dict[tuple[int, ...], Fraction]:
    n = B.shape[0]
    return {S: exact_lstsq_error(B, tuple(i for i in range(n) if i not in S))
            for s in range(n + 1) for S in itertools.combinations(range(n), s)}


def fixed_errors(B: np.ndarray, W: np.ndarray) -> dict[tuple[int, ...], Fraction]:
    n = B.shape[0]
    T = np.ones((1, B.shape[1]))
    out = {}
    for s in range(n + 1):
        for S in itertools.combinations(range(n), s):
            alive = np.ones(n, dtype=bool)
            alive[list(S)] = False
            out[S] = vector_error(W[:, alive], B[alive], T)
    return out


def threshold_of(errs: dict[tuple[int, ...], Fraction], limit: Fraction) -> int | None:
    return next((s for s in range(max(map(len, errs)) + 1)
                 if any(e > limit for S, e in errs.items() if len(S) == s)), None)


def as_float(e: Fraction) -> float:
    return float("inf") if e > FLOAT_MAX else float(e)


@pytest.mark.parametrize("compiled", ["0", "1"])
def test_an_overflowing_decoder_is_the_largest(compiled: str,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GCTOOL_COMPILED", compiled)
    errs = optimal_errors(B1)
    limit = Fraction(1, 10**9) * 2
    assert all(errs[(i,)] == 0 for i in range(4)) and threshold_of(errs, limit) == 2
    code = code_of(B1, 1)
    for method, kernel, jobs in (("auto", "auto", 1), ("exhaustive", "nullspace", 2),
                                 ("exhaustive", "direct", 1), ("exhaustive", "nullspace", 1)):
        v = gctool.verify(code, 1, method=method, kernel=kernel, jobs=jobs)
        assert v.ok and v.exact, (method, kernel)
        d = v.diagnostics
        assert d.max_decoder_norm == np.inf and d.max_decoder_norm_stragglers == [3], (
            method, kernel, d.max_decoder_norm, d.max_decoder_norm_stragglers)
    for s in (1, 2):
        a = gctool.attack(code, s, method="exhaustive")
        assert a.exact and as_float(errs[tuple(a.stragglers)]) == pytest.approx(
            float(max(e for S, e in errs.items() if len(S) == s)), abs=1e-12)
    for method in ("auto", "exhaustive", "bnb"):
        t = gctool.threshold(code, method=method)
        assert t.exact and t.threshold == 2 and errs[tuple(t.stragglers)] > limit, method
    one = Decoder(code).evaluate(np.array([[0, 1, 2]]))  # the set itself: its norm is inf
    assert one.ok[0] and one.norm[0] == np.inf


def test_the_cli_names_the_overflowing_decoder(tmp_path: Path) -> None:
    f = tmp_path / "b1.json"
    write_code(code_of(B1, 1), f)
    res = run("verify", str(f), "--method", "exhaustive")
    assert res.exit_code == 0 and "largest decoder     inf  (stragglers [3])" in res.stdout
    doc = json.loads(run("verify", str(f), "--json").stdout)["files"][0]["report"]
    assert doc["diagnostics"]["max_decoder_norm_stragglers"] == [3]
    assert doc["diagnostics"]["max_decoder_norm"] is None  # JSON has no inf


def test_a_fixed_decoder_error_that_overflows_in_float64_is_exact() -> None:
    errs = fixed_errors(B2, W2)
    limit = Fraction(1, 10**9) * 2
    assert errs[()] == 0 and threshold_of(errs, limit) == 1
    code = code_of(B2, 1)
    for s in range(3):
        a = gctool.attack(code, s, decoder="fixed", weights=W2, method="exhaustive")
        worst = max(e for S, e in errs.items() if len(S) == s)
        assert a.exact and a.error == as_float(worst), s
        assert as_float(errs[tuple(a.stragglers)]) == as_float(worst), s
    for method in ("auto", "exhaustive", "bnb", "greedy"):
        t = gctool.threshold(code, decoder="fixed", weights=W2, method=method)
        assert t.threshold == 1 and errs[tuple(t.stragglers)] > limit, method
        assert t.exact or method == "greedy", method
    with pytest.raises(InvalidInput, match="overflow float64"):  # the MILP refuses
        gctool.threshold(code, decoder="fixed", weights=W2, method="milp")


@pytest.mark.parametrize("seed", range(12))
def test_fixed_weights_on_huge_rows_against_brute_force(seed: int) -> None:
    """Random integer codes with half their rows times 1e200 .. 8e307 and integer weights
    (sometimes times 1e100 or 1e300): attack -s (exhaustive) and every threshold method vs
    exact Fractions (errors beyond float64 are inf, tied)."""
    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(4, 7)), int(rng.integers(1, 4))
    B = rng.integers(-2, 3, (n, k)).astype(float)
    B[rng.random(n) < 0.5] *= rng.choice([1e200, 1e300, 8e307])
    B[np.all(B == 0, axis=1), 0] = 1.0
    W = rng.integers(-2, 3, (1, n)).astype(float) * rng.choice([1.0, 1e100, 1e300])
    errs = fixed_errors(B, W)
    code = code_of(B, 1)
    for s in range(n + 1):
        a = gctool.attack(code, s, decoder="fixed", weights=W, method="exhaustive")
        worst = max(e for S, e in errs.items() if len(S) == s)
        got = errs[tuple(a.stragglers)]
        assert a.exact and as_float(got) == pytest.approx(as_float(worst), rel=1e-9), s
    thr = threshold_of(errs, Fraction(1, 10**9) * k)
    for method in ("auto", "exhaustive", "bnb", "milp"):
        try:
            t = gctool.threshold(code, decoder="fixed", weights=W, method=method)
        except InvalidInput as e:  # the MILP's refusal of a quadratic form beyond float64
            assert method == "milp" and "overflow float64" in str(e)
            continue
        assert not t.exact or t.threshold == thr, method
        assert t.stragglers is None or errs[tuple(t.stragglers)] > Fraction(1, 10**9) * k


def test_fixed_overflow_cli_agrees(tmp_path: Path) -> None:
    f = tmp_path / "b2.json"
    write_code(code_of(B2, 1), f)
    w = ",".join(str(x) for x in W2[0])
    res = run("attack", str(f), "--threshold", "--decoder", "fixed", "--weights", w, "--json")
    doc = json.loads(res.stdout)["files"][0]["report"]
    assert doc["threshold"] == 1 and doc["exact"] and doc["stragglers"] == [0]
    res = run("attack", str(f), "-s", "0", "--decoder", "fixed", "--weights", w, "--json")
    doc = json.loads(res.stdout)["files"][0]["report"]
    assert res.exit_code == 0 and doc["error"] == 0.0 and doc["exact"]


@pytest.mark.parametrize("seed", range(6))
def test_rows_scaled_by_extreme_powers_of_two_change_no_verdict(seed: int) -> None:
    """Rows times 2^e, |e| from 400 to 1000 (exact: the row spaces and every error are B's):
    verify's verdict, attack's worst error and every exact threshold are unchanged (real and
    complex codes, n 5-12; a hunt of 400 such codes found no difference)."""
    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(5, 13)), int(rng.integers(2, 7))
    B = rng.integers(-3, 4, (n, k)).astype(float)
    if seed % 2:
        B = B + 1j * rng.integers(-2, 3, (n, k))
    B[np.all(B == 0, axis=1), 0] = 1
    S = B.copy()
    for i in range(n):
        top = np.log2(np.max(np.abs(B[i])))
        S[i] = B[i] * 2.0 ** int(rng.choice([-1, 1]) * min(rng.integers(400, 1000), 1019 - top))
    field = "complex" if seed % 2 else "real"
    plain, big = code_of(B, 1, field), code_of(S, 1, field)
    s = int(rng.integers(1, n - 1))
    for method, kernel in (("auto", "auto"), ("exhaustive", "nullspace"),
                           ("exhaustive", "direct")):
        a, b = (gctool.verify(c, s, method=method, kernel=kernel) for c in (plain, big))
        assert (a.ok, a.exact) == (b.ok, b.exact), (method, kernel)
        if method == "exhaustive":
            assert a.counterexample == b.counterexample
    for method in ("exhaustive", "bnb"):
        a, b = (gctool.attack(c, s, method=method) for c in (plain, big))
        assert a.exact and b.exact and b.raw_error == pytest.approx(a.raw_error, rel=1e-9,
                                                                     abs=1e-12)
    for method in ("exhaustive", "auto", "bnb"):
        a, b = (gctool.threshold(c, method=method) for c in (plain, big))
        assert a.exact == b.exact and (not a.exact or a.threshold == b.threshold), method
