"""The release artefacts: ``python -m build`` makes a wheel of this version whose ``gctool``
runs (package data included) outside the checkout; docs/ci.md pins this version's tag."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import gctool

ROOT = Path(__file__).parents[2]


def _source_tree(tmp: Path) -> Path:
    """The files a build reads, copied (the build writes build/ and *.egg-info beside them)."""
    src = tmp / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(ROOT / "gctool", src / "gctool",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.nbi", "*.nbc"))
    return src


def test_wheel_builds_offline_and_its_gctool_runs(tmp_path: Path) -> None:
    src = _source_tree(tmp_path)
    dist = tmp_path / "dist"
    build = subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation",
                            "--outdir", str(dist), str(src)], capture_output=True, text=True,
                           timeout=300, check=False)
    assert build.returncode == 0, build.stdout[-2000:] + build.stderr[-2000:]
    (wheel,) = dist.glob("*.whl")
    assert wheel.name == f"gctool-{gctool.__version__}-py3-none-any.whl"
    names = zipfile.ZipFile(wheel).namelist()
    for member in ("gctool/schema/verify-report-v1.schema.json", "gctool/py.typed",
                   "gctool/data/reference.md", "gctool/data/traces/aws-lambda/README.md"):
        assert member in names, member
    assert any(n.startswith("gctool/data/traces/aws-lambda/") and n.endswith(".csv")
               for n in names)
    site = tmp_path / "site"
    install = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index",
                              "--target", str(site), str(wheel)], capture_output=True,
                             text=True, timeout=300, check=False)
    assert install.returncode == 0, install.stderr[-2000:]
    env = {**os.environ, "PYTHONPATH": str(site)}  # the wheel's gctool, not the checkout's
    where = subprocess.run([sys.executable, "-c", "import gctool; print(gctool.__file__)"],
                           env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60,
                           check=False)
    assert where.stdout.startswith(str(site)), where.stdout + where.stderr
    script = site / "bin" / "gctool"
    version = subprocess.run([str(script), "--version"], env=env, cwd=tmp_path,
                             capture_output=True, text=True, timeout=60, check=False)
    assert version.returncode == 0 and gctool.__version__ in version.stdout
    run = subprocess.run(f"'{script}' design cyclic -n 8 -s 2 --seed 1 | '{script}' verify -q - "
                         f"&& '{script}' schema verify > /dev/null && '{script}' reference --path",
                         shell=True, env=env, cwd=tmp_path, capture_output=True, text=True,
                         timeout=120, check=False)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.strip().startswith(str(site))  # the reference ships in the wheel
