"""Metamorphic checks of the decoding table and of verify: scaling each row of B by its own
non-zero constant (over R/C also constants that are not powers of two: 3, 1/3, -7, 0.1, 1e5,
1e-5; over GF(q) field elements, multiplied on the tables of tests/hunt_oracles.py), permuting
the rows and permuting the partitions (the same permutation in every piece of an m-piece code)
change no row space, so every pattern's ``decodable`` flag follows the rows and verify's
verdict stays.  Codes: designed rs, cyclic-mds, comm and cyclic codes and codes of no scheme
over R, C, GF(7), GF(13) and GF(2^3).

A hunt over 287 codes (every pattern of the code's s, the generic decoder) found no change.
"""

from __future__ import annotations

import numpy as np
import pytest
from hunt_oracles import field_tables, random_code, structured_code

import gctool
from gctool.exports import build_export
from gctool.model import GradientCode


def _transformed(code: GradientCode, rng: np.random.Generator) -> tuple[GradientCode, np.ndarray]:
    """(the code with rows scaled and permuted and partitions permuted, the row permutation:
    new row j is old row perm[j])."""
    B, n = np.asarray(code.B), code.n
    if code.field.is_finite:
        mul = field_tables(code.field)[1]
        B = mul[B.astype(np.int64), rng.integers(1, code.field.order, n)[:, None]]
    else:
        B = B * rng.choice([3.0, 1 / 3, 1e5, 1e-5, -7.0, 0.1], n)[:, None]
    perm, cp = rng.permutation(n), rng.permutation(code.k)
    cols = np.concatenate([u * code.k + cp for u in range(code.m)])
    return GradientCode(B[perm][:, cols], code.field, code.s, params={"m": code.m}), perm


def _flags(code: GradientCode, perm: np.ndarray | None = None) -> dict[tuple[int, ...], bool]:
    ex = build_export(code, decoders=True, decoder="generic")
    back = np.arange(code.n) if perm is None else perm
    return {tuple(sorted(int(back[j]) for j in S)): bool(ok)
            for S, ok in zip(ex.arrays["patterns"], ex.arrays["decodable"], strict=True)}


@pytest.mark.parametrize("block", range(2))
def test_scaled_permuted_codes_keep_their_verdicts(block: int) -> None:
    changed, checked = {}, 0
    for seed in range(20 * block, 20 * block + 20):
        rng = np.random.default_rng(seed)
        code = (structured_code(rng) if seed % 2
                else random_code(rng, ("real", "complex", "GF(7)", "GF(13)", "GF(2^3)")))
        if code is None:
            continue
        checked += 1
        other, perm = _transformed(code, rng)
        before, after = _flags(code), _flags(other, perm)
        if before != after or gctool.verify(code).ok != gctool.verify(other).ok:
            changed[seed] = [S for S in before if before[S] != after.get(S)]
    assert changed == {}
    assert checked >= 15
