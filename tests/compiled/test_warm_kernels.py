"""tests/warm_kernels.py, the warm-up of numba's cache before the suite's tests: it finds every
kernel of gctool, and leaves none of them without a cache entry (else each of pytest-xdist's
workers compiles it at its first use)."""

from __future__ import annotations

import ast
import importlib
import os
import subprocess
import sys
from pathlib import Path

import warm_kernels

import gctool


def _njit_sites() -> list[str]:
    """``module.name`` of every function decorated with njit, and of every ``njit(name)``."""
    root = Path(gctool.__file__).parent
    sites = []
    for f in sorted(root.rglob("*.py")):
        module = ".".join(f.relative_to(root.parent).with_suffix("").parts)
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef) and any(
                    isinstance(d, ast.Name) and d.id == "njit" for d in node.decorator_list):
                sites.append(f"{module}.{node.name}")
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                  and node.func.id == "njit" and node.args):
                sites.append(f"{module}.{ast.unparse(node.args[0])}")
    return sites


def test_every_kernel_is_found() -> None:
    sites, found = _njit_sites(), warm_kernels.kernels()
    assert len(sites) == len(found) > 60
    missing = [s for s in sites if s not in found]
    # the kernels not found are ``njit(f)`` of plain functions of the numba-free modules
    # gctool.numerics and gctool.audit.kernels.bounds (the same arithmetic in numpy and
    # compiled code), compiled inside the kernels that call them
    shared = {"gctool.numerics", "gctool.audit.kernels.bounds"}
    assert missing and all(_origin(s) in shared for s in missing), missing


def _origin(site: str) -> str:
    module, name = site.rsplit(".", 1)
    return getattr(importlib.import_module(module), name).__module__


def test_the_warm_up_leaves_no_kernel_cold() -> None:
    """The session's warm-up (tests/conftest.py, on a cold cache) ended well and left no
    kernel without a cache entry; without one (a warm cache, one test module, ``-n 0``), every
    kernel has its cache entry, after a warm-up run here when some kernel has none."""
    report = os.environ.get(warm_kernels.REPORT)
    if report:
        left = Path(report).read_text()
        assert left.split() == [], left
    elif warm_kernels.cold(warm_kernels.kernels()):
        script = Path(warm_kernels.__file__)
        run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                             timeout=500, check=False)
        assert (run.returncode, run.stdout.split()) == (0, []), run.stdout + run.stderr[-2000:]
    assert warm_kernels.cold(warm_kernels.kernels()) == []
