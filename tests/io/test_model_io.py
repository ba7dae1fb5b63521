"""The code model and both file formats: validation, round trips, bad files."""

from __future__ import annotations

import io
import json
import pickle
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from gctool.algebra.fields import parse_field
from gctool.errors import CodeFileError, InvalidInput
from gctool.io import code_bytes, code_to_doc, read_code, write_code
from gctool.model import GradientCode


def test_shapes_come_from_B(crc3: GradientCode) -> None:
    assert (crc3.n, crc3.k, crc3.m) == (3, 3, 1)
    assert crc3.loads.tolist() == [2, 2, 2] and crc3.replication.tolist() == [2, 2, 2]
    assert crc3.assignment() == [[0, 1], [1, 2], [0, 2]]
    assert np.array_equal(crc3.targets(), np.ones((1, 3)))


@pytest.mark.parametrize(
    ("B", "s", "field"),
    [([[1, 0]], 1, "real"), ([[1, 0]], -1, "real"), ([1, 2, 3], 0, "real"),
     ([[7, 0]], 0, "GF(7)"), ([[np.nan]], 0, "real"), (np.zeros((0, 3)), 0, "real")],
)
def test_model_rejects_invalid(B: object, s: int, field: str) -> None:
    with pytest.raises(InvalidInput):
        GradientCode(np.array(B), parse_field(field), s)


def test_model_is_read_only(crc3: GradientCode) -> None:
    with pytest.raises(ValueError):
        crc3.B[0, 0] = 3.0


def test_derived_data_is_computed_once_and_never_shared_writable(crc3: GradientCode) -> None:
    from gctool.numerics import normalise_rows

    T = crc3.targets()
    T[0, 0] = 5  # a fresh copy: the code's own stays
    assert crc3.targets().tolist() == [[1, 1, 1]]
    Bn, d = crc3.row_normalised()
    ref = normalise_rows(np.asarray(crc3.B))
    assert np.array_equal(Bn, ref[0]) and np.array_equal(d, ref[1])
    assert crc3.row_normalised()[0] is Bn  # computed once
    with pytest.raises(ValueError):
        Bn[0, 0] = 3.0
    assert crc3.with_s(1).row_normalised()[0] is not Bn  # per code object
    back = pickle.loads(pickle.dumps(crc3))  # travels without them
    assert "_cache" not in back.__dict__ and np.array_equal(back.row_normalised()[0], Bn)
    with pytest.raises(ValueError):  # read-only again, so its derived values stay true
        back.B[0, 0] = 3.0


def test_support_is_computed_once_per_code_and_read_only() -> None:
    """The support (n x k, any piece of a partition) is one read-only array per code object
    (the trainer's per-worker rows read it n times), recomputed after pickling and for a
    code built from it; over GF(q) and for m-piece codes as B != 0 gives it."""
    B = np.array([[1.0, 0.0, 0.0, 2.0], [0.0, 0.0, 0.0, 0.0], [0.0, 3.0, 0.0, 0.0]])
    code = GradientCode(B, parse_field("real"), 1, params={"m": 2})
    S = code.support
    assert S.tolist() == [[True, True], [False, False], [False, True]]
    assert code.support is S and code.loads.tolist() == [2, 0, 1]
    with pytest.raises(ValueError):
        S[1, 1] = True
    assert code.with_s(0).support is not S and code.with_s(0).support.tolist() == S.tolist()
    back = pickle.loads(pickle.dumps(code))
    assert "_cache" not in back.__dict__ and back.support.tolist() == S.tolist()
    gf = GradientCode(np.array([[0, 5], [6, 0]]), parse_field("GF(7)"), 1)
    assert gf.support.tolist() == [[False, True], [True, False]]
    assert type(gf.support) is np.ndarray


def test_m_piece_targets() -> None:
    code = GradientCode(np.ones((4, 6)), parse_field("real"), 1, params={"m": 2})
    assert code.k == 3 and code.m == 2
    assert code.targets().tolist() == [[1, 1, 1, 0, 0, 0], [0, 0, 0, 1, 1, 1]]
    with pytest.raises(InvalidInput):
        GradientCode(np.ones((4, 5)), parse_field("real"), 1, params={"m": 2})


#: rows of such entries have norms 0 or in float64's normal range (a row of subnormal entries
#: is refused: test_a_row_below_the_normal_range_is_refused)
finite = st.floats(allow_nan=False, allow_infinity=False, allow_subnormal=False, width=64)


@pytest.mark.parametrize("field,tiny", [("real", 5e-324), ("real", 1e-310),
                                        ("complex", 1e-310 + 1e-311j)])
def test_a_row_below_the_normal_range_is_refused(field: str, tiny: complex) -> None:
    """A non-zero row of norm below 2^-1022: every decoder using it overflows float64."""
    B = np.array([[tiny, 0.0], [1.0, 1.0]])
    with pytest.raises(InvalidInput, match="row 0 of B has norm .* below float64's range") \
            as info:
        GradientCode(B, parse_field(field), 0)
    assert info.value.param == "B"
    GradientCode(B * 2.0**60, parse_field(field), 0)  # a normal norm: accepted


@settings(max_examples=60, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(1, 5), st.integers(1, 5)), elements=finite))
def test_real_json_round_trip_is_bit_exact(B: np.ndarray) -> None:
    code = GradientCode(B, parse_field("real"), 0, seed=3)
    back = _round_trip(code, npz=False)
    assert back.B.tobytes() == code.B.tobytes()


