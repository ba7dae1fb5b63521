"""The rotation search (:func:`gctool.audit.symmetry._find_rotation`) compares B with its
rotated image a block of rows at a time (:data:`~gctool.audit.symmetry.BLOCK_ENTRIES`); it
used to gather the whole image ``B[order][:, cols]`` and its support masks (134 + 2 x 17 MB of
fresh memory for an frc GF(7) code of n = 4096, and about six copies of B over R/C).  The
verdicts are those of the whole comparison, kept here as the reference: the same rotation or
none, the same unimodularity, the same note for a rotation only up to round-off."""

from __future__ import annotations

import dataclasses
import tracemalloc

import numpy as np
import pytest

from gctool.algebra.fields import parse_field
from gctool.algebra.gf import GFArith
from gctool.audit import symmetry
from gctool.codes import design
from gctool.model import GradientCode
from gctool.numerics import exactly_proportional


def _whole_match(code: GradientCode, D: np.ndarray, near: list[float]) -> tuple[bool, bool]:
    """The comparison as it was, on the whole gathered image D: is D = diag(gamma) B?"""
    B = np.asarray(code.B)
    if not np.array_equal(D != 0, B != 0):
        return False, False
    nz = B != 0
    rows = np.arange(B.shape[0])
    empty = ~nz.any(axis=1)
    if code.field.is_finite:
        ar = GFArith(code.field)
        j = np.argmax(nz, axis=1)
        gamma = ar.mul(np.where(empty, 1, D[rows, j]), ar.inv(np.where(empty, 1, B[rows, j])))
        return bool(np.array_equal(ar.mul(gamma[:, None], B), D)), bool(np.all(gamma == 1))
    eB, eD = symmetry._top_exponents(B), symmetry._top_exponents(D)
    cplx = np.iscomplexobj(B)
    Bn = symmetry._ldexp(B, -eB) if cplx else np.ldexp(B, -eB[:, None])
    Dn = symmetry._ldexp(D, -eD) if cplx else np.ldexp(D, -eD[:, None])
    j = np.argmax(np.abs(Bn), axis=1)
    gamma = np.where(empty, 1.0, Dn[rows, j] / np.where(empty, 1.0, Bn[rows, j]))
    dev = symmetry._deviation(gamma[:, None] * Bn, Dn)
    ok = dev <= symmetry.FLOAT_RTOL and all(exactly_proportional(B[i], D[i])
                                            for i in range(B.shape[0]))
    if not ok and dev <= symmetry.NEAR_RTOL:
        near.append(dev)
    with np.errstate(all="ignore"):
        size = np.ldexp(np.abs(gamma), np.clip(eD - eB, -2100, 2100))
    return ok, bool(np.allclose(size, 1.0, rtol=symmetry.FLOAT_RTOL, atol=0))


def _whole_find(code: GradientCode) -> tuple[tuple[int, int, bool] | None, bool]:
    """The search as it was: (t, c, unimodular) of the first candidate that matches on all of
    the gathered B, and whether a near match was seen."""
    B = np.asarray(code.B)
    near: list[float] = []
    for t, c, order, cols in symmetry._survivors(code, near):
        ok, unit = _whole_match(code, B[np.ix_(order, cols)], near)
        if ok:
            return (t, c, unit), False
    return None, bool(near)


def _variants(code: GradientCode, rng: np.random.Generator) -> list[GradientCode]:
    """The code, its rows and its columns permuted, its rows scaled, and one entry changed
    (over R/C: by a relative 1e-14, 1e-10 and 1e-6, and one entry set to 0)."""
    B = np.array(code.B)
    n, K = B.shape
    out = [code, dataclasses.replace(code, B=B[rng.permutation(n)]),
           dataclasses.replace(code, B=B[:, rng.permutation(K)])]
    i = int(rng.integers(n))
    j = np.flatnonzero(B[i])
    if code.field.is_finite:
        gamma = np.asarray(rng.integers(1, code.field.order, size=n))
        out.append(dataclasses.replace(code, B=GFArith(code.field).mul(gamma[:, None], B)))
        changed = B.copy()
        changed[i, j[0]] = (changed[i, j[0]] + 1) % code.field.order or 1
        return [*out, dataclasses.replace(code, B=changed)]
    for gamma in (rng.choice([-1.0, 2.0, 0.5, 1e200, 1e-200], n), rng.choice([-1.0, 1.0], n)):
        out.append(dataclasses.replace(code, B=gamma[:, None] * B))
    for eps in (1e-14, 1e-10, 1e-6):
        near = B.copy()
        near[i, j[0]] *= 1 + eps
        out.append(dataclasses.replace(code, B=near))
    cut = B.copy()
    cut[i, j[-1]] = 0
    return [*out, dataclasses.replace(code, B=cut)]


