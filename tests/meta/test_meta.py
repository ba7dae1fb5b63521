"""Meta tests: start-up imports, completions, docs vs CLI, public API, JSON Schema, lint."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from gctool.cli.main import COMMANDS, cli

ROOT = Path(__file__).parents[2]
README = (ROOT / "README.md").read_text()


def _imports_after(code: str, env: dict[str, str] | None = None) -> list[str]:
    probe = (f"import sys\n{code}\n"
             "print('HEAVY=' + ','.join(m for m in ('numpy', 'galois', 'scipy', 'rich', 'numba') "
             "if m in sys.modules), file=sys.stderr)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         env={**os.environ, **(env or {})}, cwd=ROOT, timeout=120, check=False)
    line = [x for x in out.stderr.splitlines() if x.startswith("HEAVY=")]
    assert line, out.stderr
    return [m for m in line[-1][len("HEAVY="):].split(",") if m]


def test_help_imports_no_heavy_modules() -> None:
    heavy = _imports_after(
        "from gctool.cli.main import main\n"
        "for a in (['--help'], ['design', '--help'], ['design', 'frc', '--help'],"
        " ['verify', '--help'], ['attack', '--help'], ['bound', '--help'], ['export', '--help']):\n"
        "    main(a)")
    assert "galois" not in heavy and "scipy" not in heavy
    assert heavy == [], f"--help imported {heavy}"


def test_tab_completion_imports_no_heavy_modules() -> None:
    env = {"_GCTOOL_COMPLETE": "bash_complete", "COMP_WORDS": "gctool design c", "COMP_CWORD": "2"}
    heavy = _imports_after(
        "from gctool.cli.main import cli\n"
        "try:\n    cli.main(prog_name='gctool')\nexcept SystemExit:\n    pass", env)
    assert "galois" not in heavy and "scipy" not in heavy and "numpy" not in heavy


def test_verify_does_not_load_the_attack_engine(tmp_path: Path) -> None:
    """gctool.audit imports nothing itself: a verify run (library and CLI) loads the verify
    pipeline but none of attack's modes, search methods or oracles, nor the estimate of a
    compiled walk (its samples and its direct decoder's cost); and no asyncio (Dask's)."""
    path = tmp_path / "cyc.json"
    probe = (
        "import os\nimport sys\nimport gctool\nfrom gctool.cli.main import main\n"
        "code = gctool.design('cyclic', n=8, s=2, seed=1)\n"
        f"gctool.write_code(code, {str(path)!r})\n"
        "assert gctool.verify(code).ok\n"
        "try:\n"
        f"    main(['verify', {str(path)!r}, '--json'])\n"
        "except SystemExit as exc:\n"
        "    assert exc.code == 0, exc.code\n"
        "from gctool.audit.nullspace import FloatNullKernel, reduce_float\n"
        "os.environ['GCTOOL_COMPILED'] = 'always'\n"
        "kernel = FloatNullKernel(code, 1e-9, reduce_float(code, 1e-9))\n"
        "assert kernel.will_compile(2) and kernel.set_time(2, 10**7) > 0\n"
        "print('ASYNCIO=' + str('asyncio' in sys.modules), file=sys.stderr)\n"
        "print('AUDIT=' + ','.join(sorted(m for m in sys.modules "
        "if m.startswith('gctool.audit'))), file=sys.stderr)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         cwd=ROOT, timeout=120, check=False)
    line = [x for x in out.stderr.splitlines() if x.startswith("AUDIT=")]
    assert line, out.stderr
    assert "ASYNCIO=False" in out.stderr.splitlines()
    loaded = set(line[-1][len("AUDIT="):].split(","))
    assert "gctool.audit.verify.pipeline" in loaded  # the probe did run a verify
    assert "gctool.audit.kernels.real" in loaded  # and the compiled walk's estimate
    attack_side = {"gctool.audit.attack", "gctool.audit.bnb", "gctool.audit.greedy",
                   "gctool.audit.exhaustive", "gctool.audit.randomized", "gctool.audit.oracles",
                   "gctool.audit.milp", "gctool.audit.elementary"}
    assert not loaded & attack_side, sorted(loaded & attack_side)


def test_attack_and_frame_walks_do_not_load_verify_s_screen() -> None:
    """attack's compiled walks (the optimal decoder's fast path; the direct decoder's brackets
    off it) and an encoded frame's compiled spectra load their own kernel modules and the
    helpers they share (gctool.audit.kernels.shared), not verify's screen
    (gctool.audit.kernels.real: its import was 29 ms of a fresh Dask worker's)."""
    probe = (
        "import os\nimport sys\nos.environ['GCTOOL_COMPILED'] = '1'\n"
        "import numpy as np\nimport gctool\n"
        "from gctool.algebra.fields import parse_field\nfrom gctool.model import GradientCode\n"
        "gctool.attack(gctool.design('cyclic', n=12, s=3, seed=1), 3, method='exhaustive')\n"
        "U, _, Vh = np.linalg.svd(np.random.default_rng(1).standard_normal((12, 12)))\n"
        "B = (U * np.logspace(0, -6, 12)) @ Vh  # (no fast path: the direct brackets)\n"
        "gctool.attack(GradientCode(B, parse_field('real'), 0), 3, method='exhaustive')\n"
        "gctool.verify(gctool.design('encoded', frame='gaussian', workers=12, k=5, s=2, "
        "seed=1))\n"
        "print('KERNELS=' + ','.join(sorted(m for m in sys.modules "
        "if m.startswith('gctool.audit.kernels.'))), file=sys.stderr)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         cwd=ROOT, timeout=600, check=False)
    line = [x for x in out.stderr.splitlines() if x.startswith("KERNELS=")]
    assert line, out.stderr
    loaded = {m.rsplit(".", 1)[1] for m in line[-1][len("KERNELS="):].split(",")}
    assert {"optimal", "direct", "spectra"} <= loaded, loaded  # (they did run)
    assert "real" not in loaded, loaded


def test_completion_offers_schemes() -> None:
    env = {**os.environ, "_GCTOOL_COMPLETE": "bash_complete", "COMP_WORDS": "gctool design fr",
           "COMP_CWORD": "2"}
    out = subprocess.run([sys.executable, "-m", "gctool"], capture_output=True, text=True,
                         env=env, cwd=ROOT, timeout=120, check=False)
    assert "plain,frc" in out.stdout.splitlines()


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_scripts_are_fresh(shell: str) -> None:
    from gctool.cli.completion import SHELLS, generate

    committed = (ROOT / "completions" / SHELLS[shell]).read_text()
    assert committed == generate(shell), "run: python -m gctool.cli.completion"


def test_every_command_has_help_a_readme_line_and_a_page() -> None:
    """README: one line per command in its command list; the details on the command's page
    (docs/NAME.md, or docs/cli.md for schema, reference and completion)."""
    runner = CliRunner()
    commands = README.split("## Commands", 1)[1].split("\n## ", 1)[0]
    bullets = [line for line in commands.splitlines() if line.startswith("- ")]
    assert not [line for line in commands.splitlines() if line.startswith("  ")], \
        "a command's README line is wrapped"
    for name in COMMANDS:
        result = runner.invoke(cli, [name, "--help"])
        assert result.exit_code == 0 and "Examples:" in result.stdout
        assert len([b for b in bullets if f"`gctool {name}" in b]) == 1, \
            f"README's command list has not one line for {name}"
        page = ROOT / "docs" / f"{name}.md"
        text = page.read_text() if page.exists() else (ROOT / "docs" / "cli.md").read_text()
        assert f"gctool {name}" in text, f"no page documents {name}"


def test_every_scheme_is_in_readme_and_in_docs_design() -> None:
    from gctool.registry import SCHEMES

    design = (ROOT / "docs" / "design.md").read_text()
    for name in SCHEMES:
        assert f"`{name}`" in README, f"README does not mention scheme {name}"
        assert f"`{name}`" in design, f"docs/design.md does not describe scheme {name}"


def test_readme_is_short_and_says_how_long_the_tests_take() -> None:
    lines = README.splitlines()
    assert len(lines) <= 250, len(lines)
    assert max(len(line) for line in lines) <= 200
    assert re.search(r"takes about \d+[–-]\d+ minutes on 2 cores", README)


def test_readme_commands_are_the_ci_commands() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    test_line = next(line for line in ci.splitlines()
                     if "pytest" in line and not line.startswith("#"))
    assert test_line.strip() in README, "README's test command must be the one .ci/run runs"


def test_public_api_is_pinned() -> None:
    import gctool

    expected = {
        "AttackOptions", "AttackReport", "BoundReport", "CurveReport", "Field", "GradientCode",
        "ThresholdReport", "VerifyReport", "WorstReport", "__version__",
        "attack", "bound", "curve", "decode", "design", "export", "parse_field", "profile",
        "read_code", "show", "simulate", "threshold", "train", "verify", "verify_partial",
        "write_code", "VerifyRequest",
    }
    assert set(gctool.__all__) == expected
    for name in expected:
        assert getattr(gctool, name) is not None
    with pytest.raises(AttributeError):
        gctool.nonexistent  # noqa: B018


#: dispatch on a scheme's name: comparisons and lookups in a table keyed by names
SCHEME_DISPATCH = re.compile(
    r"\.scheme\s*(==|!=)"  # code.scheme == "frc"
    r"|\.scheme\s+(not\s+)?in\b"  # code.scheme in ("sr-sgc", "m-sgc")
    r"|\bscheme\s*(==|!=)\s*[\"']"  # scheme == "sr-sgc"
    r"|\}\.get\(\s*[\w.]*scheme\b"  # {"hetero": ...}.get(code.scheme)
    r"|(?<!SCHEMES)\.get\(\s*[\w.]*\.scheme\b")  # placements.get(code.scheme, ...)


@pytest.mark.parametrize("line", [
    'if code.scheme == "frc":', "ok = c.code.scheme != 'kron'", "if code.scheme in GROUP:",
    'x = code.scheme not in ("sr-sgc", "m-sgc")', 'fig = a if scheme == "sr-sgc" else b',
    'kind = {"hetero": "hetero"}.get(code.scheme, "code")',
    "return placements.get(code.scheme, exact)"])
def test_scheme_dispatch_pattern_catches(line: str) -> None:
    assert SCHEME_DISPATCH.search(line)
    assert not SCHEME_DISPATCH.search("family = SCHEMES.get(code.scheme)")  # the registry


def test_scheme_behaviour_comes_from_the_registry() -> None:
    """Only a scheme's own module names it: everything else asks the scheme's family
    (:class:`gctool.family.Family`) instead of comparing names."""
    from gctool.registry import SCHEMES

    own = {ROOT / (family.module.replace(".", "/") + ".py") for family in SCHEMES.values()}
    found = [f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
             for path in sorted((ROOT / "gctool").rglob("*.py")) if path not in own
             for number, line in enumerate(path.read_text().splitlines(), 1)
             if SCHEME_DISPATCH.search(line.split("#")[0])]
    assert not found, "dispatch on scheme names outside the scheme modules:\n" + "\n".join(found)


def test_library_never_imports_click() -> None:
    for path in (ROOT / "gctool").rglob("*.py"):
        if "cli" in path.relative_to(ROOT / "gctool").parts:
            continue
        text = path.read_text()
        assert "import click" not in text and "from click" not in text, path


@pytest.mark.parametrize("field", ["real", "complex", "GF(7)", "GF(2^4)"])
def test_written_files_match_the_shipped_schema(field: str) -> None:
    import jsonschema

    import gctool

    schema = json.loads((ROOT / "gctool" / "schema" / "code-v1.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    from gctool.io import code_to_doc

    doc = code_to_doc(gctool.design("cyclic", 5, 1, field=field, seed=1))
    jsonschema.validate(doc, schema)
    doc["field"] = "GF(six)"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, schema)


def test_lint_ruff() -> None:
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    assert ruff, "ruff is part of the test extra"
    out = subprocess.run([ruff, "check", "gctool", "tests", "benchmarks"], cwd=ROOT,
                         capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stdout + out.stderr


def test_types_mypy(mypy_result: tuple[int, str]) -> None:
    """``mypy gctool`` passes (run beside the other tests: tests/meta/conftest.py)."""
    rc, output = mypy_result
    assert rc == 0, output
