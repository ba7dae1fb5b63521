"""``export --decoders`` against exact arithmetic on small codes, and its number formats.

Found: JSON output with ``--dtype`` of a value the format cannot hold (a decoder entry of 10^6
in float16, or an entry of B) was an internal error (exit 3, "Out of range float values are not
JSON compliant"): rounded to the format the value is inf, which NPZ stores and JSON cannot.
Now refused in one line (exit 2) naming the row or the pattern; NPZ still writes it.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

import gctool
from gctool.algebra.fields import parse_field
from gctool.model import GradientCode

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
    from gctool.exports import build_export, export_npz

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
