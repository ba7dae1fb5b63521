"""Reading a code file converts B to its field once, in the model: one copy of a loaded NPZ
array (none for a stored NPZ member of the field's dtype: a read-only view of the input), one
call of ``Field.coerce``, and every refusal in one line naming what is wrong."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import gctool
from gctool._files import npz_members
from gctool.algebra.fields import Field, parse_field
from gctool.errors import CodeFileError, FieldError, InvalidInput
from gctool.io import code_from_meta, code_to_meta, npz_bytes, read_code
from gctool.model import GradientCode

from helpers import run, traced
from jsondoc import untimed
from refusals import refused

BASE = gctool.design("frc", n=4, s=1, seed=1)  # 4 x 4
META = code_to_meta(BASE)
GF7 = {**META, "field": "GF(7)"}


def _json(**over: Any) -> bytes:
    return json.dumps({**META, "B": np.asarray(BASE.B).tolist(), **over}).encode()


def _npz(B: Any, meta: dict[str, Any] = META) -> bytes:
    return npz_bytes({"B": np.asarray(B)}, meta)


#: (file bytes, suffix, the one-line refusal after "FILE: ")
REFUSALS = {
    "rows": (_json(n=3), ".json", "'n' is 3 but B has 4 rows"),
    "columns": (_json(k=3), ".json", "B has 4 columns but k = 3"),
    "columns of pieces": (_json(params={"m": 2}), ".json", "B has 4 columns but k*m = 4*2"),
    "entry checked before n": (
        json.dumps({**GF7, "n": 3, "B": [[9, 1], [1, 1], [1, 0], [0, 1]]}).encode(), ".json",
        "B has entry 9 outside GF(7) (elements are integers 0..6)"),
    "non-numeric": (_json(B=[[1, "x", 0, 0]] * 4), ".json", "B has a non-numeric entry 'x'"),
    "ragged": (_json(B=[[1, 1, 0, 0], [1]] * 2), ".json",
               "B is ragged: row 1 has 1 entries, row 0 has 4"),
    "s": (_json(s=4), ".json", "s must satisfy 0 <= s < n = 4, got s = 4"),
    "string B": (_json(B="abc"), ".json", "B has non-numeric entries (dtype <U3)"),
    "null B": (_json(B=None), ".json", "B is not a rectangular numeric array"),
    "NaN": (_npz(np.where(np.eye(4) > 0, np.nan, 1.0)), ".npz", "B has NaN or infinite entries"),
    "1-d": (_npz(np.ones(4)), ".npz", "B must be a 2-d matrix (workers x partitions), got 1-d"),
    "3-d": (_npz(np.ones((4, 4, 1))), ".npz",
            "B must be a 2-d matrix (workers x partitions), got 3-d"),
    "complex in a real file": (_npz(np.ones((4, 4)) * 1j), ".npz",
                               "B has complex entries but the field is real"),
    "NPZ rows": (_npz(np.ones((3, 4))), ".npz", "'n' is 4 but B has 3 rows"),
    "NPZ columns": (_npz(np.ones((4, 3))), ".npz", "B has 3 columns but k = 4"),
    "NPZ outside the field": (_npz(np.full((4, 4), 9), GF7), ".npz",
                              "B has entry 9 outside GF(7) (elements are integers 0..6)"),
}


@pytest.mark.parametrize("case", sorted(REFUSALS))
def test_refusals_name_the_problem(tmp_path: Path, case: str) -> None:
    data, suffix, message = REFUSALS[case]
    path = tmp_path / f"code{suffix}"
    path.write_bytes(data)
    with pytest.raises(CodeFileError) as info:
        read_code(path)
    assert str(info.value) == f"{path}: {message}"


def test_field_errors_keep_their_type_for_library_callers() -> None:
    doc = json.loads(_json(B=[[1, 0, 0, 2.5]] * 4))
    doc["field"] = "GF(7)"
    with pytest.raises(FieldError, match="non-integer entries"):
        code_from_meta(doc, doc["B"])


def _count_coerce(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    original = Field.coerce

    def counting(self: Field, values: Any, what: str = "B") -> np.ndarray:
        calls.append(what)
        return original(self, values, what)

    monkeypatch.setattr(Field, "coerce", counting)
    return calls


@pytest.mark.parametrize("suffix", [".json", ".npz"])
@pytest.mark.parametrize("field", ["real", "complex", "GF(7)"])
def test_b_is_converted_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, suffix: str,
                             field: str) -> None:
    code = gctool.design("cyclic", n=6, s=2, field=field, seed=2)
    path = tmp_path / f"code{suffix}"
    gctool.write_code(code, path)
    calls = _count_coerce(monkeypatch)
    again = read_code(path)
    assert calls == ["B"]
    assert np.array_equal(again.B, code.B) and again.B.dtype == code.field.dtype
    assert not again.B.flags.writeable


def test_a_loaded_npz_array_is_copied_once() -> None:
    """Peak memory of building the code from a loaded 600 x 600 float64 B: one copy (plus a
    boolean finiteness mask), not the two of a reader and a model that both convert it."""
    B = np.random.default_rng(0).random((600, 600))
    data = npz_bytes({"B": B}, code_to_meta(GradientCode(B, parse_field("real"), s=1)))
    arrays = npz_members(data, ("B", "meta"), {"meta": 1})
    meta = json.loads(str(arrays["meta"][()]))
    loaded = arrays.pop("B")
    code, peak = traced(lambda: code_from_meta(meta, loaded))
    assert np.array_equal(code.B, B)
    assert peak < 1.5 * B.nbytes, peak / B.nbytes


def _gf16_file(tmp_path: Path, n: int = 1000) -> tuple[Path, np.ndarray]:
    B = np.random.default_rng(1).integers(0, 2**16, size=(n, n), dtype=np.int64)
    path = tmp_path / "gf16.npz"
    gctool.io.write_code(GradientCode(B, parse_field("GF(2^16)").resolved(), 3), path)
    return path, B


def test_a_stored_npz_is_read_as_a_view_of_the_input(tmp_path: Path) -> None:
    """The file's bytes are read once; B is a read-only view of them (no copy)."""
    path, B = _gf16_file(tmp_path)
    code, peak = traced(lambda: read_code(path))
    assert np.array_equal(code.B, B)
    assert not code.B.flags.writeable and not code.B.flags.owndata
    assert peak < 1.3 * path.stat().st_size, peak / path.stat().st_size


