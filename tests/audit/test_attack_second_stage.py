"""The attack walk's compiled second stage (gctool.audit.kernels.optimal._settle): the sets the
first stage leaves to numpy (a direction of range(B) lost beyond the dimension count) are
decided in compiled code only where numpy's route is proved to agree, and never where numpy's
oracle would call its decoder.  Checked against numpy's route and exact rational arithmetic on
codes whose null space is exactly singular on many sets (is-cr) and whose lost sets fail (frc)."""

from __future__ import annotations

from math import comb

import numpy as np
import pytest

from gctool.audit.attack import attack, threshold
from gctool.audit.oracles import OptimalOracle
from gctool.audit.oracles.optimal import below_band, near_limit
from gctool.codes import design
from gctool.engine.enumeration import survivors_of, unrank_lex
from gctool.exactls import exact_error
from gctool.limits import TIE_RTOL

from corpus import code_of


def _all(oracle: OptimalOracle, s: int) -> tuple[np.ndarray, ...]:
    """Every set of size s: (sets, compiled errors, pending, numpy's errors, accidental)."""
    oracle.compiled = None
    oracle._plan(s)
    S = unrank_lex(oracle.n, s, np.arange(comb(oracle.n, s)))
    err, pending, unchecked = oracle.compiled(S)
    accidental = oracle._lost_basis(S)[3]
    # the sets with a lost direction are the second stage's (the first one settles none,
    # and leaves none to numpy's per-set band check)
    assert not (unchecked & pending).any() and not unchecked[accidental].any()
    return S, err, pending, oracle._hat_chunk_numpy(S), accidental


@pytest.mark.parametrize("n,s,field", [(12, 2, "real"), (16, 3, "real"), (16, 3, "complex")])
def test_exactly_singular_sets_are_settled_as_numpy_and_exact_arithmetic_decide(
        n: int, s: int, field: str) -> None:
    code = design("is-cr", n=n, s=s)
    if field == "complex":  # rows times unit phases: the same losses, over C
        phases = np.exp(1j * np.random.default_rng(0).uniform(0, 6, n))[:, None]
        code = code_of(np.asarray(code.B) * phases, s, "complex")
    oracle = OptimalOracle(code)
    settled_any = 0
    for size in range(s, s + 4):
        S, err, pending, ref, accidental = _all(oracle, size)
        settled = accidental & ~pending
        settled_any += int(settled.sum())
        assert settled.sum() == accidental.sum()  # is-cr: every such set decodes
        # within a quarter of the tie tolerance of numpy's value: the same worst sets
        assert np.all(np.abs(err[~pending] - ref[~pending])
                      <= TIE_RTOL / 4 * np.maximum(1.0, np.abs(ref[~pending])))
        # exact rational arithmetic, on settled sets spread over the walk: 12 a size over R,
        # 3 over C (the first, middle and last), where the phases' 53-bit rationals make each
        # exact solve 0.2-0.8 s (the first 12 of each size took 17 s of the suite)
        idx = np.flatnonzero(settled)
        spread = np.linspace(0, idx.size - 1, 3 if field == "complex" else 12).astype(int)
        for i in idx[np.unique(spread)] if idx.size else idx:
            exact = exact_error(code.B[survivors_of(S[i:i + 1], n)[0]], code.targets())
            assert abs(err[i] - exact) <= 1e-20
            assert (err[i] > oracle.limit) == (exact > oracle.limit)
    assert settled_any > 0


def test_lost_sets_over_the_limit_stay_with_numpy_and_its_decoder() -> None:
    code = design("frc", n=12, s=2)  # losing a whole group of 3 loses a partition
    oracle = OptimalOracle(code)
    for size in (3, 4, 5):
        S, err, pending, ref, accidental = _all(oracle, size)
        over = accidental & (ref > oracle.limit)
        assert over.any() and pending[over].all()
        walked = oracle.errors_range(12, size, 0, S.shape[0])
        assert walked is not None
        assert walked == pytest.approx(ref, rel=1e-12, abs=1e-20)


