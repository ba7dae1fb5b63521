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
* Completeness: the fold itself proves that every range was merged once
  (:class:`gctool.engine.sweep.Coverage`); this runner never drops a task silently.  A task
  whose future is cancelled or lost (its worker died with the result, every copy of the code
  was lost) is submitted again, with the code scattered again when needed, while the cluster
  has workers; a task that killed its workers (Dask's ``KilledWorker``) is retried
  :data:`RETRIES` times.  When the scheduler connection is lost, or the cluster has had no
  worker (or the scheduler has not answered) for :data:`LOST_AFTER_S` seconds, the runner
  gives up: :class:`gctool.engine.parallel.LostTasks` (the fold turns it into
  :class:`gctool.errors.IncompleteRun`, exit 2, saying what was checked and what was lost).
* Early stop: as soon as *some* result ends the run (:func:`gctool.engine.sweep.stops`, e.g. a
  counterexample in verify), every task after it is cancelled; tasks before it still run,
  because the reported counterexample must be the first one in task order (same as locally),
  and the Dask task holding it runs none of its engine tasks after it (:func:`_run_tasks`).
  Dask cannot interrupt a running task: a cancelled one of gctool's stops before its next
  engine task, and a compiled walk inside one at its next check of its stop flag
  (:func:`_halted_when_cancelled`), a numpy route (attack's oracles, verify's kernel, an
  encoded frame's spectra) between its batches; other
  work finishes the engine task it is in.
* Ctrl-C: the futures are cancelled and KeyboardInterrupt is re-raised (the engines turn it
  into SearchInterrupted, exit 130).  Signals that arrive while a LocalCluster starts are
  deferred until it has started, then honoured (:func:`_deferred_signals`).
* ``checkpoint`` FILE: finished tasks' summaries are recorded in a JSON file (written to a
  temporary file and renamed, so it is never half-written), under a fingerprint of the run
  (the caller's key + the task list).  A rerun with the same file validates every entry against
  the run (:class:`Checkpoint`), feeds the recorded summaries and only submits the missing
  ranges.  Several runs (e.g. every s of ``attack`` with ``curve``) may share one file.
* Connecting: the address is checked before anything else (:func:`check_address`); a TCP
  scheduler is probed first (:func:`_probe`: something must listen, and answer with Dask's
  handshake within the connect timeout), so an unreachable address, a silent service or
  another protocol (an SSH banner) is one line, never a hang or a huge allocation.
* Dask's and tornado's log records are silenced for the run (workers of a LocalCluster log only
  critical records), so a recovered fault leaves stderr empty.
"""

from __future__ import annotations

import collections
import contextlib
import copy
import copyreg
import dataclasses
import hashlib
import io
import ipaddress
import json
import logging
import math
import os
import pickle
import re
import signal
import socket
import stat
import struct
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gctool._lazy import asyncio
from gctool._memory import keep_heap
from gctool.errors import InvalidInput, printable

if TYPE_CHECKING:  # (the optional extra gctool[dask])
    import numpy as np
    from distributed import Client, Future, LocalCluster

    from gctool.compiled import Kind

MISSING_EXTRA = ("`executor`=dask needs the optional extra 'gctool[dask]' "
                 "(pip install 'gctool[dask]', i.e. dask and distributed)")
#: engine tasks per Dask task used by the CLI: an engine task is one kernel chunk (about
#: 0.05-0.1 s of work); benchmarks/bench_dask.py measured 9-15 ms of scheduling per Dask task
#: on a 2-core LocalCluster (3-5 chunks per task needed for < 5 %), so 4 chunks per Dask
#: task keep the overhead near 5 %
CLI_BATCH = 4
#: with ``DaskRunner.guided``, at most this many batches in one Dask task (results, the
#: checkpoint and the progress advance a Dask task at a time), unless :data:`TASK_MIN_S`
#: needs more
GUIDED_MAX = 8
#: with ``DaskRunner.guided``, once engine tasks have come back, a Dask task holds at least
#: this many seconds of them (their mean time on the workers so far): benchmarks/bench_dask.py
#: measures 5-15 ms of scheduling per Dask task (client, scheduler and worker together) on a
#: 2-core loopback cluster, so 0.25 s keeps it under 5 %
TASK_MIN_S = 0.25
#: with the CLI's runner (``DaskRunner.local_below_s``), an enumeration whose calibrated
#: estimate is below this many seconds of one core runs in the client's process, on the local
#: engine (:func:`placed`): each enumeration on Dask costs a few round trips before its first
#: result (the workers' count, the submission, the first task's start and its result: 20-40 ms
#: on a loopback cluster of the 2-core development machine, benchmarks/bench_dask.py), which a
#: size of a threshold search such as C(40, 4) = 91,390 sets (5 ms compiled) would pay for
#: nothing; the estimate errs high (about 3x on that machine), so 0.1 s leaves on the cluster
#: only what 2 workers finish sooner than one thread
LOCAL_BELOW_S = 0.1
#: Dask tasks in flight per worker thread of the cluster (at least 4): one running and one
#: waiting on the scheduler keep a thread busy (the scheduler hands a worker its next task as
#: the last one ends); more only cost submissions that an early stop then cancels (the last
#: size of a threshold search, which stops at its first set over the limit, had 8 Dask tasks in
#: flight on 2 threads, most of them cancelled: 7 ms of CPU each, bench_dask.py)
WINDOW_PER_THREAD = 2
#: starting the local cluster of a run without a scheduler (the CLI's Dask executor without
#: a scheduler address), in ns on no job's share (its worker processes start at the same
#: time, each on a core: at most one per core): the scheduler, and each worker process spawned
#: (Python's 'spawn': a new interpreter importing Dask) and registered, about 0.45 s, and
#: closing it at the end, 0.1-0.4 s; its workers then import gctool and load the compiled
#: kernels, :data:`WORKER_IMPORT_NS` and :data:`~gctool.budget.KERNELS_LOAD_NS` more
#: (:func:`kernels_load_ns`).  Measured on the
#: 2-core development machine (load 1-2.5 from other work): ``LocalCluster`` of 1 worker
#: 0.39-0.59 s to start and 0.07-0.34 s to close, of 2 workers 0.45-0.9 s and 0.1-0.72 s
#: (0.4-0.5 s of CPU per worker process to start)
LOCAL_CLUSTER_NS = 800_000_000
#: what a Dask worker process that has not imported gctool's engine (a fresh worker of a
#: running cluster, or of the local cluster a run starts) pays at its first compiled
#: enumeration besides :data:`~gctool.budget.KERNELS_LOAD_NS` (which counts what this process
#: pays: numba, the kernel modules, the kernels read from numba's cache), in ns on no job's
#: share (each worker does its own, at the same time): scipy.linalg and the gctool modules
#: that unpickling an enumeration's worker imports (about 50 of them).  Measured inside fresh
#: workers (the ``dask scheduler`` and ``dask worker`` commands, one thread per worker, 4
#: clusters of 2 workers, medians of CPU time, load 1.6-3.2): scipy.linalg 107 ms, numba
#: 116 ms, unpickling verify's worker of real cyclic n=48 s=6 200 ms, its first engine task
#: 180 ms more than a warm one: 0.6 s in all; the first run on a fresh 2-worker cluster spent
#: 0.71-0.78 s of CPU per worker more than the next (benchmarks/bench_budget.py, its Dask
#: runs, load 7)
WORKER_IMPORT_NS = 250_000_000
#: seconds allowed for the workers' answer whether they have loaded the compiled kernels
#: (:meth:`DaskRunner.kernels_warm`); no answer: counted as neither loaded nor imported
ASK_S = 5.0
#: seconds between checkpoint writes (always written at the end and on interrupt)
CHECKPOINT_EVERY_S = 1.0
#: a cluster with no worker, or a scheduler that does not answer, for this long ends the run
#: (at the start: "no workers"; mid-run: an incomplete run); a closed scheduler connection ends
#: it at once.  Dask setting ``gctool.lost-after`` (e.g. DASK_GCTOOL__LOST_AFTER=30s)
LOST_AFTER_S = 10.0
#: seconds between checks of the cluster while waiting for results
POLL_S = 0.2
#: seconds between queries of the scheduler (number of workers)
HEALTH_EVERY_S = 1.0
#: seconds allowed for fetching one result, re-scattering the code, closing the client
RESULT_S = 10.0
CLOSE_S = 5.0
#: times a task that killed its workers (Dask's KilledWorker) or was lost is submitted again
RETRIES = 5
#: longest scheduler address accepted
MAX_ADDRESS = 1000
#: a Dask handshake is a few hundred bytes; a first frame length above this is not Dask's
MAX_HANDSHAKE = 1 << 20
_PROTOCOLS = ("tcp", "tls", "ws", "wss")
_HOST = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,251}[A-Za-z0-9])?\Z")


def require_dask() -> None:
    """Raise InvalidInput (one line, exit 2) when dask/distributed are not installed."""
    try:
        import dask  # noqa: F401
        import distributed  # noqa: F401
    except ImportError:
        raise InvalidInput(MISSING_EXTRA) from None


# -- the scheduler address --------------------------------------------------------------------
@dataclass(frozen=True)
class Address:
    """A checked scheduler address: ``protocol://host:port``."""

    protocol: str
    host: str
    port: int

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.protocol}://{host}:{self.port}"


def _shown(address: str) -> str:
    return repr(address if len(address) <= 60 else address[:57] + "...")


def check_address(address: str) -> Address:
    """The scheduler address ``[tcp|tls|ws|wss://]HOST:PORT`` checked before any connection:
    InvalidInput (one line) for an empty, malformed or unsupported address, a port outside
    1..65535, or ``tls://`` without Dask's TLS settings."""
    if not isinstance(address, str) or not address:
        raise InvalidInput("scheduler address is empty; expected tcp://HOST:PORT")
    bad = _shown(address)
    if len(address) > MAX_ADDRESS:
        raise InvalidInput(f"scheduler address {bad} is too long ({len(address):,} characters)")
    if not address.isascii() or not address.isprintable() or any(c.isspace() for c in address):
        raise InvalidInput(f"scheduler address {bad} contains spaces, control or non-ASCII "
                           "characters; expected tcp://HOST:PORT")
    protocol, sep, rest = address.partition("://")
    if not sep:
        protocol, rest = "tcp", address
    protocol = protocol.lower()
    if protocol not in _PROTOCOLS:
        why = {"inproc": "in-process addresses only work inside one Python process",
               "ucx": "UCX is not supported by gctool"}.get(protocol, "unknown protocol")
        raise InvalidInput(f"scheduler address {bad}: {why}; expected tcp://HOST:PORT "
                           f"(or {', '.join(s + '://' for s in _PROTOCOLS[1:])})")
    if rest.startswith("["):
        host, close, port_text = rest[1:].partition("]")
        if not close or not port_text.startswith(":"):
            raise InvalidInput(f"scheduler address {bad}: expected [IPv6]:PORT")
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            raise InvalidInput(f"scheduler address {bad}: {printable(host, 60)!r} is not an "
                               "IPv6 address") from None
        port_text = port_text[1:]
    else:
        host, colon, port_text = rest.rpartition(":")
        if not colon:
            raise InvalidInput(f"scheduler address {bad} has no port; expected "
                               f"{protocol}://HOST:PORT")
        if not _HOST.match(host):
            raise InvalidInput(f"scheduler address {bad}: {printable(host, 60)!r} is not a host "
                               "name or IPv4 address")
    if not port_text.isdigit() or not 1 <= int(port_text) <= 65535:
        raise InvalidInput(f"scheduler address {bad}: the port must be a number in 1..65535")
    if protocol in ("tls", "wss"):
        _check_tls(bad)
    return Address(protocol, host, int(port_text))


def _check_tls(shown: str) -> None:
    """``tls://`` and ``wss://`` need Dask's TLS settings (a CA file at least)."""
    import dask

    if not dask.config.get("distributed.comm.tls.ca-file", None):
        raise InvalidInput(f"scheduler address {shown} needs Dask's TLS settings "
                           "(distributed.comm.tls.ca-file and the client's certificate and key, "
                           "e.g. DASK_DISTRIBUTED__COMM__TLS__CA_FILE)")


def connect_timeout() -> float:
    """Seconds allowed to connect to a scheduler (and for its first answer): Dask's
    ``distributed.comm.timeouts.connect`` (30 s by default)."""
    import dask
    from dask.utils import parse_timedelta

    try:
        value = parse_timedelta(dask.config.get("distributed.comm.timeouts.connect"), "s")
    except (TypeError, ValueError, KeyError):
        raise InvalidInput("the Dask setting distributed.comm.timeouts.connect is not a "
                           "duration") from None
    if value is None or not math.isfinite(value) or value <= 0:
        raise InvalidInput("the Dask setting distributed.comm.timeouts.connect must be a "
                           "positive duration")
    return float(min(value, 3600.0))


def lost_after() -> float:
    """Seconds a cluster may have no worker (or its scheduler not answer) before a run ends:
    the Dask setting ``gctool.lost-after``, default :data:`LOST_AFTER_S`."""
    return _duration("lost-after", LOST_AFTER_S, zero=False)


def local_below() -> float:
    """Seconds of one core under which the CLI runs an enumeration in its own process
    (:func:`placed`): the Dask setting ``gctool.local-below``, default :data:`LOCAL_BELOW_S`
    (``DASK_GCTOOL__LOCAL_BELOW=0``: every enumeration on the cluster)."""
    return _duration("local-below", LOCAL_BELOW_S, zero=True)


def _duration(name: str, default: float, zero: bool) -> float:
    """The Dask setting ``gctool.<name>``: a duration up to 1 day (above 0, or ``zero`` and
    more), in seconds; ``default`` when unset; InvalidInput (one line) otherwise."""
    import dask
    from dask.utils import parse_timedelta

    raw = dask.config.get(f"gctool.{name}", None)
    if raw is None:
        return default
    try:
        value = parse_timedelta(raw, "s")
    except (TypeError, ValueError, KeyError):
        value = None
    if value is None or not math.isfinite(value) or not (
            0 <= value if zero else 0 < value) or value > 86400:
        raise InvalidInput(f"the Dask setting gctool.{name} must be a duration between 0 "
                           f"and 1 day, got {printable(raw, 40)!r}")
    return float(value)


def _probe(address: Address, timeout: float) -> None:
    """Before Dask connects to a plain TCP address: something must listen there and send
    Dask's handshake (a short first frame naming the pickle protocol) within ``timeout``
    seconds.  Otherwise InvalidInput says what is there instead; Dask itself would wait forever
    for a silent service, or read another protocol's banner as a frame length and try to
    allocate exabytes."""
    where = f"the Dask scheduler {address}"
    deadline = time.monotonic() + timeout
    try:
        sock = socket.create_connection((address.host, address.port), timeout=timeout)
    except socket.gaierror as exc:
        raise InvalidInput(f"cannot connect to {where}: unknown host "
                           f"({exc.strerror or exc})") from None
    except TimeoutError:
        raise InvalidInput(f"cannot connect to {where}: no answer within {timeout:g} s "
                           "(distributed.comm.timeouts.connect)") from None
    except OSError as exc:
        raise InvalidInput(f"cannot connect to {where}: {exc.strerror or exc}") from None
    with sock:
        try:
            head = _read(sock, 8, deadline)
            if head is not None and len(head) == 8:
                (size,) = struct.unpack("Q", head)
                body = _read(sock, size, deadline) if 0 < size <= MAX_HANDSHAKE else b""
                if body is not None and b"pickle-protocol" in body:
                    return
        except TimeoutError:
            raise InvalidInput(f"cannot connect to {where}: the service there accepted the "
                               f"connection but sent nothing Dask would within {timeout:g} s "
                               "(not a Dask scheduler, or a hung one)") from None
        except OSError as exc:
            raise InvalidInput(f"cannot connect to {where}: {exc.strerror or exc}") from None
    first = printable((head or b"").decode("latin-1"), 40)
    said = f" (it sent {first!r})" if first else " (it closed the connection)"
    raise InvalidInput(f"cannot connect to {where}: the service there is not a Dask "
                       f"scheduler{said}")


def _read(sock: socket.socket, count: int, deadline: float) -> bytes | None:
    """``count`` bytes from ``sock`` before ``deadline`` (fewer: the peer closed)."""
    out = b""
    while len(out) < count:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        sock.settimeout(left)
        chunk = sock.recv(min(count - len(out), 1 << 16))
        if not chunk:
            return out
        out += chunk
    return out


# -- quiet: Dask's logs and tracebacks stay out of the user's stderr --------------------------
_NOISY = ("distributed", "tornado", "asyncio")


def silence_logs() -> dict[str, int]:
    """Raise Dask's, tornado's and asyncio's loggers above CRITICAL (unless GCTOOL_DEBUG is
    set); returns the previous levels for :func:`restore_logs`."""
    if os.environ.get("GCTOOL_DEBUG"):
        return {}
    names = set(_NOISY) | {n for n in logging.root.manager.loggerDict
                           if n.startswith(tuple(p + "." for p in _NOISY))}
    saved = {n: logging.getLogger(n).level for n in names}
    for n in names:
        logging.getLogger(n).setLevel(logging.CRITICAL + 1)
    return saved


def restore_logs(saved: dict[str, int]) -> None:
    for name, level in saved.items():
        logging.getLogger(name).setLevel(level)


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    saved = silence_logs()
    try:
        yield
    finally:
        restore_logs(saved)


def _abandon(client: Any) -> None:
    """Close ``client`` within :data:`CLOSE_S` whatever state it is in (half-built, its
    scheduler gone); afterwards its ``__del__`` has nothing left to wait for."""
    with contextlib.suppress(BaseException):
        if getattr(client, "status", "closed") not in ("closed", "newly-created"):
            client.close(timeout=CLOSE_S)
    with contextlib.suppress(BaseException):
        client.status = "closed"  # Client.__del__ would otherwise wait on a dead connection


# -- checkpoint ---------------------------------------------------------------------------------
class Checkpoint:
    """Finished tasks of possibly several runs, keyed by run fingerprint and task range.

    The file is refused (InvalidInput, one line) when it is not a regular file, not a gctool
    checkpoint, or malformed; entries are validated against the run that uses them
    (:meth:`entries`)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.runs: dict[str, dict[str, Any]] = {}
        check_checkpoint_path(self.path)
        if self.path.exists():
            from gctool.io import read_json_input

            try:  # size-limited read with one-line errors, like every other input
                data = read_json_input(self.path, "a gctool checkpoint")
            except InvalidInput as exc:
                raise InvalidInput(f"cannot read checkpoint: {exc}") from None
            if not isinstance(data, dict) or data.get("format") != "gctool-checkpoint/1":
                raise self.refuse("not a gctool checkpoint (format gctool-checkpoint/1)")
            runs = data.get("runs")
            if not isinstance(runs, dict) or not all(isinstance(k, str) and isinstance(v, dict)
                                                     for k, v in runs.items()):
                raise self.refuse("'runs' must map run fingerprints to objects")
            self.runs = runs

    def refuse(self, why: str) -> InvalidInput:
        return InvalidInput(f"cannot use checkpoint {printable(self.path, 200)}: {why}")

    def done(self, fingerprint: str) -> dict[str, Any]:
        return self.runs.setdefault(fingerprint, {})

    def entries(self, fingerprint: str, tasks: Sequence[Any], worker: Any
                ) -> dict[int, Any]:
        """The recorded summaries of this run by task position, each validated against its
        task (:func:`gctool.engine.records.summary_from_record`); a key that is not one of the
        run's tasks or an entry that does not fit refuses the file."""
        from gctool.engine.records import summary_from_record
        from gctool.engine.sweep import Coverage

        done = self.done(fingerprint)
        source = worker.source
        where = {_task_key(t): i for i, t in enumerate(tasks)}
        out: dict[int, Any] = {}
        for key, blob in done.items():
            if key not in where:
                raise self.refuse(f"entry {printable(key, 60)!r} is not a range of this run")
            i = where[key]
            task = tasks[i]
            try:
                out[i] = summary_from_record(blob, task, worker)
            except (ValueError, TypeError, KeyError) as exc:
                raise self.refuse(f"entry {printable(key, 60)}: {exc}") from None
            problem = Coverage.of(source, task[1], task[2]).problem(task, out[i])  # counts
            if problem is not None:
                raise self.refuse(f"entry {printable(key, 60)}: {problem}")
        return out

    def save(self) -> None:
        """Atomic write through gctool._files (temp file in the same directory, then rename);
        a failure (full disk, no directory) is one line and exit 2, the old file unchanged."""
        from gctool._files import atomic_write

        doc = {"format": "gctool-checkpoint/1", "runs": self.runs}
        atomic_write(self.path, json.dumps(doc).encode("utf-8"))


def check_checkpoint_path(path: str | os.PathLike[str]) -> None:
    """A checkpoint is a regular file (or one to create): stdin/stdout, FIFOs, devices,
    sockets and directories are refused (reading a FIFO would wait for a writer)."""
    if str(path) == "-":
        raise InvalidInput("a checkpoint must be a file, not '-' (stdin/stdout)")
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return
    except OSError as exc:
        raise InvalidInput(f"cannot use checkpoint {printable(path, 200)}: "
                           f"{exc.strerror or exc}") from None
    if not stat.S_ISREG(mode):
        kind = "a directory" if stat.S_ISDIR(mode) else "not a regular file"
        raise InvalidInput(f"cannot use checkpoint {printable(path, 200)}: it is {kind}")


def _encode(result: Any) -> dict[str, Any]:
    """The checkpoint record of a summary."""
    from gctool.engine.records import record

    return record(result)


def _task_key(task: Any) -> str:
    return json.dumps(list(task) if isinstance(task, tuple | list) else task)


def _fingerprint(key: str, worker: Any, tasks: Sequence[Any]) -> str:
    h = hashlib.sha256(key.encode())
    h.update(type(worker).__name__.encode())
    source = getattr(worker, "source", worker)
    h.update(type(source).__name__.encode())
    for attr in ("n", "s"):
        h.update(repr(getattr(source, attr, None)).encode())
    h.update(repr(getattr(worker, "limit", None)).encode())
    h.update(json.dumps([list(t) for t in tasks]).encode())
    return h.hexdigest()


# -- the runner ---------------------------------------------------------------------------------
def _run_tasks(worker: Any, tasks: list[Any], kernel: Any = None
               ) -> tuple[list[Any], float] | None:
    """On a Dask worker: run ``tasks`` with ``worker``; the results and the CPU seconds they
    took in this thread (the client sizes later Dask tasks with it), up to the first result
    that ends the run (:func:`gctool.engine.parallel.ends_run`: the client reads none after
    it, :class:`_InOrder`, and waits for the Dask task holding it).  With ``kernel``,
    ``worker`` is a shell (:func:`_split`) and the kernel (carried by the task, or scattered
    once per session, as a :class:`_Carried`) is put back into a copy; without, ``worker``
    (scattered) is whole, a :class:`_Carried` unless only Dask's cloudpickle pickles it.  None: the
    Dask task was cancelled while it ran (:func:`_still_wanted`)."""
    _keep_heap()
    t0 = time.thread_time()
    if isinstance(worker, _Carried):  # (a whole worker, scattered)
        worker = worker.load()
    if kernel is not None:
        worker = copy.copy(worker)
        worker.kernel = kernel.load() if isinstance(kernel, _Carried) else kernel
    from gctool.engine.parallel import ends_run
    from gctool.engine.threads import Cancelled

    wanted = _still_wanted()
    out = []
    try:
        with _halted_when_cancelled(wanted):
            for task in tasks:
                if not wanted():
                    return None  # cancelled while it ran: nobody reads it (or it is lost)
                out.append(worker.run(task))
                if ends_run(out[-1]):  # (a counterexample: the run ends here at the latest,
                    break  # _InOrder.add, and no result after it is read: not computed)
    except Cancelled:  # (a walk, or numpy between its batches, saw its stop flag)
        return None
    return out, time.thread_time() - t0


#: how often a Dask task's watcher asks whether the task was cancelled
#: (:func:`_halted_when_cancelled`)
CANCEL_POLL_S = 0.05


@contextlib.contextmanager
def _halted_when_cancelled(wanted: Callable[[], bool]) -> Iterator[None]:
    """On a Dask worker, while this thread runs a Dask task's engine tasks: the compiled walks
    read a stop flag (:func:`gctool.engine.threads.halt_flag`, the thread's task being task 0
    of a run of its own) that a watcher thread sets, every :data:`CANCEL_POLL_S`, once the
    Dask task is cancelled (:func:`_still_wanted`); the walk then ends at its next check and
    its engine task raises :class:`~gctool.engine.threads.Cancelled` instead of walking up to
    its whole range; so does a numpy route at its next batch (an attack oracle's,
    :meth:`gctool.audit.oracles.base.Oracle.errors`; verify's kernel's; an encoded frame's
    spectra).  Other work finishes its engine task.
    Outside a Dask task nothing is watched."""
    if not getattr(wanted, "on_dask", False):
        yield
        return
    from gctool.engine.threads import TaskOrder, set_task

    order, done = TaskOrder(), threading.Event()

    def watch() -> None:
        while not done.wait(CANCEL_POLL_S):
            if not wanted():
                order.stop()
                return

    threading.Thread(target=watch, name="gctool-cancel-watch", daemon=True).start()
    set_task(order, 0)
    try:
        yield
    finally:
        set_task(None)
        done.set()


def _keep_heap() -> bool:
    """Under Dask's nanny (which sets ``MALLOC_TRIM_THRESHOLD_``, and so turns off glibc's
    adaptive mmap threshold), the heap kept as the command line keeps it
    (:func:`gctool._memory.keep_heap`, once per process).  Otherwise every array of 128 KB or
    more that an engine task allocates (a compiled walk's errors, 512 KB a chunk) is a fresh
    mapping whose pages fault in again: the attack walk ran 15-40% slower per set on such a
    worker than in this process (real cyclic n=40 s=6, the same tasks, alternated).  Memory
    above :data:`~gctool._memory.HEAP_KEPT` is still returned to the system as Dask intends.
    True when set."""
    return os.environ.get("MALLOC_TRIM_THRESHOLD_") is not None and keep_heap()


#: what a Dask worker has done of its start for a kind of kernels (:func:`_worker_state_here`):
#: nothing, imported gctool's engine (:func:`_engine_parts`), loaded compiled kernels of other
#: kinds only, loaded this kind's (:class:`gctool.compiled.Kind`)
FRESH, IMPORTED, OTHER, LOADED = 0, 1, 2, 3


def _engine_parts() -> tuple[tuple[Any, str], ...]:
    """The modules that every compiled enumeration imports on a Dask worker, as (package,
    submodule) pairs: gctool's jit helpers (numba with them) and the engine's sweep.  A worker
    that has them is charged the kernels' load alone (:func:`kernels_load_ns`)."""
    from gctool import compiled, engine

    return (compiled, "_jit"), (engine, "sweep")


def _worker_state_here(kind: Kind | None = None) -> int:
    """On a Dask worker (:meth:`DaskRunner._workers_loaded`): :data:`LOADED` when a compiled
    kernel of gctool of ``kind`` has run in this process (``kind`` None: of any kind), as
    this process's own estimates read it (:class:`gctool.compiled.Loaded`,
    :func:`gctool.budget.local_load_ns`), :data:`OTHER` when only kernels of other kinds have,
    else :data:`IMPORTED` when it has imported the modules of :func:`_engine_parts` (an
    imported submodule is an attribute of its package), else :data:`FRESH`.  Imports nothing
    heavy (two packages' ``__init__``)."""
    from gctool import compiled

    here = compiled.Loaded.now()
    if here.kinds:
        return LOADED if here.has(kind) else OTHER
    return IMPORTED if all(hasattr(package, name) for package, name in _engine_parts()) \
        else FRESH


def _kind(compiled: bool | Kind) -> Kind | None:
    """The kind of kernels of an enumeration that walks compiled (``compiled``: its
    :class:`~gctool.compiled.Kind`, or True when the caller does not name it: kernels of any
    kind then count as its)."""
    from gctool.compiled import Kind

    return compiled if isinstance(compiled, Kind) else None


def _still_wanted() -> Callable[[], bool]:
    """On a Dask worker, whether the Dask task running in this thread is still wanted: Dask
    cannot interrupt a running task, but when its client cancels it the worker marks it
    'cancelled', and :func:`_run_tasks` stops before its next engine task (a look-ahead's
    or an early stop's tasks end within one engine task, not after all of theirs).  Outside a
    Dask task: always True."""
    try:
        from distributed import get_worker

        dask_worker = get_worker()
        key = dask_worker.get_current_task()
        states = dask_worker.state.tasks
    except (ImportError, ValueError, AttributeError, KeyError):
        return lambda: True

    def wanted() -> bool:
        ts = states.get(key)
        return ts is not None and ts.state != "cancelled"

    wanted.on_dask = True  # type: ignore[attr-defined]
    return wanted


#: a worker without its kernel (:func:`_split`) of at most this many pickled bytes travels
#: inline with each Dask task (a rank-range source and a few numbers: about 200 bytes)
INLINE_MAX = 2048
#: a kernel (:func:`_split`: the code and its compiled screen, 14 KB for real cyclic n=40) of
#: at most this many pickled bytes travels in each Dask task (:class:`_Carried`) and is
#: unpickled once per worker process and session; a larger one is scattered to every worker
#: (``scatter(broadcast=True)``) once per session.  The first task waits for a scatter:
#: benchmarks/bench_dask.py measures 8 ms of CPU and of wall on the quiet 2-core loopback
#: cluster, and on the loaded machine its replicate step (worker to worker) took 100-250 ms
#: of wall and 50 ms of the workers' CPU; the carried bytes add nothing measurable to a task
CARRY_MAX = 1 << 18
#: carried kernels a worker process keeps, the last used (:class:`_Carried`)
KERNELS_KEPT = 4
_KERNELS: collections.OrderedDict[str, Any] = collections.OrderedDict()
_KERNELS_LOCK = threading.Lock()


@dataclass(frozen=True)
class _Carried:
    """A kernel carried by every Dask task as its pickled bytes; a worker process unpickles it
    once per ``key`` (the SHA-256 of the bytes and of the session: the rebuilt oracle's meter
    counts one session's work, :class:`gctool.audit.oracles.kernel.OracleKernel`) and keeps
    the last :data:`KERNELS_KEPT` (the threads of a process share them, as they share a
    scattered kernel)."""

    key: str
    blob: bytes

    def load(self) -> Any:
        with _KERNELS_LOCK:
            kernel = _KERNELS.get(self.key)
            if kernel is None:
                kernel = _KERNELS[self.key] = pickle.loads(self.blob)
                while len(_KERNELS) > KERNELS_KEPT:
                    _KERNELS.popitem(last=False)
            else:
                _KERNELS.move_to_end(self.key)
        return kernel


def _sealed(obj: Any, salt: str) -> _Carried | None:
    """``obj`` as a :class:`_Carried` of this session (``salt``) whatever its size (what is
    scattered when it is too large to carry), or None when only Dask's cloudpickle can pickle
    it."""
    blob = _pickled(obj)
    if blob is None:
        return None
    return _Carried(hashlib.sha256(salt.encode() + blob).hexdigest(), blob)


def _array_reduced(array: np.ndarray) -> str | tuple[Any, ...]:
    """How :func:`_pickled` pickles a numpy array: a read-only one as a writable copy that is
    made read-only again when unpickled (numpy's own pickle makes every array writable).
    numba compiles a kernel for each set of argument types, and an array's type says whether
    it is read-only: a kernel whose arrays changed flags on the way to a Dask worker (the real
    screen's row scale and row-normalised B) called signatures that no run in the client had
    called, which a cache warmed by local runs (``tests/warm_kernels.py``) did not hold: each
    fresh worker compiled them, seconds of its first task (15.9 s against 1.2 s for the next
    run, verify of real cyclic n=48 s=6 on a 1-worker cluster of the 2-core machine)."""
    if array.flags.writeable:
        return array.__reduce_ex__(pickle.DEFAULT_PROTOCOL)
    return _read_only, (array.copy(order="K"),)  # (its layout kept: a type too)


def _read_only(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)
    return array


def _pickled(obj: Any) -> bytes | None:
    """``obj`` pickled, its read-only numpy arrays kept read-only (:func:`_array_reduced`);
    None: only Dask's cloudpickle can pickle it (e.g. it holds a lambda)."""
    out = io.BytesIO()
    pickler = pickle.Pickler(out)
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        pickler.dispatch_table = {**copyreg.dispatch_table, numpy.ndarray: _array_reduced}
    try:
        pickler.dump(obj)
    except Exception:
        return None
    return out.getvalue()


def _split(worker: Any) -> tuple[Any, Any]:
    """``(shell, kernel)``: a dataclass worker with a ``kernel`` field whose copy without the
    kernel pickles to at most :data:`INLINE_MAX` bytes gives that copy and its kernel (the
    code, the compiled screen: what every call of a session shares, scattered once); any
    other worker gives ``(None, worker)`` (scattered whole, once per call)."""
    if not dataclasses.is_dataclass(worker) or isinstance(worker, type) or not any(
            f.name == "kernel" for f in dataclasses.fields(worker)):
        return None, worker
    if getattr(worker, "kernel", None) is None:
        return None, worker
    shell: Any = copy.copy(worker)
    shell.kernel = None
    if len(_pickled(shell) or b"x" * (INLINE_MAX + 1)) > INLINE_MAX:
        return None, worker
    return shell, getattr(worker, "kernel", None)


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

    def missing(self) -> list[int]:
        """Positions still needed that have no result."""
        return [i for i in range(self.nxt, self.stop_at) if i not in self.results]


def _cancel_soon(client: Any, futures: list[Any]) -> None:
    """Cancel ``futures`` without waiting for the scheduler's answer (``Client.cancel`` is a
    round trip, which an early stop would wait for before the run can end): the request is
    handed to the client's event loop.  The window has forgotten them (a result that still
    arrives is dropped), and a client that closes meanwhile releases them anyway."""
    if not futures:
        return
    with contextlib.suppress(BaseException):
        if client.status == "running":
            asyncio.run_coroutine_threadsafe(client.cancel(futures, asynchronous=True),
                                             client.loop.asyncio_loop)


def _is_killed_worker(exc: BaseException | None) -> bool:
    return type(exc).__name__ == "KilledWorker"


class _Window:
    """A bounded window of futures on ``client``: submit, receive, resubmit what was lost,
    cancel what is not needed, record finished tasks in the checkpoint, and watch the
    cluster while waiting."""

    def __init__(self, runner: DaskRunner, client: Any, worker: Any,  # noqa: PLR0913 (a run's parts)
                 tasks: Sequence[Any], feed: _InOrder, ck: Checkpoint | None,
                 done: dict[str, Any], stats: dict[str, Any] | None = None,
                 priority: int = 0) -> None:
        self.runner, self.client, self.worker, self.tasks = runner, client, worker, tasks
        self.feed, self.ck, self.done = feed, ck, done
        self.stats = runner.stats if stats is None else stats
        #: Dask's priority of this window's tasks (higher first): in a session, an
        #: enumeration's tasks come before those of the enumerations opened after it (a
        #: threshold search's next size, started ahead, waits for the sizes before it)
        self.priority = priority
        #: the caller's estimate of this enumeration (:attr:`DaskRunner.expected_s`)
        self.expected_s = runner.expected_s
        #: Dask tasks still to submit at the least size (``batch`` engine tasks), before the
        #: guided sizes
        self.small = 0
        # the worker (or its kernel: _split) on the cluster, scattered when needed
        self.shell, self.payload = _split(worker)
        # the kernel in each task (_Carried) when it is at most CARRY_MAX bytes, else (and a
        # whole worker) scattered to the cluster (remote) when needed: as a _Carried too (its
        # arrays' flags kept, _array_reduced) unless only Dask's cloudpickle can pickle it
        sealed = _sealed(self.payload, runner.salt())
        self.carried = None if self.shell is None or sealed is None or \
            len(sealed.blob) > CARRY_MAX else sealed
        self.sent = self.payload if sealed is None else sealed
        self.remote: Any = None
        todo = [i for i in range(feed.nxt, len(tasks)) if i not in feed.results]
        self.queue, self.left = iter(todo), len(todo)
        self.retry: list[list[int]] = []  # lost groups, to submit before anything new
        self.tries: dict[int, int] = {}  # first task of a group -> times lost
        self.threads = 1  # worker threads of the cluster, last reported (DaskRunner.guided)
        self.ran, self.spent = 0, 0.0  # engine tasks back, and their seconds on the workers
        self.share: int | None = None  # engine tasks per Dask task in the last round (size)
        self.futures: dict[Any, list[int]] = {}
        self.last_save = time.monotonic()
        self.last_health = 0.0
        self.alone_since: float | None = None  # no worker (or no answer) since
        self.known: int | None = None  # workers the scheduler has just reported (used once)
        self.lost_after_s = runner.lost_after_s if runner.lost_after_s is not None else (
            lost_after())

    def _scatter(self) -> Future:
        return self.runner.scattered(self.client, self.sent, self.count_workers, self.stats)

    def size(self) -> int:
        """Engine tasks in the next Dask task (:attr:`DaskRunner.guided`).  The cluster's
        threads are those of the scheduler's last answer (:meth:`count_workers`): no request
        per task (a synchronous client's ``scheduler_info()`` is a round trip, with every
        worker's details, that a dying scheduler could leave unanswered)."""
        batch = max(1, self.runner.batch)
        if not self.runner.guided:
            return batch
        # then at least TASK_MIN_S of work, at the mean time of an engine task: measured once
        # Dask tasks have come back, before that the caller's estimate (DaskRunner.expected_s)
        low, expected = batch, self.expected_s
        if self.ran and self.spent > 0:
            low = max(batch, math.ceil(TASK_MIN_S * self.ran / self.spent))
        elif expected is not None and expected > 0 and self.tasks:
            low = max(batch, math.ceil(TASK_MIN_S * len(self.tasks) / expected))
        size = max(low, min(GUIDED_MAX * batch, -(-self.left // (2 * self.threads))))
        if self.share is None and self.left <= size * self.threads:
            # the last round: what is left, shared among the threads (3 engine tasks on 2
            # threads: Dask tasks of 2 and 1, not one of 3 while a thread waits)
            self.share = max(1, -(-self.left // self.threads))
        return size if self.share is None else min(size, self.share)

    def _group(self) -> list[int]:
        if self.retry:
            self.retry.sort()
            return self.retry.pop(0)
        group: list[int] = []
        size = self.size()
        if self.small > 0:  # (a look-ahead behind another one: DaskRunner.start)
            self.small -= 1
            size = max(1, self.runner.batch)
        for i in self.queue:
            self.left -= 1
            if i >= self.feed.stop_at:
                break
            group.append(i)
            if len(group) >= size:
                break
        return group

    def submit(self) -> Future | None:
        """Submit the next group of tasks; None when there is nothing to submit now."""
        group = [i for i in self._group() if i < self.feed.stop_at]
        if not group:
            return None
        if self.carried is None and (self.remote is None or self.remote.status != "finished"):
            try:  # not yet sent, or every copy was lost with its workers
                self.remote = self._scatter()
            except (Exception, asyncio.CancelledError):  # no worker yet: try again later
                self.retry.append(group)
                return None
        chunk = [self.tasks[i] for i in group]
        args = ((self.remote, chunk) if self.shell is None else
                (self.shell, chunk, self.carried or self.remote))
        f = self.client.submit(_run_tasks, *args, pure=False, priority=self.priority,
                               key=f"gctool-{self.runner.key[:12]}-{group[0]}-{time.time_ns()}")
        self.futures[f] = group
        self.stats["submitted"] += len(group)
        self.stats["dask_tasks"] += 1
        return f

    def lost(self, group: list[int], killed: bool) -> None:
        """A group whose result is gone: submit it again (at most :data:`RETRIES` times)."""
        self.stats["lost"] += len(group)
        tries = self.tries[group[0]] = self.tries.get(group[0], 0) + 1
        if tries > RETRIES:
            why = ("killed its Dask workers" if killed else "was lost with its Dask workers")
            raise self.give_up(f"ranks {self.tasks[group[0]][1]:,}-"
                               f"{self.tasks[group[-1]][2] - 1:,} {why} {tries} times")
        self.retry.append(group)

    def receive(self, f: Any) -> None:
        group = self.futures.pop(f, None)
        if group is None:
            return  # cancelled by this run
        group = [i for i in group if i < self.feed.stop_at]
        if not group:
            return
        if f.status == "error":
            exc = f.exception(timeout=RESULT_S)
            if not _is_killed_worker(exc):
                f.result(timeout=RESULT_S)  # the task's own error: raised here, as locally
            self.lost(group, killed=True)
            return
        try:
            back = f.result(timeout=RESULT_S) if f.status == "finished" else None
        except (Exception, asyncio.CancelledError):  # its worker died before we fetched it
            back = None
        if back is None:  # cancelled or lost (its worker, or the code, died)
            self.lost(group, killed=False)
            return
        results, spent = back
        self.ran += len(results)
        self.spent += float(spent)
        self.stats["worker_s"] += float(spent)  # (the seconds of every Dask task on a worker)
        for i, res in zip(group, results, strict=False):
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
        _cancel_soon(self.client, late)
        for g in late:
            self.futures.pop(g, None)
        self.retry = [g for g in self.retry if g[0] <= i]

    def give_up(self, reason: str) -> Exception:
        from gctool.engine.parallel import LostTasks

        return LostTasks(self.feed.missing(), reason, self.runner.resume_hint())

    def health(self) -> None:
        """Raise LostTasks when the scheduler is gone, or when the cluster has had no worker
        (or the scheduler no answer) for :data:`LOST_AFTER_S`."""
        client = self.client
        if client.status != "running":
            raise self.give_up(f"the connection to the Dask scheduler "
                               f"{self.runner.address_text} was lost")
        now = time.monotonic()
        if now - self.last_health < HEALTH_EVERY_S:
            return
        self.last_health = now
        workers = self.count_workers()
        if workers > 0:
            self.alone_since = None
            return
        if self.alone_since is None:
            self.alone_since = now
        elif now - self.alone_since >= self.lost_after_s:
            what = ("had no worker" if workers == 0 else "did not answer")
            raise self.give_up(f"the Dask scheduler {self.runner.address_text} {what} for "
                               f"{self.lost_after_s:g} s")

    def counted(self, workers: int, threads: int, at: float | None = None) -> None:
        """The scheduler has reported ``workers`` workers of ``threads`` threads at ``at``
        (``time.monotonic()``, default now; :meth:`DaskRunner._wait_for_workers`): the first
        scatter and the health check until :data:`HEALTH_EVERY_S` after it take that answer
        instead of asking again (each question is a round trip to the scheduler)."""
        self.known, self.threads = workers, max(1, threads)
        self.last_health = time.monotonic() if at is None else at

    def count_workers(self) -> int:
        """The scheduler's number of workers (-1: it did not answer within 5 s); its worker
        threads are kept for :meth:`size`."""
        if self.known is not None:
            known, self.known = self.known, None
            return known
        try:
            info = self.client.sync(self.client.scheduler.identity, n_workers=0,
                                    callback_timeout=HEALTH_EVERY_S * 5)
        except (Exception, asyncio.CancelledError):
            return -1
        threads = int(info.get("total_threads", 0) or 0)
        workers = int(info.get("n_workers", 0) or 0)
        if threads > 0:
            self.threads = threads
            self.runner.seen(self.client, threads, workers)
        return workers

    def wait(self, ac: Any) -> list[Any]:
        """The futures that are ready, waiting at most :data:`POLL_S` for one (so that lost
        groups are submitted again as soon as the code can be scattered), after checking the
        cluster."""
        self.health()
        with ac.thread_condition:
            if not ac.has_ready():
                ac.thread_condition.wait(POLL_S)
        return list(ac.next_batch(block=False))

    def fill(self, window: int) -> list[Any]:
        """Submit groups until ``window`` futures are in flight or nothing is left to submit
        now; the new futures."""
        new = []
        while len(self.futures) < window:
            f = self.submit()
            if f is None:
                break
            new.append(f)
        return new

    def run(self, window: int) -> None:
        from distributed import as_completed

        # (the futures a look-ahead submitted before this call: DaskRunner.start)
        ac = as_completed(list(self.futures), loop=self.client.loop)
        try:
            while True:
                for f in self.fill(window):
                    ac.add(f)
                if not self.futures and not self.retry:
                    return  # everything was received (the fold proves it is complete)
                for f in self.wait(ac):
                    self.receive(f)
                if self.feed.drain():
                    return
        finally:
            self.stats["unmerged"] = sum(r.covered or 0 for r in self.feed.results.values())
            if self.ck is not None:
                self.ck.save()  # first: whatever happens while shutting down, keep the work
            _cancel_soon(self.client, list(self.futures))


@dataclass
class DaskRunner:
    """``runner(worker, tasks, jobs, on_result)`` over a Dask cluster.

    ``scheduler``: address of a running scheduler (``tcp://host:8786``, checked by
    :func:`check_address`); None starts a LocalCluster with ``jobs`` single-threaded worker
    processes (at most the available cores) for the duration of the run.  ``key`` identifies
    the run in the checkpoint (the CLI hashes the code and options).  ``lost_after_s``: how
    long a cluster may have no worker (or its scheduler not answer) before the run ends
    incomplete (None: :func:`lost_after`)."""

    scheduler: str | None = None
    checkpoint: str | None = None
    key: str = ""
    window: int | None = None  # futures in flight (default WINDOW_PER_THREAD x threads, >= 4)
    batch: int = 1  # engine tasks per Dask task (amortises scheduling; results unchanged)
    lost_after_s: float | None = None
    #: a Dask task takes 1 / (2 x worker threads) of the engine tasks not yet submitted, at
    #: least ``batch`` and at most ``GUIDED_MAX x batch``: large tasks first, small ones at the
    #: end (OpenMP's guided schedule), so that the per-task overhead stays small and the workers
    #: finish together; which engine tasks run, and the results, are the same
    guided: bool = False
    stats: dict[str, Any] = field(default_factory=dict)
    #: an enumeration estimated below this many seconds of one core runs in this process
    #: instead (:func:`placed`; the CLI: :data:`LOCAL_BELOW_S`); 0: everything on the cluster
    local_below_s: float = 0.0
    #: an open session (``with runner:``): its client, and what its calls scattered (by the
    #: SHA-256 of the pickled object)
    _session: contextlib.ExitStack | None = field(default=None, init=False, repr=False)
    _session_client: Any = field(default=None, init=False, repr=False)
    _sent: dict[str, Any] = field(default_factory=dict, init=False, repr=False)
    _session_salt: str = field(default="", init=False, repr=False)
    #: the estimate of the running call's enumeration, seconds of one core (set by
    #: :func:`estimated`; None: not known): its first Dask tasks are sized with it
    expected_s: float | None = field(default=None, init=False, repr=False)
    #: the scheduler's last answer about its workers: (client, threads, workers, when)
    _seen: tuple[Any, int, int, float] | None = field(default=None, init=False, repr=False)
    #: enumerations started ahead in the session (:meth:`start`), by run fingerprint, until a
    #: call takes them over or they are cancelled
    _pending: dict[str, _Started] = field(default_factory=dict, init=False, repr=False)
    #: enumerations opened in the session (their Dask priority: :attr:`_Window.priority`)
    _opened: int = field(default=0, init=False, repr=False)
    #: the counts of :attr:`stats` added over every call and look-ahead since the runner was
    #: made (``dask_tasks``, ``submitted``, ``cancelled``, ``worker_s``), and the Dask tasks
    #: and engine tasks of look-aheads cancelled before a call took them over
    #: (``ahead_dropped``, ``ahead_tasks_dropped``) and the look-aheads taken over
    #: (``ahead_taken``)
    totals: dict[str, float] = field(default_factory=dict, init=False, repr=False)
    #: the client whose workers ran a compiled enumeration of this runner (a marker without a
    #: session), and the kinds of kernels those enumerations loaded there (None: a kind not
    #: named, :func:`_kind`) (:meth:`workers_state`)
    _loaded_on: Any = field(default=None, init=False, repr=False, compare=False)
    _loaded_kinds: set[Kind | None] = field(default_factory=set, init=False, repr=False,
                                            compare=False)
    #: the workers' last answers whether they have loaded a kind of kernels
    #: (:meth:`_workers_loaded`), by kind: (when, ``time.monotonic()``; the least advanced
    #: worker's :func:`_worker_state_here`)
    _asked: dict[Kind | None, tuple[float, int]] = field(default_factory=dict, init=False,
                                                         repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.scheduler is not None:
            check_address(self.scheduler)
        if self.checkpoint is not None:
            check_checkpoint_path(self.checkpoint)

    def __enter__(self) -> DaskRunner:
        """A session: every call until :meth:`__exit__` uses one client (and one local
        cluster, started by the first call), and an object the calls share (the code and its
        compiled screen: the worker's ``kernel``, :func:`_split`) is unpickled once per worker
        process (:class:`_Carried`) or, when too large to carry, scattered once, not once per
        call (``attack --threshold`` makes one call per size, ``--curve`` one per point).
        Without a session every call connects (or starts a local cluster) and sends it."""
        if self._session is not None:
            raise RuntimeError("this DaskRunner's session is already open")
        self._session = contextlib.ExitStack()
        self._session_salt = os.urandom(16).hex()
        self._opened = 0
        return self

    def workers_state(self, kind: Kind | None = None) -> int:
        """How far the least advanced of this runner's workers is in its start for ``kind``
        of kernels (:func:`_worker_state_here`; None: any kind), as :func:`kernels_load_ns`
        charges it.  What the runner remembers (:meth:`_remembered`) when that is
        :data:`LOADED`; else, for a scheduler's workers in a session, their answer when asked
        (:meth:`_workers_loaded`: for an earlier client, an earlier gctool command); else what
        it remembers, or :data:`FRESH`."""
        remembered = self._remembered(kind)
        if remembered == LOADED:
            return LOADED
        if self.scheduler is None or self._session is None:
            return FRESH if remembered is None else remembered
        state = self._workers_loaded(kind)
        if state == LOADED:
            self.loaded(kind)
        return state

    def _remembered(self, kind: Kind | None) -> int | None:
        """What this runner's compiled enumerations left on its workers for ``kind``:
        :data:`LOADED` once one of that kind (``kind`` None, or one whose kind was not named:
        of any) ran there, :data:`OTHER` once only others did, None when none did.  A
        scheduler's workers outlive its calls; a local cluster's, the session whose cluster
        ran them (a call without a session starts a cluster of its own)."""
        if self._loaded_on is None or not self._loaded_kinds:
            return None
        if self.scheduler is None and (self._session_client is None
                                       or self._loaded_on is not self._session_client):
            return None
        kinds = self._loaded_kinds
        return LOADED if kind is None or kind in kinds or None in kinds else OTHER

    def kernels_warm(self, kind: Kind | None = None) -> bool:
        """Have this runner's workers loaded the compiled kernels of ``kind`` (None: of any
        kind) (:meth:`workers_state`, :func:`kernels_load_ns`)?"""
        return self.workers_state(kind) >= LOADED

    def engine_imported(self, kind: Kind | None = None) -> bool:
        """Have this runner's workers imported gctool's engine (:func:`_engine_parts`), so that
        a compiled enumeration costs them the kernels' load alone (:func:`kernels_load_ns`)?
        (:meth:`workers_state`: a local cluster's, once it has run a compiled enumeration; a
        call without a session starts a cluster of fresh workers.)"""
        return self.workers_state(kind) >= IMPORTED

    def starts_cluster(self) -> bool:
        """Does this runner's next call start a local cluster (:func:`cluster_start_ns`): no
        scheduler, and no session whose cluster is running?"""
        if self.scheduler is not None:
            return False
        client = self._session_client
        return self._session is None or getattr(client, "status", None) != "running"

    def _workers_loaded(self, kind: Kind | None = None) -> int:
        """Ask the workers of the scheduler how far each is in its start for ``kind``
        (:func:`_worker_state_here`, one ``client.run``: 1-4 ms on the loopback cluster of
        the 2-core development machine) over the session's client, opened now when the session
        has none (as its first call would); the least advanced worker's answer.  A cluster
        without workers, a worker without gctool or no answer within :data:`ASK_S`:
        :data:`FRESH`.  An answer of the last :data:`HEALTH_EVERY_S` for the same kind is taken
        as it is (an estimate and its refusal's words ask once)."""
        last = self._asked.get(kind)
        if last is not None and time.monotonic() - last[0] < HEALTH_EVERY_S:
            return last[1]
        with _quiet(), self._client(1) as client:
            try:  # (the public Client.run is this call without a time limit: its keywords
                # are documented as the function's; Dask's sync takes callback_timeout)
                answers = client.sync(client._run, _worker_state_here, kind,
                                      on_error="return", callback_timeout=ASK_S)
            except (Exception, asyncio.CancelledError):
                answers = {}
        states = [a if a in (FRESH, IMPORTED, OTHER, LOADED) and type(a) is int else FRESH
                  for a in answers.values()]
        state = min(states) if states else FRESH
        self._asked[kind] = (time.monotonic(), state)
        return state

    def loaded(self, kind: Kind | None = None) -> None:
        """A compiled enumeration of ``kind`` (None: not named) ran on this runner's workers
        (:meth:`workers_state`).  A local cluster's kinds are forgotten with its session's
        client (a new cluster)."""
        marker = self._session_client
        if marker is None:
            marker = self._loaded_on if self.scheduler is not None and \
                self._loaded_on is not None else object()
        if marker is not self._loaded_on and self.scheduler is None:
            self._loaded_kinds = set()
        self._loaded_on = marker
        self._loaded_kinds.add(kind)

    def salt(self) -> str:
        """What tells this session's (or, without one, this call's) carried kernels apart from
        those of other runs on the same workers (:class:`_Carried`)."""
        return self._session_salt if self._session is not None else os.urandom(16).hex()

    def __exit__(self, *exc: object) -> None:
        for started in list(self._pending.values()):
            started.cancel()
        stack, self._session, self._session_client = self._session, None, None
        self._sent.clear()
        self._seen = None
        self._asked.clear()
        if stack is not None:
            stack.close()

    def seen(self, client: Any, threads: int, workers: int) -> float:
        """The scheduler of ``client`` has just reported ``workers`` workers of ``threads``
        threads: kept for the session's next call (:meth:`_wait_for_workers`); returns when."""
        at = time.monotonic()
        self._seen = (client, threads, workers, at)
        return at

    def scattered(self, client: Any, obj: Any, count_workers: Callable[[], int],
                  stats: dict[str, Any] | None = None) -> Future:
        """``obj`` on every worker of ``client``: sent now (``scatter(broadcast=True)``), or,
        in a session, the copy an earlier call sent of an object that pickles to the same
        bytes, while the cluster still holds it.  TimeoutError when the cluster has no worker
        (a scatter would wait for one)."""
        blob = _pickled(obj) if self._session else None
        key = hashlib.sha256(blob).hexdigest() if blob is not None else ""
        sent = self._sent.get(key) if key else None
        if sent is not None and sent.client is client and sent.status == "finished":
            return sent
        if count_workers() <= 0:
            raise TimeoutError
        future = client.scatter(obj, broadcast=True, hash=False, timeout=RESULT_S)
        stats = self.stats if stats is None else stats
        stats["scattered"] = stats.get("scattered", 0) + 1
        if key:
            self._sent[key] = future
        return future

    @property
    def address_text(self) -> str:
        return "(local cluster)" if self.scheduler is None else str(check_address(
            self.scheduler))

    def resume_hint(self) -> str:
        """What a user does after an incomplete run."""
        if self.checkpoint:
            return (f"rerun with the same `checkpoint` {printable(self.checkpoint, 100)} to "
                    "check only the missing ranges")
        return "rerun (with `checkpoint` FILE a rerun after a fault resumes where it stopped)"

    def unmerged_note(self) -> str:
        """After an interrupt: the sets that finished on the cluster but could not be merged
        yet (results arrive in any order, the fold takes them in rank order), or ""."""
        sets = int(self.stats.get("unmerged", 0) or 0)
        if not sets:
            return ""
        kept = ("saved in the checkpoint" if self.checkpoint
                else "not saved: no `checkpoint`")
        return f"{sets:,} more sets had finished out of order on the cluster ({kept})"

    def _priority(self) -> int:
        """The Dask priority of the next enumeration (:attr:`_Window.priority`): in a session,
        below every one opened before it; 0 outside one."""
        if self._session is None:
            return 0
        self._opened += 1
        return -self._opened

    def _count(self, stats: dict[str, Any]) -> None:
        for k in ("dask_tasks", "submitted", "cancelled", "worker_s"):
            self.totals[k] = self.totals.get(k, 0) + stats.get(k, 0)

    def start(self, worker: Any, tasks: Sequence[Any], jobs: int) -> _Started | None:
        """In a session (without a checkpoint): submit the first Dask tasks of the
        enumeration ``worker`` x ``tasks`` now, at a priority below every enumeration opened
        before (they run when the workers have nothing earlier to do), and return what was
        started (None: not started).  When no other enumeration of the session was started
        ahead (the cluster is idle until this one: a threshold search runs its small sizes in
        the client), up to the window; else (it waits behind one) a Dask task of ``batch``
        engine tasks per worker thread, which keeps the workers busy from the end of that
        enumeration to the call of this one, and which is all that is lost when that
        enumeration finds its set (a threshold search's last size often does at once).  A
        later call with the same tasks and a worker that pickles to the same bytes takes them
        over (same results: the same ranges, worker and fold); :meth:`_Started.cancel` drops
        them (nothing more starts, the running ones stop before their next engine task,
        :func:`_still_wanted`).  A threshold search starts its next size so
        (:class:`gctool.engine.sweep.ExceedSearch`), after the budget has admitted it."""
        if self._session is None or self.checkpoint is not None or not tasks:
            return None
        require_dask()
        fingerprint = _fingerprint(self.key, worker, tasks)
        if fingerprint in self._pending:
            return None
        stats = _fresh_stats(len(tasks))
        with _quiet(), self._client(jobs) as client:
            threads, workers, at = self._wait_for_workers(client)
            window = _Window(self, client, worker, tasks, _InOrder(_unread, len(tasks)), None,
                             {}, stats, self._priority())
            window.counted(workers, threads, at)
            if self._pending:  # the cluster has another started enumeration before this one:
                window.small = threads  # one small Dask task per thread bridges the gap
                window.fill(threads)
            else:  # the cluster has nothing else to do: the whole window
                window.fill(self.window or max(4, WINDOW_PER_THREAD * threads))
        started = self._pending[fingerprint] = _Started(self, fingerprint, window,
                                                        _payload_bytes(worker))
        return started

    def __call__(self, worker: Any, tasks: Sequence[Any], jobs: int,
                 on_result: Callable[[int, Any], bool]) -> None:
        require_dask()
        ck = Checkpoint(self.checkpoint) if self.checkpoint else None
        fingerprint = _fingerprint(self.key, worker, tasks)
        ahead = self._pending.get(fingerprint)
        if ahead is not None and not ahead.fits(worker):
            ahead.cancel()
            ahead = None
        done = ck.done(fingerprint) if ck is not None else {}
        self.stats = _fresh_stats(len(tasks))
        feed = _InOrder(on_result, len(tasks))
        if ck is not None:
            for i, summary in sorted(ck.entries(fingerprint, tasks, worker).items()):
                feed.add(i, summary)  # replay the checkpoint (validated entries only)
                self.stats["resumed"] += 1
        if feed.drain():  # over before anything is submitted: no cluster needed
            return
        try:
            with _quiet(), self._client(jobs) as client:
                window = None if ahead is None else ahead.take(client, feed, self.stats)
                if window is None:
                    threads, workers, at = self._wait_for_workers(client)
                    window = _Window(self, client, worker, tasks, feed, ck, done,
                                     priority=self._priority())
                    window.counted(workers, threads, at)
                window.run(self.window or max(4, WINDOW_PER_THREAD * window.threads))
        finally:
            self._count(self.stats)

    def _wait_for_workers(self, client: Any) -> tuple[int, int, float]:
        """Worker threads and workers of the cluster, waiting up to ``lost_after_s`` for the
        first, and when the scheduler said so (``time.monotonic()``).  In a session, an answer
        of the last :data:`HEALTH_EVERY_S` (an earlier call's, :meth:`seen`) is taken as it is:
        each question is a round trip, and a threshold search makes one call per size."""
        last = self._seen
        if (self._session is not None and last is not None and last[0] is client
                and time.monotonic() - last[3] < HEALTH_EVERY_S and last[1] > 0):
            return last[1], last[2], last[3]
        wait = self.lost_after_s if self.lost_after_s is not None else lost_after()
        deadline = time.monotonic() + wait
        while True:
            try:
                info = client.sync(client.scheduler.identity, n_workers=0,
                                   callback_timeout=RESULT_S)
                threads = int(info.get("total_threads", 0) or 0)
            except (Exception, asyncio.CancelledError):
                threads = 0
            if threads > 0:
                workers = max(1, int(info.get("n_workers", 0) or 0))
                return threads, workers, self.seen(client, threads, workers)
            if time.monotonic() >= deadline:
                raise InvalidInput(f"the Dask scheduler {self.address_text} has no workers "
                                   f"(none joined within {wait:g} s)")
            time.sleep(POLL_S)

    @contextlib.contextmanager
    def _client(self, jobs: int, at_most_cores: bool = True) -> Iterator[Any]:
        """A client of the scheduler, or of a LocalCluster of ``jobs`` processes started for
        this run (at most the available cores unless ``at_most_cores`` is false: ``train``
        places its n logical workers on as many processes as it is asked for).  In a session
        (:meth:`__enter__`) the session's client, opened by its first call (again after its
        connection was lost), closed when the session ends."""
        if self._session is None:
            with self._open(jobs, at_most_cores) as client:
                yield client
            return
        client = self._session_client
        if client is None or client.status != "running":
            self._sent.clear()
            self._session_client = None
            client = self._session.enter_context(self._open(jobs, at_most_cores))
            self._session_client = client
        yield client

    @contextlib.contextmanager
    def _open(self, jobs: int, at_most_cores: bool) -> Iterator[Any]:
        """A new client (:meth:`_client`), closed (with its local cluster) at the end."""
        address = None if self.scheduler is None else check_address(self.scheduler)
        if address is not None:
            client = _connect(address)
            try:
                yield client
            finally:
                _abandon(client)
            return
        with _stderr_kept_from_children():
            cluster = _local_cluster(jobs, at_most_cores)
            try:
                client = _connect_local(cluster)
                try:
                    yield client
                finally:
                    _abandon(client)
            finally:
                _close_cluster(cluster)


def _fresh_stats(tasks: int) -> dict[str, Any]:
    return dict(tasks=tasks, resumed=0, submitted=0, cancelled=0, dask_tasks=0, lost=0,
                unmerged=0, scattered=0, worker_s=0.0)


def _unread(i: int, result: Any) -> bool:
    raise AssertionError("a look-ahead's results are read by the call that takes it over")


def _payload_bytes(worker: Any) -> bytes | None:
    """What a Dask task of ``worker`` computes with, pickled: its shell and its kernel
    (:func:`_split`), or the whole worker (None: only Dask's cloudpickle can pickle it)."""
    shell, kernel = _split(worker)
    parts = [_pickled(kernel)] + ([] if shell is None else [_pickled(shell)])
    if any(p is None for p in parts):
        return None
    return pickle.dumps(parts)


@dataclass
class _Started:
    """An enumeration a session started ahead (:meth:`DaskRunner.start`): its window, whose
    first Dask tasks are submitted, until a call takes it over (:meth:`take`) or
    :meth:`cancel` drops it."""

    runner: DaskRunner
    fingerprint: str
    window: _Window | None
    payload: bytes | None

    def fits(self, worker: Any) -> bool:
        """Does ``worker`` compute what the started tasks compute (its shell and kernel, or
        itself, pickle to the same bytes)?"""
        return self.payload is not None and _payload_bytes(worker) == self.payload

    def take(self, client: Any, feed: _InOrder, stats: dict[str, Any]) -> _Window | None:
        """The started window for the call that runs these tasks (``feed`` its fold,
        ``stats`` its counts, which get the submissions made ahead), or None (cancelled:
        another client)."""
        window, self.window = self.window, None
        self.runner._pending.pop(self.fingerprint, None)
        if window is None:
            return None
        if window.client is not client:
            _cancel_soon(window.client, list(window.futures))
            return None
        for k in ("submitted", "dask_tasks", "scattered"):
            stats[k] += window.stats[k]
        totals = self.runner.totals
        totals["ahead_taken"] = totals.get("ahead_taken", 0) + 1
        window.stats, window.feed = stats, feed
        return window

    def cancel(self) -> None:
        """Drop the started tasks (their futures cancelled without waiting, as an early stop
        does); a no-op once a call took them over."""
        window, self.window = self.window, None
        if self.runner._pending.get(self.fingerprint) is self:
            del self.runner._pending[self.fingerprint]
        if window is None:
            return
        window.stats["cancelled"] += len(window.futures)
        self.runner._count(window.stats)
        totals = self.runner.totals
        totals["ahead_dropped"] = totals.get("ahead_dropped", 0) + window.stats["dask_tasks"]
        totals["ahead_tasks_dropped"] = (totals.get("ahead_tasks_dropped", 0)
                                         + window.stats["submitted"])
        _cancel_soon(window.client, list(window.futures))
        window.futures.clear()


def cli_runner(scheduler: str | None = None, checkpoint: str | None = None, key: str = ""
               ) -> DaskRunner:
    """The runner of ``--executor dask`` (also the benchmarks'): Dask tasks of
    :data:`CLI_BATCH` engine tasks and more on the guided schedule, and enumerations estimated
    below :data:`LOCAL_BELOW_S` (the Dask setting ``gctool.local-below``, :func:`local_below`)
    in this process."""
    return DaskRunner(scheduler=scheduler, checkpoint=checkpoint, key=key, batch=CLI_BATCH,
                      guided=True, local_below_s=local_below())


def groups_tasks(runner: Any) -> bool:
    """Does ``runner`` group engine tasks into its Dask tasks itself (batches of them, or the
    guided schedule: the CLI's), so that an engine task may be as small as one chunk of a
    compiled walk?  (Otherwise each engine task is a Dask task, and holds several chunks.)"""
    if isinstance(runner, _Estimated):
        runner = runner.runner
    return isinstance(runner, DaskRunner) and (runner.guided or runner.batch > 1)


def placed(runner: Any, seconds: float, compiled: bool | Kind = False) -> Any:
    """The runner of an enumeration estimated at ``seconds`` of one core (calibrated, before it
    runs): ``runner`` told the estimate (:func:`estimated`), or None (the local engine, in this
    process) when ``runner`` is a :class:`DaskRunner` whose :attr:`~DaskRunner.local_below_s`
    is above the estimate.  Which sets run, and the results, are the same either way.
    ``compiled``: it walks compiled kernels (:func:`workers_start_ns`)."""
    if isinstance(runner, DaskRunner) and seconds < runner.local_below_s:
        return None
    return estimated(runner, seconds, compiled)


def estimated(runner: Any, seconds: float, compiled: bool | Kind = False) -> Any:
    """``runner`` for an enumeration estimated at ``seconds`` of one core: a
    :class:`DaskRunner` sizes its first Dask tasks with the estimate (:meth:`_Window.size`;
    later ones with the time its tasks took), and records that a ``compiled`` one loaded
    the kernels on its workers (:meth:`DaskRunner.loaded`); any other runner as it is."""
    if isinstance(runner, DaskRunner | _Estimated):
        return _Estimated(runner if isinstance(runner, DaskRunner) else runner.runner,
                          float(seconds), compiled)
    return runner


def workers_start_ns(runner: Any, compiled: bool | Kind) -> float:
    """What the Dask workers of ``runner`` cost an enumeration before its sets, in ns on no
    job's share (each worker process does its own, at the same time): starting the local
    cluster the run starts (:func:`cluster_start_ns`), and loading the compiled kernels on
    workers that have not (:func:`kernels_load_ns`); 0 for any other runner (a local one runs
    in this process, which :func:`~gctool.budget.start_ns` counts).  The one place the
    estimates count a Dask runner's start (:func:`start_words` names its parts)."""
    return cluster_start_ns(runner) + kernels_load_ns(runner, compiled)


def cluster_start_ns(runner: Any) -> float:
    """:data:`LOCAL_CLUSTER_NS` when ``runner`` is a :class:`DaskRunner` whose next call
    starts a local cluster (:meth:`DaskRunner.starts_cluster`); else 0 (a scheduler's
    cluster, a session's running one, or no Dask runner)."""
    if isinstance(runner, _Estimated):
        runner = runner.runner
    if not isinstance(runner, DaskRunner) or not runner.starts_cluster():
        return 0.0
    return float(LOCAL_CLUSTER_NS)


def kernels_load_ns(runner: Any, compiled: bool | Kind) -> float:
    """What loading the compiled kernels costs an enumeration that walks them (``compiled``:
    their :class:`~gctool.compiled.Kind`, or True: kernels of any kind count) on the Dask
    workers of ``runner``, by the least advanced worker's state
    (:meth:`DaskRunner.workers_state`: the workers of a scheduler are asked, in a session):
    nothing once they have loaded that kind; :data:`~gctool.budget.KIND_LOAD_NS` when they
    have loaded kernels of other kinds only; :data:`~gctool.budget.KERNELS_LOAD_NS` when they
    have loaded none, as :func:`~gctool.budget.local_load_ns` counts this process, and
    :data:`WORKER_IMPORT_NS` more while one of them has not imported gctool's engine (not
    asked: counted); 0 for any other runner."""
    if isinstance(runner, _Estimated):
        runner = runner.runner
    if not compiled or not isinstance(runner, DaskRunner):
        return 0.0
    from gctool.budget import KERNELS_LOAD_NS, KIND_LOAD_NS

    state = runner.workers_state(_kind(compiled))
    return float({LOADED: 0, OTHER: KIND_LOAD_NS, IMPORTED: KERNELS_LOAD_NS}.get(
        state, KERNELS_LOAD_NS + WORKER_IMPORT_NS))


def start_words(runner: Any, compiled: bool | Kind) -> str:
    """The parts of :func:`workers_start_ns` in words, for a refusal (:func:`with_start`), or
    "" when it is 0: e.g. "with starting a local Dask cluster (about 800 ms) and importing
    gctool and loading the compiled kernels on its workers (about 750 ms)"."""
    from gctool.budget import KERNELS_LOAD_NS, NS_PER_S, format_seconds

    cluster, kernels = cluster_start_ns(runner), kernels_load_ns(runner, compiled)
    parts = [cluster_words(cluster)] if cluster else []
    if kernels:
        where = "its workers" if cluster else "the Dask workers"
        what = ("loading" if kernels <= KERNELS_LOAD_NS else "importing gctool and loading")
        parts.append(f"{what} the compiled kernels on {where} (about "
                     f"{format_seconds(kernels / NS_PER_S)})")
    return f"with {' and '.join(parts)}" if parts else ""


def cluster_words(ns: float) -> str:
    """A local cluster's start of ``ns`` (:func:`cluster_start_ns`) in a refusal's words."""
    from gctool.budget import NS_PER_S, format_seconds

    return f"starting a local Dask cluster (about {format_seconds(ns / NS_PER_S)})"


def with_start(head: str, words: str) -> str:
    """A refusal's ``head`` (what is refused and its size, before "needs about ...") naming
    the Dask start its estimate counts (``words``: :func:`start_words`), between commas."""
    return f"{head.rstrip(',')}, {words}," if words else head


def ran_on(runner: Any, compiled: bool | Kind) -> None:
    """An enumeration ran on ``runner``: when ``compiled`` (its kind of kernels, or True) and
    ``runner`` is Dask's, its workers have loaded those kernels (:meth:`DaskRunner.loaded`);
    any other, nothing."""
    if isinstance(runner, _Estimated):
        runner = runner.runner
    if compiled and isinstance(runner, DaskRunner):
        runner.loaded(_kind(compiled))


@dataclass(frozen=True)
class _Estimated:
    """A :class:`DaskRunner` for one enumeration estimated at ``seconds`` of one core
    (:func:`estimated`), ``compiled`` or not."""

    runner: DaskRunner
    seconds: float
    compiled: bool | Kind = False

    def __call__(self, worker: Any, tasks: Sequence[Any], jobs: int,
                 on_result: Callable[[int, Any], bool]) -> None:
        self.runner.expected_s = self.seconds
        try:
            self.runner(worker, tasks, jobs, on_result)
        finally:
            self.runner.expected_s = None
            ran_on(self.runner, self.compiled)

    def start(self, worker: Any, tasks: Sequence[Any], jobs: int) -> _Started | None:
        """:meth:`DaskRunner.start`, its first Dask tasks sized with the estimate."""
        self.runner.expected_s = self.seconds
        try:
            return self.runner.start(worker, tasks, jobs)
        finally:
            self.runner.expected_s = None


def _connect(address: Address) -> Client:
    """A client of the scheduler at ``address``, within the connect timeout; every failure is
    one line (InvalidInput)."""
    from distributed import Client

    timeout = connect_timeout()
    if address.protocol == "tcp":
        _probe(address, timeout)
    client = Client.__new__(Client)
    try:
        client.__init__(str(address), timeout=timeout, set_as_default=False)  # type: ignore[misc]
    except MemoryError:
        _abandon(client)
        raise InvalidInput(f"cannot connect to the Dask scheduler {address}: its answer is not "
                           "Dask's (not a Dask scheduler)") from None
    except (Exception, asyncio.CancelledError) as exc:
        _abandon(client)
        raise InvalidInput(f"cannot connect to the Dask scheduler {address}: "
                           f"{type(exc).__name__}: {exc}".replace("\n", " ")) from None
    except BaseException:
        _abandon(client)
        raise
    return client


def _connect_local(cluster: LocalCluster) -> Client:
    from distributed import Client

    client = Client.__new__(Client)
    try:
        client.__init__(cluster, set_as_default=False)  # type: ignore[misc]
    except BaseException:
        _abandon(client)
        raise
    return client


#: environment of a LocalCluster's worker processes: their Dask logs stay quiet
_WORKER_ENV = {"DASK_LOGGING__DISTRIBUTED": "critical"}


def local_cluster_options(workers: int, *, processes: bool = True, threads: int = 1
                          ) -> dict[str, Any]:
    """``LocalCluster`` keywords of every local cluster gctool starts (the CLI's, and those of
    the tests and benchmarks): ``workers`` workers of ``threads`` threads on 127.0.0.1, no
    dashboard.  Dask's scheduler starts an HTTP server even without a dashboard, by default
    on port 8787 (a warning when another cluster holds it; ``':0'`` would listen on every
    interface): here on a free loopback port."""
    return {"n_workers": workers, "threads_per_worker": threads, "processes": processes,
            "host": "127.0.0.1", "dashboard_address": "127.0.0.1:0",
            "scheduler_kwargs": {"dashboard": False}}


def _spawn_rule(main: str = "") -> str:
    """What a program that starts a local cluster needs, in words (Python's 'spawn' start
    method), naming its ``main`` module when known."""
    named = f" ({main})" if main else ""
    return (f"Dask starts them with Python's 'spawn' method, which runs the calling program's "
            f"main module{named} again in each: a program that calls gctool must be a file "
            f"whose top level is guarded by `if __name__ == '__main__':` (a notebook, "
            f"`python -c` and the gctool command need nothing)")


def _main_module() -> str | None:
    """The calling program's main module, as a spawned process runs it again (its module name
    or file), or None: it runs nothing again (a notebook, an interactive session, ``python -c``)
    or it is gctool's own command."""
    import sys

    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    where = getattr(spec, "name", None) or getattr(main, "__file__", None)
    if not where or str(where).startswith("gctool") or Path(str(where)).name == "gctool":
        return None
    return str(where)


def _refuse_in_a_spawned_main() -> None:
    """Refuse to start a cluster from a worker process that is running the calling program's
    main module again (an unguarded top level): it would start workers of its own, each of which
    runs the program again; refused at once, the worker process fails to start and the caller
    gets the one line of :func:`_not_started`."""
    import multiprocessing
    import sys

    # (spawn runs it as the module __mp_main__ while the process is still inheriting its
    # parent's state: the flag multiprocessing's own check of this case reads)
    if "__mp_main__" in sys.modules and getattr(multiprocessing.current_process(),
                                                "_inheriting", False):
        raise InvalidInput("a worker process of gctool's local Dask cluster is running the "
                           f"calling program again; {_spawn_rule()}")


def _not_started(exc: Exception) -> Exception:
    """The error of a LocalCluster whose worker processes did not start (Dask's RuntimeError:
    a port in use or a refused address is an OSError, raised as it is): one line naming the
    calling program's main module (what usually stops them) when there is one to name, else
    ``exc`` itself."""
    main = _main_module()
    if main is None or not isinstance(exc, RuntimeError):
        return exc
    return InvalidInput(f"the worker processes of the local Dask cluster did not start "
                        f"({type(exc).__name__}: {exc}); {_spawn_rule(main)}, or "
                        "pass the address of a running scheduler (`scheduler`)")


def _local_cluster(jobs: int, at_most_cores: bool = True) -> LocalCluster:
    """A LocalCluster of ``jobs`` single-threaded worker processes (at most the available
    cores, as for the local engine, when ``at_most_cores``) (:func:`local_cluster_options`).
    Signals that arrive while it starts are deferred: once it has started it is
    closed and the signal honoured."""
    import dask
    from distributed import LocalCluster

    from gctool.engine.parallel import available_cores

    _refuse_in_a_spawned_main()
    workers = max(1, min(int(jobs), available_cores()) if at_most_cores else int(jobs))
    env = dict(dask.config.get("distributed.nanny.pre-spawn-environ", {}) or {},
               **({} if os.environ.get("GCTOOL_DEBUG") else _WORKER_ENV))
    cluster = None
    with _deferred_signals() as pending, dask.config.set(
            {"distributed.nanny.pre-spawn-environ": env}):
        try:
            cluster = LocalCluster(**local_cluster_options(workers))
        except Exception as exc:
            if not pending:  # (a Ctrl-C to the process group also stops starting workers)
                raise _not_started(exc) from exc
    if pending:
        if cluster is not None:
            _close_cluster(cluster)
        signal.raise_signal(pending[0])  # now the usual handler ends the run (130/143)
        raise KeyboardInterrupt  # (a handler that does not raise: stop anyway)
    assert cluster is not None  # (started, or its exception was raised)
    return cluster


@contextlib.contextmanager
def _stderr_kept_from_children() -> Iterator[None]:
    """For the block, file descriptor 2 is /dev/null and ``sys.stderr`` writes to a duplicate of
    the original: processes started meanwhile (a LocalCluster's workers, multiprocessing's
    resource tracker, also when it is started again because someone killed it) cannot print
    their tracebacks and warnings on the user's stderr, while this process's progress bar and
    messages still reach it.  A no-op under GCTOOL_DEBUG."""
    import sys

    if os.environ.get("GCTOOL_DEBUG") or sys.stderr is None:
        yield
        return
    stream = sys.stderr
    try:
        stream.flush()
        saved = os.dup(2)
    except (AttributeError, OSError, ValueError):
        yield
        return
    try:
        on_fd2 = stream.fileno() == 2
    except (AttributeError, OSError, ValueError):
        on_fd2 = False  # (captured: it does not write to the descriptor)
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 2)
        os.close(null)
        if on_fd2:
            sys.stderr = open(saved, "w", buffering=1, closefd=False,  # noqa: SIM115
                              encoding=getattr(stream, "encoding", None) or "utf-8",
                              errors="backslashreplace")
    except OSError:
        os.close(saved)
        yield
        return
    try:
        yield
    finally:
        replacement, sys.stderr = sys.stderr, stream
        with contextlib.suppress(OSError):
            os.dup2(saved, 2)
        with contextlib.suppress(Exception):
            replacement.flush()
        # a progress display started meanwhile (rich's Live) keeps the replacement and puts it
        # back when it stops: then its descriptor stays open (one descriptor), else it is closed
        if replacement is stream or sys.getrefcount(replacement) <= 2:
            os.close(saved)


def _close_cluster(cluster: Any) -> None:
    with contextlib.suppress(BaseException):
        cluster.close(timeout=CLOSE_S)


@contextlib.contextmanager
def _deferred_signals() -> Iterator[list[int]]:
    """Record SIGINT, SIGTERM and SIGHUP instead of acting on them for the duration of the
    block (the caller honours the first one afterwards).  Interrupting a LocalCluster while it
    starts would leave half-started processes that its exit handlers then fail to close."""
    pending: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield pending
        return

    def record(signum: int, frame: Any) -> None:
        if not pending:
            pending.append(signum)

    names = ("SIGINT", "SIGTERM", "SIGHUP")
    sigs = [s for s in (getattr(signal, n, None) for n in names) if s is not None]
    old = {s: signal.signal(s, record) for s in sigs}
    try:
        yield pending
    finally:
        for s, action in old.items():
            signal.signal(s, action if action is not None else signal.SIG_DFL)