#: (scheme, n, s, field, whether the code as designed has a rotation)
CODES = [("frc", 12, 2, f, True) for f in ("real", "complex", "GF(7)", "GF(257)")] + [
    ("frc", 32, 7, "GF(7)", True), ("frc", 16, 3, "real", True),
    ("cyclic", 10, 3, "real", False), ("cyclic", 8, 2, "GF(31)", False),
    ("cyclic-mds", 15, 4, "auto", True), ("cyclic-mds", 31, 5, "auto", True),
    ("cyclic-mds", 12, 3, "complex", True), ("cyclic-mds", 9, 2, "real", True),
    ("rs", 10, 3, "GF(11)", False), ("comm", 8, 2, "complex", False),
    ("comm", 12, 3, "GF(13)", False), ("bgc", 20, 3, "real", False),
    ("bgc", 24, 3, "GF(5)", False)]


@pytest.mark.parametrize(("scheme", "n", "s", "field", "rotates"), CODES)
def test_blocks_decide_as_the_whole_comparison(monkeypatch: pytest.MonkeyPatch, scheme: str,
                                               n: int, s: int, field: str,
                                               rotates: bool) -> None:
    """Every candidate rotation (t | n, the first column shifts), not only the ones the
    probes keep, gets the whole comparison's verdict from blocks of 1, 7 and 100 entries and
    the default; and the search finds the same rotation (or none, with the same note)."""
    rng = np.random.default_rng(n * 1000 + s)
    code = design(scheme, n=n, s=s, field=field, seed=1)
    seen: list[tuple[bool, bool]] = []
    for variant in _variants(code, rng):
        B = np.asarray(variant.B)
        want, near = _whole_find(variant)
        seen.append((want is not None, near))
        for entries in (1, 7, 100, symmetry.BLOCK_ENTRIES):
            monkeypatch.setattr(symmetry, "BLOCK_ENTRIES", entries)
            rot, note = symmetry._find_rotation(variant)
            assert (None if rot is None else (rot.t, rot.c, rot.unimodular)) == want
            assert (note is not None) == near
            for t in [d for d in range(1, n) if n % d == 0][:5]:
                order = (np.arange(n) + t) % n
                for c in range(min(variant.k, 4)):
                    cols = symmetry._column_shift(variant, c)
                    near_whole: list[float] = []
                    near_blocks: list[float] = []
                    ok, unit = _whole_match(variant, B[np.ix_(order, cols)], near_whole)
                    got = symmetry._rotation_match(variant, order, cols, near_blocks)
                    assert got[0] == ok and (not ok or got[1] == unit)
                    assert near_blocks == near_whole
    assert seen[0][0] == rotates
    # over R/C the entries changed by 1e-14 and 1e-10 leave a rotation up to round-off only
    assert [near for _, near in seen[-4:-1]] == ([True, True, False] if rotates and not
                                                 code.field.is_finite else [False] * 3)


@pytest.mark.parametrize("field", ["GF(7)", "real"])
def test_no_temporary_of_the_size_of_b(field: str) -> None:
    """The traced peak of a detection on an frc code of n = 2048 (B of 33.6 MB) stays below
    half of B: 0.17 B over GF(7), 0.23 B over R (it was 1.7 B and 6.2 B with the whole
    image gathered)."""
    n, g = 2048, 16
    f = parse_field(field)
    B = np.kron(np.eye(n // g, dtype=np.int64 if f.is_finite else float),
                np.ones((g, g), dtype=np.int64 if f.is_finite else float))
    code = GradientCode(B, f, g - 1)
    tracemalloc.start()
    try:
        rot, note = symmetry._find_rotation(code)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert rot is not None and (rot.t, rot.c, rot.unimodular) == (g, g, True) and note is None
    assert peak < 0.5 * B.nbytes, peak / B.nbytes
