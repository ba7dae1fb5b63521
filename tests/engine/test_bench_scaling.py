"""benchmarks/bench_scaling.py at small sizes (``--quick``): every case runs with every
``--jobs`` and on an in-process Dask cluster, each report equal to the one of ``--jobs 1``
(the script asserts it), and the table is printed; its real figures need a quiet machine.  The
script runs in a child process that the test waits for (the ``beside`` marker and fixture,
tests/conftest.py); marked tests are collected first, so under pytest-xdist the script's run
overlaps the tests of the other worker process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "bench_scaling.py"


@pytest.mark.beside(str(SCRIPT), "--quick", timeout=300)  # collected first
def test_the_scaling_benchmark_runs_quick(beside: subprocess.CompletedProcess[str]) -> None:
    run = beside
    assert run.returncode == 0, run.stderr[-2000:]
    out = run.stdout
    cores = os.cpu_count() or 1
    assert f"{cores} cores" in out
    for case in ("verify real cyclic n=24 s=4", "verify GF(2^5) cyclic-mds n=31 s=4",
                 "verify complex cyclic n=24 s=4", "attack -s 4 real cyclic n=24",
                 "attack --threshold real cyclic n=24",
                 "attack -s 5 encoded Steiner ETF pg-2 n=28 k=7",
                 "attack -s 3 ill-conditioned random n=20"):
        assert f"| {case}" in out, case
    table, _, projected = out.partition("projected to 16 cores (a bound, not a measurement)")
    rows = [line for line in table.splitlines() if line.startswith("|") and "x |" in line]
    jobs = [2**i for i in range(cores.bit_length()) if 2**i < cores] + [cores]
    assert len(rows) == 7 * (len(jobs) + 1)  # every --jobs and Dask, for each case
    for j in jobs:
        assert sum(f"| --jobs {j} |" in line for line in rows) == 7
    assert sum("| dask" in line for line in rows) == 7
    assert "per-set CPU" in out and "target <= 2x" in out
    # below 16 cores, each case's --jobs 16 run (equal to --jobs 1: the script asserts it)
    # gives its caller's share and the Amdahl bound it implies
    bounds = [line for line in projected.splitlines() if line.startswith("|") and "x |" in line]
    assert len(bounds) == (7 if cores < 16 else 0), projected


def test_the_case_filter_refuses_what_it_cannot_run() -> None:
    """``--case TEXT`` runs the matching cases only: a TEXT no label contains is a usage error,
    and a partial table is never written into the README."""
    for extra, message in ((["--case", "no such case"], "no case label contains"),
                           (["--case", "threshold", "--write-readme"], "not with --write-readme")):
        run = subprocess.run([sys.executable, str(SCRIPT), "--quick", "--no-dask", *extra],
                             capture_output=True, text=True, timeout=120, check=False, cwd=ROOT)
        assert run.returncode != 0 and message in run.stderr, run.stderr[-2000:]
        assert "| case |" not in run.stdout
