"""``gctool export FILE -o PLAN --decoders`` through the command line, NPZ and JSON, against
brute force (tests/hunt_oracles.py; the library's table is tests/audit/test_hunt_export.py's).

For every pattern of the table (its size ``-s`` drawn anew, not the file's s): zero on the
stragglers; ``decodable`` is the exact rule's verdict at the ``--tol`` given (elimination on
finite-field tables over GF(q); exact rational least squares over R/C); a decodable row (an m x n
matrix for m-piece codes) rebuilds the targets exactly over GF(q), and over R/C with an exact
error of at most tol * k; the exit code is 1 exactly when some pattern does not decode; the JSON
table equals the NPZ one.  Codes: designed rs, cyclic-mds, comm and cyclic codes and codes of
no scheme; decoders auto, generic and structured (exit 2 when it does not apply).

A hunt over 380 exports found none wrong.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hunt_oracles import (
    TOL,
    exact_error,
    gf_product,
    random_code,
    structured_code,
    vector_error,
)

from gctool.io import code_to_doc, decode_matrix, dumps_document
from gctool.model import GradientCode

from helpers import run

FIELDS = ("real", "complex", "GF(7)", "GF(11)", "GF(2^3)")


def _row_wrong(code: GradientCode, S: list[int], a: np.ndarray, ok: bool, tol: Fraction
               ) -> list[object]:
    n, B, T = code.n, np.asarray(code.B), code.targets()
    F = [i for i in range(n) if i not in S]
    limit = 0 if code.field.is_finite else tol * code.k
    wrong: list[object] = []
    if np.any(a[:, S]):
        wrong.append(("not zero on stragglers", S))
    if ok != (exact_error(code, tuple(F)) <= limit):
        wrong.append(("decodable", S, ok))
    if ok and code.field.is_finite and not np.array_equal(gf_product(code.field, a[:, F], B[F]),
                                                          T):
        wrong.append(("vector", S))
    if ok and not code.field.is_finite and vector_error(a[:, F], B[F], T) > limit:
        wrong.append(("vector", S))
    return wrong


def _hunt(seed: int, tmp: Path) -> list[object] | None:
    """What is wrong in one random export (None: none made, the code or decoder not fit)."""
    rng = np.random.default_rng(seed)
    code = structured_code(rng) if seed % 2 else random_code(rng, FIELDS)
    if code is None:
        return None
    path = tmp / f"c{seed}.json"
    path.write_text(dumps_document(code_to_doc(code)))
    s, decoder = int(rng.integers(0, code.n)), str(rng.choice(["auto", "generic", "structured"]))
    tol, extra = TOL, []
    if not code.field.is_finite and rng.random() < 0.3:
        tol, extra = Fraction(1, 100), ["--tol", "0.01"]
    tables = []
    for name in ("plan.npz", "plan.json"):
        r = run("export", str(path), "-o", str(tmp / name), "--decoders", "-s", str(s),
                "--decoder", decoder, *extra)
        if r.exit_code == 2 and decoder == "structured":
            return None  # the scheme has no structured decoder for these patterns
        if name.endswith("npz"):
            z = np.load(tmp / name)
            tables.append((z["patterns"], z["A"].reshape(len(z["patterns"]), code.m, code.n),
                           z["decodable"], r.exit_code))
        else:
            d = json.loads((tmp / name).read_text())
            A = [decode_matrix(a if code.m > 1 else [a], code.field, "A") for a in d["A"]]
            tables.append((np.array(d["patterns"], dtype=np.int64).reshape(len(A), s), np.array(A),
                           np.array(d["decodable"]), r.exit_code))
    (P, A, ok, code_exit), other = tables
    wrong: list[object] = []
    if not (np.array_equal(P, other[0]) and np.array_equal(A, other[1])
            and np.array_equal(ok, other[2]) and code_exit == other[3]):
        wrong.append("json != npz")
    if code_exit != (0 if ok.all() else 1):
        wrong.append(("exit", code_exit))
    for S, a, flag in zip(P, A, ok, strict=True):
        wrong += _row_wrong(code, [int(i) for i in S], a, bool(flag), tol)
    return wrong


@pytest.mark.parametrize("block", range(2))
def test_export_cli_against_brute_force(block: int, tmp_path: Path) -> None:
    found = {seed: _hunt(seed, tmp_path) for seed in range(15 * block, 15 * block + 15)}
    assert {seed: w for seed, w in found.items() if w} == {}
    assert sum(w is not None for w in found.values()) >= 7