def test_verify_refuses_on_budget_without_copying_b(tmp_path: Path) -> None:
    """Reading and the certificates tried before the budget's refusal hold the file's bytes
    and small per-row or bit-packed arrays, not a second copy of B.  B is of 32 MB: the row
    keys of the class certificate's estimate (a sample of 256 rows, in blocks of
    CLASS_BLOCK_ENTRIES) hold about 9 MB over GF(2^16) whatever B's size."""
    from gctool.audit.verify import verify
    from gctool.budget import Budget
    from gctool.errors import BudgetExceeded

    path, B = _gf16_file(tmp_path, n=2000)
    tiny = Budget(max_work=1e-6)
    traced(lambda: verify(read_code(path), budget=tiny))  # imports and caches outside
    out, peak = traced(lambda: verify(read_code(path), budget=tiny))
    assert isinstance(out, BudgetExceeded) and "reducing B" in str(out)
    assert peak < 1.5 * B.nbytes, peak / B.nbytes


def test_a_stored_member_with_a_bad_crc_is_refused(tmp_path: Path) -> None:
    data = bytearray(_npz(np.asarray(BASE.B)))
    at = data.rindex(np.asarray(BASE.B).tobytes())  # flip a byte of B's entries
    data[at] ^= 0xFF
    path = tmp_path / "bad.npz"
    path.write_bytes(bytes(data))
    with pytest.raises(CodeFileError, match="Bad CRC-32"):
        read_code(path)


def test_a_compressed_npz_is_still_read(tmp_path: Path) -> None:
    path = tmp_path / "c.npz"
    np.savez_compressed(path, B=np.asarray(BASE.B), meta=np.array(json.dumps(META)))
    assert np.array_equal(read_code(path).B, BASE.B)


def test_the_model_copies_a_callers_array() -> None:
    """The one copy is the model's: a caller's array stays writable and unshared."""
    B = np.asarray(BASE.B).copy()
    code = GradientCode(B, parse_field("real"), s=1)
    assert B.flags.writeable and not np.shares_memory(B, code.B)
    B[0, 0] = 7.0
    assert code.B[0, 0] != 7.0


def test_recorded_shape_is_checked_only_when_given() -> None:
    B = np.ones((4, 4))
    real = parse_field("real")
    assert GradientCode(B, real, s=1, recorded=(4, 4)).k == 4
    with pytest.raises(InvalidInput, match="'n' is 5 but B has 4 rows"):
        GradientCode(B, real, s=1, recorded=(5, 4))
    assert GradientCode(B, real, s=1).with_s(2).s == 2  # replace() keeps working


@pytest.mark.parametrize("field", ["real", "complex"])
def test_a_real_or_complex_npz_is_read_without_a_second_b(tmp_path: Path, field: str) -> None:
    """Reading a stored real/complex NPZ holds the file's bytes once: the model's row-norm
    check takes magnitudes in blocks of rows (``np.abs(B)`` was a second B, 2x the file for
    reals, 1.5x for complex)."""
    rng = np.random.default_rng(3)
    B = rng.standard_normal((2400, 1600))  # 31 MB: the checks' fixed blocks are 0.8 MB
    if field == "complex":
        B = B[:, :800] + 1j * B[:, 800:]
    path = tmp_path / "big.npz"
    gctool.io.write_code(GradientCode(B, parse_field(field), 3), path)
    read_code(path)  # imports and caches outside the measurement
    code, peak = traced(lambda: read_code(path))
    assert np.array_equal(code.B, B) and np.shares_memory(_read_buffer_of(code.B), code.B)
    # the file's bytes and the checks' blocks (0.8 MB); a finiteness mask of all entries was
    # 1/8 of a real B, 1/16 of a complex one
    assert peak < 1.05 * path.stat().st_size, peak / path.stat().st_size


def test_row_max_abs_is_the_whole_matrix_maximum() -> None:
    """The blocked magnitudes equal ``np.abs(B).max(axis=1)`` at block edges, on one-row
    blocks (a row wider than a block), tiny and huge entries and complex B."""
    from gctool.model import ROW_BLOCK_ENTRIES, _row_max_abs

    rng = np.random.default_rng(4)
    wide = ROW_BLOCK_ENTRIES + 3
    for shape in [(1, 1), (3, wide), (200, 5), (1000, 333), (ROW_BLOCK_ENTRIES + 1, 1)]:
        B = rng.standard_normal(shape) * np.ldexp(1.0, rng.integers(-1070, 1000, shape))
        for M in (B, B + 1j * rng.standard_normal(shape), -np.abs(B)):
            assert np.array_equal(_row_max_abs(M), np.abs(M).max(axis=1)), shape


