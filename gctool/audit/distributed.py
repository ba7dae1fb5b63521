"""Run the exhaustive enumeration of ``verify`` and ``attack`` on a Dask cluster.

The straggler-set space is already cut into *rank ranges* by the engines
(:func:`gctool.audit.enumeration.rank_ranges`; a task is unranked on the worker, so no process
ever holds the list of sets).  This module only changes *where* the tasks run:

* :class:`DaskRunner` has the signature of :func:`gctool.audit.parallel.run_ordered`
  (``runner(worker, tasks, jobs, on_result)``).  Tasks are submitted to a Dask cluster (a
  bounded window of futures), results come back in any order and are handed to
  ``on_result`` **in task order**, so the merge (and therefore verdicts, worst sets and the
  tie-breaking) is exactly the one of the single-core and multiprocess engines.
* Early stop: as soon as *some* result says "stop" (``stops(result)``, e.g. a counterexample
  in verify), every task after it is cancelled; tasks before it still run, because the
  reported counterexample must be the first one in task order (same as the local engine).
* Ctrl-C: the futures are cancelled and KeyboardInterrupt is re-raised (the engines turn it
  into SearchInterrupted, exit 130).
* ``--checkpoint FILE``: finished tasks' summaries are recorded in a JSON file (written to a
  temporary file and renamed, so it is never half-written), under a fingerprint of the run
  (the caller's key + the task list).  A rerun with the same file feeds the recorded summaries
  and only submits the missing ranges.  Several runs (e.g. every s of ``attack --curve``)
  may share one file.
* Worker loss: Dask reschedules the tasks of a dead worker (``distributed.scheduler.
  allowed-failures``); the tasks are pure functions of their rank range, so a rerun is safe.

The engines pick the runner up from a context variable (:func:`use_runner`), so the CLI only
wraps the call: ``with use_runner(DaskRunner(...)): verify(...)``.

``attack`` in worst-case mode uses :func:`worst_ranked` (the rank-range version of
:func:`gctool.audit.exhaustive.worst`): each task evaluates consecutive sub-chunks of exactly
the local chunk size and returns one ``(max error, first argmax set)`` per sub-chunk; the
client folds them in order with the local rule (``err > best + 1e-12 * max(1, |best|)``), so
the worst set is bit-for-bit the local one (folding per task instead would not be: that
tolerance rule is not associative).
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import json
import os
import signal
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from math import comb
from pathlib import Path
from typing import Any

import numpy as np

from gctool.errors import InvalidInput
from gctool.numerics import beats, first_max

MISSING_EXTRA = ("--executor dask needs the optional extra 'gctool[dask]' "
                 "(pip install 'gctool[dask]', i.e. dask and distributed)")
#: at least this many sub-chunks per attack task (scheduling overhead, see bench_dask.py)
ATTACK_CHUNKS_PER_TASK = 8
#: engine tasks per Dask task used by the CLI: an engine task is one kernel chunk (about
#: 0.05-0.1 s of work); benchmarks/bench_dask.py measured 9-15 ms of scheduling per Dask task
#: on a 2-core LocalCluster (3-5 chunks per task needed for < 5 %), so 4 chunks per Dask
#: task keep the overhead near 5 %
CLI_BATCH = 4
#: seconds between checkpoint writes (always written at the end and on interrupt)
CHECKPOINT_EVERY_S = 1.0

_RUNNER: contextvars.ContextVar[Any] = contextvars.ContextVar("gctool_runner", default=None)


def current_runner() -> Any:
    """The runner installed by :func:`use_runner`, or None (local engine)."""
    return _RUNNER.get()


@contextlib.contextmanager
def use_runner(runner: Any) -> Iterator[Any]:
    token = _RUNNER.set(runner)
    try:
        yield runner
    finally:
        _RUNNER.reset(token)


def require_dask() -> None:
    """Raise InvalidInput (one line, exit 2) when dask/distributed are not installed."""
    try:
        import dask  # noqa: F401
        import distributed  # noqa: F401
    except ImportError:
        raise InvalidInput(MISSING_EXTRA) from None


# -- checkpoint ---------------------------------------------------------------------------------
class Checkpoint:
    """Finished tasks of possibly several runs, keyed by run fingerprint and task range."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.runs: dict[str, dict[str, Any]] = {}
        if self.path.exists():
            from gctool.io import read_json_input

            try:  # size-limited read with one-line errors, like every other input
                data = read_json_input(self.path, "a gctool checkpoint")
                if data.get("format") != "gctool-checkpoint/1":
                    raise ValueError("not a gctool checkpoint")
                self.runs = dict(data["runs"])
            except InvalidInput as exc:
                raise InvalidInput(f"cannot read checkpoint: {exc}") from None
            except (ValueError, KeyError, TypeError, AttributeError) as exc:
                raise InvalidInput(f"cannot read checkpoint {self.path}: {exc}") from None

    def done(self, fingerprint: str) -> dict[str, Any]:
        return self.runs.setdefault(fingerprint, {})

    def save(self) -> None:
        """Atomic write through gctool._files (temp file in the same directory, then rename);
        a failure (full disk, no directory) is one line and exit 2, the old file unchanged."""
        from gctool._files import atomic_write

        doc = {"format": "gctool-checkpoint/1", "runs": self.runs}
        atomic_write(self.path, json.dumps(doc).encode("utf-8"))


