"""Fault injection on real Dask clusters: a lost worker, all workers, the scheduler, a signal.

Real processes on 127.0.0.1 only: a ``dask scheduler`` and ``dask worker`` processes (each in
its own session, on free ports), and ``gctool`` run as a command.  Every run must either give
the report of the local executor, or end incomplete (exit 2, one stderr line saying what was
checked and lost); never exit 0 or 1 with fewer sets checked than the total.  A rerun with the
checkpoint after the fault gives the local report.  Afterwards nothing of the run is left
running and no temporary file is left behind.

The code is :func:`corpus.late_fail`: its only failing set (verify) and its worst set (attack)
are the last ones in rank order, so a run that lost any range and still gave a verdict would
be caught.  The compiled kernels are off (GCTOOL_COMPILED=0) so that the enumeration makes
many small tasks, and every enumeration goes to the cluster (``gctool.local-below`` 0: the
attack's estimate, 0.08 s, is below the CLI's 0.1 s); the waits for a worker and for a
connection are short (``gctool.lost-after``, ``distributed.comm.timeouts.connect``).  Every
wait has a timeout: these tests can fail, never hang.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from gctool.cli.main import cli
from gctool.io import write_code

from corpus import late_fail
from jsondoc import no_report, report

#: seconds any one gctool run may take before the test fails (a hang)
RUN_S = 120
#: seconds a cluster process may take to start
START_S = 60
LOST_AFTER = "3s"
ENV = dict(os.environ, GCTOOL_COMPILED="0", DASK_GCTOOL__LOST_AFTER=LOST_AFTER,
           DASK_GCTOOL__LOCAL_BELOW="0",
           DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT="5s", DASK_LOGGING__DISTRIBUTED="error")
ENV.pop("GCTOOL_DEBUG", None)
#: verify and attack of the late-failing code, exhaustively
COMMANDS = {
    "verify": ["verify", "--method", "exhaustive"],
    "attack": ["attack", "-s", "4", "--method", "exhaustive", "--max-work", "3h"],
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _session(pid: int) -> list[int]:
    """Live processes (not zombies) of the session ``pid`` leads."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == pid and fields[0] != "Z":  # fields: state ppid pgrp session
            out.append(int(entry))
    return out


def assert_nothing_left(pid: int) -> None:
    """Nothing of the session of a finished gctool run is still running (2 s allowed)."""
    deadline = time.monotonic() + 2.0
    while (left := _session(pid)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not left, f"processes left running: {left}"


class Cluster:
    """A scheduler and workers on 127.0.0.1, each process in its own session."""

    def __init__(self, workers: int = 2, nanny: bool = False) -> None:
        self.port = free_port()
        self.address = f"tcp://127.0.0.1:{self.port}"
        self.nanny = nanny
        self.scheduler = self._start([sys.executable, "-m", "distributed.cli.dask_scheduler",
                                      "--host", "127.0.0.1", "--port", str(self.port),
                                      "--no-dashboard"])
        # the workers start up beside the scheduler (a worker retries its connection until
        # the scheduler listens): their start-ups overlap instead of adding up
        self.workers = [self.add_worker() for _ in range(workers)]
        self._wait_port()
        if workers:
            self.wait_for_workers(workers)

    @staticmethod
    def _start(cmd: list[str]) -> subprocess.Popen[bytes]:
        return subprocess.Popen(cmd, env=ENV, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True)

    def add_worker(self) -> subprocess.Popen[bytes]:
        return self._start([sys.executable, "-m", "distributed.cli.dask_worker", self.address,
                            "--nthreads", "1", "--nanny" if self.nanny else "--no-nanny",
                            "--host", "127.0.0.1", "--no-dashboard"])

    def _wait_port(self) -> None:
        deadline = time.monotonic() + START_S
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError), socket.create_connection(
                    ("127.0.0.1", self.port), timeout=1):
                return
            time.sleep(0.1)
        raise AssertionError("the scheduler did not start")

    def client(self) -> Any:
        from distributed import Client

        return Client(self.address, timeout=START_S, set_as_default=False)

    def wait_for_workers(self, count: int) -> None:
        with self.client() as c:
            c.wait_for_workers(count, timeout=START_S)

    def kill(self, proc: subprocess.Popen[bytes], sig: int = signal.SIGKILL) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)

    def close(self) -> None:
        for p in [*self.workers, self.scheduler]:
            self.kill(p)
        for p in [*self.workers, self.scheduler]:
            with contextlib.suppress(subprocess.TimeoutExpired):
                p.wait(timeout=10)


