"""verify's compiled walks (the real screen, the GF(q) test) end when their run stops
(gctool.engine.threads.halt_flag), and in ``jobs`` threads a task whose result holds a
counterexample stops the tasks after it at once (TaskOrder.cut), before the fold reaches it;
the tasks before it still run, so the counterexample is the one of one job.  Sets are
counted, not timed."""

from __future__ import annotations

import bisect
import threading
import time
from dataclasses import replace
from math import comb
from typing import Any

import numpy as np
import pytest

from gctool.audit import nullspace as ns
from gctool.audit.kernels import gf as gf_kernels
from gctool.audit.kernels import numba_available
from gctool.audit.kernels import real as real_kernels
from gctool.audit.verify import enumeration, verify
from gctool.codes import design
from gctool.engine.enumeration import rank_lex
from gctool.engine.threads import Cancelled, TaskOrder, set_task
from gctool.limits import DEFAULT_TOL

pytestmark = pytest.mark.skipif(not numba_available(), reason="the compiled walks need numba")

N, S = 40, 5


def late_frc(at: int, field: str | None = None) -> Any:
    """FRC(40, 4) with its workers renumbered so that worker 0's group (the five workers whose
    rows are equal) is {0, at, ..., at + 3}: the first set of size 5 that fails is that group,
    of rank C(39, 4) - C(40 - at, 4) (later the larger ``at``), and no set before it fails."""
    code = design("frc", N, S - 1, field=field)
    rest = list(range(S, N))
    order = [0] + rest[:at - 1] + list(range(1, S)) + rest[at - 1:]
    return replace(code, B=np.asarray(code.B)[order])


def _kernel(code: Any) -> Any:
    """The run's null-space kernel of ``code``, its compiled walk planned for size S."""
    if code.field.is_finite:
        kernel: Any = ns.GFNullKernel(code, ns.reduce_gf(code))
    else:
        kernel = ns.FloatNullKernel(code, DEFAULT_TOL, ns.reduce_float(code, DEFAULT_TOL))
    kernel.chunk_size(S)
    assert kernel.walks_compiled(S)
    return kernel


def _in_pool() -> bool:
    """Does this walk run a task of a pool (the caller's thread is one of its threads)?"""
    from gctool.engine.threads import in_pool_task

    return in_pool_task()


@pytest.fixture
def walked(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int, bool, bool]]:
    """Compiled walks forced; every walk of verify's kernels recorded as (rank of its first
    set, sets walked, whether its stop flag was set when it returned, whether it ran in a
    pool thread)."""
    monkeypatch.setenv("GCTOOL_COMPILED", "1")
    out: list[tuple[int, int, bool, bool]] = []
    gf_range, screen_range = gf_kernels.gf_range, real_kernels.screen_range

    def gf_spy(S_: np.ndarray, n: int, count: int, *args: Any) -> int:
        first = int(rank_lex(n, S_[None])[0])
        fail = int(gf_range(S_, n, count, *args))
        after = int(rank_lex(n, S_[None])[0])  # the set it stopped at (the next one)
        stopped = bool(args[-1][0])
        out.append((first, fail + 1 if fail >= 0 else after - first, stopped, _in_pool()))
        return fail

    def screen_spy(S_: np.ndarray, n: int, count: int, *args: Any) -> Any:
        first = int(rank_lex(n, S_[None])[0])
        got = screen_range(S_, n, count, *args)
        out.append((first, int(got[0]), bool(args[-1][0]), _in_pool()))
        return got

    monkeypatch.setattr(gf_kernels, "gf_range", gf_spy)
    monkeypatch.setattr(real_kernels, "screen_range", screen_spy)
    return out


@pytest.mark.parametrize("field", [None, "GF(2^8)"])
def test_a_verify_walk_in_a_stopped_run_walks_nothing(
        walked: list[tuple[int, int, bool, bool]], field: str | None) -> None:
    """The task of a run that has stopped raises Cancelled at the walk's first check of its
    flag (no set walked); outside a pool the same walk is whole."""
    kernel = _kernel(late_frc(30, field))
    total = comb(N, S)
    walked.clear()
    order = TaskOrder()
    order.stop()
    set_task(order, 0)
    try:
        with pytest.raises(Cancelled):
            kernel.summarise_range((0, 0, total), N, S, False)
    finally:
        set_task(None)
    assert walked == [(0, 0, True, True)]  # (a task of the pool, run here)
    walked.clear()
    kernel.summarise_range((0, 200_000, 210_000), N, S, False)  # no failing set there
    assert sum(w[1] for w in walked) == 10_000 and not any(w[2] for w in walked)