def _encode(result: Any) -> Any:
    return {"type": type(result).__name__, "data": asdict(result)}


def _decode(blob: Any) -> Any:
    from gctool.audit.sweep import ChunkSummary

    kinds: dict[str, Any] = {"ChunkSummary": ChunkSummary, "AttackSummary": AttackSummary,
                             "ThresholdSummary": ThresholdSummary}
    d = dict(blob["data"])
    for k in ("max_norm", "max_cond", "max_resid"):
        if d.get(k) is not None:
            d[k] = (d[k][0], list(d[k][1]))
    for k in ("weakest", "peaks"):
        if k in d:
            d[k] = [(float(v), list(S)) for v, S in d[k]]
    return kinds[blob["type"]](**d)


def _task_key(task: Any) -> str:
    return json.dumps(list(task) if isinstance(task, tuple | list) else task)


def _fingerprint(key: str, worker: Any, tasks: Sequence[Any]) -> str:
    h = hashlib.sha256(key.encode())
    h.update(type(worker).__name__.encode())
    for attr in ("n", "s", "limit"):
        h.update(repr(getattr(getattr(worker, "source", worker), attr, None)).encode())
    h.update(json.dumps([list(t) for t in tasks]).encode())
    return h.hexdigest()


# -- the runner ---------------------------------------------------------------------------------
def _run_tasks(worker: Any, tasks: list[Any]) -> list[Any]:
    return [worker.run(t) for t in tasks]


def _stops(result: Any) -> bool:
    return getattr(result, "fail_set", None) is not None


