"""Codes whose straggler sets' errors straddle the decoding limit ``tol * k`` by parts in 1e12:
verify, attack's worst case (every exact method, jobs 1 and 2) and the threshold against the
per-set reference of tests/oracles.py (``policy_decodes``: the documented rule, in exact
rational arithmetic where float64 cannot tell).

* ``edge_row``: rows ``c (1, ..., 1, 1 + d)`` (error ``(k-1) d^2 / (k-1 + (1+d)^2)`` alone),
  d solved so that the error is ``1e-9 k`` to a relative 1e-15 .. 1e-2, either side; other
  rows random.
* ``edge_plane``: rows in the plane of ``1 + c u`` and w (u, w orthogonal to the ones and to
  each other), whose distance from the ones is ``sqrt(1e-9 k (1 +- eta))``: every set of two
  or more of them is within round-off of the limit, some sets just below it, some just above.

Found: ``attack -s`` (exhaustive, so auto too) reported "every straggler set of this size still
decodes", labelled exact, where ``verify`` found a failing set: the exhaustive search's tie rule
(errors within 1e-12 of the largest are tied, the first in enumeration order wins) tied a
failing set's error of 2.000000000013e-9 with a decoding set's 1.999999999999e-9 (limit 2e-9),
and the decoding set came first.  A failing set is now never tied with a decoding one
(:class:`gctool.engine.sweep.FirstMaxFold`'s ``limit``).  A hunt over 90 such codes (real and
complex, each with rows and columns permuted and rows scaled), 1100 random real, complex and
finite-field codes of other kinds (near-dependent rows, rows scaled 1e-8 .. 1e8, integers up to
2^60, sparse with repeated rows, wide low-rank, near-cyclic, FRC-like, m-piece, GF(p), GF(2^m),
GF(p^m)) and the CLI (verify, --method, --kernel, --jobs, --executor dask, --exact, attack
--threshold, --curve) found no other wrong verdict.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

import gctool
from gctool.algebra.fields import parse_field
from gctool.errors import GctoolError
from gctool.model import GradientCode

from oracles import exact_lstsq_error, policy_decodes


def edge_row(rng: np.random.Generator, cplx: bool) -> np.ndarray:
    """Rows ``c (1, ..., 1, 1 + d)`` whose error alone is ``1e-9 k (1 +- eta)``, and random
    sparse rows (complex: every row turned by its own phase)."""
    n, k = int(rng.integers(2, 6)), int(rng.integers(2, 6))
    target = 1e-9 * k * (1 + rng.choice([-1, 1]) * 10.0 ** rng.uniform(-15, -2))
    lo, hi = 0.0, 1.0
    for _ in range(200):  # (k-1) d^2 / (k-1 + (1+d)^2) grows with d
        d = (lo + hi) / 2
        lo, hi = (d, hi) if (k - 1) * d * d / (k - 1 + (1 + d) ** 2) < target else (lo, d)
    row = np.ones(k)
    row[-1] += lo
    B = rng.standard_normal((n, k)) * (rng.random((n, k)) < 0.5)
    for i in range(n):
        if i == 0 or rng.random() < 0.4:
            B[i] = row * rng.choice([1.0, -2.0, 3.0, 1e-5, 1e5])
    return B * np.exp(1j * rng.uniform(0, 6, n))[:, None] if cplx else B


def edge_plane(rng: np.random.Generator, cplx: bool) -> np.ndarray:
    """Rows in span(1 + c u, w) at squared distance ``1e-9 k (1 +- eta)`` from the ones."""
    k, n = int(rng.integers(3, 6)), int(rng.integers(2, 6))
    U = np.linalg.qr(np.column_stack([np.ones(k), rng.standard_normal((k, k - 1))]))[0]
    t = 1e-9 * (1 + rng.choice([-1, 1]) * 10.0 ** rng.uniform(-14, -1))
    v = np.ones(k) + np.sqrt(k * t / (1 - t)) * U[:, 1]
    w = U[:, 2:] @ rng.standard_normal(k - 2)
    B = rng.standard_normal((n, k)) * (rng.random((n, k)) < 0.4)
    for i in range(n):
        if rng.random() < 0.7 or i < 2:
            a, b = rng.standard_normal(2)
            B[i] = a * v + b * w
    return B * np.exp(1j * rng.uniform(0, 6, n))[:, None] if cplx else B


def straddling_code() -> GradientCode:
    """n = 2, k = 2: rows (1, x) with x one float apart, the first row's error just above the
    limit 2e-9 and the second's just below (exactly: (x - 1)^2 / (1 + x^2))."""
    hi, lo = 1.0000632475532985, 1.0000632475532982
    limit = Fraction(2, 10**9)
    B = np.array([[1.0, hi], [1.0, lo]])
    assert exact_lstsq_error(B, (1,)) <= limit < exact_lstsq_error(B, (0,))
    return GradientCode(B, parse_field("real"), 1)


