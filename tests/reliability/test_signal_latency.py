"""A signal stops a long run promptly, in real processes: compiled loops of the main thread
(a walk of the audit kernels, as a pilot, a budget probe or a task of one job runs it; the
simulator's round loop) end when a signal arrives instead of when they return
(gctool._signals.PENDING, gctool.engine.threads.halt_flag), and an export interrupted while
it writes its file leaves no file.

Each run would take minutes: the bounds below (seconds, for a loaded two-core machine) fail on
a run that waits for its loop, not on a slow machine.  Answers on a quiet machine: the
interrupted line within about 30 ms of the signal, the exit within about 1 s (most of it the
interpreter's own finalisation)."""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from gctool.audit.kernels import numba_available

#: seconds from the signal to the interrupted line, and to the exit
LINE_S, EXIT_S = 15.0, 30.0
TICKS = os.sysconf("SC_CLK_TCK")


def _cpu(pid: int) -> float:
    """CPU seconds of process ``pid`` (0 once it is gone)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0
    fields = text[text.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # even if the test runner ignores Ctrl-C


#: the processes of the test running (each would run for minutes): killed at its end
_started: list[subprocess.Popen[bytes]] = []


@pytest.fixture(autouse=True)
def _none_left() -> Iterator[None]:
    yield
    while _started:
        proc = _started.pop()
        if proc.poll() is None:
            proc.kill()
        proc.wait(10)
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()


def _start(args: list[str], cwd: Path, env: dict[str, str] | None = None
           ) -> subprocess.Popen[bytes]:
    _started.append(subprocess.Popen(
        [sys.executable, *args], cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, preexec_fn=_default_sigint,
        env=dict(os.environ, GCTOOL_MAX_WORK="300h", **(env or {}))))
    return _started[-1]


def _line(proc: subprocess.Popen[bytes], within: float = 120) -> bytes:
    """The next line of ``proc``'s stdout, read byte by byte (nothing read past it), within
    ``within`` seconds (else the test fails)."""
    assert proc.stdout is not None
    fd, line, deadline = proc.stdout.fileno(), b"", time.monotonic() + within
    while not line.endswith(b"\n"):
        left = deadline - time.monotonic()
        assert left > 0 and select.select([fd], [], [], left)[0], f"no line within {within} s"
        byte = os.read(fd, 1)
        if not byte:
            break
        line += byte
    return line


def _stderr(proc: subprocess.Popen[bytes]) -> str:
    """``proc``'s stderr, once it has ended (killed if it is running)."""
    if proc.poll() is None:
        proc.kill()
    return proc.communicate(timeout=10)[1].decode()


def _busy(proc: subprocess.Popen[bytes], cpu: float, what: str) -> None:
    """Wait until ``proc`` has spent ``cpu`` seconds of CPU (at most 120 s of waiting)."""
    deadline = time.monotonic() + 120
    while _cpu(proc.pid) < cpu:
        assert proc.poll() is None, _stderr(proc)
        assert time.monotonic() < deadline, f"{what} never got under way"
        time.sleep(0.05)


def _stopped(proc: subprocess.Popen[bytes], sig: signal.Signals) -> tuple[int, str, str]:
    """Send ``sig``; (exit code, stdout, stderr), with the interrupted line on stderr within
    LINE_S of the signal and the exit within EXIT_S (else the process is killed and the test
    fails)."""
    assert proc.stderr is not None and proc.stdout is not None
    os.set_blocking(proc.stderr.fileno(), False)
    proc.send_signal(sig)
    sent, err = time.monotonic(), b""
    try:
        while b"\n" not in err:
            assert time.monotonic() - sent < LINE_S, f"no line within {LINE_S:g} s of {sig.name}"
            err += proc.stderr.read() or b""
            time.sleep(0.01)
        proc.wait(max(0.1, EXIT_S - (time.monotonic() - sent)))
    except (AssertionError, subprocess.TimeoutExpired):
        proc.kill()
        proc.wait()
        raise
    os.set_blocking(proc.stderr.fileno(), True)
    return proc.returncode, proc.stdout.read().decode(), (err + proc.stderr.read()).decode()


