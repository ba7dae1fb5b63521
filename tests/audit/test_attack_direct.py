"""The attack walk of codes without the oracle's fast path (cond(B) above FAST_KAPPA): compiled
brackets of numpy's decoder error (gctool.audit.kernels.direct), numpy deciding only the sets a
search could tell from their bracket.  The brackets hold numpy's floats and the exact errors;
worst sets, errors, thresholds and labels are those of the numpy route for every --jobs."""

from __future__ import annotations

from math import comb
from typing import Any

import numpy as np
import pytest

from gctool.audit.attack import attack, threshold
from gctool.audit.kernels.direct import BRACKETED, UNKNOWN, DirectBrackets, errors_of
from gctool.audit.oracles import OptimalOracle
from gctool.engine.enumeration import survivors_of, unrank_lex
from gctool.engine.sweep import FirstMaxFold, PeakSummary, WorstFold
from gctool.exactls import Undecided, exact_value
from gctool.limits import TIE_RTOL
from gctool.numerics import first_max, tied_records

from corpus import code_of
from helpers import same_report


def _ill(n: int, K: int, cond: float, seed: int, field: str = "real") -> np.ndarray:
    """A random n x K matrix with singular values from 1 down to 1 / cond."""
    rng = np.random.default_rng(seed)
    G = rng.standard_normal((n, K))
    if field == "complex":
        G = G + 1j * rng.standard_normal((n, K))
    U, _, Vh = np.linalg.svd(G, full_matrices=False)
    return (U * np.logspace(0, -np.log10(cond), min(n, K))) @ Vh


def _circulant(n: int, cond: float, seed: int) -> np.ndarray:
    """A real circulant n x n matrix with condition about ``cond``: the errors of the n
    rotations of a straggler set agree to round-off (ties for the tie rule)."""
    spec = np.fft.fft(np.random.default_rng(seed).standard_normal(n))
    spec[1] *= 1 / cond / abs(spec[1])
    spec[-1] = np.conj(spec[1])
    row = np.real(np.fft.ifft(spec))
    return np.array([np.roll(row, i) for i in range(n)])


CODES = {
    "gaussian 9x9 cond 1e6": (lambda: code_of(_ill(9, 9, 1e6, 1), 0), 3),
    "gaussian 8x12 cond 1e7": (lambda: code_of(_ill(8, 12, 1e7, 2), 0), 3),
    "gaussian 10x5 cond 1e6": (lambda: code_of(_ill(10, 5, 1e6, 3), 0), 4),
    "complex 8x8 cond 1e6": (lambda: code_of(_ill(8, 8, 1e6, 4, "complex"), 0, "complex"), 3),
    "circulant 10 cond 1e5": (lambda: code_of(_circulant(10, 1e5, 5), 0), 3),
}


def _numpy_errors(oracle: OptimalOracle, S: np.ndarray) -> np.ndarray:
    return oracle.decoder.evaluate(survivors_of(S, oracle.n)).error


