"""The scheme registry: one family per entry point, loaded only when its scheme is used."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from gctool.errors import InvalidInput
from gctool.family import MATRIX, Family, family_of
from gctool.registry import GROUP, SCHEMES, get_scheme

from corpus import SMALL, code_file

ROOT = Path(__file__).parents[2]
#: the modules that define the registered schemes
SCHEME_MODULES = {point.value.partition(":")[0] for point in entry_points(group=GROUP)}


def _loaded_after(script: str, *args: str) -> set[str]:
    """The gctool modules imported by ``script`` in a fresh interpreter."""
    run = subprocess.run([sys.executable, "-c", script + "\nimport sys\n"
                          "print(' '.join(m for m in sys.modules if m.startswith('gctool')))",
                          *args], capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 0, run.stderr
    return set(run.stdout.split())


def test_the_installed_entry_points_are_pyproject_s() -> None:
    """The registry reads the installed metadata: it must be the table in pyproject.toml (after
    editing the table, reinstall: pip install -e .)."""
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "entry-points"][GROUP]
    installed = {point.name: point.value for point in entry_points(group=GROUP)}
    assert installed == declared


def test_every_entry_point_names_its_family() -> None:
    for name, family in SCHEMES.items():
        assert isinstance(family, Family) and family.name == name
        assert family.module in SCHEME_MODULES and family.summary and family.reference
        assert SCHEMES[name] is family  # loaded once


def test_unknown_schemes() -> None:
    assert "nosuch" not in SCHEMES and SCHEMES.get("nosuch") is None
    with pytest.raises(InvalidInput, match="unknown scheme 'nosuch'; available: bcc, "):
        get_scheme("nosuch")
    from gctool.codes import design

    code = design("frc", n=4, s=1)
    assert family_of(code) is SCHEMES["frc"]
    from dataclasses import replace

    assert family_of(replace(code, scheme="someone-elses")) is MATRIX  # the matrix audits


def test_listing_the_schemes_imports_none() -> None:
    loaded = _loaded_after("from gctool.registry import SCHEMES\n"
                           "assert 'frc' in SCHEMES and len(list(SCHEMES)) == len(SCHEMES) > 10")
    assert not loaded & SCHEME_MODULES
    assert "gctool.family" not in loaded


@pytest.fixture(scope="module")
def loaded_on_reading(tmp_path_factory: pytest.TempPathFactory) -> dict[str, set[str]]:
    """Per scheme, the gctool modules a fresh interpreter imports to read a file of it (the
    interpreters run four at a time: each one only starts up and reads a small file)."""
    from concurrent.futures import ThreadPoolExecutor

    paths = {scheme: code_file(tmp_path_factory.mktemp(scheme), scheme) for scheme in SMALL}
    with ThreadPoolExecutor(4) as pool:
        loaded = pool.map(lambda path: _loaded_after(
            "import sys, gctool.io\ngctool.io.read_code(sys.argv[1])", str(path)),
            paths.values())
        return dict(zip(paths, loaded, strict=True))


@pytest.mark.parametrize("scheme", sorted(SMALL))
def test_reading_a_file_imports_its_own_family_only(loaded_on_reading: dict[str, set[str]],
                                                     scheme: str) -> None:
    assert loaded_on_reading[scheme] & SCHEME_MODULES == {SCHEMES[scheme].module}
