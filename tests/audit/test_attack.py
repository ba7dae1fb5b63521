"""attack: every decoder and method against independent brute force (tests/oracles.py)."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
from hunt_oracles import vector_error
from hypothesis import example, given, settings
from hypothesis import strategies as st

from gctool.algebra.fields import parse_field
from gctool.audit.attack import AttackOptions, attack, curve, threshold
from gctool.audit.oracles import make_oracle
from gctool.budget import Budget
from gctool.errors import InvalidInput
from gctool.model import GradientCode

from bands import attack_interval, fixed_interval
from corpus import random_gf_code
from oracles import (
    decodes_gf,
    decodes_rational,
    exact_fixed_error,
    exact_lstsq_error,
    lstsq_error,
    threshold_by,
)

REAL = parse_field("real")


def _sparse(rng: np.random.Generator, n: int, k: int, load: int, kind: str) -> np.ndarray:
    B = np.zeros((n, k), dtype=complex if kind == "complex" else float)
    for i in range(n):
        cols = rng.choice(k, size=min(load, k), replace=False)
        if kind == "01":
            B[i, cols] = 1
        elif kind == "int":
            B[i, cols] = rng.integers(1, 4, cols.size)
        else:
            B[i, cols] = rng.standard_normal(cols.size)
            if kind == "complex":
                B[i, cols] += 1j * rng.standard_normal(cols.size)
    return B


def _survivors(n: int, S: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(i for i in range(n) if i not in S)


def _fixed_error(B: np.ndarray, w: np.ndarray, F: tuple[int, ...]) -> float:
    return float(np.sum(np.abs(B[list(F)].T @ w[list(F)] - 1) ** 2))


def brute_errors(B: np.ndarray, s: int, err) -> dict[tuple[int, ...], float]:  # type: ignore[no-untyped-def]
    n = B.shape[0]
    return {S: err(_survivors(n, S)) for S in itertools.combinations(range(n), s)}


Interval = tuple[float, float]


def exact_intervals(code: GradientCode, s: int, weights: np.ndarray | None = None
                    ) -> tuple[dict[tuple[int, ...], Fraction], dict[tuple[int, ...], Interval]]:
    """The exact rational error of every set of s stragglers (the optimal decoder, or the
    fixed one with ``weights``) and where attack's float64 error of it may lie: the error model
    attack states for that decoder (tests/bands.py)."""
    B, n = np.asarray(code.B), code.n
    exact: dict[tuple[int, ...], Fraction] = {}
    bands: dict[tuple[int, ...], Interval] = {}
    for S in itertools.combinations(range(n), s):
        F = list(_survivors(n, S))
        if weights is None:
            exact[S] = exact_lstsq_error(B, tuple(F))
            bands[S] = attack_interval(code, S, exact[S])
        else:
            exact[S] = exact_fixed_error(B, weights, tuple(F))
            bands[S] = fixed_interval(code, weights, S, exact[S])
    return exact, bands


def check_worst(report, exact: dict[tuple[int, ...], Fraction],  # type: ignore[no-untyped-def]
                bands: dict[tuple[int, ...], Interval]) -> None:
    """Against exact rational errors, each compared within the error model attack states
    (tests/bands.py; a fixed tolerance flakes on an ill-conditioned B and hides errors on a
    well-conditioned one): the reported error is its set's error; exact => at least the true
    worst set's (a worst set, within a tie); an upper bound is at least the true worst.  A
    heuristic's error is its own set's, so at most the true worst's by the first check."""
    assert report.stragglers is not None
    S = tuple(report.stragglers)
    lo, hi = bands[S]
    assert lo <= report.raw_error <= hi, (S, report.raw_error, float(exact[S]))
    top = max(exact, key=lambda T: exact[T])
    if report.exact:
        assert report.raw_error >= bands[top][0], (S, top, report.raw_error, float(exact[top]))
    upper = getattr(report, "raw_upper_bound", None)  # (a curve's points have none)
    if upper is not None:
        assert upper >= bands[top][0], (top, upper)


# -- error oracles -----------------------------------------------------------------------------
@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.integers(3, 7), st.integers(2, 6),
       st.sampled_from(["real", "int", "complex", "01"]))