@dataclass
class DaskRunner:
    """``runner(worker, tasks, jobs, on_result)`` over a Dask cluster.

    ``scheduler``: address of a running scheduler (``tcp://host:8786``); None starts a
    LocalCluster with ``jobs`` single-threaded worker processes for the duration of the run.
    ``key`` identifies the run in the checkpoint (the CLI hashes the code and options)."""

    scheduler: str | None = None
    checkpoint: str | None = None
    key: str = ""
    window: int | None = None  # futures in flight (default 4 x worker threads, >= 8)
    batch: int = 1  # engine tasks per Dask task (amortises scheduling; results unchanged)
    stats: dict[str, Any] = field(default_factory=dict)

    def __call__(self, worker: Any, tasks: Sequence[Any], jobs: int,
                 on_result: Callable[[int, Any], bool]) -> None:
        require_dask()
        from distributed import Client, LocalCluster, as_completed

        ck = Checkpoint(self.checkpoint) if self.checkpoint else None
        done: dict[str, Any] = {}
        if ck is not None:
            done = ck.done(_fingerprint(self.key, worker, tasks))
        self.stats.update(tasks=len(tasks), resumed=0, submitted=0, cancelled=0,
                          dask_tasks=0)
        results: dict[int, Any] = {}
        for i, t in enumerate(tasks):
            if _task_key(t) in done:
                results[i] = _decode(done[_task_key(t)])
                self.stats["resumed"] += 1
        todo = [i for i in range(len(tasks)) if i not in results]
        if not todo:  # everything is in the checkpoint: no cluster needed
            for i in range(len(tasks)):
                if on_result(i, results.pop(i)):
                    break
            return
        cluster = None
        if self.scheduler is None:
            # worker processes are started with SIGINT ignored (inherited through spawn), so
            # Ctrl-C in the terminal reaches only the client, which cancels and exits 130
            old_int = signal.signal(signal.SIGINT, signal.SIG_IGN)
            try:
                cluster = LocalCluster(n_workers=max(1, jobs), threads_per_worker=1,
                                       host="127.0.0.1", dashboard_address=":0",
                                       processes=True)
            finally:
                signal.signal(signal.SIGINT, old_int)
        try:
            client = Client(self.scheduler if cluster is None else cluster,
                            set_as_default=False)
        except (OSError, TimeoutError) as exc:
            if cluster is not None:
                cluster.close()
            raise InvalidInput(f"cannot connect to the Dask scheduler {self.scheduler}: "
                               f"{exc}".replace("\n", " ")) from None
        futures: dict[Any, list[int]] = {}
        last_save = time.monotonic()
        try:
            nxt = 0  # next task index to feed to on_result
            stop_at = len(tasks)  # tasks at or after this index are not needed
            # feed what the checkpoint already has (may stop before anything is submitted)
            while nxt < stop_at and nxt in results:
                if on_result(nxt, results.pop(nxt)):
                    return
                nxt += 1
            threads = sum(client.nthreads().values()) or 1
            window = self.window or max(8, 4 * threads)
            remote = client.scatter(worker, broadcast=True, hash=False)
            queue = iter([i for i in todo if i >= nxt])
            first: list[Any] = []
            ac: Any = None

            def submit() -> bool:
                group: list[int] = []
                for i in queue:
                    if i >= stop_at:
                        break
                    group.append(i)
                    if len(group) >= max(1, self.batch):
                        break
                if not group:
                    return False
                f = client.submit(_run_tasks, remote, [tasks[i] for i in group], pure=False,
                                  key=f"gctool-{self.key[:12]}-{group[0]}-{time.time_ns()}")
                futures[f] = group
                if ac is None:
                    first.append(f)
                else:
                    ac.add(f)
                self.stats["submitted"] += len(group)
                self.stats["dask_tasks"] += 1
                return True

            for _ in range(window):
                if not submit():
                    break
            ac = as_completed(first, loop=client.loop)
            for f in ac:
                group = futures.pop(f, [])
                if not group or f.cancelled() or group[0] >= stop_at:
                    continue
                for i, res in zip(group, f.result(), strict=True):
                    if i >= stop_at:
                        break
                    results[i] = res
                    if ck is not None:
                        done[_task_key(tasks[i])] = _encode(res)
                    if _stops(res):
                        stop_at = i + 1  # later tasks cannot change the verdict: cancel them
                        late = [g for g, js in futures.items() if js[0] > i]
                        self.stats["cancelled"] += len(late)
                        client.cancel(late)
                        for g in late:
                            futures.pop(g, None)
                if ck is not None and time.monotonic() - last_save > CHECKPOINT_EVERY_S:
                    ck.save()
                    last_save = time.monotonic()
                while nxt < stop_at and nxt in results:
                    if on_result(nxt, results.pop(nxt)):
                        return
                    nxt += 1
                if nxt >= stop_at:
                    return
                submit()
        finally:
            if ck is not None:
                ck.save()  # first: whatever happens while shutting down, keep the work
            with contextlib.suppress(Exception):
                if futures:
                    client.cancel(list(futures))
            with contextlib.suppress(Exception):
                client.close()
            if cluster is not None:
                with contextlib.suppress(Exception):
                    cluster.close()


# -- attack (worst case) by rank ranges ----------------------------------------------------------
Peak = tuple[float, list[int]]


@dataclass
class AttackSummary:
    index: int
    checked: int = 0
    peaks: list[Peak] = field(default_factory=list)  # one per non-empty sub-chunk, in order


