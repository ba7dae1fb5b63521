"""docs/precision.md's table is what docs/precision_table.py computes (the rows of the small
codes are recomputed here; the script rewrites the whole table)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

DOCS = Path(__file__).parents[2] / "docs"


def _script():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("precision_table",
                                                  DOCS / "precision_table.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_table_rows_of_the_small_codes_are_current() -> None:
    script = _script()
    text = (DOCS / "precision.md").read_text()
    block = text[text.index(script.BEGIN):text.index(script.END)]
    small = [args for args in script.CODES if "-n 2" not in args]  # n < 20: quick
    assert len(small) >= 6
    for args in small:
        line = script.row(args)
        assert line in block, f"docs/precision.md is stale (run docs/precision_table.py): {line}"
    assert len([r for r in block.splitlines() if r.startswith("| `")]) == len(script.CODES)
