"""Termination signals under the CLI (gctool._signals), in real processes with deterministic
timing: each child runs the gctool command group with one extra command that signals itself at
the moment under test, or a real command whose search signals itself at its first batch."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from helpers import probe


def test_ctrl_c_inside_code_run_by_exec_of_a_string_still_exits_130(tmp_path: Path) -> None:
    # CPython marks the process for "exit by SIGINT" (-2) when a plain KeyboardInterrupt
    # leaves exec/eval of a string, as numba's generated code is run
    code, out, err = probe(tmp_path, """
        exec("kill()\\nfor _ in range(10**7): pass")
        print("not interrupted")
    """)
    assert (code, out, err) == (130, "", "gctool probe: interrupted\n")


@pytest.mark.parametrize("where", ["__del__", "fork"])
def test_an_interrupt_python_swallows_is_delivered_again(tmp_path: Path, where: str) -> None:
    # raised inside a finalizer or a fork hook, Python prints "Exception ignored" and goes on
    body = {
        "__del__": """
            class Doomed:
                def __del__(self):
                    kill()
            Doomed()
        """,
        "fork": """
            os.register_at_fork(after_in_parent=kill)
            pid = os.fork()
            if pid == 0:
                os._exit(0)
            os.waitpid(pid, 0)
        """,
    }[where]
    # delivered again 10 ms after it was swallowed (gctool._signals._redeliver, by
    # interrupt_main, which does not cut the sleep short): within the sleep, before the print
    code, out, err = probe(tmp_path, textwrap.dedent(body) + textwrap.dedent("""
        time.sleep(1)
        print("not interrupted")
    """))
    assert (code, out, err) == (130, "", "gctool probe: interrupted\n")


@pytest.mark.parametrize(("first", "second", "want"), [
    (signal.SIGINT, signal.SIGINT, 130),  # Ctrl-C pressed twice
    (signal.SIGTERM, signal.SIGINT, 143),
    (signal.SIGHUP, signal.SIGTERM, 129),
])
def test_a_second_signal_lets_the_cleanup_of_the_first_finish(tmp_path: Path, first: int,
                                                               second: int, want: int) -> None:
    code, out, err = probe(tmp_path, f"""
        try:
            kill({first})
            time.sleep(5)
        finally:
            kill({second})
            sys.stderr.write("cleaned up\\n")
    """)
    name = signal.Signals(first).name
    suffix = "" if first == signal.SIGINT else f" ({name})"
    assert (code, out, err) == (want, "", f"cleaned up\ngctool probe: interrupted{suffix}\n")


def test_a_signal_after_the_outcome_does_not_change_the_exit_code(tmp_path: Path) -> None:
    # the command has returned its outcome; the signal arrives while the process exits
    code, out, err = probe(tmp_path, """
        import atexit
        atexit.register(kill)
        print("done")
    """)
    assert (code, out, err) == (0, "done\n", "")


def test_in_process_runs_restore_the_callers_handlers() -> None:
    from gctool.cli.main import main

    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    assert main(["bound", "-n", "6", "-k", "6", "-s", "1"]) == 0
    assert {s: signal.getsignal(s) for s in before} == before


def _wakeup_fd() -> int:
    fd = signal.set_wakeup_fd(-1)
    signal.set_wakeup_fd(fd)
    return fd


def _watchers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "gctool-signals"]


def _no_watcher_left() -> bool:
    for t in _watchers():
        t.join(10)
    return not _watchers()


def test_in_process_runs_restore_the_callers_wakeup_descriptor() -> None:
    """The signals' wake-up descriptor the CLI watches (gctool._signals.PENDING) is its own
    for the run only, and its watcher thread ends; one the caller set (an event loop's) is
    left to it, unwatched."""
    from gctool import _signals
    from gctool.cli.main import main

    assert _wakeup_fd() == -1 and _no_watcher_left()
    assert main(["bound", "-n", "6", "-k", "6", "-s", "1"]) == 0
    assert _wakeup_fd() == -1 and _no_watcher_left() and _signals.PENDING[0] == 0
    a, b = socket.socketpair()
    try:
        b.setblocking(False)
        signal.set_wakeup_fd(b.fileno())
        assert main(["bound", "-n", "6", "-k", "6", "-s", "1"]) == 0
        assert _wakeup_fd() == b.fileno() and _no_watcher_left()
    finally:
        signal.set_wakeup_fd(-1)
        a.close()
        b.close()


#: the child of :func:`_command`: gctool's command group, with the first batch of the search
#: (``_signals.checkpoint``, called between the batches of every search) sending the signal
DRIVER = """\
import os, signal, sys
from gctool import _signals

SIG = signal.Signals[sys.argv[1]]
_checkpoint = _signals.checkpoint

def checkpoint():
    os.kill(os.getpid(), SIG)
    _checkpoint()  # the handler has run by now at the latest

_signals.checkpoint = checkpoint
from gctool.cli.main import cli
cli.main(sys.argv[2:])
"""

#: (command, arguments after the code file): each reaches a checkpoint of its search at once
COMMANDS = {
    "verify": ("verify", ["--method", "exhaustive", "--jobs", "1"]),
    "verify-two-files": ("verify", ["code.json", "--method", "exhaustive", "--jobs", "1"]),
    "attack": ("attack", ["-s", "2", "--method", "exhaustive", "--jobs", "1"]),
    "export": ("export", ["--decoders", "-s", "2", "-o", "plan.npz"]),
    "simulate": ("simulate", ["--iterations", "50", "--seed", "1", "--no-baselines", "--plot",
                              "plot.svg"]),
}


def _command(tmp_path: Path, sig: signal.Signals, command: str, args: list[str]
             ) -> tuple[int, str, str]:
    from gctool.codes import design
    from gctool.io import write_code

    write_code(design("cyclic", 10, 2, seed=1), tmp_path / "code.json")
    (tmp_path / "driver.py").write_text(DRIVER)
    before = sorted(p.name for p in tmp_path.iterdir())
    proc = subprocess.run([sys.executable, "-m", "driver", sig.name, command, "code.json", *args],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    after = sorted(p.name for p in tmp_path.iterdir() if p.name != "__pycache__")
    assert after == before, "a partial or temporary file was left behind"
    return proc.returncode, proc.stdout, proc.stderr


@pytest.mark.parametrize(("sig", "want"), [(signal.SIGINT, 130), (signal.SIGTERM, 143),
                                           (signal.SIGHUP, 129)], ids=["INT", "TERM", "HUP"])
@pytest.mark.parametrize(("command", "args"), COMMANDS.values(), ids=COMMANDS.keys())
def test_the_interrupted_line_names_the_command(tmp_path: Path, sig: signal.Signals, want: int,
                                                command: str, args: list[str]) -> None:
    """A real command stopped by a signal in its search: its exit code, nothing on stdout, and
    one line on stderr that names the command, says how far it got, and names the signal
    when it was not Ctrl-C."""
    code, out, err = _command(tmp_path, sig, command, args)
    assert (code, out) == (want, ""), err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"gctool {command}: interrupted"), err
    assert lines[0].endswith(f" ({sig.name})") == (sig != signal.SIGINT), err
