"""The fixed costs a verify pays in the caller's thread, before and after its walk: what it
imports on first use, and the helpers that spare it (:func:`gctool.numerics.sorted_distinct`,
:func:`gctool.numerics.complement`: ``np.unique`` and ``np.setdiff1d`` import ``numpy.ma``,
6-10 ms, on first use)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gctool.codes import design
from gctool.io import write_code
from gctool.numerics import complement, sorted_distinct


def test_sorted_distinct_and_complement_are_numpys() -> None:
    rng = np.random.default_rng(5)
    cases = [np.zeros(0, dtype=np.int64), np.array([7]), np.array([3, 3, 3]),
             rng.integers(-2**63, 2**63 - 1, size=500, dtype=np.int64),
             rng.integers(0, 40, size=300), np.arange(10)[::-1].astype(np.intp)]
    for a in cases:
        got, want = sorted_distinct(a), np.unique(a)
        assert got.dtype == want.dtype and np.array_equal(got, want)
    for n in (0, 1, 6, 48):
        for k in range(min(n, 7) + 1):
            S = rng.choice(n, size=k, replace=False) if n else np.zeros(0, dtype=np.intp)
            got, want = complement(n, S), np.setdiff1d(np.arange(n), S)
            assert np.array_equal(got, want) and got.dtype == np.intp


@pytest.mark.parametrize("scheme,kw,args", [
    ("cyclic", {"n": 20, "s": 3, "seed": 1}, []),  # rotation symmetry (default method)
    ("cyclic", {"n": 20, "s": 3, "seed": 1}, ["--method", "exhaustive"]),
    ("cyclic", {"n": 24, "s": 4, "seed": 1}, ["--method", "exhaustive"]),  # stage shares
    ("cyclic-mds", {"n": 15, "s": 3, "field": "GF(2^4)"}, ["--method", "exhaustive"]),
    ("cyclic", {"n": 20, "s": 3, "seed": 1}, ["--sample", "300"]),
])
def test_a_numpy_route_verify_does_not_import_numpy_ma(tmp_path: Path, scheme: str,
                                                       kw: dict[str, object],
                                                       args: list[str]) -> None:
    """verify of small codes in a fresh process: its sampled sets, symmetry probe rows and
    GF(q) rank bound and null space take no np.unique or np.setdiff1d, which would import
    numpy.ma (6-10 ms).  (A compiled walk's first call imports it anyway: numba's dispatch
    checks each new array type against numpy.ma.MaskedArray.)"""
    path = tmp_path / "code.json"
    write_code(design(scheme, **kw), path)
    probe = ("import sys\nfrom gctool.cli.main import main\n"
             f"try:\n    main(['verify', sys.argv[1], *{args!r}])\n"
             "except SystemExit:\n    pass\n"
             "print('MA=' + str('numpy.ma' in sys.modules))")
    env = {k: v for k, v in os.environ.items() if k != "GCTOOL_COMPILED"}
    out = subprocess.run([sys.executable, "-c", probe, str(path)], capture_output=True,
                         text=True, env=env, timeout=120, check=False)
    assert "stragglers" in out.stdout, out.stdout + out.stderr
    assert out.stdout.strip().splitlines()[-1] == "MA=False", out.stdout
