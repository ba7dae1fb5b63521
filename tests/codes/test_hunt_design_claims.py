"""What ``design`` claims for the exact schemes, against brute force (tests/oracles.py exact
rational least squares over R/C, tests/hunt_oracles.py tables over GF(q)).

* The recorded ``load`` is the most partitions a worker holds: comm recorded d = s + m, the
  replication, also when k != n (n = 4, k = 8, s = 1, m = 2: 'load 3' in design's report, where
  every worker holds 6 partitions).
* A seeded generator over the self-checked schemes (rs, cyclic, cyclic-mds, comm, frc, uncoded,
  ye-abbe), small n, s from 0 to n - 1, k != n, fields real, complex, GF(p), GF(2^m), GF(p^m):
  every set of s stragglers decodes exactly, ``verify`` proves s, ``export``'s decoders give
  the targets (exactly over GF(q), within tol * k over R/C) and use no straggler, the seed
  reproduces the design, and ``gctool design`` writes the library's matrix.

* The library's ``nested`` ``levels`` must be integers (1.5 was truncated to 1).

A hunt over 1,870 such designs (n <= 7, 9 fields, 13,000 exported patterns) found only the comm
load; export's flags on 1,900 randomized designs (bgc, sbc, soft-bibd, bcc; 14,000 patterns),
nested levels (423 designs), is-hr's IS tolerance (486), tandon-partial (100), expander's
spectral bound (598), bibd's designs (150), hetero's expected error (275) and export's float32
and float16 error bounds against simulated mixed-precision decoding (248, 2,800 patterns) held.
"""

from __future__ import annotations

import itertools
import json
from math import ceil
from pathlib import Path

import numpy as np
import pytest
from hunt_oracles import field_tables, rank_gf

import gctool
from gctool import design
from gctool.errors import GctoolError
from gctool.exports import build_export
from gctool.io import read_code
from gctool.model import GradientCode

from helpers import run
from oracles import exact_lstsq_error


@pytest.mark.parametrize(("n", "s", "k", "m"), [(4, 1, 8, 2), (7, 2, 9, 3), (4, 3, 3, 1),
                                                (5, 0, 3, 2), (6, 2, 6, 2)])
def test_comm_records_the_load_a_worker_has(n: int, s: int, k: int, m: int,
                                            tmp_path: Path) -> None:
    code = design("comm", n, s, k, field="GF(11)", m=m)
    assert code.params["load"] == int(code.loads.max()) == ceil(k * (s + m) / n)
    assert code.params["replication"] == s + m == int(code.replication.min())
    out = run("design", "comm", "-n", str(n), "-s", str(s), "-k", str(k), "-m", str(m),
              "--field", "GF(11)", "-o", str(tmp_path / "c.json"), "--json")
    assert json.loads(out.output)["report"]["load"] == int(code.loads.max())


def decodes(code: GradientCode, F: tuple[int, ...]) -> bool:
    B, T = np.asarray(code.B), np.asarray(code.targets())
    if not F:
        return False
    if code.field.is_finite:
        return rank_gf(code.field, np.vstack([B[list(F)], T])) == rank_gf(code.field, B[list(F)])
    return exact_lstsq_error(B, F, T) <= 1e-9 * code.k


def gf_combination(code: GradientCode, A: np.ndarray) -> np.ndarray:
    """A B over GF(q) on the field's tables."""
    add, mul = field_tables(code.field)
    B = np.asarray(code.B, dtype=np.int64)
    out = np.zeros((A.shape[0], B.shape[1]), dtype=np.int64)
    for r, i in itertools.product(range(A.shape[0]), range(B.shape[0])):
        out[r] = add[out[r], mul[int(A[r, i]), B[i]]]
    return out


def check_claims(code: GradientCode) -> None:
    n, s = code.n, code.s
    for S in itertools.combinations(range(n), s):
        assert decodes(code, tuple(i for i in range(n) if i not in S)), S
    if "load" in code.params:
        assert code.params["load"] == int(code.loads.max())
    v = gctool.verify(code, s)
    assert v.ok and v.exact
    ex = build_export(code, decoders=True)
    assert bool(np.all(ex.arrays["decodable"]))
    B, T = np.asarray(code.B), np.asarray(code.targets())
    for S, A in zip(ex.arrays["patterns"], ex.arrays["A"], strict=True):
        A = np.asarray(A).reshape(code.m, n)
        assert not np.any(A[:, [int(i) for i in S]])
        if code.field.is_finite:
            assert np.array_equal(gf_combination(code, A), np.asarray(T, dtype=np.int64))
        else:
            assert float(np.sum(np.abs(A @ B - T) ** 2)) <= 1e-9 * code.k


EXACT = ["rs", "cyclic", "cyclic-mds", "comm", "frc", "uncoded", "ye-abbe"]
FIELDS = ["real", "complex", "GF(5)", "GF(7)", "GF(2^3)", "GF(3^2)", "GF(13)"]


@pytest.mark.parametrize("seed", range(3))
def test_exact_designs_keep_their_claims(seed: int, tmp_path: Path) -> None:
    rng = np.random.default_rng(seed)
    built = 0
    while built < len(EXACT):  # one design of each scheme
        scheme = EXACT[(built + seed) % len(EXACT)]
        n = int(rng.integers(2, 7))
        s = 0 if scheme == "uncoded" else int(rng.integers(0, n))
        k = int(rng.choice([n, n + 1, 2 * n, max(1, n - 1)]))
        kw = {"field": FIELDS[int(rng.integers(len(FIELDS)))]}
        if scheme in ("comm", "ye-abbe"):
            kw["m"] = int(rng.integers(1, 3))
        if scheme == "cyclic":
            kw["seed"] = int(rng.integers(1000))
        try:
            code = design(scheme, n, s, k, **kw)
        except GctoolError:
            continue  # parameters the scheme refuses (field too small, s + m > n, ...)
        built += 1
        check_claims(code)
        if "seed" in kw:
            assert np.array_equal(np.asarray(design(scheme, n, s, k, **kw).B),
                                  np.asarray(code.B))
    path = tmp_path / "c.json"  # the last design, through the CLI
    args = ["design", scheme, "-n", str(n), "-s", str(s), "-k", str(k), "-o", str(path)]
    args += [f"--{'pieces' if key == 'm' else key}={value}" for key, value in kw.items()
             if key != "seed" or code.seed is not None]  # a build that draws none: refused
    out = run(*args)
    assert out.exit_code == 0, (args, out.output)
    assert np.array_equal(np.asarray(read_code(path).B), np.asarray(code.B))


@pytest.mark.parametrize("levels", [[1.5, 2], "1,2", 3, [True, 2]])
def test_nested_refuses_levels_that_are_not_integers(levels: object) -> None:
    """[1.5, 2] was built as levels [1, 2] without a word; '1,2' and 3 raised a bare
    ValueError and TypeError."""
    with pytest.raises(GctoolError, match="levels"):
        design("nested", 6, levels=levels, field="complex")
