"""Verdicts on straggler sets that lose directions, with the decoding limit placed near their
exact error: inside and just outside the attack oracle's error band (optimal.lost_terms, the
part of the band the Cholesky route's first-order bound gives; a measured constant before),
and at relative distances 3e-14 to 3e-3.

Codes: tests/oracles.exact_rank_code (B = G M exactly: integer G and M, rows 2^a times
another plus a few units or columns graded by powers of two, every product exact in float64,
so the exact rational least-squares error of every set is the decoding rule's), rank
r = n - d: every set of s = d + 1 stragglers loses a direction (the fast path's Cholesky
route).
For each limit (tol = limit / k), verify -s, attack -s and the threshold must agree with the
exact errors wherever they say exact; numpy and the compiled walk (whose per-set band check
is its own, kernels/optimal._lam_needed).  Seeds: cond(B) 6.6e3 (4), 1.6e3 (57), 564 (13,
n = 10), complex 3.6e3 (30), 2.8e3 (41) and 440 (16).  A hunt over 550 such codes (this
generator and one of rank n - d, d = 0..2, n up to 11), over 60,000 verdicts: none wrong."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

from gctool.algebra.fields import parse_field
from gctool.audit.attack import attack, threshold
from gctool.audit.oracles.optimal import FAST_KAPPA, OptimalOracle
from gctool.audit.verify import verify
from gctool.exactls import Undecided
from gctool.model import GradientCode

from oracles import exact_lstsq_error, exact_rank_code

#: relative distances of the limit from a set's exact error, and multiples of its band
RELATIVE = (-3e-3, -1e-5, -1e-8, -1e-11, -3e-14, 3e-14, 1e-11, 1e-8, 1e-5, 3e-3)
BANDS = (-4.0, -1.5, -0.5, 0.5, 1.5, 4.0)


def code_of(seed: int) -> GradientCode:
    B = exact_rank_code(seed)
    return GradientCode(B, parse_field("complex" if np.iscomplexobj(B) else "real"), 0)


#: exact errors already computed, by (B's bytes, dtype, shape, targets, s): each seed's code
#: is checked on the numpy and the compiled route, whose exact references are the same
_EXACT: dict[tuple[bytes, str, tuple[int, ...], bytes, int],
             tuple[list[tuple[int, ...]], list[Fraction]]] = {}


def exact_errors(code: GradientCode, s: int) -> tuple[list[tuple[int, ...]], list[Fraction]]:
    n, B, T = code.n, np.asarray(code.B), code.targets()
    key = (B.tobytes(), B.dtype.str, B.shape, T.tobytes(), s)
    if key not in _EXACT:
        sets = list(itertools.combinations(range(n), s))
        _EXACT[key] = sets, [exact_lstsq_error(B, tuple(i for i in range(n) if i not in S), T)
                             for S in sets]
    return _EXACT[key]


def limits_near(oracle: OptimalOracle, S: tuple[int, ...], e: Fraction) -> list[float]:
    """Limits at RELATIVE distances from e, and at BANDS multiples of the set's band (its
    half-width on the side the limit is put)."""
    err = float(e)
    lam = float(oracle.kept_floor(np.array([S]))[0])
    rho = np.sqrt(err)
    drho, grow = oracle.band(lam, len(S))
    off = float(drho + grow * rho)
    up, down = (rho + off) ** 2 - err, err - max(rho - off, 0.0) ** 2
    out = [err * (1 + x) for x in RELATIVE]
    out += [err + c * (up if c > 0 else down) for c in BANDS]
    return [x for x in out if x > 0]


def check_limits(code: GradientCode, compiled: str, picks: int = 2, jobs: int = 1) -> int:
    """Verdicts of verify -s, attack -s and the threshold at limits near the exact errors of
    the worst set of s = d + 1 stragglers and of others; the number of verdicts checked."""
    oracle = OptimalOracle(code, tol=1e30)
    assert oracle.kappa <= FAST_KAPPA and oracle.fast
    n, k = code.n, code.k
    d = oracle.Qperp.shape[1]
    s = d + 1
    sets, errs = exact_errors(code, s)
    below = [max(exact_errors(code, u)[1]) for u in range(s)]
    rng = np.random.default_rng(n * 31 + s)
    chosen = [errs.index(max(errs))] + [int(i) for i in rng.choice(len(sets), picks - 1,
                                                                     replace=False)]
    checked = 0
    for p in chosen:
        if errs[p] == 0:
            continue
        for limit in limits_near(oracle, sets[p], errs[p]):
            tol = float(limit / k)
            lim = Fraction(repr(tol)) * k  # the rule's limit: the typed decimal times k
            if lim in errs or lim in below:
                continue  # a tie: tests/audit/test_crosscheck_tol*'s
            fails = [S for S, e in zip(sets, errs, strict=True) if e > lim]
            truth = next((u for u in range(s) if below[u] > lim), s if fails else None)
            what = (compiled, sets[p], float(errs[p]), limit)
            try:
                v = verify(code, s, tol=tol, method="exhaustive", jobs=jobs)
                assert v.ok == (not fails), what
                assert v.ok or tuple(v.counterexample or ()) in fails, what
                checked += 1
            except Undecided:
                pass
            try:
                w = attack(code, s, tol=tol, method="exhaustive", jobs=jobs)
                if w.exact and w.raw_error is not None:
                    assert (w.raw_error > float(lim)) == bool(fails), what
                    assert w.raw_error == pytest.approx(float(max(errs)), rel=1e-6), what
                    checked += 1
            except Undecided:
                pass
            if truth is None:
                continue
            try:
                t = threshold(code, tol=tol, method="exhaustive", jobs=jobs)
                if t.exact:
                    assert t.threshold == truth, what
                    checked += 1
            except Undecided:
                pass
    return checked


@pytest.mark.parametrize("compiled", ["0", "1"])
@pytest.mark.parametrize("seed", [4, 13, 16, 30, 41, 57])
def test_lost_sets_near_the_limit_get_the_exact_verdict(seed: int, compiled: str,
                                                         monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    monkeypatch.setenv("GCTOOL_COMPILED", compiled)
    code = code_of(seed)
    assert check_limits(code, compiled) >= 20


@pytest.mark.parametrize("seed", [30])
def test_lost_sets_near_the_limit_get_the_exact_verdict_with_two_jobs(
        seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same with --jobs 2 (the compiled walk in two threads, each proving its sets' bands
    itself): the verdicts are the exact ones, as with one job."""
    monkeypatch.setenv("GCTOOL_COMPILED", "1")
    assert check_limits(code_of(seed), "1", jobs=2) >= 20
