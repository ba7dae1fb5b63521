"""gctool train on real Dask LocalClusters (127.0.0.1): a short run whose gradient and recorded
trace are checked, worker processes killed mid-run, a run stopped by SIGTERM; nothing may be
left running afterwards (the process table is checked)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import gctool
from gctool.cli.main import cli
from gctool.sim.delays import parse_delay
from gctool.sim.traces import read_trace_csv
from gctool.trainer.cluster import ClusterError

ROOT = Path(__file__).resolve().parents[2]


def _processes() -> dict[int, tuple[int, int, str]]:
    """pid -> (parent pid, session id, command line) of every process."""
    out = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmd = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        out[int(entry)] = (int(fields[1]), int(fields[3]), cmd)
    return out


def _children() -> dict[int, str]:
    """This process's children, but Python's multiprocessing resource tracker (it lives as long
    as the process that started it and holds no cluster resources)."""
    me = os.getpid()
    return {pid: cmd for pid, (ppid, _, cmd) in _processes().items()
            if ppid == me and "resource_tracker" not in cmd}


def _dask_workers() -> list[int]:
    return sorted(pid for pid, cmd in _children().items() if "spawn_main" in cmd)


def _settled(before: dict[int, str], timeout: float = 20.0) -> dict[int, str]:
    """The children that are not in ``before`` once the run's have had time to exit."""
    deadline = time.monotonic() + timeout
    while True:
        extra = {p: c for p, c in _children().items() if p not in before}
        if not extra or time.monotonic() > deadline:
            return extra
        time.sleep(0.2)


def test_a_two_worker_cluster_trains_with_exact_gradients_and_records_its_trace(tmp_path):
    before = _children()
    code = tmp_path / "crc.json"
    gctool.write_code(gctool.design("cyclic", n=4, s=1, seed=1), str(code))
    trace = tmp_path / "run.csv"
    r = CliRunner().invoke(cli, ["train", str(code), "--problem", "logistic", "--check",
                                 "--seed", "3", "--jobs", "2", "--iterations", "8",
                                 "--time-scale", "0.02", "--overhead-rounds", "5",
                                 "--record", str(trace), "--plot", str(tmp_path / "run.svg"),
                                 "--json"])
    assert r.exit_code in (0, 1), r.output
    doc = json.loads(r.stdout)
    from jsonschema import validate

    from gctool.schemas import load

    validate(doc, load("train"))
    assert doc["cluster"]["dask_workers"] == 2 and doc["cluster"]["groups"] == [[0, 1], [2, 3]]
    assert [row["name"] for row in doc["rows"]] == [str(code), "uncoded",
                                                    "ignore-stragglers s=1"]
    coded = doc["rows"][0]
    assert coded["rounds"] == 8 and coded["check"]["rounds"] == 8
    assert coded["check"]["max_relative_to_partials"] < 1e-9
    assert coded["check"]["failed_rounds"] == [] and coded["exact_fraction"] == 1.0
    assert doc["rows"][1]["check"]["max_relative_to_partials"] < 1e-12
    assert doc["overhead"]["rounds"] == 5 and doc["overhead"]["p50"]["value"] > 0
    # the trace: 8 rounds x 4 workers that simulate reads; its replay is the reported one
    durations = read_trace_csv(trace)
    assert durations.shape == (8, 4) and (durations > 0).all()
    rows = trace.read_text().splitlines()
    assert rows[0] == "round,worker,started_s,finished_s,status,injected_s,compute_s"
    assert len(rows) == 33 and all(line.split(",")[4] in ("arrived", "projected")
                                   for line in rows[1:])
    again = gctool.simulate([(str(code), gctool.read_code(str(code)))],
                            parse_delay(f"trace:{trace}"), iterations=8, seed=3,
                            baselines=False)
    assert again.rows[0]["p50"]["value"] == pytest.approx(coded["predicted"]["p50"], abs=0)
    for row, name in zip(doc["rows"][1:], ("uncoded-n4", "ignore-n4-s1"), strict=True):
        assert row["trace"] == str(tmp_path / f"run-{name}.csv")
        assert read_trace_csv(Path(row["trace"])).shape == (row["rounds"], 4)
    import xml.etree.ElementTree as ET

    svg = ET.parse(tmp_path / "run.svg").getroot()
    groups = [g for g in svg.iter("{http://www.w3.org/2000/svg}g")]
    assert sum(g.get("class") == "scheme" for g in groups) == 3  # one summary row each
    from gctool.sim.plot import MARK

    marks = [e for e in svg.iter("{http://www.w3.org/2000/svg}line") if e.get("stroke") == MARK]
    assert len(marks) == 3  # the predicted median of each scheme
    ticks = [t.text for t in svg.iter("{http://www.w3.org/2000/svg}title") if t.text]
    assert any("uncoded: mean" in t for t in ticks)
    assert _settled(before) == {}


