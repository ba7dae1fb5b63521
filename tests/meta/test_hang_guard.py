"""The suite's watchdog (tests/hang_guard.py), run for real: pytest in a process of its own, with
the plugin alone and a deadline of 2 s, on a test that never ends, one that passes, one that
fails and one that is slow."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import hang_guard
import pytest

TESTS = Path(__file__).parents[1]

MODULE = """
import subprocess, sys, threading, time
from pathlib import Path

def test_fails():
    assert 1 == 2, "one is not two"

def test_hangs():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    Path("child.pid").write_text(str(child.pid))
    threading.Event().wait()

def test_passes():
    pass

def test_slow():
    time.sleep(1)
"""


def _pytest(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """pytest with the plugin alone (``-p hang_guard``) on :data:`MODULE`, in ``tmp_path``
    (its own ini file: not the suite's addopts)."""
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "test_module.py").write_text(textwrap.dedent(MODULE))
    env = {**os.environ, "PYTHONPATH": str(TESTS), hang_guard.ENV: "2"}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "hang_guard", "-p", "no:cacheprovider",
         *args, "test_module.py"], cwd=tmp_path, env=env, stdin=subprocess.DEVNULL,
        capture_output=True, text=True, timeout=120, check=False)


def _gone(pid: int) -> bool:
    """Has ``pid`` ended (gone, or a zombie that no init reaps)?  Waits up to 10 s."""
    stat = Path(f"/proc/{pid}/stat")
    for _ in range(100):
        try:
            if stat.read_text().rsplit(")", 1)[1].split()[0] == "Z":
                return True
        except (FileNotFoundError, ProcessLookupError):
            return True
        time.sleep(0.1)
    return False


def test_a_test_that_never_ends_fails_its_worker_and_the_run_goes_on(tmp_path: Path) -> None:
    run = _pytest(tmp_path, "-n", "2")
    out, err = run.stdout, run.stderr
    assert run.returncode == 1, out + err
    assert "2 failed, 2 passed" in out, out + err
    # the failures' lines at once, before the summary
    head = out.split("= FAILURES =")[0]
    assert "FAILED test_module.py::test_fails (gw" in head and "one is not two" in head, out
    assert "FAILED test_module.py::test_hangs (gw" in head and "crashed while running" in head
    assert "SLOW test_module.py::test_slow (gw" in head, out
    # the stack of every thread, the test's among them, and its child killed
    assert ("watchdog: test_module.py::test_hangs still running after 2 s "
            f"({hang_guard.ENV})") in err, err
    assert "most recent call first" in err and "in test_hangs" in err, err
    assert _gone(int((tmp_path / "child.pid").read_text()))


def test_without_xdist_the_watchdog_names_the_test_and_ends_the_run(tmp_path: Path) -> None:
    run = _pytest(tmp_path, "-n", "0", "-k", "hangs or fails")
    assert run.returncode == 1
    assert "FAILED test_module.py::test_fails: AssertionError: one is not two" in run.stdout
    assert "watchdog: test_module.py::test_hangs still running after 2 s" in run.stderr
    assert "in test_hangs" in run.stderr, run.stderr
    assert _gone(int((tmp_path / "child.pid").read_text()))


def test_the_suite_runs_under_the_watchdog(request: pytest.FixtureRequest) -> None:
    assert request.config.pluginmanager.has_plugin("hang_guard")
    assert hang_guard.SECONDS >= 600


def test_hypothesis_examples_have_no_deadline() -> None:
    """The suite's hypothesis profile (tests/conftest.py) sets no per-example deadline: a
    timing assertion that failed correct tests under load."""
    from hypothesis import settings

    assert settings.default.deadline is None
    assert settings().deadline is None
