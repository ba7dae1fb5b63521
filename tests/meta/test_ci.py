"""The CI recipes of docs/ci.md, run for real: pre-commit with gctool's shipped hooks on a
temporary git repository, and the GitHub Actions job's steps."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

import gctool
from gctool.algebra.fields import parse_field
from gctool.model import GradientCode

ROOT = Path(__file__).parents[2]
DOC = (ROOT / "docs" / "ci.md").read_text()
HOOKS = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
BIN = Path(sys.executable).parent


def _yaml_block(first_line: str, containing: str) -> str:
    blocks = [b for b in re.findall(r"```yaml\n(.*?)```", DOC, re.S)
              if b.startswith(first_line) and containing in b]
    assert len(blocks) == 1, (first_line, containing)
    return str(blocks[0])


def _env(tmp: Path) -> dict[str, str]:
    return {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
            "PRE_COMMIT_HOME": str(tmp / "pre-commit-cache"), "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
            "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org",
            "NO_COLOR": "1"}


def _git(cwd: Path, env: dict[str, str], *args: str) -> str:
    out = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True,
                         timeout=120, check=True)
    return out.stdout.strip()


#: the release tag of this version (docs/ci.md pins it as rev: and in the install line)
TAG = f"v{gctool.__version__}"


def _hook_repo(tmp: Path, env: dict[str, str]) -> Path:
    """A git repository with gctool's hook manifest (all a language: system hook needs), tagged
    with this version's release tag as gctool's repository is."""
    repo = tmp / "gctool-hooks"
    repo.mkdir()
    shutil.copy(ROOT / ".pre-commit-hooks.yaml", repo)
    _git(repo, env, "init", "-q")
    _git(repo, env, "add", "-A")
    _git(repo, env, "commit", "-q", "-m", "hooks")
    _git(repo, env, "tag", "-a", TAG, "-m", f"gctool {gctool.__version__}")
    return repo


def _user_repo(tmp: Path, env: dict[str, str]) -> Path:
    """A new repository with the documented configuration: only ``repo:`` is replaced (by
    the local copy of gctool's repository), ``rev:`` is used as written."""
    hooks = _hook_repo(tmp, env)
    config = _yaml_block("# .pre-commit-config.yaml", "-system")
    config = re.sub(r"(?m)^(\s*- repo:) \S+.*$", rf"\1 {hooks}", config)
    user = tmp / "user"
    (user / "codes").mkdir(parents=True)
    (user / ".pre-commit-config.yaml").write_text(config)
    gctool.write_code(gctool.design("frc", 6, 2), user / "codes" / "frc.gc.json")
    gctool.write_code(gctool.design("cyclic", 8, 2, seed=1), user / "codes" / "crc.gc.npz")
    (user / "notes.json").write_text('{"not": "a code file"}')  # not matched by the hooks
    _git(user, env, "init", "-q")
    _git(user, env, "add", "-A")
    return user


def _add_weak_code(user: Path, env: dict[str, str], name: str) -> None:
    """An FRC with groups of 2 (tolerates 1) that claims s = 2."""
    B = np.kron(np.eye(3), np.ones((2, 2)))
    gctool.write_code(GradientCode(B, parse_field("real"), 2, "frc"), user / "codes" / name)
    _git(user, env, "add", "-A")


def test_docs_pin_this_release() -> None:
    """The documented rev: and install line name this version's tag."""
    revs = re.findall(r"(?m)^\s*rev: (\S+)", DOC)
    assert revs and set(revs) == {TAG}, revs
    assert f".git@{TAG}" in DOC


def test_precommit_and_github_actions_steps(tmp_path: Path) -> None:
    """The workflow's steps (pre-commit with the shipped hooks at the documented rev, then two
    gates) pass on good code files and fail on bad ones of either kind, naming each;
    pre-commit prints only the failing files.  (One bad file of each kind in one run: each
    step is a few gctool processes, and the good run is the same for both kinds.)"""
    env = _env(tmp_path)
    user = _user_repo(tmp_path, env)
    workflow = yaml.safe_load(_yaml_block("# .github/workflows/", "runs-on"))
    steps = [s["run"] for s in workflow["jobs"]["certify"]["steps"]
             if "run" in s and not s["run"].startswith("pip install")]
    assert len(steps) == 3 and steps[0].startswith("pre-commit run")

    def run(step: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["bash", "-c", step], cwd=user, env=env, capture_output=True,
                              text=True, check=False, timeout=300)

    good = [run(step) for step in steps]
    assert [r.returncode for r in good] == [0, 0, 0], [r.stdout + r.stderr for r in good]
    assert good[0].stdout.count("Passed") == 2
    weak = ["weak.gc.json", "weak.gc.npz"]  # the order of the gates' globs
    for name in weak:
        _add_weak_code(user, env, name)
    bad = [run(step) for step in steps]
    assert [r.returncode for r in bad] == [1, 1, 1], [r.stdout + r.stderr for r in bad]
    hooks = bad[0].stdout
    for name in weak:
        assert f"codes/{name}: FAIL: does not tolerate 2 stragglers" in hooks, hooks
    assert "frc.gc.json" not in hooks and "notes.json" not in hooks  # -q; unmatched files
    assert "crc.gc.npz" not in hooks
    assert "hook id: gctool-verify-system" in hooks and "hook id: gctool-bound-check" in hooks
    for gate in bad[1:]:  # the gates name the files and print nothing for passing ones
        heads = [line for line in gate.stdout.splitlines() if not line[:1].isspace()]
        assert [h.split(": ")[:2] for h in heads] == [[f"codes/{n}", "FAIL"] for n in weak], \
            gate.stdout
        assert "crc.gc.npz" not in gate.stdout and not gate.stderr


def test_one_staged_file_is_named(tmp_path: Path) -> None:
    """pre-commit passes one file when a commit stages one: the failure still names it."""
    env = _env(tmp_path)
    user = _user_repo(tmp_path, env)
    _git(user, env, "commit", "-q", "-m", "good codes", "--no-verify")
    _add_weak_code(user, env, "weak.gc.json")
    out = subprocess.run([str(BIN / "pre-commit"), "run", "gctool-verify-system"], cwd=user,
                         env=env, capture_output=True, text=True, check=False, timeout=300)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "codes/weak.gc.json: FAIL: does not tolerate 2 stragglers" in out.stdout


def test_isolated_hooks_run_the_same_commands_as_the_system_hooks() -> None:
    """The language: python hooks are not built in the tests (a download of about a minute);
    they must be valid and identical to the system hooks except for the environment."""
    out = subprocess.run([str(BIN / "pre-commit"), "validate-manifest",
                          str(ROOT / ".pre-commit-hooks.yaml")], capture_output=True,
                         text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stdout + out.stderr
    by_id = {h["id"]: h for h in HOOKS}
    assert set(by_id) == {"gctool-verify", "gctool-bound-check", "gctool-verify-system",
                          "gctool-bound-check-system"}
    for name in ("gctool-verify", "gctool-bound-check"):
        isolated, system = by_id[name], by_id[f"{name}-system"]
        assert isolated["language"] == "python" and system["language"] == "system"
        for key in ("entry", "files", "args", "require_serial"):
            assert isolated.get(key) == system.get(key), (name, key)
    assert re.search(HOOKS[0]["files"], "codes/a.gc.json")
    assert re.search(HOOKS[0]["files"], "codes/a.gc.npz")
    assert not re.search(HOOKS[0]["files"], "package.json")


def test_documented_configs_are_valid(tmp_path: Path) -> None:
    for containing in ("id: gctool-verify\n", "-system"):
        path = tmp_path / "config.yaml"
        path.write_text(_yaml_block("# .pre-commit-config.yaml", containing))
        out = subprocess.run([str(BIN / "pre-commit"), "validate-config", str(path)],
                             capture_output=True, text=True, timeout=120, check=False)
        assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.parametrize("hook", HOOKS, ids=[h["id"] for h in HOOKS])
def test_hook_entries_are_gctool_commands(hook: dict[str, str]) -> None:
    from click.testing import CliRunner

    from gctool.cli.main import cli

    argv = hook["entry"].split()
    assert argv[0] == "gctool"
    r = CliRunner().invoke(cli, [*argv[1:], "--help"])
    assert r.exit_code == 0 and re.search(r"\[?FILE\]?\.\.\.", r.stdout)
