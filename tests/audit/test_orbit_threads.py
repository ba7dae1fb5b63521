"""verify's one set per rotation orbit, decided by the compiled kernels of a walk (the screen of
given sets, its second stage and direct decoder over R/C, the test over GF(q)), runs its
``jobs`` in threads (:func:`gctool.audit.sweep.local_runner` with ``given``), not in a pool of
processes: the report is the one of one job, and of the process pool, for every code; a
counterexample found in the middle is the same set; Ctrl-C stops the run.

The tasks are made tiny (chunks of 16 sets, orbit tasks of 2 or more) so that small codes give
many tasks and the threads really interleave; ``GCTOOL_COMPILED=1`` forces the compiled
kernels."""

from __future__ import annotations

import _thread
import signal
import threading
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from gctool.audit import nullspace as ns
from gctool.audit import sweep
from gctool.audit.verify import enumeration, verify
from gctool.codes import design
from gctool.engine import parallel, threads
from gctool.errors import SearchInterrupted

from helpers import thread_runs

JOBS = (1, 2, 3)


def _codes() -> list[tuple[str, Any, int]]:
    return [("cyclic-mds real", design("cyclic-mds", n=14, s=4), 4),
            ("cyclic-mds complex", design("cyclic-mds", n=14, s=4, field="complex"), 4),
            ("is-cr", design("is-cr", n=16, s=3), 3),
            ("cyclic-mds GF(2^4)", design("cyclic-mds", n=15, s=4, field="GF(2^4)"), 4)]