def test_a_search_limit_within_the_bound_leaves_the_set_to_numpy() -> None:
    code = design("is-cr", n=16, s=3)
    oracle = OptimalOracle(code)
    S, err, pending, _, accidental = _all(oracle, 3)
    i = int(np.flatnonzero(accidental & ~pending)[0])
    err2, pending2, _ = oracle.compiled.walk(16, 3, 0, S.shape[0], limit=float(err[i]))
    assert pending2[i]  # |err - limit| = 0 is within any bound: numpy decides
    assert not pending2[~pending & (np.abs(err - err[i]) > 1e-20)].any()


def test_the_ceiling_is_below_the_near_limit_band() -> None:
    for limit in (3.6e-8, 1.0, 7.5):
        top = below_band(limit)
        assert 0 < top < limit and not near_limit(top, limit)


@pytest.mark.parametrize("jobs", [1, 2])
def test_is_cr_attack_is_numpys_for_any_jobs(monkeypatch: pytest.MonkeyPatch,
                                             jobs: int) -> None:
    code = design("is-cr", n=16, s=3)
    monkeypatch.setenv("GCTOOL_COMPILED", "0")
    plain = [attack(code, s, method="exhaustive", symmetry=False) for s in (3, 4)]
    found0 = threshold(code, method="exhaustive", epsilon=0.0, symmetry=False)
    monkeypatch.setenv("GCTOOL_COMPILED", "1")
    fast = [attack(code, s, method="exhaustive", symmetry=False, jobs=jobs) for s in (3, 4)]
    found1 = threshold(code, method="exhaustive", epsilon=0.0, symmetry=False, jobs=jobs)
    for a, b in zip(plain, fast, strict=True):
        assert (a.stragglers, a.exact, a.method) == (b.stragglers, b.exact, b.method)
        assert b.raw_error == pytest.approx(a.raw_error, rel=1e-12, abs=1e-20)
    assert (found0.threshold, found0.stragglers, found0.exact) == \
        (found1.threshold, found1.stragglers, found1.exact)


def test_the_compiled_band_is_at_least_the_oracles_per_set_band() -> None:
    """What the second stage keeps (below the ceiling and clear of the error model with the
    set's own lam) the numpy oracle keeps too: not near the limit with that lam (sets of
    s = d + 1 that lose a direction, and lam = inf: none lost)."""
    from gctool.audit.kernels.optimal import _below_model

    code = design("cyclic", n=12, s=3, seed=2)
    oracle = OptimalOracle(code, tol=1e-3)
    oracle._plan(3)
    bands = oracle.compiled.bands
    d = oracle.Qperp.shape[1]
    rng = np.random.default_rng(0)
    kept = 0
    for v, lam in zip(oracle.limit * rng.uniform(0, 1, 4000),
                      10.0 ** rng.uniform(-12, 0, 4000), strict=True):
        lam = lam if kept % 5 else np.inf
        if v < bands[2] and _below_model(float(v), bands, float(lam), d + 1, d, 1):
            kept += 1
            assert not oracle.near_limit(v, lam, d + 1)
    assert kept > 100


@pytest.mark.parametrize("grow", [0.0, 1e-3, 0.5])
def test_the_walks_band_is_near_limits_band_over_a_chunk(grow: float) -> None:
    """The attack walk marks a set pending when its error lies in the oracle's near-limit band
    (kernels.optimal._banded, with near_limit's bounds over a chunk, _clear_outside): exactly
    the sets near_limit doubts over a chunk of more than 64 errors, non-finite ones included,
    whatever stage decided them; a pending set stays pending."""
    from gctool.audit.kernels.optimal import _banded
    from gctool.audit.oracles.optimal import _clear_outside

    rng = np.random.default_rng(5)
    limit, drho = 1e-8, 3e-6
    lo, hi = _clear_outside(limit, drho, grow)
    err = np.concatenate([limit * rng.uniform(0, 3, 200), [lo, hi, np.nan, np.inf, -np.inf, 0.0],
                          np.nextafter([lo, lo, hi, hi], [0, 1, 0, 1])])
    doubt = near_limit(err, limit, drho, grow)
    assert doubt.any() and not doubt.all()
    for state in (0, 2):
        got = np.array([_banded(e, state, lo, hi) for e in err])
        assert np.array_equal(got == 1, doubt) and (got[~doubt] == state).all()
    assert all(_banded(e, 1, lo, hi) == 1 for e in err)


