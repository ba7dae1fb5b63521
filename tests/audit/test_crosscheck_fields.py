"""verify and the threshold over finite fields the corpora do not hold, against a brute force
written here (no galois, no gctool): GF(7), GF(11), GF(13), GF(2^4), GF(3^2), GF(3^3) and
GF(2^8) with their default polynomials and with irreducible polynomials that are not
primitive (x is then no generator, so log tables need another one), m > 1 pieces, n up to
16.  The codes are B = G M with M holding the all-ones row and G drawn so that few rows carry
it (low thresholds at large n), with repeated, scaled and zero rows, or sparse B.

The brute force decides every straggler set by Gaussian elimination over arrays of field
elements, with addition and multiplication tables built from the polynomials themselves
(elements as integers, coefficient of x^i the i-th base-p digit, as in code files).  The
compiled kernels on and off, --jobs 1 and 2: verdicts, the threshold and the lexicographically
first counterexample and witness must be the brute force's."""

from __future__ import annotations

import itertools
from functools import cache
from math import comb

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gctool.algebra.fields import parse_field
from gctool.audit.attack import threshold
from gctool.audit.verify import verify
from gctool.model import GradientCode

CI = settings(max_examples=2, deadline=None, derandomize=True, database=None)

#: (field, p, m, irreducible polynomial's coefficients from x^0 up; None: galois' default)
FIELDS = {
    "GF(7)": (7, 1, None), "GF(11)": (11, 1, None), "GF(13)": (13, 1, None),
    "GF(2^4)": (2, 4, None), "GF(3^2)": (3, 2, None), "GF(3^3)": (3, 3, None),
    "GF(2^8)": (2, 8, None),
    # irreducible, not primitive: x has order 5 (x^5 = 1), and x^2 + 1 over GF(3): order 4
    "GF(2^4, x^4+x^3+x^2+x+1)": (2, 4, (1, 1, 1, 1, 1)),
    "GF(3^2, x^2+1)": (3, 2, (1, 0, 1)),
    # the AES polynomial: irreducible, not primitive (x has order 51)
    "GF(2^8, x^8+x^4+x^3+x+1)": (2, 8, (1, 1, 0, 1, 1, 0, 0, 0, 1)),
}


def default_poly(p: int, m: int) -> tuple[int, ...]:
    """galois' default (Conway) polynomial, coefficients from x^0 up."""
    import galois

    return tuple(int(c) for c in reversed(galois.GF(p**m).irreducible_poly.coeffs))


