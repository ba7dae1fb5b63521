"""The simulator's structure: no import cycle between its modules (lazy imports included), one
class per kind of contender instead of string dispatch, and runs that leave the caller's
objects alone."""

from __future__ import annotations

import ast
import dataclasses

from pysource import module_graph, package_modules, strongly_connected

from gctool.codes import design
from gctool.sim.delays import parse_delay
from gctool.sim.run import simulate


def _modules() -> dict[str, ast.Module]:
    return {name: tree for name, tree in package_modules().items()
            if name == "gctool.sim" or name.startswith("gctool.sim.")}


def _graph() -> dict[str, set[str]]:
    """module -> the gctool.sim modules it imports anywhere (functions too, not under
    TYPE_CHECKING); importing a submodule imports its packages first."""
    sim = _modules()
    return {name: set(targets) & sim.keys()
            for name, targets in module_graph(packages_first=True).items() if name in sim}


def test_no_import_cycle_inside_the_simulator() -> None:
    graph = _graph()
    assert "gctool.sim.contenders.tree" in graph["gctool.sim.lineup"]  # the graph sees edges
    assert "gctool.sim.contenders" in graph["gctool.sim.lineup"]  # and the package above
    assert not strongly_connected(graph), strongly_connected(graph)


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
