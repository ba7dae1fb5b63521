"""nested: level codes, nested supports and level profiles (reference §5.1)."""

from __future__ import annotations

import numpy as np
import pytest

from gctool.audit.verify import verify
from gctool.codes import design
from gctool.codes.nested import profile_census, profile_decoding
from gctool.codes.nested_profile import level_matrices
from gctool.errors import DesignError, InvalidInput
from gctool.io import code_bytes, read_code
from gctool.model import GradientCode


@pytest.mark.parametrize("field", ["complex", "real", "GF(7)"])
def test_reference_example_84_of_90(field: str) -> None:
    code = design("nested", n=6, levels=[1, 3], field=field, seed=1)
    census = profile_census(code, [2, 2, 2])
    assert (census["profiles"], census["decodable"]) == (90, 84)


@pytest.mark.parametrize("field", ["complex", "real", "GF(13)"])
def test_every_level_is_a_code_for_its_s(field: str) -> None:
    code = design("nested", n=6, levels=[1, 2, 4], field=field, seed=2)
    assert code.s == 4 and code.params["levels"] == [1, 2, 4]
    for s, B in zip([1, 2, 4], level_matrices(code), strict=True):
        level = GradientCode(B, code.field, s)
        assert verify(level).ok
        assert not verify(level, s + 1).ok  # exactly s: rank n - s
        support = B != 0
        for i in range(6):  # row i lives on the window {i .. i+s}
            assert set(np.flatnonzero(support[i])) <= {(i + t) % 6 for t in range(s + 1)}


def test_profiles_decode_from_mixed_levels() -> None:
    code = design("nested", n=6, levels=[1, 3], seed=0)
    assert profile_decoding(code, [2, 2, 2, 2, 2, 2])[1]
    assert profile_decoding(code, [1, 1, 1, 1, 1, 0])[1]  # level 1 tolerates one loss
    assert not profile_decoding(code, [1, 1, 1, 1, 0, 0])[1]  # ... not two
    assert profile_decoding(code, [2, 2, 2, 0, 0, 0])[1]  # level 2 (s = 3) tolerates three
    err, ok = profile_decoding(code, [0] * 6)
    assert not ok and err == 6


def test_file_round_trip_keeps_the_levels(tmp_path: object) -> None:
    code = design("nested", n=5, levels=[1, 2], seed=0)
    again = read_code_from_bytes(code_bytes(code, False))
    for a, b in zip(level_matrices(code), level_matrices(again), strict=True):
        assert np.allclose(a, b)


def read_code_from_bytes(data: bytes) -> GradientCode:
    import tempfile

    with tempfile.NamedTemporaryFile(suffix=".json") as fh:
        fh.write(data)
        fh.flush()
        return read_code(fh.name)


@pytest.mark.parametrize("kwargs, match", [
    ({"levels": [3, 1]}, "increase"),
    ({"levels": [1, 6]}, "increase"),
    ({"levels": []}, "`levels`"),
    ({"levels": [1, 2], "field": "GF(11)"}, "n \\| q - 1"),
    ({"levels": [1, 2], "k": 5}, "k = n"),
])
def test_bad_levels(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(DesignError, match=match):
        design("nested", n=6, seed=0, **kwargs)  # type: ignore[arg-type]


def test_bad_profiles() -> None:
    code = design("nested", n=4, levels=[1, 2], seed=0)
    with pytest.raises(InvalidInput, match="level profile"):
        profile_decoding(code, [0, 1, 3, 1])
    with pytest.raises(InvalidInput, match="level profile"):
        profile_decoding(code, [0, 1])
    with pytest.raises(InvalidInput, match="counts"):
        profile_census(code, [1, 1, 1])
    with pytest.raises(InvalidInput, match="not a nested code"):
        profile_decoding(design("frc", n=4, s=1), [1, 1, 1, 1])
