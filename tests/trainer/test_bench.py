"""benchmarks/bench_train.py at tiny sizes: it runs and reports both parts (its real figures need
a quiet machine; its README section is written by benchmarks/readme.py).  The script runs in a
child process that the test waits for (the ``beside`` marker and fixture, tests/conftest.py);
marked tests are collected first, so under pytest-xdist the script's run overlaps the tests of
the other worker process."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "bench_train.py"


@pytest.mark.beside(str(SCRIPT), "--small", timeout=300)  # collected first
def test_the_benchmark_runs_at_small_sizes(beside: subprocess.CompletedProcess[str]) -> None:
    run = beside
    assert run.returncode == 0, run.stderr[-2000:]
    out = run.stdout
    for line in ("gctool train (resident tasks)", "Dask tasks, first n - s by as_completed",
                 "cyclic n=4 s=1", "uncoded", "ignore-stragglers s=1", "largest difference"):
        assert line in out, line
    assert "x faster than the Dask tasks" in out
