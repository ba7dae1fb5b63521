"""``gctool design --max-work``: every design's build is estimated before it starts (a fixed
cost per draw and a cost per entry of B, :func:`gctool.budget.build_cost`, plus what each scheme
estimates of its own algorithm), so a budget below the estimate refuses any design in one line
naming --max-work, exit 2, and writes no file (docs/design.md)."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from gctool.budget import DESIGN_NS, ENTRY_NS, format_seconds, write_cost
from gctool.cli.design import examples
from gctool.cli.exit_codes import ExitCode
from gctool.registry import SCHEMES

from helpers import run


def _refused(result: object) -> str:
    """The one stderr line of a refusal above the work budget (exit 2, nothing on stdout)."""
    assert result.exit_code == ExitCode.USAGE, (result.stdout, result.stderr)  # type: ignore[attr-defined]
    lines = result.stderr.strip().splitlines()  # type: ignore[attr-defined]
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr  # type: ignore[attr-defined]
    assert result.stdout == ""  # type: ignore[attr-defined]
    assert "above the work budget" in lines[0] and lines[0].endswith("raise --max-work")
    return lines[0]


@pytest.mark.parametrize("scheme", list(SCHEMES))
def test_every_scheme_refuses_a_design_above_the_budget(scheme: str, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The scheme's first help example with --max-work 1us: refused before anything is built
    (its factor files, for kron, are designed first with the default budget)."""
    monkeypatch.chdir(tmp_path)
    line = next(e for e in examples(SCHEMES[scheme]) if f"design {scheme}" in e)
    *before, last = [shlex.split(part) for part in line.split("#")[0].split("&&")]
    for words in before:
        assert run(*words[1:]).exit_code == 0
    out = tmp_path / "out.json"
    words = [w for i, w in enumerate(last[1:]) if w != "-o" and last[i] != "-o"]
    _refused(run(*words, "-o", str(out), "--max-work", "1us"))
    assert not out.exists()


def test_the_build_is_estimated_by_its_entries() -> None:
    """A build costs DESIGN_NS and ENTRY_NS per entry of B (n x k), times the draws of
    --best-of, and the file (JSON on stdout here) at least its write_cost, named in the
    refusal with what would fit."""
    line = _refused(run("design", "frc", "-n", "6", "-s", "2", "--max-work", "1us"))
    json = write_cost("real", False, 6, 6)
    assert line.startswith(f"gctool: error: design frc: building B (6 x 6) and writing it "
                           f"(JSON) needs about "
                           f"{format_seconds((DESIGN_NS + ENTRY_NS * 36 + json) / 1e9)} "
                           "(estimated, one core)"), line
    assert "use a smaller n or k, or raise --max-work" in line
    big = _refused(run("design", "bgc", "-n", "4096", "-d", "3", "--seed", "1",
                       "--max-work", "100ms"))
    json = write_cost("real", False, 4096, 4096)
    assert f"building B (4,096 x 4,096) and writing it (JSON) needs about " \
           f"{format_seconds((DESIGN_NS + ENTRY_NS * 4096**2 + json) / 1e9)}" in big
    drawn = _refused(run("design", "cyclic", "-n", "8", "-s", "2", "--best-of", "5",
                         "--max-work", "1ms"))
    json = write_cost("real", False, 8, 8)
    assert "building B (8 x 8) for 5 draws and writing it (JSON) needs about " \
           f"{format_seconds((5 * (DESIGN_NS + ENTRY_NS * 64) + json) / 1e9)}" in drawn
    assert "use a smaller n or k or fewer --best-of draws, or raise --max-work" in drawn


def test_builds_whose_shape_follows_from_their_parameters_estimate_it() -> None:
    """bibd, graph, expander and kron know B's shape only in their build: each checks its
    entries (and its own work: a BIBD's incidence, a graph's eigenvalues) before making B."""
    bibd = _refused(run("design", "bibd", "--design", "paley-1019", "--max-work", "10ms"))
    assert "bibd paley-1019 (v=1,019): the check of its difference set and its 1,019 x " \
           "1,019 incidence matrix needs" in bibd
    graph = _refused(run("design", "graph", "--graph", "cycle", "--vertices", "2000",
                         "--max-work", "0.3s"))
    assert "the eigenvalues of the 2000 x 2000 adjacency matrix and the 2000 x 2000 " \
           "matrix B needs" in graph


def test_kron_estimates_its_product(tmp_path: Path) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    assert run("design", "uncoded", "-n", "60", "--field", "GF(2)", "-o", str(a)).exit_code == 0
    assert run("design", "uncoded", "-n", "60", "--field", "GF(2)", "-o", str(b)).exit_code == 0
    out = tmp_path / "ab.json"
    line = _refused(run("design", "kron", str(a), str(b), "-o", str(out), "--max-work", "20ms"))
    assert "kron: the 3,600 x 3,600 product of the factors needs about" in line
    assert not out.exists()


def test_a_graph_too_large_is_refused_before_its_matrix_is_built() -> None:
    """A Paley graph on 1009 vertices has 254,268 edges: B would be far above the size limits
    (it was allocated, 2 GB, before the code's own check refused it)."""
    r = run("design", "graph", "--graph", "paley", "--vertices", "1009")
    assert r.exit_code == ExitCode.USAGE and len(r.stderr.strip().splitlines()) == 1
    assert "254,268 x 1,009, above gctool's limits" in r.stderr
