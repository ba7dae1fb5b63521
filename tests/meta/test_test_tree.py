"""Meta tests of the test tree: test modules import no other test module.

Only ``tests/`` is on the import path (``pythonpath`` in pyproject.toml); pytest adds a test
file's own folder only while it collects that folder.  So a test that imports another test
module (or a module of another area's folder) works only when that folder happens to be
collected first.  Helpers shared across areas are plain modules beside the area folders
(tests/oracles.py, tests/corpus.py, tests/refusals.py, ...)."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).parents[1]


def _helper_modules() -> set[str]:
    """The importable helper modules: plain modules directly in tests/."""
    return {p.stem for p in TESTS.glob("*.py")
            if not p.stem.startswith("test_") and p.stem != "conftest"}


def _local_imports(tree: ast.Module, local: set[str]) -> list[tuple[str, int]]:
    """The imports in ``tree`` (anywhere in it) of modules whose top name is in ``local``."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.append((node.module, node.lineno))
        elif isinstance(node, ast.ImportFrom):
            out.append(("." * node.level + (node.module or ""), node.lineno))
    return [(name, line) for name, line in out
            if name.startswith(".") or name.split(".")[0] in local]


def _bad_imports(source: str) -> list[tuple[str, int]]:
    local = {p.stem for p in TESTS.rglob("*.py")} | {"conftest", "tests"}
    helpers = _helper_modules()
    return [(name, line) for name, line in _local_imports(ast.parse(source), local)
            if name.split(".")[0] not in helpers]


def test_no_test_module_imports_another_test_module() -> None:
    bad = [f"{path.relative_to(TESTS)}:{line}: imports {name}"
           for path in sorted(TESTS.rglob("*.py"))
           for name, line in _bad_imports(path.read_text(encoding="utf-8"))]
    assert not bad, "import the shared helper module instead:\n" + "\n".join(bad)


def test_the_import_check_finds_test_modules() -> None:
    src = ("from test_adversarial_corpus import exact_ok\n"
           "def f():\n    import test_signals\n    from conftest import RS5\n"
           "from . import sibling\n"
           "from corpus import exact_ok\nfrom oracles import lstsq_error\nimport numpy\n")
    assert sorted(line for _, line in _bad_imports(src)) == [1, 3, 4, 5]
    assert {"corpus", "oracles", "refusals"} <= _helper_modules()


def test_every_package_has_its_test_folder() -> None:
    """The tests mirror the packages: ``gctool/<package>/`` is tested in ``tests/<package>/``
    (a subpackage's tests sit in its package's folder)."""
    package = TESTS.parent / "gctool"
    missing = [p.name for p in sorted(package.iterdir())
               if (p / "__init__.py").is_file() and not any((TESTS / p.name).glob("test_*.py"))]
    assert not missing, f"packages without a test folder: {missing}"