def test_the_walk_marks_the_band_as_the_oracle_did(monkeypatch: pytest.MonkeyPatch) -> None:
    """errors_range with the band in the walk gives the errors of the walk without it whose
    pending sets near_limit then marked (the route before), on a cyclic code attacked beyond
    its tolerance (every set loses a direction) with the tolerance placed among its errors,
    so that many lie in the band."""
    monkeypatch.setenv("GCTOOL_COMPILED", "1")
    code, s = design("cyclic", n=14, s=3, seed=2), 4
    probe = OptimalOracle(code)
    probe._plan(s)
    total = comb(code.n, s)
    err0 = probe.compiled.walk(code.n, s, 0, total)[0]
    errs = np.unique(err0[np.isfinite(err0)])
    tol = float(errs[len(errs) // 2]) / code.k
    oracle = OptimalOracle(code, tol=tol)
    assert oracle._uses_hat(s)
    oracle._plan(s)
    lo, hi = _bounds(oracle)
    err, pending, _ = oracle.compiled.walk(code.n, s, 0, total, np.inf, (lo, hi))
    base, pend0, _ = oracle.compiled.walk(code.n, s, 0, total)
    assert np.array_equal(err, base)
    assert np.array_equal(pending, pend0 | oracle.near_limit(base))
    assert 0 < pending.sum() < total
    assert oracle.errors_range(code.n, s, 0, total) == pytest.approx(
        OptimalOracle(code, tol=tol).errors(unrank_lex(code.n, s, np.arange(total))), rel=1e-9,
        abs=1e-20)


def _bounds(oracle: OptimalOracle) -> tuple[float, float]:
    from gctool.audit.oracles.optimal import _clear_outside

    return _clear_outside(oracle.limit, oracle.drho, oracle.grow)


@pytest.mark.parametrize("seed,s,left", [(2, 4, True), (2, 5, False), (5, 4, None)])
def test_the_walks_per_set_band_clears_only_what_numpys_det_clears(seed: int, s: int,
                                                                    left: bool | None) -> None:
    """With s > d the walk decides a set's per-set band itself (the lam it needs,
    kernels.optimal._lam_needed, proved by a shifted Cholesky of its Gram matrix) only where
    numpy's check (near_limit_lost: its det, then the eigenvalue) clears it too; the rest it
    leaves to that check (unchecked).  Cyclic n=14 (d = 3) attacked beyond its tolerance,
    the tolerance placed among the errors."""
    code = design("cyclic", n=14, s=3, seed=seed)
    probe = OptimalOracle(code)
    S, err0, _, _, _ = _all(probe, s)
    tol = float(np.median(err0[np.isfinite(err0)])) / code.k
    oracle = OptimalOracle(code, tol=tol)
    assert oracle._uses_hat(s)
    S, err, pending, ref, accidental = _all(oracle, s)
    _, _, unchecked = oracle.compiled(S)
    A = oracle.Qperp[S]
    kkt = np.linalg.eigvalsh(np.conj(np.swapaxes(A, 1, 2)) @ A)[:, 0] >= \
        oracle.sig_kept ** 2 * (1 + 1e-6)
    cleared = kkt & ~pending & ~unchecked
    assert cleared.any() and left in (None, bool((kkt & unchecked).any()))
    assert not oracle.near_limit_lost(err[cleared], S[cleared]).any()
    walked = oracle.errors_range(code.n, s, 0, S.shape[0])
    assert walked is not None  # the KKT floats of the walk and of numpy differ: to 1e-6
    assert walked == pytest.approx(ref, rel=1e-6, abs=1e-20)
    assert np.array_equal(walked > oracle.limit, ref > oracle.limit)
