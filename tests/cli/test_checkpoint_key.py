"""The identity of a ``--checkpoint`` run (:func:`gctool.cli.executor_options._run_key`) hashes
the code file in pieces (:func:`gctool._files.hash_file`), where it read the file whole (134 MB
of fresh memory for a 134 MB code file, read again by the command after it): the keys are the
ones of the whole file, and the refusals are :func:`gctool._files.read_bytes`'s."""

from __future__ import annotations

import hashlib
import json
import tracemalloc
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gctool import _files
from gctool._files import hash_file, read_bytes
from gctool.cli.executor_options import _run_key
from gctool.errors import CodeFileError


def _whole_key(command: str, kwargs: dict[str, Any], path: Path) -> str:
    """The key as it was computed: the file read whole."""
    h = hashlib.sha256(command.encode())
    h.update(read_bytes(str(path))[0])
    opts = {k: v for k, v in kwargs.items() if k not in ("as_json", "jobs", "code_file")}
    h.update(json.dumps(opts, sort_keys=True, default=repr).encode())
    return h.hexdigest()


@pytest.mark.parametrize("chunk", [1000, _files.WRITE_CHUNK])
def test_keys_are_those_of_the_whole_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          chunk: int) -> None:
    """Files of 1 byte, around a piece and of several pieces: the same key as the whole file;
    one byte changed (the last one, in the last piece) changes it."""
    monkeypatch.setattr(_files, "WRITE_CHUNK", chunk)
    rng = np.random.default_rng(chunk)
    for size in (1, chunk - 1, chunk, chunk + 1, 5 * chunk // 2 + 3):
        path = tmp_path / f"code{size}.npz"
        data = bytearray(rng.integers(0, 256, size, dtype=np.uint8).tobytes())
        data[0] = ord("x")  # not all whitespace
        path.write_bytes(bytes(data))
        kwargs = {"code_file": (str(path),), "s": 3, "jobs": 2, "as_json": True}
        key = _run_key("verify", kwargs)
        assert key == _whole_key("verify", kwargs, path)
        assert key != _run_key("attack", {**kwargs, "code_file": str(path)})
        data[-1] ^= 1
        path.write_bytes(bytes(data))
        assert _run_key("verify", kwargs) == _whole_key("verify", kwargs, path) != key


def test_refusals_are_those_of_reading_the_file(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """A missing file, a directory, an empty file, whitespace over several pieces, a file over
    the size limit, a name with a NUL byte: the same one-line CodeFileError as read_bytes."""
    monkeypatch.setattr(_files, "WRITE_CHUNK", 16)
    monkeypatch.setattr(_files, "MAX_FILE_BYTES", 100)
    (tmp_path / "empty").write_bytes(b"")
    (tmp_path / "blank").write_bytes(b" \n\t" * 20)
    (tmp_path / "big").write_bytes(b"x" * 101)
    (tmp_path / "limit").write_bytes(b" " * 99 + b"x")
    for name in ("missing", ".", "empty", "blank", "big", "bad\0name"):
        path = str(tmp_path / name)
        with pytest.raises(CodeFileError) as want:
            read_bytes(path)
        with pytest.raises(CodeFileError) as got:
            hash_file(path, hashlib.sha256())
        assert str(got.value) == str(want.value) and "\n" not in str(got.value)
    h = hashlib.sha256()
    hash_file(tmp_path / "limit", h)  # at the limit, one non-blank byte at the very end
    assert h.hexdigest() == hashlib.sha256(read_bytes(tmp_path / "limit")[0]).hexdigest()


def test_the_file_is_never_held_whole(tmp_path: Path) -> None:
    """The traced peak of the key of an 8 MB file stays below a quarter of it (the file read
    whole was a peak of its size)."""
    path = tmp_path / "code.npz"
    path.write_bytes(np.random.default_rng(0).integers(0, 256, 8 << 20, dtype=np.uint8)
                     .tobytes())
    tracemalloc.start()
    try:
        key = _run_key("verify", {"code_file": (str(path),)})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert key == _whole_key("verify", {"code_file": (str(path),)}, path)
    assert peak < (8 << 20) / 4, peak
