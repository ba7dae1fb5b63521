"""verify / attack on a Dask cluster give the results of the local engines.

Chunk sizes are patched down (to 8 sets) so that small codes make many rank-range tasks; the
chunk size is read on the client only, so the patch holds whatever the cluster."""

from __future__ import annotations

import importlib
import json
import os
import pathlib
import pickle
import signal
import sys
import time
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import cloudpickle
import dask
import numpy as np
import pytest
from click.testing import CliRunner
from distributed import Client, LocalCluster

import gctool
from gctool.algebra.fields import parse_field
from gctool.audit.attack import attack, threshold
from gctool.audit.distributed import DaskRunner, local_cluster_options
from gctool.audit.verify import verify
from gctool.budget import Budget
from gctool.cli.main import cli
from gctool.errors import SearchInterrupted
from gctool.io import write_code
from gctool.model import GradientCode

import helpers
from corpus import adversarial_corpus, code_of, exact_ok, exact_threshold
from helpers import same_report as same
from helpers import tied_code
from jsondoc import loads

cloudpickle.register_pickle_by_value(sys.modules[__name__])  # SlowWorker for process workers

CHUNK = 8


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    helpers.small_chunks(monkeypatch, CHUNK, processes=True)  # really use 2 local processes


@pytest.fixture(scope="module")
def cluster() -> Any:
    with LocalCluster(**local_cluster_options(2, processes=False), protocol="tcp://") as c:
        yield c


def ok_code() -> GradientCode:
    """Generic real code: any 10 of 14 rows span R^6 (verify ok at s = 4)."""
    B = np.random.default_rng(1).standard_normal((14, 6))
    return GradientCode(B, parse_field("real"), 4)


def fail_code() -> GradientCode:
    """Partition 0 is held by workers 5, 7, 9 only: the sets containing them fail (s = 4);
    the first one in lexicographic order is [0, 5, 7, 9]."""
    B = np.random.default_rng(2).standard_normal((14, 6))
    B[:, 0] = 0.0
    B[[5, 7, 9], 0] = 1.0
    return GradientCode(B, parse_field("real"), 4)


def run_dask(cluster: Any, fn: Any, *args: Any, **kw: Any) -> tuple[Any, DaskRunner]:
    runner = DaskRunner(scheduler=cluster.scheduler_address, key="t")
    return fn(*args, runner=runner, **kw), runner


@pytest.mark.parametrize("make", [ok_code, fail_code])
def test_verify_identical_across_executors(cluster: Any, make: Any) -> None:
    code = make()
    one = verify(code, method="exhaustive", jobs=1)
    two = verify(code, method="exhaustive", jobs=2)
    dsk, runner = run_dask(cluster, verify, code, method="exhaustive", jobs=2)
    batched = DaskRunner(scheduler=cluster.scheduler_address, key="b", batch=3)
    bat = verify(code, method="exhaustive", runner=batched)  # three engine tasks per Dask task
    guided = DaskRunner(scheduler=cluster.scheduler_address, key="g", batch=1, guided=True)
    gui = verify(code, method="exhaustive", runner=guided)  # large Dask tasks, then small
    assert same(one) == same(two) == same(dsk) == same(bat) == same(gui)
    assert runner.stats["tasks"] > 10
    assert batched.stats["dask_tasks"] < batched.stats["submitted"]
    if make is ok_code:
        assert guided.stats["dask_tasks"] < batched.stats["dask_tasks"]
    if make is fail_code:
        assert dsk.ok is False and dsk.counterexample == [0, 5, 7, 9]
    else:
        assert dsk.ok is True and dsk.checked == 1001
        assert dsk.diagnostics.max_residual_stragglers is not None


def test_verify_early_stop_cancels(cluster: Any) -> None:
    rep, runner = run_dask(cluster, verify, fail_code(), method="exhaustive")
    assert rep.counterexample == [0, 5, 7, 9]
    assert rep.checked < 1001
    # the counterexample is in task ~18 of 125: the later tasks are never submitted
    assert runner.stats["submitted"] < runner.stats["tasks"] // 2


@pytest.mark.parametrize("symmetry", [True, False])
def test_attack_identical_across_executors(cluster: Any, symmetry: bool) -> None:
    code = tied_code()
    kw: dict[str, Any] = dict(method="exhaustive", symmetry=symmetry)
    one = attack(code, 4, jobs=1, **kw)
    two = attack(code, 4, jobs=2, **kw)
    dsk, runner = run_dask(cluster, attack, code, 4, jobs=1, **kw)
    assert same(one) == same(two) == same(dsk)
    assert runner.stats["tasks"] >= 2
    assert dsk.stragglers is not None and dsk.error is not None and dsk.error > 0


@pytest.mark.parametrize("epsilon", [0.0, 0.5])
def test_attack_threshold_identical(cluster: Any, epsilon: float) -> None:
    code = fail_code()  # threshold 3 at epsilon 0: {5, 7, 9} loses partition 0
    kw: dict[str, Any] = dict(method="exhaustive", budget=Budget(max_sets=10_000))
    one = threshold(code, epsilon, jobs=1, **kw)
    dsk, runner = run_dask(cluster, threshold, code, epsilon, jobs=1, **kw)
    assert same(one) == same(dsk)
    assert dsk.threshold == one.threshold and dsk.stragglers == one.stragglers
    if epsilon == 0.0:
        assert dsk.threshold == 3 and dsk.stragglers == [5, 7, 9]


@pytest.mark.parametrize("carried", [True, False])
def test_a_session_connects_once_and_sends_the_code_once(
        cluster: Any, monkeypatch: pytest.MonkeyPatch, carried: bool) -> None:
    """``with runner:`` (what the CLI does): a threshold search (one enumeration per size)
    opens one client, and its kernel is unpickled once per worker process (one kernel in the
    workers' cache, for the threads of this in-process cluster), carried by the tasks or,
    when too large to carry, scattered once; the report is the local one."""
    import collections

    import gctool.audit.distributed as dist

    if not carried:
        monkeypatch.setattr(dist, "CARRY_MAX", 0)
    kept: collections.OrderedDict[str, Any] = collections.OrderedDict()
    monkeypatch.setattr(dist, "_KERNELS", kept)
    made: list[Any] = []  # the kernels this test's runner sends (stale tasks of earlier tests
    real_sealed = dist._sealed  # may still put theirs in the cache)
    monkeypatch.setattr(dist, "_sealed", lambda *a: made.append(real_sealed(*a)) or made[-1])

    def ours() -> set[str]:  # this test's kernels in the workers' cache
        return {c.key for c in made if c is not None} & set(kept)

    code = fail_code()
    kw: dict[str, Any] = dict(method="exhaustive", budget=Budget(max_sets=10_000))
    one = threshold(code, 0.0, jobs=1, **kw)
    connects: list[Any] = []
    real_connect = dist._connect
    monkeypatch.setattr(dist, "_connect", lambda a: connects.append(a) or real_connect(a))
    scattered: list[int] = []
    runner = DaskRunner(scheduler=cluster.scheduler_address, key="t")
    real_call = DaskRunner.__call__

    def call(self: DaskRunner, *args: Any) -> None:
        real_call(self, *args)
        scattered.append(self.stats["scattered"])

    monkeypatch.setattr(DaskRunner, "__call__", call)
    with runner:
        dsk = threshold(code, 0.0, jobs=1, runner=runner, **kw)
        assert runner._session_client is not None
        assert runner._session_client.status == "running"
    assert runner._session_client is None  # closed with the session
    assert same(dsk) == same(one) and dsk.threshold == 3
    assert len(scattered) >= 3 and len(connects) == 1
    assert len(ours()) == 1, (scattered, made)
    if carried:
        assert set(scattered) == {0}, scattered
    else:
        assert scattered[0] == 1 and sum(scattered) == 1, scattered
    # without a session every call connects and sends the code (a kernel of its own)
    connects.clear()
    scattered.clear()
    made.clear()
    assert same(threshold(code, 0.0, jobs=1, runner=runner, **kw)) == same(one)
    assert len(connects) == len(scattered) >= 3
    assert set(scattered) == ({0} if carried else {1})
    assert len({c.key for c in made}) == len(made) == len(connects)  # one kernel per call
    assert ours()  # (the cache keeps the last KERNELS_KEPT, stale tasks' among them)