@pytest.mark.parametrize("field", ["real", "complex", "GF(7)", "GF(2^4)"])
def test_an_npz_path_and_the_same_bytes_on_stdin_read_the_same_code(tmp_path: Path,
                                                                  field: str) -> None:
    """A regular file and stdin reach the same code: ``export`` (read without a budget) writes
    the same bytes and ``verify`` (read within its budget) the same verdict."""
    code = gctool.design("cyclic", n=7, s=2, field=field, seed=5)
    path = tmp_path / "c.npz"
    gctool.write_code(code, path)
    for n, source in enumerate((str(path), "-")):
        data = path.read_bytes() if source == "-" else None
        r = run("export", source, "-o", str(tmp_path / f"out{n}.npz"), input=data)
        assert r.exit_code == 0, r.output
    assert (tmp_path / "out0.npz").read_bytes() == (tmp_path / "out1.npz").read_bytes()
    with np.load(tmp_path / "out0.npz", allow_pickle=False) as written:
        assert np.array_equal(written["B"], code.B)
    runs = [run("verify", str(path), "--json"),
            run("verify", "-", "--json", input=path.read_bytes())]
    assert [r.exit_code for r in runs] == [0, 0], [r.output for r in runs]
    reports = [untimed(json.loads(r.stdout)["files"][0]["report"]) for r in runs]
    assert reports[0] == reports[1] and reports[0]["ok"] and reports[0]["n"] == 7


def _cut(data: bytes) -> bytes:
    return data[: len(data) // 2]


_CORRUPT = gctool.design("cyclic", n=7, s=2, field="GF(7)", seed=5)


def _bad_crc(data: bytes) -> bytes:
    out = bytearray(data)
    out[out.rindex(np.asarray(_CORRUPT.B).tobytes())] ^= 0x04  # an entry of B
    return bytes(out)


@pytest.mark.parametrize("spoil", [_cut, _bad_crc, lambda d: d[:4] + b"\x00" * 60,
                                   lambda d: d[:-22]], ids=["half", "crc", "junk", "no-end"])
@pytest.mark.parametrize("command", [["verify"], ["export", "-o", "x.npz"]])
def test_a_corrupt_npz_is_one_line_from_a_path_and_from_stdin(tmp_path: Path, spoil: Any,
                                                              command: list[str]) -> None:
    """A truncated or corrupt NPZ: exit 2, one line naming the file (or stdin), the same
    words either way, and no output file."""
    path = tmp_path / "bad.npz"
    gctool.write_code(_CORRUPT, path)
    path.write_bytes(spoil(path.read_bytes()))
    name, *rest = command
    rest = [str(tmp_path / a) if a.endswith(".npz") else a for a in rest]
    lines = [refused(run(name, str(path), *rest), str(path)),
             refused(run(name, "-", *rest, input=path.read_bytes()), "stdin")]
    assert lines[0].replace(str(path), "stdin") == lines[1]
    assert "NPZ" in lines[0], lines[0]
    assert not (tmp_path / "x.npz").exists()


def test_stdin_redirected_from_a_file_is_read_in_one_piece(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    """``gctool verify - < code.npz``: stdin is a regular file, read at its size as a named
    file is (the same code, the file's bytes once: growing pieces held 1.2-2.7x of them), from
    where stdin stands."""
    import io

    from gctool._files import read_bytes

    path, B = _gf16_file(tmp_path, n=600)
    with open(path, "rb") as raw:
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(raw))
        code, peak = traced(lambda: read_code("-"))
    assert np.array_equal(code.B, B) and not code.B.flags.owndata
    assert peak < 1.1 * path.stat().st_size, peak / path.stat().st_size
    text = tmp_path / "t.txt"
    text.write_bytes(b"skipped\nthe rest")
    with open(text, "rb") as raw:
        raw.readline()
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(raw))
        assert read_bytes("-") == (b"the rest", "stdin")


# -- B's alignment ------------------------------------------------------------------------------
def _address(a: np.ndarray) -> int:
    return int(a.__array_interface__["data"][0])


@pytest.mark.parametrize("field", ["real", "complex", "GF(31)", "GF(2^16)"])
@pytest.mark.parametrize("n", [7, 9, 13])
@pytest.mark.parametrize("stdin", [False, True], ids=["path", "stdin-file"])
def test_b_read_from_a_stored_npz_is_aligned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             field: str, n: int, stdin: bool) -> None:
    """B of a stored NPZ is a view of the file's bytes whose data starts at a 64-byte aligned
    address (a view of the bytes as read put a float64 B at 19 mod 64: not even 8-aligned),
    named or redirected to stdin, and equal to the saved array."""
    import io

    code = gctool.design("cyclic", n=n, s=2, field=field, seed=n)
    path = tmp_path / "c.npz"
    gctool.write_code(code, path)
    with open(path, "rb") as raw:
        if stdin:
            monkeypatch.setattr("sys.stdin", io.TextIOWrapper(raw))
        again = read_code("-" if stdin else path)
    assert again.B.flags.aligned and _address(again.B) % 64 == 0, _address(again.B) % 64
    assert not again.B.flags.owndata and not again.B.flags.writeable
    assert again.B.dtype == code.B.dtype and np.array_equal(again.B, code.B)
    assert code_to_meta(again) == code_to_meta(code)


def test_b_is_aligned_wherever_its_member_stands(tmp_path: Path) -> None:
    """An NPZ written by numpy with 'meta' first, then an odd-sized B: B is aligned (the member
    named B, not the first or the largest), and 'meta' reads the same."""
    B = np.random.default_rng(3).random((5, 5))
    meta = json.dumps(code_to_meta(GradientCode(B, parse_field("real"), s=1)) | {"pad": "x" * 999})
    path = tmp_path / "m.npz"
    np.savez(path, meta=np.array(meta), B=B)
    again = read_code(path)
    assert _address(again.B) % 64 == 0 and np.array_equal(again.B, B)