def _kill_at(tick: int, count: int, sig: int, killed: list[int]):
    """A progress callback that sends ``sig`` to ``count`` Dask worker processes at ``tick``."""
    state = {"ticks": 0}

    def progress(done: int, total: int) -> None:
        state["ticks"] += 1
        if state["ticks"] == tick:
            for pid in _dask_workers()[:count]:
                os.kill(pid, sig)
                killed.append(pid)

    return progress


def _back_before_the_end(monkeypatch, killed: Callable[[], list[int]], after: int,
                         groups: int):
    """A progress callback that, from tick ``after`` on, keeps the run from ending before every
    group is connected again: while one is missing it waits (at most 120 s in all) until this
    process has ``groups`` Dask worker processes none of which is in ``killed()`` (a
    LocalCluster's nannies restart them; on a loaded machine that can take longer than the
    run's remaining rounds) and the scheduler as many workers, then paces the rounds (0.05 s
    each) until the resident tasks have connected again.  The rounds themselves are not
    changed: the one after the kill still waits for a replacement (it cannot decode from
    fewer than n - s workers), and every join is recorded by a round."""
    import gctool.trainer.channel as channel
    import gctool.trainer.cluster as cluster

    hubs: list[Any] = []
    clients: list[Any] = []

    class Recorded(channel.Hub):
        def __init__(self, host: str) -> None:
            super().__init__(host)
            hubs.append(self)

    def place(client: Any, *args: Any, **kwargs: Any) -> Any:
        clients.append(client)
        return original(client, *args, **kwargs)

    original = cluster.place
    monkeypatch.setattr(channel, "Hub", Recorded)
    monkeypatch.setattr(cluster, "place", place)
    state = {"ticks": 0, "restarted": False}
    deadline = [0.0]

    def progress(done: int, total: int) -> None:
        state["ticks"] += 1
        if state["ticks"] <= after or len(hubs[-1].conns) >= groups:
            return
        if not deadline[0]:
            deadline[0] = time.monotonic() + 120
        while not state["restarted"] and time.monotonic() < deadline[0]:
            alive = set(_dask_workers()) - set(killed())
            if len(alive) >= groups and len(clients[-1].scheduler_info().get("workers",
                                                                           {})) >= groups:
                state["restarted"] = True
                return
            time.sleep(0.1)
        if time.monotonic() < deadline[0]:
            time.sleep(0.05)

    return progress


