"""benchmarks/README.md is written by the benchmark scripts (``--write-readme``), each in its
own section: the helper replaces one section and keeps the others, and every script uses it."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).parents[2] / "benchmarks"
#: the modules the scripts share (no README section of their own)
HELPERS = {"readme.py", "timing.py"}


def _readme_module():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("bench_readme", BENCH / "readme.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_write_readme_replaces_only_its_section(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    readme = _readme_module()
    page = tmp_path / "README.md"
    page.write_text("# figures\n\n<!-- begin a.py -->\nold a\n<!-- end a.py -->\n\n"
                    "<!-- begin b.py -->\nold b\n<!-- end b.py -->\n")
    monkeypatch.setattr(sys, "argv", ["a.py", "--quick", "--write-readme"])
    with readme.section(str(tmp_path / "a.py"), readme=page):
        print("ratio 12x")
        assert sys.argv == ["a.py", "--quick"]  # the script never sees the flag
    text = page.read_text()
    assert "old a" not in text and "ratio 12x" in text and "old b" in text
    assert "python benchmarks/a.py --quick" in text
    assert "ratio 12x" in capsys.readouterr().out  # printed as usual too
    monkeypatch.setattr(sys, "argv", ["b.py"])
    with readme.section(str(tmp_path / "b.py"), readme=page):  # without the flag: untouched
        print("not recorded")
    assert page.read_text() == text


def test_every_script_writes_its_own_section() -> None:
    page = (BENCH / "README.md").read_text()
    scripts = sorted(p for p in BENCH.glob("*.py") if p.name not in HELPERS)
    assert scripts
    for script in scripts:
        assert re.search(r"with readme\.section\(__file__(, part=.+)?\):", script.read_text()), \
            script.name
        for marker in (f"<!-- begin {script.name} -->", f"<!-- end {script.name} -->"):
            assert page.count(marker) == 1, (script.name, marker)
    assert not re.search(r"\b\d{1,2}:\d{2}\b|UTC|load average", page)  # no timestamps


def test_a_part_of_a_section_is_replaced_alone(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A script with one table per machine (``part``) replaces its own machine's block and
    keeps the others'; the placeholder goes."""
    readme = _readme_module()
    page = tmp_path / "README.md"
    page.write_text("<!-- begin s.py -->\nNot recorded yet.\n<!-- end s.py -->\n\n"
                    "<!-- begin t.py -->\nother\n<!-- end t.py -->\n")
    for part, figure in (("2 cores", "1.9x"), ("16 cores", "12x"), ("2 cores", "1.95x")):
        monkeypatch.setattr(sys, "argv", ["s.py", "--write-readme"])
        with readme.section(str(tmp_path / "s.py"), readme=page, part=part):
            print(f"speed-up {figure}")
    text = page.read_text()
    assert "Not recorded yet" not in text and "other" in text
    assert "1.9x" not in text and "1.95x" in text and "12x" in text
    assert text.index("1.95x") < text.index("12x")  # the first machine's block stays first
    assert text.count("<!-- begin s.py -->") == 1 and text.count("<!-- begin s.py 2 cores -->") == 1