def test_optimal_and_fixed_oracles_match_brute_force(seed: int, n: int, k: int, kind: str
                                                     ) -> None:
    rng = np.random.default_rng(seed)
    B = _sparse(rng, n, k, 2, kind)
    field = parse_field("complex" if kind == "complex" else "real")
    code = GradientCode(B, field, 0)
    w = rng.random(n) + 0.5
    opt, fix = make_oracle(code), make_oracle(code, "fixed", weights=w)
    for s in range(n + 1):
        for S in itertools.combinations(range(n), s):
            # exact rational errors, each within the error model attack states for its
            # decoder (tests/bands.py), not lstsq at a fixed tolerance
            F = _survivors(n, S)
            exact = exact_lstsq_error(B, F)
            lo, hi = attack_interval(code, S, exact)
            assert lo <= opt.error(S) <= hi, (S, opt.error(S), float(exact))
            exact = vector_error(w[None, list(F)], B[list(F)], code.targets()) if F \
                else Fraction(k)
            lo, hi = fixed_interval(code, w, S, exact)
            assert lo <= fix.error(S) <= hi, (S, fix.error(S), float(exact))


def test_scaled_uniform_weights_and_natural_decoder(frc6: GradientCode) -> None:
    fixed = make_oracle(frc6, "fixed")
    assert fixed.weights(2)[0] == pytest.approx(np.full(6, 6 / (3 * 4)))  # n / (r (n - s))
    natural = make_oracle(frc6, "natural")
    for s in range(7):
        for S in itertools.combinations(range(6), s):
            dead = sum(set(range(g * 3, g * 3 + 3)) <= set(S) for g in range(2))
            assert natural.error(S) == 3 * dead  # (s+1) per dead group, reference §1.1
            w = np.full(6, 6 / (3 * (6 - s))) if s < 6 else np.zeros(6)
            assert fixed.error(S) == pytest.approx(_fixed_error(frc6.B, w, _survivors(6, S)))


# -- reference examples ------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["exhaustive", "bnb", "greedy", "milp", "auto"])
def test_frc_reference_worst_errors(frc6: GradientCode, method: str) -> None:
    """Reference §1.1: n = k = 6, s = 2 FRC; worst error for s' = 3, 4, 5, 6 is 3, 3, 3, 6."""
    got = [attack(frc6, s, method=method).raw_error for s in (3, 4, 5, 6)]
    assert got == pytest.approx([3, 3, 3, 6])
    nat = [attack(frc6, s, method=method, decoder="natural").raw_error for s in (3, 4, 5, 6)] \
        if method != "milp" else [3, 3, 3, 6]
    assert nat == pytest.approx([3, 3, 3, 6])


@pytest.mark.parametrize("method", ["exhaustive", "bnb", "elementary", "milp", "auto"])
def test_frc_reference_threshold(frc6: GradientCode, method: str) -> None:
    r = threshold(frc6, method=method)
    if method == "milp":  # epsilon = 0 at a resolution: a checked witness, not a proof
        assert r.threshold == 3 and not r.exact and r.threshold_lower == 1
    else:
        assert r.threshold == 3 and r.exact and r.threshold_lower == 3
    assert r.stragglers in ([0, 1, 2], [3, 4, 5])


def test_milp_threshold_at_resolution_is_never_exact() -> None:
    """Straggling workers 0 and 1 leaves [1, 1.001], whose error (about 5e-7) is above tol*k
    but below the MILP resolution 1e-4: T_0 = 2, which the MILP cannot see.  It may report a
    larger witness, but never as exact, and auto must still find the truth."""
    code = GradientCode(np.array([[1.0, 1.0], [1.0, 1.0], [1.0, 1.001]]), parse_field("real"), 0)
    true = threshold(code, method="exhaustive")
    assert true.threshold == 2 and true.exact
    m = threshold(code, method="milp")
    assert m.threshold is not None and m.threshold >= 2 and not m.exact
    assert m.threshold_lower <= 2
    auto = threshold(code, method="auto")
    assert auto.threshold == 2 and auto.exact