def test_killed_worker_processes_are_stragglers_and_come_back(monkeypatch):
    """s workers killed: the rounds go on; later more than s: the round waits for Dask to
    bring them back (bounded by --wait), then training goes on, and every killed group joins
    again before the run ends."""
    before = _children()
    code = gctool.design("cyclic", n=6, s=2, seed=1)
    first: list[int] = []
    second: list[int] = []
    once = _kill_at(12, 1, signal.SIGKILL, first)
    twice = _kill_at(40, 2, signal.SIGKILL, second)
    back = _back_before_the_end(monkeypatch, lambda: first + second, 40, 3)

    def progress(done: int, total: int) -> None:
        once(done, total)
        twice(done, total)
        back(done, total)

    report = gctool.train([("crc", code)], parse_delay("shifted-exp"), problem="logistic",
                          seed=1, check=True, iterations=200, time_scale=0.02, jobs=3,
                          overhead_rounds=5, baselines=False, wait=30, progress=progress)
    assert len(first) == 1 and len(second) == 2
    row = report.rows[0]
    assert report.ok and row.reached and row.check is not None
    assert row.check.max_relative_to_partials < 1e-9 and row.exact_fraction == 1.0
    lost = [e for e in row.events if e.event == "lost"]
    assert lost[0].round < 40 - 5 and len(lost[0].workers) == 2  # one process: s workers
    by_round: dict[int, int] = {}
    for e in lost:
        by_round[e.round] = by_round.get(e.round, 0) + len(e.workers)
    assert max(by_round.values()) > 2  # more than s at once, and still trained
    assert {tuple(e.workers) for e in row.events if e.event == "joined"} >= \
        {tuple(e.workers) for e in lost}
    assert _settled(before) == {}


def test_more_than_s_silent_workers_stop_the_run_with_one_line():
    before = _children()
    code = gctool.design("cyclic", n=6, s=2, seed=1)
    stopped: list[int] = []

    def release() -> None:  # the stopped processes die, so the cluster closes at once
        while not stopped:
            time.sleep(0.05)
        time.sleep(4)
        for pid in stopped:
            os.kill(pid, signal.SIGKILL)

    helper = threading.Thread(target=release, daemon=True)
    helper.start()
    start = time.monotonic()
    with pytest.raises(ClusterError) as err:
        gctool.train([("crc", code)], parse_delay("shifted-exp"), problem="lsq", seed=1,
                     iterations=400, time_scale=0.02, jobs=3, overhead_rounds=5,
                     baselines=False, wait=1.5,
                     progress=_kill_at(10, 2, signal.SIGSTOP, stopped))
    helper.join(timeout=30)
    message = str(err.value)
    assert "\n" not in message and len(stopped) == 2
    assert message.startswith("crc, round ") and "did not answer within 1.5 s" in message
    assert "cannot decode" in message
    assert time.monotonic() - start < 60
    assert _settled(before) == {}


#: runs ``gctool train`` under the CLI's own signal handling, with a progress callback that sends
#: SIGTERM to the process at round 20 (while the rounds run, whatever the machine's load)
SIGTERM_AT_ROUND = """
import contextlib, os, signal, sys
import gctool.cli.train as command

@contextlib.contextmanager
def progress_bar(label, after=0.0):
    def update(done, total):
        if done == 20:
            os.kill(os.getpid(), signal.SIGTERM)
    yield update

command.progress_bar = progress_bar
from gctool._start import main
sys.argv = ["gctool", *sys.argv[1:]]
main()
"""


def test_sigterm_during_the_rounds_ends_the_run_and_its_cluster(tmp_path):
    code = tmp_path / "crc.json"
    gctool.write_code(gctool.design("cyclic", n=4, s=1, seed=1), str(code))
    proc = subprocess.Popen(
        [sys.executable, "-c", SIGTERM_AT_ROUND, "train", str(code), "--iterations", "100000",
         "--target-gap", "1e-12", "--time-scale", "0.01", "--jobs", "2", "--seed", "1",
         "--overhead-rounds", "5"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True, text=True)
    session = proc.pid
    try:
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(session, signal.SIGKILL)
    assert proc.returncode == 143, err
    assert err.strip().splitlines() == ["gctool train: interrupted (SIGTERM)"]
    assert out == ""

    def in_session() -> list[int]:
        return [pid for pid, (_, sid, _) in _processes().items() if sid == session]

    deadline = time.monotonic() + 20
    while in_session() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert in_session() == []
