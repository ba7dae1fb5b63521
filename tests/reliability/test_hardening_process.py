"""Hardening in real processes: Ctrl-C, SIGTERM, SIGHUP, a disk that fills up, and peak memory.

Each test starts ``python -m gctool ...`` as a subprocess with stdout and stderr captured.

* SIGINT: the input is a FIFO, so the test knows when gctool has started reading it; after
  that it waits until the process tree has spent CPU time on the search, sends SIGINT to the
  gctool process (as ``kill -INT`` would) and checks exit 130, a one-line summary of how far
  the search got, no output on stdout, no file created or changed, and no worker left behind.
  SIGTERM and SIGHUP the same, with exit 143 and 129 (also for the MILP solver).
* A write failing midway: RLIMIT_FSIZE makes every write beyond a few bytes fail with EFBIG,
  for each command that writes files; the existing output must be left as it was.
* Memory: the child records its own high-water mark (VmHWM, which unlike ru_maxrss does not
  include the RSS inherited from the forking test process) for a large exhaustive search.
"""

from __future__ import annotations

import os
import re
import resource
import signal
import subprocess
import sys
import time
from math import comb
from pathlib import Path

import fuzz_strategies as fz
import numpy as np
import pytest

from gctool.algebra.fields import parse_field
from gctool.io import code_bytes
from gctool.model import GradientCode

from jsondoc import loads

TICKS = os.sysconf("SC_CLK_TCK")


def big_code(n: int = 40, s: int = 6) -> bytes:
    """A code that tolerates s stragglers but has no structure any shortcut could use:
    Tandon's cyclic code with its rows and columns shuffled (JSON bytes)."""
    from gctool.codes import design

    crc = design("cyclic", n=n, s=s, seed=1)
    rng = np.random.default_rng(0)
    B = np.asarray(crc.B)[rng.permutation(n)][:, rng.permutation(n)]
    return code_bytes(GradientCode(B, parse_field("real"), s, "custom"), npz=False)


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # even if the test runner ignores Ctrl-C


def _stat(pid: int) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2:].split()  # fields from "state" on


def _children(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            fields = _stat(int(entry.name))
            if fields is not None and fields[1] == str(pid):
                out.append(int(entry.name))
    return out


def _tree_cpu(pid: int) -> float:
    """CPU seconds used by the process and its live children."""
    total = 0.0
    for p in [pid, *_children(pid)]:
        fields = _stat(p)
        if fields is not None:
            total += (int(fields[11]) + int(fields[12])) / TICKS
    return total


def _alive(pid: int) -> bool:
    fields = _stat(pid)
    return fields is not None and fields[0] != "Z"


def _feed_fifo(path: Path, data: bytes, proc: subprocess.Popen[bytes]) -> None:
    """Wait until ``proc`` opens the FIFO for reading (it has started), then feed it."""
    deadline = time.monotonic() + 60
    while True:
        try:
            fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
            break
        except OSError:  # ENXIO: no reader yet
            assert proc.poll() is None, "gctool exited before reading its input"
            assert time.monotonic() < deadline, "gctool never opened its input"
            time.sleep(0.02)
    os.set_blocking(fd, True)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def _wait(proc: subprocess.Popen[bytes], timeout: float) -> int:
    deadline = time.monotonic() + timeout
    while proc.poll() is None:
        if time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"gctool did not stop within {timeout:g} s of SIGINT")
        time.sleep(0.02)
    return proc.returncode


def _listing(d: Path) -> dict[str, bytes | str]:
    """Every entry of ``d`` with its content (files), link target (symlinks) or kind."""
    out: dict[str, bytes | str] = {}
    for p in d.iterdir():
        out[p.name] = ("link " + os.readlink(p) if p.is_symlink() else "fifo" if p.is_fifo()
                       else "dir" if p.is_dir() else p.read_bytes())
    return out


#: the compiled walks of verify and attack need a larger code than the other searches for
#: their run to last until the signal: n = 48, s = 7 is about 74 million sets, seconds even
#: on two threads (n = 40, s = 6 finished first), above the default --max-sets
BIG = ["--max-sets", "100000000"]