def _shuffled_cyclic(n: int, s: int) -> bytes:
    """Tandon's cyclic code with its rows and columns shuffled (no structure any shortcut
    could use), as JSON bytes."""
    import numpy as np

    from gctool.codes import design
    from gctool.io import code_bytes
    from gctool.model import GradientCode

    crc = design("cyclic", n=n, s=s, seed=1)
    rng = np.random.default_rng(0)
    B = np.asarray(crc.B)[rng.permutation(n)][:, rng.permutation(n)]
    return code_bytes(GradientCode(B, crc.field, s, "custom"), npz=False)


#: WALK's and POOL_WALK's set-up: a GF(97) frc code, n = 90, that tolerates 8 stragglers, and
#: its compiled GF(q) test
GF97_KERNEL = """
from gctool import _signals
from gctool.audit import nullspace as ns
from gctool.audit.kernels.ranges import gf_summary
from gctool.codes import design

n, s = 90, 8
code = design("frc", n, s, field="GF(97)")
kernel = ns.GFNullKernel(code, ns.reduce_gf(code))
kernel.chunk_size(s)
assert kernel.walks_compiled(s)
"""

#: a walk of C(90, 8) sets of a GF(97) code that tolerates 8 stragglers (the compiled GF(q)
#: test, one call for 10^9 of them: minutes), in the main thread under the CLI's handlers
WALK = GF97_KERNEL + """
import sys
from gctool.engine.threads import _MAIN
try:
    with _signals.handled(standalone=True):
        print("walking", flush=True)
        out = gf_summary(kernel, (0, 0, 10**9), n, s)
except KeyboardInterrupt as exc:
    print(f"interrupted: {type(exc).__name__}, flag {int(_MAIN[0])}", file=sys.stderr)
    sys.exit(128 + (_signals.received() or 0))
print("finished", out.evaluated)
"""


@pytest.mark.skipif(not numba_available(), reason="the compiled walk needs numba")
@pytest.mark.parametrize(("sig", "want"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)],
                         ids=["INT", "TERM"])
def test_a_compiled_walk_of_the_main_thread_ends_on_a_signal(tmp_path: Path,
                                                             sig: signal.Signals,
                                                             want: int) -> None:
    """The walk reads the main thread's flag, which the signal sets at once: it ends, and the
    signal's interrupt is raised in place of its result (the flag cleared); before, the
    handler waited for the walk's end."""
    (tmp_path / "walk.py").write_text(WALK)
    proc = _start(["walk.py"], tmp_path, {"GCTOOL_COMPILED": "1"})
    assert _line(proc) == b"walking\n", _stderr(proc)
    _busy(proc, _cpu(proc.pid) + 0.5, "the walk")
    code, out, err = _stopped(proc, sig)
    assert (code, out, err) == (want, "", "interrupted: Terminated, flag 0\n")


#: WALK's walk as two tasks of a pool of two threads (run_threads): the caller's thread runs one
#: of them (a pool's thread, whose walk reads its task's flag, not the main thread's)
POOL_WALK = GF97_KERNEL + """
import os, sys, threading
from gctool.engine.threads import run_threads

class Walk:
    def run(self, task):
        main = threading.current_thread() is threading.main_thread()
        os.write(1, f"walking {main}\\n".encode())  # (one write: print's two may interleave)
        return gf_summary(kernel, task, n, s)

try:
    with _signals.handled(standalone=True):
        run_threads(Walk(), [(0, 0, 10**9)] * 2, 2, lambda i, r: False)
except KeyboardInterrupt as exc:
    print(f"interrupted: {type(exc).__name__}", file=sys.stderr)
    sys.exit(128 + (_signals.received() or 0))
print("finished")
"""


@pytest.mark.skipif(not numba_available(), reason="the compiled walk needs numba")
@pytest.mark.parametrize(("sig", "want"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)],
                         ids=["INT", "TERM"])
def test_a_pool_task_of_the_callers_thread_ends_on_a_signal(tmp_path: Path,
                                                            sig: signal.Signals,
                                                            want: int) -> None:
    """run_threads --jobs 2: the caller's thread walks one task, another thread the other;
    the signal sets the caller's task flag too (gctool._signals.TASK_FLAGS): its walk ends,
    the interrupt is raised in the caller, the other walk stops with the run."""
    (tmp_path / "walk.py").write_text(POOL_WALK)
    proc = _start(["walk.py"], tmp_path, {"GCTOOL_COMPILED": "1"})
    lines = {_line(proc), _line(proc)}
    if lines != {b"walking True\n", b"walking False\n"}:
        raise AssertionError(f"{lines}: {_stderr(proc)}")
    _busy(proc, _cpu(proc.pid) + 0.5, "the walks")
    code, out, err = _stopped(proc, sig)
    assert (code, out, err) == (want, "", "interrupted: Terminated\n")


