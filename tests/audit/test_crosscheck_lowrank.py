"""verify, attack -s, the threshold and the curve on exactly low-rank real and complex codes
the corpora do not hold, against a per-set reference written here.

B = G M exactly (dyadic entries, every product exact in float64): M (r x K) holds the
all-ones row, so a survivor set decodes iff the span of its rows of G reaches that row's
coordinate.  G: nearly dependent rows (a row 2^a times another plus 1/64 here and there:
cond(B) 1e2-1e4, where the attack oracle's fast path and its error band work), copies scaled
by -1, 2 or 1/4 and zero rows, duplicate columns of M, few rows carrying the ones-coordinate
(low thresholds at n = 10-14), complex rows multiplied by Gaussian integers.  The reference
decides each set from its own SVD under the documented rule (tests/oracles.policy_decodes,
vectorised): exact rational least squares where float64 is not clear, and 'ambiguous' near
the rank cut-off, where gctool may answer either way.  Also metamorphic: permuting and
scaling the rows (powers of two) changes no threshold and no worst error."""

from __future__ import annotations

import functools
import itertools
from math import comb

import numpy as np
import pytest

from gctool.algebra.fields import parse_field
from gctool.audit.attack import attack, curve, threshold
from gctool.audit.verify import verify
from gctool.exactls import Undecided
from gctool.model import GradientCode

from corpus import TOL
from oracles import exact_lstsq_error

EPS = np.finfo(float).eps
KINDS = ("near-dependent", "copies", "duplicate-columns", "gaussian-integers")
#: seeds per kind; near-dependent: cond(B) 233 (the attack oracle's fast path), 1.6e4 and
#: 3.8e5 (above FAST_KAPPA: the decoder for every set)
SEEDS = {"near-dependent": (1, 10, 2), "copies": (0, 1), "duplicate-columns": (0, 1),
         "gaussian-integers": (0, 1)}


def lowrank_code(seed: int, kind: str) -> GradientCode:
    rng = np.random.default_rng(seed)
    n, K = int(rng.integers(10, 15)), int(rng.integers(3, 8))
    r = int(rng.integers(2, min(K, n - 3) + 1))
    M = rng.integers(-2, 3, (r, K)).astype(float)
    if kind == "duplicate-columns":
        M = M[:, rng.integers(0, K, K)]
    M[0] = 1.0
    G = rng.integers(-2, 3, (n, r)) * (rng.random((n, r)) < 0.7).astype(float)
    G[:, 0] = 0.0  # few rows carry the ones-coordinate
    rows = rng.choice(n, int(rng.integers(1, 5)), replace=False)
    G[rows, 0] = rng.integers(1, 4, rows.size)
    for i in range(1, n):
        x = rng.random()
        if kind == "near-dependent" and x < 0.4:
            G[i] = (2.0 ** int(rng.integers(3, 9)) * G[int(rng.integers(0, i))]
                    + (rng.random(r) < 0.3) / 256)
        elif kind == "copies" and x < 0.35:
            G[i] = G[int(rng.integers(0, i))] * rng.choice([1.0, -1.0, 2.0, 0.25])
        elif kind == "copies" and x < 0.45:
            G[i] = 0.0
    B = G @ M
    if kind == "gaussian-integers":
        B = B * rng.choice(np.array([1, 1j, -1j, 1 + 1j, 2 - 1j]), n)[:, None]
    return GradientCode(B, parse_field("complex" if np.iscomplexobj(B) else "real"), 0)


def set_errors(B: np.ndarray, s: int) -> tuple[list[tuple[int, ...]], np.ndarray]:
    """Every s-set (lexicographic) and its error under the documented rule (nan: ambiguous),
    as tests/oracles.policy_decodes decides one set, for all sets at once."""
    n, K = B.shape
    limit = TOL * K
    sets = list(itertools.combinations(range(n), s))
    keep = np.array([[i for i in range(n) if i not in S] for S in sets], dtype=np.intp)
    A = B[keep]
    _, e = np.frexp(np.maximum(np.linalg.norm(A, axis=2), np.finfo(float).tiny))
    A = A * np.ldexp(1.0, -e)[:, :, None]  # exact: powers of two
    _, sv, Vh = np.linalg.svd(A, full_matrices=False)
    cut = sv[:, :1] * max(A.shape[1], K) * EPS
    err = np.full(len(sets), np.nan)
    for b, F in enumerate(keep):
        if sv[b, 0] == 0:
            err[b] = K
            continue
        if np.any((sv[b] > cut[b] / 4) & (sv[b] < cut[b] * 30)):
            continue  # at the rank cut-off: either answer
        rank = int(np.sum(sv[b] > cut[b]))
        V = Vh[b, :rank].conj().T
        ones = np.ones(K)
        val = float(np.sum(np.abs(ones - V @ (V.conj().T @ ones)) ** 2))
        if sv[b, 0] / sv[b, rank - 1] < 1e6 and not limit * 1e-3 <= val <= limit * 1e3:
            err[b] = val
        elif rank == len(F):
            err[b] = float(exact_lstsq_error(B, tuple(int(i) for i in F)))
    return sets, err


