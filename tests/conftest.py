"""Shared fixtures: small codes from the reference's worked examples, and a CLI runner; numba's
cache filled before the tests when it is cold (tests/warm_kernels.py, in pytest-xdist's
controller); the ``beside`` marker's scripts; BLAS on one thread.  The watchdog
(tests/hang_guard.py, a plugin loaded here): a test that runs past ``GCTOOL_TEST_TIMEOUT``
seconds (600) writes every thread's stack and ends its worker, which xdist reports as that
test's failure; a failed test's line is written at once (``FAILED <nodeid> (gw0): ...``)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from gctool._threads import pin_blas_threads

# one BLAS thread, as a gctool command runs (before numpy loads BLAS): the library calls of the
# tests are many small factorisations, which a second BLAS thread slows down many times over
# whenever the other core is busy (the other worker, mypy, other work on the machine)
pin_blas_threads()

import galois  # noqa: E402
import hypothesis  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from click.testing import CliRunner  # noqa: E402

from gctool.algebra.fields import parse_field  # noqa: E402
from gctool.model import GradientCode  # noqa: E402

from corpus import CRC3, GF7_B  # noqa: E402

#: the watchdog and the failure lines (tests/hang_guard.py)
pytest_plugins = ["hang_guard"]

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

#: hypothesis without its per-example deadline (200 ms by default): a timing assertion, which
#: the project's tests do not make; under load an example that builds a field's tables, or
#: galois' reference arithmetic, took 5 s and failed a correct test
hypothesis.settings.register_profile("gctool", deadline=None)
hypothesis.settings.load_profile("gctool")


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


def _runs_several_modules(config: pytest.Config) -> bool:
    """Do the command line's paths name more than one test module (a folder, or two files)?"""
    files = {arg.split("::")[0] for arg in config.args}
    return len(files) > 1 or any(Path(f).is_dir() for f in files)


#: the longest wait for the warm-up's parts (2-3 minutes of CPU in all, here): one still
#: running then is killed, and its report fails tests/compiled/test_warm_kernels.py; the
#: workers compile the kernels they reach
WARM_UP_SECONDS = 900
#: the warm-up's processes (tests/warm_kernels.py, one for each of its parts), and whether its
#: report is written
_warmers: list[subprocess.Popen[bytes]] = []
_reported: list[bool] = []