INTERRUPTS = [
    ("verify", ["verify", "CODE", *BIG]),  # default: every core
    ("verify-1-job", ["verify", "CODE", "--method", "exhaustive", "--jobs", "1", *BIG]),
    ("attack", ["attack", "CODE", "-s", "7", *BIG]),
    ("attack-threshold", ["attack", "CODE", "--threshold", "--jobs", "1", *BIG]),
    ("export", ["export", "CODE", "-o", "plan.npz", "--decoders", "-s", "3"]),
    ("export-over-existing", ["export", "CODE", "-o", "existing.json", "--decoders", "-s", "3"]),
]


@pytest.mark.parametrize(("name", "args"), INTERRUPTS, ids=[n for n, _ in INTERRUPTS])
def test_sigint_exits_130_with_a_summary_and_no_partial_file(tmp_path: Path, name: str,
                                                             args: list[str]) -> None:
    _interrupt(tmp_path, args, signal.SIGINT, 130, rf"gctool {args[0]}: .*interrupted .*\d.*")


#: SIGTERM (timeout, CI cancellation) and SIGHUP are handled like Ctrl-C, with their own codes;
#: the MILP solver (native code that never returns to Python before its time limit) included
TERMINATIONS = [
    ("verify-jobs-TERM", ["verify", "CODE", "--jobs", "2", *BIG], signal.SIGTERM, 143),
    ("attack-threshold-jobs-TERM", ["attack", "CODE", "--threshold", "--method", "exhaustive",
                                    "--jobs", "2", *BIG], signal.SIGTERM, 143),
    ("export-TERM", ["export", "CODE", "-o", "plan.npz", "--decoders", "-s", "3"],
     signal.SIGTERM, 143),
    ("export-over-existing-HUP", ["export", "CODE", "-o", "existing.json", "--decoders", "-s",
                                  "3"], signal.SIGHUP, 129),
    ("milp-TERM", ["attack", "CODE", "-s", "6", "--method", "milp", "--json"], signal.SIGTERM,
     143),
]


@pytest.mark.parametrize(("name", "args", "sig", "code"), TERMINATIONS,
                         ids=[t[0] for t in TERMINATIONS])
def test_sigterm_and_sighup_are_handled_like_ctrl_c(tmp_path: Path, name: str, args: list[str],
                                                    sig: signal.Signals, code: int) -> None:
    _interrupt(tmp_path, args, sig, code, rf"gctool {args[0]}: .*interrupted.* \({sig.name}\)")


def _interrupt(tmp_path: Path, args: list[str], sig: signal.Signals, want: int,
               summary: str) -> None:
    """Run gctool on a large code fed through a FIFO, send ``sig`` once the search is under
    way, and check the exit code, the one-line ``summary``, an empty stdout, an unchanged
    directory (no partial or temporary file) and no surviving worker process."""
    work, logs = tmp_path / "work", tmp_path / "logs"
    work.mkdir()
    logs.mkdir()
    (work / "existing.json").write_bytes(b"an old plan that must survive\n")
    fifo = work / "big.json"
    os.mkfifo(fifo)
    before = _listing(work)
    with open(logs / "out", "wb") as out, open(logs / "err", "wb") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "gctool", *[str(fifo) if a == "CODE" else a for a in args]],
            cwd=work, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
            preexec_fn=_default_sigint,  # a search of minutes: above the default work budget
            env=dict(os.environ, GCTOOL_MAX_WORK="300h"))
    try:
        _feed_fifo(fifo, big_code(48, 7) if "--max-sets" in args else big_code(), proc)
        start, deadline = _tree_cpu(proc.pid), time.monotonic() + 60
        while _tree_cpu(proc.pid) < start + 1.0:  # the search is under way
            assert proc.poll() is None, (logs / "err").read_text()
            assert time.monotonic() < deadline, "the search never started"
            time.sleep(0.05)
        workers = _children(proc.pid)
        proc.send_signal(sig)
        time.sleep(0.2)  # and again, as a user pressing Ctrl-C twice: the first one decides
        if proc.poll() is None:
            proc.send_signal(sig)
        code = _wait(proc, 60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    stderr = (logs / "err").read_text()
    lines = stderr.rstrip("\n").split("\n")  # a blank line counts as a line
    assert code == want, stderr
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    assert re.fullmatch(summary, lines[0]), lines[0]  # how far it got
    assert (logs / "out").read_bytes() == b""
    assert _listing(work) == before  # no partial, temporary or replaced file
    deadline = time.monotonic() + 10
    while any(_alive(w) for w in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(w) for w in workers), "worker processes outlived gctool"


# ---------------------------------------------------------------------------------------------
# a write that fails midway, in a real process, for every command that writes files
# ---------------------------------------------------------------------------------------------
#: options that shorten a command's run before its write (train's: two rounds on one worker
#: process, no baselines, no overhead rounds; its example trains up to 1,000 rounds of three
#: schemes on a cluster of a worker per core, the test's longest run by far)
SHORTER = {"train": ["--iterations", "2", "--overhead-rounds", "0", "--no-baselines",
                     "--jobs", "1"]}


def _first_writing_example_per_command() -> list[tuple[str, list[str]]]:
    seen: dict[str, list[str]] = {}
    for prefix, cmd in fz.leaf_commands():
        outs = [p for p in cmd.params if fz.is_output(p) and p.name != "checkpoint"]
        if outs and prefix[0] not in seen:
            argv = list(fz.examples(prefix, cmd)[0])
            for p in outs:
                argv = fz._drop_option(argv, p)  # type: ignore[arg-type]
            # a name the option takes (simulate --plot writes .svg only)
            suffix = getattr(outs[0].type, "suffixes", (".json",))[0]
            seen[prefix[0]] = argv + SHORTER.get(prefix[0], []) + [
                fz.option_flag(outs[0]), f"existing{suffix}"]  # type: ignore[arg-type]
    # the streamed writer too (export --decoders to NPZ is written chunk by chunk)
    seen["export-streamed"] = ["export", "frc.json", "--decoders", "-o", "existing.npz"]
    return sorted(seen.items())


FSIZE = 64  # bytes: every output is larger, the old file is smaller
OLD = b"old output, 27 bytes long\n"


def _limit_file_size() -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (FSIZE, FSIZE))


