"""docs/pipelines.md: its shell blocks make the exports, then each python block reads them
with plain numpy (no gctool import) and checks A[p] @ B = target."""

from __future__ import annotations

import re
import runpy
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from gctool.cli.main import cli

DOC = (Path(__file__).parents[2] / "docs" / "pipelines.md").read_text()
SECTIONS = [s for s in DOC.split("\n## ")[1:] if "```python" in s]


@pytest.mark.parametrize("section", SECTIONS, ids=[s.splitlines()[0] for s in SECTIONS])
def test_recipe_reads_a_real_export(section: str, tmp_path: Path,
                                    monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    for block in re.findall(r"```sh\n(.*?)```", section, re.S):
        for line in block.splitlines():
            r = CliRunner().invoke(cli, shlex.split(line)[1:])
            assert r.exit_code == 0, (line, r.stderr)
    (code,) = re.findall(r"```python\n(.*?)```", section, re.S)
    assert "gctool" not in code  # plain numpy
    (tmp_path / "recipe.py").write_text(code)
    runpy.run_path(str(tmp_path / "recipe.py"), run_name="__main__")
    assert "every pattern" in capsys.readouterr().out


def test_every_field_has_a_recipe() -> None:
    titles = " ".join(s.splitlines()[0] for s in SECTIONS)
    for field in ("Reals", "Complex", "GF(p)", "GF(2^m)", "m > 1"):
        assert field in titles
