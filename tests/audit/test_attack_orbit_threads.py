"""The exhaustive attack's one set per rotation orbit, decided by the optimal oracle's compiled
kernel of given sets (:class:`gctool.audit.kernels.optimal.HatErrors`, without the GIL), runs its
``jobs`` in threads (:func:`gctool.audit.exhaustive._plan`, as verify's orbit tasks), not in a
pool of processes: the report (worst set, error, counts, notes) is the one of one job and of
the process pool, in worst mode and in threshold mode; the jobs the estimate counts are capped
by the orbit tasks the run cuts; a budget that runs out in the middle stops at the same batch
for any jobs.

The tasks are made tiny (chunks of 16 sets, orbit tasks of 2 sets or more) so that small codes
give many tasks and the threads really interleave; ``GCTOOL_COMPILED=1`` forces the compiled
kernels and the orbits are taken whenever a rotation is proved (on codes this small a walk of
every set costs less)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from math import comb
from typing import Any

import pytest

from gctool.audit import exhaustive, nullspace
from gctool.audit.attack import AttackOptions, attack, threshold
from gctool.audit.oracles import OptimalOracle
from gctool.audit.verify import enumeration
from gctool.budget import Budget
from gctool.codes import design
from gctool.engine import parallel, threads
from gctool.errors import BudgetExceeded

from helpers import thread_runs

JOBS = (1, 2, 3)


def _codes() -> list[tuple[str, Any, int]]:
    return [("cyclic-mds real", design("cyclic-mds", n=14, s=4), 4),
            ("cyclic-mds complex", design("cyclic-mds", n=14, s=4, field="complex"), 4),
            ("is-cr", design("is-cr", n=16, s=3), 3)]


@pytest.fixture
def tiny(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[int, int]]]:
    """Compiled kernels, tiny chunks and orbit tasks, one set per orbit wherever a rotation is
    proved; records (jobs, tasks) of every thread run."""
    monkeypatch.setenv("GCTOOL_COMPILED", "1")
    monkeypatch.setattr(nullspace, "COMPILED_CHUNK", 16)
    monkeypatch.setattr(enumeration, "ORBIT_LEAST_THREADS", 8)
    monkeypatch.setattr(exhaustive, "orbits_pay",
                        lambda n, s, rot, *args, **kw: rot is not None)
    exhaustive.orbit_tasks.cache_clear()  # (cut with the real constants by earlier tests)
    yield thread_runs(monkeypatch)
    exhaustive.orbit_tasks.cache_clear()


def _plain(doc: dict[str, Any]) -> dict[str, Any]:
    for key in ("elapsed_s", "jobs", "estimate"):
        doc.pop(key, None)
    return doc


def _worst(code: Any, s: int, jobs: int) -> dict[str, Any]:
    return _plain(attack(code, s, method="exhaustive", jobs=jobs).to_dict())


def _threshold(code: Any, jobs: int) -> dict[str, Any]:
    return _plain(threshold(code, 0.0, method="exhaustive", jobs=jobs).to_dict())


def _processes(monkeypatch: pytest.MonkeyPatch) -> None:
    """The orbit tasks in the process pool again (as before they took threads), from any
    size, started whatever the first task's pace."""
    monkeypatch.setattr(OptimalOracle, "given_kind", lambda self, s, sets: False)
    monkeypatch.setattr(exhaustive, "PARALLEL_MIN_SETS", 0)
    monkeypatch.setattr(parallel, "PARALLEL_MIN_S", 0.0)


