"""The library's surface: typed public functions, no import paths in strings, and the public
API (:mod:`gctool.api`) used by the CLI and the package root only."""

from __future__ import annotations

import ast
import importlib.util
import types
import typing
from pathlib import Path

import pytest
from pysource import package_modules

import gctool

PACKAGE = Path(__file__).parents[2] / "gctool"
#: the public functions whose reports must be concrete classes
PUBLIC = ("verify", "attack", "threshold", "curve", "bound", "design", "simulate", "show",
          "profile", "verify_partial", "export", "train", "read_code")
#: the one table of import paths: the CLI's lazy command table
COMMAND_TABLE = PACKAGE / "cli" / "main.py"


@pytest.mark.parametrize("name", PUBLIC)
def test_public_functions_return_concrete_classes(name: str) -> None:
    """``typing.get_type_hints`` resolves each public function's return annotation (in its
    own module) to classes: one, or a union where families return another kind of report."""
    from gctool.audit.attack import AttackOptions

    hints = typing.get_type_hints(getattr(gctool, name), localns={"AttackOptions": AttackOptions})
    returned = hints["return"]
    members = typing.get_args(returned) if isinstance(returned, types.UnionType) else (returned,)
    assert all(isinstance(m, type) and m is not object for m in members), (name, returned)
    assert len(members) <= 4, (name, returned)


def _import_path(text: str) -> bool:
    """Does ``text`` name a gctool module (``gctool.x.y`` or ``gctool.x.y:attr``)?"""
    module = text.partition(":")[0]
    if not module.startswith("gctool.") or not module.replace(".", "").replace("_", "").isalnum():
        return False
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def _docstrings(tree: ast.Module) -> set[int]:
    nodes = [tree, *(n for n in ast.walk(tree) if isinstance(
        n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef))]
    return {id(n.body[0].value) for n in nodes if n.body and isinstance(n.body[0], ast.Expr)
            and isinstance(n.body[0].value, ast.Constant)}


def test_no_import_path_is_written_as_a_string() -> None:
    found = []
    for module, tree in package_modules().items():
        if module == "gctool.cli.main":
            continue
        docs = _docstrings(tree)
        found += [f"{module}:{n.lineno}: {n.value!r}" for n in ast.walk(tree)
                  if isinstance(n, ast.Constant) and isinstance(n.value, str)
                  and id(n) not in docs and _import_path(n.value)]
    assert not found, "\n".join(found)


def test_the_import_path_check_finds_them() -> None:
    assert _import_path("gctool.audit.frames:verify_frame") and _import_path("gctool.sim.run")
    assert not _import_path("gctool.export")  # a file format's name, not a module
    assert not _import_path("gctool verify FILE")


def test_only_the_cli_and_the_root_import_the_api() -> None:
    """The public API sits on top: library modules call the families and engines directly."""
    found = []
    for module, tree in package_modules().items():
        if module in ("gctool", "gctool.api") or module.startswith("gctool.cli"):
            continue
        for node in ast.walk(tree):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [f"{node.module}.{a.name}" for a in node.names]
                     if isinstance(node, ast.ImportFrom) and node.module else [])
            found += [f"{module}:{node.lineno}" for name in names
                      if name == "gctool.api" or name.startswith("gctool.api.")]
    assert not found, found


#: functions typed ``-> Any`` the package may keep (module ``__getattr__``s, JSON documents,
#: generic executor results, galois's dynamic classes, click's own overrides)
MAX_ANY_RETURNS = 20


def test_few_functions_return_any() -> None:
    found = [f"{module}:{node.lineno} {node.name}" for module, tree in package_modules().items()
             for node in ast.walk(tree)
             if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
             and node.returns is not None and ast.unparse(node.returns) == "Any"]
    assert len(found) <= MAX_ANY_RETURNS, "\n".join(found)