def test_crc73_milp_tolerance_pitfall() -> None:
    """Reference §7.3: a random real CRC(7,3) with true T_0 = 4; a tiny resolution made HiGHS
    report 3.  gctool checks every MILP witness with the decoder, so neither resolution may
    report a set that decodes."""
    from gctool.codes import design

    for seed in range(3):
        code = design("cyclic", 7, 3, seed=seed)
        B = np.asarray(code.B)
        true = threshold_by(lambda F: lstsq_error(B, F) <= 7e-9, 7)  # noqa: B023
        for resolution in (1e-6, 1e-4):
            r = threshold(code, method="milp", resolution=resolution)
            assert r.threshold == true == 4
            assert r.stragglers is not None
            assert lstsq_error(B, _survivors(7, tuple(r.stragglers))) > 1e-6
            assert r.resolution == resolution


# -- every method against brute force, over each decoder -----------------------------------------
@settings(max_examples=12, deadline=None)
@given(st.integers(0, 10_000), st.integers(4, 7), st.sampled_from(["01", "real"]),
       st.sampled_from(["optimal", "fixed"]))
def test_worst_case_methods_match_brute_force(seed: int, n: int, kind: str, decoder: str
                                              ) -> None:
    rng = np.random.default_rng(seed)
    B = _sparse(rng, n, n, 3, kind)
    code = GradientCode(B, REAL, 0)
    w = rng.random(n) + 0.5
    weights = w if decoder == "fixed" else None
    for s in range(1, n):
        exact, bands = exact_intervals(code, s, weights)
        for method in ("exhaustive", "bnb", "greedy", "milp", "auto"):
            r = attack(code, s, decoder=decoder, weights=weights, method=method, seed=seed,
                       time_limit=20)
            check_worst(r, exact, bands)
            if method in ("exhaustive", "bnb", "auto"):
                assert r.exact, (method, r.notes)


def test_heuristic_never_labelled_exact_when_it_misses() -> None:
    """Greedy without restarts on many codes: whenever it says exact, it is the maximum."""
    rng = np.random.default_rng(1)
    seen_heuristic = 0
    for _ in range(25):
        n = int(rng.integers(6, 10))
        B = _sparse(rng, n, n, 3, "real")
        code = GradientCode(B, REAL, 0)
        for s in (2, 3):
            r = attack(code, s, method="greedy", restarts=0)
            check_worst(r, *exact_intervals(code, s))
            seen_heuristic += not r.exact
            assert r.method == "greedy"
    assert seen_heuristic > 0


def test_check_worst_catches_what_a_fixed_tolerance_did() -> None:
    """The grounded check stays able to fail: on a well-conditioned code (cond(B) 24 row-
    normalised) an error 1e-7 relative off, a set that is not a worst one labelled exact and an
    upper bound below the true worst are each caught, under both decoders."""
    import dataclasses

    rng = np.random.default_rng(2)
    code = GradientCode(_sparse(rng, 6, 6, 3, "real"), REAL, 0)
    w = rng.random(6) + 0.5
    for weights in (None, w):
        decoder = "optimal" if weights is None else "fixed"
        exact, bands = exact_intervals(code, 3, weights)
        r = attack(code, 3, decoder=decoder, weights=weights, method="exhaustive")
        check_worst(r, exact, bands)
        least = min(exact, key=lambda T: exact[T])
        wrong = [dataclasses.replace(r, raw_error=r.raw_error * (1 + 1e-7)),
                 dataclasses.replace(r, stragglers=list(least), raw_error=float(exact[least])),
                 dataclasses.replace(r, raw_upper_bound=r.raw_error * (1 - 1e-7))]
        for bad in wrong:
            with pytest.raises(AssertionError):
                check_worst(bad, exact, bands)


def test_budget_fallback_is_labelled(frc6: GradientCode) -> None:
    rng = np.random.default_rng(5)
    B = _sparse(rng, 10, 10, 3, "real")
    code = GradientCode(B, REAL, 0)
    r = attack(code, 4, budget=Budget(max_sets=10), max_nodes=5, time_limit=0.5)
    check_worst(r, *exact_intervals(code, 4))
    assert r.notes and r.notes[0].startswith("auto: exhaustive over budget")
    assert r.upper_bound is not None  # at least the trivial ||1||^2 = k
    with pytest.raises(InvalidInput):
        attack(frc6, 3, method="elementary")