@contextlib.contextmanager
def cluster(workers: int = 2, nanny: bool = False) -> Iterator[Cluster]:
    c = Cluster(workers, nanny)
    try:
        yield c
    finally:
        c.close()


@pytest.fixture(scope="module")
def code_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """n = 40, s = 4, k = 8: 91,390 sets in about 30 chunks of the numpy null-space kernel; the
    only failing set, and the worst one, is [36, 37, 38, 39]."""
    path = tmp_path_factory.mktemp("code") / "late.json"
    write_code(late_fail(40, 4, 8), str(path))
    return path


@pytest.fixture(scope="module")
def local(code_file: Path) -> dict[str, tuple[int, dict[str, Any]]]:
    """The local executor's exit code and report of each command."""
    out = {}
    old = os.environ.get("GCTOOL_COMPILED")
    os.environ["GCTOOL_COMPILED"] = "0"
    try:
        for name, args in COMMANDS.items():
            res = CliRunner().invoke(cli, [args[0], str(code_file), *args[1:], "--json",
                                           "--jobs", "1"])
            out[name] = (res.exit_code, report(res.stdout))
    finally:
        if old is None:
            os.environ.pop("GCTOOL_COMPILED", None)
        else:
            os.environ["GCTOOL_COMPILED"] = old
    assert out["verify"][0] == 1 and out["verify"][1]["counterexample"] == [36, 37, 38, 39]
    assert out["attack"][1]["stragglers"] == [36, 37, 38, 39]
    return out


def comparable(doc: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in doc.items() if k not in ("elapsed_s", "jobs", "estimate")}


class Run:
    """One gctool command in its own session, in ``cwd``; a test that fails before the run
    ends leaves nothing of it running (:func:`no_run_left`)."""

    def __init__(self, args: list[str], cwd: Path, **env: str) -> None:
        self.t0 = time.monotonic()
        self.proc = subprocess.Popen([sys.executable, "-m", "gctool", *args, "--json"],
                                     cwd=cwd, env=dict(ENV, **env), stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, start_new_session=True)
        RUNS.append(self)

    def running(self) -> bool:
        return self.proc.poll() is None

    def stop(self) -> None:
        """Kill what is left of the run: its session's process group (gctool, its
        LocalCluster's nannies and workers) while gctool is not reaped (its pid, and so its
        group's, is still this run's), then any process of its session still running."""
        if self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.communicate(timeout=10)
        for pid in _session(self.proc.pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)

    def finish(self) -> tuple[int, str, str]:
        try:
            out, err = self.proc.communicate(timeout=RUN_S)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.communicate()
            raise AssertionError(f"gctool did not end within {RUN_S} s") from None
        assert_nothing_left(self.proc.pid)
        return self.proc.returncode, out, err


#: the runs the current test started (:func:`no_run_left`)
RUNS: list[Run] = []


@pytest.fixture(autouse=True)
def no_run_left() -> Iterator[None]:
    """After each test, passed or failed, nothing of the gctool runs it started is left
    running (one that failed midway would leave its LocalCluster behind)."""
    yield
    while RUNS:
        RUNS.pop().stop()


def start(name: str, code_file: Path, cwd: Path, *extra: str, **env: str) -> Run:
    args = COMMANDS[name]
    return Run([args[0], str(code_file), *args[1:], *extra], cwd, **env)


