"""Meta tests of the package structure: the import graph between packages and between modules
(no cycle at either level), and limits and tolerances declared in one place
(:mod:`gctool.limits`)."""

from __future__ import annotations

import ast
from collections import defaultdict

from pysource import imports, module_graph, package_modules, strongly_connected, type_checking_nodes

from gctool import limits


def _imported(module: str, tree: ast.Module) -> list[tuple[str, int]]:
    """Every gctool module imported anywhere in ``tree`` (top level and inside functions);
    ``from pkg import name`` counts as an import of ``pkg`` (of ``gctool.name`` from the root)."""
    out = [(f"gctool.{alias}" if name == "gctool" and alias else name, line)
           for name, alias, line in imports(module, tree)]
    return [(n, line) for n, line in dict.fromkeys(out) if n.startswith("gctool.")]


def _scheme_modules() -> set[str]:
    """The modules that define the registered schemes (the ``gctool.schemes`` entry points)."""
    from importlib.metadata import entry_points

    from gctool.registry import GROUP

    return {point.value.partition(":")[0] for point in entry_points(group=GROUP)}


SCHEME_MODULES = _scheme_modules()


def _unit(module: str) -> str:
    """The package a module belongs to: ``gctool.<x>`` for a subpackage or top-level module;
    a scheme module is a unit of its own (the families sit on top: they use the audits, and
    nothing below reaches them but through the registry)."""
    return module if module in SCHEME_MODULES else ".".join(module.split(".")[:2])


def package_graph() -> dict[tuple[str, str], list[str]]:
    """(importer package, imported package) -> where, over every import, lazy ones included."""
    edges: dict[tuple[str, str], list[str]] = defaultdict(list)
    for module, tree in package_modules().items():
        for name, line in _imported(module, tree):
            a, b = _unit(module), _unit(name)
            if a != b and b != "gctool":
                edges[(a, b)].append(f"{module}:{line}")
    return edges


def test_the_graph_sees_lazy_imports() -> None:
    edges = package_graph()
    assert ("gctool.cli", "gctool.audit") in edges  # the CLI imports the library lazily
    assert ("gctool.codes", "gctool.algebra") in edges


def test_no_import_cycles_between_packages() -> None:
    edges = package_graph()
    units = {unit for edge in edges for unit in edge}
    cycles = strongly_connected({u: {b for a, b in edges if a == u} for u in units})
    detail = [f"{a} -> {b}: {where[:3]}" for (a, b), where in sorted(edges.items())
              if any(a in c and b in c for c in cycles)]
    assert not cycles, "import cycles between packages:\n" + "\n".join(detail)


def test_no_import_cycles_between_modules() -> None:
    """No module of gctool reaches itself through imports, lazy ones (inside functions)
    included: what two modules share lives in a module below both.  Nothing is allowed."""
    graph = module_graph()
    cycles = strongly_connected(graph)
    detail = [f"{a}:{lines[0]} -> {b}" for comp in cycles for a in comp
              for b, lines in sorted(graph[a].items()) if b in comp]
    assert not cycles, f"import cycles between modules {cycles}:\n" + "\n".join(detail)


def test_the_module_cycle_check_finds_cycles() -> None:
    """The check sees a cycle closed by a lazy import, and resolves ``from pkg import sub``
    to the submodule."""
    graph = module_graph()
    assert "gctool.engine.parallel" in graph["gctool.engine.threads"]  # module level
    assert "gctool.engine.threads" in graph["gctool.engine.sweep"]  # inside a function
    assert "gctool.bounds.rank" in graph["gctool.bounds.code"]  # from gctool.bounds import rank
    looped = {m: dict(t) for m, t in graph.items()}
    looped["gctool.engine.parallel"]["gctool.engine.sweep"] = [1]  # sweep -> parallel exists
    assert ["gctool.engine.parallel", "gctool.engine.sweep", "gctool.engine.threads"] in \
        strongly_connected(looped)
    assert not strongly_connected({"a": {"b": [1]}, "b": {}})
    assert strongly_connected({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == \
        [["a", "b", "c"]]


def test_only_the_package_root_imports_its_own_names() -> None:
    """``from gctool import NAME`` inside the package, for a name that is not a module, makes
    the package root (which re-exports the public API) part of an import cycle (gctool ->
    api -> family -> gctool): such names come from their own modules (``gctool._version``)."""
    modules = package_modules()
    bad = [f"{module}:{line}: {name}" for module, tree in modules.items() if module != "gctool"
           for name, line in _imported(module, tree)
           if name.count(".") == 1 and name not in modules]
    assert not bad, bad


def test_no_module_imports_a_scheme_module() -> None:
    """Scheme modules are plug-ins: gctool reaches a family through the registry
    (:func:`gctool.family.family_of`), so reading a file imports its own family only.  A
    scheme module may use another's construction inside a function (sr-sgc builds its per-round
    code with frc's ``build``), never at import."""
    found = []
    for module, tree in package_modules().items():
        top, skip = {id(n) for n in tree.body}, type_checking_nodes(tree)
        for node in ast.walk(tree):
            if id(node) in skip or not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            for name, line in _imported(module, ast.Module(body=[node], type_ignores=[])):
                if name in SCHEME_MODULES and name != module and (
                        module not in SCHEME_MODULES or id(node) in top):
                    found.append(f"{module}:{line} imports {name}")
    assert not found, "\n".join(found)


def test_algebra_and_codes_stay_below_the_audits() -> None:
    edges = package_graph()
    algebra = {b for (a, b) in edges if a == "gctool.algebra"}
    assert algebra <= {"gctool.budget", "gctool.errors", "gctool.limits", "gctool.numerics"}, \
        algebra
    for low in ("gctool.codes", "gctool.decode", "gctool.algebra", "gctool.model",
                "gctool.io", "gctool.bounds"):
        for high in ("gctool.audit", "gctool.cli", "gctool.api"):
            assert (low, high) not in edges, (low, high, edges.get((low, high)))
    # the bounds sit below the constructions that use them (kron's thresholds, hetero's row)
    for high in ("gctool.codes", "gctool.sequential", "gctool.sim"):
        assert ("gctool.bounds", high) not in edges, (high, edges.get(("gctool.bounds", high)))


# -- limits and tolerances from one place -----------------------------------------------------
def _number(node: ast.AST | None) -> float | int | None:
    if node is None:
        return None
    try:
        value = ast.literal_eval(node)
    except ValueError:
        if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow | ast.Mult)):
            return None
        left, right = _number(node.left), _number(node.right)
        if left is None or right is None:
            return None
        value = left**right if isinstance(node.op, ast.Pow) else left * right
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


