"""Streaming decoding table (gctool.decoding_table) against the in-memory export."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gctool.algebra.fields import parse_field
from gctool.codes import design
from gctool.decoding_table import write_decoding_table
from gctool.exports import build_export
from gctool.model import GradientCode


@pytest.mark.parametrize("code", [
    design("cyclic", n=8, s=2, seed=1),
    design("frc", n=6, s=2, field="GF(3)"),
    GradientCode(np.array([[1.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0]]),
                 parse_field("real"), 1, params={"m": 2}),
], ids=["real", "gf3", "m-pieces"])
def test_streamed_table_equals_in_memory_export(code: GradientCode, tmp_path: Path) -> None:
    ref = build_export(code, decoders=True).arrays
    path = tmp_path / "table.npz"
    with path.open("wb") as out:
        summary = write_decoding_table(code, code.s, out, chunk=4,
                                       extra={"B": np.asarray(code.B)})
    with np.load(path, allow_pickle=False) as z:
        assert np.array_equal(z["patterns"], ref["patterns"])
        assert np.array_equal(z["decodable"], ref["decodable"])
        assert np.allclose(z["A"], ref["A"]) and z["A"].shape == ref["A"].shape
        assert np.array_equal(z["B"], code.B)
        assert ("residual" in z.files) == ("residual" in ref)
    assert summary.patterns == ref["patterns"].shape[0]
    assert summary.all_decodable == bool(ref["decodable"].all())


def test_streams_to_an_unseekable_stream() -> None:
    import io

    class Pipe(io.RawIOBase):
        def __init__(self) -> None:
            self.data = bytearray()

        def writable(self) -> bool:
            return True

        def write(self, b: bytes) -> int:  # type: ignore[override]
            self.data += b
            return len(b)

    code = design("cyclic", n=6, s=2, seed=3)
    pipe = Pipe()
    write_decoding_table(code, 2, pipe)  # type: ignore[arg-type]
    with np.load(io.BytesIO(bytes(pipe.data))) as z:
        assert z["A"].shape == (15, 6) and z["decodable"].all()