def test_simulate_stops_inside_its_round_loop(tmp_path: Path) -> None:
    """simulate's search of the sequential schemes' (B, W, lambda) replays 200,000 rounds of
    50 workers per candidate in one compiled loop (about a second each on a quiet machine,
    minutes in all): Ctrl-C ends it with exit 130 and one line, nothing on stdout."""
    from gctool.codes import design
    from gctool.io import write_code

    write_code(design("cyclic", 50, 5, seed=1), tmp_path / "code.json")
    before = sorted(p.name for p in tmp_path.iterdir())
    proc = _start(["-m", "gctool", "simulate", "code.json", "--iterations", "200000",
                   "--sgc", "search", "--seed", "1"], tmp_path)
    _busy(proc, 3.0, "the simulation")  # past the start (the loop compiles, the delays drawn)
    code, out, err = _stopped(proc, signal.SIGINT)
    assert (code, out, err) == (130, "", "gctool simulate: interrupted\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == before


#: gctool's command line, whose threshold search first writes the file ``searching``
SEARCHING = """
import sys
from pathlib import Path

import gctool.api as api

search = api.threshold


def threshold(*args, **kwargs):
    Path("searching").touch()
    return search(*args, **kwargs)


api.threshold = threshold
sys.argv = ["gctool", *sys.argv[1:]]
from gctool._start import main
main()
"""


def test_attack_threshold_stops_promptly(tmp_path: Path) -> None:
    """attack --threshold on one job of a shuffled cyclic code n = 48, s = 7 (74 million sets
    of size 8 before it ends: minutes): Ctrl-C a tenth of a second of CPU after the search
    started, while it sets up and probes its sizes, ends it with exit 130 and the one line of
    how far it got (later, while it walks them: tests/reliability/test_hardening_process.py).
    The search's start is the file its command line writes (:data:`SEARCHING`): a fixed CPU
    time from the process's start would come before it where the start-up costs more (a
    slower or loaded machine, modules compiled anew), and the line is a bare "interrupted"."""
    (tmp_path / "code.json").write_bytes(_shuffled_cyclic(48, 7))
    (tmp_path / "attack.py").write_text(SEARCHING)
    proc = _start(["attack.py", "attack", "code.json", "--threshold", "--jobs", "1",
                   "--max-sets", "1000000000"], tmp_path)
    deadline = time.monotonic() + 120
    while not (tmp_path / "searching").exists():
        assert proc.poll() is None, _stderr(proc)
        assert time.monotonic() < deadline, "the search never started"
        time.sleep(0.01)
    _busy(proc, _cpu(proc.pid) + 0.1, "the search")
    code, out, err = _stopped(proc, signal.SIGINT)
    assert (code, out) == (130, ""), err
    assert err.startswith("gctool attack: interrupted ") and err.count("\n") == 1, err


def test_sigterm_while_export_writes_its_file_leaves_the_old_one(tmp_path: Path) -> None:
    """export --decoders to NPZ writes its file as it decodes (a temporary file beside the
    target): SIGTERM while that file grows exits 143 with one line, removes it, and leaves the
    existing target as it was."""
    (tmp_path / "code.json").write_bytes(_shuffled_cyclic(40, 6))
    (tmp_path / "plan.npz").write_bytes(b"an old plan that must survive\n")
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    proc = _start(["-m", "gctool", "export", "code.json", "-o", "plan.npz", "--decoders",
                   "-s", "4"], tmp_path)  # 91,390 patterns: seconds on a quiet machine
    deadline, sizes = time.monotonic() + 120, set()
    while len(sizes - {0}) < 2:  # the temporary file has grown twice: the write is under way
        assert proc.poll() is None, _stderr(proc)
        assert time.monotonic() < deadline, "export never started writing"
        for p in tmp_path.iterdir():
            if p.name not in before:
                with contextlib.suppress(OSError):  # (renamed meanwhile: the test fails)
                    sizes.add(p.stat().st_size)
        time.sleep(0.005)
    code, out, err = _stopped(proc, signal.SIGTERM)
    assert (code, out) == (143, ""), err
    assert err.startswith("gctool export: interrupted after decoding ") and err.endswith(
        "; no file written (SIGTERM)\n") and err.count("\n") == 1, err
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
