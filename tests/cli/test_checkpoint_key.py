"""The identity of a ``--checkpoint`` run (:class:`gctool.cli.executor_options.RunKey`) hashes
the code file's bytes as the command reads them (:func:`gctool.cli.options.load_within`
hands its digest to :func:`gctool.io.load_code`, as ``design kron`` hashes a factor's file),
where it read the file in a pass of its own before the command read it again: the keys are
those of the command, the whole file and the options, and the file is opened once."""

from __future__ import annotations

import hashlib
import io
import json
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from gctool import _files
from gctool.algebra.fields import parse_field
from gctool.budget import Budget
from gctool.cli.executor_options import RunKey
from gctool.cli.options import READING_KEY, load_within
from gctool.io import code_bytes
from gctool.model import GradientCode


def _whole_key(command: str, kwargs: dict[str, Any], data: bytes) -> str:
    """The key as it was computed: the command, the file's bytes, the options."""
    h = hashlib.sha256(command.encode())
    h.update(data)
    opts = {k: v for k, v in kwargs.items() if k not in ("as_json", "jobs", "code_file")}
    h.update(json.dumps(opts, sort_keys=True, default=repr).encode())
    return h.hexdigest()


def _keyed(command: str, kwargs: dict[str, Any], path: str) -> tuple[GradientCode, str]:
    """The code read by the command under ``--checkpoint`` and the key given its runner."""
    runner = SimpleNamespace(key="unread")
    token = READING_KEY.set(RunKey(command, kwargs, runner))
    try:
        code, _ = load_within(path, Budget(max_work=60.0))
    finally:
        READING_KEY.reset(token)
    assert runner.key != "unread"
    return code, runner.key


def _files_of(tmp_path: Path) -> dict[str, bytes]:
    """A real code's file as JSON, stored NPZ (gctool's) and compressed NPZ."""
    B = np.arange(40 * 30, dtype=float).reshape(40, 30) % 5
    code = GradientCode(B, parse_field("real"), 1)
    stored = code_bytes(code, npz=True)
    squeezed = tmp_path / "squeezed.npz"
    with np.load(io.BytesIO(stored)) as arrays:
        np.savez_compressed(squeezed, **{k: arrays[k] for k in arrays.files})
    return {"json": code_bytes(code, npz=False), "npz": stored,
            "compressed": squeezed.read_bytes()}


def test_keys_are_those_of_the_whole_file(tmp_path: Path) -> None:
    """JSON, stored and compressed NPZ: the key is that of the command, the file's bytes and
    the options (the value the separate pass gave), the code the file's; another command,
    other options or one byte more of the file change it."""
    for kind, data in _files_of(tmp_path).items():
        path = tmp_path / f"code.{kind}"
        kwargs = {"code_file": (str(path),), "s": 3, "jobs": 2, "as_json": True}
        for variant in (data, data + b"\n") if kind == "json" else (data,):
            path.write_bytes(variant)
            code, key = _keyed("verify", kwargs, str(path))
            assert code.B.shape == (40, 30), kind
            assert key == _whole_key("verify", kwargs, variant), kind
        assert key != _whole_key("verify", kwargs, data) or kind != "json"
        assert _keyed("attack", kwargs, str(path))[1] != key
        assert _keyed("verify", {**kwargs, "s": 2}, str(path))[1] != key
        assert _keyed("verify", {**kwargs, "jobs": 1}, str(path))[1] == key  # not an option


def test_stdin_is_refused_before_anything_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """A rerun resumes from the same file: stdin is refused in one line, nothing read."""
    from gctool.errors import InvalidInput

    monkeypatch.setattr(_files, "_open", None)
    monkeypatch.setattr(sys, "stdin", None)
    for files in (("-",), ()):
        with pytest.raises(InvalidInput, match="regular file") as info:
            RunKey("verify", {"code_file": files}, SimpleNamespace(key="unread"))
        assert "\n" not in str(info.value)


def test_the_file_is_opened_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The key and the code come of one opening of the file (no pass of the key's own)."""
    opened: list[str] = []
    real = _files._open

    def counted(path: Any, label: str, what: str) -> Any:
        opened.append(label)
        return real(path, label, what)

    monkeypatch.setattr(_files, "_open", counted)
    for kind, data in _files_of(tmp_path).items():
        path = tmp_path / f"code.{kind}"
        path.write_bytes(data)
        opened.clear()
        _, key = _keyed("verify", {"code_file": (str(path),)}, str(path))
        assert opened == [str(path)] and key == _whole_key("verify", {}, data), kind
