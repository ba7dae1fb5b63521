"""``export --decoders`` against exact arithmetic on small codes, and its number formats.

Found: JSON output with ``--dtype`` of a value the format cannot hold (a decoder entry of 10^6
in float16, or an entry of B) was an internal error (exit 3, "Out of range float values are not
JSON compliant"): rounded to the format the value is inf, which NPZ stores and JSON cannot.
Now refused in one line (exit 2) naming the row or the pattern; NPZ still writes it.

Found: with ``--dtype`` the per-pattern ``residual`` was the float64 decoder's before rounding,
not that of the file's ``A[p] B - target`` (cyclic n = 5 in bfloat16: 1.9e-15 for 9.4e-3).

The hunt's other checks held on 700 exports (random and designed codes, every field, s and
decoder; about 3,700 patterns): patterns, zero stragglers, ``decodable`` against the exact
rule, decoders that give the targets (exactly over GF(q)), residuals, the NPZ stream against
the JSON table, and ``error_bound`` against the stored values' mismatch; on 80 exports in
float32, bfloat16 and float16, 9,000 emulated decodings (float32 workers and master in random
orders, messages in the format) stayed within their pattern's ``error_bound``.
"""

from __future__ import annotations

import io
import itertools
import json
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hunt_oracles import TOL, decodes, gf_product, random_code, structured_code, vector_error

import gctool
from gctool.algebra.fields import parse_field
from gctool.exports import build_export, export_npz
from gctool.model import GradientCode
from gctool.precision import get_format
from gctool.precision.formats import from_stored

from helpers import run


@pytest.mark.parametrize(("B", "decoders", "where"), [
    ([[1e-6, 0.0], [0.0, 1.0], [1.0, 1.0]], True, "the decoder of straggler set [2]"),
    ([[1e5, 1.0], [0.0, 1.0], [1.0, 1.0]], False, "row 0 of B"),
])
def test_json_refuses_values_beyond_the_format(B: list[list[float]], decoders: bool,
                                               where: str, tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    gctool.write_code(GradientCode(np.array(B), parse_field("real"), 1), path)
    extra = ["--decoders"] if decoders else []
    for out in (str(tmp_path / "plan.json"), "-"):
        res = run("export", str(path), "-o", out, "--dtype", "float16", *extra)
        assert res.exit_code == 2, res.output
        assert where in res.output and "float16" in res.output and ".npz" in res.output
    assert not (tmp_path / "plan.json").exists()
    res = run("export", str(path), "-o", str(tmp_path / "plan.npz"), "--dtype", "float16", *extra)
    assert res.exit_code == 0, res.output
    with np.load(tmp_path / "plan.npz", allow_pickle=False) as z:
        assert np.isinf(z["A" if decoders else "B"]).any()


@pytest.mark.parametrize("dtype", [None, "float32", "bfloat16", "float16"])
def test_residual_is_that_of_the_stored_values(dtype: str | None) -> None:
    """With ``--dtype`` the residual was the float64 decoder's before rounding (cyclic n = 5
    s = 2 in bfloat16: 1.9e-15 where the file's A[p] B - target has norm 9.4e-3)."""
    code = gctool.design("cyclic", n=5, s=2, seed=1)
    ex = build_export(code, decoders=True, dtype=dtype)
    A, B, T = ex.arrays["A"], ex.arrays["B"], ex.arrays["target"]
    direct = np.linalg.norm(A @ B - T, axis=1)
    assert np.allclose(ex.arrays["residual"], direct, rtol=1e-6, atol=1e-14)
    if dtype in ("bfloat16", "float16"):
        assert direct.max() > 1e-4
    buf = io.BytesIO()
    export_npz(code, buf, dtype=dtype, chunk=3)
    buf.seek(0)
    with np.load(buf, allow_pickle=False) as z:
        assert np.array_equal(z["residual"], ex.arrays["residual"])


def _column_mismatch(a: np.ndarray, B: np.ndarray, T: np.ndarray) -> Fraction:
    """max_j sum_u |(a B - T)[u, j]| of real float arrays, exactly."""
    def fr(x: float) -> Fraction:
        return Fraction(float(x))

    return max(sum(abs(sum((fr(a[u, i]) * fr(B[i, j]) for i in range(B.shape[0])),
                           Fraction(0)) - fr(T[u, j])) for u in range(T.shape[0]))
               for j in range(B.shape[1]))


@pytest.mark.parametrize("seed", range(3))
def test_every_exported_decoder_against_exact_arithmetic(seed: int) -> None:
    """A seeded generator of the hunt (tests/hunt_oracles.py's random and designed codes over
    R, C, GF(p), GF(2^m); every s; decoder auto, structured or generic; float64 or a
    ``dtype``): the patterns are the s-sets in lexicographic order, each decoder is zero on its
    stragglers, ``decodable`` is the exact rule's, a decodable pattern's decoder gives the
    targets (exactly over GF(q); within tol * k over R/C, on the file's values), ``residual``
    is the norm of the file's ``A[p] B - target`` and, with ``dtype``, ``error_bound`` is at
    least sqrt(m) times its largest column sum; the streamed NPZ holds the same arrays and
    the JSON document is written."""
    rng = np.random.default_rng(seed)
    done = 0
    while done < 4:
        code = (random_code(rng, ("real", "complex", "GF(5)", "GF(2^3)")) if rng.random() < 0.6
                else structured_code(rng))
        if code is None or code.n > 6:
            continue
        n, m, s = code.n, code.m, int(rng.integers(0, code.n))
        dtype = (None if code.field.is_finite or rng.random() < 0.4 else
                 str(rng.choice(["float32", "bfloat16", "float16"])) if code.field.kind == "real"
                 else "float32")
        decoder = str(rng.choice(["auto", "generic"]))
        ex = build_export(code, decoders=True, s=s, dtype=dtype, decoder=decoder)
        done += 1
        arr = ex.arrays
        A, B, T = arr["A"].reshape(-1, m, n), arr["B"], arr["target"]
        assert [tuple(p) for p in arr["patterns"].tolist()] == list(
            itertools.combinations(range(n), s))
        for p, S in enumerate(arr["patterns"].tolist()):
            F = tuple(i for i in range(n) if i not in S)
            assert not A[p][:, S].any()
            assert bool(arr["decodable"][p]) == decodes(code, F), (code.B, S)
            if code.field.is_finite:
                if arr["decodable"][p]:
                    assert np.array_equal(gf_product(code.field, A[p], B), T)
                continue
            err = vector_error(A[p], B, T)
            assert arr["residual"][p] == pytest.approx(float(err) ** 0.5, rel=1e-6, abs=1e-12)
            if dtype is None and arr["decodable"][p]:
                assert err <= 2 * TOL * code.k
            if dtype is not None and code.field.kind == "real" and np.isfinite(
                    arr["error_bound"][p]):
                assert arr["error_bound"][p] >= float(_column_mismatch(A[p], B, T)) * m**0.5
        buf = io.BytesIO()
        export_npz(code, buf, s=s, dtype=dtype, decoder=decoder, chunk=int(rng.integers(1, 4)))
        buf.seek(0)
        with np.load(buf, allow_pickle=False) as z:
            zA = z["A"] if dtype != "bfloat16" else from_stored(z["A"], get_format(dtype))
            assert np.array_equal(np.asarray(zA, dtype=A.dtype).reshape(A.shape), A)
            assert np.array_equal(z["decodable"], arr["decodable"])
        if all(np.isfinite(arr[key]).all() for key in ("A", "B")):
            assert json.loads(ex.to_bytes(False))["decoders"]["s"] == s
