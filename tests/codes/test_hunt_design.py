"""Every exact design tolerates the s it records, by an oracle that shares no arithmetic with
gctool: elimination on finite-field tables built in tests/hunt_oracles.py (checked against
galois there), exact rational least squares over R/C (the exact error of the float64 entries
at most tol * k).  Edge sizes (n = 1, s = 0, s = n - 1, k = 1, wide codes k > n), every field
kind, the m-piece targets of comm and ye-abbe, and each lower level of a nested code.

A hunt over 1,879 designs (frc, cyclic, uncoded, cyclic-mds, rs, comm, ye-abbe and nested;
real, complex, GF(7), GF(11), GF(13), GF(2^3) and the field auto picks; n = 1..7, every s < n,
k in {1, n - 1, n, n + 2}) found none wrong; these are a few of its cases.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hunt_oracles import decodes

from gctool.codes import design
from gctool.errors import GctoolError
from gctool.io import decode_matrix
from gctool.model import GradientCode

CASES = [  # (scheme, field, n, s, params)
    ("frc", "real", 6, 2, {}), ("frc", "complex", 4, 3, {}), ("frc", "GF(2^3)", 6, 1, {}),
    ("frc", "GF(7)", 3, 0, {}),
    ("cyclic", "real", 5, 2, {}), ("cyclic", "complex", 4, 3, {}), ("cyclic", "GF(7)", 6, 2, {}),
    ("cyclic", "GF(2^3)", 5, 4, {}), ("cyclic", "real", 1, 0, {}),
    ("uncoded", "GF(5)", 3, 0, {}),
    ("cyclic-mds", "real", 5, 2, {}), ("cyclic-mds", "real", 6, 2, {}),
    ("cyclic-mds", "complex", 6, 3, {}), ("cyclic-mds", None, 6, 2, {}),
    ("cyclic-mds", None, 7, 6, {}), ("cyclic-mds", "GF(2^3)", 7, 3, {}),
    ("rs", "real", 5, 2, {"k": 7}), ("rs", "complex", 4, 3, {"k": 1}),
    ("rs", "GF(7)", 6, 2, {"k": 3}), ("rs", "GF(2^3)", 7, 3, {"k": 8}),
    ("rs", "GF(13)", 5, 0, {"k": 5}),
    ("comm", "real", 5, 1, {"k": 5, "m": 2}), ("comm", "complex", 5, 2, {"k": 2, "m": 2}),
    ("comm", "GF(11)", 5, 2, {"k": 6, "m": 3}), ("comm", "GF(2^3)", 6, 1, {"k": 3, "m": 2}),
    ("ye-abbe", "real", 5, 1, {"m": 2}), ("ye-abbe", "complex", 4, 1, {"m": 2}),
    ("nested", "complex", 6, None, {"levels": [1, 2]}),
    ("nested", "real", 6, None, {"levels": [1, 3]}),
    ("nested", "GF(7)", 6, None, {"levels": [1, 2, 4]}),
]


def _tolerates(code: GradientCode, s: int) -> list[tuple[int, ...]]:
    """The straggler sets of size s whose survivors do not decode (exact oracle)."""
    n = code.n
    return [S for S in itertools.combinations(range(n), s)
            if not decodes(code, tuple(i for i in range(n) if i not in S))]


@pytest.mark.parametrize("scheme,field,n,s,params", CASES,
                         ids=[f"{c[0]}-{c[1]}-n{c[2]}-s{c[3]}" for c in CASES])
def test_design_tolerates_its_s(scheme: str, field: str | None, n: int, s: int | None,
                                params: dict[str, object]) -> None:
    code = design(scheme, n=n, s=s, field=field, seed=3, **params)
    if s is not None:
        assert code.s == s
    assert _tolerates(code, code.s) == []
    if scheme == "nested":  # every lower level tolerates its own s_l, with the same targets
        levels = params["levels"]
        assert isinstance(levels, list) and code.s == levels[-1]
        for level, rows in zip(levels, code.params["level_B"], strict=False):
            B = decode_matrix(rows, code.field)
            assert _tolerates(GradientCode(B, code.field, level), level) == []


def test_oracle_finds_a_break() -> None:
    """The oracle is not vacuous: one more straggler than designed breaks an MDS-type code
    (every set of s + 1 over GF(q) for rs with k = n, whose load meets the bound exactly)."""
    code = design("rs", n=5, s=2, k=5, field="GF(7)")
    assert _tolerates(code, 2) == []
    assert len(_tolerates(code, 3)) > 0
    frc = design("frc", n=6, s=2, field="real", seed=1)  # groups {0, 1, 2} and {3, 4, 5}
    assert _tolerates(frc, 3) == [(0, 1, 2), (3, 4, 5)]


UNTAKEN = [  # (scheme, the scheme's own parameters, an option it does not take, its value)
    ("nested", {"n": 6, "levels": [1, 2]}, "s", 3),  # s follows from the levels: s = 2
    ("is-hr", {"n": 6}, "s", 2),  # s is the IS tolerance found at design time: 0 here
    ("hetero", {"p": [0.1, 0.2, 0.3]}, "n", 5),  # n is the number of probabilities: 3
    ("graph", {"vertices": 5}, "k", 7),  # k is the number of vertices: 5
    ("graph", {"vertices": 5}, "n", 9),  # n is the number of edges: 5
    ("bibd", {"design": "fano"}, "n", 9),  # n = v = 7
    ("kron", {}, "field", "complex"),  # the field of the factors: real
    ("kron", {}, "s", 1),  # s = T_0(B_1) T_0(B_2) - 1 = 8
    ("m-sgc", {"n": 6, "burst": 1, "window": 2, "lam": 1}, "s", 4),
    ("coded-reduce", {"fanout": 2, "depth": 2, "tolerance": 1}, "k", 9),
]


def _kron_factors() -> dict[str, object]:
    f = design("cyclic", n=5, s=2, field="real", seed=1)
    return {"file1": f, "file2": f}


@pytest.mark.parametrize("scheme,params,option,value", UNTAKEN,
                         ids=[f"{c[0]}-{c[2]}" for c in UNTAKEN])
def test_an_option_the_scheme_does_not_take_is_refused(
        scheme: str, params: dict[str, object], option: str, value: object) -> None:
    """The library used to build these codes and silently drop the option (a code of s = 2
    for ``s=3``, a real kron for ``field="complex"``); the CLI has no such flags.  A value the
    design gives anyway is accepted (``simulate --sweep s`` redesigns with the file's n and
    field)."""
    from gctool.errors import InvalidInput

    given = {**params, **(_kron_factors() if scheme == "kron" else {})}
    with pytest.raises(InvalidInput, match=rf"\b{option}\b"):  # some builds word their own
        design(scheme, **given, **{option: value})
    code = design(scheme, **given)
    same = {"n": code.n, "s": code.s, "k": code.k, "field": str(code.field)}[option]
    again = design(scheme, **given, **{option: same})
    assert np.array_equal(again.B, code.B) and again.s == code.s


@pytest.mark.parametrize("field,n,within,across", [("GF(2)", 6, 1, 1), ("GF(2^3)", 6, 1, 1),
                                                   ("GF(3)", 8, 1, 2)])
def test_is_hr_over_a_field_where_no_worker_set_decodes_is_refused(
        field: str, n: int, within: int, across: int) -> None:
    """is-hr with no disjoint cover (``is_tolerance`` -1) records s = 0, which the optimal
    decoder over the reals meets with every worker; over GF(2), GF(3) and GF(2^3) the rows of
    this placement do not even span the all-ones vector (e.g. over GF(2) each group's three
    rows sum to 0), so the file's s = 0 was false and verify failed it (85 of the 258 such
    designs over GF(2), GF(3), GF(5), n <= 8).  Refused like a real design that cannot decode
    with all its workers; where the rows do span it, the design stands."""
    from gctool.errors import DesignError

    with pytest.raises(DesignError, match=f"all {n} workers"):
        design("is-hr", n=n, groups=2, within=within, across=across, field=field)
    real = design("is-hr", n=n, groups=2, within=within, across=across, field="real")
    assert real.params["is_tolerance"] == -1 and real.s == 0 and _tolerates(real, 0) == []
    spans = design("is-hr", n=3, groups=1, within=1, across=1, field="GF(5)")
    assert spans.params["is_tolerance"] == -1 and _tolerates(spans, 0) == []


def _worst_condition(code: GradientCode) -> float:
    """The largest sigma_max / sigma_r over the s-sets of B_F with its rows scaled by powers
    of two to norms in [1/2, 1) (r: the rank at the cut-off sigma_1 max(f, K) eps), numpy's
    SVD one set at a time."""
    B, n, worst = np.asarray(code.B), code.n, 0.0
    for S in itertools.combinations(range(n), code.s):
        A = B[[i for i in range(n) if i not in S]]
        A = A * np.ldexp(1.0, -np.frexp(np.linalg.norm(A, axis=1))[1])[:, None]
        sv = np.linalg.svd(A, compute_uv=False)
        kept = sv[sv > sv[0] * max(A.shape) * np.finfo(float).eps]
        worst = max(worst, float(kept[0] / kept[-1])) if kept.size else worst
    return worst


def test_recorded_worst_condition_and_its_bound() -> None:
    """A real or complex design's recorded ``worst_condition`` (labelled exact) is the
    brute-force maximum, and its ``condition_bound`` is at least it (a hunt over 111 designs of
    cyclic, frc, cyclic-mds, rs, comm, ye-abbe and nested found none wrong)."""
    checked = 0
    for seed in range(40):
        rng = np.random.default_rng(seed)
        scheme = str(rng.choice(["cyclic", "frc", "cyclic-mds", "rs", "comm", "ye-abbe"]))
        n = int(rng.integers(2, 8))
        kw: dict[str, object] = {"k": int(rng.integers(1, 8))} if scheme in ("rs", "comm") else {}
        if scheme in ("comm", "ye-abbe"):
            kw["m"] = int(rng.integers(1, 3))
        try:
            code = design(scheme, n=n, s=int(rng.integers(0, n)), seed=seed,
                          field=str(rng.choice(["real", "complex"])), **kw)
        except GctoolError:
            continue
        if "exact" not in str(code.params.get("worst_condition_method")):
            continue
        checked += 1
        worst = _worst_condition(code)
        assert code.params["worst_condition"] == pytest.approx(worst, rel=1e-6), seed
        assert code.params.get("condition_bound", np.inf) >= worst * (1 - 1e-9), seed
    assert checked >= 20