def wait_until_busy(c: Cluster, run: Run) -> None:
    """Until a gctool task runs on a worker (or the run ended)."""
    with c.client() as client:
        deadline = time.monotonic() + START_S
        while run.running() and time.monotonic() < deadline:
            busy = client.processing()
            if any(str(k).startswith("gctool-") for keys in busy.values() for k in keys):
                return
            time.sleep(0.05)


def check_outcome(name: str, rc: int, out: str, err: str,
                  local: dict[str, tuple[int, dict[str, Any]]]) -> bool:
    """The run gave the local report (True), or ended incomplete in one line (False)."""
    want_rc, want = local[name]
    if rc == 2:
        (line,) = err.strip().splitlines()
        assert line.startswith("gctool: error: incomplete run, no verdict: checked "), line
        assert no_report(out)
        return False
    assert rc == want_rc, err
    doc = report(out)
    assert doc["checked"] == doc["total"] == 91390
    assert comparable(doc) == comparable(want)
    assert err == ""  # recovered faults leave stderr empty (it is not a terminal)
    return True


def no_temp_files(cwd: Path, *allowed: str) -> None:
    assert sorted(p.name for p in cwd.iterdir()) == sorted(allowed)


# -- an external cluster ------------------------------------------------------------------------
@pytest.mark.parametrize(("name", "victims", "checkpoint"), [
    ("verify", "all", True),
    ("attack", "all", False),
    ("verify", "one", False),
    ("attack", "one", True),
])
def test_killed_workers(tmp_path: Path, code_file: Path, local: Any, name: str, victims: str,
                        checkpoint: bool) -> None:
    """Killing one worker (the other finishes the run) or every worker (incomplete after
    gctool.lost-after), with and without a checkpoint; after an incomplete run, a rerun with
    the checkpoint on a new cluster gives the local report."""
    extra = ["--checkpoint", "ck.json"] if checkpoint else []
    with cluster() as c:
        run = start(name, code_file, tmp_path, "--executor", "dask", "--scheduler", c.address,
                    *extra)
        wait_until_busy(c, run)
        assert run.running(), "the run ended before the fault"
        for w in c.workers if victims == "all" else c.workers[:1]:
            c.kill(w)
        rc, out, err = run.finish()
        complete = check_outcome(name, rc, out, err, local)
    if victims == "one":
        assert complete
    if checkpoint and not complete:
        with cluster(1) as c2:
            rc, out, err = start(name, code_file, tmp_path, "--executor", "dask", "--scheduler",
                                 c2.address, *extra).finish()
        assert check_outcome(name, rc, out, err, local)
    no_temp_files(tmp_path, *(["ck.json"] if checkpoint else []))


@pytest.mark.parametrize(("name", "sig"), [("verify", signal.SIGKILL),
                                           ("attack", signal.SIGTERM)])
def test_scheduler_dies(tmp_path: Path, code_file: Path, local: Any, name: str,
                        sig: int) -> None:
    """A scheduler killed (or stopped) mid-run: incomplete at once, never a hang; the
    checkpoint then resumes on another cluster."""
    with cluster() as c:
        run = start(name, code_file, tmp_path, "--executor", "dask", "--scheduler", c.address,
                    "--checkpoint", "ck.json")
        wait_until_busy(c, run)
        c.kill(c.scheduler, sig)
        t0 = time.monotonic()
        rc, out, err = run.finish()
        took = time.monotonic() - t0
        complete = check_outcome(name, rc, out, err, local)
    if not complete:
        assert "the connection to the Dask scheduler" in err
        assert took < 30
        with cluster(1) as c2:
            rc, out, err = start(name, code_file, tmp_path, "--executor", "dask", "--scheduler",
                                 c2.address, "--checkpoint", "ck.json").finish()
        assert check_outcome(name, rc, out, err, local)
    no_temp_files(tmp_path, "ck.json")