def pytest_sessionstart(session: pytest.Session) -> None:
    """In pytest-xdist's controller, a run of more than one test module on a cold cache (a
    fresh clone) compiles every kernel before the workers run a test: tests/warm_kernels.py's
    parts, one process each, beside the workers' collection; the tests are handed out when
    they have ended (:func:`pytest_xdist_node_collection_finished`).  Else both workers
    compile the kernels they reach, mostly the same ones (2-3 minutes of CPU each)."""
    config = session.config
    if (not config.pluginmanager.has_plugin("dsession")
            or os.environ.get("GCTOOL_COMPILED") == "0"
            or not _runs_several_modules(config) or not _kernel_cache_is_cold()):
        return
    import warm_kernels

    fd, report = tempfile.mkstemp(prefix="gctool-warm-up-", suffix=".txt")
    os.close(fd)
    os.environ[warm_kernels.REPORT] = report  # before the workers start (xdist's hook runs last)
    for part in range(1, len(warm_kernels.PARTS) + 1):
        with open(f"{report}.{part}", "wb") as out:
            _warmers.append(subprocess.Popen(
                [sys.executable, warm_kernels.__file__, f"{part}/{len(warm_kernels.PARTS)}"],
                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished() -> None:
    """The controller hands out the tests once every worker has collected them: after the
    warm-up, whose report it then writes."""
    if not _warmers or _reported:
        return
    import warm_kernels

    report = Path(os.environ[warm_kernels.REPORT])
    lines = []
    deadline = time.monotonic() + WARM_UP_SECONDS
    for part, proc in enumerate(_warmers, 1):
        try:
            status = proc.wait(max(deadline - time.monotonic(), 0))
        except subprocess.TimeoutExpired:
            proc.kill()
            status = proc.wait(10)
            lines.append(f"part {part} killed: still running after {WARM_UP_SECONDS} s")
        if status:
            tail = Path(f"{report}.{part}").read_text(errors="replace")[-2000:]
            lines.append(f"part {part} exited {status}: {tail!r}")
    lines += warm_kernels.cold(warm_kernels.kernels())
    report.write_text("".join(f"{line}\n" for line in lines))
    _reported.append(True)


#: tests that wait for a process of their own (mypy, the ``beside`` marker's scripts), run first
#: so that its work overlaps the other tests
FIRST = ("tests/meta/test_meta.py::test_types_mypy",)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests of :data:`FIRST` and those marked ``beside`` first (each keeps its order)."""
    items.sort(key=lambda item: not (item.nodeid in FIRST or item.get_closest_marker("beside")))


@pytest.fixture
def beside(request: pytest.FixtureRequest) -> subprocess.CompletedProcess[str]:
    """The result of the test's ``beside(*args, timeout=300)`` marker: ``python *args``, run
    in the repository's root."""
    marker = request.node.get_closest_marker("beside")
    return subprocess.run([sys.executable, *marker.args], cwd=Path(__file__).parents[1],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=marker.kwargs.get("timeout", 300), check=False)


def pytest_sessionfinish() -> None:
    if not _warmers:
        return
    import warm_kernels

    report = os.environ.pop(warm_kernels.REPORT)
    for part, proc in enumerate(_warmers, 1):
        if proc.poll() is None:
            proc.kill()
        proc.wait(10)
        Path(f"{report}.{part}").unlink(missing_ok=True)
    _warmers.clear()
    Path(report).unlink(missing_ok=True)


_TERMINATING = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@pytest.fixture(autouse=True, scope="session")
def _kernels_warm() -> None:
    """Every test process has run a compiled kernel of every kind that the estimates charge
    (gctool.compiled.Kind: tests/warm_kernels.py's walks of attack, verify and the frames'
    spectra, small codes; 1 s of CPU) before its tests, as the benchmarks' warm processes
    have: the estimates the tests count leave out loading the kernels (KERNELS_LOAD_NS in a
    fresh process, KIND_LOAD_NS for a kind not loaded) whichever tests ran before in a worker
    (tests/compiled/test_kernel_load.py counts them)."""
    import warm_kernels

    from gctool.compiled import ENV

    before = os.environ.get(ENV)
    os.environ[ENV] = "1"
    try:
        for step in (warm_kernels.attack_walks, warm_kernels.verify_walks,
                     warm_kernels.frame_spectra):
            step()
    finally:
        if before is None:
            del os.environ[ENV]
        else:
            os.environ[ENV] = before


@pytest.fixture(autouse=True)
def _write_rate_unprobed(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """In-process runs estimate a large code file's write on its CPU cost alone, as where no
    probe can be written (gctool._files.probe_write fails: no rate is timed): the probed rate
    is the machine's and its load's (4-19 ns a byte here), so a refusal that the write's
    estimate decides, or the stage it names, would change from run to run.  Tests marked
    ``write_probe`` (tests/codes/test_write_probe.py) time the real probe."""
    if request.node.get_closest_marker("write_probe") is None:
        from gctool import _files

        monkeypatch.setattr(_files, "probe_write", lambda target, nbytes, clock: None)


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


#: the doc examples (tests/meta/test_examples.py) run on one xdist worker, in their order: a
#: line may read a file an earlier line wrote, and two docs write fano.json (a block design, an
#: encoded frame) and crc-mm.json differently, so split over two workers they failed now and
#: then.  (xdist's ``--dist loadgroup`` does not group them under pytest 9: its group suffix
#: on the node ids does not reach the controller.)
EXAMPLES_UNIT = "tests/meta/test_examples.py::test_example_runs_as_written["
#: the tests each of which is one unit of work, as :data:`EXAMPLES_UNIT`: the doc examples, and
#: the tests whose module-scoped fixture is long, which each worker that ran one of them would
#: compute again (test_registry's fresh interpreters reading a file of each scheme, 8-15 s)
UNITS = (EXAMPLES_UNIT,
         "tests/registry/test_registry.py::test_reading_a_file_imports_its_own_family_only[")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """Every test is its own unit of work, as with ``--dist load``, but the instances of each
    test of :data:`UNITS` are one unit."""
    from xdist.scheduler import LoadScopeScheduling

    class Scheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return next((unit for unit in UNITS if nodeid.startswith(unit)), nodeid)

        def _reschedule(self, node: Any) -> None:
            """Not to a worker still collecting: when two workers crashed (the watchdog), the
            first replacement to finish its collection reschedules every worker, and xdist's
            LoadScopeScheduling failed on the other one (KeyError: an INTERNALERROR that
            ended the run); the other is scheduled when its own collection finishes."""
            if node in self.registered_collections:
                super()._reschedule(node)

    return Scheduling(config, log)  # type: ignore[arg-type]
