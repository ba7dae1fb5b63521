"""The package's modules as syntax trees, parsed once per test process for the meta tests that
read the source (tests/meta/test_layers.py, tests/meta/test_api_surface.py): parsing all of
gctool takes about a second of CPU, and each of those tests read every module."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

PACKAGE = Path(__file__).parents[1] / "gctool"


@cache
def package_modules() -> dict[str, ast.Module]:
    """Every module of gctool by dotted name (a package by its own name), parsed.  Shared:
    callers read the trees and never change them."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = ast.parse(
            path.read_text(), str(path))
    return out