def _read_buffer_of(B: np.ndarray) -> Any:
    """The buffer :func:`gctool._files.read_input` read the file into, that B is a view of."""
    base: Any = B
    while not isinstance(base, memoryview):
        base = base.base
    return base.obj


def test_an_aligned_read_holds_b_once(tmp_path: Path) -> None:
    """A named NPZ file's stored B is read from the file straight into an aligned buffer of
    exactly its bytes (the file is never held whole): B is a view of it, marked immutable and
    read-only, and the read peaks at B once."""
    path, B = _gf16_file(tmp_path)
    code, peak = traced(lambda: read_code(path))
    assert _address(code.B) % 64 == 0 and np.array_equal(code.B, B)
    assert B.nbytes <= peak < 1.1 * B.nbytes, peak / B.nbytes
    buf = _read_buffer_of(code.B)
    assert getattr(buf, "gctool_immutable", False) is True and not buf.flags.writeable
    assert buf.nbytes == B.nbytes and np.shares_memory(buf, code.B)
    with pytest.raises(ValueError, match="(?i)writeable"):
        code.B.flags.writeable = True
    with pytest.raises(ValueError, match="read-only"):
        np.asarray(code.B)[0, 0] = 1


def _rezipped(data: bytes, spoil: Any) -> bytes:
    """``data`` with its B.npy member's bytes spoiled and stored again under a matching CRC
    (so that the reading gets past the zip layer to the ``.npy`` checks)."""
    import io
    import zipfile

    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            member = src.read(info)
            dst.writestr(info, spoil(member) if info.filename == "B.npy" else member)
    return out.getvalue()


def _npy_header(data: bytes) -> bytes:
    return _rezipped(data, lambda m: m.replace(b"{'descr'", b"{XX'descr'", 1))


def _short_member(data: bytes) -> bytes:
    # a 7 x 7 B claimed as 8 x 7: more entries than the member holds
    return _rezipped(data, lambda m: m.replace(b"'shape': (7,", b"'shape': (8,", 1))


def _pickled(data: bytes) -> bytes:
    return _rezipped(data, lambda m: m.replace(b"'descr': '<i8'", b"'descr': '|O' ", 1))


@pytest.mark.parametrize("spoil", [_cut, _bad_crc, _npy_header, _short_member, _pickled,
                                   lambda d: d[:-22], lambda d: d + b"\x00" * 7],
                         ids=["half", "crc", "npy-header", "short", "pickled", "no-end", "tail"])
def test_an_aligned_read_refuses_what_a_plain_read_refuses(tmp_path: Path, spoil: Any) -> None:
    """A spoiled NPZ read aligned (a named file) loads or fails exactly as its bytes do."""
    from gctool.io import code_from_bytes

    path = tmp_path / "bad.npz"
    gctool.write_code(_CORRUPT, path)
    path.write_bytes(spoil(path.read_bytes()))
    outcomes = []
    for read in (lambda: read_code(path), lambda: code_from_bytes(path.read_bytes(), str(path))):
        try:
            outcomes.append(("ok", np.asarray(read().B).tolist()))
        except CodeFileError as exc:
            outcomes.append(("refused", str(exc)))
    assert outcomes[0] == outcomes[1]


# -- the peak memory of a read -------------------------------------------------------------
@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="Linux's VmHWM")
def test_reading_grows_a_fresh_process_by_the_file_once(tmp_path: Path) -> None:
    """In a fresh process, loading a 31 MB real NPZ raises the peak resident memory by the file
    once (at least 0.97x: it is read, into memory of the process; at most 1.06x: no mask or
    copy of B, whose finiteness mask was 1/8 more)."""
    import subprocess
    import sys

    B = np.random.default_rng(5).standard_normal((2400, 1600))
    path, small = tmp_path / "big.npz", tmp_path / "small.npz"
    gctool.io.write_code(GradientCode(B, parse_field("real"), 3), path)
    gctool.io.write_code(gctool.design("frc", n=6, s=1), small)
    probe = ("import sys, numpy as np\n"
             "from gctool.io import read_code\n"
             "def peak():\n"  # VmHWM (ru_maxrss keeps the forking process's across exec)
             "    for line in open('/proc/self/status'):\n"
             "        if line.startswith('VmHWM:'):\n"
             "            return int(line.split()[1]) * 1024\n"
             "read_code(sys.argv[2])\n"  # imports and first allocations outside
             "before = peak()\n"
             "code = read_code(sys.argv[1])\n"
             "print(peak() - before, float(np.asarray(code.B).sum()))\n")
    out = subprocess.run([sys.executable, "-c", probe, str(path), str(small)],
                         capture_output=True, text=True, check=True, timeout=300).stdout
    grew, total = out.split()
    assert float(total) == float(B.sum())
    size = path.stat().st_size
    assert 0.97 * size <= int(grew) <= 1.06 * size, int(grew) / size


# -- compressed NPZ members ----------------------------------------------------------------------
def _compressed(path: Path, B: np.ndarray, field: str, meta: Any = None) -> None:
    meta = meta or code_to_meta(GradientCode(np.asarray(B), parse_field(field), 1))
    np.savez_compressed(path, B=B, meta=np.array(json.dumps(meta)))


