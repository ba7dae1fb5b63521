"""mypy (tests/meta/test_meta.py::test_types_mypy) is the longest single check of the suite
(a minute or more with a cold cache, as on a clean checkout) and runs in a process of its own:
when that test is selected, mypy starts once the session's warm-up of numba's cache has ended
(tests/conftest.py: on two cores, mypy beside it would slow the warm-up the other tests wait
for), or as soon as collection ends when there is none, and runs beside the other tests (the
suite itself runs on one core); the test waits for its result.  A run that ends before the
test (-x, Ctrl-C) stops mypy."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path
from typing import IO

import pytest

ROOT = Path(__file__).parents[2]
MYPY_TEST = "test_meta.py::test_types_mypy"


class Mypy:
    """``python -m mypy gctool`` started in the background; its output goes to a temporary
    file (a pipe nobody reads could fill up and stall it)."""

    def __init__(self) -> None:
        self.out: IO[str] = tempfile.TemporaryFile("w+")
        self.proc = subprocess.Popen([sys.executable, "-m", "mypy", "gctool"], cwd=ROOT,
                                     stdout=self.out, stderr=subprocess.STDOUT, text=True)

    def result(self, timeout: float) -> tuple[int, str]:
        """mypy's exit code and output (waits at most ``timeout`` seconds)."""
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.stop()
            raise AssertionError(f"mypy did not end within {timeout} s") from None
        self.out.seek(0)
        return rc, self.out.read()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        self.out.close()


_mypy: list[Mypy] = []


def _start() -> None:
    if not _mypy:
        _mypy.append(Mypy())


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if _mypy or not any(item.nodeid.endswith(MYPY_TEST) for item in items):
        return
    root = config.pluginmanager.get_plugin(str(ROOT / "tests" / "conftest.py"))
    if root is None:
        _start()
    else:
        root.after_the_warm_up(_start)


def pytest_sessionfinish() -> None:
    while _mypy:
        _mypy.pop().stop()


@pytest.fixture
def mypy_result() -> tuple[int, str]:
    """mypy's exit code and output, from the run started after collection (or one started now,
    when the test is run alone in a way collection did not see)."""
    _start()
    return _mypy[0].result(timeout=900)