# -- thresholds ---------------------------------------------------------------------------------
@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10_000), st.integers(3, 7), st.integers(2, 5))
def test_exact_threshold_methods_match_rational_oracle(seed: int, n: int, k: int) -> None:
    rng = np.random.default_rng(seed)
    B = _sparse(rng, n, k, 2, "int")
    code = GradientCode(B, REAL, 0)
    true = threshold_by(lambda F: decodes_rational(B, F), n)
    for method in ("exhaustive", "bnb", "elementary", "milp", "auto"):
        r = threshold(code, method=method)
        assert r.threshold == true, method
        assert r.exact or (method == "milp" and r.threshold_lower == 1)  # milp: at resolution
        if r.stragglers is not None:
            assert not decodes_rational(B, _survivors(n, tuple(r.stragglers)))
    g = threshold(code, method="greedy")
    assert g.threshold is None or true is None or g.threshold >= true  # a witness: upper bound


@settings(max_examples=12, deadline=None)
@given(st.integers(0, 10_000), st.integers(4, 7), st.sampled_from([0.3, 1.0, 2.5]))
@example(0, 6, 1.0)  # an exact tie (err = 1 = eps) that round-off once decided
def test_epsilon_threshold_matches_brute_force(seed: int, n: int, eps: float) -> None:
    rng = np.random.default_rng(seed)
    B = _sparse(rng, n, n, 3, "real")
    code = GradientCode(B, REAL, 0)
    errs = {S: lstsq_error(B, _survivors(n, S)) for t in range(n + 1)
            for S in itertools.combinations(range(n), t)}
    tie = 1e-9 * n  # errors within tol*k of eps are ties, which do not exceed eps
    true = min((len(S) for S, e in errs.items() if e > eps + tie), default=None)
    for method in ("exhaustive", "bnb", "milp", "auto"):
        r = threshold(code, eps, method=method)
        assert r.threshold == true and r.exact, method
    fixed_true = min((len(S) for S in errs if _fixed_error(B, np.ones(n), _survivors(n, S))
                      > eps + tie), default=None)
    for method in ("exhaustive", "milp"):
        r = threshold(code, eps, method=method, decoder="fixed", weights=np.ones(n))
        assert r.threshold == fixed_true, method


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from(["GF(2)", "GF(3)", "GF(2^2)", "GF(5)"]))
def test_gf_methods_match_galois_oracle(seed: int, field: str) -> None:
    code, true = random_gf_code(seed, field, 6, 4)
    B, n, GF = np.asarray(code.B), code.n, code.field.galois()
    for method in ("exhaustive", "bnb", "elementary", "auto"):
        assert threshold(code, method=method).threshold == true, method
    for s in range(n + 1):
        fails = any(not decodes_gf(GF, B, _survivors(n, S))
                    for S in itertools.combinations(range(n), s))
        for method in ("exhaustive", "bnb", "greedy", "auto"):
            r = attack(code, s, method=method)
            assert r.raw_error == float(fails) or (not r.exact and r.raw_error <= fails)
    with pytest.raises(InvalidInput, match="reals and complex"):
        attack(code, 2, method="milp")


def test_dual_elementary_on_crc_matches_exhaustive() -> None:
    from gctool.codes import design

    for n, s, dual in ((7, 4, False), (14, 3, True)):  # primal C(n, r-1) vs dual cost
        code = design("cyclic", n, s, seed=2)
        a = threshold(code, method="elementary")
        b = threshold(code, method="exhaustive")
        assert a.threshold == b.threshold == s + 1 and a.exact
        assert any("dual" in note for note in a.notes) == dual


# -- require gate ----------------------------------------------------------------------------------
def test_require_gate(frc6: GradientCode) -> None:
    assert threshold(frc6, require=3).ok and threshold(frc6, require=3).require_status == "met"
    below = threshold(frc6, require=4)
    assert not below.ok and below.require_status == "below"
    unproven = threshold(frc6, method="greedy", require=3)  # a witness at 3, nothing proved
    assert unproven.threshold == 3
    assert unproven.require_status in ("unproven", "met")
    assert unproven.ok == (unproven.require_status == "met")
    assert unproven.exact == (unproven.threshold_lower == 3)


