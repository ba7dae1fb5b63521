"""Shared fixtures: small codes from the reference's worked examples, and a CLI runner; numba's
cache filled beside the suite when it is cold (tests/warm_kernels.py); long child processes of
tests started beside the suite (the ``beside`` marker); BLAS on one thread."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

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
#: what the warm-up printed: the kernels it left without a cache entry, one a line
WARM_REPORT = Path(tempfile.gettempdir()) / f"gctool-warm-kernels-{os.getpid()}.txt"
#: one line for each step the warm-up has ended (warm_kernels.step_done)
WARM_STEPS = WARM_REPORT.with_suffix(".steps")


def _runs_several_modules(config: pytest.Config) -> bool:
    """Do the command line's paths name more than one test module (a folder, or two files)?"""
    files = {arg.split("::")[0] for arg in config.args}
    return len(files) > 1 or any(Path(f).is_dir() for f in files)


def pytest_sessionstart(session: pytest.Session) -> None:
    """A run of more than one test module on a cold cache (a fresh clone) compiles the kernels
    in a process of its own, from the start of the session (collection is 30 s of CPU on the
    suite's core), on the core the suite leaves idle."""
    if (_warmer or os.environ.get("GCTOOL_COMPILED") == "0"
            or not _runs_several_modules(session.config) or not _kernel_cache_is_cold()):
        return
    script = Path(__file__).parent / "warm_kernels.py"
    WARM_STEPS.write_bytes(b"")
    env = dict(os.environ, GCTOOL_WARM_STEPS=str(WARM_STEPS))
    with WARM_REPORT.open("wb") as report:
        _warmer.append(subprocess.Popen([sys.executable, str(script)], stdout=report,
                                        stderr=subprocess.DEVNULL, env=env))
    _compile_after_the_warmer()


