"""benchmarks/bench_train.py at tiny sizes: it runs and reports both parts (its real figures need
a quiet machine; its README section is written by benchmarks/readme.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "bench_train.py"


def test_the_benchmark_runs_at_small_sizes() -> None:
    run = subprocess.run([sys.executable, str(SCRIPT), "--small"], capture_output=True,
                         text=True, timeout=300, check=False)
    assert run.returncode == 0, run.stderr[-2000:]
    out = run.stdout
    for line in ("gctool train (resident tasks)", "Dask tasks, first n - s by as_completed",
                 "cyclic n=4 s=1", "uncoded", "ignore-stragglers s=1", "largest difference"):
        assert line in out, line
    assert "x faster than the Dask tasks" in out