@pytest.mark.parametrize("method", ["exhaustive", "auto", "bnb"])
@pytest.mark.parametrize("jobs", [1, 2])
def test_a_failing_set_is_not_tied_with_a_decoding_one(method: str, jobs: int) -> None:
    code = straddling_code()
    v = gctool.verify(code, 1)
    assert not v.ok and v.exact and v.counterexample == [1]
    a = gctool.attack(code, 1, method=method, jobs=jobs)
    assert a.exact and a.stragglers == [1]
    assert a.raw_error > 2e-9 and a.reason != "every straggler set of this size still decodes"


def _reference(B: np.ndarray) -> dict[tuple[int, ...], bool | None]:
    n = B.shape[0]
    return {S: policy_decodes(B, tuple(i for i in range(n) if i not in S))[0]
            for t in range(n + 1) for S in itertools.combinations(range(n), t)}


def _wrong(code: GradientCode) -> list[str]:
    """What verify, attack and threshold get wrong against the reference, at every s."""
    B, n, limit = np.asarray(code.B), code.n, 1e-9 * code.k
    ref, out = _reference(B), []
    for s in range(1, n):
        sets = [v for S, v in ref.items() if len(S) == s]
        want = False if False in sets else (None if None in sets else True)
        try:
            v = gctool.verify(code, s)
        except GctoolError:  # undecided: allowed near the cut-off
            v = None
        if v is not None and v.exact and want is not None and v.ok != want:
            out.append(f"verify s={s}: {v.ok}, reference {want}")
        for kw in ({"method": "exhaustive"}, {"method": "exhaustive", "jobs": 2}):
            try:
                a = gctool.attack(code, s, **kw)
            except GctoolError:
                continue
            if a.exact and want is not None and (float(a.raw_error or 0) > limit) == want:
                out.append(f"attack s={s} {kw}: error {a.raw_error} {a.stragglers}, "
                           f"reference ok={want}")
    try:
        t = gctool.threshold(code)
    except GctoolError:
        return out
    first_unsure = next((s for s in range(n + 1)
                         if any(v is not True for S, v in ref.items() if len(S) == s)), None)
    first_fail = next((s for s in range(n + 1)
                       if any(v is False for S, v in ref.items() if len(S) == s)), None)
    T = t.threshold
    if t.exact and not ((T is None and first_fail is None) or (
            T is not None and first_unsure is not None and first_unsure <= T
            and (first_fail is None or T <= first_fail))):
        out.append(f"threshold {T}, reference in [{first_unsure}, {first_fail}]")
    return out


#: seeds of the hunt whose codes straddle the limit (tol-edge2 seed 215 and 229 broke attack's
#: worst case; 211 and 214 after a row scaling), and a few others
SEEDS = [(edge_plane, 215, False), (edge_plane, 229, False), (edge_row, 214, True),
         (edge_row, 211, False), (edge_plane, 3, True), (edge_row, 5, False)]


@pytest.mark.parametrize("make,seed,cplx", SEEDS,
                         ids=[f"{m.__name__}-{s}{'-c' if c else ''}" for m, s, c in SEEDS])
def test_codes_at_the_tolerance_edge_against_the_reference(make, seed: int, cplx: bool) -> None:  # type: ignore[no-untyped-def]
    B = make(np.random.default_rng(seed), cplx)
    field = parse_field("complex" if cplx else "real")
    code = GradientCode(B.astype(complex) if cplx else B, field, 0)
    assert _wrong(code) == []
    perm = np.random.default_rng(seed).permutation(code.n)  # rows relabelled: still right
    assert _wrong(GradientCode(B[perm], field, 0)) == []