@pytest.mark.parametrize("name", sorted(CODES))
def test_brackets_hold_numpy_and_the_exact_errors(name: str) -> None:
    make, s = CODES[name]
    code = make()
    oracle = OptimalOracle(code)
    assert not oracle.fast  # the codes this walk is for
    walk = DirectBrackets(oracle.decoder.Bn, oracle.decoder.T)
    bracketed = 0
    for size in range(1, s + 1):
        total = comb(code.n, size)
        S = unrank_lex(code.n, size, np.arange(total))
        state, lo, hi = walk.walk(size, 0, total)
        assert np.array_equal((state, lo, hi), walk.sets(S), equal_nan=True)  # same sets
        ref = _numpy_errors(oracle, S)
        ok = state == BRACKETED
        bracketed += int(ok.sum())
        assert np.all((lo[ok] <= ref[ok]) & (ref[ok] <= hi[ok]))
        for i in np.flatnonzero(ok)[:: max(1, ok.sum() // 12)]:  # exact rational arithmetic
            F = survivors_of(S[i:i + 1], code.n)[0]
            exact = exact_value(oracle.decoder.Bn[F], oracle.decoder.T)
            assert lo[i] <= exact <= hi[i]
    assert bracketed > 0


def test_a_set_of_lower_rank_is_left_to_numpy() -> None:
    B = _ill(8, 8, 1e6, 6)
    B[3] = B[1] * 2.0  # rank 7: every set keeping both rows is rank deficient
    oracle = OptimalOracle(code_of(B, 0))
    walk = DirectBrackets(oracle.decoder.Bn, oracle.decoder.T)
    S = unrank_lex(8, 2, np.arange(comb(8, 2)))
    state = walk.sets(S)[0]
    both = ~np.isin(S, [1, 3]).any(axis=1)
    assert (state[both] == UNKNOWN).all() and (state[~both] == BRACKETED).any()


def _same(a: Any, b: Any, effort: bool = True) -> None:
    """The same reports; ``effort`` False: but for the sets given to the oracle (a walk stops
    at the first set over the limit, the numpy route decides its whole batch)."""
    da, db = same_report(a), same_report(b)
    if not effort:
        da.pop("evaluations"), db.pop("evaluations")
    assert da == db


@pytest.mark.parametrize("name", sorted(CODES))
def test_worst_set_is_numpys_for_every_jobs(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    make, s = CODES[name]
    code = make()
    monkeypatch.setenv("GCTOOL_COMPILED", "0")
    ref = attack(code, s, method="exhaustive", symmetry=False)
    monkeypatch.setenv("GCTOOL_COMPILED", "1")
    for jobs in (1, 2):
        got = attack(code, s, method="exhaustive", symmetry=False, jobs=jobs)
        _same(got, ref)
    assert ref.exact


def test_worst_set_against_exact_brute_force(monkeypatch: pytest.MonkeyPatch) -> None:
    code = code_of(_ill(8, 8, 1e6, 7), 0)
    monkeypatch.setenv("GCTOOL_COMPILED", "1")
    got = attack(code, 3, method="exhaustive", symmetry=False, jobs=2)
    oracle = OptimalOracle(code)
    S = unrank_lex(8, 3, np.arange(comb(8, 3)))
    exact = [exact_value(oracle.decoder.Bn[F], oracle.decoder.T) for F in survivors_of(S, 8)]
    i = int(np.argmax([float(e) for e in exact]))
    assert got.stragglers == S[i].tolist()
    assert abs(got.raw_error - float(exact[i])) <= 1e-6 * float(exact[i])


def test_ties_pick_the_first_set_as_numpy(monkeypatch: pytest.MonkeyPatch) -> None:
    code = code_of(_circulant(12, 1e5, 8), 0)
    oracle = OptimalOracle(code)
    S = unrank_lex(12, 3, np.arange(comb(12, 3)))
    ref = _numpy_errors(oracle, S)
    top = ref.max()
    assert np.sum(np.abs(ref - top) <= 1e-9 * top) >= 12  # a rotation orbit of worst sets
    monkeypatch.setenv("GCTOOL_COMPILED", "1")
    got = attack(code, 3, method="exhaustive", symmetry=False, jobs=2)
    assert got.stragglers == S[first_max(ref)].tolist()
    assert got.raw_error == ref[first_max(ref)]


def test_threshold_is_numpys_for_every_jobs(monkeypatch: pytest.MonkeyPatch) -> None:
    code = code_of(_ill(11, 5, 1e6, 9), 0)  # n > K: sets of 5 or more survivors decode
    monkeypatch.setenv("GCTOOL_COMPILED", "0")
    ref = threshold(code, method="exhaustive", symmetry=False)
    monkeypatch.setenv("GCTOOL_COMPILED", "1")
    one = threshold(code, method="exhaustive", symmetry=False, jobs=1)
    _same(one, ref, effort=False)
    _same(threshold(code, method="exhaustive", symmetry=False, jobs=2), one)
    assert ref.threshold == 7


def test_errors_of_decides_only_what_a_search_can_tell() -> None:
    value = np.array([1.0, 3.0, 2.0, 3.0 + 1e-13, 0.5, 2.9999])
    state = np.full(6, BRACKETED, dtype=np.uint8)
    lo, hi = value * (1 - 1e-9), value * (1 + 1e-9)
    state[4] = UNKNOWN  # always decided
    asked: list[int] = []

    def decide(rows: np.ndarray) -> np.ndarray:
        asked.extend(rows.tolist())
        return value[rows]

    err = errors_of(state, lo, hi, decide)
    assert sorted(asked) == [1, 3, 4]  # the unknown one, and the two tied with the largest
    assert first_max(err) == first_max(value) == 1 and err[1] == value[1]
    asked.clear()
    err = errors_of(state, lo, hi, decide, limit=1.5)
    # the sets whose bracket reaches over the limit, in one batch; the errors stop at the
    # first one over it
    assert asked == [1, 2, 3, 4, 5] and err.size == 2 and err[1] == value[1]


def test_a_walk_from_any_rank_gives_each_sets_own_bracket() -> None:
    """The walk keeps the QR of a set's first survivors from set to set (rank(B) = n): the
    same floats as each set's own QR, from whatever rank a task starts."""
    code = code_of(_ill(12, 12, 1e6, 10), 0)
    oracle = OptimalOracle(code)
    walk = DirectBrackets(oracle.decoder.Bn, oracle.decoder.T)
    assert walk.floor > 0
    S = unrank_lex(12, 4, np.arange(comb(12, 4)))
    every = walk.sets(S)
    for a, b in [(0, 495), (7, 8), (44, 130), (163, 164), (300, 495)]:
        for got, want in zip(walk.walk(4, a, b), every, strict=True):
            assert np.array_equal(got, want[a:b], equal_nan=True)


def _band_after(t: int, failing_first: bool, spread: float = 1e-5) -> np.ndarray:
    """t rows (a, 0, 1), the pair (1, 0, 0), (1, 2^-46, 0) and t rows (1, c 1e-5, 0) (cond
    about 1e5): straggling the t rows of one kind leaves no third coordinate (fails clearly),
    or leaves the second to the pair alone, whose singular value lies in the decoder's rank
    band and decides the verdict (float64 cannot decide: Undecided).  ``failing_first``: the
    first set of size t fails and the undecided one is the last; else the undecided one is
    first.  ``spread`` 0.05: cond about 100, the oracle's fast path (its compiled walk)."""
    e3 = [[0.1 * (i + 1), 0.0, 1.0] for i in range(t)]
    pair = [[1.0, 0.0, 0.0], [1.0, 2.0**-46, 0.0]]
    e2 = [[1.0, spread * (i + 1), 0.0] for i in range(t)]
    return np.array(e3 + pair + e2 if failing_first else e2 + pair + e3)


@pytest.mark.parametrize("t,spread", [(2, 1e-5), (6, 1e-5), (2, 0.05)])
def test_a_set_float64_cannot_decide_after_the_witness_is_no_verdicts(
        t: int, spread: float, monkeypatch: pytest.MonkeyPatch) -> None:
    """The threshold is the first set over the limit in rank order: an undecided set after it
    (in its batch, its task or a later one: they depend on --jobs) changes nothing, on the
    numpy route as on the compiled one (both raised Undecided when it shared the witness's
    batch).  n = 14: C(14, 6) = 3003 sets, whose tasks differ with --jobs.  The fast path's
    compiled walk (spread 0.05) left its doubtful sets to numpy in one batch too."""
    code = code_of(_band_after(t, True, spread), 0)
    assert OptimalOracle(code).fast == (spread > 1e-3)
    got = {}
    for compiled in ("0", "1"):
        monkeypatch.setenv("GCTOOL_COMPILED", compiled)
        for jobs in (1, 2, 3, 5):
            got[compiled, jobs] = threshold(code, method="exhaustive", symmetry=False,
                                            jobs=jobs)
    ref = got["0", 1]
    assert ref.threshold == t and ref.stragglers == list(range(t)) and ref.exact
    for key, r in got.items():
        _same(r, got[key[0], 1])  # evaluations too: the same for every --jobs
        _same(r, ref, effort=False)
    # evaluations: the sets decided; the numpy route counts the rest of the witness's batch
    assert got["1", 1].evaluations < ref.evaluations
    if t == 2:  # exact rational brute force: every smaller set decodes, the witness fails
        oracle = OptimalOracle(code)
        for size in range(t + 1):
            S = unrank_lex(code.n, size, np.arange(comb(code.n, size)))
            for F in survivors_of(S, code.n)[: 1 if size == t else None]:
                value = exact_value(oracle.decoder.Bn[F], oracle.decoder.T)
                assert (value > oracle.limit) == (size == t)


@pytest.mark.parametrize("t", [2, 6])
def test_a_set_float64_cannot_decide_before_the_witness_ends_the_search(
        t: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The undecided set first in rank order: every route and --jobs raise Undecided naming
    it."""
    code = code_of(_band_after(t, False), 0)
    named = rf"straggler set \[{', '.join(map(str, range(t)))}\]"
    for compiled in ("0", "1"):
        monkeypatch.setenv("GCTOOL_COMPILED", compiled)
        for jobs in (1, 2, 3):
            with pytest.raises(Undecided, match=named):
                threshold(code, method="exhaustive", symmetry=False, jobs=jobs)


def test_errors_of_narrows_an_undecided_batch_to_the_witness() -> None:
    """A batch the decoder cannot decide is narrowed: the errors stop at the first set over
    the limit when it comes before the undecided one, else Undecided is raised."""
    value = np.array([0.5, 0.2, 2.0, 0.1, 0.3, 5.0])
    state = np.full(6, UNKNOWN, dtype=np.uint8)
    lo, hi = np.full(6, np.nan), np.full(6, np.nan)

    def deciding(bad: int) -> Any:
        def decide(rows: np.ndarray) -> np.ndarray:
            if bad in rows:
                raise Undecided(f"float64 cannot decide {bad}")
            return value[rows]
        return decide

    for bad in (3, 4, 5):  # after the first over the limit (2)
        err = errors_of(state, lo, hi, deciding(bad), limit=1.0)
        assert err.tolist() == value[:3].tolist()
    for bad in (0, 1, 2):
        with pytest.raises(Undecided, match=f"decide {bad}$"):
            errors_of(state, lo, hi, deciding(bad), limit=1.0)


def _fold(err: np.ndarray, cuts: list[int], fold: WorstFold) -> int:
    """The set index ``fold`` picks from ``err`` split into tasks at ``cuts`` (a task's
    summary: its tied records, the sets being their indices)."""
    for i, (a, b) in enumerate(zip([0, *cuts], [*cuts, err.size], strict=True)):
        out = PeakSummary(i, b - a)
        out.peaks = [(float(err[a + j]), [a + j]) for j in tied_records(err[a:b])]
        fold.merge(out)
    assert fold.stragglers is not None
    return fold.stragglers[0]


def test_the_fold_picks_numpys_first_max_for_any_tasks() -> None:
    """Values within the tie tolerance of one another chain (x, x + 0.9 tol, x + 1.8 tol: the
    first max of the three is the second): a fold of each task's first max alone picks the
    third when the tasks split them (WorstFold), FirstMaxFold the second for every split."""
    tol = TIE_RTOL
    chain = np.array([0.5, 1.0, 1.0 + 0.9 * tol, 0.7, 1.0 + 1.8 * tol, 0.2])
    assert first_max(chain) == 2
    assert _fold(chain, [1, 3, 4], WorstFold()) == 4  # the tie rule per task, not associative
    rng = np.random.default_rng(11)
    for trial in range(300):
        size = int(rng.integers(1, 40))
        err = 1.0 + tol * rng.integers(0, 6, size) * 0.45
        err[rng.random(size) < 0.3] = rng.random() * 0.9
        if trial % 10 == 0:
            err[rng.integers(size)] = np.nan
        if trial % 25 == 0:
            err[rng.integers(size)] = np.inf
        for _ in range(5):
            cuts = sorted(set(rng.integers(1, size, int(rng.integers(0, size))).tolist()))
            assert _fold(err, cuts, FirstMaxFold()) == first_max(err), (err, cuts)


@pytest.mark.parametrize("cond", [1e7, 1e8])
def test_rotation_ties_give_one_worst_set_for_every_jobs(
        cond: float, monkeypatch: pytest.MonkeyPatch) -> None:
    """A circulant code's rotations tie (to round-off) and the tasks of n = 16, s = 5 (4,368
    sets) depend on --jobs: the worst set is numpy's first max over all sets every time."""
    code = code_of(_circulant(16, cond, 0), 0)
    oracle = OptimalOracle(code)
    S = unrank_lex(16, 5, np.arange(comb(16, 5)))
    ref = _numpy_errors(oracle, S)
    i = first_max(ref)
    assert np.sum(ref >= ref[i] - TIE_RTOL * ref[i]) >= 8  # a tied orbit
    monkeypatch.setenv("GCTOOL_COMPILED", "0")
    numpy_route = attack(code, 5, method="exhaustive", symmetry=False)
    monkeypatch.setenv("GCTOOL_COMPILED", "1")
    for jobs in (1, 2, 3, 5):
        got = attack(code, 5, method="exhaustive", symmetry=False, jobs=jobs)
        assert got.stragglers == S[i].tolist() and got.raw_error == ref[i]
        _same(got, numpy_route)


def test_a_probe_meeting_an_undecided_set_after_the_witness_ends_nothing(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """n = 16, threshold 7 (C(16, 7) sets: the search times a sample of them from the middle
    first): the rows of _band_after interleaved, the witness (the e3 rows straggled) at rank
    2,652 and the undecided set (the e2 rows) at 6,733, where the probe met it and raised."""
    B = _band_after(7, True)
    e3, pair, e2 = B[:7], B[7:9], B[9:]
    code = code_of(np.vstack([np.stack([e3, e2], axis=1).reshape(14, 3), pair]), 0)
    for compiled in ("0", "1"):
        monkeypatch.setenv("GCTOOL_COMPILED", compiled)
        for jobs in (1, 2):
            got = threshold(code, method="exhaustive", symmetry=False, jobs=jobs)
            assert got.threshold == 7 and got.stragglers == list(range(0, 14, 2)) and got.exact