@pytest.mark.parametrize("field", ["real", "complex", "GF(31)"])
@pytest.mark.parametrize("order", ["C", "F"])
def test_a_compressed_b_is_unpacked_once_and_kept(tmp_path: Path, field: str, order: str
                                                  ) -> None:
    """B of a compressed NPZ is unpacked into a read-only buffer of its own that the model
    keeps (numpy's reader made an array the model then copied): equal to what was saved, in
    its order, read-only, never writable again."""
    code = gctool.design("cyclic", n=9, s=2, field=field, seed=4)
    B = np.asarray(code.B).copy(order="F" if order == "F" else "C")
    path = tmp_path / "c.npz"
    _compressed(path, B, field, code_to_meta(code))
    again = read_code(path)
    assert again.B.dtype == B.dtype and np.array_equal(again.B, B)
    assert again.B.flags.f_contiguous == (order == "F") and not again.B.flags.owndata
    buf = _read_buffer_of(again.B)
    assert getattr(buf, "gctool_immutable", False) is True and not buf.flags.writeable
    assert buf.nbytes == B.nbytes and np.shares_memory(buf, again.B)
    with pytest.raises(ValueError, match="(?i)writeable"):
        again.B.flags.writeable = True
    assert code_to_meta(again) == code_to_meta(code)


def test_a_compressed_b_peaks_at_the_file_and_b_once(tmp_path: Path) -> None:
    """Reading a compressed NPZ of a dense 16 MB real B holds the compressed file and B once:
    no copy of B in the model, no finiteness mask (before: the file, B twice and a mask)."""
    B = np.random.default_rng(6).standard_normal((2000, 1000))
    path = tmp_path / "dense.npz"
    _compressed(path, B, "real")
    read_code(path)  # imports and caches outside the measurement
    code, peak = traced(lambda: read_code(path))
    assert np.array_equal(code.B, B)
    assert peak < path.stat().st_size + 1.15 * B.nbytes, (peak, path.stat().st_size, B.nbytes)


def _recrc(data: bytes, name: str, crc: int) -> bytes:
    """``data`` with the CRC-32 that its zip headers record for member ``name`` replaced."""
    import zipfile
    from io import BytesIO

    with zipfile.ZipFile(BytesIO(data)) as archive:
        info = archive.getinfo(name)
    out = bytearray(data)
    old, new = info.CRC.to_bytes(4, "little"), crc.to_bytes(4, "little")
    assert out.count(old) == 2  # the local header and the central directory
    return bytes(out.replace(old, new))


def test_a_compressed_member_is_checked_to_its_end(tmp_path: Path) -> None:
    """A compressed B whose recorded CRC does not match its data is refused in one line
    (the member is read to its end, where zipfile checks it); bytes after the array's data
    are read past, as numpy's reader ignores them."""
    import zipfile

    B = np.asarray(BASE.B)
    path = tmp_path / "c.npz"
    _compressed(path, B, "real")
    with zipfile.ZipFile(path) as archive:
        crc = archive.getinfo("B.npy").CRC
    bad = tmp_path / "bad.npz"
    bad.write_bytes(_recrc(path.read_bytes(), "B.npy", crc ^ 1))
    with pytest.raises(CodeFileError, match="malformed NPZ.*CRC"):
        read_code(bad)
    refused(run("verify", str(bad)), str(bad), "malformed NPZ")
    from io import BytesIO

    npy = BytesIO()
    np.lib.format.write_array(npy, B)
    tail = tmp_path / "tail.npz"
    with zipfile.ZipFile(tail, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("B.npy", npy.getvalue() + b"\x00" * 100_000)
        with zipfile.ZipFile(path) as src:
            archive.writestr("meta.npy", src.read("meta.npy"))
    assert np.array_equal(read_code(tail).B, B)


def _both_ways(B: np.ndarray, meta: dict[str, Any] = META) -> list[Any]:
    """What reading ``B`` from a stored and from a compressed NPZ gives (dtype and entries, or
    the refusal)."""
    from io import BytesIO

    from gctool.io import code_from_bytes

    out: list[Any] = []
    for save in (np.savez, np.savez_compressed):
        data = BytesIO()
        save(data, B=B, meta=np.array(json.dumps(meta)))
        try:
            code = code_from_bytes(data.getvalue(), "x")
            out.append(("ok", code.B.dtype.str, code.B.tolist()))
        except CodeFileError as exc:
            out.append(("refused", str(exc)))
    return out


@pytest.mark.parametrize("B", [
    np.zeros((0, 4)), np.zeros((4, 0)), np.ones((4, 4), dtype=">f8"), np.ones((4, 4), "<f4"),
    np.ones((4, 4), np.float16), np.ones((4, 4), np.int8), np.ones((4, 4), bool),
    np.ones((4, 4), "V8"), np.zeros((4, 4), "S0"), np.array(1.0),
    np.asfortranarray(np.arange(16.0).reshape(4, 4) % 2), np.full((4, 4), np.inf),
    np.ones((4, 4)) * 1j], ids=lambda B: f"{B.dtype.str}{B.shape}")
def test_a_compressed_and_a_stored_b_read_alike(B: np.ndarray) -> None:
    """Edge dtypes, shapes and orders: a compressed B loads or is refused exactly as the same
    B stored."""
    stored, compressed = _both_ways(B)
    assert stored == compressed


@pytest.mark.parametrize("field", ["real", "GF(31)"])
def test_verify_reports_the_same_on_a_compressed_copy(tmp_path: Path, field: str) -> None:
    """``verify --json`` of a code and of its compressed copy: the same report."""
    code = gctool.design("cyclic", n=8, s=2, field=field, seed=7)
    stored, packed = tmp_path / "s.npz", tmp_path / "c.npz"
    gctool.write_code(code, stored)
    _compressed(packed, np.asarray(code.B), field, code_to_meta(code))
    runs = [run("verify", str(p), "--json") for p in (stored, packed)]
    assert [r.exit_code for r in runs] == [0, 0], [r.output for r in runs]
    reports = [untimed(json.loads(r.stdout)["files"][0]["report"]) for r in runs]
    assert reports[0] == reports[1] and reports[0]["ok"]


# -- an NPZ from a pipe ----------------------------------------------------------------------------
def _piped(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    """stdin becomes a pipe that a thread fills with ``data`` (its size unknown to the reader)."""
    import io
    import os
    import threading

    r, w = os.pipe()

    def fill() -> None:
        with os.fdopen(w, "wb") as out:
            out.write(data)

    threading.Thread(target=fill, daemon=True).start()
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(os.fdopen(r, "rb")))


def test_an_npz_from_a_pipe_is_read_aligned_into_one_buffer(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    """An 8 MB NPZ from a pipe (read in doubling pieces into one mapping) gives B equal to what
    was written, 64-byte aligned, a read-only view of an immutable buffer of the input's
    size: as a regular file's."""
    from gctool._files import read_input

    path, B = _gf16_file(tmp_path)
    _piped(monkeypatch, path.read_bytes())
    data, label = read_input("-")
    assert label == "stdin" and isinstance(data, memoryview) and data.readonly
    assert data == path.read_bytes()
    code = gctool.io.code_from_bytes(data, label)
    assert np.array_equal(code.B, B) and _address(code.B) % 64 == 0
    buf = _read_buffer_of(code.B)
    assert getattr(buf, "gctool_immutable", False) is True and not buf.flags.writeable
    assert len(data) <= buf.nbytes <= len(data) + 64
    with pytest.raises(ValueError, match="(?i)writeable"):
        code.B.flags.writeable = True


@pytest.mark.parametrize("kind", ["meta-first", "compressed"])
def test_other_npz_from_a_pipe_read_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             kind: str) -> None:
    """B not the first member, or compressed: from a pipe, the same code as from the file."""
    B = np.random.default_rng(8).standard_normal((300, 300))
    meta = code_to_meta(GradientCode(B, parse_field("real"), 3))
    path = tmp_path / "o.npz"
    if kind == "meta-first":
        np.savez(path, meta=np.array(json.dumps(meta)), B=B)
    else:
        np.savez_compressed(path, B=B, meta=np.array(json.dumps(meta)))
    _piped(monkeypatch, path.read_bytes())
    code = read_code("-")
    assert np.array_equal(code.B, B) and code_to_meta(code) == code_to_meta(read_code(path))


@pytest.mark.parametrize("over", [0, 1])
def test_a_pipe_is_held_to_the_size_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          over: int) -> None:
    """An NPZ from a pipe of exactly the limit is read; one byte over it is refused."""
    import gctool._files as files

    path, B = _gf16_file(tmp_path, n=300)
    monkeypatch.setattr(files, "MAX_FILE_BYTES", path.stat().st_size - over)
    _piped(monkeypatch, path.read_bytes())
    if over:
        with pytest.raises(CodeFileError, match="stdin: input is larger than"):
            read_code("-")
    else:
        assert np.array_equal(read_code("-").B, B)