def test_small_enumerations_run_in_the_client(cluster: Any,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """``local_below_s`` (the CLI's runner): an enumeration estimated below it runs in this
    process, a larger one on the cluster; the reports are the local ones."""
    from math import comb

    from gctool.audit import exhaustive
    from gctool.audit.attack.options import AttackOptions, oracle_for
    from gctool.budget import NS_PER_S

    code = fail_code()  # threshold 3: sizes 0..3 (the column witness {5, 7, 9} caps them)
    kw: dict[str, Any] = dict(method="exhaustive", budget=Budget(max_sets=10_000))
    one, worst = threshold(code, 0.0, jobs=1, **kw), attack(code, 3, jobs=1, **kw)
    oracle = oracle_for(code, AttackOptions.of(None, **kw))
    size_s = exhaustive._SearchBudget(oracle, 1, None, top=3).work(3, comb(14, 3))[0] / NS_PER_S
    seen: list[int] = []
    real_call = DaskRunner.__call__

    def call(self: DaskRunner, worker: Any, *args: Any) -> None:
        seen.append(worker.source.s)
        real_call(self, worker, *args)

    monkeypatch.setattr(DaskRunner, "__call__", call)
    for below, sizes in ((0.0, [1, 2, 3]), (size_s, [3]), (size_s * 1.01, [])):
        runner = DaskRunner(scheduler=cluster.scheduler_address, key="t", local_below_s=below)
        seen.clear()
        assert same(threshold(code, 0.0, jobs=1, runner=runner, **kw)) == same(one)
        assert seen == sizes, (below, seen)
        seen.clear()
        assert same(attack(code, 3, jobs=1, runner=runner, **kw)) == same(worst)
        assert seen == sizes[-1:], (below, seen)


def _without_executor(doc: Any) -> Any:
    """A report's JSON without what records the executor or the time (at every depth)."""
    if isinstance(doc, dict):
        return {k: _without_executor(v) for k, v in doc.items()
                if k not in ("jobs", "estimate") and not k.startswith(("elapsed", "seconds"))}
    if isinstance(doc, list):
        return [_without_executor(v) for v in doc]
    return doc


#: sequential schemes whose per-round (or per-level) code takes several enumeration tasks
SEQUENTIAL = {
    "sr-sgc": dict(n=10, burst=1, window=3, lam=4, gc="cyclic"),
    "m-sgc": dict(n=6, burst=1, window=3, lam=3),
    "coded-reduce": dict(fanout=8, depth=2, tolerance=[3], gc="cyclic"),
}


@pytest.mark.parametrize("scheme", sorted(SEQUENTIAL))
def test_sequential_verify_runs_on_the_given_executor(cluster: Any, scheme: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The schedule and tree verifiers hand ``jobs`` and ``runner`` to the enumeration of
    their per-round (per-level) codes, and the report does not depend on them."""
    enumeration = importlib.import_module("gctool.audit.verify.enumeration")
    seen: list[tuple[int, Any]] = []
    fold = enumeration.run_folded

    def spy(*args: Any, **kw: Any) -> Any:
        seen.append((kw["jobs"], kw["runner"]))
        return fold(*args, **kw)

    monkeypatch.setattr(enumeration, "run_folded", spy)
    code = gctool.design(scheme, seed=1, **SEQUENTIAL[scheme])
    one = gctool.verify(code, jobs=1)
    assert seen and all(jobs == 1 and runner is None for jobs, runner in seen)
    seen.clear()
    two = gctool.verify(code, jobs=2)
    assert seen and all(jobs == 2 and runner is None for jobs, runner in seen)
    seen.clear()
    runner = DaskRunner(scheduler=cluster.scheduler_address, key=f"seq-{scheme}")
    dsk = gctool.verify(code, runner=runner)
    # (told the timed estimate of the sets left: gctool.audit.distributed.estimated)
    assert seen and all(getattr(r, "runner", r) is runner for _, r in seen)
    assert runner.stats.get("submitted", 0) >= 1  # the cluster did the work
    assert one.ok and dsk.ok
    docs = [_without_executor(loads(json.dumps(r.to_dict()))) for r in (one, two, dsk)]
    assert docs[0] == docs[1] == docs[2]


#: the encoded frame's audits: the worst spectrum (verify, attack at s) and the curve over s
FRAME_AUDITS = {
    "verify": lambda code, **kw: gctool.verify(code, **kw),
    "attack": lambda code, **kw: gctool.attack(code, 2, **kw),
    "curve": lambda code, **kw: gctool.curve(code, 2, **kw),
}


@pytest.mark.parametrize("compiled", ["0", "1"], ids=["numpy", "compiled"])
@pytest.mark.parametrize("audit", sorted(FRAME_AUDITS))
def test_encoded_frame_runs_on_the_given_executor(cluster: Any, audit: str, compiled: str,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The encoded scheme's verify and attack hooks hand ``jobs`` and ``runner`` to the
    enumeration of their straggler sets (many 8-set tasks here), and the report does not
    depend on them; locally, with 2 jobs, the spectra are decided in the pool's threads (the
    caller's thread is one of them); on numpy's batches or the compiled walk, which the Dask
    workers then run too (the frame carries the walk its caller planned)."""
    import threading

    from gctool.audit.kernels.spectra import FrameWalk
    from gctool.engine.threads import run_threads

    monkeypatch.setenv("GCTOOL_COMPILED", compiled)
    walked: list[str] = []
    walk = FrameWalk.walk

    def spy(self: Any, *args: Any) -> Any:
        walked.append(threading.current_thread().name)
        return walk(self, *args)

    monkeypatch.setattr(FrameWalk, "walk", spy)
    spectrum = importlib.import_module("gctool.audit.spectrum")
    monkeypatch.setattr(spectrum.Frame, "chunk", lambda self, s: CHUNK)
    monkeypatch.setattr(importlib.import_module("gctool.audit.exhaustive"),
                        "PARALLEL_MIN_SETS", 0)  # really use 2 local threads
    seen: list[tuple[int, Any, int]] = []
    fold = spectrum.run_folded

    def spy(worker: Any, tasks: Any, *args: Any, **kw: Any) -> Any:
        seen.append((kw["jobs"], kw["runner"], len(tasks)))
        return fold(worker, tasks, *args, **kw)

    monkeypatch.setattr(spectrum, "run_folded", spy)
    deciders: list[str] = []
    decide = spectrum._SpectrumWorker.run

    def run_in(self: Any, task: Any) -> Any:
        deciders.append(threading.current_thread().name)
        return decide(self, task)

    monkeypatch.setattr(spectrum._SpectrumWorker, "run", run_in)
    code = gctool.design("encoded", frame="paley", workers=14, s=2, seed=1)
    run = FRAME_AUDITS[audit]
    one = run(code, jobs=1)
    assert seen and all(jobs == 1 and runner is run_threads for jobs, runner, _ in seen)
    assert max(tasks for _, _, tasks in seen) > 2  # C(14, 2) = 91 sets in 8-set tasks
    main = threading.current_thread().name
    assert set(deciders) == {main}
    seen.clear()
    deciders.clear()
    two = run(code, jobs=2)
    assert seen and all(jobs == 2 and runner is run_threads for jobs, runner, _ in seen)
    # decided in the pool's threads: the caller's (one of them) and one other
    assert set(deciders) <= {main, "gctool-job-1"}, deciders
    seen.clear()
    local = len(walked)
    runner = DaskRunner(scheduler=cluster.scheduler_address, key=f"frame-{audit}-{compiled}")
    dsk = run(code, runner=runner)
    assert seen and all(r is runner for _, r, _ in seen)
    assert runner.stats.get("submitted", 0) >= 1  # the cluster did the work
    # the compiled walk ran locally and on the workers (in-process here), or never
    assert (local > 0 and len(walked) > local) if compiled == "1" else not walked
    docs = [_without_executor(loads(json.dumps(r.to_dict()))) for r in (one, two, dsk)]
    assert docs[0] == docs[1] == docs[2]
    if audit == "verify":
        assert one.ok and one.exact and one.checked == 91


@pytest.mark.parametrize("compiled", ["0", "1"], ids=["numpy", "compiled"])
def test_encoded_frame_checkpoint_resumes(cluster: Any, tmp_path: Any, compiled: str,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A Dask run of a frame's spectra writes a checkpoint that a second run replays (its
    summaries are rebuilt by type name) to the same report, on either route."""
    monkeypatch.setenv("GCTOOL_COMPILED", compiled)
    code = gctool.design("encoded", frame="paley", workers=14, s=2, seed=1)
    ref = gctool.verify(code)
    spectrum = importlib.import_module("gctool.audit.spectrum")
    monkeypatch.setattr(spectrum.Frame, "chunk", lambda self, s: CHUNK)
    ck = str(tmp_path / "frame.ckpt")
    key = f"frame-ck-{compiled}"
    gctool.verify(code, runner=DaskRunner(scheduler=cluster.scheduler_address, key=key,
                                          checkpoint=ck))
    again = DaskRunner(scheduler=cluster.scheduler_address, key=key, checkpoint=ck)
    resumed = gctool.verify(code, runner=again)
    assert again.stats["resumed"] == again.stats["tasks"] > 1
    assert _without_executor(resumed.to_dict()) == _without_executor(ref.to_dict())


def test_adversarial_corpus_identical_on_dask(cluster: Any) -> None:
    """Badly scaled, near-cyclic and complex codes of the adversarial corpus: verify, the worst
    case and the threshold on a Dask cluster are those of the local engines (and the truth)."""
    picked = {"tandon-scaled", "near-cyclic", "complex-scaled"}
    used: list[int] = []
    for name, B, s, field in (c for c in adversarial_corpus() if c[0] in picked):
        code = code_of(B, s, field)
        kw: dict[str, Any] = dict(method="exhaustive")
        runs = [(verify, (code,), kw), (attack, (code, s), kw),
                (threshold, (code,), dict(kw, budget=Budget(max_sets=10_000)))]
        for fn, args, opts in runs:
            local = fn(*args, jobs=1, **opts)
            dsk, runner = run_dask(cluster, fn, *args, jobs=1, **opts)
            assert same(local) == same(dsk), (name, fn.__name__)
            used.append(runner.stats.get("tasks", 0))
            if fn is verify:
                assert dsk.ok == exact_ok(B, s), name
            elif fn is threshold:
                assert dsk.threshold == exact_threshold(B) and dsk.exact, name
    assert sum(used) >= 9 and max(used) >= 2  # the cluster really ran the enumerations


def test_checkpoint_resume_after_interrupt(cluster: Any, tmp_path: Any) -> None:
    code = ok_code()
    ref = verify(code, method="exhaustive", jobs=1)
    ck = str(tmp_path / "run.ckpt")
    calls = {"n": 0}

    def stop_soon(done: int, total: int) -> None:
        calls["n"] += 1
        if calls["n"] == 6:
            raise KeyboardInterrupt

    first = DaskRunner(scheduler=cluster.scheduler_address, checkpoint=ck, key="k")
    with pytest.raises(SearchInterrupted):
        verify(code, method="exhaustive", progress=stop_soon, runner=first)
    saved = loads(open(ck).read())
    assert saved["format"] == "gctool-checkpoint/1"
    (done,) = saved["runs"].values()
    assert len(done) >= 5  # at least the tasks merged before the interrupt
    second = DaskRunner(scheduler=cluster.scheduler_address, checkpoint=ck, key="k")
    rep = verify(code, method="exhaustive", runner=second)
    assert same(rep) == same(ref)
    assert second.stats["resumed"] >= 5
    assert second.stats["submitted"] == second.stats["tasks"] - second.stats["resumed"]
    third = DaskRunner(scheduler=cluster.scheduler_address, checkpoint=ck, key="k")
    assert same(verify(code, method="exhaustive", runner=third)) == same(ref)
    assert third.stats["submitted"] == 0 and third.stats["resumed"] == third.stats["tasks"]
    other = DaskRunner(scheduler=cluster.scheduler_address, checkpoint=ck, key="other run")
    verify(code, method="exhaustive", runner=other)  # another run's key: nothing is reused
    assert other.stats["resumed"] == 0


def test_cli_dask_matches_local(cluster: Any, tmp_path: Any) -> None:
    path = tmp_path / "code.json"
    write_code(fail_code(), str(path))
    runner = CliRunner()
    base = ["verify", str(path), "--method", "exhaustive", "--json"]
    loc = runner.invoke(cli, base)
    dsk = runner.invoke(cli, base + ["--executor", "dask", "--scheduler",
                                     cluster.scheduler_address,
                                     "--checkpoint", str(tmp_path / "c.json")])
    assert loc.exit_code == dsk.exit_code == 1, dsk.stderr
    a, b = loads(loc.stdout), loads(dsk.stdout)
    assert a["counterexample"] == b["counterexample"] == [0, 5, 7, 9]
    att = ["attack", str(path), "-s", "3", "--method", "exhaustive", "--json"]
    la = runner.invoke(cli, att)
    da = runner.invoke(cli, att + ["--executor", "dask", "--scheduler",
                                   cluster.scheduler_address])
    assert la.exit_code == da.exit_code, da.stderr
    assert loads(la.stdout)["stragglers"] == loads(da.stdout)["stragglers"]
    own = runner.invoke(cli, base + ["--executor", "dask", "--jobs", "1"])  # own LocalCluster
    assert own.exit_code == 1, own.stderr
    assert loads(own.stdout)["counterexample"] == [0, 5, 7, 9]
    bad = runner.invoke(cli, base + ["--scheduler", "tcp://127.0.0.1:1"])
    assert bad.exit_code == 2  # --scheduler without --executor dask
    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
        gone = runner.invoke(cli, base + ["--executor", "dask", "--scheduler",
                                          "tcp://127.0.0.1:1"])
    assert gone.exit_code == 2, gone.stderr
    assert "cannot connect to the Dask scheduler" in gone.stderr
    assert len(gone.stderr.strip().splitlines()) == 1


def test_missing_extra_is_one_line_exit_2(tmp_path: Any, monkeypatch: pytest.MonkeyPatch
                                          ) -> None:
    path = tmp_path / "code.json"
    write_code(ok_code(), str(path))
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed -> ImportError
    res = CliRunner().invoke(cli, ["verify", str(path), "--executor", "dask"])
    assert res.exit_code == 2
    assert "gctool[dask]" in res.stderr and len(res.stderr.strip().splitlines()) == 1


@dataclass
class SlowWorker:
    inner: Any

    def run(self, task: Any) -> Any:
        time.sleep(0.05)
        return self.inner.run(task)


def test_killed_worker_is_recovered() -> None:
    code = ok_code()
    ref = verify(code, method="exhaustive", jobs=1)
    with LocalCluster(**local_cluster_options(2)) as procs, Client(procs) as client:
        pids = sorted(client.run(os.getpid).values())
        assert len(pids) == 2 and os.getpid() not in pids
        dask = DaskRunner(scheduler=procs.scheduler_address, key="kill", window=4)
        seen = {"n": 0}

        def slow(worker: Any, tasks: Any, jobs: int, on_result: Any) -> None:
            def watch(i: int, r: Any) -> bool:
                seen["n"] += 1
                if seen["n"] == 5:
                    os.kill(pids[0], signal.SIGKILL)  # mid-run: tasks in flight are lost
                return bool(on_result(i, r))

            dask(SlowWorker(worker), tasks, jobs, watch)

        rep = verify(code, method="exhaustive", runner=slow)
        assert pids[0] not in client.run(os.getpid).values()  # it really died mid-run
    assert same(rep) == same(ref)
    assert seen["n"] == dask.stats["tasks"] > 20


def test_checkpoint_write_failure_is_invalid_input(tmp_path: pathlib.Path) -> None:
    """A checkpoint that cannot be written (no such directory) is one line and exit 2, not a
    crash; a corrupt checkpoint is rejected the same way."""
    from gctool.audit.distributed import Checkpoint
    from gctool.errors import InvalidInput

    cp = Checkpoint(tmp_path / "missing" / "run.ckpt")
    with pytest.raises(InvalidInput, match="does not exist"):
        cp.save()
    bad = tmp_path / "bad.ckpt"
    bad.write_text("{not json")
    with pytest.raises(InvalidInput, match="cannot read checkpoint"):
        Checkpoint(bad)
    good = tmp_path / "good.ckpt"
    Checkpoint(good).save()
    assert Checkpoint(good).runs == {}


def test_a_rebuilt_oracle_keeps_the_clients_work_budget() -> None:
    """A Dask worker does not see the client's --max-work: the oracle rebuilt there from its
    recipe keeps the original's budget (else a worker that runs many tasks of a large attack
    would stop at the default budget of its own process)."""
    import pickle

    from gctool.audit.oracles import make_oracle
    from gctool.audit.oracles.kernel import OracleKernel
    from gctool.budget import Budget

    budget = Budget(max_work=1e4, max_sets=77)
    kernel = OracleKernel.of(make_oracle(ok_code(), "optimal", None, 1e-9, budget=budget))
    rebuilt = pickle.loads(pickle.dumps(kernel)).oracle
    assert rebuilt.budget == budget and rebuilt.budget != Budget.default()
    assert rebuilt.meter.limit == budget.work_ns  # charged against the client's budget


@dataclass
class Noop:
    """Every task at once, as covered."""

    def run(self, task: Any) -> Any:
        from gctool.engine.sweep import PeakSummary

        return PeakSummary(task[0], task[2] - task[1], [(0.0, [task[1]])])


@dataclass
class LateFirst:
    """Task 0 finishes last: it waits until the file ``gate`` exists (the client has received
    another task's result), then returns; the others return at once."""

    gate: str

    def run(self, task: Any) -> Any:
        from gctool.engine.sweep import PeakSummary

        if task[0] == 0:
            deadline = time.monotonic() + 60  # (a hang fails the test below, not the suite)
            while not os.path.exists(self.gate) and time.monotonic() < deadline:
                time.sleep(0.005)
        return PeakSummary(task[0], task[2] - task[1], [(0.0, [task[1]])])


def test_an_interrupt_counts_the_sets_that_finished_out_of_order(
        cluster: Any, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """M6 of review 2: an interrupt's summary counts the merged sets; the runner also says how
    many sets had finished out of rank order (not merged, kept in a checkpoint if any).
    Task 0 returns only once the client holds a later task's result (no timing: the count is
    the same on a loaded machine)."""
    from gctool.audit.distributed import _InOrder

    gate, received = tmp_path / "received", []
    add = _InOrder.add

    def spy(self: Any, i: int, result: Any) -> None:
        add(self, i, result)
        received.append(i)
        if i > 0:
            gate.touch()

    monkeypatch.setattr(_InOrder, "add", spy)
    runner = DaskRunner(scheduler=cluster.scheduler_address, key="m6", batch=1)
    tasks = [(i, 10 * i, 10 * i + 10) for i in range(6)]

    def on_result(i: int, r: Any) -> bool:
        raise KeyboardInterrupt  # at the first merge (task 0, which came last)

    with pytest.raises(KeyboardInterrupt):
        runner(LateFirst(str(gate)), tasks, 1, on_result)
    sets = runner.stats["unmerged"]  # every later task received (before task 0, or with it)
    assert received.index(0) > 0 and sets == 10 * (len(received) - 1)
    assert sets in (10, 20, 30, 40, 50)
    assert runner.unmerged_note() == (f"{sets} more sets had finished out of order on the "
                                      "cluster (not saved: no `checkpoint`)")


def test_guided_groups_shrink_and_cover_every_task() -> None:
    """The guided schedule: a Dask task takes 1 / (2 x worker threads) of the engine tasks
    left, at least ``batch`` and at most ``GUIDED_MAX x batch``; the groups are consecutive
    and cover every task once."""
    from gctool.audit.distributed import GUIDED_MAX, _InOrder, _Window

    class Client:
        def scatter(self, worker: Any, **kw: Any) -> Any:
            return worker

        def submit(self, fn: Any, remote: Any, tasks: list[Any], **kw: Any) -> Any:
            return object()

    tasks = [(i, 0, 0) for i in range(300)]
    window = _Window(DaskRunner(batch=2, guided=True), Client(), None, tasks,
                     _InOrder(lambda i, r: False, len(tasks)), None, {})
    window.counted(2, 4)  # the scheduler's answer: 2 workers of 2 threads
    window.stats.update(submitted=0, dask_tasks=0)
    window.remote = SimpleNamespace(status="finished")  # the code, already on the cluster
    while window.submit() is not None:
        pass
    groups = list(window.futures.values())
    assert [i for g in groups for i in g] == list(range(300))
    sizes = [len(g) for g in groups]
    assert sizes[0] == GUIDED_MAX * 2 and min(sizes[:-1]) == 2
    assert sizes == sorted(sizes, reverse=True)  # large first, then small
    assert any(2 < x < GUIDED_MAX * 2 for x in sizes)  # shrinking with what is left


def test_guided_groups_hold_a_minimum_time_once_measured() -> None:
    """Once engine tasks have come back, a Dask task holds at least ``TASK_MIN_S`` of them
    at their mean time (past ``GUIDED_MAX x batch`` when they are short), but for the last
    round, which shares what is left among the threads; every task once."""
    from gctool.audit.distributed import GUIDED_MAX, TASK_MIN_S, _InOrder, _Window

    class Client:
        def submit(self, fn: Any, remote: Any, tasks: list[Any], **kw: Any) -> Any:
            return object()

    tasks = [(i, 0, 0) for i in range(1000)]
    window = _Window(DaskRunner(batch=2, guided=True), Client(), None, tasks,
                     _InOrder(lambda i, r: False, len(tasks)), None, {})
    window.counted(2, 2)
    window.stats.update(submitted=0, dask_tasks=0)
    window.remote = SimpleNamespace(status="finished")
    assert window.submit() is not None
    first = len(next(iter(window.futures.values())))
    assert first == GUIDED_MAX * 2  # nothing measured yet: the count cap
    window.ran, window.spent = 10, 10 * TASK_MIN_S / 40  # engine tasks of TASK_MIN_S / 40
    while window.submit() is not None:
        pass
    groups = list(window.futures.values())
    assert [i for g in groups for i in g] == list(range(1000))
    # the floor, except in the last round, which shares what is left among the 2 threads
    assert all(len(g) >= 40 for g in groups[1:-2])
    assert len(groups[-2]) - len(groups[-1]) in (0, 1) and len(groups[-2]) <= 40
    assert max(len(g) for g in groups[1:]) == 40 < 1000 // 4  # the floor, not more


@pytest.mark.parametrize(("count", "sizes"), [(3, [2, 1]), (15, [4, 4, 4, 3]), (7, [4, 3])])
def test_guided_last_round_gives_every_thread_a_share(count: int, sizes: list[int]) -> None:
    """What is left once it fits one round is shared among the worker threads (3 engine
    tasks on 2 threads: Dask tasks of 2 and 1, not one of 3 while the other thread idles)."""
    from gctool.audit.distributed import _InOrder, _Window

    class Client:
        def submit(self, fn: Any, remote: Any, tasks: list[Any], **kw: Any) -> Any:
            return object()

    tasks = [(i, 0, 0) for i in range(count)]
    window = _Window(DaskRunner(batch=4, guided=True), Client(), None, tasks,
                     _InOrder(lambda i, r: False, len(tasks)), None, {})
    window.counted(2, 2)  # 2 workers of 1 thread
    window.stats.update(submitted=0, dask_tasks=0)
    window.remote = SimpleNamespace(status="finished")
    while window.submit() is not None:
        pass
    assert [len(g) for g in window.futures.values()] == sizes


def test_local_clusters_serve_http_on_a_free_loopback_port() -> None:
    """Dask's scheduler starts an HTTP server even without a dashboard, on port 8787 by default
    (a warning when another cluster holds it): gctool's clusters take a free loopback port,
    without a warning, while 8787 is held (by this test, or by another cluster already)."""
    import contextlib
    import socket
    import warnings

    holder = socket.socket()
    with contextlib.suppress(OSError):
        holder.bind(("127.0.0.1", 8787))
        holder.listen()
    try:
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            with LocalCluster(**local_cluster_options(0, processes=False),
                              protocol="tcp://") as c:
                http = c.scheduler.http_server
                assert http.address == "127.0.0.1" and http.port != 8787
    finally:
        holder.close()
    assert not [w for w in seen if "already in use" in str(w.message)]


def test_the_command_line_cluster_has_these_options(monkeypatch: pytest.MonkeyPatch) -> None:
    import distributed

    from gctool.audit.distributed import _local_cluster

    seen: dict[str, Any] = {}

    class Recorder:
        def __init__(self, **kw: Any) -> None:
            seen.update(kw)

    monkeypatch.setattr(distributed, "LocalCluster", Recorder)
    _local_cluster(1)
    assert seen == local_cluster_options(1)


def _count_questions(cluster: Any, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A list that grows by one at each question about the workers (``identity``) the
    scheduler of ``cluster`` answers.  The clients made from now on do not ask on their own:
    a Dask client also refreshes its scheduler information (an ``identity`` question) every
    ``distributed.client.scheduler-info-interval`` (2 s) in the background, which a loaded
    machine reaches within the counted calls."""
    monkeypatch.setitem(dask.config.get("distributed.client"), "scheduler-info-interval", "1h")
    asked: list[int] = []
    handlers = cluster.scheduler.handlers
    identity = handlers["identity"]

    def counted(*args: Any, **kw: Any) -> Any:
        asked.append(1)
        return identity(*args, **kw)

    monkeypatch.setitem(handlers, "identity", counted)
    return asked


def test_a_run_asks_the_scheduler_for_its_workers_once(cluster: Any,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Each question about the workers is a round trip to the scheduler: a run asks once
    (waiting for a worker) and its first scatter, health check and every guided task size
    take that answer (the client asks once more when it connects; the later health checks,
    every ``HEALTH_EVERY_S``, are switched off here)."""
    import gctool.audit.distributed as dist

    monkeypatch.setattr(dist, "HEALTH_EVERY_S", 1e12)
    monkeypatch.setattr(dist, "CARRY_MAX", 0)  # the kernel scattered (a question answered)
    monkeypatch.setattr(dist, "TASK_MIN_S", 0.0)  # many guided Dask tasks, whatever the estimate
    asked = _count_questions(cluster, monkeypatch)
    runner = DaskRunner(scheduler=cluster.scheduler_address, batch=2, guided=True)
    report = verify(ok_code(), method="exhaustive", runner=runner)
    assert report.ok and runner.stats["dask_tasks"] > 4 and runner.stats["scattered"] == 1
    assert len(asked) <= 2


def test_guided_groups_hold_a_minimum_time_from_the_estimate() -> None:
    """Before any Dask task has come back, the caller's estimate of the enumeration
    (:func:`gctool.audit.distributed.estimated`) sizes the Dask tasks: each holds at least
    ``TASK_MIN_S`` of work at the estimated time of an engine task (past ``GUIDED_MAX x
    batch``), but for the last round, which shares what is left among the threads."""
    from gctool.audit.distributed import TASK_MIN_S, _InOrder, _Window

    class Client:
        def submit(self, fn: Any, remote: Any, tasks: list[Any], **kw: Any) -> Any:
            return object()

    tasks = [(i, 0, 0) for i in range(1000)]
    runner = DaskRunner(batch=2, guided=True)
    runner.expected_s = 1000 * TASK_MIN_S / 50  # engine tasks of TASK_MIN_S / 50
    window = _Window(runner, Client(), None, tasks, _InOrder(lambda i, r: False, len(tasks)),
                     None, {})
    window.counted(2, 2)
    window.stats.update(submitted=0, dask_tasks=0)
    window.remote = SimpleNamespace(status="finished")
    while window.submit() is not None:
        pass
    groups = list(window.futures.values())
    assert [i for g in groups for i in g] == list(range(1000))
    assert max(len(g) for g in groups) == 50 and all(len(g) >= 50 for g in groups[:-2])
    assert len(groups[-2]) - len(groups[-1]) in (0, 1) and len(groups[-2]) <= 50
    runner.expected_s = None  # no estimate: the count cap
    window = _Window(runner, Client(), None, tasks, _InOrder(lambda i, r: False, len(tasks)),
                     None, {})
    window.counted(2, 2)
    window.remote = SimpleNamespace(status="finished")
    assert window.submit() is not None
    assert [len(g) for g in window.futures.values()] == [16]


def test_the_estimate_reaches_the_runner_for_one_call(cluster: Any,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """verify tells a Dask runner the timed estimate of the sets left, for that call only;
    an attack the calibrated one (:func:`gctool.audit.distributed.placed`); the reports are
    the local ones."""
    seen: list[float | None] = []
    real_call = DaskRunner.__call__

    def call(self: DaskRunner, *args: Any) -> None:
        seen.append(self.expected_s)
        real_call(self, *args)

    monkeypatch.setattr(DaskRunner, "__call__", call)
    runner = DaskRunner(scheduler=cluster.scheduler_address, key="t")
    with runner:
        assert same(verify(ok_code(), method="exhaustive", runner=runner)) == same(
            verify(ok_code(), method="exhaustive", jobs=1))
        assert same(attack(tied_code(), 2, method="exhaustive", runner=runner)) == same(
            attack(tied_code(), 2, method="exhaustive", jobs=1))
    assert len(seen) == 2 and all(x is not None and x > 0 for x in seen), seen
    assert runner.expected_s is None  # for one call only


def test_a_session_asks_for_the_workers_once_for_calls_in_a_row(
        cluster: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The calls of a session within ``HEALTH_EVERY_S`` of the scheduler's last answer about
    its workers take that answer (a threshold search makes one call per size); after the
    session, or once the answer is older, a call asks again."""
    import gctool.audit.distributed as dist

    asked = _count_questions(cluster, monkeypatch)
    monkeypatch.setattr(dist, "HEALTH_EVERY_S", 1e12)  # no health checks during the calls
    tasks = [(i, 0, 0) for i in range(4)]
    runner = DaskRunner(scheduler=cluster.scheduler_address, key="w")
    with runner:
        runner(Noop(), tasks, 1, lambda i, r: False)
        first = len(asked)
        for _ in range(3):
            runner(Noop(), tasks, 1, lambda i, r: False)
        assert len(asked) == first  # the session's answer
        runner._seen = runner._seen[:3] + (runner._seen[3] - 2e12,)  # an old answer
        runner(Noop(), tasks, 1, lambda i, r: False)
        assert len(asked) == first + 1
    asked.clear()
    runner(Noop(), tasks, 1, lambda i, r: False)  # no session: asks (connecting asks too)
    assert asked


def test_an_early_stop_cancels_the_later_tasks_on_the_cluster(cluster: Any) -> None:
    """The cancellation of the tasks after a counterexample is not waited for, but it
    happens: the scheduler soon holds none of the run's tasks."""
    runner = DaskRunner(scheduler=cluster.scheduler_address, key="cancelled-later", window=64)
    with runner:
        rep = verify(fail_code(), method="exhaustive", runner=runner)
        assert rep.counterexample == [0, 5, 7, 9] and runner.stats["cancelled"] > 0
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(
                str(k).startswith("gctool-cancelled-l") for k in cluster.scheduler.tasks):
            time.sleep(0.05)
        assert not [k for k in cluster.scheduler.tasks if str(k).startswith("gctool-cancelled-l")]


def test_the_command_line_runner_keeps_small_enumerations_below_its_setting() -> None:
    """``gctool.local-below`` (default ``LOCAL_BELOW_S``) is the CLI runner's threshold of
    the enumerations it runs in its own process; 0 sends every one to the cluster; anything
    but a duration from 0 to a day is one line (InvalidInput)."""
    from gctool.audit.distributed import LOCAL_BELOW_S, cli_runner, placed
    from gctool.errors import InvalidInput

    assert cli_runner().local_below_s == LOCAL_BELOW_S
    with dask.config.set({"gctool.local-below": "0"}):
        runner = cli_runner()
        assert runner.local_below_s == 0.0 and placed(runner, 1e-6) is not None
    with dask.config.set({"gctool.local-below": "2s"}):
        runner = cli_runner()
        assert runner.local_below_s == 2.0 and placed(runner, 1.9) is None
        assert placed(runner, 2.0).runner is runner
    for bad in ("-1s", "2 days", "soon"):
        with dask.config.set({"gctool.local-below": bad}), pytest.raises(InvalidInput) as err:
            cli_runner()
        assert "gctool.local-below" in str(err.value) and "\n" not in str(err.value)


# -- what a Dask run's start is estimated at ----------------------------------------------------
def _verify_needed(runner: Any, code: GradientCode | None = None, s: int = 6) -> float:
    """verify's estimate (seconds) in its refusal under a budget of 5 ms (real cyclic n=48 s=6
    by default: the compiled walk, far above the budget), on ``runner``.  Two calls need not
    give the same: the parts of the estimate are compared instead (the calibrated estimate of
    the sets moved by 7 ms-3 s between calls in one test process on the loaded machine)."""
    from gctool.errors import BudgetExceeded
    from gctool.request import VerifyRequest

    code = gctool.design("cyclic", n=48, s=6) if code is None else code
    request = VerifyRequest(s=s, method="exhaustive", jobs=1, budget=Budget(max_work=0.005),
                            runner=runner)
    with pytest.raises(BudgetExceeded) as info:
        gctool.verify(code, request=request)
    assert info.value.needed is not None
    return info.value.needed


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_refusal_below_the_local_cluster_start_names_it(
        tmp_path: Any, monkeypatch: pytest.MonkeyPatch, jobs: str) -> None:
    """--executor dask without --scheduler: the estimate counts starting the local cluster
    (LOCAL_CLUSTER_NS) and its fresh workers importing gctool and loading the kernels, and a
    budget below it refuses the run before any cluster starts, in one line that names both; on
    the local executor the same budget refuses without them.  The parts: LOCAL_CLUSTER_NS,
    KERNELS_LOAD_NS and WORKER_IMPORT_NS (a scheduler's cluster, not asked outside a session:
    the workers' import and load alone)."""
    import distributed

    from gctool.audit.distributed import LOCAL_CLUSTER_NS, WORKER_IMPORT_NS
    from gctool.budget import KERNELS_LOAD_NS

    monkeypatch.undo()  # (the run's own chunks: small_chunks' would time the estimate)
    started: list[int] = []
    monkeypatch.setattr(distributed, "LocalCluster", lambda **kw: started.append(1))
    path = tmp_path / "c48.json"
    write_code(gctool.design("cyclic", n=48, s=6), str(path))
    base = ["verify", str(path), "-s", "6", "--jobs", jobs, "--max-work", "5ms"]
    dsk = CliRunner().invoke(cli, [*base, "--executor", "dask"])
    loc = CliRunner().invoke(cli, base)
    assert dsk.exit_code == loc.exit_code == 2 and not started, dsk.stderr
    (line,) = dsk.stderr.strip().splitlines()
    assert ("with starting a local Dask cluster (about 800 ms) and importing gctool and "
            "loading the compiled kernels on its workers (about 750 ms), needs about") in line, \
        line
    assert "Dask" not in loc.stderr
    from gctool.audit.distributed import workers_start_ns

    start = LOCAL_CLUSTER_NS + KERNELS_LOAD_NS + WORKER_IMPORT_NS
    assert workers_start_ns(DaskRunner(), True) == start
    assert workers_start_ns(DaskRunner(), False) == LOCAL_CLUSTER_NS
    remote = DaskRunner(scheduler="tcp://127.0.0.1:1")  # never contacted
    assert workers_start_ns(remote, True) == KERNELS_LOAD_NS + WORKER_IMPORT_NS
    assert workers_start_ns(remote, False) == workers_start_ns(None, True) == 0.0
    assert _verify_needed(DaskRunner()) > start / 1e9  # (the start is on no job's share)


def test_a_local_cluster_start_is_counted_until_the_session_has_one() -> None:
    """A runner without a session starts a local cluster at every call; a session's first
    call starts one, which its later calls use while its client runs; a scheduler's cluster
    is running already."""
    from gctool.audit.distributed import LOCAL_CLUSTER_NS, cluster_start_ns, estimated

    assert cluster_start_ns(DaskRunner()) == cluster_start_ns(estimated(DaskRunner(), 1.0)) \
        == LOCAL_CLUSTER_NS
    assert cluster_start_ns(None) == cluster_start_ns(DaskRunner(scheduler="tcp://127.0.0.1:1")
                                                      ) == 0.0
    with DaskRunner() as session:
        assert cluster_start_ns(session) == LOCAL_CLUSTER_NS
        session._session_client = SimpleNamespace(status="running")
        assert cluster_start_ns(session) == 0.0
        session._session_client = SimpleNamespace(status="closed")  # its cluster was lost
        assert cluster_start_ns(session) == LOCAL_CLUSTER_NS
        session._session_client = None


def test_the_threshold_search_counts_the_local_cluster_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """attack --threshold on a runner that starts a local cluster: LOCAL_CLUSTER_NS is
    charged once, to the first size sent to it (the small sizes run in this process), and
    its refusal names it; on a scheduler's cluster, nothing (calibrated rates: no probe)."""
    from gctool.audit import exhaustive
    from gctool.audit.distributed import LOCAL_CLUSTER_NS
    from gctool.audit.oracles import make_oracle

    monkeypatch.setattr(exhaustive, "probe_rate", lambda *a, **k: None)
    code = gctool.design("cyclic", n=40, s=6)

    def loads(runner: DaskRunner, budget: float = 1e6
              ) -> tuple[list[float], str | None, list[int]]:
        oracle = make_oracle(code, budget=Budget(max_work=budget))
        search = exhaustive._SearchBudget(oracle, 1, runner, None, oracle.limit, 7)
        out, refusal = [], None
        for t in range(8):
            refusal = refusal or search(t, 0, 1)
            out.append(search.loading(t, 1))
        return out, refusal, [t for t in range(8) if search.runner_of(t) is not None]

    local = DaskRunner(local_below_s=0.1)
    charged, _, sent = loads(local)
    assert sent and charged[sent[0]] >= LOCAL_CLUSTER_NS / 1e9
    assert sum(charged[:sent[0]]) == 0.0
    remote, _, _ = loads(DaskRunner(scheduler="tcp://127.0.0.1:1", local_below_s=0.1))
    assert sum(charged) - sum(remote) == pytest.approx(LOCAL_CLUSTER_NS / 1e9)
    _, refusal, _ = loads(local, budget=0.5)
    assert refusal is not None and "with starting a local Dask cluster" in refusal, refusal


def test_a_running_cluster_is_charged_no_start_and_warm_workers_no_load(
        cluster: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A scheduler's cluster is running: no start is counted.  In a session (the CLI's), its
    workers are asked whether they have loaded the compiled kernels of the run's kind (here
    they run in this process, which has): a new runner, as a later gctool command is, is not
    charged the load;
    workers that say they have not loaded them but have imported gctool's engine are charged
    the load (KERNELS_LOAD_NS), workers that have not imported it the import too
    (WORKER_IMPORT_NS), and so is a runner without a session, which does not ask.  On the
    command line, the refusal names neither."""
    import gctool.audit.distributed as dist
    from gctool import compiled
    from gctool.audit import kernels
    from gctool.audit.distributed import WORKER_IMPORT_NS, cluster_start_ns, workers_start_ns
    from gctool.budget import KERNELS_LOAD_NS

    monkeypatch.undo()  # (the run's own chunks: small_chunks' would time the estimate)
    with monkeypatch.context() as m:  # (the real screen's kernels, which the verify below walks)
        m.setenv("GCTOOL_COMPILED", "1")
        assert verify(gctool.design("cyclic", n=8, s=2), 2, method="exhaustive").ok
    assert kernels.REAL.loaded()
    address = cluster.scheduler_address
    with DaskRunner(scheduler=address) as warm:
        assert cluster_start_ns(warm) == 0.0 and workers_start_ns(warm, True) == 0.0
        assert warm.kernels_warm()
    unasked = DaskRunner(scheduler=address)  # (no session: not asked, counted)
    assert workers_start_ns(unasked, True) == KERNELS_LOAD_NS + WORKER_IMPORT_NS
    path = tmp_path / "c48.json"
    write_code(gctool.design("cyclic", n=48, s=6), str(path))
    args = ["verify", str(path), "-s", "6", "--max-work", "5ms", "--executor", "dask",
            "--scheduler", address]
    out = CliRunner().invoke(cli, args)
    assert out.exit_code == 2 and "needs about" in out.stderr, out.stderr
    assert "Dask" not in out.stderr and "kernels" not in out.stderr
    monkeypatch.setattr(compiled, "kernels_loaded", lambda: False)  # (the workers' answer)
    with DaskRunner(scheduler=address) as cold:
        assert not cold.kernels_warm() and workers_start_ns(cold, True) == KERNELS_LOAD_NS
        assert cold.engine_imported()
    said = CliRunner().invoke(cli, args).stderr
    assert ", with loading the compiled kernels on the Dask workers (about 500 ms)," in said
    parts = dist._engine_parts()  # (a module the workers have not imported)
    monkeypatch.setattr(dist, "_engine_parts", lambda: (*parts, (gctool, "not_imported")))
    with DaskRunner(scheduler=address) as fresh:
        assert not fresh.engine_imported()
        assert workers_start_ns(fresh, True) == KERNELS_LOAD_NS + WORKER_IMPORT_NS
    said = CliRunner().invoke(cli, args).stderr
    assert (", with importing gctool and loading the compiled kernels on the Dask workers "
            "(about 750 ms),") in said, said


def test_a_frame_spectrum_refusal_names_the_local_cluster_start() -> None:
    """The spectral audit of an encoded frame on a runner that starts a local cluster is
    refused, before it starts, naming the start (its workers' kernel load too when the walk
    is compiled); on local threads the refusal names no Dask."""
    from gctool.audit import spectrum
    from gctool.errors import BudgetExceeded

    code = gctool.design("encoded", frame="steiner", system="pg-2", s=1)
    said = {}
    for name, runner in (("dask", DaskRunner()), ("local", None)):
        with pytest.raises(BudgetExceeded) as info:
            spectrum.worst_spectrum(code, 4, budget=Budget(max_work=1e-4), runner=runner)
        said[name] = str(info.value)
    assert "with starting a local Dask cluster (about 800 ms)" in said["dask"], said["dask"]
    assert "Dask" not in said["local"]



@pytest.mark.parametrize("carried", [True, False])
def test_the_workers_get_read_only_arrays_read_only(
        cluster: Any, monkeypatch: pytest.MonkeyPatch, carried: bool) -> None:
    """numba compiles a kernel for each set of argument types, and a read-only array is a
    type of its own: the kernel the workers unpickle, carried by the tasks or scattered, has
    the arrays' flags of the client's (numpy's pickle makes every array writable, and the real
    screen's row scale and row-normalised B arrived writable), so a worker calls the kernels'
    signatures the client's runs called and filled numba's cache with, instead of compiling
    new ones at its first task."""
    import collections

    import gctool.audit.distributed as dist

    monkeypatch.undo()  # (the run's own chunks: the compiled screen is planned with them)
    monkeypatch.setenv("GCTOOL_COMPILED", "1")
    if not carried:
        monkeypatch.setattr(dist, "CARRY_MAX", 0)
    kept: collections.OrderedDict[str, Any] = collections.OrderedDict()
    monkeypatch.setattr(dist, "_KERNELS", kept)
    sent: list[tuple[Any, Any]] = []
    real_sealed = dist._sealed
    monkeypatch.setattr(dist, "_sealed", lambda obj, salt: sent.append(
        (obj, real_sealed(obj, salt))) or sent[-1][1])
    B = np.random.default_rng(3).standard_normal((24, 18))  # (42,504 sets: a pilot, a task)
    code = GradientCode(B, parse_field("real"), 5)
    dsk, runner = run_dask(cluster, verify, code, method="exhaustive", jobs=2)
    assert same(dsk) == same(verify(code, method="exhaustive", jobs=1))
    assert runner.stats["scattered"] == (0 if carried else 1)
    (kernel, sealed), = sent
    screen, theirs = kernel.compiled_screen, kept[sealed.key].compiled_screen
    arrays = [k for k, v in vars(screen).items() if isinstance(v, np.ndarray)]
    flags = {k: getattr(screen, k).flags.writeable for k in arrays}
    assert {"scale", "Bn", "NT"} <= set(arrays) and not flags["scale"] and flags["NT"], flags
    assert {k: getattr(theirs, k).flags.writeable for k in arrays} == flags
    assert not kept[sealed.key].code.B.flags.writeable
    frozen = np.asfortranarray(np.ones((3, 4)))
    frozen.setflags(write=False)
    blob = dist._pickled({"a": frozen, "again": frozen, "w": np.arange(3.0)})
    assert blob is not None
    back = pickle.loads(blob)
    assert not back["a"].flags.writeable and back["a"].flags.f_contiguous  # (its layout too)
    assert back["again"] is back["a"] and back["w"].flags.writeable


def _kernel_signatures() -> dict[str, set[str]]:
    """The argument types each compiled kernel of gctool has been called with (or loaded for)
    in this process (the dispatchers gctool.compiled.KERNELS lists: scanning gc.get_objects()
    with isinstance raised ReferenceError on a dead weak proxy there)."""
    from gctool.compiled import KERNELS

    return {f"{d.py_func.__module__}.{d.py_func.__qualname__}": set(map(str, d.signatures))
            for d in KERNELS if d.signatures}


def test_a_worker_process_calls_the_kernels_the_client_calls(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A fresh worker process of a cluster runs verify's compiled walk (real cyclic n=30 s=5)
    with the argument types this process runs it with, so the numba cache that local runs (and
    tests/warm_kernels.py) fill serves it: no signature of its own to compile at its first
    task (with writable copies of the screen's read-only arrays there were several)."""
    monkeypatch.undo()  # (the run's own chunks: the compiled screen is planned with them)
    monkeypatch.setenv("GCTOOL_COMPILED", "1")  # (the worker processes inherit it)
    code = gctool.design("cyclic", n=30, s=5)
    ref = verify(code, method="exhaustive", jobs=1)
    with LocalCluster(**local_cluster_options(1)) as procs, Client(procs) as client:
        runner = DaskRunner(scheduler=procs.scheduler_address, key="sigs")
        assert same(verify(code, method="exhaustive", runner=runner)) == same(ref)
        assert runner.stats["dask_tasks"] >= 1
        (theirs,) = client.run(_kernel_signatures).values()
    ours = _kernel_signatures()
    assert any("screen_range" in name for name in theirs), theirs
    assert {k: v - ours.get(k, set()) for k, v in theirs.items() if v - ours.get(k, set())} \
        == {}


def test_a_worker_is_charged_the_kernels_of_a_kind_it_has_not_loaded(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The workers of a scheduler are charged loading the compiled kernels of the run's kind
    (gctool.compiled.Kind) until they have: a worker process that has run a GF(2^5) verify is
    charged nothing for another one, and KIND_LOAD_NS (reading the real screen's kernels from
    numba's cache), not nothing, for a real verify, and for a complex one; once it has run the
    real verify, nothing for it either.  Reports equal the local runs'."""
    from gctool.audit import kernels
    from gctool.audit.distributed import kernels_load_ns, start_words
    from gctool.budget import KERNELS_LOAD_NS, KIND_LOAD_NS

    monkeypatch.undo()  # (the run's own chunks: the compiled walks are planned with them)
    monkeypatch.setenv("GCTOOL_COMPILED", "1")  # (the worker process inherits it)
    gf = gctool.design("cyclic-mds", n=31, s=4, field="GF(2^5)")  # 31,465 sets
    real = gctool.design("cyclic", n=30, s=4)  # 27,405 sets: both beyond the local pilot
    refs = [verify(code, method="exhaustive", jobs=1) for code in (gf, real)]
    with LocalCluster(**local_cluster_options(1)) as procs, Client(procs) as client:
        address = procs.scheduler_address

        def charged(kind: Any) -> float:
            with DaskRunner(scheduler=address) as asking:  # (a session asks its workers)
                return kernels_load_ns(asking, kind)

        def on_worker(kind: Any) -> bool:
            (loaded,) = client.run(kind.loaded).values()
            return bool(loaded)

        assert charged(kernels.GF) >= KERNELS_LOAD_NS  # a fresh worker: no kernel loaded
        runner = DaskRunner(scheduler=address, key="gf")
        assert same(verify(gf, method="exhaustive", runner=runner)) == same(refs[0])
        assert runner.stats["dask_tasks"] >= 1
        assert on_worker(kernels.GF) and not on_worker(kernels.REAL)
        assert charged(kernels.GF) == 0.0
        assert charged(kernels.REAL) == charged(kernels.COMPLEX) == KIND_LOAD_NS
        with DaskRunner(scheduler=address) as asking:
            words = start_words(asking, kernels.REAL)
        assert words == "with loading the compiled kernels on the Dask workers (about 50 ms)"
        runner = DaskRunner(scheduler=address, key="real")
        assert same(verify(real, method="exhaustive", runner=runner)) == same(refs[1])
        assert on_worker(kernels.REAL)
        assert charged(kernels.REAL) == charged(kernels.GF) == 0.0
        assert charged(kernels.COMPLEX) == KIND_LOAD_NS


def test_a_session_remembers_the_kinds_its_cluster_loaded(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A local cluster's workers are never asked: a session remembers the kinds of kernels
    its enumerations loaded there (through the runner each is given, the calls faked here),
    charging KIND_LOAD_NS for another kind and nothing for theirs, until its cluster is
    replaced (a fresh one: the whole load and import again); an enumeration whose kind is not
    named counts as any kind, as before kinds were named."""
    from gctool.audit import kernels
    from gctool.audit.distributed import WORKER_IMPORT_NS, estimated, kernels_load_ns
    from gctool.budget import KERNELS_LOAD_NS, KIND_LOAD_NS

    monkeypatch.setattr(DaskRunner, "__call__", lambda self, *a: None)
    fresh = KERNELS_LOAD_NS + WORKER_IMPORT_NS
    session = DaskRunner()
    session._session_client = object()
    assert kernels_load_ns(session, kernels.GF) == fresh
    estimated(session, 1.0, kernels.GF)(None, [], 1, lambda i, r: False)
    assert kernels_load_ns(session, kernels.GF) == 0.0
    assert kernels_load_ns(session, kernels.REAL) == KIND_LOAD_NS
    assert kernels_load_ns(session, kernels.SPECTRA) == KIND_LOAD_NS
    assert kernels_load_ns(session, False) == 0.0
    estimated(session, 1.0, kernels.REAL)(None, [], 1, lambda i, r: False)
    assert kernels_load_ns(session, kernels.REAL) == 0.0
    session._session_client = object()  # its connection lost: a new cluster
    assert kernels_load_ns(session, kernels.REAL) == kernels_load_ns(session, True) == fresh
    estimated(session, 1.0, True)(None, [], 1, lambda i, r: False)
    assert kernels_load_ns(session, kernels.COMPLEX) == 0.0


def test_the_workers_query_gives_up_at_its_time_limit(
        cluster: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The question whether the workers have loaded a kind of kernels (before an estimate) is
    bounded by ASK_S: workers that do not answer in time count as fresh (the whole import and
    load charged), and the estimate does not wait for them.  (Why the query keeps Dask's
    Client._run under Client.sync's time limit: the public Client.run has none.)"""
    import asyncio

    import gctool.audit.distributed as dist
    from gctool.audit import kernels

    async def silent(kind: Any = None) -> int:
        await asyncio.sleep(3.0)
        return dist.LOADED

    monkeypatch.setattr(dist, "_worker_state_here", silent)
    monkeypatch.setattr(dist, "ASK_S", 0.3)
    with DaskRunner(scheduler=cluster.scheduler_address) as runner:
        with runner._client(1):  # (the session's client, connected before the clock)
            pass
        t0 = time.monotonic()
        assert runner.workers_state(kernels.REAL) == dist.FRESH
        assert time.monotonic() - t0 < 2.0


def test_a_worker_deciding_orbit_sets_loads_only_their_kernels(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A fresh worker process that rebuilds the attack oracle for tasks of given sets (one per
    rotation orbit) plans the oracle as the client did, for given sets: it loads the optimal
    decoder's kernel of given sets alone, not the walk's kernels it never calls; so the charge
    for a later walk on it is KIND_LOAD_NS (reading the walk's kernels), as it really costs,
    and nothing for the given kind.  The report is the local run's."""
    from gctool.audit import exhaustive, kernels
    from gctool.audit.distributed import kernels_load_ns
    from gctool.budget import KIND_LOAD_NS

    monkeypatch.undo()  # (the run's own chunks: the compiled kernels are planned with them)
    monkeypatch.setenv("GCTOOL_COMPILED", "1")  # (the worker process inherits it)
    monkeypatch.setattr(exhaustive, "orbits_pay", lambda n, s, rot, *a, **kw: rot is not None)
    code = gctool.design("cyclic-mds", n=14, s=4)
    ref = attack(code, 4, method="exhaustive", jobs=1)
    given, walk = kernels.attack_kind(False, False, given=True), kernels.attack_kind(False, False)
    with LocalCluster(**local_cluster_options(1)) as procs, Client(procs) as client:
        address = procs.scheduler_address
        runner = DaskRunner(scheduler=address, key="orbits")
        assert same(attack(code, 4, method="exhaustive", runner=runner)) == same(ref)
        assert runner.stats["dask_tasks"] >= 1
        (theirs,) = client.run(_kernel_signatures).values()
        with DaskRunner(scheduler=address) as asking:  # (a session asks its workers)
            charged = {kind: kernels_load_ns(asking, kind) for kind in (given, walk)}
    assert "gctool.audit.kernels.optimal.hat_errors" in theirs, theirs
    assert not any(name.endswith(("hat_range", "bracket_range")) for name in theirs), theirs
    assert charged == {given: 0.0, walk: KIND_LOAD_NS}
