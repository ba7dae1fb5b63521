"""The one way the tests run the command line (a plain helper module, not a test module):
:func:`run` invokes ``gctool ARGS`` in this process with click's runner and returns its result
(exit code, stdout and stderr apart); :func:`gctool_process` runs ``python -m gctool ARGS`` in a
child process (the real entry point, for what only a process shows); :func:`probe` runs
gctool's command group in a child process with one more command that the test writes (signals
at a chosen moment).  Also what the executor tests share: a code with exact ties
(:func:`tied_code`) and a report without what differs between executors (:func:`same_report`),
and the runs whose parts share one budget (:func:`shared_runs`); the peak memory of one call
(:func:`traced`); the thread runs of a test (:func:`thread_runs`); the join of a test's thread
that fails instead of waiting for ever (:func:`joined`); a scheme's code without design's
conditioning record (:func:`built`); a task stopped in a pool thread (:func:`stopped_in_pool`)
and slowed batches (:func:`slowed_calls`)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from gctool.cli.main import cli


def run(*args: str, input: str | bytes | None = None,
        env: Mapping[str, str | None] | None = None) -> Result:
    """``gctool ARGS`` (``input``: its stdin; ``env``: environment changes).  Exceptions are
    not swallowed: the CLI's own mapping to exit codes (``_guarded``) is what is tested."""
    return CliRunner().invoke(cli, list(args), input=input, env=env, catch_exceptions=False)


def gctool_process(*args: str, shell: str = "", env: Mapping[str, str] | None = None,
                   text: bool = True, timeout: float = 120,
                   **kw: Any) -> subprocess.CompletedProcess[Any]:
    """``python -m gctool ARGS`` in a fresh interpreter: the real entry point, for what only a
    process shows (its file descriptors, memory limit, native output and exit status).
    ``shell``: redirections in bash syntax (the command then runs under ``bash -c``);
    ``env``: changes to this process's environment; stdout and stderr are captured unless
    given; other keywords go to :func:`subprocess.run`."""
    argv = [sys.executable, "-m", "gctool", *args]
    if shell:
        argv = ["bash", "-c", f'"$@" {shell}', "-", *argv]
    kw.setdefault("stdout", subprocess.PIPE)
    kw.setdefault("stderr", subprocess.PIPE)
    return subprocess.run(argv, text=text, timeout=timeout, check=False,
                          env=None if env is None else {**os.environ, **env}, **kw)


#: the module a probe runs: gctool's command group with one more command, ``probe``, whose body
#: the test writes; ``kill(sig)`` signals the process itself
PROBE = """\
import os, signal, sys, time
from gctool.cli.main import cli

def kill(sig=signal.SIGINT):
    os.kill(os.getpid(), sig)
    time.sleep(0.05)  # the handler runs here at the latest

@cli.command("probe")
def probe():
"""


def probe(tmp_path: Path, body: str) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of ``gctool probe`` whose body is ``body`` (Python, any
    indentation; see :data:`PROBE`), in a child process with SIGINT at its default action.
    It runs as ``python -m`` (as the tests of gctool do; the exit of -m is the one CPython
    turns into a kill by SIGINT after an unhandled plain KeyboardInterrupt)."""
    code = PROBE + textwrap.indent(textwrap.dedent(body), "    ") + "\ncli.main(['probe'])\n"
    (tmp_path / "probe.py").write_text(code)
    proc = subprocess.run([sys.executable, "-m", "probe"], capture_output=True, text=True,
                          timeout=60, cwd=tmp_path,
                          preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    return proc.returncode, proc.stdout, proc.stderr


def small_chunks(monkeypatch: pytest.MonkeyPatch, chunk: int, *, processes: bool = False,
                 frames: bool = False) -> None:
    """Many rank-range tasks on small codes: every verify kernel and attack oracle cuts its
    range into ``chunk`` sets (the chunk size is read where the tasks are made); ``processes``:
    the local executor really uses its processes however short the run; ``frames``: encoded
    frames' spectra too."""
    import importlib

    from gctool.audit import nullspace as ns
    from gctool.audit import oracles as dec

    for cls in (ns.FloatNullKernel, ns.DirectKernel, ns.GFNullKernel, ns.GFDirectKernel,
                dec.Oracle, dec.OptimalOracle):
        monkeypatch.setattr(cls, "chunk_size", lambda self, s, given=False: chunk)
    if processes:
        for module in ("gctool.audit.verify.enumeration", "gctool.engine.parallel"):
            monkeypatch.setattr(importlib.import_module(module), "PARALLEL_MIN_S", 0.0)
    if frames:
        monkeypatch.setattr(importlib.import_module("gctool.audit.spectrum").Frame, "chunk",
                            lambda self, s: chunk)


def tied_code() -> Any:
    """Cyclic repetition support with equal entries (n = 12, s = 2): many straggler sets tie
    exactly, and rotations map the code to itself."""
    import numpy as np

    from gctool.algebra.fields import parse_field
    from gctool.model import GradientCode

    n = 12
    B = np.zeros((n, n))
    for i in range(n):
        B[i, [i, (i + 1) % n, (i + 2) % n]] = 1.0
    return GradientCode(B, parse_field("real"), 2)


def same_report(report: Any) -> dict[str, Any]:
    """A report's document without its time, jobs and estimate (what executors may change)."""
    d: dict[str, Any] = report.to_dict()
    for k in ("elapsed_s", "jobs", "estimate"):
        d.pop(k, None)
    return d


