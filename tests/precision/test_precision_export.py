"""``export --dtype``: files that plain numpy loads, in the format asked for, recording the proved
bound of exactly the decoders they hold."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import numpy as np
import pytest

from gctool.cli.exit_codes import ExitCode
from gctool.codes import design
from gctool.exports import build_export
from gctool.io import write_code
from gctool.precision import certify, get_format
from gctool.precision import emulate as em
from gctool.precision.formats import from_stored, rounded
from gctool.schemas import load

from helpers import run

DTYPES = {"float32": np.float32, "float16": np.float16, "bfloat16": np.uint16}


def _code_file(tmp_path: Path, code) -> Path:  # type: ignore[no-untyped-def]
    path = tmp_path / "code.json"
    write_code(code, path)
    return path


def _export(path: Path, out: Path, *args: str):  # type: ignore[no-untyped-def]
    r = run("export", str(path), "-o", str(out), *args)
    return r


@pytest.mark.parametrize("dtype", list(DTYPES))
def test_npz_loads_with_plain_numpy_and_records_the_bound(tmp_path: Path, dtype: str) -> None:
    code = design("rs", n=8, k=12, s=2)
    path = _code_file(tmp_path, code)
    out = tmp_path / "plan.npz"
    r = _export(path, out, "--decoders", "--dtype", dtype, "--json")
    assert r.exit_code == ExitCode.OK, r.output
    report = json.loads(r.stdout)
    with np.load(out, allow_pickle=False) as z:  # plain numpy: no ml_dtypes, no pickles
        assert z["A"].dtype == DTYPES[dtype] and z["B"].dtype == DTYPES[dtype]
        meta = json.loads(str(z["meta"]))
        bounds = z["error_bound"]
        A, B = z["A"], z["B"]
    fmt = get_format(dtype)
    rec = meta["decoders"]["precision"]
    assert meta["dtype"] == dtype and rec["dtype"] == dtype
    assert rec["bound"] == report["error_bound"] == pytest.approx(float(bounds.max()))
    # the same decoders (rs: the structured decoder in both), the same bound as verify's
    assert rec["bound"] == pytest.approx(certify(code, dtype).bound, rel=1e-12)
    # and the same underflow floor (B's and the decoders' smallest parts)
    assert rec["floor"] == pytest.approx(certify(code, dtype, emulate=False).floor, rel=1e-12)
    # the stored values are the format's rounding of B (bfloat16: bit patterns)
    assert np.array_equal(from_stored(B, fmt), rounded(np.asarray(code.B), fmt))
    if dtype == "bfloat16":
        assert "uint16" in meta["npz_storage"]
        values = np.left_shift(A.astype(np.uint32), 16).view(np.float32)
        assert np.array_equal(values.astype(np.float64), from_stored(A, fmt))


def test_the_files_decoders_meet_the_recorded_bound(tmp_path: Path) -> None:
    """Decode with the file's own arrays (the rounded computation of the model): the error of
    every pattern is within the bound the file records for it."""
    code = design("cyclic", 8, 2, seed=3)
    out = tmp_path / "plan.npz"
    assert _export(_code_file(tmp_path, code), out, "--decoders", "--dtype",
                   "float16").exit_code == 0
    fmt = get_format("float16")
    with np.load(out) as z:
        A, B, S, bounds = (z["A"].astype(np.float64), z["B"].astype(np.float64),
                           z["patterns"], z["error_bound"])
    n = code.n
    F = np.array([[i for i in range(n) if i not in set(row)] for row in S.tolist()])
    a = A[np.arange(len(F))[:, None], F][:, None, :]  # (P, 1, f): already in float16
    draws = em.draws(B.shape[1], 2, seed=5)
    err = em.empirical_errors(B, code.targets(), F, a, fmt, draws)
    assert np.all(err <= bounds) and np.all(err > 0)


def test_json_and_npz_hold_the_same_values_and_the_json_matches_the_schema(
        tmp_path: Path) -> None:
    code = design("cyclic", 7, 2, seed=1)
    path = _code_file(tmp_path, code)
    r = run("export", str(path), "-o", "-", "--decoders", "--dtype", "bfloat16")
    doc = json.loads(r.stdout)
    jsonschema.validate(doc, load("export"))
    out = tmp_path / "plan.npz"
    _export(path, out, "--decoders", "--dtype", "bfloat16")
    fmt = get_format("bfloat16")
    with np.load(out) as z:
        assert np.array_equal(from_stored(z["A"], fmt), np.array(doc["A"]))
        assert np.array_equal(z["error_bound"], np.array(doc["error_bound"]))
        assert json.loads(str(z["meta"]))["decoders"]["precision"] == \
            doc["decoders"]["precision"]
    # in memory (the library's build_export) and streamed (NPZ --decoders): the same table
    mem = build_export(code, decoders=True, dtype="bfloat16")
    assert np.array_equal(mem.arrays["A"], np.array(doc["A"]))


def test_without_decoders_b_is_written_in_the_format(tmp_path: Path) -> None:
    code = design("cyclic", 7, 2, seed=1)
    out = tmp_path / "b.npz"
    r = _export(_code_file(tmp_path, code), out, "--dtype", "float16", "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["error_bound"] is None
    with np.load(out) as z:
        assert z["B"].dtype == np.float16 and "A" not in z


def test_refusals(tmp_path: Path) -> None:
    gf = _code_file(tmp_path, design("cyclic-mds", n=6, s=2, field="GF(7)"))
    r = run("export", str(gf), "-o", str(tmp_path / "x.npz"), "--dtype", "float32")
    assert r.exit_code == ExitCode.USAGE and "--dtype applies to real and complex" in r.stderr
    assert not (tmp_path / "x.npz").exists()
    cplx = tmp_path / "c.json"
    write_code(design("cyclic-mds", n=6, s=2, field="complex"), cplx)
    r = run("export", str(cplx), "-o", str(tmp_path / "y.npz"), "--dtype", "float16", "--decoders")
    assert r.exit_code == ExitCode.USAGE and "complex" in r.stderr
    r = _export(cplx, tmp_path / "z.npz", "--dtype", "float32", "--decoders")
    assert r.exit_code == 0
    with np.load(tmp_path / "z.npz") as z:
        assert z["A"].dtype == np.complex64
