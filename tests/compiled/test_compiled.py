"""gctool.compiled, what every compiled walk shares: the ``GCTOOL_COMPILED`` switch, the
compile notice on stderr, numba's cache directory on a read-only install, and ``successor``."""

from __future__ import annotations

from itertools import combinations
from typing import Any

import numpy as np
import pytest

from gctool import compiled


@pytest.mark.parametrize(("value", "mode"), [("0", "never"), ("numpy", "never"), ("1", "always"),
                                             ("ON", "always"), ("auto", "auto"), ("x", "auto")])
def test_mode_reads_the_switch(monkeypatch: pytest.MonkeyPatch, value: str, mode: str) -> None:
    monkeypatch.setenv(compiled.ENV, value)
    assert compiled.mode() == mode


def test_successor_walks_every_subset_in_order() -> None:
    from gctool.compiled.walk import successor

    S, seen = np.arange(3, dtype=np.int64), []
    while True:
        seen.append(tuple(int(x) for x in S))
        if successor(S, 6) < 0:
            break
    assert seen == list(combinations(range(6), 3))
    assert tuple(S) == (3, 4, 5)  # the last set is left unchanged


def test_compile_notice_only_on_a_terminal_and_only_when_slow(monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]
                                                             ) -> None:
    import io
    import sys
    import time

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(compiled, "NOTICE_AFTER_S", 0.05)
    for tty, slow in ((True, True), (True, False), (False, True)):
        err = Tty() if tty else io.StringIO()
        monkeypatch.setattr(sys, "stderr", err)
        with compiled.compile_notice("test"):
            time.sleep(0.3 if slow else 0.0)
        time.sleep(0.1)
        said = err.getvalue()
        assert (said.count("\n") == 1 and "compiling the test kernels" in said) == (tty and slow)


def test_read_only_package_dir_uses_a_user_cache_dir(tmp_path: Any) -> None:
    from pathlib import Path

    from gctool.compiled._jit import user_cache_dir

    blocked = tmp_path / "file"
    blocked.write_text("")  # a __pycache__ under a regular file cannot be created
    env = {"XDG_CACHE_HOME": str(tmp_path / "xdg")}
    assert user_cache_dir(blocked / "__pycache__", env) == str(tmp_path / "xdg/gctool/numba")
    assert user_cache_dir(tmp_path / "__pycache__", env) is None  # writable: numba's default
    assert user_cache_dir(blocked / "__pycache__", {"NUMBA_CACHE_DIR": "x"}) is None
    home = user_cache_dir(blocked / "__pycache__", {})
    assert home == str(Path.home() / ".cache/gctool/numba")
