"""verify, attack -s and the threshold against a per-set brute force on random small codes.

The codes are of the kinds where float64 verdicts are hard and the existing corpora are thin:
rows differing by 1e-9, low rank plus noise (cond(B_F) up to 1e14), integer rows up to 2^40,
exact low-rank integer products, rows scaled by 10^±50 — real and complex, with the compiled
kernels forced on and off.  The reference (tests/oracles.py ``policy_decodes``) decides each
set on its own under the documented rule, in exact rational arithmetic where float64 is not
clear, and says "ambiguous" near the rank cut-off; gctool may answer those either way or
stop undecided, but every answer it labels exact must be the reference's.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from gctool.audit.attack import attack, threshold
from gctool.audit.verify import verify
from gctool.exactls import Undecided

from corpus import code_of
from oracles import policy_decodes

KINDS = ("near-rows", "low-rank-noise", "big-integers", "integer-product", "scaled-cyclic")


def random_b(seed: int, kind: str, cplx: bool) -> np.ndarray:
    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(4, 8)), int(rng.integers(2, 6))

    def g(*shape: int) -> np.ndarray:
        x = rng.standard_normal(shape)
        return x + 1j * rng.standard_normal(shape) if cplx else x

    if kind == "near-rows":
        B = g(n, k) * (rng.random((n, k)) < 0.7)
        for i in range(1, n):
            if rng.random() < 0.5:
                B[i] = B[int(rng.integers(0, i))] + 1e-9 * g(k)
    elif kind == "low-rank-noise":
        r = max(1, k - 1)
        B = g(n, r) @ g(r, k) + 10.0 ** rng.integers(-13, -5) * g(n, k)
    elif kind == "big-integers":
        B = rng.integers(-2**40, 2**40, (n, k)) * (rng.random((n, k)) < 0.6) * (1.0 + 0j * cplx)
    elif kind == "integer-product":
        r = int(rng.integers(1, k + 1))
        B = (rng.integers(-3, 4, (n, r)) @ rng.integers(-3, 4, (r, k))) * (1 - 2j if cplx else 1.0)
    else:
        w = int(rng.integers(1, k + 1))
        base = g(w)
        B = np.zeros((n, n), dtype=base.dtype)
        for i in range(n):
            B[i, [(i + j) % n for j in range(w)]] = base
        B = B * 10.0 ** rng.integers(-50, 50, n)[:, None]
    return B


def reference(B: np.ndarray) -> dict[int, tuple[bool | None, float | None, set]]:
    """Per s: (every s-set decodes; None when unknown), the worst error (None when a set is
    ambiguous) and the sets that decode (clearly)."""
    n = B.shape[0]
    out = {}
    for s in range(n + 1):
        fails, decode, worst, amb = False, set(), 0.0, False
        for S in itertools.combinations(range(n), s):
            ok, err = policy_decodes(B, tuple(i for i in range(n) if i not in S))
            if ok is None:
                amb = True
                continue
            worst = max(worst, float(err))
            if ok:
                decode.add(S)
            else:
                fails = True
        out[s] = (False if fails else None if amb else True, None if amb else worst, decode)
    return out


@pytest.mark.parametrize("compiled", ["0", "1"])
@pytest.mark.parametrize("field", ["real", "complex"])
@pytest.mark.parametrize("kind", KINDS)
def test_random_codes_against_per_set_brute_force(kind: str, field: str, compiled: str,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GCTOOL_COMPILED", compiled)
    checked = 0
    for seed in range(4):
        B = random_b(1000 * KINDS.index(kind) + seed, kind, field == "complex")
        if not np.any(B):
            continue
        ref = reference(B)
        code = code_of(B, 0, field)
        n = B.shape[0]
        first_fail = next(s for s in range(n + 1) if ref[s][0] is not True)
        for s in range(n):
            truth, worst, decode = ref[s]
            for method in ("auto", "exhaustive"):
                try:
                    r = verify(code, s, method=method)
                except Undecided:
                    assert truth is None or s > first_fail, (seed, s, method)
                    continue
                assert r.exact
                if truth is not None:
                    checked += 1
                    assert r.ok == truth, (seed, s, method)
                if r.counterexample is not None:  # never a set that decodes
                    assert tuple(r.counterexample) not in decode, (seed, s, r.counterexample)
            try:
                a = attack(code, s)
            except Undecided:
                continue
            limit = 1e-9 * B.shape[1]
            if worst is not None and a.exact and worst > limit:
                assert a.raw_error == pytest.approx(worst, rel=1e-6), (seed, s)
            elif worst is not None and a.exact:  # a decoding set's error is within its
                assert a.raw_error <= limit, (seed, s)  # round-off: only "decodes" is exact
        if ref[first_fail][0] is False:
            try:
                t = threshold(code)
            except Undecided:
                continue
            if t.exact:
                assert t.threshold == first_fail, seed
    assert checked > 0