#: test folders whose tests run after all the others, in this order: those that reach the
#: compiled kernels most and first (verify's and attack's walks, design's screen, the frames'
#: spectra), so that on a cold cache the warm-up has cached most kernels by then (audit, run
#: second, waited about a minute for them); meta's wait for mypy, which starts once the
#: warm-up has ended (tests/meta/conftest.py)
LAST = ("bounds", "codes", "decode", "engine", "meta", "compiled", "audit")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The folders of :data:`LAST` after the others (each keeps its order of collection)."""
    root = Path(__file__).parent

    def rank(item: pytest.Item) -> int:
        parts = item.path.relative_to(root).parts if item.path.is_relative_to(root) else ()
        return LAST.index(parts[0]) + 1 if parts and parts[0] in LAST else 0

    items.sort(key=rank)  # stable
    marked = [item for item in items if item.get_closest_marker("beside")]
    if marked:
        after_the_warm_up(lambda: [_start_beside(item) for item in marked])


def warmer() -> subprocess.Popen[bytes] | None:
    """The warm-up of this session, if one was started."""
    return _warmer[0] if _warmer else None


@pytest.fixture
def warm_up() -> tuple[int, str] | None:
    """(exit status, output) of this session's warm-up once it has ended (it waits), or None
    when none ran (a warm cache, or a run of one test module)."""
    proc = warmer()
    if proc is None:
        return None
    return proc.wait(), WARM_REPORT.read_text()


def _steps_done() -> int:
    return WARM_STEPS.read_bytes().count(b"\n")


def _compile_after_the_warmer() -> None:
    """While the warm-up runs, a kernel of gctool that this process would compile waits until
    the warm-up has cached it, and is then loaded: on two cores, compiling it here as well
    (10-20 s of CPU for the larger walks) only slows both processes down.  The wait ends
    unserved once the warm-up has ended, or has ended the step in which it had (or found)
    other signatures of the kernel (one the warm-up misses would idle this process until the
    warm-up's end, minutes on a loaded machine; the step's boundary is the warm-up's
    ``step_done``)."""
    from numba.core import sigutils
    from numba.core.caching import NullCache
    from numba.core.compiler_lock import global_compiler_lock
    from numba.core.dispatcher import Dispatcher

    compile_ = Dispatcher.compile

    def cached(self: Dispatcher, sig: Any) -> bool:
        with global_compiler_lock:  # as numba loads from its cache
            return self._cache.load_overload(sig, self.targetctx) is not None

    def compile(self: Dispatcher, sig: Any) -> Any:
        proc = warmer()
        if (proc is not None and proc.poll() is None
                and getattr(self.py_func, "__module__", "").startswith("gctool.")
                and not isinstance(self._cache, NullCache)
                and tuple(sigutils.normalize_signature(sig)[0]) not in self.overloads):
            seen_at = None  # the warm-up's steps ended when the kernel had a cache entry
            while proc.poll() is None and not cached(self, sig):
                if seen_at is None and os.path.exists(self._cache._cache_file._index_path):
                    seen_at = _steps_done()
                elif seen_at is not None and _steps_done() > seen_at:
                    break
                time.sleep(0.2)
        return compile_(self, sig)

    Dispatcher.compile = compile


#: what waits for the warm-up's end (:func:`after_the_warm_up`)
_waiting: list[Callable[[], object]] = []


def after_the_warm_up(start: Callable[[], object]) -> None:
    """Call ``start`` once this session's warm-up has ended: at once when there is none or it
    has ended, else after the first test that ends after it (on two cores, a process started
    beside the warm-up slows it, and the tests that wait for its kernels).  Between two tests,
    the environment and the signal dispositions are the session's own (a test's changes are
    undone), so a process started then inherits them."""
    proc = warmer()
    if proc is None or proc.poll() is not None:
        start()
    else:
        _waiting.append(start)


def pytest_runtest_logfinish() -> None:
    if _waiting and warmer() is not None and warmer().poll() is not None:  # type: ignore[union-attr]
        while _waiting:
            _waiting.pop(0)()


class Child:
    """A test's child process started before the test (output in temporary files: a pipe
    that nobody reads could fill up and stall it)."""

    def __init__(self, argv: list[str]) -> None:
        self.out: IO[str] = tempfile.TemporaryFile("w+")
        self.err: IO[str] = tempfile.TemporaryFile("w+")
        self.proc = subprocess.Popen(argv, cwd=Path(__file__).parents[1], text=True,
                                     stdin=subprocess.DEVNULL, stdout=self.out, stderr=self.err)

    def result(self, timeout: float) -> subprocess.CompletedProcess[str]:
        """Its exit code and output (waits at most ``timeout`` seconds)."""
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.stop()
            raise AssertionError(f"{self.proc.args} did not end within {timeout} s") from None
        self.out.seek(0)
        self.err.seek(0)
        return subprocess.CompletedProcess(self.proc.args, rc, self.out.read(), self.err.read())

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)
        self.out.close()
        self.err.close()


#: the ``beside`` processes of the session's tests, by test id
_beside: dict[str, Child] = {}


def _start_beside(item: pytest.Item) -> None:
    marker = item.get_closest_marker("beside")
    if marker is not None and item.nodeid not in _beside:
        _beside[item.nodeid] = Child([sys.executable, *marker.args])


@pytest.fixture
def beside(request: pytest.FixtureRequest) -> subprocess.CompletedProcess[str]:
    """The result of the test's ``beside(*args)`` process (``python *args`` in the
    repository's root): started once the warm-up has ended, beside the tests before this one,
    or now when it has not started yet (the warm-up still runs, or the test runs alone)."""
    _start_beside(request.node)
    marker = request.node.get_closest_marker("beside")
    return _beside[request.node.nodeid].result(marker.kwargs.get("timeout", 300))


def pytest_sessionfinish() -> None:
    _waiting.clear()
    while _beside:
        _beside.popitem()[1].stop()
    while _warmer:
        proc = _warmer.pop()
        if proc.poll() is None:
            proc.kill()
        proc.wait(10)
    WARM_REPORT.unlink(missing_ok=True)
    WARM_STEPS.unlink(missing_ok=True)


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