def reference(code: GradientCode, upto: int) -> dict[int, tuple[np.ndarray, list]]:
    return {s: set_errors(np.asarray(code.B), s)[::-1] for s in range(upto + 1)}


@functools.cache
def cached_reference(kind: str, seed: int, upto: int) -> dict[int, tuple[np.ndarray, list]]:
    """:func:`reference` of ``lowrank_code(seed, kind)``, once for the numpy and the compiled
    route (the code itself is made anew for each: nothing derived from B is shared)."""
    return reference(lowrank_code(seed, kind), upto)


def transformed(code: GradientCode, seed: int) -> GradientCode:
    """Rows permuted and scaled by powers of two (exact): every error is unchanged."""
    rng = np.random.default_rng(seed)
    perm = rng.permutation(code.n)
    B = np.asarray(code.B)[perm] * 2.0 ** rng.integers(-20, 21, code.n)[:, None]
    return GradientCode(B, code.field, 0)


@pytest.mark.parametrize("compiled", ["0", "1"])
@pytest.mark.parametrize("kind", KINDS)
def test_lowrank_codes_against_per_set_reference(kind: str, compiled: str,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GCTOOL_COMPILED", compiled)
    checked = 0
    for seed in SEEDS[kind]:
        code = lowrank_code(seed, kind)
        n, K = code.n, code.B.shape[1]
        limit = TOL * K
        upto = max(s for s in range(n) if comb(n, s) <= 3_000)
        ref = cached_reference(kind, seed, upto)
        clear = [s for s in ref if not np.isnan(ref[s][0]).any()]
        thr = next((s for s in ref if (ref[s][0] > limit).any()), None)
        if thr is not None and any(s not in clear for s in range(thr + 1)):
            thr = None  # an ambiguous set at or below it: no claim
        for s in clear:
            err, sets = ref[s]
            fails = err > limit
            for method, jobs in (("auto", 1), ("exhaustive", 2)):
                try:
                    v = verify(code, s, method=method, jobs=jobs)
                except Undecided:
                    continue
                assert v.ok == (not fails.any()), (seed, s, method)
                if not v.ok:
                    assert err[sets.index(tuple(v.counterexample or ()))] > limit
                checked += 1
            a = attack(code, s, method="exhaustive", jobs=1 + s % 2)
            worst = float(err.max())
            if a.exact and worst > limit:
                assert a.raw_error == pytest.approx(worst, rel=1e-6), (seed, s)
                assert err[sets.index(tuple(a.stragglers or ()))] == pytest.approx(worst, rel=1e-6)
            elif a.exact:
                assert a.raw_error <= limit, (seed, s)
        if thr is None:
            continue
        for method in ("exhaustive", "auto", "bnb"):
            t = threshold(code, method=method, jobs=2 if method == "exhaustive" else 1)
            assert not t.exact or t.threshold == thr, (seed, method, t.threshold, thr)
        t = threshold(transformed(code, seed), method="exhaustive")
        assert t.exact and t.threshold == thr, seed
        c = curve(code, thr, method="exhaustive")
        moved = curve(transformed(code, seed), thr, method="exhaustive")
        for p, q in zip(c.curve, moved.curve, strict=True):
            top = float(ref[p.s][0].max()) if p.s in clear else None
            if p.exact and top is not None and top > limit:
                assert p.raw_error == pytest.approx(top, rel=1e-6), (seed, p.s)
                assert q.raw_error == pytest.approx(top, rel=1e-6), (seed, p.s)
    assert checked > 0