def test_a_full_disk_midway_leaves_the_old_file(tmp_path: Path) -> None:
    cases = _first_writing_example_per_command()
    assert {"design", "export"} <= {name for name, _ in cases}
    procs = []
    for name, argv in cases:  # all at once: they only start up and fail
        work = tmp_path / name
        fz.make_workspace(work)
        target = argv[-1]
        (work / target).write_bytes(OLD)
        before = _listing(work)
        proc = subprocess.Popen([sys.executable, "-m", "gctool", *argv], cwd=work,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, preexec_fn=_limit_file_size)
        procs.append((name, argv, work, before, proc))
    for name, argv, work, before, proc in procs:
        out, err = proc.communicate(timeout=120)
        lines = err.decode().rstrip("\n").split("\n")
        assert proc.returncode == 2, (argv, err)
        assert len(lines) == 1 and f"{argv[-1]}: cannot write (File too large)" in lines[0]
        assert "the existing file is unchanged" in lines[0] and out == b""
        assert _listing(work) == before, name


# ---------------------------------------------------------------------------------------------
# bounded memory
# ---------------------------------------------------------------------------------------------
HWM = """
import atexit, os, sys
def _record():
    with open('/proc/self/status') as fh:
        kb = next(int(ln.split()[1]) for ln in fh if ln.startswith('VmHWM'))
    with open(os.environ['GCTOOL_TEST_HWM'], 'w') as out:
        out.write(str(kb))
atexit.register(_record)
sys.argv[0] = 'gctool'
from gctool.cli.main import run
run()
"""


def _peak_mb(tmp_path: Path, args: list[str]) -> tuple[int, float, str]:
    record = tmp_path / "hwm"
    proc = subprocess.run([sys.executable, "-c", HWM, *args], cwd=tmp_path,
                          env=dict(os.environ, GCTOOL_TEST_HWM=str(record)),
                          capture_output=True, timeout=300)
    return proc.returncode, int(record.read_text()) / 1024, proc.stdout.decode()


@pytest.mark.parametrize("command", [["verify", "--method", "exhaustive"],
                                     ["attack", "-s", "4", "--method", "exhaustive"]],
                         ids=["verify", "attack"])
def test_peak_memory_of_a_large_search_is_bounded(tmp_path: Path, command: list[str]) -> None:
    n, s = 40, 4
    (tmp_path / "big.json").write_bytes(big_code(n, s))
    code, peak, out = _peak_mb(tmp_path, [command[0], "big.json", *command[1:], "--jobs", "1",
                                          "--json"])
    report = loads(out)
    assert code == 0 and report["checked"] == comb(n, s) == 91_390
    naive_mb = comb(n, s) * (n - s) * n * 8 / 2**20  # every B_F at once: about 1 GB
    assert peak < 150 and peak < naive_mb / 5, (peak, naive_mb)