def test_require_tolerance_is_require_plus_one(frc6: GradientCode) -> None:
    """The gate 'tolerates S' is 'threshold >= S + 1'; both are recorded in the report."""
    met = threshold(frc6, require_tolerance=2)  # the FRC tolerates exactly 2
    assert met.ok and met.require == 3 and met.require_tolerance == 2
    below = threshold(frc6, require_tolerance=3)
    assert not below.ok and below.require == 4 and below.require_status == "below"
    with pytest.raises(InvalidInput, match="exclude each other"):
        threshold(frc6, require=3, require_tolerance=2)
    for mode in (lambda **kw: attack(frc6, 2, **kw), lambda **kw: curve(frc6, 2, **kw)):
        with pytest.raises(InvalidInput, match="gates on the threshold"):
            mode(require=3)


# -- options object and report types ---------------------------------------------------------------
def _same(a: object, b: object) -> None:
    da, db = a.to_dict(), b.to_dict()  # type: ignore[attr-defined]
    da["elapsed_s"] = db["elapsed_s"] = 0
    assert da == db


def test_options_object_equals_keywords(frc6: GradientCode) -> None:
    import gctool

    opts = AttackOptions(method="bnb", seed=2, normalize="k", random=True, p=0.25)
    _same(attack(frc6, 3, opts), attack(frc6, 3, method="bnb", seed=2, normalize="k",
                                          random=True, p=0.25))
    _same(gctool.attack(frc6, 3, opts), attack(frc6, 3, opts))
    _same(curve(frc6, 4, opts), gctool.curve(frc6, 4, AttackOptions.of(opts)))
    gate = AttackOptions(require_tolerance=2, method="exhaustive")
    _same(threshold(frc6, 0.0, gate), gctool.threshold(frc6, require_tolerance=2,
                                                       method="exhaustive"))
    # keywords change the options object, never the other way round
    changed = attack(frc6, 3, opts, method="exhaustive")
    assert changed.method == "exhaustive" and opts.method == "bnb"
    with pytest.raises(TypeError):
        attack(frc6, 3, no_such_option=1)
    with pytest.raises(InvalidInput, match="AttackOptions"):
        attack(frc6, 3, {"method": "bnb"})  # type: ignore[arg-type]


def test_one_report_type_per_mode_with_one_json_layout(frc6: GradientCode) -> None:
    """Worst, threshold and curve reports are separate types whose JSON keeps the one layout
    of every mode: keys a mode does not have are written with their neutral value."""
    from gctool.reports import AttackReport, CurveReport, ThresholdReport, WorstReport

    worst = attack(frc6, 3, random=True)
    least = threshold(frc6, require=3)
    tab = curve(frc6, 3, p=0.5)
    keys = [key for key, _ in AttackReport.LAYOUT]
    for report, cls, mode in ((worst, WorstReport, "worst"), (least, ThresholdReport,
                                                              "threshold"),
                              (tab, CurveReport, "curve")):
        assert type(report) is cls and report.mode == mode
        doc = report.to_dict()
        assert list(doc) == keys and doc["mode"] == mode
    w, t, c = worst.to_dict(), least.to_dict(), tab.to_dict()
    assert (w["threshold"], w["epsilon"], w["comparison"], w["require"], w["curve"]) == (
        None, None, "", None, None)
    assert (t["upper_bound"], t["upper_bound_source"], t["closed_form"], t["random"]) == (
        None, "", None, None)
    assert (c["stragglers"], c["error"], c["threshold_lower"]) == (None, None, None)
    assert t["threshold"] == 3 and t["comparison"] == "error > epsilon"
    assert w["closed_form"] == {"raw_value": 3.0, "value": 3.0, "source":
                                w["closed_form"]["source"], "agrees": True}
    assert list(w["random"]) == ["uniform"] and list(w["random"]["uniform"]) == [
        "mean", "exact", "sets", "raw_mean", "s"]
    assert list(c["random"]) == ["iid"] and [list(p) for p in c["curve"]][0] == [
        "s", "stragglers", "error", "raw_error", "exact", "method", "upper_bound"]


# -- curves, symmetry, parallel ------------------------------------------------------------------
def test_curve_matches_brute_force() -> None:
    rng = np.random.default_rng(3)
    B = _sparse(rng, 7, 7, 3, "01")
    code = GradientCode(B, REAL, 0)
    r = curve(code, random=True)
    assert r.mode == "curve" and len(r.curve) == 8
    for pt in r.curve:
        exact, bands = exact_intervals(code, pt.s)
        assert pt.exact
        check_worst(pt, exact, bands)
        # the mean of the computed errors lies in the mean of their intervals
        lows, highs = zip(*bands.values(), strict=True)
        assert np.mean(lows) <= pt.mean <= np.mean(highs), (pt.s, pt.mean)
    worst = [pt.raw_error for pt in r.curve]
    assert all(a <= b + 1e-9 for a, b in itertools.pairwise(worst))  # monotone (§0.1)


