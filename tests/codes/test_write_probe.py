"""A large code file is charged its bytes at the rate that writing to its directory takes on
this machine (:func:`gctool.budget.write_rate`: a temporary file of WRITE_PROBE bytes, timed
once per process and directory, then removed); small files and stdout are never probed."""

from __future__ import annotations

import os
import types
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from gctool import _files as gio
from gctool import budget as bd
from gctool.budget import NS_PER_S, Budget
from gctool.codes import design
from gctool.errors import BudgetExceeded

from helpers import run
from refusals import forbid, refused

pytestmark = pytest.mark.write_probe

#: the wall time each probe takes on the fake clock (s)
PROBE_S = 0.5


@pytest.fixture(autouse=True)
def no_rates(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test probes afresh (the rates are kept per process)."""
    monkeypatch.setattr(bd, "_WRITE_RATES", {})


def wall_clock(monkeypatch: pytest.MonkeyPatch, step: float = PROBE_S) -> list[int]:
    """Give ``gctool.budget`` alone a wall clock that advances ``step`` s at each reading after
    the first (a copy of the ``time`` module, as helpers.budget_clock does for its CPU clock);
    the readings are counted."""
    import time

    readings = [0]

    def perf_counter() -> float:
        readings[0] += 1
        return step * (readings[0] - 1)

    clock = types.ModuleType("time")
    clock.__dict__.update(time.__dict__)
    clock.perf_counter = perf_counter  # type: ignore[attr-defined]
    monkeypatch.setattr(bd, "time", clock)
    return readings


@pytest.fixture
def probes(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[Path, int]]]:
    """The probes written (their target and size), through the real probe_write."""
    calls: list[tuple[Path, int]] = []
    real: Callable[[Path, int, Callable[[], float]], float | None] = gio.probe_write

    def counted(target: Path, nbytes: int, clock: Callable[[], float]) -> float | None:
        calls.append((target, nbytes))
        return real(target, nbytes, clock)

    monkeypatch.setattr(gio, "probe_write", counted)
    yield calls


def test_a_large_file_is_charged_its_bytes_at_the_probed_rate(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, probes: list[tuple[Path, int]]
) -> None:
    """An NPZ file of 4096 x 4096 reals (128 MiB): its serialisation's CPU estimate plus its
    bytes at the probe's rate (PROBE_S for WRITE_PROBE bytes), one probe in its directory for
    two estimates, and no file left there."""
    wall_clock(monkeypatch)
    target = tmp_path / "b.npz"
    entries = 4096 * 4096
    rate = PROBE_S * NS_PER_S / bd.WRITE_PROBE
    assert bd.file_bytes("real", True, entries) == 8 * entries >= bd.WRITE_PROBE_FROM
    expected = int(bd.WRITE_NPZ_BYTE_NS * 8 * entries) + int(rate * 8 * entries)
    assert bd.write_cost("real", True, 4096, 4096, where=target) == expected
    # the write itself is the probe's: NPZ's CPU estimate whole is its serialisation and write
    assert bd.WRITE_NPZ_BYTE_NS * 8 < bd.WRITE_NPZ_NS
    assert bd.write_cost("real", True, 4096, 4096, where=tmp_path / "c.npz") == expected
    assert probes == [(target, bd.WRITE_PROBE)]
    assert bd.write_rate(target) == pytest.approx(rate)
    assert os.listdir(tmp_path) == []
    # the probe's rate is about 120 ns per byte here: the file costs 16 s more than its CPU
    assert expected - bd.write_cost("real", True, 4096, 4096) > 15 * NS_PER_S


def test_small_files_and_stdout_are_not_probed(monkeypatch: pytest.MonkeyPatch,
                                               tmp_path: Path) -> None:
    """Below WRITE_PROBE_FROM bytes (a JSON file of 4096 x 4096 reals is 80 MiB at least, its
    NPZ 128 MiB, but 1000 x 1000 is under 8 MB), and on stdout, the estimate is the CPU's
    alone, and nothing is written."""
    monkeypatch.setattr(gio, "probe_write", forbid)
    for npz in (False, True):
        assert bd.write_cost("real", npz, 1000, 1000, where=tmp_path / "f") == \
            bd.write_cost("real", npz, 1000, 1000)
        assert bd.write_cost("gf", npz, 4096, 4096, where="-") == \
            bd.write_cost("gf", npz, 4096, 4096)
    assert bd.file_bytes("real", False, 4096 * 4096) >= bd.WRITE_PROBE_FROM
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("field", ["real", "complex", "GF(7)"])
def test_file_bytes_is_the_least_a_code_file_takes(field: str) -> None:
    """file_bytes of frc n=300 s=2 (300 x 300, integral values) and of the same B scaled by 1/3
    (floats: JSON only) is within 10% (and a few KB of metadata) of the bytes written, never
    above them."""
    import numpy as np

    from gctool.io import code_bytes
    from gctool.model import GradientCode

    code = design("frc", n=300, s=2, field=field)
    codes = [code]
    if field != "GF(7)":
        codes.append(GradientCode(np.asarray(code.B) / 3, code.field, code.s, "custom"))
    for c in codes:
        A = np.asarray(c.B)
        parts = (A.real, A.imag) if np.iscomplexobj(A) else (A,)
        floats = sum(int(np.count_nonzero(x != np.round(x))) for x in parts)
        for npz in (False, True):
            least = bd.file_bytes(c.field.kind, npz, A.size, 0 if npz else floats)
            written = len(code_bytes(c, npz))
            assert least <= written <= 1.1 * least + 4096, (npz, least, written)


@pytest.mark.parametrize("error", [KeyboardInterrupt, OSError])
def test_an_interrupted_or_failing_probe_leaves_no_file(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, error: type[BaseException]) -> None:
    """Ctrl-C (or a signal the CLI turns into it) during the probe's fsync: raised, and its
    temporary file removed; an OSError (a full disk): no rate (the write itself reports it),
    the CPU estimate, no file."""
    def fail(fd: int) -> None:
        raise error(28, "No space left on device") if error is OSError else error()

    monkeypatch.setattr(gio.os, "fsync", fail)
    target = tmp_path / "b.npz"
    if error is KeyboardInterrupt:
        with pytest.raises(KeyboardInterrupt):
            bd.write_cost("real", True, 4096, 4096, where=target)
    else:
        assert bd.write_cost("real", True, 4096, 4096, where=target) == \
            bd.write_cost("real", True, 4096, 4096)
        assert bd.write_rate(target) is None
    assert os.listdir(tmp_path) == []


def test_design_is_refused_on_the_probed_rate(monkeypatch: pytest.MonkeyPatch,
                                              tmp_path: Path) -> None:
    """frc n=600 s=2 (600 x 600) written as NPZ under a budget of 1 s, which its CPU estimate
    (about 0.5 s) fits: with files of its size probed (WRITE_PROBE_FROM lowered) on a slow
    clock (2 s per probe: about 480 ns per byte, 1.4 s for its 2.9 MB), the library and the
    command line refuse it in one line naming the write, and no file is written; to stdout
    (JSON: not probed) it is made."""
    monkeypatch.setattr(bd, "WRITE_PROBE_FROM", 1 << 20)
    wall_clock(monkeypatch, 2.0)
    target = tmp_path / "f.npz"
    with pytest.raises(BudgetExceeded, match="writing it"):
        design("frc", n=600, s=2, budget=Budget(max_work=1.0), write=target)
    assert os.listdir(tmp_path) == []
    design("frc", n=600, s=2, budget=Budget(max_work=1.0), write="npz")  # (no path: no probe)
    refused(run("design", "frc", "-n", "600", "-s", "2", "-o", str(target), "--max-work",
                "1s"), "writing it (NPZ)", "--max-work")
    assert os.listdir(tmp_path) == []
    assert run("design", "frc", "-n", "600", "-s", "2", "--max-work", "1s").exit_code == 0


CHILD = """\
import os, signal, sys, time
from gctool import budget
from gctool.cli.main import cli

budget.WRITE_PROBE_FROM = 1 << 20
fsync = os.fsync

def killed(fd):
    with open("caller", "w") as fh:  # which write the signal interrupts
        fh.write(sys._getframe(1).f_code.co_name)
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(0.05)  # the handler runs here at the latest
    fsync(fd)

os.fsync = killed
cli.main(["design", "frc", "-n", "600", "-s", "2", "-o", "f.npz"])
"""


def test_a_signal_during_the_probe_leaves_no_file(tmp_path: Path) -> None:
    """``gctool design ... -o f.npz`` whose write probe (files of its size probed here) gets a
    SIGTERM before its fsync: exit 143, one line, and neither the code file nor the probe's
    temporary file is left."""
    import subprocess
    import sys

    (tmp_path / "child.py").write_text(CHILD)
    proc = subprocess.run([sys.executable, "child.py"], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)
    assert proc.returncode == 143, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "SIGTERM" in proc.stderr
    assert (tmp_path / "caller").read_text() == "probe_write"
    assert sorted(os.listdir(tmp_path)) == ["caller", "child.py"]


def test_the_probe_times_the_write_not_its_temporary_file(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The probe's clock is read around its write and fsync, after its temporary file is made
    and before it is removed: a file's write makes and renames one file whatever its size, so
    that fixed cost is not charged per byte (it took up to 25 ms per probe of 4 MiB, up to
    6 ns of the 2.6-3.6 ns per byte a probe reads on the development machine)."""
    events: list[str] = []
    readings = wall_clock(monkeypatch)
    mkstemp, unlink = gio.tempfile.mkstemp, gio._unlink

    def made(*args: object, **kwargs: object) -> tuple[int, str]:
        events.append(f"made after {readings[0]} readings")
        return mkstemp(*args, **kwargs)  # type: ignore[call-overload, no-any-return]

    def removed(path: str) -> None:
        events.append(f"removed after {readings[0]} readings")
        unlink(path)

    monkeypatch.setattr(gio.tempfile, "mkstemp", made)
    monkeypatch.setattr(gio, "_unlink", removed)
    assert bd.write_rate(tmp_path / "b.npz") == pytest.approx(
        PROBE_S * NS_PER_S / bd.WRITE_PROBE)
    assert events == ["made after 0 readings", "removed after 2 readings"]
    assert os.listdir(tmp_path) == []