def _pools(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """The (jobs, tasks) of every pool of threads started from here on (run_threads' and
    those of sizes started ahead, :class:`gctool.engine.threads.Ahead`)."""
    pools: list[tuple[int, int]] = []
    real = threads._Threads.__init__

    def spy(self: Any, worker: Any, tasks: Any, jobs: int, *args: Any, **kw: Any) -> None:
        pools.append((jobs, len(tasks)))
        real(self, worker, tasks, jobs, *args, **kw)

    monkeypatch.setattr(threads._Threads, "__init__", spy)
    return pools


def _no_processes(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kw: Any) -> Any:
        raise AssertionError("a process pool was started")

    monkeypatch.setattr(parallel, "ProcessPoolExecutor", refuse)


@pytest.mark.parametrize("name,code,s", _codes(), ids=[c[0] for c in _codes()])
def test_worst_case_orbit_tasks_run_in_threads_with_the_report_of_one_job_and_of_processes(
        tiny: list[tuple[int, int]], monkeypatch: pytest.MonkeyPatch, name: str, code: Any,
        s: int) -> None:
    """Every field of the worst-case report is the same for 1, 2 and 3 threads and for two
    processes; the threads share many tasks and no process pool starts."""
    with monkeypatch.context() as m:
        _no_processes(m)
        docs = [_worst(code, s, jobs) for jobs in JOBS]
    assert "one set per orbit" in " ".join(docs[0]["notes"]), name
    assert docs[0]["checked"] < comb(code.n, s)
    assert docs[1] == docs[0] and docs[2] == docs[0]
    assert any(jobs == 2 and tasks > 4 for jobs, tasks in tiny)
    assert any(jobs == 3 for jobs, _ in tiny)
    tiny.clear()
    _processes(monkeypatch)
    assert _worst(code, s, 2) == docs[0]
    assert not tiny  # (the process pool ran them)


@pytest.mark.parametrize("name,code,s", _codes()[:2], ids=[c[0] for c in _codes()[:2]])
def test_threshold_orbit_sizes_run_in_threads_with_the_report_of_one_job_and_of_processes(
        tiny: list[tuple[int, int]], monkeypatch: pytest.MonkeyPatch, name: str, code: Any,
        s: int) -> None:
    """The threshold search (epsilon 0: the first failing set is at size s + 1, in the middle
    of its orbit sets) gives the same size, set, counts and notes for 1, 2 and 3 threads (the
    sets given to the oracle too: the task holding the failing set is decided whole, and the
    threads' tasks are cut alike for every ``jobs``: ORBIT_CUT_JOBS) and in processes (whose
    tasks are other rank ranges: their evaluations are their own)."""
    pools = _pools(monkeypatch)  # (sizes started ahead run in pools of their own)
    with monkeypatch.context() as m:
        _no_processes(m)
        docs = [_threshold(code, jobs) for jobs in JOBS]
    assert docs[0]["threshold"] == s + 1 and docs[0]["exact"], docs[0]
    assert "one set per orbit" in " ".join(docs[0]["notes"]), name
    assert docs[1] == docs[0] and docs[2] == docs[0]
    assert any(jobs == 2 and tasks > 4 for jobs, tasks in pools)
    tiny.clear()
    pools.clear()
    _processes(monkeypatch)
    got = _threshold(code, 2)
    assert not tiny and not pools
    assert got.pop("evaluations") >= got["checked"]
    assert got == {k: v for k, v in docs[0].items() if k != "evaluations"}


def test_the_jobs_are_capped_by_the_orbit_tasks(tiny: list[tuple[int, int]],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """The jobs an orbit run in threads is estimated on are at most its tasks (orbit_tasks):
    chunks of 4,096 sets (64 sets a task at least) leave cyclic-mds n=14 s=4's 73 orbit sets
    one task, so its refusal's estimate is the same for 1 and 3 jobs; chunks of 16 sets
    give it many tasks, and 3 jobs a third of the sets' time."""
    code = design("cyclic-mds", n=14, s=4)
    rot = exhaustive.detected_before(code, 4, Budget.default())[0]
    assert rot is not None
    # sets of a second each: the estimate is theirs (the fixed costs aside)
    monkeypatch.setattr(OptimalOracle, "batch_work", lambda self, s, sets: 1e9 * sets)

    def needed(jobs: int) -> float:
        options = AttackOptions(method="exhaustive", jobs=jobs, budget=Budget(max_work=1e-3))
        with pytest.raises(BudgetExceeded) as info:
            attack(code, 4, options)
        assert info.value.needed is not None
        return info.value.needed

    assert len(exhaustive.orbit_tasks(14, 4, rot, 16)) > 3
    many = needed(1), needed(3)
    nullspace.COMPILED_CHUNK = 4096  # (restored by the fixture's monkeypatch)
    assert len(exhaustive.orbit_tasks(14, 4, rot, 4096)) == 1
    assert exhaustive.orbit_jobs(14, 4, rot, 3) == 1
    one = needed(1), needed(3)
    assert one[1] == pytest.approx(one[0]) and one[0] > 73
    assert many[1] < many[0] / 2 and many[0] == pytest.approx(one[0])


def test_a_budget_that_runs_out_mid_run_stops_at_the_same_batch_for_any_jobs(
        tiny: list[tuple[int, int]], monkeypatch: pytest.MonkeyPatch) -> None:
    """Charged in task order (after each thread's batch is decided: before it, a charge would
    wait for the tasks before it to run), the oracle's meter refuses at the same batch with
    the same count of sets decoded for 1, 2 and 3 threads."""
    code = design("cyclic-mds", n=17, s=4)  # 2,380 sets, 140 orbits: 8 tasks or more
    monkeypatch.setattr(exhaustive, "check_sets", lambda *a, **k: None)  # admitted ...
    monkeypatch.setattr(exhaustive, "may_time", lambda *a, **k: False)
    oracle = OptimalOracle(code)
    spent = oracle.meter.spent  # the set-up's SVD
    per = oracle.batch_work(4, 16)
    words = []
    for jobs in JOBS:  # ... under a budget of the set-up and about 3.5 tasks of 16 sets
        budget = Budget(max_work=(spent + 3.5 * per) / 1e9)
        with pytest.raises(BudgetExceeded) as info:
            attack(code, 4, AttackOptions(method="exhaustive", jobs=jobs, budget=budget))
        words.append(re.search(r"[\d,]+ straggler sets? decoded", str(info.value)))
    assert words[0] is not None, "refused by the meter"
    assert {w.group(0) if w else None for w in words} == {words[0].group(0)}


_LOADS = """
import json
from gctool.audit import exhaustive
from gctool.audit.attack import attack
from gctool.audit.kernels import attack_kind, optimal
from gctool.budget import KIND_LOAD_NS, local_load_ns
from gctool.codes import design
from gctool.compiled import Loaded
exhaustive.orbits_pay = lambda n, s, rot, *args, **kw: rot is not None
report = attack(design("cyclic-mds", n=14, s=4), 4, method="exhaustive", jobs=2)
walk, given = attack_kind(False, False), attack_kind(False, False, given=True)
here = Loaded.now()
print(json.dumps({"orbits": "one set per orbit" in " ".join(report.notes),
                  "walk": bool(optimal.hat_range.overloads),
                  "given": bool(optimal.hat_errors.overloads),
                  "walk kind": here.has(walk), "given kind": here.has(given),
                  "walk charged": local_load_ns(walk) / KIND_LOAD_NS}))
"""


def test_an_orbit_run_loads_the_kernel_of_given_sets_alone() -> None:
    """In a fresh process, the exhaustive attack by rotation orbits loads the optimal
    decoder's kernel of given sets (hat_errors: HatErrors.warm with ``given``), never its walk
    of rank ranges (hat_range), and the kind its estimate named (Oracle.given_kind) is the one
    loaded: a walk after it in the same process is charged reading its kernels
    (KIND_LOAD_NS)."""
    import json
    import os
    import subprocess
    import sys

    env = dict(os.environ, GCTOOL_COMPILED="1")
    out = subprocess.run([sys.executable, "-c", _LOADS], capture_output=True, text=True,
                         env=env, timeout=120, check=True)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got == {"orbits": True, "walk": False, "given": True, "walk kind": False,
                   "given kind": True, "walk charged": 1.0}, got


def test_an_orbit_run_off_the_fast_path_plans_no_brackets(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Off the fast path (a circulant of condition 1e6) the orbit sets go to numpy's decoder,
    so the orbit run builds no compiled brackets (their walk and sets would load for nothing,
    and no kind is charged for them: Oracle.given_kind is False); the worst set and error are
    those of the compiled walk of every set, which builds them."""
    import numpy as np

    from gctool.algebra.fields import parse_field
    from gctool.audit.kernels import direct
    from gctool.model import GradientCode

    monkeypatch.setenv("GCTOOL_COMPILED", "1")
    n = 14
    lam = 10.0 ** (-6 * np.minimum(np.arange(n), n - np.arange(n)) / (n // 2))
    c = np.real(np.fft.ifft(lam))
    B = np.array([np.roll(c, i) for i in range(n)]).T  # circulant: rotation i -> i + 1
    code = GradientCode(B, parse_field("real"), 0)
    assert not OptimalOracle(code).fast
    made: list[int] = []
    real = direct.DirectBrackets.__init__

    def spy(self: Any, *args: Any, **kw: Any) -> None:
        made.append(1)
        real(self, *args, **kw)

    monkeypatch.setattr(direct.DirectBrackets, "__init__", spy)
    with monkeypatch.context() as m:
        m.setattr(exhaustive, "orbits_pay", lambda n, s, rot, *args, **kw: rot is not None)
        orbits = attack(code, 4, method="exhaustive", jobs=2)
    assert "one set per orbit" in " ".join(orbits.notes) and not made
    monkeypatch.setattr(exhaustive, "orbits_pay", lambda *args, **kw: False)
    walk = attack(code, 4, method="exhaustive", jobs=2)
    assert made and walk.checked > orbits.checked
    assert (walk.stragglers, walk.error) == (orbits.stragglers, orbits.error)
