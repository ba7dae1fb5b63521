"""Shared fixtures: small codes from the reference's worked examples, and a CLI runner; numba's
cache filled beside the suite when it is cold (tests/warm_kernels.py); long child processes of
tests started beside the suite (the ``beside`` marker); the folders of :data:`APART` run by a
second pytest process beside this one (:class:`Apart`); BLAS on one thread."""

from __future__ import annotations

import json
import os
import shutil
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
    if (_warmer or os.environ.get("GCTOOL_COMPILED") == "0" or os.environ.get(APART_OUT)
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


def _folder(item: pytest.Item) -> str:
    root = Path(__file__).parent
    parts = item.path.relative_to(root).parts if item.path.is_relative_to(root) else ()
    return parts[0] if len(parts) > 1 else ""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The folders of :data:`LAST` after the others (each keeps its order of collection); the
    tests of :data:`APART` go to the process apart (:class:`Apart`), which keeps only those."""
    items.sort(key=lambda item: LAST.index(_folder(item)) + 1 if _folder(item) in LAST else 0)
    if os.environ.get(APART_OUT):
        wanted = set(Path(os.environ[APART_IDS]).read_text().splitlines())
        left = [item for item in items if item.nodeid not in wanted]
        if left:
            config.hook.pytest_deselected(items=left)
            items[:] = [item for item in items if item.nodeid in wanted]
        return
    apart = [item for item in items if _folder(item) in APART]
    if (apart and len(apart) < len(items) and _runs_several_modules(config)
            and not config.option.collectonly and os.environ.get("GCTOOL_APART") != "0"):
        _apart.append(Apart(config, apart))
        after_the_warm_up(_apart[0].start)
        items.sort(key=lambda item: item.nodeid in _apart[0].ids)  # reached last here
    elsewhere = _apart[0].ids if _apart else set()
    marked = [item for item in items
              if item.get_closest_marker("beside") and item.nodeid not in elsewhere]
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


def pytest_runtest_logfinish(nodeid: str) -> None:
    if _APART_LOG:
        _apart_write({"finished": nodeid})
    if _waiting and warmer() is not None and warmer().poll() is not None:  # type: ignore[union-attr]
        while _waiting:
            _waiting.pop(0)()


#: folders whose tests a second pytest process runs beside this one, once the warm-up has
#: ended (at once when there is none), while this one runs the others: the longest in-process
#: work of the suite (the audits' cross-checks against exact arithmetic, the bounds' and
#: designs' searches), which needs the kernels the warm-up compiles; on two cores this process
#: otherwise ran it alone while the other core idled after the warm-up (a fresh clone: 240 s of
#: the suite's 380 s of CPU after the warm-up, the other core busy for about 70 s of them)
APART = ("bounds", "codes", "decode", "audit")
#: the environment of the process apart: where it writes its reports, and the ids it runs
APART_OUT, APART_IDS = "GCTOOL_APART_OUT", "GCTOOL_APART_IDS"
#: a test of the process apart that writes nothing for so long has hung (seconds)
APART_QUIET = 900


class Apart:
    """The tests of :data:`APART` in a pytest process of their own (``GCTOOL_APART=0``: in this
    one).  Each test's reports (setup, call, teardown, as pytest serialises them for its
    plugins) come back as lines of JSON; this session reports them under the test's own id when
    it reaches the test, as if it had run it (the folders of :data:`APART` run last), so the
    counts, failures, ``-x`` and the summary are the suite's own.  A test whose reports never
    come (the process apart failed or hung) fails with the end of that process's output."""

    def __init__(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        self.config = config
        self.ids = {item.nodeid for item in items}
        self.files = sorted({str(item.path) for item in items})
        self.dir = Path(tempfile.mkdtemp(prefix="gctool-apart-"))
        (self.dir / "ids").write_text("".join(f"{i}\n" for i in sorted(self.ids)))
        self.proc: subprocess.Popen[bytes] | None = None
        self.read_to = 0
        self.last_read = time.monotonic()
        self.reports: dict[str, list[dict[str, Any]]] = {}
        self.finished: set[str] = set()

    def start(self) -> None:
        if self.proc is not None:
            return
        env = dict(os.environ, **{APART_OUT: str(self.dir / "reports"),
                                  APART_IDS: str(self.dir / "ids")})
        with (self.dir / "output").open("wb") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                 f"--basetemp={self.dir / 'tmp'}", *self.files],
                cwd=self.config.rootpath, stdin=subprocess.DEVNULL, stdout=out,
                stderr=subprocess.STDOUT, env=env)
        self.last_read = time.monotonic()

    def _read(self) -> None:
        path = self.dir / "reports"
        if not path.exists():
            return
        with path.open("rb") as f:
            f.seek(self.read_to)
            data = f.read()
        end = data.rfind(b"\n") + 1
        if end:
            self.read_to += end
            self.last_read = time.monotonic()
        for line in data[:end].splitlines():
            entry = json.loads(line)
            if "finished" in entry:
                self.finished.add(entry["finished"])
            else:
                self.reports.setdefault(entry["report"]["nodeid"], []).append(entry["report"])

    def results(self, item: pytest.Item) -> list[pytest.TestReport]:
        """The reports of ``item`` (waits for them; starts the process apart if it has not
        started yet)."""
        self.start()
        assert self.proc is not None
        while True:
            self._read()
            if item.nodeid in self.finished:
                break
            if self.proc.poll() is not None:
                self._read()
                break
            if time.monotonic() - self.last_read > APART_QUIET:
                self.proc.kill()
                self.proc.wait(10)
                break
            time.sleep(0.05)
        reports = [self.config.hook.pytest_report_from_serializable(config=self.config, data=d)
                   for d in self.reports.pop(item.nodeid, [])]
        if item.nodeid not in self.finished:
            tail = (self.dir / "output").read_bytes()[-4000:].decode(errors="replace")
            why = (f"no report of this test from the process apart (tests/conftest.py Apart; "
                   f"exit status {self.proc.poll()}); the end of its output:\n{tail}")
            reports.append(pytest.TestReport(item.nodeid, item.location, {}, "failed", why,
                                             "call"))
        return reports

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        shutil.rmtree(self.dir, ignore_errors=True)


#: the process apart of this session (one at most)
_apart: list[Apart] = []


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item) -> bool | None:
    """A test of the process apart is reported from its results, not run here."""
    if not _apart or item.nodeid not in _apart[0].ids:
        return None
    item.ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
    for report in _apart[0].results(item):
        item.ihook.pytest_runtest_logreport(report=report)
    item.ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
    return True


#: in the process apart: its configuration, and the file its reports go to
_APART_LOG: list[tuple[pytest.Config, IO[str]]] = []


def pytest_configure(config: pytest.Config) -> None:
    if os.environ.get(APART_OUT):
        _APART_LOG.append((config, open(os.environ[APART_OUT], "a", encoding="utf-8")))


def _apart_write(entry: dict[str, Any]) -> None:
    _APART_LOG[0][1].write(json.dumps(entry) + "\n")
    _APART_LOG[0][1].flush()


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if _APART_LOG:
        config = _APART_LOG[0][0]
        _apart_write({"report": config.hook.pytest_report_to_serializable(config=config,
                                                                          report=report)})


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
    while _apart:
        _apart.pop().stop()
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
