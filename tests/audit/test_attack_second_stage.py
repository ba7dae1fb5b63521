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
    err, pending, second = oracle.compiled(S)
    accidental = oracle._lost_basis(S)[3]
    # the sets with a lost direction are the second stage's (the first one settles none)
    assert not (second & pending).any() and second[accidental & ~pending].all()
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
        for i in np.flatnonzero(settled)[:12]:  # exact rational arithmetic
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
    set's own lam) the numpy oracle keeps too: not near the limit with that lam."""
    from gctool.audit.kernels.optimal import _below_model

    code = design("cyclic", n=12, s=3, seed=2)
    oracle = OptimalOracle(code, tol=1e-3)
    oracle._plan(3)
    bands = oracle.compiled.bands
    rng = np.random.default_rng(0)
    kept = 0
    for v, lam in zip(oracle.limit * rng.uniform(0, 1, 4000),
                      10.0 ** rng.uniform(-12, 0, 4000), strict=True):
        if v < bands[2] and _below_model(float(v), bands, float(lam)):
            kept += 1
            assert not oracle.near_limit(v, lam)
    assert kept > 100
