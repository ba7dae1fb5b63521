"""Reading a code file is held to the work budget: its estimate (from the file's size and kind,
:func:`gctool.budget.read_cost`) is checked before a regular file is read, or before the bytes
of stdin are parsed, and refused in one line naming --max-work (exit 2); what it is estimated
at is taken from the budget of the rest of the run (docs/performance.md, "Start-up costs")."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gctool.algebra.fields import parse_field
from gctool.budget import (
    NS_PER_S,
    READ_FREE_NS,
    READ_SAMPLE_BYTES,
    Budget,
    format_seconds,
    read_cost,
    read_sample,
    sample_offsets,
)
from gctool.errors import BudgetExceeded
from gctool.io import ZIP_MAGIC, code_bytes, load_code, read_code
from gctool.limits import MAX_FILE_BYTES
from gctool.model import GradientCode

from helpers import run
from refusals import design_file, forbid, refused

MB = 1 << 20


#: a piece of a JSON code file's B (rows of four real floats: about 37 ns per byte to read)
ROWS = b"    [0.7373159246785, -1.2096841571066, 0.1143585016617, 2.0193672839401],\n" * 250


def _sparse(path: Path, head: bytes, size: int, fill: bytes = b"") -> str:
    """A file of ``size`` bytes that starts with ``head`` (sparse: nothing else is written),
    with ``fill`` where the read estimate samples it (:func:`gctool.budget.read_sample`)."""
    with open(path, "wb") as fh:
        fh.write(head)
        fh.truncate(size)
        for at in sample_offsets(size) if fill else ():
            fh.seek(max(at, len(head)))
            fh.write(fill[:READ_SAMPLE_BYTES])
    return str(path)


#: each command that reads a code file and has a work budget, on FILE
COMMANDS = [["verify"], ["attack", "-s", "1"], ["bound"], ["export", "--decoders", "-o", "t.npz"],
            ["show", "--curve"], ["simulate"]]


@pytest.mark.parametrize("words", COMMANDS, ids=lambda w: w[0])
def test_a_large_file_is_refused_before_it_is_read(words: list[str], tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """100 MiB of JSON of real floats (about 3.8 s to read, estimated from pieces of it)
    under --max-work 1s: one line naming the file, its size and --max-work, exit 2, and the
    file is never read (no output file either)."""
    monkeypatch.chdir(tmp_path)
    path = _sparse(tmp_path / "big.json", b"{", 100 * MB, ROWS)
    monkeypatch.setattr("gctool.io.read_bytes", forbid)
    monkeypatch.setattr("gctool.io.open_input", forbid)
    line = refused(run(words[0], path, *words[1:], "--max-work", "1s"),
                   f"reading {path} (100 MiB of JSON)", "--max-work", "raise --max-work to")
    data = Path(path).read_bytes()
    sample = read_sample(lambda at, count: data[at:at + count], len(data))
    work = read_cost(False, 100 * MB, sample) / NS_PER_S
    assert 2 < work < 5 and f"needs about {format_seconds(work)}" in line, line
    assert not (tmp_path / "t.npz").exists()


def test_npz_is_estimated_as_npz(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An NPZ file is told by its first four bytes, not its name, and costs less per byte:
    200 MiB of NPZ are refused under 100 ms, read under the default budget (then found
    malformed: the file is sparse)."""
    path = _sparse(tmp_path / "big.data", ZIP_MAGIC, 200 * MB)
    with monkeypatch.context() as m:
        m.setattr("gctool.io.read_bytes", forbid)
        with pytest.raises(BudgetExceeded) as info:
            read_code(path, Budget(max_work=0.1))
    assert "of NPZ" in str(info.value)
    assert info.value.needed == pytest.approx(read_cost(True, 200 * MB) / NS_PER_S)
    line = refused(run("verify", path), "malformed NPZ")
    assert "reading" not in line


