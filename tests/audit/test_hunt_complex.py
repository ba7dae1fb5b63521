"""verify over the complex numbers against exact arithmetic, and the invariances of a complex
code: conjugating B, multiplying it by i, and multiplying its rows by units (1, -1, i, -i:
exact in floating point) change no row space that matters (the targets are real), so no
verdict, counterexample or threshold may change.

Codes whose structure the audits reduce: cyclic codes of Gaussian-integer generators with
rows scaled by complex constants (rotations up to row scaling; some by exp(i t), symmetric
only up to round-off), classes of rows proportional by complex factors with disjoint supports
(some with an entry that breaks them), and dense Gaussian-integer codes with a scaled
repeated row, and complex cyclic-mds, cyclic, rs and frc designs with rows scaled by complex
constants (these tolerate their s, so the enumeration, the row classes and the rotation orbits
decide them).  The truth is tests/hunt_oracles.py's exact rational least squares on the
floating-point entries (real and imaginary parts apart) under the documented rule.

A hunt over 400 such codes (four variants each, every s, --method auto and exhaustive) found
no wrong verdict.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hunt_oracles import decodes

from gctool.algebra.fields import parse_field
from gctool.audit.attack import threshold
from gctool.audit.verify import verify
from gctool.codes import design
from gctool.model import GradientCode

SCALES = (1, -1, 1j, -1j, 2, 0.5, 1 + 1j, 3 - 2j, 0.25j)
UNITS = np.array([1, -1, 1j, -1j])


def _cyclic(rng: np.random.Generator) -> np.ndarray:
    n = int(rng.integers(3, 7))
    r = int(rng.integers(0, n))
    g = rng.integers(-2, 3, r + 1) + 1j * rng.integers(-2, 3, r + 1)
    g[0], g[-1] = g[0] or 1, g[-1] or 1j
    B = np.array([np.roll(np.concatenate([g, np.zeros(n - r - 1)]), i) for i in range(n)])
    if rng.random() < 0.7:
        B = B * rng.choice(SCALES, n)[:, None]
    if rng.random() < 0.3:
        B = B * np.exp(1j * rng.random(n))[:, None]
    return B


def _classes(rng: np.random.Generator) -> np.ndarray:
    n = int(rng.integers(2, 7))
    groups = int(rng.integers(1, n + 1))
    label = rng.integers(0, groups, n)
    k = int(rng.integers(groups, groups + 3))
    support = np.array_split(rng.permutation(k), groups)
    base = rng.integers(1, 3, (groups, k)) + 1j * rng.integers(-1, 2, (groups, k))
    B = np.zeros((n, k), dtype=complex)
    for i, g in enumerate(label):
        B[i, support[g]] = rng.choice(SCALES) * base[g, support[g]]
    if rng.random() < 0.3:
        B[rng.integers(0, n), rng.integers(0, k)] = 1j
    if not B.any():
        B[0, 0] = 1
    return B


def _dense(rng: np.random.Generator) -> np.ndarray:
    n, k = int(rng.integers(2, 7)), int(rng.integers(1, 6))
    B = (rng.integers(-2, 3, (n, k)) + 1j * rng.integers(-2, 3, (n, k))) * (rng.random((n, k))
                                                                          < 0.6)
    if n > 2 and rng.random() < 0.5:
        B[1] = B[0] * rng.choice(SCALES)
    if not B.any():
        B[0, 0] = 1
    return B.astype(complex)


def _designed(rng: np.random.Generator) -> np.ndarray:
    """A complex design that tolerates its s (so the enumeration and its reductions run),
    rows scaled by complex constants."""
    scheme = str(rng.choice(["cyclic-mds", "cyclic", "rs", "frc"]))
    n = int(rng.integers(3, 7))
    s = int(rng.integers(1, n - 1))
    if scheme == "frc":
        s = int(rng.integers(1, 3))
        n = (s + 1) * int(rng.integers(1, 3))
    extra = {"k": int(rng.integers(2, 7))} if scheme == "rs" else {}
    B = np.asarray(design(scheme, n=n, s=s, field="complex", seed=1, **extra).B)
    return B * rng.choice(SCALES, B.shape[0])[:, None]


def _variants(B: np.ndarray, rng: np.random.Generator) -> dict[str, GradientCode]:
    field = parse_field("complex")
    units = rng.choice(UNITS, B.shape[0])[:, None]
    return {name: GradientCode(M, field, 0) for name, M in
            (("B", B), ("conj", B.conj()), ("iB", 1j * B), ("units", B * units))}


def _wrong(code: GradientCode) -> list[str]:
    """verify at every s and the threshold against the exact oracle."""
    n, out, first = code.n, [], None
    for s in range(n):
        fails = [S for S in itertools.combinations(range(n), s)
                 if not decodes(code, tuple(i for i in range(n) if i not in S))]
        if fails and first is None:
            first = s
        for method in ("auto", "exhaustive"):
            r = verify(code, s, method=method)
            ce = r.counterexample
            if r.ok != (not fails) or (ce is not None and tuple(sorted(ce)) not in fails):
                out.append(f"s={s} {method}: ok={r.ok} counterexample={ce} ({r.method}); "
                           f"exact: {fails[:3]}")
    t = threshold(code).threshold
    if first is not None and t != first:
        out.append(f"threshold {t}, exact {first}")
    return out


@pytest.mark.parametrize("block", range(4))
def test_complex_codes_and_their_conjugates_against_exact_arithmetic(block: int) -> None:
    wrong: dict[tuple[int, str], list[str]] = {}
    for seed in range(10 * block, 10 * block + 10):
        rng = np.random.default_rng(seed)
        B = (_dense, _cyclic, _classes, _designed, _designed)[seed % 5](rng)
        for name, code in _variants(B, rng).items():
            found = _wrong(code)
            if found:
                wrong[seed, name] = found
    assert wrong == {}