def test_without_mremap_a_pipe_is_read_in_pieces(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Where an anonymous mapping cannot be resized (no mremap), a pipe is read as before:
    the same code, from bytes."""
    import mmap

    from gctool._files import read_input

    class Fixed(mmap.mmap):
        def resize(self, newsize: int) -> None:
            raise SystemError("mmap: resizing not available--no mremap()")

    path, B = _gf16_file(tmp_path, n=300)
    monkeypatch.setattr(mmap, "mmap", Fixed)
    _piped(monkeypatch, path.read_bytes())
    data, _ = read_input("-")
    assert isinstance(data, bytes) and data == path.read_bytes()
    assert np.array_equal(gctool.io.code_from_bytes(data, "stdin").B, B)


def test_a_spoiled_large_npz_on_stdin_is_refused_as_from_its_path(tmp_path: Path) -> None:
    """A 2 MB NPZ with one byte of B flipped: one line, the same from its path and on stdin
    (read streamed), exit 2."""
    path, _ = _gf16_file(tmp_path, n=500)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x10
    path.write_bytes(bytes(data))
    lines = [refused(run("verify", str(path)), str(path), "CRC"),
             refused(run("verify", "-", input=bytes(data)), "stdin", "CRC")]
    assert lines[0].replace(str(path), "stdin") == lines[1]


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="Linux's VmHWM")
def test_a_pipe_grows_a_fresh_process_by_the_input_once(tmp_path: Path) -> None:
    """A 31 MB real NPZ through a pipe raises a fresh process's peak resident memory by its
    size once (reading it through io.BytesIO in growing pieces: 1.2x)."""
    import subprocess
    import sys

    B = np.random.default_rng(9).standard_normal((2400, 1600))
    path = tmp_path / "big.npz"
    gctool.io.write_code(GradientCode(B, parse_field("real"), 3), path)
    probe = ("import sys, numpy as np\n"
             "from gctool.io import read_code\n"
             "def peak():\n"
             "    for line in open('/proc/self/status'):\n"
             "        if line.startswith('VmHWM:'):\n"
             "            return int(line.split()[1]) * 1024\n"
             "read_code(sys.argv[1])\n"  # imports and first allocations outside
             "before = peak()\n"
             "code = read_code('-')\n"
             "print(peak() - before, float(np.asarray(code.B).sum()),\n"
             "      np.asarray(code.B).ctypes.data % 64)\n")
    small = tmp_path / "small.npz"
    gctool.io.write_code(gctool.design("frc", n=6, s=1), small)
    out = subprocess.run([sys.executable, "-c", probe, str(small)], input=path.read_bytes(),
                         capture_output=True, check=True, timeout=300).stdout.decode()
    grew, total, mod = out.split()
    assert float(total) == float(B.sum()) and mod == "0"
    size = path.stat().st_size
    assert 0.97 * size <= int(grew) <= 1.06 * size, int(grew) / size


# -- an NPZ file read member by member ---------------------------------------------------------
def _npz_kinds(tmp_path: Path) -> dict[str, Path]:
    """NPZ files of one code, as gctool, numpy (meta first, compressed) and a writer that adds
    a member after B write them, and its JSON file."""
    import zipfile

    code = gctool.design("cyclic", n=9, s=2, field="real", seed=3)
    B, meta = np.asarray(code.B), np.array(json.dumps(code_to_meta(code)))
    paths = {k: tmp_path / f"{k}.npz" for k in ("gctool", "meta-first", "compressed", "extra")}
    gctool.write_code(code, paths["gctool"])
    np.savez(paths["meta-first"], meta=meta, B=B)
    np.savez_compressed(paths["compressed"], B=B, meta=meta)
    np.savez(paths["extra"], B=B, X=np.arange(50_000.0), meta=meta)
    with zipfile.ZipFile(paths["extra"]) as archive:
        assert [i.filename for i in archive.infolist()] == ["B.npy", "X.npy", "meta.npy"]
    paths["json"] = tmp_path / "c.json"
    gctool.write_code(code, paths["json"])
    return paths


@pytest.mark.parametrize("kind", ["gctool", "meta-first", "compressed", "extra", "json"])
@pytest.mark.parametrize("source", ["path", "stdin-file", "pipe"])
def test_the_digest_of_a_read_is_the_files_sha256(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  kind: str, source: str) -> None:
    """``load_code(..., digest=)`` (``design kron``'s record of a factor) hashes exactly the
    file's bytes, in order, whatever the order its members are read in, from a path, stdin
    redirected from the file (read member by member too) and a pipe, and reads the code."""
    import hashlib
    import io

    from gctool.budget import Budget
    from gctool.io import load_code

    path = _npz_kinds(tmp_path)[kind]
    h = hashlib.sha256()
    if source == "pipe":
        _piped(monkeypatch, path.read_bytes())
    elif source == "stdin-file":
        raw = open(path, "rb")  # noqa: SIM115 (closed below)
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(raw))
    try:
        code, _ = load_code(str(path) if source == "path" else "-", Budget(), digest=h)
    finally:
        if source == "stdin-file":
            raw.close()
    assert h.hexdigest() == hashlib.sha256(path.read_bytes()).hexdigest()
    assert np.array_equal(code.B, read_code(_npz_kinds(tmp_path)["gctool"]).B)


def test_kron_records_the_sha256_of_npz_factors(tmp_path: Path) -> None:
    """``design kron`` of a compressed and a meta-first NPZ records their files' SHA-256."""
    import hashlib

    paths = _npz_kinds(tmp_path)
    small = tmp_path / "f.npz"
    np.savez(small, meta=np.array(json.dumps(code_to_meta(BASE))), B=np.asarray(BASE.B))
    prod = gctool.design("kron", file1=str(paths["compressed"]), file2=str(small))
    digests = [f["sha256"] for f in prod.provenance["factors"]]
    assert digests == [hashlib.sha256(p.read_bytes()).hexdigest()
                       for p in (paths["compressed"], small)]


def test_a_large_member_beside_b_is_never_held(tmp_path: Path) -> None:
    """A stored NPZ file with a 16 MB member besides B and meta: reading the code peaks at B
    (0.4 MB) and small pieces, not at the file (the other member is never read)."""
    code = gctool.design("cyclic", n=200, s=2, field="real", seed=3)
    B = np.asarray(code.B)
    path = tmp_path / "x.npz"
    np.savez(path, B=B, X=np.zeros(2_000_000), meta=np.array(json.dumps(code_to_meta(code))))
    read_code(path)  # imports and caches outside the measurement
    again, peak = traced(lambda: read_code(path))
    assert np.array_equal(again.B, B) and _address(again.B) % 64 == 0
    assert peak < 2 * B.nbytes + (1 << 20), (peak, B.nbytes)


def test_a_compressed_b_peaks_at_b_once(tmp_path: Path) -> None:
    """A named compressed NPZ of a dense 16 MB real B (about as large compressed) is unpacked
    from the file: the read peaks at B and the pieces being unpacked (holding the compressed
    bytes beside B, it peaked at twice B)."""
    B = np.random.default_rng(6).standard_normal((2000, 1000))
    path = tmp_path / "dense.npz"
    _compressed(path, B, "real")
    assert path.stat().st_size > 0.9 * B.nbytes
    read_code(path)
    code, peak = traced(lambda: read_code(path))
    assert np.array_equal(code.B, B) and _address(code.B) % 64 == 0
    assert peak < 1.1 * B.nbytes, peak / B.nbytes


@pytest.mark.parametrize("pack", ["stored", "compressed"])
@pytest.mark.parametrize("where", ["path", "stdin-file"])
def test_a_corrupted_npz_file_is_refused_in_one_line(tmp_path: Path, pack: str,
                                                     where: str) -> None:
    """One byte of B flipped in a stored NPZ, or of a compressed B's stream whose zip CRC
    then fails (bit 0 of the recorded CRC flipped): ``verify`` from a path and from stdin
    redirected from the file (read member by member), and ``design kron``, refuse it in one
    line, exit 2, naming the CRC, and write no file."""
    import subprocess
    import sys

    path, _ = _gf16_file(tmp_path, n=300)
    data = bytearray(path.read_bytes())
    if pack == "stored":
        data[len(data) // 2] ^= 0x10
    else:
        import zipfile

        with zipfile.ZipFile(path) as archive:
            B = np.load(path)["B"]
            meta = archive.read("meta.npy")
        np.savez_compressed(path, B=B)
        with zipfile.ZipFile(path, "a", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr("meta.npy", meta)
        with zipfile.ZipFile(path) as archive:
            crc = archive.getinfo("B.npy").CRC
        data = bytearray(_recrc(path.read_bytes(), "B.npy", crc ^ 1))
    path.write_bytes(bytes(data))
    label = str(path) if where == "path" else "stdin"
    for words in (["verify"], ["design", "kron", "-o", str(tmp_path / "out.npz")]):
        args = [sys.executable, "-m", "gctool", *words,
                *((str(path), str(path)) if "kron" in words and where == "path" else ()),
                *(("-", str(path)) if "kron" in words and where != "path" else ()),
                *((str(path) if where == "path" else "-",) if "kron" not in words else ())]
        with open(path, "rb") as stdin:
            run = subprocess.run(args, stdin=stdin, capture_output=True, text=True, timeout=300)
        lines = run.stderr.strip().splitlines()
        assert run.returncode == 2 and len(lines) == 1, (run.returncode, run.stderr)
        assert label in lines[0] and "CRC" in lines[0] and "Traceback" not in run.stderr
        assert not (tmp_path / "out.npz").exists()


def test_a_stored_member_of_another_stored_size_is_refused_alike(tmp_path: Path) -> None:
    """A stored B whose zip directory records a stored size other than its size (a spoiled
    directory entry) is refused in one line, read from its path (member by member) and from
    its bytes alike: neither reads past the member."""
    from gctool.io import code_from_bytes

    path = tmp_path / "c.npz"
    gctool.write_code(_CORRUPT, path)
    data = bytearray(path.read_bytes())
    entry = data.index(b"PK\x01\x02")  # the central directory's first entry: B.npy
    assert data[entry + 46:entry + 51] == b"B.npy"
    size = int.from_bytes(data[entry + 20:entry + 24], "little")
    data[entry + 20:entry + 24] = (size + 2).to_bytes(4, "little")
    path.write_bytes(bytes(data))
    lines = []
    for read in (lambda: read_code(path), lambda: code_from_bytes(bytes(data), str(path))):
        with pytest.raises(CodeFileError, match="records .* bytes stored for") as info:
            read()
        lines.append(str(info.value))
    assert lines[0] == lines[1] and "\n" not in lines[0]


def test_spoiled_npz_files_read_from_the_path_as_from_their_bytes(tmp_path: Path) -> None:
    """400 random spoils (bits flipped, cut, bytes inserted or deleted) of a code's NPZ as
    gctool and numpy write it (stored and compressed, B first or last): read member by member
    from the file, each loads the same B or is refused (CodeFileError) exactly when its bytes
    do; never another exception; a digest asked for is the file's SHA-256."""
    import hashlib
    import io

    from gctool.budget import Budget
    from gctool.io import code_from_bytes, load_code

    meta = np.array(json.dumps(code_to_meta(_CORRUPT)))
    B = np.asarray(_CORRUPT.B)
    bases = [npz_bytes({"B": B}, code_to_meta(_CORRUPT))]
    for save in (np.savez, np.savez_compressed):
        for members in ({"B": B, "meta": meta}, {"meta": meta, "B": B}):
            out = io.BytesIO()
            save(out, **members)
            bases.append(out.getvalue())
    rng = np.random.default_rng(28)
    path = tmp_path / "s.npz"
    loaded = 0
    for _ in range(400):
        data = bytearray(bases[rng.integers(len(bases))])
        at, kind = int(rng.integers(len(data))), rng.integers(4)
        if kind == 0:
            data[at] ^= 1 << int(rng.integers(8))
        elif kind == 1:
            del data[at:]
        elif kind == 2:
            data[at:at] = rng.integers(0, 256, int(rng.integers(1, 40)), dtype=np.uint8).tobytes()
        else:
            del data[at:at + int(rng.integers(1, 40))]
        spoiled = bytes(data)
        path.write_bytes(spoiled)
        outcomes = []
        for read in (lambda b=spoiled: code_from_bytes(b, "x"), lambda: read_code(path)):
            try:
                outcomes.append(np.asarray(read().B).tobytes())
            except CodeFileError:
                outcomes.append(None)
        assert outcomes[0] == outcomes[1], spoiled
        if outcomes[1] is not None:
            loaded += 1
            h = hashlib.sha256()
            load_code(path, Budget(), digest=h)
            assert h.hexdigest() == hashlib.sha256(spoiled).hexdigest()
    assert 0 < loaded < 100, loaded


@pytest.mark.parametrize("rows", [8, 64, 512, 1024])
@pytest.mark.parametrize("packed", [False, True], ids=["stored", "compressed"])
def test_b_of_every_size_is_read_into_an_aligned_immutable_buffer(tmp_path: Path, rows: int,
                                                                  packed: bool) -> None:
    """A real B of 32 KB, 256 KB, 2 MB and 4 MiB (numpy's heap, and its huge pages from
    4 MiB) is read, stored or compressed, into a buffer of exactly its bytes, 64-byte
    aligned, marked immutable and read-only, equal to what was saved, and visible to
    tracemalloc (the memory tests see it)."""
    B = np.random.default_rng(rows).standard_normal((rows, 512))
    code = GradientCode(B, parse_field("real"), s=1)
    path = tmp_path / "c.npz"
    if packed:
        _compressed(path, B, "real", code_to_meta(code))
    else:
        path.write_bytes(npz_bytes({"B": B}, code_to_meta(code)))
    again, peak = traced(lambda: read_code(path))
    assert peak >= B.nbytes, (peak, B.nbytes)
    assert np.array_equal(again.B, B) and _address(again.B) % 64 == 0
    buf = _read_buffer_of(again.B)
    assert getattr(buf, "gctool_immutable", False) is True and not buf.flags.writeable
    assert buf.nbytes == B.nbytes and np.shares_memory(buf, again.B)
    with pytest.raises(ValueError, match="(?i)writeable"):
        again.B.flags.writeable = True