def shared_runs(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every :class:`gctool.budget.SharedWork` made from now on (as bench_budget's Recorder
    keeps them)."""
    from gctool.budget import SharedWork

    made: list[SharedWork] = []
    real = SharedWork.__init__

    def spy(self: SharedWork, *args: Any, **kwargs: Any) -> None:
        real(self, *args, **kwargs)
        made.append(self)

    monkeypatch.setattr(SharedWork, "__init__", spy)
    return made


def stage_sets(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """The straggler sets the compiled real walk sends to its second stage (``settle``) and to
    the direct decoder (``direct``) from now on, counted as they go (not timed)."""
    from gctool.audit.kernels import real

    counted = {"settle": 0, "direct": 0}

    def counting(stage: str) -> Any:
        original = getattr(real.RealScreen, stage)

        def count(self: object, S: Any, *args: object) -> object:
            counted[stage] += S.shape[0]
            return original(self, S, *args)
        return count

    for stage in counted:
        monkeypatch.setattr(real.RealScreen, stage, counting(stage))
    return counted


def budget_clock(monkeypatch: pytest.MonkeyPatch, thread_time: Callable[[], float]) -> None:
    """Give ``gctool.budget`` alone (its timed probes) the CPU clock ``thread_time``, through a
    copy of the ``time`` module: the module itself stays, so the oracle's decoder timing
    (``Oracle.errors``) and the threads of earlier runs read the real clock and take no tick
    of a counting fake (patching ``time.thread_time`` itself let them: the timed attack probe
    then read 3 ticks where it reads 1, now and then, in a whole run)."""
    import time
    import types

    from gctool import budget

    clock = types.ModuleType("time")
    clock.__dict__.update(time.__dict__)
    clock.thread_time = thread_time  # type: ignore[attr-defined]
    monkeypatch.setattr(budget, "time", clock)


def traced(call: Callable[[], Any]) -> tuple[Any, int]:
    """(what ``call()`` returned or raised, its peak traced bytes (tracemalloc) above those
    held before it)."""
    import tracemalloc

    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        try:
            out = call()
        except Exception as exc:  # noqa: BLE001 (returned for the caller to check)
            out = exc
        return out, tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def thread_runs(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """The (jobs, tasks) of every run of :func:`gctool.engine.threads.run_threads` from here on
    (each still runs)."""
    from gctool.engine import threads

    runs: list[tuple[int, int]] = []
    real = threads.run_threads

    def spy(worker: Any, tasks: Any, jobs: int, on_result: Any) -> None:
        runs.append((jobs, len(tasks)))
        real(worker, tasks, jobs, on_result)

    monkeypatch.setattr(threads, "run_threads", spy)
    return runs


def joined(thread: threading.Thread, within: float = 120) -> None:
    """Join ``thread``: the test fails if it has not ended within ``within`` seconds (a bound
    for a hang, not a speed figure)."""
    thread.join(within)
    assert not thread.is_alive(), f"thread {thread.name} still running after {within:g} s"


def built(scheme: str, n: int, s: int, seed: int = 0, field: str = "real") -> Any:
    """The code of ``gctool.design(scheme, n=n, s=s, seed=seed, field=field)`` (the same B and
    construction params) from the scheme's construction alone: without design's conditioning
    record (``worst_condition``) and self-check, for a test that reads neither.  The record
    screens every s-set: is-cr n=48 s=5's ties leave its 1.7 M sets to numpy, 15-30 s."""
    import numpy as np

    from gctool.algebra.fields import parse_field
    from gctool.budget import Budget
    from gctool.model import GradientCode
    from gctool.registry import SCHEMES

    fld = parse_field(field)
    B, params = SCHEMES[scheme].build(n=n, s=s, k=None, field=fld,
                                      rng=np.random.default_rng(seed), budget=Budget())
    assert not any(key.startswith("_") for key in params), params  # design's own keys
    return GradientCode(B, fld, s, scheme, params=params)


def slowed_calls(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str,
                 pause: float = 0.02) -> list[int]:
    """``owner.name`` (a method of a class, or a function of a module or an object) made to
    take ``pause`` s more each call; returns the list each call appends the rows of its first
    array argument to (a test of where a stopped run's numpy route ends counts its
    batches)."""
    import time

    calls: list[int] = []
    real = getattr(owner, name)

    def slowed(*args: Any, **kw: Any) -> Any:
        calls.append(next(a.shape[0] for a in args if hasattr(a, "shape")))
        time.sleep(pause)
        return real(*args, **kw)

    monkeypatch.setattr(owner, name, slowed)
    return calls


def slowed_hat_batches(monkeypatch: pytest.MonkeyPatch, pause: float = 0.02) -> list[int]:
    """The optimal oracle's fast path made to decide given sets two at a time, each batch
    ``pause`` s long (:func:`slowed_calls`)."""
    from gctool.audit.oracles.optimal import OptimalOracle

    monkeypatch.setattr(OptimalOracle, "_batch", lambda self, s: 2)
    return slowed_calls(monkeypatch, OptimalOracle, "_hat_chunk", pause)


def stopped_in_pool(walk: Callable[[], Any], pause: float) -> str:
    """Run ``walk()`` as task 0 of a run in another thread, stop the run ``pause`` seconds
    after the task started, and say how the task ended: 'done', or 'cancelled' (it raised
    :class:`~gctool.engine.threads.Cancelled`, its result dropped)."""
    import time

    from gctool.engine.threads import Cancelled, TaskOrder, set_task

    order, started, outcome = TaskOrder(), threading.Event(), []

    def job() -> None:
        set_task(order, 0)
        started.set()
        try:
            walk()
            outcome.append("done")
        except Cancelled:
            outcome.append("cancelled")
        finally:
            set_task(None)

    thread = threading.Thread(target=job)
    thread.start()
    assert started.wait(120), "the task did not start within 120 s"
    time.sleep(pause)  # (the walk is under way: its flag is read while it runs)
    order.stop()
    joined(thread)
    return outcome[0]
