"""``gctool show`` and :mod:`gctool.viz`: every registered scheme renders; the SVG is valid XML
with the expected cells; the curve, the decoding vector, loads and replication agree with
brute force computed here."""

from __future__ import annotations

import json
import math
import re
import shlex
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import galois
import numpy as np
import pytest
from click.testing import CliRunner

from gctool.algebra.fields import parse_field
from gctool.audit.attack.curves import plan_sizes as plan
from gctool.cli.design import examples as scheme_examples
from gctool.cli.main import cli
from gctool.io import read_code, write_code
from gctool.model import GradientCode
from gctool.registry import SCHEMES
from gctool.viz import error_curve, heat_grid, parse_curve, picture, render_svg
from gctool.viz.grid import grid_shape

from helpers import run
from jsondoc import loads
from oracles import brute_worst, lstsq_error

SVG = "{http://www.w3.org/2000/svg}"


# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------
def _svg(data: bytes | str) -> ET.Element:
    return ET.fromstring(data.encode() if isinstance(data, str) else data)


def _rects(root: ET.Element, cls: str) -> list[ET.Element]:
    return [e for e in root.iter(SVG + "rect") if e.get("class") == cls]


def _support(B: np.ndarray, m: int) -> np.ndarray:
    """n x k holder mask by loops (independent of GradientCode.support)."""
    n, cols = B.shape
    k = cols // m
    return np.array([[any(B[i, u * k + j] != 0 for u in range(m)) for j in range(k)]
                     for i in range(n)])


def _design_file(path: Path, *args: str) -> Path:
    result = run("design", *args, "-o", str(path))
    assert result.exit_code == 0, result.stderr
    return path


# ---------------------------------------------------------------------------------------------
# every scheme of the registry, built from its own family's example
# ---------------------------------------------------------------------------------------------
def _stages(step: str) -> list[list[str]]:
    return [shlex.split(stage) for stage in step.split("|")]


def _strip_output(args: list[str]) -> list[str]:
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
        elif a in ("-o", "--output"):
            skip = True
        elif a != "--json" and not a.startswith("--output="):
            out.append(a)
    return out


def _fill_missing_inputs(args: list[str]) -> None:
    """Input files an example names but does not create (e.g. the factors of a product code)
    are filled with a small code file, the only kind of input a design reads from a .json/.npz
    path here."""
    for a in args:
        if a.endswith((".json", ".npz")) and not Path(a).exists():
            _design_file(Path(a), "frc", "-n", "2", "-s", "1")


def _run_example(example: str, scheme: str, runner: CliRunner) -> tuple[Path | None, str]:
    """Run an example (``&&`` chains and ``|`` pipes of gctool commands) up to the design of
    ``scheme``, writing that code to ``example-code.json``.  Return (path or None, log)."""
    target = Path("example-code.json")
    for step in example.split("&&"):
        stdin: str | None = None
        for args in _stages(step):
            if args[:1] != ["gctool"]:
                return None, f"not a gctool command: {args}"
            args = args[1:]
            is_target = args[:2] == ["design", scheme]
            if is_target:
                args = _strip_output(args) + ["-o", str(target)]
                _fill_missing_inputs(args[2:])
            result = runner.invoke(cli, args, input=stdin)
            if is_target:
                return (target if result.exit_code == 0 else None), result.stderr
            if result.exit_code not in (0, 1):
                return None, f"{args}: {result.stderr}"
            stdin = result.stdout
    return None, "no 'gctool design SCHEME' in the example"


def _example_code(scheme: str, runner: CliRunner) -> Path:
    info = SCHEMES[scheme]
    assert info.examples, f"scheme {scheme!r} has no examples in its family"
    logs = []
    for example in scheme_examples(info):
        path, log = _run_example(example, scheme, runner)
        if path is not None:
            return path
        logs.append(f"{example!r}: {log.strip()}")
    pytest.fail(f"no example of {scheme!r} builds a code: " + "; ".join(logs))


