"""The package's modules as syntax trees, parsed once per test process for the tests that read
the source (tests/meta/test_layers.py, tests/meta/test_api_surface.py,
tests/meta/test_messages.py, tests/sim/test_sim_structure.py): parsing all of gctool takes
about a second of CPU, and each of those tests read every module.  Also what they ask of the
trees: the imports, the module import graph and its cycles."""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Collection, Mapping
from functools import cache
from pathlib import Path

PACKAGE = Path(__file__).parents[1] / "gctool"
#: gctool's packages (folders with an ``__init__.py``) by dotted name
PACKAGES = frozenset(".".join(p.parent.relative_to(PACKAGE.parent).parts)
                     for p in PACKAGE.rglob("__init__.py"))


@cache
def package_files() -> dict[Path, ast.Module]:
    """Every module of gctool by its path in the package (``budget.py``, ``cli/main.py``),
    parsed, in the order of the sorted paths.  Shared: callers read the trees and never change
    them."""
    return {path.relative_to(PACKAGE): ast.parse(path.read_text(), str(path))
            for path in sorted(PACKAGE.rglob("*.py"))}


@cache
def package_modules() -> dict[str, ast.Module]:
    """Every module of gctool by dotted name (a package by its own name), parsed (the trees of
    :func:`package_files`)."""
    out = {}
    for path, tree in package_files().items():
        parts = (PACKAGE.name, *path.with_suffix("").parts)
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = tree
    return out


def type_checking_nodes(tree: ast.Module) -> set[int]:
    """ids of the nodes under ``if TYPE_CHECKING:`` (never executed)."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    return skip


def imports(module: str, tree: ast.Module) -> list[tuple[str, str | None, int]]:
    """Every import anywhere in ``module``'s ``tree`` (top level and inside functions; ``if
    TYPE_CHECKING`` left out) as (module, name, line): ``import a.b`` is ("a.b", None, line),
    ``from a import b`` is ("a", "b", line), relative imports resolved against ``module``."""
    skip = type_checking_nodes(tree)
    package = module.split(".") if module in PACKAGES else module.split(".")[:-1]
    out: list[tuple[str, str | None, int]] = []
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            out += [(a.name, None, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = (".".join(package[:len(package) - node.level + 1]) if node.level
                    else "")
            name = ".".join(x for x in (base, node.module or "") if x)
            out += [(name, a.name, node.lineno) for a in node.names]
    return out


def module_graph(packages_first: bool = False) -> dict[str, dict[str, list[int]]]:
    """importer module -> imported gctool module -> lines, over every import (module level and
    inside functions; ``if TYPE_CHECKING`` left out).  ``from pkg import name`` is an edge to
    the submodule ``pkg.name`` when there is one (importing it initialises ``pkg`` first, but
    a parent package being initialised is not a dependency on its contents), else to ``pkg``.
    With ``packages_first`` it is one: an import is also an edge to each package above the
    imported module but the root ``gctool`` (and but the importer's own packages)."""
    modules = package_modules()
    graph: dict[str, dict[str, list[int]]] = {m: defaultdict(list) for m in modules}
    for module, tree in modules.items():
        for name, alias, line in imports(module, tree):
            target = f"{name}.{alias}" if alias and f"{name}.{alias}" in modules else name
            parts = target.split(".")
            for i in range(2 if packages_first else len(parts), len(parts) + 1):
                prefix = ".".join(parts[:i])
                if prefix in modules and prefix != module and not (
                        packages_first and module.startswith(prefix + ".")):
                    graph[module][prefix].append(line)
    return {m: dict(targets) for m, targets in graph.items()}


def strongly_connected(graph: Mapping[str, Collection[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan, iterative); ``graph``
    maps a node to the nodes it reaches (each one a key of ``graph``)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[v] = min(low[v], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.append(w)
                    if w == v:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found
