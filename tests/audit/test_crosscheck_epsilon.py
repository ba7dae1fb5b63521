"""ε-thresholds and tolerances whose level is a set's exact error within an ulp (the level
epsilon + tol*k is exact: tests/audit/test_crosscheck_tol*), on tests/oracles.exact_rank_code,
against exact rational least squares.

Found by a hunt over 300 such codes (epsilon at and around every fifth distinct exact error,
tol 0 and 1e-9; exhaustive, auto and bnb): a set whose computed error was the float of the
limit was 'proved' to decode by the decoder's residual bound, evaluated in round-to-nearest
(the square of a square root came out below the error itself): seed 4, the one survivor
[1] with exact error 30991039/3874033 against the level 24999011850183/3125000000000,
threshold 9 for 8; seed 19 (complex), 375/94 against 3.9893616981276594 + 4e-9, 8 for 7."""

from __future__ import annotations

import itertools
import json
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from gctool.algebra.fields import parse_field
from gctool.audit.attack import threshold
from gctool.audit.verify import verify
from gctool.io import write_code
from gctool.model import GradientCode

from helpers import run
from oracles import exact_lstsq_error, exact_rank_code

#: (seed, epsilon, tol, the threshold by exact arithmetic)
CASES = [(4, 7.99968379205856, 0.0, 8), (19, 3.9893616981276594, 1e-9, 7)]


def code_of(seed: int) -> GradientCode:
    B = exact_rank_code(seed)
    return GradientCode(B, parse_field("complex" if np.iscomplexobj(B) else "real"), 0)


def exact_threshold(code: GradientCode, level: Fraction) -> int:
    n, B, T = code.n, np.asarray(code.B), code.targets()
    return next(s for s in range(n + 1) if any(
        exact_lstsq_error(B, tuple(i for i in range(n) if i not in S), T) > level
        for S in itertools.combinations(range(n), s)))


@pytest.mark.parametrize("compiled", ["0", "1"])
@pytest.mark.parametrize(("seed", "epsilon", "tol", "truth"), CASES)
def test_threshold_at_a_level_an_ulp_from_an_error(seed: int, epsilon: float, tol: float,
                                                  truth: int, compiled: str,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GCTOOL_COMPILED", compiled)
    code = code_of(seed)
    level = Fraction(repr(epsilon)) + Fraction(repr(tol)) * code.k
    assert exact_threshold(code, level) == truth
    for method in ("exhaustive", "auto", "bnb"):
        t = threshold(code, epsilon, tol=tol, method=method, jobs=1 + (method == "auto"))
        assert t.exact and t.threshold == truth, method
        S = tuple(t.stragglers or ())
        F = tuple(i for i in range(code.n) if i not in S)
        assert exact_lstsq_error(np.asarray(code.B), F, code.targets()) > level


def test_verify_at_a_limit_an_ulp_below_an_error(tmp_path: Path) -> None:
    """The same set under verify: tol = level / k is a decimal (0.99996047400732), so the
    limit is the level exactly; the one survivor's error is above it."""
    code = code_of(4)
    tol = 7.99968379205856 / 8
    assert Fraction(repr(tol)) * 8 == Fraction("7.99968379205856")
    v = verify(code, 8, tol=tol)
    assert not v.ok and v.counterexample == [0, 2, 3, 4, 5, 6, 7, 8]
    path = tmp_path / "code.json"
    write_code(code, path)
    r = run("verify", str(path), "-s", "8", "--tol", repr(tol))
    assert r.exit_code == 1, r.output
    assert "[0, 2, 3, 4, 5, 6, 7, 8]" in r.output


@pytest.mark.parametrize("method", ["exhaustive", "auto", "bnb"])
def test_no_survivor_fails_at_a_limit_whose_float_is_its_error(method: str,
                                                                 tmp_path: Path) -> None:
    """Every worker holds every partition (k = 65): only the set of all n stragglers fails,
    its error ||t||^2 = 65.  At --tol 0.9999999999999999 the limit is 65 * that decimal,
    exactly below 65, but its float is 65.0: the empty survivor set's error was that float,
    which does not exceed it (threshold None, 'exact'); it is 3."""
    code = GradientCode(np.ones((3, 65)), parse_field("real"), 0)
    tol = 0.9999999999999999
    assert Fraction(repr(tol)) * 65 < 65 and float(Fraction(repr(tol)) * 65) == 65.0
    t = threshold(code, tol=tol, method=method)
    assert t.exact and t.threshold == 3 and t.stragglers == [0, 1, 2]
    assert threshold(code, tol=1.0, method=method).threshold is None  # 65 <= 65: decodes
    path = tmp_path / "ones.json"
    write_code(code, path)
    r = run("attack", str(path), "--threshold", "--tol", repr(tol), "--method", method,
            "--json")
    report = json.loads(r.output)["files"][0]["report"]
    assert r.exit_code == 0 and report["threshold"] == 3, r.output
