"""Shared fixtures: small codes from the reference's worked examples, and a CLI runner; numba's
cache filled beside the suite when it is cold (tests/warm_kernels.py); BLAS on one thread."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from gctool._threads import pin_blas_threads

# one BLAS thread, as a gctool command runs (before numpy loads BLAS): the library calls of the
# tests are many small factorisations, which a second BLAS thread slows down many times over
# whenever the other core is busy (numba's warm-up, mypy, other work on the machine)
pin_blas_threads()

import galois  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from click.testing import CliRunner  # noqa: E402

from gctool.algebra.fields import parse_field  # noqa: E402
from gctool.model import GradientCode  # noqa: E402

from corpus import CRC3, GF7_B  # noqa: E402

_GF = galois.GF


def _gf_python(*args: object, **kwargs: object) -> type:
    """galois.GF in its "python-calculate" mode unless a mode is asked for: the same exact
    arithmetic (galois' own reference ufuncs) without JIT-compiling every ufunc and matrix
    function anew for each field in each process (about 2.6 s of CPU for GF(7)'s rank,
    row_reduce and matmul, against 8 ms), for the small arrays of the tests.  The CLI in a
    subprocess keeps galois' default."""
    kwargs.setdefault("compile", "python-calculate")
    return _GF(*args, **kwargs)  # type: ignore[arg-type,no-any-return]


galois.GF = _gf_python


def _kernel_cache_is_cold() -> bool:
    """No cached real screen next to the kernels' source (numba's in-tree cache, where an
    editable or writable install keeps it), or in ``NUMBA_CACHE_DIR`` when it is set (any
    file would not do: galois caches its own functions there when it is imported)."""
    chosen = os.environ.get("NUMBA_CACHE_DIR")
    if chosen:
        return not any(Path(chosen).rglob("real.screen_range-*.nbi"))
    import gctool

    pycache = Path(gctool.__file__).parent / "audit" / "kernels" / "__pycache__"
    return not any(pycache.glob("real.screen_range-*.nbi"))


_warmer: list[subprocess.Popen[bytes]] = []


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A run of more than one test module on a cold cache (a fresh clone) compiles the kernels
    in a process of its own, on the core the suite leaves idle, while the first tests run."""
    if (_warmer or os.environ.get("GCTOOL_COMPILED") == "0"
            or len({item.path for item in items}) < 2 or not _kernel_cache_is_cold()):
        return
    script = Path(__file__).parent / "warm_kernels.py"
    _warmer.append(subprocess.Popen([sys.executable, str(script)], stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL))


def pytest_sessionfinish() -> None:
    while _warmer:
        proc = _warmer.pop()
        if proc.poll() is None:
            proc.kill()
        proc.wait(10)


_TERMINATING = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@pytest.fixture(autouse=True)
def _signal_dispositions_restored() -> object:
    """A command run in-process (CliRunner) ends as a gctool process does: ignoring SIGINT,
    SIGTERM and SIGHUP (``gctool._signals.ending``).  Restored after each test, so that the
    suite stays interruptible and later tests fork worker processes that do not inherit the
    ignored SIGTERM (a worker that ignores its pool's SIGTERM outlives the pool)."""
    saved = {sig: signal.getsignal(sig) for sig in _TERMINATING}
    yield
    for sig, action in saved.items():
        if signal.getsignal(sig) is not action and action is not None:
            signal.signal(sig, action)


@pytest.fixture
def crc3() -> GradientCode:
    return GradientCode(np.array(CRC3), parse_field("real"), 1, "cyclic")


@pytest.fixture
def gf7() -> GradientCode:
    return GradientCode(np.array(GF7_B), parse_field("GF(7)"), 2, "cyclic-mds")


@pytest.fixture
def frc6() -> GradientCode:
    return GradientCode(np.kron(np.eye(2), np.ones((3, 3))), parse_field("real"), 2, "frc")


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """stderr counts as a terminal (CliRunner's never is), so status lines are printed."""
    monkeypatch.setattr("gctool.cli.output.stderr_is_terminal", lambda: True)