def test_symmetry_and_parallel_agree(gf7: GradientCode) -> None:
    from gctool.codes import design

    code = design("cyclic", 9, 2, seed=4)  # random CRC: no coefficient symmetry
    circ = GradientCode(np.array([np.roll([1.0, 2.0, -1.0, 0, 0, 0, 0, 0], i)
                                  for i in range(8)]), REAL, 2)
    for c in (code, circ):
        for s in (3, 4):
            a = attack(c, s, method="exhaustive")
            b = attack(c, s, method="exhaustive", symmetry=False)
            j = attack(c, s, method="exhaustive", symmetry=False, jobs=2)
            assert a.raw_error == pytest.approx(b.raw_error) == pytest.approx(j.raw_error)
    sym = attack(circ, 4, method="exhaustive")
    assert sym.checked < 70 and any("rotation" in note for note in sym.notes)
    assert threshold(gf7).threshold == threshold(gf7, symmetry=False).threshold == 3


def test_exhaustive_attack_identical_over_local_processes(monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    """Worst case and threshold over 2 worker processes (small batches, so many tasks): the
    whole report is the one of a single process, ties and evaluation counts included."""
    from gctool.audit import exhaustive, oracles
    from gctool.engine import parallel

    monkeypatch.setattr(exhaustive, "PARALLEL_MIN_SETS", 0)
    monkeypatch.setattr(parallel, "PARALLEL_MIN_S", 0.0)  # whatever the first task's pace
    monkeypatch.setattr(oracles.OptimalOracle, "chunk_size", lambda self, s, given=False: 7)
    used: list[int] = []
    real_run = parallel.run_ordered

    def spy(worker, tasks, jobs, on_result):  # type: ignore[no-untyped-def]
        used.append(min(jobs, len(tasks)))
        real_run(worker, tasks, jobs, on_result)

    monkeypatch.setattr(parallel, "run_ordered", spy)
    n = 12  # cyclic repetition with equal entries: many exact ties
    B = np.zeros((n, n))
    for i in range(n):
        B[i, [i, (i + 1) % n, (i + 2) % n]] = 1.0
    code = GradientCode(B, REAL, 2)

    def same(r: object) -> dict[str, object]:
        d = r.to_dict()  # type: ignore[attr-defined]
        d.pop("elapsed_s")
        return d

    for symmetry in (True, False):
        one = attack(code, 4, method="exhaustive", symmetry=symmetry, jobs=1)
        two = attack(code, 4, method="exhaustive", symmetry=symmetry, jobs=2)
        assert same(one) == same(two)
        assert one.stragglers == [0, 1, 2, 3] or symmetry  # the first of the tied worst sets
        t1 = threshold(code, 0.5, method="exhaustive", symmetry=symmetry, jobs=1)
        t2 = threshold(code, 0.5, method="exhaustive", symmetry=symmetry, jobs=2)
        assert same(t1) == same(t2) and t1.threshold == 3
    assert max(used) == 2  # the pool really ran


# -- random stragglers ---------------------------------------------------------------------------
def test_random_stragglers_exact_and_monte_carlo() -> None:
    rng = np.random.default_rng(9)
    n = 7
    B = _sparse(rng, n, n, 3, "real")
    code = GradientCode(B, REAL, 0, params={"p": [0.1, 0.2, 0.3, 0.1, 0.2, 0.3, 0.5]})
    p = 0.25
    exact = attack(code, 3, random=True, p=p)
    assert exact.random is not None and exact.random.uniform is not None
    uni = np.mean(list(brute_errors(B, 3, lambda F: lstsq_error(B, F)).values()))
    assert exact.random.uniform.mean == pytest.approx(uni) and exact.random.uniform.exact
    pv = np.array(code.params["p"])
    iid = hetero = 0.0
    for t in range(n + 1):
        for S in itertools.combinations(range(n), t):
            e = lstsq_error(B, _survivors(n, S))
            iid += p**t * (1 - p) ** (n - t) * e
            mask = np.isin(np.arange(n), S)
            hetero += float(np.prod(np.where(mask, pv, 1 - pv))) * e
    assert exact.random.iid is not None and exact.random.hetero is not None
    assert exact.random.iid.mean == pytest.approx(iid)
    assert exact.random.hetero.mean == pytest.approx(hetero)
    mc = attack(code, 3, random=True, p=p, budget=Budget(max_sets=20), samples=2000, seed=11)
    assert mc.random is not None
    for mean in (mc.random.uniform, mc.random.iid):
        assert mean is not None and not mean.exact and mean.samples == 2000
    # the 95% intervals cover the exact means about 95% of the time (seeded, so repeatable)
    from gctool.audit.randomized import iid_mean, uniform_mean

    oracle = make_oracle(code)
    cover_u = sum(_covers(uniform_mean(oracle, 3, budget=1, samples=2000, seed=x), uni)
                  for x in range(40))
    cover_i = sum(_covers(iid_mean(oracle, p, budget=1, samples=2000, seed=x), iid)
                  for x in range(40))
    assert cover_u >= 32 and cover_i >= 32


def _covers(d: dict, true: float) -> bool:  # type: ignore[type-arg]
    return bool(d["ci95"][0] <= true <= d["ci95"][1])


def test_fixed_weights_iid_closed_form() -> None:
    rng = np.random.default_rng(4)
    n = 6
    B = _sparse(rng, n, n, 2, "real")
    w = rng.random(n) + 0.5
    code = GradientCode(B, REAL, 0)
    r = attack(code, 2, decoder="fixed", weights=w, p=0.3)
    total = sum(0.3 ** len(S) * 0.7 ** (n - len(S)) * _fixed_error(B, w, _survivors(n, S))
                for t in range(n + 1) for S in itertools.combinations(range(n), t))
    assert r.random is not None and r.random.iid is not None
    assert r.random.iid.mean == pytest.approx(total)


def test_normalisation_and_labels(frc6: GradientCode) -> None:
    r = attack(frc6, 3, normalize="k", decoder="fixed")
    assert r.raw_error == pytest.approx(6.0) and r.error == pytest.approx(1.0)
    assert r.scale == 6 and "scaled uniform" in r.decoder_label
    with pytest.raises(InvalidInput, match="natural decoder"):
        attack(GradientCode(frc6.B, REAL, 2, "cyclic"), 3, decoder="natural")
    with pytest.raises(InvalidInput):
        attack(frc6, 3, weights=[1.0] * 6)  # weights need --decoder fixed


def test_walk_doubtful_sets_decided_in_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    """The sets a compiled rank-range walk leaves doubtful go to the numpy route in batches of
    at most ``_batch(s)`` sets (one batch of a task's every doubtful set, 188,496 sets of is-cr
    n=36, spent as long in page faults as in arithmetic), with the errors of the sets decided
    one range at a time."""
    from math import comb

    from gctool.audit.oracles import OptimalOracle
    from gctool.codes import design
    from gctool.engine.enumeration import unrank_lex

    monkeypatch.setenv("GCTOOL_COMPILED", "0")
    code, s = design("cyclic", n=12, s=3, seed=2), 4
    n, total = code.n, comb(code.n, s)
    ref = OptimalOracle(code).errors(unrank_lex(n, s, np.arange(total)))
    oracle = OptimalOracle(code)
    oracle._plan(s)
    walk, decide, batches = oracle.compiled.walk, oracle._hat_chunk_numpy, []
    monkeypatch.setattr(oracle.compiled, "walk", lambda *a: (walk(*a)[0], np.ones(
        a[3] - a[2], dtype=bool), np.zeros(a[3] - a[2], dtype=bool)))  # every set doubtful
    monkeypatch.setattr(oracle, "_batch", lambda s: 7)

    def numpy_route(S: np.ndarray) -> np.ndarray:
        batches.append(S.shape[0])
        return decide(S)

    monkeypatch.setattr(oracle, "_hat_chunk_numpy", numpy_route)
    got = oracle.errors_range(n, s, 5, total)
    assert got == pytest.approx(ref[5:], rel=1e-9, abs=1e-20)
    assert max(batches) == 7 and sum(batches) == total - 5
