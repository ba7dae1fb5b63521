"""The simulator's structure: no import cycle between its modules (lazy imports included), one
class per kind of contender instead of string dispatch, and runs that leave the caller's
objects alone."""

from __future__ import annotations

import ast
import dataclasses
from collections import defaultdict
from pathlib import Path

from gctool.codes import design
from gctool.sim.delays import parse_delay
from gctool.sim.run import simulate

SIM = Path(__file__).parents[2] / "gctool" / "sim"


def _modules() -> dict[str, ast.Module]:
    out = {}
    for path in sorted(SIM.rglob("*.py")):
        parts = path.relative_to(SIM.parents[1]).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = ast.parse(path.read_text(), str(path))
    return out


def _graph() -> dict[str, set[str]]:
    """module -> the gctool.sim modules it imports anywhere (functions too, not under
    TYPE_CHECKING); importing a submodule imports its packages first."""
    modules = _modules()
    graph: dict[str, set[str]] = defaultdict(set)
    for name, tree in modules.items():
        skip = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
                and "TYPE_CHECKING" in ast.unparse(node.test)
                for stmt in node.body for n in ast.walk(stmt)}
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                targets = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            for t in targets:
                parts = t.split(".")
                for i in range(3, len(parts) + 1):  # gctool.sim.x, gctool.sim.x.y, ...
                    prefix = ".".join(parts[:i])
                    if prefix in modules and prefix != name and not name.startswith(
                            prefix + "."):
                        graph[name].add(prefix)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[set[str]]:
    def reach(v: str) -> set[str]:
        seen, todo = set(), [v]
        while todo:
            for w in graph[todo.pop()]:
                if w not in seen:
                    seen.add(w)
                    todo.append(w)
        return seen

    found: list[set[str]] = []
    for v in list(graph):
        if v in reach(v):
            comp = {w for w in reach(v) if v in reach(w)}
            if comp not in found:
                found.append(comp)
    return found


def test_no_import_cycle_inside_the_simulator() -> None:
    graph = _graph()
    assert ("gctool.sim.contenders.tree" in graph["gctool.sim.lineup"])  # the graph sees edges
    assert not _cycles(graph), _cycles(graph)


def test_the_cycle_finder_finds_cycles() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [{"a", "b", "c"}]


def _name_comparisons(tree: ast.Module) -> list[int]:
    """Lines comparing a kind/name/scheme/method value with a string literal."""
    def literal(node: ast.AST) -> bool:
        if isinstance(node, ast.Constant):
            return isinstance(node.value, str)
        return isinstance(node, ast.Tuple | ast.List | ast.Set) and all(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts)

    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            named = [s for s in sides if not literal(s) and any(
                w in ast.unparse(s).lower() for w in ("kind", "name", "scheme", "method"))]
            if named and any(literal(s) for s in sides):
                out.append(node.lineno)
    return out


def test_no_dispatch_on_kind_strings() -> None:
    found = {name: lines for name, tree in _modules().items()
             if (lines := _name_comparisons(tree))}
    assert sum(len(v) for v in found.values()) <= 5, found
    assert _name_comparisons(ast.parse("if c.kind == 'code': pass\nx = name in ('a', 'b')")) \
        == [1, 2]


def test_contenders_carry_no_untyped_bags() -> None:
    """No ``extra`` dict on contenders, no meter typed ``Any``."""
    for name, tree in _modules().items():
        for node in ast.walk(tree):
            assert not (isinstance(node, ast.Attribute) and node.attr == "extra"), (name,
                                                                                    node.lineno)
            if isinstance(node, ast.AnnAssign | ast.arg):
                target = node.target if isinstance(node, ast.AnnAssign) else node
                label = ast.unparse(target)
                annotation = node.annotation
                assert not (label.endswith("meter") and annotation is not None
                            and ast.unparse(annotation) == "Any"), (name, node.lineno)


def test_simulate_leaves_the_callers_objects_alone() -> None:
    p = [0.1, 0.2, 0.5, 0.3, 0.2, 0.1]
    het = design("hetero", p=p, load=2)
    delay = parse_delay("bernoulli:slow=8")
    before = dataclasses.replace(delay)
    rep = simulate([("het", het)], delay, iterations=50, seed=1, baselines=False)
    assert delay == before and delay.worker_p is None  # type: ignore[attr-defined]
    assert rep.rows[0]["worker_p"] == p  # the run used the file's probabilities
    # delay models and traces are values: a run cannot change them
    trace = parse_delay("trace:london")
    for obj, field in ((trace, "load_model"), (trace.trace, "label"),  # type: ignore[attr-defined]
                       (delay, "worker_p")):
        try:
            setattr(obj, field, None)
        except dataclasses.FrozenInstanceError:
            continue
        raise AssertionError(f"{type(obj).__name__}.{field} can be changed")
