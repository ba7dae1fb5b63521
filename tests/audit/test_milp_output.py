"""The milp method does not write on its caller's stdout.

HiGHS 1.12 (scipy 1.17) prints 'HighsMipSolverData::transformNewIntegerFeasibleSolution
tmpSolver.run();' with a bare C printf whatever its options say; on random low-rank-plus-noise
complex 7 x 6 codes it did so in most attacks (in-process, before the fix: 8 lines for the code
below at s = 1).  gctool.audit.milp.c_stdout_silenced points C's stdout stream at /dev/null
during each solve; Python's own output, and C output after the block, still reach stdout.
"""

from __future__ import annotations

import ctypes
import signal
import threading

import numpy as np
import pytest

import gctool
from gctool.audit.milp import c_stdout_silenced

from corpus import code_of

LIBC = ctypes.CDLL(None)  # glibc (the switch does nothing elsewhere)


def _c_print(text: str) -> None:
    LIBC.printf(text.encode() + b"\n")
    LIBC.fflush(None)


def _noisy_lowrank_complex(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    r = int(rng.integers(2, 6))

    def g(*shape: int) -> np.ndarray:
        return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)

    return g(7, r) @ g(r, 6) + 10.0 ** -rng.uniform(3, 9) * g(7, 6)


def test_an_attack_with_the_milp_method_prints_nothing(capfd: pytest.CaptureFixture[str]
                                                       ) -> None:
    code = code_of(_noisy_lowrank_complex(4), 0, "complex")
    report = gctool.attack(code, 1, method="milp")
    LIBC.fflush(None)
    out = capfd.readouterr().out
    assert "Highs" not in out and out == ""
    assert report.stragglers is not None and len(report.stragglers) == 1


def test_only_c_stdout_inside_the_block_is_silenced(capfd: pytest.CaptureFixture[str]) -> None:
    _c_print("c before")
    with c_stdout_silenced():
        _c_print("c inside")
        print("python inside", flush=True)  # Python writes the descriptor: not switched
        with c_stdout_silenced():  # nested
            _c_print("c nested")
        _c_print("c after the nested block")
    _c_print("c after")
    assert capfd.readouterr().out.split("\n") == ["c before", "python inside", "c after", ""]


def test_concurrent_blocks_share_one_switch(capfd: pytest.CaptureFixture[str]) -> None:
    inside, leave = threading.Event(), threading.Event()

    def other() -> None:
        with c_stdout_silenced():
            inside.set()
            leave.wait(10)

    thread = threading.Thread(target=other)
    thread.start()
    assert inside.wait(10)
    with c_stdout_silenced():
        _c_print("c while both are inside")
    _c_print("c while the other thread is inside")  # still switched
    leave.set()
    thread.join(10)
    _c_print("c after both")
    assert capfd.readouterr().out == "c after both\n"


def test_a_process_forked_during_a_solve_keeps_its_own_c_stdout(
        capfd: pytest.CaptureFixture[str]) -> None:
    """A pool forks while another thread's solve has C's stdout switched: the child has no
    such solve, so its own printf output reaches stdout (before and after a block of its own);
    the parent's stream stays switched until its solve ends."""
    import os

    inside, leave = threading.Event(), threading.Event()

    def solving() -> None:
        with c_stdout_silenced():
            inside.set()
            leave.wait(10)

    thread = threading.Thread(target=solving)
    thread.start()
    assert inside.wait(10)
    pid = os.fork()
    if pid == 0:  # the child: print, then leave at once (no pytest teardown)
        code = 0
        signal.alarm(60)  # a child that waits for the parent's solve would hang: killed
        try:
            _c_print("c in the child")
            with c_stdout_silenced():
                _c_print("c in the child's block")
            _c_print("c in the child after its block")
        except BaseException:
            code = 1
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    _c_print("c in the parent during its solve")
    leave.set()
    thread.join(10)
    _c_print("c in the parent after")
    assert os.waitstatus_to_exitcode(status) == 0
    assert capfd.readouterr().out.split("\n") == [
        "c in the child", "c in the child after its block", "c in the parent after", ""]