@pytest.mark.parametrize("scheme", sorted(SCHEMES))
def test_show_renders_every_scheme(scheme: str, tmp_path: Path, runner: CliRunner,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    path = _example_code(scheme, runner)
    code = read_code(path)
    text = run("show", str(path))
    assert text.exit_code == 0, text.stderr
    assert scheme in text.stdout and "\x1b[" not in text.stdout
    S = ",".join(str(i) for i in range(max(1, min(code.s, code.n - 1)))) if code.n > 1 else ""
    extra = ["--stragglers", S] if S else []
    result = run("show", str(path), "--svg", "pic.svg", "--json", "--max-sets", "300", *extra)
    assert result.exit_code == 0, result.stderr
    doc = loads(result.stdout)
    B = np.asarray(code.B)
    sup = _support(B, code.m)
    assert doc["scheme"] == scheme and doc["n"] == code.n and doc["k"] == code.k
    assert doc["loads"] == sup.sum(axis=1).tolist()
    assert doc["replication"] == sup.sum(axis=0).tolist()
    root = _svg((tmp_path / "pic.svg").read_bytes())
    rows, cols = grid_shape(code.n, B.shape[1], 100)
    assert len(_rects(root, "cell")) == rows * cols == doc["svg"]["cells"]
    if S:
        assert len(_rects(root, "dec")) == rows * code.m
        assert doc["decoding"]["stragglers"] == [int(i) for i in S.split(",")]
    curve = doc["curve"]
    assert sorted([p["s"] for p in curve["points"]] + curve["skipped"]) == list(range(code.n + 1))
    for p in curve["points"]:
        assert 0 <= p["error"] <= 1 + 1e-9


# ---------------------------------------------------------------------------------------------
# SVG
# ---------------------------------------------------------------------------------------------
def test_svg_is_valid_xml_with_one_cell_per_entry(gf7: GradientCode) -> None:
    root = _svg(render_svg(picture(gf7)))
    assert root.tag == SVG + "svg"
    cells = _rects(root, "cell")
    assert len(cells) == 36
    titled = {c.find(SVG + "title").text for c in cells  # type: ignore[union-attr]
              if c.find(SVG + "title") is not None}
    expected = {f"B[{i},{j}] = {gf7.B[i, j]}" for i in range(6) for j in range(6) if gf7.B[i, j]}
    assert titled == expected  # exactly the nonzero entries, with their exact values
    blank = [c for c in cells if c.find(SVG + "title") is None]
    assert len(blank) == 36 - 18 and all(c.get("fill") == "#ffffff" for c in blank)


def test_svg_cell_geometry_is_a_grid(crc3: GradientCode) -> None:
    cells = _rects(_svg(render_svg(picture(crc3))), "cell")
    xs = sorted({float(c.get("x", "nan")) for c in cells})
    ys = sorted({float(c.get("y", "nan")) for c in cells})
    assert len(xs) == 3 and len(ys) == 3
    w = float(cells[0].get("width", "nan"))
    assert np.allclose(np.diff(xs), w) and np.allclose(np.diff(ys), w)


def test_large_svg_is_drawn_in_blocks_with_exact_densities() -> None:
    n = 130
    B = np.zeros((n, n))
    for i in range(n):
        B[i, [i, (i + 1) % n, (i + 7) % n]] = 1.0
    code = GradientCode(B, parse_field("real"), 2, "custom")
    root = _svg(render_svg(picture(code)))
    assert len(_rects(root, "cell")) == 65 * 65
    g = heat_grid(code, 100)
    assert g.summarised and g.shape == (65, 65) and (g.row_step, g.col_step) == (2, 2)
    for r, c in [(0, 0), (10, 13), (64, 64), (64, 0)]:
        block = B[2 * r:2 * r + 2, 2 * c:2 * c + 2]
        assert g.values[r, c] == pytest.approx(np.count_nonzero(block) / block.size)


def test_svg_highlights_stragglers_and_the_decoding_vector(frc6: GradientCode) -> None:
    pic = picture(frc6, stragglers=[0, 3])
    root = _svg(render_svg(pic))
    marks = _rects(root, "straggler")
    assert len(marks) == 2
    ys = sorted(float(m.get("y", "nan")) for m in marks)
    cells = _rects(root, "cell")
    row_y = sorted({float(c.get("y", "nan")) for c in cells})
    assert ys == [row_y[0], row_y[3]]
    dec = _rects(root, "dec")
    assert len(dec) == 6
    titles = [d.find(SVG + "title").text for d in dec]  # type: ignore[union-attr]
    assert "straggler" in titles[0] and "straggler" in titles[3]
    assert pic.decoding is not None and pic.decoding.used == [1, 2, 4, 5]
    assert _rects(root, "used") == []  # every survivor is used: nothing to point out


def test_svg_outlines_the_used_workers_when_some_survivors_are_left_out() -> None:
    B = np.array([[1.0, 1.0], [1.0, 1.0], [0.0, 0.0]])  # worker 2 is idle: a_2 = 0
    pic = picture(GradientCode(B, parse_field("real"), 1, "custom"), stragglers=[0])
    assert pic.decoding is not None and pic.decoding.used == [1]
    assert len(_rects(_svg(render_svg(pic)), "used")) == 1


def test_svg_of_a_two_piece_code_has_piece_separators_and_two_decoders() -> None:
    B = np.array([[1, 1, 0, 0, 0, 1, 1, 0], [0, 1, 1, 0, 0, 0, 1, 1],
                  [0, 0, 1, 1, 1, 0, 0, 1], [1, 0, 0, 1, 1, 1, 0, 0]], float)
    code = GradientCode(B, parse_field("real"), 1, "custom", {"m": 2})
    root = _svg(render_svg(picture(code, stragglers=[2])))
    assert len(_rects(root, "cell")) == 32
    assert len(_rects(root, "dec")) == 8
    pieces = [e for e in root.iter(SVG + "line") if e.get("class") == "piece"]
    assert len(pieces) == 1


def test_svg_curve_has_one_dot_per_computed_point(crc3: GradientCode) -> None:
    curve = error_curve(crc3)
    root = _svg(render_svg(picture(crc3, curve=curve)))
    dots = [e for e in root.iter(SVG + "circle") if e.get("class") == "point"]
    assert len(dots) == len(curve.points) == 4


# ---------------------------------------------------------------------------------------------
# error curve vs brute force
# ---------------------------------------------------------------------------------------------
def _brute_worst(code: GradientCode, s: int) -> float:
    return brute_worst(code, s, lambda B, F: lstsq_error(B, F) / code.k)


@pytest.mark.parametrize("name", ["crc3", "gf7", "frc6"])
def test_error_curve_matches_brute_force(name: str, request: pytest.FixtureRequest) -> None:
    code: GradientCode = request.getfixturevalue(name)
    curve = error_curve(code)
    assert [p.s for p in curve.points] == list(range(code.n + 1)) and not curve.skipped
    for p in curve.points:
        assert p.error == pytest.approx(_brute_worst(code, p.s), abs=1e-9)
        assert curve.decodes[p.s] == (p.s <= code.s)  # these codes tolerate exactly their s
        assert p.exact


def test_curve_budget_takes_the_cheapest_points_and_lists_the_rest() -> None:
    chosen = plan(10, 10, max_sets=60)
    assert sum(math.comb(10, s) for s in chosen) <= 60
    assert chosen == [0, 1, 9, 10]  # 1 + 10 + 10 + 1 sets; s = 2 (45 sets) does not fit
    assert plan(6, 6, max_sets=10**6) == list(range(7))
    assert plan(1000, 1000, max_sets=10**6) == []  # only the trivial ends would fit
    code = GradientCode(np.kron(np.eye(5), np.ones((2, 2))), parse_field("real"), 1, "frc")
    curve = error_curve(code, max_sets=60)
    assert [p.s for p in curve.points] == chosen and curve.skipped == list(range(2, 9))
    assert 0 < curve.checked <= 22  # within the budget (symmetry may check fewer)


def test_a_curve_that_does_not_fit_names_the_caps_in_their_units(tmp_path: Path,
                                                                 runner: CliRunner) -> None:
    """The note of a curve left out states the work cap as the time it is (CURVE_MAX_WORK
    counts ns of one core), not as a count of flops."""
    from gctool.limits import CURVE_MAX_WORK

    path = tmp_path / "frc.json"
    write_code(GradientCode(np.kron(np.eye(100), np.ones((2, 2))), parse_field("real"), 1,
                            "frc"), path)
    assert plan(200, 200, max_sets=20_000) == []
    r = runner.invoke(cli, ["show", str(path), "--curve"])
    assert r.exit_code == 0 and "error curve not computed" in r.stdout
    assert f"about {CURVE_MAX_WORK / 1e9:g} s" in r.stdout and "flops" not in r.stdout


def _curve(errors: dict[int, float], decodes: dict[int, bool]) -> Any:
    """A curve of show with these errors by s (the raw errors the same, no witnesses)."""
    from gctool.reports import WorstPoint
    from gctool.viz.curve import Curve

    return Curve("test", "u", [WorstPoint(s, None, e, e, True, "exhaustive", None)
                               for s, e in errors.items()], decodes)


def test_the_json_of_a_curve_in_attack_and_in_show(crc3: GradientCode, tmp_path: Path) -> None:
    """One curve in the two documents (their keys pinned, in order): attack's points are the
    library's WorstPoint, show's are those points in its unit with whether their size decodes,
    and show draws attack's file as the curve it computes."""
    path, saved = tmp_path / "c.json", tmp_path / "curve.json"
    write_code(crc3, path)
    attack = run("attack", str(path), "--curve", "--json").stdout
    saved.write_text(attack)
    points = loads(attack)["curve"]
    assert [list(p) for p in points] == [["s", "stragglers", "error", "raw_error", "exact",
                                          "method", "upper_bound"]] * 4
    drawn = loads(run("show", str(path), "--curve", "--json").stdout)["curve"]
    read = loads(run("show", str(path), "--curve-file", str(saved), "--json").stdout)["curve"]
    for doc in (drawn, read):
        assert list(doc) == ["source", "unit", "points", "skipped", "max_sets", "checked"]
        assert [list(p) for p in doc["points"]] == [["s", "error", "raw_error", "stragglers",
                                                     "decodes", "exact"]] * 4
    assert [p["raw_error"] for p in drawn["points"]] == [p["raw_error"] for p in points]
    assert [p["error"] for p in drawn["points"]] == [p["raw_error"] / 3 for p in points]
    assert [p["decodes"] for p in drawn["points"]] == [True, True, False, False]
    assert read["points"] == drawn["points"] and read["source"] == f"file {saved}"
    assert (drawn["max_sets"], read["max_sets"], read["checked"]) == (20_000, None, 0)


def test_a_curve_with_only_trivial_points_is_left_out_of_the_svg(crc3: GradientCode) -> None:
    trivial = _curve({0: 0.0, 2: 1.0, 3: 1.0}, decodes={0: True, 2: False, 3: False})
    root = _svg(render_svg(picture(crc3, curve=trivial)))
    assert not list(root.iter(SVG + "circle"))
    assert any("error curve left out" in (e.text or "") for e in root.iter(SVG + "text"))


def test_terminal_sparkline_bins_long_curves() -> None:
    from gctool.cli.render.show import _sparkline

    sizes = [*range(12), 200]
    line = _sparkline(_curve({s: float(s >= 10) for s in sizes},
                             decodes={s: s < 10 for s in sizes}), 200)
    cells = line.split(" (each")[0]
    assert len(cells) == 51 and "each character: 4 values of s" in line
    assert cells[:3] == "__█" and cells[3:50].strip() == "" and cells[50] == "█"


# ---------------------------------------------------------------------------------------------
# curve files
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("doc", [
    [{"s": 0, "raw_error": 0.0}, {"s": 2, "raw_error": 1.5}],
    {"curve": [{"s": 0, "error": 0.0}, {"s": 2, "error": 0.5}], "normalize": "k", "n": 3},
    {"curve": {"points": [{"s": 2, "error": 0.5, "normalize": "fraction"}, {"s": 0, "error": 0}]}},
    {"points": [{"s": 0, "raw_error": 0, "decodes": True}, {"s": 2, "raw_error": 1.5}]},
])
def test_curve_file_layouts(doc: Any, crc3: GradientCode) -> None:
    curve = parse_curve(doc, crc3, "c.json")
    assert [(p.s, p.error) for p in curve.points] == [(0, 0.0), (2, 0.5)]
    assert [curve.decodes[p.s] for p in curve.points] == [True, False]
    assert curve.skipped == [1, 3] and curve.source == "file c.json"


@pytest.mark.parametrize("doc, message", [
    ({"curve": [{"s": 0, "error": 0}], "n": 4}, "n = 4"),
    ([{"s": 9, "error": 0}], "'s' must be an integer"),
    ([{"s": 1}], "neither"),
    ([{"s": 1, "error": -1}], ">= 0"),
    ([{"s": 1, "error": 0}, {"s": 1, "error": 0}], "same s"),
    ({"nothing": 1}, "no curve"),
    ([{"s": 1, "error": 1, "normalize": "log"}], "unknown normalize"),
])
def test_bad_curve_files_exit_2(doc: Any, message: str, tmp_path: Path, crc3: GradientCode) -> None:
    write_code(crc3, tmp_path / "c.json")
    (tmp_path / "curve.json").write_text(json.dumps(doc))
    result = run("show", str(tmp_path / "c.json"), "--curve-file", str(tmp_path / "curve.json"))
    assert result.exit_code == 2 and message in result.stderr and result.stdout == ""


def test_curve_file_is_drawn_instead_of_computed(tmp_path: Path, crc3: GradientCode) -> None:
    write_code(crc3, tmp_path / "c.json")
    points = [{"s": s, "raw_error": e, "stragglers": [0]} for s, e in [(0, 0), (1, 0), (3, 3)]]
    (tmp_path / "curve.json").write_text(json.dumps({"curve": points}))
    result = run("show", str(tmp_path / "c.json"), "--curve-file", str(tmp_path / "curve.json"),
                   "--svg", str(tmp_path / "p.svg"), "--json")
    assert result.exit_code == 0, result.stderr
    doc = loads(result.stdout)
    assert [p["s"] for p in doc["curve"]["points"]] == [0, 1, 3]
    assert doc["curve"]["skipped"] == [2] and doc["curve"]["source"].startswith("file ")
    dots = [e for e in _svg((tmp_path / "p.svg").read_bytes()).iter(SVG + "circle")]
    assert len(dots) == 3


# ---------------------------------------------------------------------------------------------
# decoding vectors
# ---------------------------------------------------------------------------------------------
def test_decoding_vector_over_the_reals_recovers_the_sum(frc6: GradientCode,
                                                         tmp_path: Path) -> None:
    write_code(frc6, tmp_path / "c.json")
    result = run("show", str(tmp_path / "c.json"), "--stragglers", "3,0", "--json")
    d = loads(result.stdout)["decoding"]
    assert d["stragglers"] == [0, 3] and d["decodes"] is True
    a = np.array(d["a"][0])
    assert a[0] == 0 and a[3] == 0
    assert np.allclose(a @ frc6.B, np.ones(6))


def test_decoding_vector_over_gf7_is_exact(gf7: GradientCode) -> None:
    d = picture(gf7, stragglers=[1, 4]).decoding
    assert d is not None and d.ok and d.exact
    GF = galois.GF(7)
    assert (GF(d.A[0]) @ GF(np.asarray(gf7.B)) == GF(np.ones(6, dtype=int))).all()
    assert d.A[0, 1] == 0 and d.A[0, 4] == 0


def test_undecodable_stragglers_are_shown_not_audited(frc6: GradientCode, tmp_path: Path) -> None:
    write_code(frc6, tmp_path / "c.json")
    result = run("show", str(tmp_path / "c.json"), "--stragglers", "0,1,2")
    assert result.exit_code == 0 and "does not decode" in result.stdout
    doc = loads(run("show", str(tmp_path / "c.json"), "--stragglers", "0,1,2",
                           "--json").stdout)
    assert doc["decoding"]["decodes"] is False
    assert doc["decoding"]["error"] == pytest.approx(lstsq_error(np.asarray(frc6.B), (3, 4, 5)))


@pytest.mark.parametrize("value, message", [
    ("0,6", "not a worker"), ("a,b", "worker indices"), ("1,1", "repeats"), ("-1", "not a worker"),
])
def test_bad_stragglers_exit_2(value: str, message: str, tmp_path: Path,
                               frc6: GradientCode) -> None:
    write_code(frc6, tmp_path / "c.json")
    result = run("show", str(tmp_path / "c.json"), "--stragglers", value)
    assert result.exit_code == 2 and message in result.stderr


# ---------------------------------------------------------------------------------------------
# terminal view and JSON summary
# ---------------------------------------------------------------------------------------------
def test_terminal_view_of_60_workers_has_one_row_per_worker(tmp_path: Path) -> None:
    path = _design_file(tmp_path / "c.json", "frc", "-n", "60", "-s", "2")
    out = run("show", str(path)).stdout.splitlines()
    rows = [line for line in out if line[:4].strip().isdigit()]
    assert len(rows) == 60 and "summarised" not in "\n".join(out)
    assert all(len(line) <= 100 for line in out[2:])  # fits a 100-column terminal
    first = rows[0].split()
    assert first[0] == "0" and first[-1] == "3"  # worker 0, load 3
    assert rows[0].count("█") == 3 and rows[0].count("·") == 57


def test_terminal_view_summarises_beyond_max_cells(tmp_path: Path) -> None:
    path = _design_file(tmp_path / "c.json", "frc", "-n", "61", "-s", "0")
    result = run("show", str(path))
    assert "summarised: 61 x 61 entries in 31 x 31 blocks of up to 2 x 2" in result.stdout
    doc = loads(run("show", str(path), "--json").stdout)
    assert doc["view"] == {"summarised": True, "rows": 31, "cols": 31, "block_rows": 2,
                           "block_cols": 2, "cell": "density", "scale": "linear"}


def test_terminal_view_shows_gf_elements(gf7: GradientCode, tmp_path: Path) -> None:
    write_code(gf7, tmp_path / "c.json")
    out = run("show", str(tmp_path / "c.json"), "--stragglers", "0").stdout.splitlines()
    row = next(line for line in out if line.strip().startswith("1 ") and "·" in line)
    assert row.split()[1:5] == ["·", "6", "2", "1"]
    assert any(line.split()[:2] == ["✗", "0"] for line in out)


def test_json_summary(gf7: GradientCode, tmp_path: Path) -> None:
    write_code(gf7, tmp_path / "c.json")
    doc = loads(run("show", str(tmp_path / "c.json"), "--json").stdout)
    assert doc["format"] == "gctool.show" and doc["field"] == "GF(7)" and doc["s"] == 2
    assert doc["nnz"] == 18 and doc["density"] == 0.5 and doc["ok"] is True
    assert doc["values"] == {"shown": "element", "distinct_nonzero": 3, "elements": [1, 2, 6],
                             "order": 7}
    assert doc["curve"] is None and doc["decoding"] is None and doc["svg"] is None
    with_curve = loads(run("show", str(tmp_path / "c.json"), "--json", "--curve").stdout)
    assert [p["error"] for p in with_curve["curve"]["points"]] == [0, 0, 0, 1, 1, 1, 1]


def test_magnitude_scale_turns_logarithmic_for_wide_ranges() -> None:
    V = np.vander(np.arange(1, 7, dtype=float), 6)
    g = heat_grid(GradientCode(V, parse_field("real"), 2, "custom"))
    assert g.kind == "magnitude" and g.scale.kind == "log"
    assert g.scale.level(float(V.max())) == pytest.approx(1.0)
    assert g.scale.level(1.0) == pytest.approx(0.0)
    lin = heat_grid(GradientCode(np.array([[1.0, -2.0], [0.5, 0.0]]), parse_field("real"), 0))
    assert lin.scale.kind == "linear" and lin.values[0, 1] == 2.0 and lin.colors[1][1] is None


def test_complex_code_shows_magnitudes(tmp_path: Path) -> None:
    B = np.array([[1 + 1j, 0, 2], [0, 3j, 1], [1, 1, -1j]])
    write_code(GradientCode(B, parse_field("complex"), 0, "custom"), tmp_path / "c.json")
    result = run("show", str(tmp_path / "c.json"), "--stragglers", "", "--svg",
                   str(tmp_path / "c.svg"), "--json", "--no-curve")
    doc = loads(result.stdout)
    assert doc["values"]["max_abs"] == 3.0 and doc["values"]["complex_entries"] == 3
    assert doc["decoding"]["stragglers"] == [] and doc["curve"] is None
    assert len(_rects(_svg((tmp_path / "c.svg").read_bytes()), "cell")) == 9


# ---------------------------------------------------------------------------------------------
# files and usage
# ---------------------------------------------------------------------------------------------
def test_svg_to_stdout_prints_only_the_svg(frc6: GradientCode, tmp_path: Path) -> None:
    write_code(frc6, tmp_path / "c.json")
    result = run("show", str(tmp_path / "c.json"), "--svg", "-", "--no-curve")
    assert result.exit_code == 0
    assert len(_rects(_svg(result.stdout), "cell")) == 36


def test_svg_read_from_stdin_code(frc6: GradientCode, tmp_path: Path) -> None:
    write_code(frc6, tmp_path / "c.json")
    result = run("show", "-", "--svg", str(tmp_path / "p.svg"),
                   input=(tmp_path / "c.json").read_text())
    assert result.exit_code == 0 and (tmp_path / "p.svg").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize("args, message", [
    (["--svg", "-", "--json"], "choose one"),
    (["--curve-file", "x.json", "--no-curve"], "exclude"),
    (["--svg", "no/such/dir/p.svg"], "does not exist"),
    (["--max-cells", "2"], "--max-cells"),
    # the budget of a curve that is not computed (it was ignored)
    (["--max-sets", "10"], "--max-sets applies to the error curve show computes"),
    (["--svg", "p.svg", "--no-curve", "--max-sets", "10"], "--max-sets applies to"),
    (["--curve-file", "x.json", "--max-sets", "10"], "--max-sets applies to"),
])
def test_usage_errors_exit_2(args: list[str], message: str, frc6: GradientCode, tmp_path: Path,
                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    write_code(frc6, tmp_path / "c.json")
    result = run("show", "c.json", *args)
    assert result.exit_code == 2 and message in result.stderr and result.stdout == ""
    assert not (tmp_path / "no").exists()


#: what a refusal of show's curve suggests: show's own options, never attack's, and --no-curve
#: without the curve's options typed (which show would refuse with --no-curve)
WITHOUT_CURVE = "show it without the curve (--no-curve) or a shorter one (a lower --max-sets)"
TYPED_WITHOUT_CURVE = ("show it without the curve (--no-curve, without --max-work) or a shorter "
                       "one (a lower --max-sets)")


def _refusal(result: Any) -> str:
    """The one stderr line of an exit-2 refusal with nothing on stdout."""
    assert result.exit_code == 2 and result.stdout == "", (result.exit_code, result.stderr)
    lines = result.stderr.rstrip("\n").split("\n")
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert "attack" not in lines[0] and "--method" not in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def cyclic14(tmp_path: Path) -> str:
    import gctool

    path = tmp_path / "c14.json"
    write_code(gctool.design("cyclic", n=14, s=3, seed=1), path)
    return str(path)


def test_curve_refused_above_the_work_budget_names_shows_options(
        cyclic14: str, runner: CliRunner) -> None:
    line = _refusal(run("show", cyclic14, "--curve", "--max-work", "100us"))
    # the estimate's figure follows the calibration: any time above the budget it names
    m = re.match(r"gctool: error: the error curve \(n=14, k\*m=14\): its 14 single "
                 r"stragglers needs about (\d+) us \(estimated, one core\)", line)
    assert m is not None and int(m.group(1)) > 100, line
    assert "above the work budget of 100 us (--max-work, GCTOOL_MAX_WORK)" in line
    assert line.endswith(f"; {TYPED_WITHOUT_CURVE}, or raise --max-work"), line
    # following the suggestion draws the picture without the curve; --max-work, which only
    # the curve uses, is refused rather than ignored when it is kept
    assert run("show", cyclic14, "--no-curve").exit_code == 0
    assert "--max-work applies to the error curve" in _refusal(
        run("show", cyclic14, "--no-curve", "--max-work", "100us"))
    # the budget from the environment: nothing typed to drop
    line = _refusal(runner.invoke(cli, ["show", cyclic14, "--curve"],
                                  env={"GCTOOL_MAX_WORK": "100us"}))
    assert line.endswith(f"; {WITHOUT_CURVE}, or raise --max-work"), line


def test_curve_refused_above_the_memory_budget_names_shows_options(
        cyclic14: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GCTOOL_MAX_MEMORY", "1000")
    line = _refusal(run("show", cyclic14, "--curve"))
    assert line.startswith("gctool: error: the optimal decoder's set-up (n=14, k*m=14, real: "
                           "SVDs of B) needs about"), line
    assert line.endswith(f"(GCTOOL_MAX_MEMORY); {WITHOUT_CURVE}"), line


def test_curve_search_over_the_work_budget_names_shows_options(
        cyclic14: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A search that spends the budget while it runs (its estimate let it start)."""
    from gctool.audit import exhaustive

    monkeypatch.setattr(exhaustive, "check_sets", lambda *args, **kw: None)
    monkeypatch.setattr("gctool.budget.Budget.check_work", lambda *args, **kw: None)
    line = _refusal(run("show", cyclic14, "--curve", "--max-work", "100us"))
    assert line.startswith("gctool: error: the search on this code (n=14, k*m=14, real) "
                           ) and "(estimated, one core; " in line, line
    assert line.endswith(f"; {TYPED_WITHOUT_CURVE}, or raise --max-work"), line


def test_attack_refusals_keep_naming_attacks_options(cyclic14: str, runner: CliRunner) -> None:
    r = runner.invoke(cli, ["attack", cyclic14, "--curve", "--max-work", "100us"])
    assert r.exit_code == 2
    assert r.stderr.startswith("gctool: error: the error curve (n=14, k*m=14): ")
    assert r.stderr.rstrip().endswith("use a smaller code or a finite-field version of it, "
                                      "or raise --max-work")
    assert "--no-curve" not in r.stderr


def test_help_has_examples(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["show", "--help"])
    assert result.exit_code == 0 and "Examples:" in result.stdout
    assert "--stragglers" in result.stdout


def test_show_help_imports_no_heavy_modules() -> None:
    import subprocess
    import sys

    probe = ("import sys\nfrom gctool.cli.main import main\nmain(['show', '--help'])\n"
             "print('HEAVY=' + ','.join(m for m in ('numpy', 'rich', 'galois', 'gctool.viz') "
             "if m in sys.modules), file=sys.stderr)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         timeout=120, check=False)
    assert "HEAVY=\n" in out.stderr or out.stderr.rstrip().endswith("HEAVY="), out.stderr


def test_docs_example_svg_is_fresh() -> None:
    """docs/show-example.svg is what show draws today (regenerate it as docs/show.md
    says).  Compared cell by cell rather than byte by byte, so that round-off in the printed
    residual does not matter."""
    import gctool

    committed = _svg((Path(__file__).parents[2] / "docs" / "show-example.svg").read_bytes())
    code = gctool.design("cyclic", n=8, s=2, seed=1)
    fresh = _svg(render_svg(picture(code, stragglers=[0, 3], curve=error_curve(code))))

    def summary(root: ET.Element) -> list[Any]:
        rects = [(r.get("class"), r.get("fill"), r.findtext(SVG + "title"))
                 for r in root.iter(SVG + "rect") if r.get("class") in ("cell", "dec", "straggler")]
        dots = [c.findtext(SVG + "title") for c in root.iter(SVG + "circle")]
        return [rects, [d.split(":")[0] for d in dots if d]]

    assert summary(committed) == summary(fresh)
    assert len(_rects(committed, "cell")) == 64 and len(_rects(committed, "straggler")) == 2