@dataclass
class AttackWorker:
    """Evaluates the candidate ranks ``[a, b)`` in sub-chunks of ``size`` (picklable: the
    oracle is rebuilt on the worker, like the local process pool does)."""

    code: Any
    kind: str
    weights: Any
    tol: float
    n: int
    s: int
    size: int
    rot: Any = None
    _oracle: Any = field(default=None, repr=False, compare=False)

    def __getstate__(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d["_oracle"] = None
        return d

    def batches(self, a: int, b: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """(candidate sets, their errors) of ranks [a, b), sub-chunk by sub-chunk, in order
        (orbit representatives only when a rotation is set)."""
        from gctool.audit.decoders import make_oracle
        from gctool.audit.enumeration import rank_ranges, unrank_lex
        from gctool.audit.symmetry import canonical_mask

        if self._oracle is None:
            self._oracle = make_oracle(self.code, self.kind, self.weights, self.tol)
        for lo, hi in rank_ranges(a, b, self.size):
            C = unrank_lex(self.n, self.s, np.arange(lo, hi, dtype=np.int64))
            if self.rot is not None:
                C = C[canonical_mask(C, self.rot)]
            if C.shape[0]:
                yield C, self._oracle.errors(C)

    def run(self, task: tuple[int, int, int]) -> AttackSummary:
        index, a, b = task
        out = AttackSummary(index)
        for C, err in self.batches(a, b):
            i = first_max(err)  # first (tied) maximum, as in exhaustive.worst
            out.peaks.append((float(err[i]), C[i].tolist()))
            out.checked += C.shape[0]
        return out


def worst_ranked(oracle: Any, s: int, rot: Any, need: int, runner: Any,
                 progress: Callable[[int, int], None] | None = None,
                 chunks_per_task: int = ATTACK_CHUNKS_PER_TASK) -> tuple[float, Any, int]:
    """(worst error, worst set, sets checked) of size s, with ``runner`` and the exact fold
    of :func:`gctool.audit.exhaustive.worst`.  Raises KeyboardInterrupt on Ctrl-C."""
    from gctool.audit.enumeration import rank_ranges
    from gctool.audit.symmetry import count_candidates

    n = oracle.n
    size = oracle.chunk_size(s)
    stop = comb(n, s) if rot is None else count_candidates(n, s, rot.t)
    span = size * max(1, chunks_per_task)
    tasks = [(i, a, b) for i, (a, b) in enumerate(rank_ranges(0, stop, span))]
    worker = AttackWorker(oracle.code, oracle.kind, getattr(oracle, "user", None),
                          oracle.decoder.tol, n, s, size, rot)
    state: dict[str, Any] = {"err": -np.inf, "set": None, "checked": 0}

    def fold(_: int, r: AttackSummary) -> bool:
        for e, S in r.peaks:
            best = state["err"]
            if state["set"] is None or beats(e, best):
                state["err"], state["set"] = e, S
        state["checked"] += r.checked
        oracle.evaluations += r.checked
        if progress is not None:
            progress(state["checked"], need)
        return False

    try:
        runner(worker, tasks, 1, fold)
    except KeyboardInterrupt:
        from gctool.errors import SearchInterrupted

        raise SearchInterrupted(
            f"interrupted after checking {state['checked']:,} of {need:,} straggler sets (size "
            f"{s}); worst error so far {state['err']:.6g} at {state['set']}") from None
    return float(state["err"]), state["set"], int(state["checked"])


# -- attack (threshold) by rank ranges ----------------------------------------------------------
@dataclass
class ThresholdSummary:
    index: int
    checked: int = 0  # sets evaluated up to and including the first one over the limit
    fail_set: list[int] | None = None  # first set (in enumeration order) with error > limit
    fail_err: float | None = None
    evaluated: int = 0  # sets given to the oracle (whole sub-chunks, for its counter)


@dataclass
class ThresholdWorker(AttackWorker):
    """First set of the rank range whose error exceeds ``limit`` (the rule of
    :func:`gctool.audit.exhaustive.threshold`)."""

    limit: float = 0.0

    def run(self, task: tuple[int, int, int]) -> ThresholdSummary:  # type: ignore[override]
        index, a, b = task
        out = ThresholdSummary(index)
        for C, err in self.batches(a, b):
            out.evaluated += C.shape[0]
            over = np.flatnonzero(err > self.limit)
            if over.size:
                i = int(over[0])
                out.checked += i + 1
                out.fail_set, out.fail_err = C[i].tolist(), float(err[i])
                return out
            out.checked += C.shape[0]
        return out


def threshold_ranked(oracle: Any, t: int, rot: Any, limit: float, runner: Any,
                     chunks_per_task: int = ATTACK_CHUNKS_PER_TASK
                     ) -> tuple[list[int] | None, float | None, int]:
    """(first set of size t with error > limit or None, its error, sets checked) with
    ``runner``; the remaining ranges are cancelled once a set is found."""
    from gctool.audit.enumeration import rank_ranges
    from gctool.audit.symmetry import count_candidates

    n = oracle.n
    size = oracle.chunk_size(t)
    stop = comb(n, t) if rot is None else count_candidates(n, t, rot.t)
    tasks = [(i, a, b) for i, (a, b) in
             enumerate(rank_ranges(0, stop, size * max(1, chunks_per_task)))]
    worker = ThresholdWorker(oracle.code, oracle.kind, getattr(oracle, "user", None),
                             oracle.decoder.tol, n, t, size, rot, limit=limit)
    state: dict[str, Any] = {"set": None, "err": None, "checked": 0}

    def fold(_: int, r: ThresholdSummary) -> bool:
        state["checked"] += r.checked
        oracle.evaluations += r.evaluated
        if r.fail_set is not None:
            state["set"], state["err"] = r.fail_set, r.fail_err
            return True
        return False

    runner(worker, tasks, 1, fold)
    return state["set"], state["err"], int(state["checked"])
