"""``gctool export -o X.npz --decoders`` streams the decoding table: the streamed NPZ
holds exactly the arrays and meta of the in-memory export, peak memory is bounded by the chunk
size (tracemalloc), and a failure or Ctrl-C mid-stream leaves no partial file."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

import gctool.decoding_table
import gctool.exports
from gctool.cli.exit_codes import ExitCode
from gctool.codes import design
from gctool.exports import build_export, export_npz
from gctool.io import code_bytes
from gctool.model import GradientCode

from helpers import run


def tampered_rs() -> GradientCode:
    """rs over GF(7) with worker 4 rescaled: the structured vector fails (generic fallback)
    on every pattern in which worker 4 survives (tests/decode/test_structured_export.py)."""
    code = design("rs", 6, 2, field="GF(7)")
    B = np.asarray(code.B).copy()
    B[4, B[4] != 0] = (B[4, B[4] != 0] * 3) % 7
    return GradientCode(B, code.field, code.s, "rs", dict(code.params))


CODES = {
    "real-cyclic": lambda: design("cyclic", n=8, s=2, seed=1),
    "gf3-frc": lambda: design("frc", n=6, s=2, field="GF(3)"),
    "cyclic-mds-gf13": lambda: design("cyclic-mds", n=12, s=3, field="GF(13)"),
    "rs-real": lambda: design("rs", 7, 2, 4, field="real"),
    "comm-m2": lambda: design("comm", 6, 2, field="real", m=2),
    "comm-complex": lambda: design("comm", 5, 1, 7, field="complex", m=2),
    "rs-tampered": tampered_rs,
}


def assert_same_npz(path: Path, ref: gctool.exports.Export) -> None:
    with np.load(path, allow_pickle=False) as z:
        names = set(z.files)
        expected = set(ref.arrays) | {"meta"}
        assert names == expected, (names, expected)
        for name, arr in ref.arrays.items():
            got = z[name]
            assert got.dtype == arr.dtype and got.shape == arr.shape, name
            assert np.array_equal(got, arr), name
        assert json.loads(str(z["meta"][()])) == json.loads(json.dumps(ref.meta))


@pytest.mark.parametrize("name", list(CODES))
@pytest.mark.parametrize("decoder", ["auto", "generic"])
def test_streamed_npz_equals_in_memory_export(name: str, decoder: str, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    code = CODES[name]()
    ref = build_export(code, decoders=True, decoder=decoder)
    if decoder == "auto" and name != "real-cyclic" and name != "gf3-frc":
        assert ref.meta["decoders"]["method"] == "structured" and "structured" in ref.arrays
    if name == "rs-tampered" and decoder == "auto":
        assert 0 < ref.meta["decoders"]["fallbacks"] < ref.patterns
    src = tmp_path / "c.json"
    src.write_bytes(code_bytes(code, False))
    monkeypatch.setattr(gctool.decoding_table, "chunk_size", lambda code, f: 4)  # many chunks
    out = tmp_path / "plan.npz"
    r = run("export", str(src), "-o", str(out), "--decoders", "--decoder", decoder, "--json")
    assert r.exit_code == (0 if ref.all_decodable else 1), r.stderr
    report = json.loads(r.stdout)
    assert report["patterns"] == ref.patterns and report["bytes"] == out.stat().st_size
    assert report["decoder"] == ref.meta["decoders"]["method"]
    assert report["fallbacks"] == ref.meta["decoders"].get("fallbacks", 0)
    assert_same_npz(out, ref)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.json", "plan.npz"]  # no temp left


def test_structured_decoder_choice_in_the_streamed_path(tmp_path: Path) -> None:
    frc = tmp_path / "frc.json"
    frc.write_bytes(code_bytes(design("frc", n=6, s=2), False))
    r = run("export", str(frc), "-o", str(tmp_path / "x.npz"), "--decoders", "--decoder",
            "structured")
    assert r.exit_code == ExitCode.USAGE and "no structured decoder for scheme 'frc'" in r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["frc.json"]
    mds = design("cyclic-mds", n=6, s=2, field="GF(7)")
    out = tmp_path / "m.npz"
    with out.open("wb") as fh:  # s = 3: fewer survivors than n - s, auto falls back
        streamed = export_npz(mds, fh, s=3, chunk=2)
    assert streamed.meta["decoders"]["method"] == "generic" and not streamed.all_decodable
    assert "at least n - s = 4" in streamed.meta["decoders"]["note"]
    assert_same_npz(out, build_export(mds, decoders=True, s=3))


def test_npz_is_not_capped_by_table_entries_but_json_is(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gctool.exports, "MAX_TABLE_ENTRIES", 50)  # 15 patterns x 6 = 90
    src = tmp_path / "c.json"
    src.write_bytes(code_bytes(design("frc", n=6, s=2), False))
    r = run("export", str(src), "-o", str(tmp_path / "e.json"), "--decoders")
    assert r.exit_code == ExitCode.USAGE and "for JSON output (use .npz" in r.stderr
    r = run("export", str(src), "-o", str(tmp_path / "e.npz"), "--decoders")
    assert r.exit_code == 0, r.stderr
    with np.load(tmp_path / "e.npz") as z:
        assert z["A"].shape == (15, 6)
    # --max-patterns is still the budget of the streamed path
    r = run("export", str(src), "-o", str(tmp_path / "f.npz"), "--decoders",
            "--max-patterns", "14")
    assert r.exit_code == ExitCode.USAGE and "15 patterns" in r.stderr
    assert not (tmp_path / "f.npz").exists()


@pytest.mark.parametrize("s", [0, 1, 5])
def test_edge_pattern_sizes(s: int, tmp_path: Path) -> None:
    code = design("cyclic", n=6, s=1, seed=4)
    out = tmp_path / "e.npz"
    with out.open("wb") as fh:
        export_npz(code, fh, s=s, chunk=2)
    assert_same_npz(out, build_export(code, decoders=True, s=s))


def test_streamed_output_is_deterministic(tmp_path: Path) -> None:
    code = design("cyclic-mds", n=6, s=2, field="GF(7)")
    data = []
    for name in ("a.npz", "b.npz"):
        with (tmp_path / name).open("wb") as fh:
            export_npz(code, fh)
        data.append((tmp_path / name).read_bytes())
    assert data[0] == data[1]


def test_large_table_has_bounded_peak_memory(tmp_path: Path) -> None:
    """203,490 patterns (C(21, 8)) in chunks of 512: the decoding table A alone is 34 MB of
    int64, the whole NPZ about 48 MB; the traced peak must stay far below (a few MB)."""
    code = design("cyclic-mds", n=21, s=8, field="GF(43)")
    out = tmp_path / "big.npz"
    with out.open("wb") as fh:
        tracemalloc.start()
        try:
            streamed = export_npz(code, fh, max_patterns=300_000, chunk=512)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    P, n = 203_490, 21
    table_bytes = P * n * 8
    assert streamed.patterns == P and streamed.all_decodable
    assert streamed.meta["decoders"]["method"] == "structured"
    assert streamed.meta["decoders"]["structured_patterns"] == P
    assert peak < table_bytes / 8, (peak, table_bytes)  # in memory, A alone is table_bytes
    assert out.stat().st_size > table_bytes
    with np.load(out, allow_pickle=False) as z:
        A, S, ok = z["A"], z["patterns"], z["decodable"]
        assert A.shape == (P, n) and S.shape == (P, 8) and ok.all() and z["structured"].all()
        assert S[0].tolist() == list(range(8)) and S[-1].tolist() == list(range(13, 21))
        rng = np.random.default_rng(0)
        B = np.asarray(code.B)
        for p in rng.choice(P, size=50, replace=False):  # exact check over GF(43)
            a = A[p]
            assert not a[S[p]].any()
            assert np.array_equal(a @ B % 43, code.targets()[0])


class Boom(RuntimeError):
    pass


@pytest.mark.parametrize("existing", [False, True])
@pytest.mark.parametrize("error", [Boom, KeyboardInterrupt])
def test_failure_mid_stream_leaves_no_partial_file(tmp_path: Path, existing: bool,
                                                   error: type[BaseException],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    code = design("cyclic", n=8, s=3, seed=2)  # 56 patterns, chunks of 5
    src = tmp_path / "c.json"
    src.write_bytes(code_bytes(code, False))
    out = tmp_path / "plan.npz"
    if existing:
        out.write_bytes(b"an old plan that must survive")
    monkeypatch.setattr(gctool.decoding_table, "chunk_size", lambda code, f: 5)
    calls = []
    from gctool.decode.table import TableDecoder

    vectors = TableDecoder.vectors

    def failing(self: TableDecoder, F: np.ndarray):  # type: ignore[no-untyped-def]
        calls.append(len(F))
        if len(calls) == 4:  # mid-stream: 3 chunks already written to the temporary file
            raise error("chunk 4 fails")
        return vectors(self, F)

    monkeypatch.setattr(TableDecoder, "vectors", failing)
    r = run("export", str(src), "-o", str(out), "--decoders")
    assert len(calls) == 4
    if error is KeyboardInterrupt:
        assert r.exit_code == ExitCode.INTERRUPTED
        assert "interrupted after decoding 15 of 56" in r.stderr and "no file written" in r.stderr
    else:
        assert r.exit_code == ExitCode.INTERNAL, (r.exit_code, r.stderr)
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == (["c.json", "plan.npz"] if existing else ["c.json"])  # no temporary file
    if existing:
        assert out.read_bytes() == b"an old plan that must survive"
