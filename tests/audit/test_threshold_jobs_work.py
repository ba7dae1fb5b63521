"""--jobs never makes a threshold search do much more work than one job: the sets it evaluates
(compiled walks, the numpy route, the probes that time its sizes, the sizes started ahead in
threads) are counted, not timed.  The code is :func:`corpus.late_fail` with threshold 1: its
only failing set of size 1 is the last, [199], and every set holding 199 fails, so that sizes
2 and 3 (1.3 M sets, the compiled walk) hold failing sets all through their ranks."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pytest

from gctool.audit.attack import threshold
from gctool.audit.kernels import numba_available
from gctool.audit.kernels import optimal as kernels
from gctool.audit.oracles.optimal import OptimalOracle

from corpus import late_fail
from helpers import same_report as same

pytestmark = pytest.mark.skipif(not numba_available(), reason="the compiled walk needs numba")


def test_a_threshold_of_one_at_two_jobs_evaluates_what_one_job_does(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Before the look-ahead waited for a size worth it (sweep.AHEAD_MIN_S), and before the
    walk stopped at its first pending set, two jobs walked about 200,000 sets of sizes 2
    and 3 (their probes, then tasks of 65,536 sets started ahead) where one job evaluates
    232 (size 1, and the first 32 sets of size 2: :data:`gctool.audit.exhaustive.HEAD`)."""
    monkeypatch.setenv("GCTOOL_COMPILED", "auto")
    counted: list[int] = []
    lock = threading.Lock()
    real_walk, real_errors = kernels.hat_range, OptimalOracle.errors

    def walk(*args: Any) -> int:
        walked = int(real_walk(*args))
        with lock:
            counted.append(walked)
        return walked

    def errors(self: OptimalOracle, S: np.ndarray) -> np.ndarray:
        with lock:
            counted.append(int(S.shape[0]))
        return real_errors(self, S)

    monkeypatch.setattr(kernels, "hat_range", walk)
    monkeypatch.setattr(OptimalOracle, "errors", errors)
    code = late_fail(200, 1, 20, 200)
    work = []
    reports = []
    for jobs in (1, 2):
        counted.clear()
        reports.append(threshold(code, 0.0, method="exhaustive", jobs=jobs))
        work.append(sum(counted))
    one, two = reports
    assert one.threshold == 1 and one.stragglers == [199] and one.exact
    assert same(one) == same(two)
    assert 0 < work[0] <= 1_000
    assert work[1] <= 2 * work[0]