@pytest.fixture
def tiny(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """Compiled kernels, tiny chunks, threads whatever the run's size, no structural
    certificate before the orbits; records (jobs, tasks) of every thread run."""
    from gctool.audit import certificates

    monkeypatch.setenv("GCTOOL_COMPILED", "1")
    monkeypatch.setattr(ns, "COMPILED_CHUNK", 16)
    monkeypatch.setattr(ns, "COMPILED_PILOT", 5)
    monkeypatch.setattr(enumeration, "THREADS_MIN_S", 0.0)
    monkeypatch.setattr(enumeration, "ORBIT_LEAST_THREADS", 8)
    monkeypatch.setattr(enumeration, "ORBIT_PILOT", 5)
    monkeypatch.setattr(certificates, "bch_certificate", lambda *a, **k: None)
    runs = thread_runs(monkeypatch)
    return runs


def _doc(code: Any, s: int, jobs: int) -> dict[str, Any]:
    doc = verify(code, s, jobs=jobs).to_dict()
    for key in ("elapsed_s", "jobs", "estimate"):
        doc.pop(key, None)
    return doc


def _no_processes(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kw: Any) -> Any:
        raise AssertionError("a process pool was started")

    monkeypatch.setattr(parallel, "ProcessPoolExecutor", refuse)


def _processes(monkeypatch: pytest.MonkeyPatch) -> None:
    """The orbit tasks in the process pool again (as before they took threads)."""
    real = sweep.local_runner
    monkeypatch.setattr(enumeration, "local_runner",
                        lambda kernel, source, given=False: real(kernel, source))


@pytest.mark.parametrize("name,code,s", _codes(), ids=[c[0] for c in _codes()])
def test_orbit_tasks_run_in_threads_with_the_report_of_one_job_and_of_processes(
        tiny: list[tuple[int, int]], monkeypatch: pytest.MonkeyPatch, name: str, code: Any,
        s: int) -> None:
    """Every field of the report (verdict, counts, reduction, diagnostics and their sets) is
    the same for 1, 2 and 3 threads and for two processes; the threads share many tasks and
    no process pool starts."""
    with monkeypatch.context() as m:
        _no_processes(m)
        docs = [_doc(code, s, jobs) for jobs in JOBS]
    assert docs[0]["reduction"]["kind"] == "rotation", name  # one set per orbit
    assert docs[1] == docs[0] and docs[2] == docs[0]
    assert any(jobs == 2 and tasks > 4 for jobs, tasks in tiny)
    tiny.clear()
    _processes(monkeypatch)
    assert _doc(code, s, 2) == docs[0]
    assert not tiny  # (the process pool ran them)


@pytest.mark.filterwarnings("ignore:All-NaN slice")  # (the failure has no error of its own)
@pytest.mark.parametrize("name,code,s", _codes()[:3], ids=[c[0] for c in _codes()[:3]])
def test_a_failing_orbit_set_in_the_middle_is_the_same_for_any_jobs(
        tiny: list[tuple[int, int]], monkeypatch: pytest.MonkeyPatch, name: str, code: Any,
        s: int) -> None:
    """A set that fails in the middle of the orbits' sets (the kernel's verdict on it turned
    to a failure, for the engine's sake) ends the run at the same set, with the same report,
    for any number of threads and in processes; tasks after it are cut."""
    from gctool.audit.symmetry import orbit_sample

    plain = _doc(code, s, 1)
    sets = orbit_sample(code.n, s, _rotation(code, s), 64)
    target = sorted(map(tuple, sets.tolist()))[len(sets) // 2]  # a representative mid-run
    real = ns.FloatNullKernel.evaluate

    def failing(self: Any, S: np.ndarray) -> Any:
        out = real(self, S)
        out.ok[np.all(S == np.array(target), axis=1)] = False
        return out

    monkeypatch.setattr(ns.FloatNullKernel, "evaluate", failing)
    with monkeypatch.context() as m:
        _no_processes(m)
        docs = [_doc(code, s, jobs) for jobs in JOBS]
    assert docs[0]["counterexample"] == list(target) and not docs[0]["ok"]
    assert 0 < docs[0]["checked"] < plain["checked"]
    assert docs[1] == docs[0] and docs[2] == docs[0]
    _processes(monkeypatch)
    assert _doc(code, s, 2) == docs[0]


def _rotation(code: Any, s: int) -> Any:
    from gctool.audit.symmetry import Rotation

    red = verify(code, s, jobs=1).to_dict()["reduction"]
    return Rotation(code.n, red["t"], red["column_shift"], red["unimodular"])


@pytest.fixture
def ctrl_c() -> Iterator[None]:
    """Python's own SIGINT handler (an earlier test may have left gctool's)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def test_an_interrupt_stops_the_orbit_threads(tiny: list[tuple[int, int]], ctrl_c: None,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C while the threads decide orbit sets: verify's 'interrupted after checking ...'
    summary, and the threads are idle again."""
    slow_run = sweep.SweepWorker.run
    timer, once = threading.Timer(0.1, _thread.interrupt_main), threading.Lock()

    def run(self: sweep.SweepWorker, task: Any) -> Any:
        if threading.current_thread() is not threading.main_thread() and once.acquire(False):
            timer.start()  # by the first pool task
        time.sleep(0.02)
        return slow_run(self, task)

    monkeypatch.setattr(sweep.SweepWorker, "run", run)
    _no_processes(monkeypatch)
    code = design("cyclic-mds", n=24, s=5, field="complex")  # 1,771 orbits: 100 tasks or more
    try:
        with pytest.raises(SearchInterrupted, match="interrupted after checking"):
            verify(code, 5, jobs=2)
    finally:
        timer.cancel()
    assert tiny and tiny[0][0] == 2
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        busy = {t.ident for t in threading.enumerate() if t.name.startswith("gctool-job")}
        if not busy - set(threads.Carrier._idle_idents()):
            break
        time.sleep(0.01)
    else:
        pytest.fail("the pool's threads are still busy")


def test_orbit_tasks_take_processes_without_compiled_kernels(monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    """Without the compiled kernels (numpy decides the sets, holding the GIL) the orbit tasks
    keep the process pool: no thread runner is given."""
    monkeypatch.setenv("GCTOOL_COMPILED", "0")
    code = design("cyclic-mds", n=14, s=4)
    kernel = ns.FloatNullKernel(code, 1e-9, ns.reduce_float(code, 1e-9))
    kernel.chunk_size(4)
    source = sweep.OrbitSource(14, 4, _rotation(code, 4))
    assert sweep.local_runner(kernel, source, given=True) is None
    monkeypatch.setenv("GCTOOL_COMPILED", "1")
    kernel = ns.FloatNullKernel(code, 1e-9, ns.reduce_float(code, 1e-9))
    kernel.chunk_size(4)
    assert sweep.local_runner(kernel, source, given=True) is threads.run_threads
    assert sweep.local_runner(kernel, source) is None  # (the attack's oracles: processes)


def test_the_pilot_decides_each_head_again_that_loads_kernels(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """One set per orbit loads a kernel in the pilot's first set (the screen of given sets)
    and another in its next head (the direct decoder, is-cr): each head that would stop the
    pilot's growth is decided once more, so the estimate is the sets' own time, not the
    loadings' (is-cr n=48 s=5 read 10-27 s for a run of 0.13 s of CPU); a head slow twice
    stops it."""
    from types import SimpleNamespace

    now = [0.0]
    monkeypatch.setattr(enumeration.time, "thread_time", lambda: now[0])
    monkeypatch.setattr(enumeration.time, "perf_counter", lambda: now[0])
    ran: list[int] = []

    class Worker:
        def __init__(self, per_set: float, loads: dict[int, float]) -> None:
            self.per_set, self.loads = per_set, loads  # seconds, in the n-th call

        def run(self, task: tuple[int, int, int]) -> SimpleNamespace:
            ran.append(task[2])
            now[0] += self.per_set * task[2] + self.loads.get(len(ran), 0.0)
            return SimpleNamespace(evaluated=task[2], fail_set=None)

    got, _, per_set = enumeration._pilot(Worker(1e-6, {1: 0.05, 3: 0.05}), 16384)  # type: ignore[arg-type]
    assert ran == [1, 1, 64, 64, 16384] and got == 16384
    assert per_set == pytest.approx(1e-6)
    ran.clear()  # slow sets, not a loading: the head that says so twice ends the pilot
    got, _, per_set = enumeration._pilot(Worker(1e-3, {1: 0.05}), 16384)  # type: ignore[arg-type]
    assert ran == [1, 1, 64, 64] and got == 64 and per_set == pytest.approx(1e-3)


_LOADS = """
import json, sys
from gctool.audit import certificates
from gctool.audit.verify import verify
from gctool.budget import KIND_LOAD_NS, local_load_ns
from gctool.codes import design
from gctool.compiled import Loaded
from gctool.audit.kernels import COMPLEX, COMPLEX_GIVEN, GF, GF_GIVEN, REAL, REAL_GIVEN
certificates.bch_certificate = lambda *a, **k: None  # (GF(q) cyclic-MDS enumerates)
name, n, s, field = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
seed = {} if field.startswith("GF") else {"seed": 1}
doc = verify(design(name, n=n, s=s, field=field, **seed), s).to_dict()
from gctool.audit.kernels import gf, real
here = Loaded.now()
walk = {"real": REAL, "complex": COMPLEX}.get(field, GF)
given = {"real": REAL_GIVEN, "complex": COMPLEX_GIVEN}.get(field, GF_GIVEN)
mod = gf if field.startswith("GF") else real
print(json.dumps({"kind": doc.get("reduction") and doc["reduction"]["kind"],
                  "walk": bool((gf.gf_range if mod is gf else real.screen_range).overloads),
                  "given": bool((gf.gf_sets if mod is gf else real.screen_sets).overloads),
                  "settle": mod is gf or bool(real.settle_sets.overloads),
                  "walk kind": here.has(walk), "given kind": here.has(given),
                  "other": here.has(COMPLEX if field == "real" else REAL),
                  "walk charged": local_load_ns(walk) / KIND_LOAD_NS}))
"""


@pytest.mark.parametrize("name,n,s,field,orbit", [
    ("is-cr", 16, 3, "real", True), ("cyclic-mds", 14, 4, "complex", True),
    ("cyclic-mds", 15, 4, "GF(2^4)", True), ("cyclic", 14, 4, "real", False)])
def test_a_run_loads_the_entry_points_it_calls(name: str, n: int, s: int, field: str,
                                               orbit: bool) -> None:
    """In a fresh process, a run of one set per rotation orbit loads the kernels of given sets
    (over R/C the screen and its second stage, FloatNullKernel.plan with ``given``; over GF(q)
    the test of given sets, GFTest.warm with ``given``), never the walk of rank ranges; a run
    over the ranks loads the walk and no screen of given sets.  Either way the kind of the
    kernels loaded (:class:`gctool.compiled.Loaded`, what ``gctool.budget.local_load_ns``
    charges) is the one the run's estimate named: a walk after the orbit run in the same
    process is charged reading its kernels (KIND_LOAD_NS, where one kind per module charged
    it nothing), after a walk nothing."""
    import json
    import os
    import subprocess
    import sys

    env = dict(os.environ, GCTOOL_COMPILED="1")
    out = subprocess.run([sys.executable, "-c", _LOADS, name, str(n), str(s), field],
                         capture_output=True, text=True, env=env, timeout=120, check=True)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["kind"] == ("rotation" if orbit else None), got
    assert got["walk"] is not orbit and got["given"] is orbit and got["settle"], got
    assert got["walk kind"] is not orbit and got["given kind"] is orbit, got
    assert not got["other"], got
    assert got["walk charged"] == (1.0 if orbit else 0.0), got
