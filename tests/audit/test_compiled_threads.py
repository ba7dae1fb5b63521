"""``--jobs`` of the compiled walks runs in threads (:mod:`gctool.engine.threads`): every verdict,
counterexample, worst set, exactness label and diagnostic is the same for any number of jobs,
the exact-arithmetic budget runs out at the same set, and an interrupt stops the run.

The tasks are made tiny (a few sets each) so that even small codes give many tasks and the
threads really interleave; ``GCTOOL_COMPILED=1`` forces the compiled walks."""

from __future__ import annotations

import _thread
import signal
import threading
import time
from collections.abc import Iterator
from math import comb
from typing import Any

import numpy as np
import pytest

from gctool import exactls
from gctool.audit import nullspace as ns
from gctool.audit.attack import attack, threshold
from gctool.audit.verify import enumeration, verify
from gctool.codes import design
from gctool.engine import threads
from gctool.engine.threads import TaskOrder, in_task_order, set_task
from gctool.errors import SearchInterrupted

from corpus import adversarial_corpus, code_of
from helpers import thread_runs
from kernel_corpus import attack_codes, gf_codes, random_codes, walk_codes

JOBS = (1, 2, 3)


@pytest.fixture
def tiny_tasks(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """Compiled walks, tasks of 16 sets, threads whatever the run's size; records the
    (jobs, tasks) of every thread run (and of every pool started ahead)."""
    monkeypatch.setenv("GCTOOL_COMPILED", "1")
    monkeypatch.setattr(ns, "COMPILED_CHUNK", 16)
    monkeypatch.setattr(ns, "COMPILED_PILOT", 5)
    monkeypatch.setattr(enumeration, "THREADS_MIN_S", 0.0)
    monkeypatch.setattr(enumeration, "GUIDED", 1)
    runs = thread_runs(monkeypatch)
    ahead = threads.Ahead.__init__

    def spy_ahead(self: Any, worker: Any, tasks: Any, jobs: int, *args: Any, **kw: Any) -> None:
        runs.append((jobs, len(tasks)))
        ahead(self, worker, tasks, jobs, *args, **kw)

    monkeypatch.setattr(threads.Ahead, "__init__", spy_ahead)
    return runs


def _verify_doc(code: Any, s: int, jobs: int, **kw: Any) -> dict[str, Any]:
    doc = verify(code, s, jobs=jobs, **kw).to_dict()
    for key in ("elapsed_s", "jobs", "estimate"):
        doc.pop(key, None)
    return doc


def _verify_codes() -> list[tuple[str, Any, int]]:
    real = [(name, code, s) for name, code, s in random_codes() + walk_codes()]
    corpus = [(name, code_of(B, s, field), s) for name, B, s, field in adversarial_corpus()]
    return real + corpus + gf_codes()


def _busy_carriers(wait: float = 30.0) -> set[int | None]:
    """The job threads not back in the carriers' idle list after up to ``wait`` seconds."""
    deadline = time.monotonic() + wait
    while True:
        busy = {t.ident for t in threading.enumerate() if t.name.startswith("gctool-job")}
        busy -= set(threads.Carrier._idle_idents())
        if not busy or time.monotonic() > deadline:
            return busy
        time.sleep(0.01)


@pytest.mark.parametrize("name,code,s", _verify_codes(), ids=[c[0] for c in _verify_codes()])
def test_verify_is_the_same_for_any_jobs(tiny_tasks: list[tuple[int, int]], name: str,
                                         code: Any, s: int) -> None:
    """The whole report (verdict, counterexample, counts, exactness, every diagnostic and its
    sets) is identical, float for float, with 1, 2 and 3 jobs."""
    for t in range(max(1, s - 1), s + 2):
        docs = [_verify_doc(code, t, jobs, method="exhaustive") for jobs in JOBS]
        assert docs[1] == docs[0] and docs[2] == docs[0], t


@pytest.mark.parametrize("name,s", [("fails-mid", 3), ("square", 4), ("cyclic-mds", 4)])
def test_the_compiled_walks_run_in_threads(tiny_tasks: list[tuple[int, int]], name: str,
                                           s: int) -> None:
    """A run through the middle of the enumeration (a counterexample at rank 123 of 220, or
    none) is shared by the threads, many tasks each."""
    code = {c[0]: c[1] for c in _verify_codes()}[name]
    one, two = _verify_doc(code, s, 1, method="exhaustive"), _verify_doc(code, s, 2,
                                                                         method="exhaustive")
    assert one == two and two["kernel"] == "nullspace"
    # the walk's pool (the closing re-evaluation may run a small one after it)
    assert any(jobs == 2 and tasks > 5 for jobs, tasks in tiny_tasks)


def _tiny_probe(monkeypatch: pytest.MonkeyPatch) -> None:
    """verify's budget probe on runs of 32 sets or more, of 8 sets (3 first)."""
    from gctool import budget

    monkeypatch.setattr(budget, "PROBE", 8)
    monkeypatch.setattr(budget, "PROBE_MIN", 4)
    monkeypatch.setattr(budget, "PROBE_FIRST", 3)
    real = budget.probe_rate
    monkeypatch.setattr(enumeration, "probe_rate",
                        lambda walk, stop, size, over, **kw: real(walk, stop, size, over,
                                                                  least=32))


@pytest.mark.parametrize("name,code,s", _verify_codes(), ids=[c[0] for c in _verify_codes()])
def test_the_probed_ranges_are_folded_not_walked_again(
        tiny_tasks: list[tuple[int, int]], monkeypatch: pytest.MonkeyPatch, name: str,
        code: Any, s: int) -> None:
    """The budget's probe (ranges spread over the space, timed before the threads
    start) is folded in its place instead of being walked again: the report is the one of a
    run without the probe, for any jobs, whether the first failing set lies before, inside
    or after the probed range (then the run needs no task after it)."""

    real_run = enumeration.Probed.run
    used: list[tuple[int, int, int]] = []

    def spy(self: Any, task: Any) -> Any:
        if (task[1], task[2]) in self.summaries:
            used.append(task)
        return real_run(self, task)

    monkeypatch.setattr(enumeration.Probed, "run", spy)
    for t in range(max(1, s - 1), s + 2):
        monkeypatch.setattr(enumeration, "probe_rate", lambda *a, **k: None)  # no probe
        plain = [_verify_doc(code, t, jobs, method="exhaustive") for jobs in JOBS]
        monkeypatch.undo()  # tiny_tasks' settings again, and the probe on tiny sizes
        monkeypatch.setenv("GCTOOL_COMPILED", "1")
        monkeypatch.setattr(ns, "COMPILED_CHUNK", 16)
        monkeypatch.setattr(ns, "COMPILED_PILOT", 5)
        monkeypatch.setattr(enumeration, "THREADS_MIN_S", 0.0)
        monkeypatch.setattr(enumeration.Probed, "run", spy)
        _tiny_probe(monkeypatch)
        used.clear()
        probed = [_verify_doc(code, t, jobs, method="exhaustive") for jobs in JOBS]
        assert probed == plain, t
        if plain[0]["checked"] > plain[0]["total"] // 2 + 8 >= 24:  # past the probe
            assert used, t  # the probe's ranges were folded (2 per run unless it fails)


def test_no_probe_when_even_the_worst_case_fits_the_budget(
        tiny_tasks: list[tuple[int, int]], monkeypatch: pytest.MonkeyPatch) -> None:
    """A raised budget that a walk fits even with every set on the numpy route and the whole
    exact allowance spent runs no probe (it could refuse nothing); the default one does."""

    _tiny_probe(monkeypatch)
    real = enumeration.probe_rate
    calls: list[int] = []

    def spy(*args: Any, **kw: Any) -> Any:
        calls.append(1)
        return real(*args, **kw)

    monkeypatch.setattr(enumeration, "probe_rate", spy)
    code = design("cyclic", n=12, s=3, seed=1)
    default = _verify_doc(code, 3, 2, method="exhaustive")
    assert calls == [1]
    monkeypatch.setenv("GCTOOL_MAX_WORK", "300h")
    assert _verify_doc(code, 3, 2, method="exhaustive") == default and calls == [1]


def test_attack_runs_no_probe_when_even_the_worst_case_fits_the_budget(
        tiny_tasks: list[tuple[int, int]], monkeypatch: pytest.MonkeyPatch) -> None:
    """The exhaustive attack's timed probe (walked in the caller's thread before the threads
    start) is skipped when the budget holds the compiled walk even with every set on the numpy
    route and the SVD decoder and the exact allowance spent, for the worst case and for each
    size of a threshold search; the default budget probes.  Same results either way."""
    from gctool.audit import exhaustive

    real = exhaustive.probe_rate
    calls: list[int] = []

    def spy(*args: Any, **kw: Any) -> Any:
        calls.append(args[1])
        return real(*args, **kw)

    monkeypatch.setattr(exhaustive, "probe_rate", spy)
    code = design("cyclic", n=20, s=4, seed=1)  # C(20, 4) = 4,845 sets: probed by default
    runs = []
    for max_work in (None, "300h"):
        if max_work is not None:
            monkeypatch.setenv("GCTOOL_MAX_WORK", max_work)
        calls.clear()
        worst = attack(code, 4, method="exhaustive", symmetry=False, jobs=2)
        probed = list(calls)
        found = threshold(code, method="exhaustive", epsilon=0.0, symmetry=False, jobs=2)
        runs.append(((worst.stragglers, worst.raw_error, worst.checked),
                     (found.threshold, found.stragglers, found.checked), probed, list(calls)))
    (w0, t0, probed0, all0), (w1, t1, probed1, all1) = runs
    assert (w1, t1) == (w0, t0)
    assert probed0 == [comb(20, 4)] and len(all0) > 1  # the default budget probes
    assert probed1 == [] and all1 == []


@pytest.mark.parametrize("name,code", attack_codes(), ids=[c[0] for c in attack_codes()])
def test_attack_is_the_same_for_any_jobs(tiny_tasks: list[tuple[int, int]], name: str,
                                         code: Any) -> None:
    for s in (code.s, code.s + 2):
        runs = [attack(code, s, method="exhaustive", symmetry=False, jobs=j) for j in JOBS]
        first = runs[0]
        for r in runs[1:]:
            assert (r.stragglers, r.raw_error, r.exact, r.method, r.checked) == \
                (first.stragglers, first.raw_error, first.exact, first.method, first.checked)
    for eps in (0.0, 0.3):
        runs = [threshold(code, method="exhaustive", epsilon=eps, symmetry=False, jobs=j)
                for j in JOBS]
        for r in runs[1:]:
            assert (r.threshold, r.stragglers, r.exact, r.checked) == \
                (runs[0].threshold, runs[0].stragglers, runs[0].exact, runs[0].checked)
    if name in ("cyclic", "complex"):  # the compiled walk of the optimal decoder applies
        assert any(jobs > 1 and tasks > 1 for jobs, tasks in tiny_tasks)


def test_the_worst_case_walk_starts_while_its_probe_times_it(
        tiny_tasks: list[tuple[int, int]], monkeypatch: pytest.MonkeyPatch) -> None:
    """attack -s on two threads: the compiled walk's tasks start before the timed probe
    (a pool started ahead) and the result is the one of a single job; a search the probe then
    refuses drops them: it raises the refusal, folds nothing (no progress), counts none of
    their sets, and leaves no pool thread busy."""
    from gctool.audit import exhaustive
    from gctool.errors import BudgetExceeded

    monkeypatch.setattr(exhaustive, "worst_fits", lambda *a: False)  # the probe runs
    code = design("cyclic", n=16, s=3, seed=2)
    one = attack(code, 4, method="exhaustive", symmetry=False, jobs=1)
    tiny_tasks.clear()
    two = attack(code, 4, method="exhaustive", symmetry=False, jobs=2)
    assert (two.stragglers, two.raw_error, two.checked) == \
        (one.stragglers, one.raw_error, one.checked)
    assert tiny_tasks and tiny_tasks[0][0] == 2  # started ahead: no run_threads after it
    assert len(tiny_tasks) == 1

    probed: list[int] = []

    def slow(*args: Any) -> float:  # the probe says a year (after the tasks started)
        probed.append(len(tiny_tasks))
        time.sleep(0.05)
        return 3.2e7

    monkeypatch.setattr(exhaustive, "probe_time", slow)
    from gctool.audit.oracles import make_oracle

    oracle = make_oracle(code)
    seen: list[int] = []
    with pytest.raises(BudgetExceeded):
        exhaustive.worst(oracle, 4, symmetry=False, jobs=2,
                         progress=lambda done, total: seen.append(done))
    assert probed == [2] and seen == [] and oracle.evaluations == 0
    assert not _busy_carriers()


def test_the_exact_budget_runs_out_at_the_same_set(tiny_tasks: list[tuple[int, int]],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """FRC(12, 2) at tolerance 1/4: every set holding a whole group has error k/4 = tol * k
    exactly, which float64 cannot decide, so 144 sets spread over the enumeration are decided
    in exact arithmetic.  With a budget for 50 of them the run stops at the 51st, with the
    same message, for any number of jobs; without the cap, every report is the same."""
    code = design("frc", 12, 2)
    full = [_verify_doc(code, 5, jobs, method="exhaustive", tol=0.25) for jobs in JOBS]
    assert full[0]["ok"] and full[1] == full[0] and full[2] == full[0]
    each = 7 * 12 * 7  # f * K * min(f, K) for the 7 survivors
    monkeypatch.setattr(exactls, "MAX_TOTAL_WORK", 50 * each + 1)
    messages = []
    for jobs in JOBS:
        with pytest.raises(exactls.Undecided) as err:
            verify(code, 5, method="exhaustive", tol=0.25, jobs=jobs)
        messages.append(str(err.value))
    assert "(50 sets already decided exactly)" in messages[0]
    assert messages == [messages[0]] * len(JOBS)
    assert any(jobs > 1 and tasks > 10 for jobs, tasks in tiny_tasks)


# -- the runner ---------------------------------------------------------------------------------
class _Charging:
    """Tasks that charge a shared list in task order (as the exact meter does) after an uneven
    amount of other work, and may raise."""

    def __init__(self, fail_at: int | None = None) -> None:
        self.charged: list[int] = []
        self.started: list[int] = []
        self.fail_at = fail_at

    def run(self, task: int) -> int:
        self.started.append(task)
        time.sleep(0.001 * ((task * 7) % 5))
        if task == self.fail_at:
            raise ValueError(f"task {task}")
        in_task_order()
        self.charged.append(task)
        return task * task


@pytest.mark.parametrize("jobs", [1, 2, 3, 5])
def test_run_threads_folds_in_order_and_charges_in_order(jobs: int) -> None:
    worker = _Charging()
    seen: list[tuple[int, int]] = []
    threads.run_threads(worker, list(range(40)), jobs, lambda i, r: seen.append((i, r)) or False)
    assert seen == [(i, i * i) for i in range(40)]
    assert worker.charged == list(range(40))


@pytest.mark.parametrize("jobs", [1, 2, 3])
def test_run_threads_stops_early_without_charging_later_tasks(jobs: int) -> None:
    worker = _Charging()
    seen: list[int] = []

    def fold(i: int, r: int) -> bool:
        seen.append(i)
        return i == 9

    threads.run_threads(worker, list(range(40)), jobs, fold)
    assert seen == list(range(10))
    assert worker.charged == list(range(10))  # later tasks may have started, never charged
    assert max(worker.started) < 10 + threads.AHEAD * jobs + 1


@pytest.mark.parametrize("jobs", [1, 2, 3])
def test_run_threads_raises_at_the_failing_task(jobs: int) -> None:
    worker = _Charging(fail_at=7)
    seen: list[int] = []
    with pytest.raises(ValueError, match="task 7"):
        threads.run_threads(worker, list(range(40)), jobs, lambda i, r: seen.append(i) or False)
    assert seen == list(range(7)) and worker.charged == list(range(7))


def test_the_pools_threads_wait_for_the_next_pool() -> None:
    """A pool's threads (beside the caller's, one of its ``jobs``) are idle carriers
    afterwards: the next pool runs on them (no thread started), named as its own while they
    run its tasks; a forked child starts its own."""
    import os

    class Who:
        def run(self, task: int) -> tuple[int, str]:
            time.sleep(0.001)
            return threading.get_ident(), threading.current_thread().name

    def idents() -> tuple[set[int], set[str]]:
        seen: list[tuple[int, str]] = []
        threads.run_threads(Who(), list(range(12)), 2, lambda i, r: seen.append(r) or False)
        return {r[0] for r in seen}, {r[1] for r in seen}

    me = threading.get_ident()
    first, names = idents()
    assert names <= {threading.current_thread().name, "gctool-job-1"}
    assert len(first - {me}) == 1  # --jobs 2: the caller and one other thread
    count = threading.active_count()
    again, _ = idents()
    assert again - {me} <= set(threads.Carrier._idle_idents())
    assert threading.active_count() == count
    pid = os.fork()
    if pid == 0:  # pragma: no cover  (the child reports through its exit status)
        ok = False
        try:
            signal.alarm(20)  # a pool waiting for the parent's threads would hang: killed
            alone = threading.active_count()  # the parent's carriers are not in the child
            ok = len(idents()[0]) >= 1 and threading.active_count() > alone
        finally:
            os._exit(0 if ok else 1)
    assert os.waitpid(pid, 0)[1] == 0


_REAL = [c for c in _verify_codes() if not c[1].field.is_finite]


@pytest.mark.parametrize("name,code,s", _REAL, ids=[c[0] for c in _REAL])
def test_the_shared_reevaluation_equals_one_call(name: str, code: Any, s: int) -> None:
    """verify's closing re-evaluation of the weakest sets, shared by the run's threads
    (:func:`~gctool.audit.verify.diagnostics.direct_parts`), gives every set the result of
    one call on all of them, float for float (ill-conditioned sets of the corpus included)."""
    from gctool.audit.verify.diagnostics import direct_parts
    from gctool.decode import Decoder
    from gctool.engine.enumeration import survivors_of, unrank_lex

    rng = np.random.default_rng(5)
    total = comb(code.n, s)
    ranks = np.sort(rng.choice(total, min(total, 17), replace=False)).astype(np.int64)
    F = survivors_of(unrank_lex(code.n, s, ranks), code.n)
    decoder = Decoder(code)
    whole = decoder.evaluate(F)
    for jobs in (2, 3):
        parts = direct_parts(decoder, F, jobs)
        assert len(parts) == (min(jobs, len(ranks) // 4) if len(ranks) >= 8 else 1)
        for key in ("error", "ok", "rank", "cond", "norm"):
            joined = np.concatenate([getattr(p, key) for p in parts])
            assert np.array_equal(joined, getattr(whole, key), equal_nan=True), (key, jobs)


def test_task_order_outside_a_pool_does_not_wait() -> None:
    """Run in a thread joined with a timeout, so that a wait fails the test instead of hanging
    the suite."""
    done = threading.Event()

    def body() -> None:
        in_task_order()  # a thread with no task: returns at once
        order = TaskOrder()
        set_task(order, 0)
        try:
            in_task_order()  # task 0 waits for nothing
        finally:
            set_task(None)
        done.set()

    thread = threading.Thread(target=body, daemon=True)
    thread.start()
    thread.join(timeout=30)
    assert done.is_set(), "in_task_order waited outside a pool"


class _Slow:
    def __init__(self) -> None:
        self.started = 0

    def run(self, task: int) -> int:
        self.started += 1
        time.sleep(0.02)
        return task


@pytest.fixture
def ctrl_c() -> Iterator[None]:
    """Python's own SIGINT handler (an earlier test may have left gctool's, which raises only
    once per run)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def test_an_interrupt_stops_the_thread_run(ctrl_c: None) -> None:
    """Ctrl-C reaches the caller's thread while it waits for a result: the run raises it,
    tasks stop being started, and the pool's threads are idle again once their task is
    done."""
    worker = _Slow()
    timer = threading.Timer(0.1, _thread.interrupt_main)
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        threads.run_threads(worker, list(range(1000)), 2, lambda i, r: False)
    started = worker.started
    assert started < 1000
    assert not _busy_carriers()
    assert worker.started <= started + 2


def test_an_interrupt_stops_a_threaded_verify(tiny_tasks: list[tuple[int, int]], ctrl_c: None,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """verify in threads turns Ctrl-C into its 'interrupted after checking ...' summary."""
    from gctool.audit.sweep import SweepWorker

    slow_run = SweepWorker.run
    timer, once = threading.Timer(0.1, _thread.interrupt_main), threading.Lock()

    def run(self: SweepWorker, task: Any) -> Any:
        # started by the first pool task (a slow start on a loaded machine comes before it)
        if threading.current_thread() is not threading.main_thread() and once.acquire(False):
            timer.start()
        time.sleep(0.01)
        return slow_run(self, task)

    monkeypatch.setattr(SweepWorker, "run", run)
    code = design("cyclic", n=16, s=4, seed=3)
    with pytest.raises(SearchInterrupted, match="interrupted after checking"):
        verify(code, 4, method="exhaustive", jobs=2)
    assert tiny_tasks and tiny_tasks[0][0] == 2
    np.testing.assert_equal(len(tiny_tasks), 1)


@pytest.mark.parametrize("start,stop,size", [(0, 1, 16), (5, 100, 16), (8192, 3_838_380, 65_536),
                                             (0, 10**7, 3), (7, 7, 4)])
@pytest.mark.parametrize("jobs", [1, 2, 4])
def test_guided_ranges_cover_the_range_in_shrinking_chunks(start: int, stop: int,
                                                           size: int, jobs: int) -> None:
    """Consecutive chunks covering the range, shrinking, between size/4 and 4 size, each at
    most 1/(2 jobs) of what is left unless that is below size/4."""
    from gctool.engine.enumeration import guided_ranges

    r = guided_ranges(start, stop, size, jobs)
    assert [a for a, _ in r[1:]] == [b for _, b in r[:-1]]  # consecutive
    assert (r[0][0], r[-1][1]) == (start, stop) if r else start == stop
    lengths = [b - a for a, b in r]
    assert all(max(1, size // 4) <= x <= 4 * size for x in lengths[:-1])
    assert lengths[:-1] == sorted(lengths[:-1], reverse=True)
    assert all(b - a <= max(1, size // 4, (stop - a) // (2 * jobs)) for a, b in r)
    if jobs > 1 and stop - start > 64 * size:  # fewer threads: fewer, larger chunks
        assert len(r) < len(guided_ranges(start, stop, size, 2 * jobs))


def test_a_remote_runner_gets_larger_tasks_of_compiled_walks(monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    """On a runner other than the local threads (Dask), a compiled walk's tasks hold
    ``REMOTE_CHUNKS`` chunks (a chunk's milliseconds are below a Dask task's overhead), for
    verify and for attack, and the results are those of the local run."""
    from gctool.engine.parallel import run_ordered

    monkeypatch.setenv("GCTOOL_COMPILED", "1")
    seen: list[list[int]] = []

    def runner(worker: Any, tasks: Any, jobs: int, on_result: Any) -> None:
        seen.append([b - a for _, a, b in tasks])
        run_ordered(worker, tasks, 1, on_result)

    code = design("cyclic", n=30, s=5, seed=1)
    big = ns.REMOTE_CHUNKS * ns.COMPILED_CHUNK
    local = verify(code, method="exhaustive", jobs=1)
    remote = verify(code, method="exhaustive", runner=runner)
    assert remote.ok == local.ok and remote.checked == local.checked
    assert remote.diagnostics == local.diagnostics
    assert seen and max(seen[-1]) == min(big, 142_506 - ns.COMPILED_PILOT)
    seen.clear()
    worst = attack(code, 5, method="exhaustive", symmetry=False, max_sets=10**7)
    far = attack(code, 5, method="exhaustive", symmetry=False, max_sets=10**7, runner=runner)
    assert (far.stragglers, far.error) == (worst.stragglers, worst.error)
    assert seen and seen[-1] == [142_506]  # one task of up to REMOTE_CHUNKS chunks


def test_an_attack_walk_task_holds_at_most_one_chunk(monkeypatch: pytest.MonkeyPatch) -> None:
    """The compiled attack walk's tasks hold one kernel chunk at most (larger ones cost the
    walk more per set): on local threads for any jobs, and on a Dask runner that groups its
    tasks into Dask tasks itself (the CLI's); a runner that sends each task alone gets
    ``REMOTE_CHUNKS`` chunks a task.  The tasks cover the ranks in order, and the worst set
    is the one-job run's."""
    from gctool.audit.attack.options import AttackOptions, oracle_for
    from gctool.audit.distributed import DaskRunner, estimated
    from gctool.audit.exhaustive import _plan

    monkeypatch.setenv("GCTOOL_COMPILED", "1")
    code = design("cyclic", n=30, s=5, seed=1)
    oracle = oracle_for(code, AttackOptions.of(None))
    chunk = oracle.chunk_size(5)
    stop = comb(30, 5)

    def sizes(runner: Any, jobs: int) -> list[int]:
        tasks = _plan(oracle, 5, None, jobs, runner, stop).tasks
        assert tasks[0][1] == 0 and tasks[-1][2] == stop
        assert all(a[2] == b[1] for a, b in zip(tasks, tasks[1:], strict=False))
        return [b - a for _, a, b in tasks]

    for jobs in (1, 2, 16):
        assert max(sizes(None, jobs)) <= chunk
    guided = DaskRunner(batch=4, guided=True)
    assert max(sizes(guided, 2)) <= chunk and max(sizes(estimated(guided, 1.0), 2)) <= chunk
    assert max(sizes(lambda *a: None, 2)) == min(stop, ns.REMOTE_CHUNKS * chunk)
    worst = attack(code, 5, method="exhaustive", symmetry=False, max_sets=10**7, jobs=1)
    for jobs in (2, 16):
        other = attack(code, 5, method="exhaustive", symmetry=False, max_sets=10**7, jobs=jobs)
        assert (other.stragglers, other.error) == (worst.stragglers, worst.error)


@pytest.mark.parametrize("name,code", attack_codes()[:3], ids=[c[0] for c in attack_codes()[:3]])
def test_a_threshold_size_started_ahead_changes_nothing(monkeypatch: pytest.MonkeyPatch,
                                                        name: str, code: Any) -> None:
    """Small sizes on the numpy route in the caller's thread, larger ones walked compiled in
    threads: the first two threaded sizes start while the caller still searches the size
    before (threads.Ahead), and the threshold, its witness, the counts and labels are those of one
    job; no thread is left behind, whether the started size is folded or dropped."""
    from gctool.audit import kernels

    monkeypatch.setattr(kernels, "MIN_SETS", 60)  # C(n, t) >= 60: compiled, threads
    monkeypatch.setattr(ns, "COMPILED_CHUNK", 16)
    started: list[int] = []
    sizes: list[int] = []
    real = threads.Ahead.__init__

    def spy(self: Any, worker: Any, tasks: Any, jobs: int, after: Any = None) -> None:
        started.append(len(tasks))
        sizes.append(worker.source.s)
        real(self, worker, tasks, jobs, after)

    monkeypatch.setattr(threads.Ahead, "__init__", spy)
    folded: list[int] = []
    real_run = threads.Ahead.run

    def spy_run(self: Any, worker: Any, tasks: Any, jobs: int, on_result: Any) -> None:
        folded.append(len(tasks))
        real_run(self, worker, tasks, jobs, on_result)

    monkeypatch.setattr(threads.Ahead, "run", spy_run)
    before = {t.ident for t in threading.enumerate()}
    for eps in (0.0, 0.3, 1e9):
        runs = [threshold(code, method="exhaustive", epsilon=eps, symmetry=False, jobs=j)
                for j in JOBS]
        for r in runs[1:]:
            assert (r.threshold, r.stragglers, r.raw_error, r.exact, r.checked) == \
                (runs[0].threshold, runs[0].stragglers, runs[0].raw_error, runs[0].exact,
                 runs[0].checked)
    # (the pools' threads stay as idle carriers for the next pool: the first test to start
    # threads leaves some)
    assert {t.ident for t in threading.enumerate()} - before <= set(
        threads.Carrier._idle_idents())
    if name in ("cyclic", "complex"):  # the compiled walk of the optimal decoder applies
        assert started and all(tasks > 1 for tasks in started) and folded
        # two sizes at a time (sweep.AHEAD_SIZES) while the caller searches the one before
        assert any(b == a + 1 for a, b in zip(sizes, sizes[1:], strict=False))


def test_a_threshold_size_takes_the_compiled_walk_when_the_next_one_does(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A size too small for the compiled walk by itself takes it when one of the next two
    sizes does (the kernels are loaded for those anyway): here size 4 walks by itself, sizes 2
    and 3 with it, size 1 takes the numpy route; the threshold and its witness are those of
    the numpy route, and every count and label is the same for any jobs."""
    from gctool.audit import kernels
    from gctool.audit.kernels.optimal import HatErrors

    code = design("cyclic", n=12, s=3, seed=1)
    monkeypatch.setenv("GCTOOL_COMPILED", "0")
    numpy_only = threshold(code, method="exhaustive", symmetry=False)
    monkeypatch.delenv("GCTOOL_COMPILED")
    monkeypatch.setattr(kernels, "MIN_SETS", 495)  # C(12, 4): size 4 alone would be compiled
    walked: list[int] = []
    real = HatErrors.walk

    def spy(self: Any, n: int, s: int, *args: Any) -> Any:
        walked.append(s)
        return real(self, n, s, *args)

    monkeypatch.setattr(HatErrors, "walk", spy)
    runs = [threshold(code, method="exhaustive", symmetry=False, jobs=j) for j in JOBS]
    assert numpy_only.threshold == 4
    assert set(walked) == {2, 3, 4}
    assert (runs[0].threshold, runs[0].stragglers) == (numpy_only.threshold,
                                                      numpy_only.stragglers)
    for r in runs[1:]:
        assert (r.threshold, r.stragglers, r.raw_error, r.exact, r.checked) == \
            (runs[0].threshold, runs[0].stragglers, runs[0].raw_error, runs[0].exact,
             runs[0].checked)