@pytest.mark.parametrize("field", [None, "GF(2^8)"])
def test_the_tasks_after_a_counterexample_stop_before_the_fold_reaches_it(
        walked: list[tuple[int, int, bool, bool]], monkeypatch: pytest.MonkeyPatch,
        field: str | None) -> None:
    """verify --jobs 3 of a code whose first failing set has rank about 82,000 of 658,008,
    in tasks of about 2,000 sets: the walk of the task before the counterexample's waits
    until a task after it has seen its flag set, the counterexample's task waits until that
    later task has started, and the later one waits for its flag.  Only the cut sets it (the
    counterexample's task reports, the fold still waits for the task before): without it,
    each would wait its 20 s out.  The later task then walks nothing, the report
    (counterexample, sets checked) is the one of one job, and the sets walked stay far below
    the 658,008 of the run."""
    monkeypatch.setattr(ns, "COMPILED_CHUNK", 1024)
    monkeypatch.setattr(ns, "COMPILED_PILOT", 128)
    code = late_frc(30, field)
    one = verify(code, S, method="exhaustive", jobs=1)
    assert one.counterexample == [0, 30, 31, 32, 33]
    fail_rank = int(rank_lex(N, np.array([one.counterexample]))[0])
    starts: list[int] = []
    run_folded = enumeration.run_folded

    def tasks_of(worker: Any, tasks: Any, fold: Any, **kw: Any) -> None:
        starts.extend(a for _, a, _ in tasks)
        run_folded(worker, tasks, fold, **kw)

    monkeypatch.setattr(enumeration, "run_folded", tasks_of)
    gf_range, screen_range = gf_kernels.gf_range, real_kernels.screen_range
    later_started, later_stopped = threading.Event(), threading.Event()
    waited: list[bool] = []

    def held(real: Any) -> Any:
        def walk(S_: np.ndarray, n: int, count: int, *args: Any) -> Any:
            if not _in_pool():
                return real(S_, n, count, *args)  # (the caller's walks: pilot, probe)
            task = bisect.bisect_right(starts, int(rank_lex(n, S_[None])[0])) - 1
            failing = bisect.bisect_right(starts, fail_rank) - 1
            if task > failing:
                later_started.set()
                deadline = time.monotonic() + 20
                while not args[-1][0] and time.monotonic() < deadline:
                    time.sleep(0.001)
                waited.append(bool(args[-1][0]))
                later_stopped.set()
            elif task == failing:
                later_started.wait(20)
            elif task == failing - 1:
                later_stopped.wait(20)
            return real(S_, n, count, *args)
        return walk

    monkeypatch.setattr(gf_kernels, "gf_range", held(gf_range))
    monkeypatch.setattr(real_kernels, "screen_range", held(screen_range))
    walked.clear()
    three = verify(code, S, method="exhaustive", jobs=3)
    assert three.jobs == 3 and waited and all(waited)
    assert (three.counterexample, three.checked, three.verdict) == (
        one.counterexample, one.checked, one.verdict)
    after = starts[bisect.bisect_right(starts, fail_rank)]  # the first task after it
    later = [w for first, w, _, pool in walked if pool and first >= after]
    assert later and max(later) == 0
    assert sum(w[1] for w in walked) < comb(N, S) // 2


def test_a_task_that_raises_stops_the_tasks_after_it() -> None:
    """In three threads: task 1 raises (a refusal over the budget, say) while task 0 still
    runs; task 2, already walking, sees its stop flag set (it waits for it up to 20 s, then
    records whether it came) and task 0 finishes after that; the run raises task 1's error."""
    from gctool.engine.threads import halt_flag, raise_if_halted, run_threads

    later_started, later_done = threading.Event(), threading.Event()
    seen: list[bool] = []

    class Worker:
        def run(self, task: tuple[int, int, int]) -> int:
            if task[0] == 0:
                later_done.wait(40)  # (longer than task 2 waits for its flag)
            elif task[0] == 1:
                later_started.wait(20)
                raise ValueError("task 1")
            else:
                later_started.set()
                flag, deadline = halt_flag(), time.monotonic() + 20
                while not flag[0] and time.monotonic() < deadline:
                    time.sleep(0.001)
                seen.append(bool(flag[0]))
                later_done.set()
                raise_if_halted(flag)
            return task[0]

    folded: list[int] = []
    with pytest.raises(ValueError, match="task 1"):
        run_threads(Worker(), [(i, i, i + 1) for i in range(3)], 3,
                    lambda i, r: folded.append(i) or False)
    assert seen == [True] and folded == [0]
