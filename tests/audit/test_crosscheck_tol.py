"""The tolerance rule at its limit: a set decodes when its exact error is at most tol * k
exactly, tol the decimal the user typed (0.3 is 3/10, not the float 0.29999999999999998890);
an error exceeds epsilon when it is above epsilon + tol * k, exactly (gctool.numerics).

Every verdict, threshold and witness is checked against brute force in exact Fractions
(tests/oracles.exact_lstsq_error) on codes whose errors tie with the limit: the 7 x 4 code
found by the audit (straggling [3, 5, 6] leaves exactly 6/5 = 0.3 * 4, which the float limit
float(0.3) * 4 = 1.19999999999999995559 puts outside), and seeded small codes whose errors are
dyadic or decimal ties.  Verify, attack -s, attack's single set, the threshold (every method,
with and without epsilon, --normalize k), jobs 1/2, compiled kernels on/off, library and CLI
must all give the exact rule's answer."""

from __future__ import annotations

import itertools
import json
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import gctool
from gctool.decode import Decoder
from gctool.errors import InvalidInput
from gctool.exactls import Undecided
from gctool.io import write_code
from gctool.numerics import exact_limit, level_tol, limit_bracket, on_side, typed

from corpus import code_of
from helpers import run
from oracles import exact_lstsq_error

#: the audit's code (10:42): exact errors 6/5 at [3, 4, 5] and [3, 5, 6], 4/3 at [3, 4, 5, 6]
B7 = np.array([[-4, -2, -2, 0], [-256, -128, -128, 0],
               [-16384.03125, -8192.015625, -8192.015625, 0],
               [-262144.46875, -131072.25, -131072.28125, -0.03125],
               [2, 1, 0, 0], [-4, 0, 4, 4], [1, 1, -1, 1]])
#: a hair below 3/10: the tie sets then fail (library only: a Fraction or decimal string)
BELOW = Fraction(3, 10) - Fraction(1, 10**25)
#: attack's reason when every set of the size decodes (its verdict; ``ok`` is the exit status)
DECODES = "every straggler set of this size still decodes"


def exact_errors(B: np.ndarray) -> dict[tuple[int, ...], Fraction]:
    n = B.shape[0]
    return {S: exact_lstsq_error(B, tuple(i for i in range(n) if i not in S))
            for s in range(n + 1) for S in itertools.combinations(range(n), s)}


def truth(errs: dict[tuple[int, ...], Fraction], limit: Fraction
          ) -> tuple[dict[int, tuple[int, ...] | None], int | None]:
    """Per s the lexicographically first failing s-set (None: all decode), and the threshold
    (fewest stragglers with an error above ``limit``)."""
    first: dict[int, tuple[int, ...] | None] = {}
    for S in sorted(errs, key=lambda S: (len(S), S)):
        first.setdefault(len(S), None)
        if first[len(S)] is None and errs[S] > limit:
            first[len(S)] = S
    sizes = [s for s, S in first.items() if S is not None]
    return first, min(sizes) if sizes else None


ERR7 = exact_errors(B7)


def test_the_rule_itself() -> None:
    assert typed(0.3) == Fraction(3, 10) and typed("0.3") == typed(Fraction(3, 10))
    assert exact_limit(4, 0.3) == Fraction(6, 5) == max(e for S, e in ERR7.items()
                                                        if len(S) == 3)
    lo, hi = limit_bracket(Fraction(6, 5))
    assert Fraction(lo) < Fraction(6, 5) < Fraction(hi) and np.nextafter(lo, 2) == hi
    assert limit_bracket(Fraction(1, 2)) == (0.5, 0.5)
    # an exact error above the limit whose nearest float is the limit's goes one float up
    above = Fraction(6, 5) + Fraction(1, 10**30)
    assert float(above) == 1.2 and on_side(above, Fraction(6, 5)) > 1.2
    assert on_side(Fraction(6, 5), Fraction(6, 5)) == 1.2
    assert level_tol(0.1, 0.8, 4) * 4 == Fraction(6, 5) and level_tol(0.1, 0.0, 4) == 0.1


#: (tol, compiled): the float and the hair-below tolerance on both routes; the same 0.3 typed as a
#: decimal string and as a Fraction (read before any kernel runs) on the compiled route
EVERYWHERE = {"float-0": (0.3, "0"), "float-1": (0.3, "1"), "below-0": (BELOW, "0"),
              "below-1": (BELOW, "1"), "str-1": ("0.3", "1"), "fraction-1": (Fraction(3, 10), "1")}