@settings(max_examples=30, deadline=None)
@given(arrays(np.complex128, st.tuples(st.integers(1, 4), st.integers(1, 4)),
              elements=st.complex_numbers(allow_nan=False, allow_infinity=False,
                                          allow_subnormal=False, max_magnitude=1e300)))
def test_complex_round_trips(B: np.ndarray) -> None:
    code = GradientCode(B, parse_field("complex"), 0)
    for npz in (False, True):
        assert _round_trip(code, npz).B.tobytes() == code.B.tobytes()


@pytest.mark.parametrize("field", ["GF(7)", "GF(2^4)", "GF(3^2, x^2 + 2x + 2)"])
@pytest.mark.parametrize("npz", [False, True])
def test_gf_round_trips(field: str, npz: bool) -> None:
    f = parse_field(field)
    B = np.random.default_rng(0).integers(0, f.order, (4, 5))
    code = GradientCode(B, f, 1, "custom", {"x": [1, 2]}, 5, {"command": "c"})
    back = _round_trip(code, npz)
    assert np.array_equal(back.B, code.B) and back.field.resolved() == f.resolved()
    assert (back.s, back.scheme, back.params, back.seed, back.provenance) == (
        1, "custom", {"x": [1, 2]}, 5, {"command": "c"})


def test_gf_pm_file_records_polynomial() -> None:
    code = GradientCode(np.array([[1, 2]]), parse_field("GF(2^4)"), 0)
    doc = code_to_doc(code)
    assert doc["field"] == "GF(2^4)" and doc["irreducible_poly"] == "x^4 + x + 1"


def test_writes_are_deterministic(tmp_path: Path, crc3: GradientCode) -> None:
    for name in ("a.json", "a.npz"):
        write_code(crc3, tmp_path / name)
        first = (tmp_path / name).read_bytes()
        write_code(crc3, tmp_path / name)
        assert (tmp_path / name).read_bytes() == first


def _round_trip(code: GradientCode, npz: bool) -> GradientCode:
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / ("c.npz" if npz else "c.json")
        path.write_bytes(code_bytes(code, npz))
        return read_code(path)


def _doc(**changes: object) -> dict[str, object]:
    doc: dict[str, object] = {"format": "gctool.code", "version": 1, "scheme": "x", "n": 2,
                              "k": 2, "s": 1, "field": "real", "B": [[1, 0], [0, 1]]}
    doc.update(changes)
    return {k: v for k, v in doc.items() if v is not None}


@pytest.mark.parametrize(
    ("changes", "message"),
    [({"format": "other"}, "not a gctool code file"), ({"version": 2}, "version"),
     ({"n": 3}, "'n' is 3"), ({"k": 3}, "columns"), ({"s": 2}, "s must satisfy"),
     ({"s": -1}, "s must satisfy"), ({"field": "GF(6)"}, "prime power"),
     ({"field": "GF(2)", "B": [[1, 2], [0, 1]]}, r"outside GF\(2\)"),
     ({"B": [[1, 0], [0]]}, "ragged"), ({"B": [[1, "a"], [0, 1]]}, "non-numeric"),
     ({"B": [[True, 0], [0, 1]]}, "non-numeric"), ({"B": None}, "missing"),
     ({"n": "2"}, "integer"), ({"field": 7}, "field"),
     ({"field": "complex"}, "pairs"), ({"params": []}, "JSON objects"),
     ({"irreducible_poly": "x^2+x+1"}, "only allowed")],
)
def test_bad_json_files(tmp_path: Path, changes: dict[str, object], message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(_doc(**changes)))
    with pytest.raises(CodeFileError, match=message):
        read_code(path)


@pytest.mark.parametrize("text", ["", "   ", "{", "[1, 2]", '{"B": NaN}', "\x00\x01", "null"])
def test_malformed_json(tmp_path: Path, text: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(CodeFileError):
        read_code(path)


def test_nan_in_json_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "nan.json"
    path.write_text(json.dumps(_doc()).replace("[1, 0]", "[NaN, 0]"))
    with pytest.raises(CodeFileError, match="NaN"):
        read_code(path)


def test_pickled_npz_is_never_loaded(tmp_path: Path) -> None:
    path = tmp_path / "evil.npz"
    meta = json.dumps({k: v for k, v in _doc().items() if k != "B"})
    np.savez(path, B=np.array([[1, 0], [0, 1]], dtype=object), meta=np.array(meta))
    with pytest.raises(CodeFileError, match="pickle"):
        read_code(path)


def test_truncated_npz(tmp_path: Path, crc3: GradientCode) -> None:
    data = code_bytes(crc3, npz=True)
    path = tmp_path / "cut.npz"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(CodeFileError, match="NPZ"):
        read_code(path)


def test_npz_needs_meta(tmp_path: Path) -> None:
    buf = io.BytesIO()
    np.savez(buf, B=np.eye(2))
    path = tmp_path / "x.npz"
    path.write_bytes(buf.getvalue())
    with pytest.raises(CodeFileError, match="meta"):
        read_code(path)


def test_paths(tmp_path: Path) -> None:
    with pytest.raises(CodeFileError, match="no such file"):
        read_code(tmp_path / "missing.json")
    with pytest.raises(CodeFileError, match="directory"):
        read_code(tmp_path)