def test_stdin_is_refused_before_it_is_parsed(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """stdin's size is known once read: the refusal comes before the bytes are parsed."""
    monkeypatch.setattr("gctool.io.code_from_bytes", forbid)
    data = b"{" + ROWS * (2 * MB // len(ROWS) + 1)  # about 80 ms to read
    refused(run("verify", "-", "--max-work", "10ms", input=data),
            "reading stdin (2 MiB of JSON)", "--max-work")


def test_a_file_above_the_size_limit_is_refused_by_its_size(tmp_path: Path) -> None:
    """No budget reads a file above the size limit: its refusal says so, not the budget's."""
    path = _sparse(tmp_path / "huge.json", b"{", MAX_FILE_BYTES + 1)
    line = refused(run("verify", path, "--max-work", "1s"), "larger than the limit")
    assert "max-work" not in line


def test_a_small_file_is_read_under_any_budget(tmp_path: Path) -> None:
    """Reading a small file is estimated below READ_FREE_NS: it is read under any budget, and
    the refusal is the run's own (what is known of the code decides it)."""
    path = design_file(tmp_path, "c.json", "cyclic", n=12, s=3)
    assert read_cost(False, Path(path).stat().st_size) < READ_FREE_NS
    line = refused(run("verify", path, "--method", "exhaustive", "--max-work", "1us"),
                   "verify (n=12", "--max-work")
    assert "reading" not in line


def test_what_reading_leaves_to_the_run(tmp_path: Path) -> None:
    """A file above READ_FREE_NS leaves the rest of the budget to the run, and counts as its
    earlier part; a small one leaves all of it."""
    rng = np.random.default_rng(0)
    code = GradientCode(rng.standard_normal((150, 150)), parse_field("real"), 1)
    path = tmp_path / "r.json"
    data = code_bytes(code, npz=False)
    path.write_bytes(data)
    work = read_cost(False, len(data), read_sample(lambda at, k: data[at:at + k], len(data)))
    assert work >= READ_FREE_NS
    got, left = load_code(path, Budget(max_work=60.0))
    assert np.array_equal(got.B, code.B)
    assert left.max_work == pytest.approx(60.0 - work / NS_PER_S)
    assert left.used == pytest.approx(work / NS_PER_S)
    with pytest.raises(BudgetExceeded) as info:
        load_code(path, Budget(max_work=work / NS_PER_S * 0.9))
    assert info.value.kind == "work" and info.value.param == "max_work"
    small = design_file(tmp_path, "c.json", "cyclic", n=12, s=3)
    data = Path(small).read_bytes()
    assert 0 < read_cost(False, len(data), data) < READ_FREE_NS
    budget = Budget(max_work=1e-6)
    assert load_code(small, budget)[1] is budget


def test_design_kron_reads_its_files_within_the_budget(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """``design kron`` reads its two code files as a part of the build, held to --max-work."""
    monkeypatch.chdir(tmp_path)
    small = design_file(tmp_path, "c.json", "cyclic", n=4, s=1)
    big = _sparse(tmp_path / "big.json", b"{", 100 * MB, ROWS)
    monkeypatch.setattr("gctool.io.read_bytes", forbid)
    refused(run("design", "kron", big, small, "-o", "ab.json", "--max-work", "1s"),
            f"reading {big} (100 MiB of JSON)", "--max-work")
    assert not (tmp_path / "ab.json").exists()


def _zeros_compressed(path: Path, rows: int = 4000, cols: int = 2000
                      ) -> tuple[int, int, int]:
    """A compressed NPZ of a zero real B (``rows`` x ``cols``, 64 MB unpacked from about
    70 KB): (its size, the bytes its members unpack to, the bytes they are packed in)."""
    import json

    from gctool.io import code_to_meta

    B = np.zeros((rows, cols))
    meta = json.dumps(code_to_meta(GradientCode(np.eye(2), parse_field("real"), 1))
                      | {"n": rows, "k": cols})
    np.savez_compressed(path, B=B, meta=np.array(meta))
    import zipfile

    with zipfile.ZipFile(path) as archive:
        unpacked = sum(i.file_size for i in archive.infolist())
        packed = sum(i.compress_size for i in archive.infolist())
    assert B.nbytes < unpacked < B.nbytes + 10_000 and packed < path.stat().st_size
    return path.stat().st_size, unpacked, packed


@pytest.mark.parametrize("source", ["path", "stdin-file", "pipe"])
def test_a_compressed_npz_is_estimated_on_what_it_unpacks(tmp_path: Path, source: str) -> None:
    """A compressed NPZ of 70 KB that unpacks to 64 MB (about 0.3 s to read) is estimated on
    what its zip directory says it unpacks to, not its size on disk: under --max-work 50ms
    it is refused in one line saying both, before its members are read (from a path, stdin
    redirected from it, and a pipe: before they are parsed)."""
    path = tmp_path / "z.npz"
    size, unpacked, packed = _zeros_compressed(path)
    assert size < 200_000 and read_cost(True, size) < READ_FREE_NS
    work = read_cost(True, size, b"", unpacked, packed) / NS_PER_S
    assert 0.1 < work < 1.0
    words = ["verify", str(path) if source == "path" else "-", "--max-work", "50ms"]
    label = str(path) if source == "path" else "stdin"
    import subprocess
    import sys

    code = ("import sys, gctool.io\n"  # the members are never read
            "gctool.io.npz_members = None\n"
            "from gctool.cli.main import main\n"
            "sys.exit(main(sys.argv[1:]))\n")
    with open(path, "rb") as fh:
        run_ = subprocess.run([sys.executable, "-c", code, *words],
                              stdin=fh if source == "stdin-file" else None,
                              input=path.read_bytes() if source == "pipe" else None,
                              capture_output=True, timeout=300)
    lines = run_.stderr.decode().strip().splitlines()
    assert run_.returncode == 2 and len(lines) == 1, run_.stderr
    assert f"reading {label} (" in lines[0] and "of compressed NPZ, 61 MiB unpacked" in lines[0]
    assert "--max-work" in lines[0] and "Traceback" not in lines[0]


def test_a_compressed_npz_leaves_the_rest_of_the_budget(tmp_path: Path) -> None:
    """What reading a compressed NPZ is estimated at (its unpacking) is taken from the run's
    budget, and the code is read whole."""
    path = tmp_path / "z.npz"
    size, unpacked, packed = _zeros_compressed(path, 1000, 500)
    work = read_cost(True, size, b"", unpacked, packed)
    assert work >= READ_FREE_NS
    got, left = load_code(path, Budget(max_work=60.0))
    assert got.B.shape == (1000, 500) and not np.asarray(got.B).any()
    assert left.used == pytest.approx(work / NS_PER_S)


def test_a_compressed_npz_is_priced_by_what_it_unpacks_and_what_it_is_packed_in(
        tmp_path: Path) -> None:
    """Two compressed NPZ of a 1024 x 1024 real B, unpacking to the same 8 MB: random reals
    (packed in 0.96 of it: zlib inflates them at 3-5 ns a byte) are estimated at about 3x
    the zeros' (packed in 0.001: about 2 ns a byte), from the zip directory's two sizes
    (npz_unpacked: the compressed members B and meta, as zipfile records them), with the
    regular file, stdin and bytes all estimated alike; the run's budget is charged that."""
    import io
    import zipfile

    from gctool._files import npz_unpacked, open_input
    from gctool.io import _measure, _peek

    rng = np.random.default_rng(2)
    costs = {}
    for name, B in (("random", rng.standard_normal((1024, 1024))),
                    ("zeros", np.zeros((1024, 1024)))):
        path = tmp_path / f"{name}.npz"
        data = code_bytes(GradientCode(B, parse_field("real"), 1), npz=True)
        out = io.BytesIO()
        with zipfile.ZipFile(io.BytesIO(data)) as src, \
                zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
            for info in src.infolist():
                dst.writestr(info.filename, src.read(info))
        path.write_bytes(out.getvalue())
        with zipfile.ZipFile(path) as archive:
            infos = [archive.getinfo(m) for m in ("B.npy", "meta.npy")]
        sizes = (sum(i.file_size for i in infos), sum(i.compress_size for i in infos))
        size = path.stat().st_size
        assert npz_unpacked(out.getvalue(), size) == sizes
        assert _peek(path) is None  # estimated once open, from the directory read once
        with open_input(path) as (npz, _):
            assert _measure(npz) == (True, size, b"", *sizes) == _measure(out.getvalue())
        costs[name] = read_cost(True, size, b"", *sizes)
        got, left = load_code(path, Budget(max_work=60.0))
        assert np.array_equal(got.B, B) and left.used == pytest.approx(costs[name] / NS_PER_S)
    assert 2.5 < costs["random"] / costs["zeros"] < 4
    stored = read_cost(True, 8 * MB + 2000)
    assert costs["zeros"] > 2 * stored


@pytest.mark.parametrize("source", ["path", "stdin-file"])
def test_an_npz_files_zip_directory_is_read_once(tmp_path: Path, source: str,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The read's estimate and the read share one reading of the zip directory
    (:meth:`gctool._files.NpzFile.directory`; it was read twice): the same estimate as of
    the file's bytes, the same code, and, of a file whose directory is broken, the same
    one-line error as of its bytes (each time it is read), after the same estimate."""
    import io
    import sys
    import zipfile

    from gctool._files import npz_unpacked
    from gctool.errors import CodeFileError
    from gctool.io import code_from_bytes

    reads = []
    parse = zipfile.ZipFile._RealGetContents

    def counted(self: zipfile.ZipFile) -> None:
        reads.append(1)
        parse(self)

    monkeypatch.setattr(zipfile.ZipFile, "_RealGetContents", counted)

    def load(path: Path, budget: Budget) -> tuple[GradientCode, Budget]:
        if source == "path":
            return load_code(path, budget)
        with open(path, "rb") as fh, monkeypatch.context() as m:
            m.setattr(sys, "stdin", io.TextIOWrapper(fh))
            return load_code("-", budget)

    for compressed in (False, True):  # stored: read under any budget; compressed: 8 MB
        path = tmp_path / f"c{compressed}.npz"
        B = np.arange(1000 * 1000, dtype=float).reshape(1000, 1000) % 7 if compressed \
            else np.arange(300 * 200, dtype=float).reshape(300, 200)
        (np.savez_compressed if compressed else np.savez)(
            path, B=B, meta=np.array(code_to_meta_json(B.shape)))
        data = path.read_bytes()
        work = read_cost(True, len(data), b"", *npz_unpacked(data, len(data)))
        assert (work >= READ_FREE_NS > read_cost(True, len(data))) == compressed
        reads.clear()
        got, left = load(path, Budget(max_work=60.0))
        assert len(reads) == 1 and np.array_equal(got.B, B)
        assert left.used == pytest.approx(work / NS_PER_S if compressed else 0.0)
        reads.clear()
        if not compressed:
            assert np.array_equal(load(path, Budget(max_work=1e-9))[0].B, B)
            assert len(reads) == 1
            continue
        with pytest.raises(BudgetExceeded) as info:
            load(path, Budget(max_work=work / NS_PER_S / 2))
        assert len(reads) == 1 and info.value.needed == pytest.approx(work / NS_PER_S)
    broken = tmp_path / "broken.npz"
    broken.write_bytes(data[:len(data) - 10])  # the end of its directory cut off
    with pytest.raises(CodeFileError) as want:
        code_from_bytes(broken.read_bytes(), str(broken) if source == "path" else "stdin")
    reads.clear()
    for _ in range(2):
        with pytest.raises(CodeFileError) as got_error:
            load(broken, Budget(max_work=60.0))
        assert str(got_error.value) == str(want.value)
    assert "malformed NPZ" in str(want.value) and "\n" not in str(got_error.value)
    assert len(reads) == 2  # once per load


def code_to_meta_json(shape: tuple[int, int]) -> str:
    """The ``meta`` member of a real code file whose B has ``shape``."""
    import json

    from gctool.io import code_to_meta

    return json.dumps(code_to_meta(GradientCode(np.eye(2), parse_field("real"), 1))
                      | {"n": shape[0], "k": shape[1]})