@pytest.mark.parametrize("tol,compiled", EVERYWHERE.values(), ids=EVERYWHERE.keys())
def test_the_audit_code_against_brute_force_everywhere(
        tol: object, compiled: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GCTOOL_COMPILED", compiled)
    limit = typed(tol) * 4  # type: ignore[arg-type]
    first, thr = truth(ERR7, limit)
    code = code_of(B7, 3)
    for s in (2, 3, 4):
        for method, kernel, jobs in (("auto", "auto", 1), ("exhaustive", "nullspace", 2),
                                     ("exhaustive", "direct", 1)):
            v = gctool.verify(code, s, tol=tol, method=method, kernel=kernel, jobs=jobs)
            assert v.ok == (first[s] is None), (s, method, kernel, jobs)
            if method == "exhaustive" and first[s] is not None:
                assert tuple(v.counterexample) == first[s]
        for method, jobs in (("exhaustive", 1), ("exhaustive", 2), ("bnb", 1), ("auto", 1)):
            a = gctool.attack(code, s, tol=tol, method=method, jobs=jobs)
            assert a.exact and (a.reason == DECODES) == (first[s] is None), (s, method, jobs)
            worst = max(e for S, e in ERR7.items() if len(S) == s)
            assert abs(a.raw_error - float(worst)) <= 1e-9 * float(worst)
            assert (a.raw_error <= float(limit)) == (worst <= limit)  # the verdict's side
    for point in gctool.curve(code, 4, tol=tol).curve[2:]:  # curve points: the same side
        worst = max(e for S, e in ERR7.items() if len(S) == point.s)
        assert (point.raw_error <= float(limit)) == (worst <= limit), point.s
    decoder = Decoder(code, tol)  # one set (what show --stragglers decodes)
    for S in ((3, 5, 6), (3, 4, 5), (3, 4, 5, 6), (0, 1)):
        one = decoder.decode([i for i in range(7) if i not in S])
        assert one.ok == (ERR7[S] <= limit), S
    for method in ("auto", "exhaustive", "bnb", "milp", "greedy"):
        for jobs in (1, 2) if method == "exhaustive" else (1,):
            t = gctool.threshold(code, tol=tol, method=method, jobs=jobs)
            if t.exact:
                assert t.threshold == thr, (method, jobs)
            assert t.stragglers is None or ERR7[tuple(t.stragglers)] > limit, method
            assert t.threshold is None or thr is None or t.threshold >= thr, method


@pytest.mark.parametrize("tol, epsilon, normalize", [
    (0.1, 0.8, "none"),   # level 0.8 + 0.4 = 6/5 exactly (floats: 1.2000000000000002)
    (0.1, 0.2, "k"),      # 0.2 * 4 + 0.4 = 6/5
    (0.05, 1.0, "none"),  # 1 + 0.2 = 6/5 (floats: 1.2 + a few ulps away)
    (BELOW / 3, 0.8, "none"),  # a hair below 6/5: the tie sets exceed it
])
def test_epsilon_levels_tie_exactly(tol: object, epsilon: float, normalize: str) -> None:
    scale = 4 if normalize == "k" else 1
    level = typed(tol) * 4 + typed(epsilon) * scale  # type: ignore[arg-type]
    _, thr = truth(ERR7, level)
    code = code_of(B7, 3)
    for method in ("auto", "exhaustive", "bnb", "greedy", "milp"):
        t = gctool.threshold(code, epsilon, tol=tol, method=method, normalize=normalize)
        if t.exact:
            assert t.threshold == thr, method
        assert t.stragglers is None or ERR7[tuple(t.stragglers)] > level, method


def _cli_report(*args: str) -> dict:
    res = run(*args, "--json")
    assert res.exit_code in (0, 1), res.stderr
    doc = json.loads(res.stdout)
    return doc["files"][0]["report"] if "files" in doc else doc


@pytest.mark.parametrize("compiled", ["0", "1"])
def test_cli_agrees_with_the_library(tmp_path: Path, compiled: str,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GCTOOL_COMPILED", compiled)
    f = tmp_path / "b7.json"
    write_code(code_of(B7, 3), f)
    for jobs in ("1", "2"):
        v = run("verify", str(f), "-s", "3", "--tol", "0.3", "-j", jobs)
        assert v.exit_code == 0, v.stdout  # 6/5 <= 0.3 * 4 exactly
        assert run("verify", str(f), "-s", "3", "--tol", "0.29", "-j", jobs).exit_code == 1
        a = _cli_report("attack", str(f), "-s", "3", "--tol", "0.3", "-j", jobs)
        assert a["reason"] == DECODES and a["exact"] and a["raw_error"] == 1.2
        for eps, tol, norm in (("0", "0.3", "none"), ("0.8", "0.1", "none"),
                               ("0.2", "0.1", "k")):
            t = _cli_report("attack", str(f), "--threshold", "--epsilon", eps, "--tol", tol,
                            "--normalize", norm, "-j", jobs)
            assert t["exact"] and t["threshold"] == 4 and t["stragglers"] == [3, 4, 5, 6]
    for S, ok in (("3,5,6", True), ("3,4,5,6", False)):
        shown = json.loads(run("show", str(f), "--stragglers", S, "--tol", "0.3", "--json").stdout)
        assert shown["decoding"]["decodes"] is ok, S
    lib = gctool.threshold(code_of(B7, 3), 0.8, tol=0.1)
    assert lib.threshold == 4 and lib.stragglers == [3, 4, 5, 6]


@pytest.mark.parametrize("epsilon", [0.8, "0.8", Fraction(4, 5), BELOW * 4 - Fraction(2, 5)])
def test_epsilon_is_typed_like_tol(epsilon: object, tmp_path: Path) -> None:
    """The library takes epsilon as it takes tol (numerics.level_tol: "typed like tol"): a
    float, a Fraction or a decimal string, read exactly (a Fraction raised TypeError from
    np.isfinite, a string too).  4/5 + 0.1 * 4 is the tie 6/5: threshold 4; a hair below it,
    the tie sets exceed it: 3.  The CLI's --epsilon 0.8 gives the library's report."""
    level = typed(epsilon) + Fraction(2, 5)  # type: ignore[arg-type]
    _, thr = truth(ERR7, level)
    code = code_of(B7, 3)
    for method in ("auto", "exhaustive", "bnb"):
        t = gctool.threshold(code, epsilon, tol=0.1, method=method)  # type: ignore[arg-type]
        assert t.exact and t.threshold == thr and ERR7[tuple(t.stragglers)] > level, method
        assert t.epsilon == float(typed(epsilon))  # type: ignore[arg-type]
    if typed(epsilon) == Fraction(4, 5):  # the same report as the command line's
        f = tmp_path / "b7.json"
        write_code(code, f)
        cli = _cli_report("attack", str(f), "--threshold", "--epsilon", "0.8", "--tol", "0.1")
        lib = gctool.threshold(code, epsilon, tol=0.1).to_dict()  # type: ignore[arg-type]
        for key in ("threshold", "stragglers", "error", "epsilon", "exact", "reason"):
            assert cli[key] == lib[key], key
    for bad in ("-0.1", Fraction(-1, 3), "x", float("nan")):
        with pytest.raises(InvalidInput, match="`epsilon` must be a finite number >= 0"):
            gctool.threshold(code, bad)  # type: ignore[arg-type]


# -- seeded codes with exact ties ------------------------------------------------------------
def _tie_code(seed: int) -> np.ndarray:
    """Small integer codes (rows scaled by powers of two on odd seeds): errors are rationals,
    many of them 2- and 5-smooth, so tol * k ties with them at decimal and dyadic limits."""
    rng = np.random.default_rng(seed)
    n, K = int(rng.integers(5, 8)), int(rng.integers(2, 5))
    B = rng.integers(-2, 3, (n, K)).astype(float)
    B[rng.random((n, K)) < 0.3] = 0
    if seed % 2:
        B = B * 2.0 ** rng.integers(-3, 4, n)[:, None]
    return B


def _decimal(v: Fraction) -> float | None:
    """``v`` as the float a user gets by typing its decimal, when that decimal is short enough
    to be what the float prints as (2- and 5-smooth denominators only)."""
    q = v.denominator
    for p in (2, 5):
        while q % p == 0:
            q //= p
    if q != 1:
        return None
    x = float(str(Decimal(v.numerator) / Decimal(v.denominator)))
    return x if typed(x) == v else None


def _policy_clean(B: np.ndarray) -> bool:
    """No set of rows has a singular value near the rank cut-off (where the rule's own
    cut-off, not the exact error, decides)."""
    n = B.shape[0]
    for f in range(1, n + 1):
        for F in itertools.combinations(range(n), f):
            A = B[list(F)]
            nz = np.linalg.norm(A, axis=1) > 0
            if not nz.any():
                continue
            _, e = np.frexp(np.linalg.norm(A[nz], axis=1))
            sv = np.linalg.svd(A[nz] * np.ldexp(1.0, -e)[:, None], compute_uv=False)
            cut = sv[0] * max(A.shape) * np.finfo(float).eps
            if np.any((sv > cut / 4) & (sv < cut * 30)):
                return False
    return True


def _ties(seed: int) -> list[tuple[np.ndarray, dict, float, str]]:
    B = _tie_code(seed)
    if not _policy_clean(B):
        return []
    K = B.shape[1]
    errs = exact_errors(B)
    out = []
    for v in sorted({e / K for e in errs.values() if 0 < e < K}):
        tol = _decimal(v)
        if tol is not None:
            out.append((B, errs, tol, "dyadic" if v.denominator & (v.denominator - 1) == 0
                        else "decimal"))
    return out


SEEDS = range(40)


@pytest.mark.parametrize("seed", SEEDS)
def test_generated_ties_against_brute_force(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GCTOOL_COMPILED", "1" if seed % 3 else "0")
    for B, errs, tol, _ in _ties(seed):
        n, K = B.shape
        code = code_of(B, 0)
        for t in (tol, typed(tol) - Fraction(1, 10**30)):
            limit = typed(t) * K
            first, thr = truth(errs, limit)
            for s in range(1, min(n, 4)):
                try:
                    v = gctool.verify(code, s, tol=t, kernel="direct" if seed % 2 else "auto",
                                      jobs=1 + seed % 2)
                except Undecided:  # allowed: it names the set instead of guessing
                    continue
                assert v.ok == (first[s] is None), (seed, t, s)
            try:
                got = gctool.threshold(code, tol=t, method="exhaustive")
            except Undecided:
                continue
            assert got.exact and got.threshold == thr, (seed, t)
            # the same level as an epsilon over a smaller tolerance
            eps = limit - Fraction(K, 10)
            if eps > 0 and _decimal(eps) is not None and t == tol:
                e = gctool.threshold(code, _decimal(eps), tol=0.1, method="exhaustive")
                assert e.exact and e.threshold == thr, (seed, "epsilon", eps)


def test_rank_deficient_ties_on_every_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    """B of rank K - 1 (integer): even all n workers leave an error, so the null-space kernel's
    witness and screens work next to the limit too; every kernel, compiled on and off."""
    checked = 0
    for seed in range(0, 60, 3):
        rng = np.random.default_rng(seed)
        n, K = int(rng.integers(5, 8)), int(rng.integers(3, 5))
        B = rng.integers(-2, 3, (n, K - 1)).astype(float) @ rng.integers(-2, 3, (K - 1, K))
        if not _policy_clean(B):
            continue
        errs = exact_errors(B)
        for v in sorted({e / K for e in errs.values() if 0 < e < K}):
            tol = _decimal(v)
            if tol is None:
                continue
            first, _ = truth(errs, v * K)
            for s in range(min(n, 4)):
                for kernel, compiled in (("nullspace", "1"), ("nullspace", "0"), ("direct", "0")):
                    monkeypatch.setenv("GCTOOL_COMPILED", compiled)
                    try:
                        got = gctool.verify(code_of(B, 0), s, tol=tol, kernel=kernel,
                                            method="exhaustive")
                    except Undecided:
                        continue
                    assert got.ok == (first[s] is None), (seed, tol, s, kernel, compiled)
                    checked += 1
    assert checked >= 100


def test_the_generator_makes_both_kinds_of_tie() -> None:
    kinds = [kind for seed in SEEDS for *_, kind in _ties(seed)]
    assert kinds.count("dyadic") >= 10 and kinds.count("decimal") >= 10


# -- the fixed decoder: its error is a rational of the weights and B ------------------------
@pytest.mark.parametrize("seed", range(12))
def test_fixed_decoder_errors_at_the_limit_against_brute_force(seed: int) -> None:
    """Decimal weights (0.1, ..., 0.5) and small integer B: each error is an exact rational
    within float round-off of a short decimal, and tol is that decimal (15 digits), so the
    error lies a few units of the last place on either side of tol * k; the quadratic form
    alone put 6 of 560 such verdicts on the wrong side."""
    rng = np.random.default_rng(seed)
    n, K = 6, 3
    B = rng.integers(0, 3, (n, K)).astype(float)
    w = np.round(np.full((1, n), 0.1) * rng.integers(1, 6, n), 1)
    errs = {}
    for s in (1, 2):
        for S in itertools.combinations(range(n), s):
            v = [sum(Fraction(float(w[0, i])) * Fraction(B[i, k]) for i in range(n)
                     if i not in S) - 1 for k in range(K)]
            errs[S] = sum(x * x for x in v)
    for E in list(errs.values())[::3]:
        tol = float(f"{float(E / K):.15g}")
        limit = typed(tol) * K
        for s in (1, 2):
            worst = max(e for S, e in errs.items() if len(S) == s)
            for method in ("exhaustive", "bnb"):
                a = gctool.attack(code_of(B, 0), s, decoder="fixed", weights=w, tol=tol,
                                  method=method)
                assert (a.reason == DECODES) == (worst <= limit), (tol, s, method)
