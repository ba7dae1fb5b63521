"""The command line keeps glibc's freed memory for its next temporaries
(:func:`gctool._memory.keep_heap`); a program that only imports and calls the library keeps its
allocator as it was, and a setting of glibc's own variables wins.

Each case runs in a fresh process, which records at exit whether the heap was kept and whether
an allocation of 24 MB (below :data:`gctool._memory.HEAP_KEPT`, above anything the run freed)
was a fresh mapping (glibc's ``mallinfo2``: its count of mapped blocks)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import gctool
from gctool import _memory

LINUX = sys.platform.startswith("linux")

PROBE = """
import atexit, ctypes, json, os, sys
def _record():
    from gctool import _memory
    mapped = None
    libc = ctypes.CDLL(None)
    if hasattr(libc, 'mallinfo2'):
        class Info(ctypes.Structure):
            _fields_ = [(f, ctypes.c_size_t) for f in ('arena', 'ordblks', 'smblks', 'hblks',
                        'hblkhd', 'usmblks', 'fsmblks', 'uordblks', 'fordblks', 'keepcost')]
        libc.mallinfo2.restype = Info
        before = libc.mallinfo2().hblks
        buf = bytearray(24 << 20)
        mapped = libc.mallinfo2().hblks - before
        del buf
    with open(os.environ['GCTOOL_TEST_HEAP'], 'w') as out:
        json.dump({'kept': _memory._HEAP_KEPT, 'mapped': mapped}, out)
atexit.register(_record)
if sys.argv[1] == 'cli':
    sys.argv[1:2] = []
    sys.argv[0] = 'gctool'
    from gctool._start import main
    main()
else:
    import gctool
    gctool.verify(gctool.read_code(sys.argv[-1]))
"""


def _heap(tmp_path: Path, how: str, env: dict[str, str] | None = None) -> dict[str, object]:
    """What a fresh process that ran ``verify`` on a small code (as the command line, ``how``
    "cli", or through the library, "library") recorded at exit."""
    gctool.write_code(gctool.design("frc", n=6, s=1), tmp_path / "c.json")
    record = tmp_path / "heap.json"
    environ = {k: v for k, v in os.environ.items()
               if k not in _memory.OWN_SETTINGS and k != "GLIBC_TUNABLES"}
    environ.update(env or {}, GCTOOL_TEST_HEAP=str(record))
    done = subprocess.run([sys.executable, "-c", PROBE, how, "verify", "c.json"], cwd=tmp_path,
                          env=environ, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return dict(json.loads(record.read_text()))


def test_the_command_line_keeps_the_heap(tmp_path: Path) -> None:
    seen = _heap(tmp_path, "cli")
    assert seen["kept"] == [LINUX]
    if LINUX:
        assert seen["mapped"] == 0  # from the heap


def test_importing_and_calling_the_library_leaves_the_allocator_alone(tmp_path: Path) -> None:
    seen = _heap(tmp_path, "library")
    assert seen["kept"] == []
    if LINUX:
        assert seen["mapped"] == 1  # glibc's own threshold: a fresh mapping


@pytest.mark.parametrize("env", [{"MALLOC_MMAP_THRESHOLD_": "1048576"},
                                 {"MALLOC_TOP_PAD_": "0"},
                                 {"GLIBC_TUNABLES": "glibc.malloc.mmap_threshold=1048576"}],
                         ids=["mmap-threshold", "top-pad", "tunables"])
def test_glibc_s_own_settings_win(tmp_path: Path, env: dict[str, str]) -> None:
    """A user's setting of the mmap threshold or of the kept top stays as set: a 24 MB
    allocation is mapped above a threshold of 1 MB (with the kept top alone set, glibc's
    adaptive threshold has not reached 24 MB either)."""
    seen = _heap(tmp_path, "cli", env)
    assert seen["kept"] == [False]
    if LINUX:
        assert seen["mapped"] == 1