def test_a_scheduler_without_workers(tmp_path: Path, code_file: Path) -> None:
    with cluster(workers=0) as c:
        t0 = time.monotonic()
        rc, out, err = start("verify", code_file, tmp_path, "--executor", "dask",
                             "--scheduler", c.address).finish()
    assert rc == 2 and no_report(out)
    assert err.strip().splitlines() == [
        f"gctool: error: the Dask scheduler {c.address} has no workers (none joined within 3 s)"]
    assert time.monotonic() - t0 < 60


# -- services that are not a Dask scheduler -----------------------------------------------------
@contextlib.contextmanager
def service(banner: bytes | None) -> Iterator[tuple[int, list[socket.socket]]]:
    """A local TCP service that sends ``banner`` on every connection and then stays silent
    (``b""``: silent from the start); None: a port where nothing listens.  Yields the port
    and the connections accepted so far."""
    port = free_port()
    conns: list[socket.socket] = []
    if banner is None:
        yield port, conns
        return
    server = socket.create_server(("127.0.0.1", port))
    stop = threading.Event()

    def serve() -> None:
        server.settimeout(0.1)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            conns.append(conn)
            with contextlib.suppress(OSError):
                conn.sendall(banner)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield port, conns
    finally:
        stop.set()
        thread.join(5)
        for conn in conns:
            conn.close()
        server.close()


@pytest.mark.parametrize(("banner", "says"), [
    (None, "Connection refused"),
    (b"SSH-2.0-OpenSSH_8.9p1 Ubuntu-3\r\n", "is not a Dask scheduler (it sent 'SSH-2.0-')"),
    (b"", "accepted the connection but sent nothing Dask would within 5 s"),
])
def test_not_a_scheduler(tmp_path: Path, code_file: Path, banner: bytes | None,
                         says: str) -> None:
    """Nothing listening, an SSH banner (Dask would read it as a frame length of exabytes), a
    silent service: one line, exit 2, within the connect timeout."""
    with service(banner) as (port, _):
        t0 = time.monotonic()
        rc, out, err = start("verify", code_file, tmp_path, "--executor", "dask",
                             "--scheduler", f"tcp://127.0.0.1:{port}").finish()
    (line,) = err.strip().splitlines()
    assert rc == 2 and no_report(out) and says in line, line
    assert time.monotonic() - t0 < 60


def test_ctrl_c_while_waiting_for_a_silent_service(tmp_path: Path, code_file: Path) -> None:
    """Ctrl-C while gctool waits for a silent service's answer ends the run at once."""
    with service(b"") as (port, conns):
        run = Run(["verify", str(code_file), "--executor", "dask", "--scheduler",
                   f"tcp://127.0.0.1:{port}"], tmp_path)
        _wait_for(lambda: bool(conns), run)  # connected, waiting for an answer
        assert run.running()
        t0 = time.monotonic()
        run.proc.send_signal(signal.SIGINT)
        rc, out, err = run.finish()
    assert (rc, out) == (130, "")
    (line,) = err.strip().splitlines()
    assert line.startswith("gctool verify: interrupted"), line
    assert time.monotonic() - t0 < 5


# -- a LocalCluster -----------------------------------------------------------------------------
def _workers_of(pid: int) -> list[int]:
    """The LocalCluster worker processes (children of gctool, not the resource tracker)."""
    out = []
    for child in _children(pid):
        with contextlib.suppress(OSError), open(f"/proc/{child}/cmdline", "rb") as fh:
            if b"spawn_main" in fh.read():
                out.append(child)
    return out


def _children(pid: int) -> list[int]:
    """The child processes of ``pid`` (started by any of its threads)."""
    out = []
    with contextlib.suppress(OSError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError), open(f"/proc/{pid}/task/{task}/children") as fh:
                out += [int(x) for x in fh.read().split()]
    return out


def _wait_for(pred: Any, run: Run) -> None:
    deadline = time.monotonic() + START_S
    while run.running() and not pred() and time.monotonic() < deadline:
        time.sleep(0.05)


