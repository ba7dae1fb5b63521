"""mypy (tests/meta/test_meta.py::test_types_mypy) is the longest single check of the suite (a
minute or more with a cold cache, as on a clean checkout): it runs in a process of its own,
whose result the test reads; the workers run that test first (tests/conftest.py: ``FIRST``),
so that mypy runs beside the other tests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]


@pytest.fixture
def mypy_result() -> tuple[int, str]:
    """``python -m mypy gctool``'s exit code and output."""
    run = subprocess.run([sys.executable, "-m", "mypy", "gctool"], cwd=ROOT,
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, timeout=900, check=False)
    return run.returncode, run.stdout