@cache
def tables(field: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(add, sub, mul, inv) tables of the field, from its polynomial: an element is the integer
    sum c_i p^i of its coefficients c_i of x^i."""
    p, m, poly = FIELDS[field]
    q = p**m
    if m == 1:
        a = np.arange(q)
        inv = np.array([0] + [pow(int(x), p - 2, p) for x in range(1, q)])
        return ((a[:, None] + a) % p, (a[:, None] - a) % p, (a[:, None] * a) % p, inv)
    f = poly if poly is not None else default_poly(p, m)
    digits = np.array([[(x // p**i) % p for i in range(m)] for x in range(q)])
    weights = p ** np.arange(m)
    add = ((digits[:, None, :] + digits[None, :, :]) % p) @ weights
    sub = ((digits[:, None, :] - digits[None, :, :]) % p) @ weights
    prod = np.zeros((q, q, 2 * m - 1), dtype=np.int64)  # the product polynomials
    for i in range(m):
        for j in range(m):
            prod[:, :, i + j] += digits[:, None, i] * digits[None, :, j]
    prod %= p
    for top in range(2 * m - 2, m - 1, -1):  # reduced by the monic f, from the top down
        c = prod[:, :, top].copy()
        for i in range(m + 1):
            prod[:, :, top - m + i] = (prod[:, :, top - m + i] - c * f[i]) % p
    mul = prod[:, :, :m] @ weights
    inv = np.zeros(q, dtype=np.int64)
    for x in range(1, q):
        inv[x] = int(np.flatnonzero(mul[x] == 1)[0])
    return add, sub, mul, inv


def batched_rank(field: str, A: np.ndarray) -> np.ndarray:
    """Rank of each matrix A[b] (integers naming field elements), by elimination."""
    _, sub, mul, inv = tables(field)
    A = A.astype(np.int64).copy()
    b, rows, cols = A.shape
    used = np.zeros((b, rows), dtype=bool)
    rank = np.zeros(b, dtype=np.int64)
    for c in range(cols):
        cand = (A[:, :, c] != 0) & ~used
        has = np.flatnonzero(cand.any(axis=1))
        if has.size == 0:
            continue
        piv = np.argmax(cand[has], axis=1)
        prow = mul[inv[A[has, piv, c]][:, None], A[has, piv, :]]  # pivot row scaled to 1
        factor = A[has, :, c].copy()
        factor[np.arange(has.size), piv] = 0
        A[has] = sub[A[has], mul[factor[:, :, None], prow[:, None, :]]]
        A[has, piv, :] = prow
        used[has, piv] = True
        rank[has] += 1
    return rank


def brute(code: GradientCode, field: str, upto: int
          ) -> tuple[int | None, tuple[int, ...] | None]:
    """(threshold, its lexicographically first failing set), sizes up to ``upto``."""
    B, T = np.asarray(code.B, dtype=np.int64), np.asarray(code.targets(), dtype=np.int64)
    n = code.n
    for s in range(upto + 1):
        sets = list(itertools.combinations(range(n), s))
        keep = np.array([[i for i in range(n) if i not in S] for S in sets], dtype=np.intp)
        A = B[keep]
        with_t = np.concatenate([A, np.broadcast_to(T, (len(sets), *T.shape))], axis=1)
        fails = batched_rank(field, A) != batched_rank(field, with_t)
        if fails.any():
            return s, sets[int(np.argmax(fails))]
    return None, None


def random_code(seed: int, field: str, kind: str) -> GradientCode:
    p, e, _ = FIELDS[field]
    q = p**e
    add, _, mul, _ = tables(field)
    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(8, 17)), int(rng.integers(2, 6))
    m = 2 if kind == "pieces" else 1
    K = k * m
    if kind == "sparse":
        B = rng.integers(0, q, (n, K)) * (rng.random((n, K)) < 0.45)
        return GradientCode(B, parse_field(field), 0)
    r = int(rng.integers(m, min(K, n - 2) + 1))
    M = rng.integers(0, q, (r, K))
    for u in range(m):  # the targets e_u (x) ones among the rows of M
        M[u] = 0
        M[u, u * k:(u + 1) * k] = 1
    G = rng.integers(0, q, (n, r)) * (rng.random((n, r)) < 0.7)
    G[:, :m] = 0  # few rows carry the targets: thresholds low enough to reach
    for u in range(m):
        rows = rng.choice(n, int(rng.integers(1, 5)), replace=False)
        G[rows, u] = rng.integers(1, q, rows.size)
    if kind == "repeat":  # copies scaled by a field element, and zero rows
        for i in range(1, n):
            x = rng.random()
            if x < 0.3:
                G[i] = mul[int(rng.integers(1, q)), G[int(rng.integers(0, i))]]
            elif x < 0.4:
                G[i] = 0
    B = np.zeros((n, K), dtype=np.int64)  # B = G M over the field
    for j in range(r):
        B = add[B, mul[G[:, j][:, None], M[j][None, :]]]
    return GradientCode(B, parse_field(field), 0, params={"m": m} if m > 1 else {})


def test_tables_agree_with_galois() -> None:
    """The tables are the fields gctool reads (its galois spec): 500 random pairs each."""
    rng = np.random.default_rng(0)
    for name in FIELDS:
        GF = parse_field(name).galois()
        x, y = rng.integers(0, GF.order, (2, 500))
        add, sub, mul, inv = tables(name)
        assert np.array_equal(mul[x, y], np.asarray(GF(x) * GF(y)))
        assert np.array_equal(add[x, y], np.asarray(GF(x) + GF(y)))
        assert np.array_equal(sub[x, y], np.asarray(GF(x) - GF(y)))
        assert np.array_equal(mul[x, inv[x]], (x != 0).astype(np.int64))


@pytest.mark.parametrize("compiled", ["0", "1"])
@pytest.mark.parametrize("field", sorted(FIELDS))
@given(kind=st.sampled_from(["fragile", "repeat", "pieces", "sparse"]),
       seed=st.integers(0, 10**6))
@CI
def test_random_codes_over_finite_fields(compiled: str, field: str, kind: str, seed: int
                                         ) -> None:
    mp = pytest.MonkeyPatch()
    mp.setenv("GCTOOL_COMPILED", compiled)
    try:
        code = random_code(seed, field, kind)
        n = code.n
        upto = max(s for s in range(n) if comb(n, s) <= 5_000)
        thr, first = brute(code, field, upto)
        # beyond the brute force's sizes (no failing set up to upto): those sizes only
        sizes = [upto - 1, upto] if thr is None else [max(thr - 1, 0), thr]
        for s in sizes:
            for method, jobs in (("auto", 1), ("exhaustive", 2)):
                r = verify(code, s, method=method, jobs=jobs)
                assert r.exact and r.ok == (thr is None or s < thr), (s, method, jobs)
                if method == "exhaustive" and not r.ok:
                    assert tuple(r.counterexample or ()) == first, (s, r.counterexample, first)
        if thr is not None:
            for method, jobs in (("exhaustive", 1), ("exhaustive", 2), ("auto", 2)):
                t = threshold(code, method=method, jobs=jobs)
                assert t.exact and t.threshold == thr, (method, jobs, t.threshold, thr)
                if method == "exhaustive":
                    assert tuple(t.stragglers or ()) == first, (t.stragglers, first)
    finally:
        mp.undo()
