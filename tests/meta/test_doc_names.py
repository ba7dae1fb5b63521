"""The README and docs/ name only what exists: every ``gctool/...`` path, every dotted
``gctool.module.name`` and every class-like CamelCase name in backticks (a renamed or removed
class, e.g. the old ``SchemeInfo`` hooks, otherwise lingers in the prose)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
#: names in backticks that are not gctool's: Python's, numpy's and Dask's, a GitHub account
OUTSIDE = {"KeyboardInterrupt", "MemoryError", "RuntimeWarning", "NaN", "SeedSequence",
           "KilledWorker", "LocalCluster", "ZeeChono"}
#: dotted names that are strings, not modules: the entry-point group, the Dask settings, the
#: code file's format
NOT_MODULES = {"gctool.schemes", "gctool.lost-after", "gctool.local-below", "gctool.code"}
_CAMEL = re.compile(r"\b([A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+)\b")
_DOTTED = re.compile(r"(?<![\w/.-])(gctool(?:\.[\w-]+)+)")


def _quoted() -> list[tuple[str, str]]:
    return [(doc.name, text) for doc in DOCS
            for text in re.findall(r"`([^`\n]+)`", doc.read_text(encoding="utf-8"))]


def _defined() -> set[str]:
    source = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "gctool").rglob("*.py"))
    return set(re.findall(r"(?m)^\s*(?:class|def) (\w+)", source)) | set(
        re.findall(r"(?m)^(\w+)\s*[:=]", source))


def _module_file(parts: list[str]) -> Path | None:
    base = ROOT.joinpath(*parts)
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def _resolves(dotted: str) -> bool:
    """``gctool.a.b[.name[.attr]]`` names a module whose source names what follows (defined,
    imported or exported lazily); read from the source, nothing imported."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        path = _module_file(parts[:i])
        if path is None:
            continue
        source = path.read_text(encoding="utf-8")
        return all(re.search(rf"\b{re.escape(name)}\b", source) for name in parts[i:])
    return False


def test_paths_in_the_docs_exist() -> None:
    bad = [(doc, text) for doc, text in _quoted()
           if text.startswith("gctool/") and not (ROOT / text.split()[0].rstrip(".,:")).exists()]
    assert not bad, bad


def test_dotted_names_in_the_docs_resolve() -> None:
    bad = [(doc, name) for doc, text in _quoted() for name in _DOTTED.findall(text)
           if name not in NOT_MODULES and not _resolves(name.rstrip("."))]
    assert not bad, bad


def test_class_names_in_the_docs_are_defined() -> None:
    defined = _defined() | OUTSIDE
    bad = sorted({(doc, name) for doc, text in _quoted() for name in _CAMEL.findall(text)
                  if name not in defined})
    assert not bad, bad


def test_the_checks_catch_stale_names() -> None:
    assert not _resolves("gctool.limits.memory_exhausted") and _resolves(
        "gctool.cli.main.memory_exhausted")
    assert "SchemeInfo" not in _defined() and "Family" in _defined()
    assert _CAMEL.findall("a `SchemeInfo` hook") == ["SchemeInfo"]
    assert _DOTTED.findall("x `gctool.audit.frames` y") == ["gctool.audit.frames"]
