"""Run the enumeration engine of ``verify`` and ``attack`` on a Dask cluster.

The straggler-set space is already cut into *rank ranges* by the engine
(:mod:`gctool.engine.sweep`; a task is unranked on the worker, so no process ever holds the list
of sets).  This module only changes *where* the tasks run:

* :class:`DaskRunner` has the signature of :func:`gctool.engine.parallel.run_ordered`
  (``runner(worker, tasks, jobs, on_result)``) and is passed explicitly (``runner=``) to
  ``verify``, ``attack``, ``threshold`` and ``curve``.  Tasks are submitted to a Dask cluster
  (a bounded window of futures), results come back in any order and are handed to
  ``on_result`` **in task order**, so the fold (and therefore verdicts, worst sets and the
  tie-breaking) is exactly the one of the local runner: the same worker and the same fold run
  on both.
* Early stop: as soon as *some* result ends the run (:func:`gctool.engine.sweep.stops`, e.g. a
  counterexample in verify), every task after it is cancelled; tasks before it still run,
  because the reported counterexample must be the first one in task order (same as locally).
* Ctrl-C: the futures are cancelled and KeyboardInterrupt is re-raised (the engines turn it
  into SearchInterrupted, exit 130).
* ``--checkpoint FILE``: finished tasks' summaries are recorded in a JSON file (written to a
  temporary file and renamed, so it is never half-written), under a fingerprint of the run
  (the caller's key + the task list).  A rerun with the same file feeds the recorded summaries
  and only submits the missing ranges.  Several runs (e.g. every s of ``attack --curve``)
  may share one file.
* Worker loss: Dask reschedules the tasks of a dead worker (``distributed.scheduler.
  allowed-failures``); the tasks are pure functions of their rank range, so a rerun is safe.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from gctool.errors import InvalidInput

MISSING_EXTRA = ("--executor dask needs the optional extra 'gctool[dask]' "
                 "(pip install 'gctool[dask]', i.e. dask and distributed)")
#: engine tasks per Dask task used by the CLI: an engine task is one kernel chunk (about
#: 0.05-0.1 s of work); benchmarks/bench_dask.py measured 9-15 ms of scheduling per Dask task
#: on a 2-core LocalCluster (3-5 chunks per task needed for < 5 %), so 4 chunks per Dask
#: task keep the overhead near 5 %
CLI_BATCH = 4
#: with ``DaskRunner.guided``, at most this many batches in one Dask task (a task runs its
#: engine tasks to the end even after a counterexample, so a cap bounds the waste)
GUIDED_MAX = 8
#: seconds between checkpoint writes (always written at the end and on interrupt)
CHECKPOINT_EVERY_S = 1.0

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


def _encode(result: Any) -> dict[str, Any]:
    return {"type": type(result).__name__, "data": asdict(result)}


def _decode(blob: Any) -> object:
    from gctool.audit.sweep import summary_from_dict

    return summary_from_dict(blob["type"], blob["data"])


def _task_key(task: Any) -> str:
    return json.dumps(list(task) if isinstance(task, tuple | list) else task)


def _fingerprint(key: str, worker: Any, tasks: Sequence[Any]) -> str:
    h = hashlib.sha256(key.encode())
    h.update(type(worker).__name__.encode())
    source = getattr(worker, "source", worker)
    for attr in ("n", "s"):
        h.update(repr(getattr(source, attr, None)).encode())
    h.update(repr(getattr(worker, "limit", None)).encode())
    h.update(json.dumps([list(t) for t in tasks]).encode())
    return h.hexdigest()


# -- the runner ---------------------------------------------------------------------------------
def _run_tasks(worker: Any, tasks: list[Any]) -> list[Any]:
    return [worker.run(t) for t in tasks]


class _InOrder:
    """Results that arrive in any order, handed to ``on_result`` in task order; ``stop_at``
    is the first task index that is no longer needed."""

    def __init__(self, on_result: Callable[[int, Any], bool], count: int) -> None:
        self.on_result = on_result
        self.results: dict[int, Any] = {}
        self.nxt = 0
        self.stop_at = count

    def add(self, i: int, result: Any) -> None:
        from gctool.engine.sweep import stops

        self.results[i] = result
        if stops(result):  # later tasks cannot change the verdict
            self.stop_at = min(self.stop_at, i + 1)

    def drain(self) -> bool:
        """Feed every result that is next in order; True when the run is over."""
        while self.nxt < self.stop_at and self.nxt in self.results:
            if self.on_result(self.nxt, self.results.pop(self.nxt)):
                return True
            self.nxt += 1
        return self.nxt >= self.stop_at


class _Window:
    """A bounded window of futures on ``client``: submit, receive, cancel what is not
    needed, record finished tasks in the checkpoint."""

    def __init__(self, runner: DaskRunner, client: Any, worker: Any, tasks: Sequence[Any],
                 feed: _InOrder, ck: Checkpoint | None, done: dict[str, Any]) -> None:
        self.runner, self.client, self.tasks, self.feed = runner, client, tasks, feed
        self.ck, self.done = ck, done
        self.stats = runner.stats
        self.remote = client.scatter(worker, broadcast=True, hash=False)
        todo = [i for i in range(feed.nxt, len(tasks)) if i not in feed.results]
        self.queue, self.left = iter(todo), len(todo)
        self.threads = max(1, sum(client.nthreads().values())) if runner.guided else 1
        self.futures: dict[Any, list[int]] = {}
        self.last_save = time.monotonic()

    def size(self) -> int:
        """Engine tasks in the next Dask task (:attr:`DaskRunner.guided`)."""
        batch = max(1, self.runner.batch)
        if not self.runner.guided:
            return batch
        return min(GUIDED_MAX * batch, max(batch, -(-self.left // (2 * self.threads))))

    def submit(self) -> Any:
        """Submit the next group of tasks; None when there is nothing left to submit."""
        group: list[int] = []
        size = self.size()
        for i in self.queue:
            self.left -= 1
            if i >= self.feed.stop_at:
                break
            group.append(i)
            if len(group) >= size:
                break
        if not group:
            return None
        f = self.client.submit(_run_tasks, self.remote, [self.tasks[i] for i in group],
                               pure=False,
                               key=f"gctool-{self.runner.key[:12]}-{group[0]}-{time.time_ns()}")
        self.futures[f] = group
        self.stats["submitted"] += len(group)
        self.stats["dask_tasks"] += 1
        return f

    def receive(self, f: Any) -> None:
        group = self.futures.pop(f, [])
        if not group or f.cancelled() or group[0] >= self.feed.stop_at:
            return
        for i, res in zip(group, f.result(), strict=True):
            if i >= self.feed.stop_at:
                break
            self.feed.add(i, res)
            if self.ck is not None:
                self.done[_task_key(self.tasks[i])] = _encode(res)
            if self.feed.stop_at == i + 1:
                self.cancel_after(i)
        if self.ck is not None and time.monotonic() - self.last_save > CHECKPOINT_EVERY_S:
            self.ck.save()
            self.last_save = time.monotonic()

    def cancel_after(self, i: int) -> None:
        late = [g for g, group in self.futures.items() if group[0] > i]
        self.stats["cancelled"] += len(late)
        self.client.cancel(late)
        for g in late:
            self.futures.pop(g, None)

    def run(self, window: int) -> None:
        from distributed import as_completed

        try:
            first = []
            for _ in range(window):
                f = self.submit()
                if f is None:
                    break
                first.append(f)
            ac = as_completed(first, loop=self.client.loop)
            for f in ac:
                self.receive(f)
                if self.feed.drain():
                    return
                nxt = self.submit()
                if nxt is not None:
                    ac.add(nxt)
        finally:
            if self.ck is not None:
                self.ck.save()  # first: whatever happens while shutting down, keep the work
            with contextlib.suppress(Exception):
                if self.futures:
                    self.client.cancel(list(self.futures))


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
    #: a Dask task takes 1 / (2 x worker threads) of the engine tasks not yet submitted, at
    #: least ``batch`` and at most ``GUIDED_MAX x batch``: large tasks first, small ones at the
    #: end (OpenMP's guided schedule), so that the per-task overhead stays small and the workers
    #: finish together; which engine tasks run, and the results, are the same
    guided: bool = False
    stats: dict[str, Any] = field(default_factory=dict)

    def __call__(self, worker: Any, tasks: Sequence[Any], jobs: int,
                 on_result: Callable[[int, Any], bool]) -> None:
        require_dask()
        ck = Checkpoint(self.checkpoint) if self.checkpoint else None
        done = ck.done(_fingerprint(self.key, worker, tasks)) if ck is not None else {}
        self.stats.update(tasks=len(tasks), resumed=0, submitted=0, cancelled=0,
                          dask_tasks=0)
        feed = _InOrder(on_result, len(tasks))
        for i, t in enumerate(tasks):  # replay the checkpoint
            if _task_key(t) in done:
                feed.add(i, _decode(done[_task_key(t)]))
                self.stats["resumed"] += 1
        if feed.drain():  # over before anything is submitted: no cluster needed
            return
        with self._client(jobs) as client:
            threads = sum(client.nthreads().values()) or 1
            _Window(self, client, worker, tasks, feed, ck, done).run(
                self.window or max(8, 4 * threads))

    @contextlib.contextmanager
    def _client(self, jobs: int) -> Iterator[Any]:
        """A client of the scheduler, or of a LocalCluster started for this run."""
        from distributed import Client, LocalCluster

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
        try:
            yield client
        finally:
            with contextlib.suppress(Exception):
                client.close()
            if cluster is not None:
                with contextlib.suppress(Exception):
                    cluster.close()
