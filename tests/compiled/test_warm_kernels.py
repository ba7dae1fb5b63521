"""tests/warm_kernels.py, the warm-up of numba's cache beside the suite: it finds every kernel
of gctool, and leaves none of them without a cache entry (else the suite's process compiles it
at its first use, beside the warm-up)."""

from __future__ import annotations

import ast
import importlib
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
    # the kernels not found are ``njit(f)`` of plain functions of gctool.numerics (the same
    # arithmetic in numpy and compiled code), compiled inside the kernels that call them
    assert missing and all(_origin(s) == "gctool.numerics" for s in missing), missing


def _origin(site: str) -> str:
    module, name = site.rsplit(".", 1)
    return getattr(importlib.import_module(module), name).__module__


def test_the_warm_up_leaves_no_kernel_cold(warm_up: tuple[int, str] | None) -> None:
    """On a cold cache the warm-up compiles every kernel (this session's, or run here when
    there was none: one test module); on a warm one, every kernel has its cache entry."""
    if warm_up is None and warm_kernels.cold(warm_kernels.kernels()):
        script = Path(warm_kernels.__file__)
        run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                             check=False)
        warm_up = run.returncode, run.stdout
    status, left = warm_up if warm_up is not None else (0, "")
    assert (status, left.split()) == (0, [])