def _redeclarations(tree: ast.Module) -> list[tuple[int, str]]:
    """Literals in ``tree`` that restate a constant of gctool.limits:

    * the tolerance value (DEFAULT_TOL, REL_SLACK) anywhere;
    * a module-level assignment to a name limits defines;
    * a default budget (a ``DEFAULT_*`` value) as a parameter default, a click ``default=``, or
      a module constant named like a budget."""
    consts = {k: v for k, v in vars(limits).items() if k.isupper()
              and isinstance(v, int | float) and not isinstance(v, bool)}
    budgets = {v: k for k, v in consts.items() if k.startswith("DEFAULT_") and v >= 10_000}
    out: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and _number(node) == limits.DEFAULT_TOL:
            out.append((node.lineno, f"literal {node.value!r}: use limits.DEFAULT_TOL or "
                                     "limits.REL_SLACK"))
    defaults: list[ast.expr] = []
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign | ast.AnnAssign) and stmt.value is not None:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for name in (t.id for t in targets if isinstance(t, ast.Name)):
                if name in consts:
                    out.append((stmt.lineno, f"re-declares limits.{name}"))
                if name.startswith("DEFAULT_") or "MAX_SETS" in name or "SAMPLES" in name:
                    defaults.append(stmt.value)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            defaults += node.args.defaults + [d for d in node.args.kw_defaults if d]
        elif isinstance(node, ast.Call):
            defaults += [k.value for k in node.keywords if k.arg == "default"]
    for d in defaults:
        value = _number(d)
        if value in budgets:
            out.append((d.lineno, f"{value!r} restates limits.{budgets[value]}"))
    return out


def test_limits_and_tolerances_are_declared_once() -> None:
    found = [f"{name}:{line}: {what}" for name, tree in package_modules().items()
             if name != "gctool.limits" for line, what in _redeclarations(tree)]
    assert not found, "\n".join(found)


def test_the_redeclaration_check_finds_copies() -> None:
    copies = ast.parse(
        "SPECTRUM_MAX_SETS = 5_000_000\nVERIFY_MAX_SETS = 5 * 10**6\nN = 4096\n"
        "def f(tol=1e-9, max_patterns=100_000, n=4096): ...\n"
        "opt = option('--samples', default=20_000)\n"
        "ok = err <= 1e-9 * k\n")
    found = [line for line, _ in _redeclarations(copies)]
    assert found.count(1) == 2 and found.count(2) == 1 and found.count(4) == 2
    assert 5 in found and 6 in found


#: the one module that makes rich tables (the one table style of the text output)
TABLE_HOME = "gctool.cli.render.common"


def _table_constructions(tree: ast.Module) -> list[int]:
    """Lines that import rich's Table class or construct a rich table."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("rich.table"):
            out.append(node.lineno)
        elif isinstance(node, ast.Import) and any(a.name.startswith("rich.table")
                                                  for a in node.names):
            out.append(node.lineno)
        elif isinstance(node, ast.Attribute) and node.attr == "Table" and \
                ast.unparse(node.value).endswith("table"):
            out.append(node.lineno)
    return out


def test_rich_tables_are_made_in_one_place() -> None:
    found = [f"{name}:{line}: use gctool.cli.render.common.table()"
             for name, tree in package_modules().items() if name != TABLE_HOME
             for line in _table_constructions(tree)]
    assert not found, "\n".join(found)
    assert _table_constructions(package_modules()[TABLE_HOME])  # the home is where the check looks


def test_the_table_check_finds_constructions() -> None:
    src = ast.parse("from rich.table import Table\nimport rich.table\n"
                    "def f():\n    return rich.table.Table()\nfrom rich.text import Text\n")
    assert _table_constructions(src) == [1, 2, 4]
