"""``export --decoders`` against exact arithmetic on small codes, and its number formats.

Found: JSON output with ``--dtype`` of a value the format cannot hold (a decoder entry of 10^6
in float16, or an entry of B) was an internal error (exit 3, "Out of range float values are not
JSON compliant"): rounded to the format the value is inf, which NPZ stores and JSON cannot.
Now refused in one line (exit 2) naming the row or the pattern; NPZ still writes it.
"""

from __future__ import annotations

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
