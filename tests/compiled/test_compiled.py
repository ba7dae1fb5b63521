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


#: a child process: galois imports numba first (numba reads NUMBA_CACHE_DIR then), gctool's
#: install is read-only (its __pycache__ not writable), then a kernel compiled with gctool's
#: njit in the module given as argv[1]'s folder
_GALOIS_FIRST = """\
import os, sys
import galois, numba
assert "gctool" not in sys.modules and not numba.config.CACHE_DIR
real = os.access
ours = os.path.join("gctool", "compiled", "__pycache__")
os.access = lambda path, mode, **kw: (not str(path).endswith(ours)) and real(path, mode, **kw)
import gctool.compiled._jit
os.access = real
sys.path.insert(0, sys.argv[1])
import kernel_mod
assert kernel_mod.twice(21) == 42
"""


@pytest.mark.parametrize("user", [False, True])
def test_the_cache_dir_holds_when_galois_imported_numba_first(tmp_path: Any, user: bool
                                                               ) -> None:
    """A read-only install caches in $XDG_CACHE_HOME/gctool/numba, and a NUMBA_CACHE_DIR the
    user sets before gctool is imported is used, even when galois imported numba before either
    was set: never in numba's default folder (~/.cache/numba), nor next to the source."""
    import os
    import subprocess
    import sys

    src = tmp_path / "src"
    src.mkdir()
    (src / "kernel_mod.py").write_text("from gctool.compiled._jit import njit\n\n\n"
                                       "@njit\ndef twice(x):\n    return 2 * x\n")
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env.update(XDG_CACHE_HOME=str(tmp_path / "xdg"), HOME=str(tmp_path / "home"))
    script = _GALOIS_FIRST
    want = tmp_path / "xdg" / "gctool" / "numba"
    if user:  # set in the process after numba's import, before gctool's
        want = tmp_path / "mine"
        script = script.replace("real = os.access\n",
                                f"os.environ['NUMBA_CACHE_DIR'] = {str(want)!r}\n"
                                "real = os.access\n", 1)
    done = subprocess.run([sys.executable, "-c", script, str(src)], env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    index = sorted(tmp_path.rglob("kernel_mod.twice-*.nbi"))
    assert len(index) == 1 and index[0].is_relative_to(want), index
