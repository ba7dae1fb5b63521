"""verify and the threshold on random communication-efficient codes (m > 1 pieces per worker)
against a per-set brute force written here: exact rational least squares over R
(tests/oracles.exact_lstsq_error with the m targets e_u (x) ones(k)), galois' rank over GF(5).
Designed comm / ye-abbe files were the only m > 1 codes checked before.  Also metamorphic: the
verdicts do not change when the rows are permuted or scaled by powers of two, nor with --jobs
or the kernel; a counterexample fails, and attack -s (exhaustive) finds the exact worst error."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

from gctool.algebra.fields import parse_field
from gctool.audit.attack import attack, threshold
from gctool.audit.verify import verify
from gctool.exactls import Undecided
from gctool.model import GradientCode

from corpus import TOL
from oracles import exact_lstsq_error


def random_code(seed: int, field: str) -> GradientCode:
    rng = np.random.default_rng(seed)
    n, k, m = int(rng.integers(3, 7)), int(rng.integers(1, 4)), int(rng.integers(2, 4))
    K = k * m
    if field == "real":
        r = int(rng.integers(1, min(n, K) + 1))
        B = (rng.integers(-2, 3, (n, r)) @ rng.integers(-2, 3, (r, K)) * 1.0 if seed % 2
             else rng.standard_normal((n, K)) * (rng.random((n, K)) < 0.6))
    else:
        B = rng.integers(0, 5, (n, K)) * (rng.random((n, K)) < 0.7)
    return GradientCode(B, parse_field(field), 0, params={"m": m})


def decodes_of(code: GradientCode):  # type: ignore[no-untyped-def]
    """Exact per-set test of ``code``: do survivors F recover every target?"""
    B, T = np.asarray(code.B), code.targets()
    if code.field.is_finite:
        GF = code.field.galois()

        def decodes(F: tuple[int, ...]) -> bool:
            rows = B[list(F)].astype(np.int64)
            both = np.vstack([rows, T.astype(np.int64)])
            return bool(F) and int(np.linalg.matrix_rank(GF(both))) == int(
                np.linalg.matrix_rank(GF(rows)))
    else:
        def decodes(F: tuple[int, ...]) -> bool:
            return bool(F) and exact_lstsq_error(B, F, T) <= Fraction(TOL) * code.k
    return decodes


def brute_threshold(code: GradientCode) -> int | None:
    decodes, n = decodes_of(code), code.n
    for t in range(n + 1):
        for S in itertools.combinations(range(n), t):
            if not decodes(tuple(i for i in range(n) if i not in S)):
                return t
    return None


@pytest.mark.parametrize("field", ["real", "GF(5)"])
def test_random_multipiece_codes_against_brute_force(field: str) -> None:
    checked = 0
    for seed in range(10):
        code = random_code(seed, field)
        truth = brute_threshold(code)
        rng = np.random.default_rng(seed)
        perm = rng.permutation(code.n)
        B2 = np.asarray(code.B)[perm]
        if field == "real":
            B2 = B2 * np.ldexp(1.0, rng.integers(-3, 4, code.n))[:, None]
        other = GradientCode(B2, code.field, 0, params={"m": code.m})
        for s in range(code.n):
            for c, jobs, kernel in ((code, 1, "auto"), (code, 2, "auto"), (other, 1, "auto"),
                                    (code, 1, "nullspace"), (code, 1, "direct")):
                try:
                    v = verify(c, s, jobs=jobs, kernel=kernel)
                except Undecided:
                    continue
                checked += 1
                assert v.exact and v.ok == (truth is None or s < truth), (seed, s, jobs, kernel)
                if not v.ok:  # the counterexample fails (in c's own row order)
                    F = tuple(i for i in range(c.n) if i not in set(v.counterexample))
                    assert not decodes_of(c)(F), (seed, s, v.counterexample)
        if field == "real":  # attack -s: the worst error is the exact one's
            for s in range(code.n):
                try:
                    a = attack(code, s, method="exhaustive")
                except Undecided:
                    continue
                worst = max(float(exact_lstsq_error(np.asarray(code.B), tuple(
                    i for i in range(code.n) if i not in S), code.targets()))
                    for S in itertools.combinations(range(code.n), s))
                assert a.raw_error == pytest.approx(worst, rel=1e-6, abs=1e-9 * code.k), (seed, s)
        for method, jobs in (("auto", 1), ("exhaustive", 1), ("exhaustive", 2), ("bnb", 1)):
            try:
                t = threshold(code, method=method, jobs=jobs)
            except Undecided:
                continue
            if t.exact:
                assert t.threshold == truth, (seed, method, jobs, t.threshold, truth)
    assert checked > 50