@pytest.mark.parametrize("everything", [False, True])
def test_local_cluster_workers_killed(tmp_path: Path, code_file: Path, local: Any,
                                      everything: bool) -> None:
    """The LocalCluster's nannies restart killed workers: the run finishes with the local
    report and an empty stderr, also when every child is killed (multiprocessing's resource
    tracker too); nothing is left running, and no semaphore is leaked when the tracker lives
    (it is the one that removes those of killed processes)."""
    from gctool.engine.parallel import available_cores

    run = start("verify", code_file, tmp_path, "--executor", "dask", "--jobs", "2",
                "--checkpoint", "ck.json",
                DASK_GCTOOL__LOST_AFTER="60s")  # time for the nannies on a busy machine
    workers = min(2, available_cores())  # (the run's cluster has at most its cores)
    _wait_for(lambda: (tmp_path / "ck.json").exists()
              and len(_workers_of(run.proc.pid)) >= workers, run)
    assert run.running(), "the run ended before the fault"
    ours = _semaphores_of([run.proc.pid, *_children(run.proc.pid)])
    victims = _children(run.proc.pid) if everything else _workers_of(run.proc.pid)
    assert len(victims) >= workers
    for child in victims:
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signal.SIGKILL)
    rc, out, err = run.finish()
    assert check_outcome("verify", rc, out, err, local)
    no_temp_files(tmp_path, "ck.json")
    if not everything:
        assert ours and not ours & _semaphores()  # every semaphore the run used is gone


def _semaphores() -> set[str]:
    """The named semaphores of the machine (files in /dev/shm)."""
    try:
        return {n for n in os.listdir("/dev/shm") if n.startswith("sem.")}
    except OSError:
        return set()


def _semaphores_of(pids: list[int]) -> set[str]:
    """The named semaphores these processes have mapped (ours: other processes on a shared
    machine create and leak their own, so /dev/shm as a whole proves nothing)."""
    found: set[str] = set()
    for pid in pids:
        with contextlib.suppress(OSError), open(f"/proc/{pid}/maps") as fh:
            found |= {line.split("/dev/shm/")[1].split()[0] for line in fh
                      if "/dev/shm/sem." in line}
    return found


@pytest.mark.parametrize(("sig", "code", "group"), [(signal.SIGINT, 130, True),
                                                    (signal.SIGTERM, 143, False)])
def test_local_cluster_signal_while_starting(tmp_path: Path, code_file: Path, sig: int,
                                             code: int, group: bool) -> None:
    """A signal while the LocalCluster starts (Ctrl-C reaches the whole process group) is
    honoured once it has started: the signal's exit code and one line, no traceback."""
    run = start("verify", code_file, tmp_path, "--executor", "dask", "--jobs", "2")
    _wait_for(lambda: bool(_workers_of(run.proc.pid)), run)
    assert run.running()
    if group:
        os.killpg(run.proc.pid, sig)
    else:
        run.proc.send_signal(sig)
    t0 = time.monotonic()
    rc, out, err = run.finish()
    assert rc == code and out == ""
    (line,) = err.strip().splitlines()
    assert line.startswith("gctool verify: interrupted"), line
    assert time.monotonic() - t0 < 60
    no_temp_files(tmp_path)


def test_local_cluster_is_capped_at_the_cores(tmp_path: Path, code_file: Path) -> None:
    """--jobs 64 starts no more worker processes than there are cores."""
    from gctool.engine.parallel import available_cores

    run = start("verify", code_file, tmp_path, "--executor", "dask", "--jobs", "64")
    seen = 0
    deadline = time.monotonic() + RUN_S
    while run.running() and time.monotonic() < deadline:
        seen = max(seen, len(_workers_of(run.proc.pid)))
        time.sleep(0.05)
    rc, out, err = run.finish()
    assert rc == 1 and err == ""
    assert 1 <= seen <= available_cores()
