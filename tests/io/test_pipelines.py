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
            r = CliRunner().invoke(cli, shlex.split(line, comments=True)[1:])
            pinned = re.search(r"#\s*exit (\d+)", line)
            assert r.exit_code == (int(pinned.group(1)) if pinned else 0), (line, r.stderr)
    (code,) = re.findall(r"```python\n(.*?)```", section, re.S)
    assert "gctool" not in code  # plain numpy
    (tmp_path / "recipe.py").write_text(code)
    runpy.run_path(str(tmp_path / "recipe.py"), run_name="__main__")
    assert "every pattern" in capsys.readouterr().out


def test_every_field_has_a_recipe() -> None:
    titles = " ".join(s.splitlines()[0] for s in SECTIONS)
    for field in ("Reals", "Complex", "GF(p)", "GF(2^m)", "m > 1"):
        assert field in titles


EXAMPLE = Path(__file__).parents[2] / "examples" / "coded_gd.py"


def _numpy_only(tmp_path: Path) -> dict[str, str]:
    """An environment whose Python sees numpy and the standard library, not gctool: run with
    -S (no site-packages) and PYTHONPATH = a directory holding only numpy."""
    import os

    import numpy as np

    site = Path(np.__file__).parents[1]
    only = tmp_path / "numpy-only"
    only.mkdir()
    for name in ("numpy", "numpy.libs"):
        if (site / name).exists():
            (only / name).symlink_to(site / name)
    return {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(only), "HOME": str(tmp_path)}


@pytest.mark.parametrize("design,export", [
    ("cyclic -n 8 -s 2 --seed 1 -o code.json", "-o plan.npz"),
    ("comm -n 6 -s 2 -m 2 -o code.json", "-o plan.npz"),                # m = 2, block target
    ("cyclic-mds -n 8 -s 2 --field complex -o code.json", "-o plan.json"),  # [re, im] pairs
    ("bgc -n 10 -s 2 --seed 4 -o code.json", "-o plan.npz"),           # 44 of 45 undecodable
    ("cyclic -n 8 -s 2 --seed 1 -o code.json", "-s 1 -o plan.json"),   # decoders.s != code.s
], ids=["cyclic", "comm-m2", "complex-json", "bgc-undecodable", "export-s1"])
def test_example_consumer_decodes_without_gctool(design: str, export: str, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """examples/coded_gd.py: real worker processes, random stragglers, the decoded gradient
    equals the full gradient every round and the weights converge, in a Python that cannot
    import gctool."""
    import subprocess
    import sys

    monkeypatch.chdir(tmp_path)
    assert CliRunner().invoke(cli, ["design", *shlex.split(design)]).exit_code == 0
    plan = shlex.split(export)[-1]
    r = CliRunner().invoke(cli, ["export", "code.json", *shlex.split(export), "--decoders"])
    assert r.exit_code in (0, 1), r.stderr  # 1: some patterns are undecodable (bgc)
    env = _numpy_only(tmp_path)
    probe = subprocess.run([sys.executable, "-S", "-c",
                            "import importlib.util as u; print(u.find_spec('gctool'), "
                            "u.find_spec('numpy') is not None)"],
                           env=env, capture_output=True, text=True, timeout=60, check=False)
    assert probe.stdout.split() == ["None", "True"], probe.stdout + probe.stderr
    out = subprocess.run([sys.executable, "-S", str(EXAMPLE), plan, "--rounds", "40"],
                         env=env, capture_output=True, text=True, timeout=300, check=False)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.startswith("OK: ") and "decoded vs full gradient" in out.stdout
    if "bgc" in design:  # the master had to wait for more than n - s workers
        assert " 0 waited" not in out.stdout


def test_pattern_rank_is_the_export_order() -> None:
    """The rank formula of docs/pipelines.md and the example: the row of every pattern."""
    import runpy

    import numpy as np

    rank = runpy.run_path(str(EXAMPLE))["pattern_rank"]
    from gctool.codes import design
    from gctool.exports import build_export

    for n, s in ((6, 2), (7, 3), (5, 1), (8, 4)):
        table = build_export(design("cyclic", n, 1, seed=1), decoders=True, s=s)
        patterns = table.arrays["patterns"]
        assert [rank([int(x) for x in row], n) for row in np.asarray(patterns)] == \
            list(range(len(patterns)))
