"""Traces gctool has not seen: plausible variants of the trace format either give the same
durations as the canonical file or are refused with one clear line (exit 2, no traceback,
nothing on stdout); delay models whose draws overflow are refused; pictures of degenerate runs
are drawn."""

from __future__ import annotations

import csv
import gzip
import io
import json
import xml.dom.minidom
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest

from gctool.codes import design
from gctool.errors import InvalidInput
from gctool.io import write_code
from gctool.sim.delays import parse_delay
from gctool.sim.run import simulate
from gctool.sim.traces import HEADER, read_trace_csv

from helpers import run

R, N = 6, 10
Row = tuple[int, int, float, float]


def _rows(absolute: bool = True, seed: int = 0) -> list[Row]:
    rng = np.random.default_rng(seed)
    out = []
    for r in range(R):
        for w in range(N):
            start = (600_000.0 + 40 * r if absolute else 0.0) + float(rng.random()) * 0.3
            dur = 1.5 + float(rng.exponential(0.5)) + (20.0 if rng.random() < 0.05 else 0.0)
            out.append((r, w, start, start + dur))
    return out


def _text(header: list[str], rows: Sequence[Sequence[object]]) -> str:
    buf = io.StringIO()
    wr = csv.writer(buf, lineterminator="\n")
    wr.writerow(header)
    wr.writerows(rows)
    return buf.getvalue()


ROWS = _rows()
CANON = _text(list(HEADER), ROWS)
EXPECTED = np.array([f - s for _, _, s, f in ROWS]).reshape(R, N)


def _relative() -> str:  # the same durations, times from the start of each round
    return _text(list(HEADER), [(r, w, 0.25, 0.25 + (f - s)) for r, w, s, f in ROWS])


READ_ALIKE: dict[str, Callable[[], str | bytes]] = {
    "reordered columns": lambda: _text(["worker", "finished_s", "round", "started_s"],
                                       [(w, f, r, s) for r, w, s, f in ROWS]),
    "extra columns": lambda: _text(["region", "round", "worker", "mem_mb", "started_s",
                                    "finished_s", "note"],
                                   [("eu-west-2", r, w, 1024, s, f, "") for r, w, s, f in ROWS]),
    "header case and spaces": lambda: CANON.replace(
        ",".join(HEADER), " Round , WORKER,Started_s ,finished_S"),
    "byte-order mark": lambda: CANON.encode("utf-8-sig"),
    "CRLF line ends": lambda: CANON.replace("\n", "\r\n"),
    "quoted cells": lambda: "\n".join(",".join(f'"{c}"' for c in line.split(","))
                                      for line in CANON.splitlines()) + "\n",
    "spaces after commas": lambda: CANON.replace(",", ", "),
    "trailing comma": lambda: "\n".join(line + "," for line in CANON.splitlines()) + "\n",
    "trailing blank lines": lambda: CANON + "\n\n",
    "relative timestamps": _relative,
    "one-based rounds and workers": lambda: _text(list(HEADER), [
        (r + 1, w + 1, s, f) for r, w, s, f in ROWS]),
    "worker labels and shuffled rows": lambda: _text(list(HEADER), [
        (r, 7000 + 3 * w, s, f) for r, w, s, f in reversed(ROWS)]),
}


@pytest.mark.parametrize("variant", list(READ_ALIKE))
def test_format_variants_read_like_the_canonical_file(tmp_path: Path, variant: str) -> None:
    path = tmp_path / "t.csv"
    data = READ_ALIKE[variant]()
    path.write_bytes(data if isinstance(data, bytes) else data.encode())
    assert np.allclose(read_trace_csv(path), EXPECTED, rtol=0, atol=1e-9)


def _replace(cell: tuple[int, int], column: int, value: str) -> str:
    rows = [tuple(value if (r, w) == cell and i == column else x
                  for i, x in enumerate((r, w, s, f))) for r, w, s, f in ROWS]
    return _text(list(HEADER), rows)


REFUSED: dict[str, tuple[Callable[[], str | bytes], str]] = {
    "missing column": (lambda: _text(["round", "worker", "finished_s"],
                                     [(r, w, f) for r, w, _, f in ROWS]),
                       "expected a header with the columns round,worker,started_s,finished_s"),
    "no header": (lambda: CANON.split("\n", 1)[1], "expected a header"),
    "semicolons": (lambda: CANON.replace(",", ";"), "separated by commas"),
    "tabs": (lambda: CANON.replace(",", "\t"), "separated by commas"),
    "column twice": (lambda: _text([*HEADER, "Worker"], [(r, w, s, f, w + 1)
                                                         for r, w, s, f in ROWS]),
                     "the column 'worker' twice"),
    "blank cell": (lambda: _replace((2, 3), 3, ""), "line 25: finished_s is '', not a number"),
    "text cell": (lambda: _replace((0, 1), 1, "w1"), "line 3: worker is 'w1', not a number"),
    "short row": (lambda: "\n".join(line if not line.startswith("2,3,") else "2,3"
                                    for line in CANON.splitlines()) + "\n",
                  "line 25 has 2 cells, the header needs 4"),
    "NaN": (lambda: _replace((2, 3), 3, "NaN"), r"must be finite numbers \(round 2, worker 3\)"),
    "infinity": (lambda: _replace((1, 0), 2, "-inf"), "must be finite (?:numbers )?"),
    "negative time": (lambda: _replace((4, 4), 3, "0"), "finished_s is before started_s "
                                                        r"\(round 4, worker 4\)"),
    "nanoseconds": (lambda: _text(list(HEADER), [(r, w, 0, (f - s) * 1e9)
                                                 for r, w, s, f in ROWS]),
                    r"above 1e\+09 s \(are the times in seconds\?\)"),
    "fractional round": (lambda: _replace((3, 0), 0, "2.5"), "whole number"),
    "huge worker id": (lambda: _replace((0, 0), 1, "1e30"), "whole number up to 2"),
    "missing row": (lambda: _text(list(HEADER), ROWS[:-1]),
                    "round 5 has no row for worker 9"),
    "missing round": (lambda: _text(list(HEADER), [x for x in ROWS if x[0] != 2]),
                      "no row has round 2"),
    "duplicate row": (lambda: _text(list(HEADER), [*ROWS[:-1], ROWS[3]]),
                      "round 0, worker 3 appears in more than one row"),
    "header only": (lambda: ",".join(HEADER) + "\n", "no data rows"),
    "empty file": (lambda: "", "empty input"),
    "binary": (lambda: bytes(range(256)) * 4, "not a UTF-8 CSV text file"),
    "gzip": (lambda: gzip.compress(CANON.encode()), "not a UTF-8 CSV text file"),
}


@pytest.mark.parametrize("variant", list(REFUSED))
def test_broken_variants_are_refused_in_one_line(tmp_path: Path, variant: str) -> None:
    make, match = REFUSED[variant]
    path = tmp_path / "t.csv"
    data = make()
    path.write_bytes(data if isinstance(data, bytes) else data.encode())
    with pytest.raises(InvalidInput, match=match):
        read_trace_csv(path)
    code = tmp_path / "frc.json"
    write_code(design("frc", n=6, s=1), code)
    for extra in ([], ["--json"], ["--plot", str(tmp_path / "p.svg"), "--train"]):
        res = run("simulate", str(code), "--delay", f"trace:{path}", "--iterations", "30", "--seed",
                  "1", *extra)
        assert res.exit_code == 2, res.output
        lines = res.stderr.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in res.stderr
        assert res.stdout == "" and not (tmp_path / "p.svg").exists()


def _cli_json(args: list[str]) -> dict[str, object]:
    res = run(*args)
    assert res.exit_code == 0, res.stderr
    out: dict[str, object] = json.loads(res.stdout)
    return out


def test_worker_counts_other_than_the_codes(tmp_path: Path) -> None:
    trace = tmp_path / "t.csv"
    trace.write_text(CANON)
    small, big = tmp_path / "frc6.json", tmp_path / "frc12.json"
    write_code(design("frc", n=6, s=1), small)
    write_code(design("frc", n=12, s=2), big)
    # fewer code workers than trace workers: an injective map per block of the trace's rounds
    rep = _cli_json(["simulate", str(small), "--delay", f"trace:{trace}", "--iterations", "60",
                     "--seed", "3", "--json"])
    rows = rep["rows"]
    assert isinstance(rows, list)
    assert all(EXPECTED.min() <= r["mean"]["value"] <= EXPECTED.max() for r in rows)
    # more code workers than trace workers: one clear line
    res = run("simulate", str(big), "--delay", f"trace:{trace}", "--iterations", "60")
    assert res.exit_code == 2 and res.stdout == ""
    assert res.stderr.strip() == "gctool: error: the trace has 10 workers, a scheme needs 12"


def test_one_round_trace_and_load_levels_in_other_formats(tmp_path: Path) -> None:
    one = tmp_path / "one.csv"
    one.write_text(_text(list(HEADER), ROWS[:N]))
    assert read_trace_csv(one).shape == (1, N)
    # a prefix whose load-level files use different column orders and timestamp conventions
    (tmp_path / "x-load0.000.csv").write_text(_relative())
    (tmp_path / "x-load1.000.csv").write_text(_text(
        ["worker", "round", "finished_s", "started_s"],
        [(w, r, f + 1.0, s) for r, w, s, f in ROWS]))  # one second slower everywhere
    delay = parse_delay(f"trace:{tmp_path / 'x'}")
    tr = delay.trace  # type: ignore[attr-defined]
    assert tr.levels == (0.0, 1.0)
    assert np.allclose(tr.durations[0], EXPECTED) and np.allclose(tr.durations[1], EXPECTED + 1)
    draws = delay.draws(12, 4, np.random.default_rng(0))
    cells = EXPECTED[draws.round[:, None], draws.cols]  # type: ignore[attr-defined]
    assert np.allclose(delay.times(draws, np.full(4, 0.25)), cells + 0.25)
    # the authors' linear model fits base_comp = 1 s per unit load here, and agrees
    linear = parse_delay(f"trace:{tmp_path / 'x'}", "linear")
    assert linear.load_model.base_comp == pytest.approx(1.0)  # type: ignore[attr-defined]
    assert np.allclose(linear.times(draws, np.full(4, 0.25)), cells + 0.25)
    (tmp_path / "y-load0.000.csv").write_text(CANON)
    (tmp_path / "y-load1.000.csv").write_text(_text(list(HEADER), [x for x in ROWS if x[1] < 8]))
    with pytest.raises(InvalidInput, match="different numbers of rounds/workers"):
        parse_delay(f"trace:{tmp_path / 'y'}")
    (tmp_path / "z-load0.5.csv").write_text(CANON)  # the same level written twice
    (tmp_path / "z-load0.500.csv").write_text(_relative())
    with pytest.raises(InvalidInput, match="two files have the load level 0.5"):
        parse_delay(f"trace:{tmp_path / 'z'}")
    (tmp_path / "p-load0.000.csv").write_text(CANON)  # percent instead of a fraction
    (tmp_path / "p-load50.csv").write_text(CANON)
    with pytest.raises(InvalidInput, match=r"fractions of a job in \[0, 1\].*got 50"):
        parse_delay(f"trace:{tmp_path / 'p'}")


def test_a_large_trace_is_read(tmp_path: Path) -> None:
    rounds, workers = 400, 300
    rng = np.random.default_rng(1)
    start = 1.7e9 + rng.random(rounds * workers)  # epoch seconds: absolute clock readings
    dur = 1 + rng.exponential(size=rounds * workers)
    ids = np.stack([np.repeat(np.arange(rounds), workers), np.tile(np.arange(workers), rounds)])
    path = tmp_path / "big.csv"
    with path.open("w") as fh:
        fh.write("round,worker,started_s,finished_s\n")
        np.savetxt(fh, np.column_stack([ids.T, start, start + dur]),
                   fmt=["%d", "%d", "%.6f", "%.6f"], delimiter=",")
    got = read_trace_csv(path)
    assert got.shape == (rounds, workers)
    assert np.allclose(got.reshape(-1), dur, atol=2e-6)  # microsecond resolution of the file


@pytest.mark.parametrize("spec", ["pareto:shape=0.001", "shifted-exp:shift=1e300",
                                  "markov:slow=1e300", "shifted-exp:rate=1e-300"])
def test_delay_models_that_overflow_are_refused(tmp_path: Path, spec: str) -> None:
    with pytest.raises(InvalidInput, match="not finite or above"):
        simulate([("frc", design("frc", n=6, s=1))], parse_delay(spec), iterations=200, seed=1)
    code = tmp_path / "frc.json"
    write_code(design("frc", n=6, s=1), code)
    res = run("simulate", str(code), "--delay", spec, "--iterations", "200", "--plot",
              str(tmp_path / "p.svg"), "--train")
    assert res.exit_code == 2 and res.stdout == "" and len(res.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("content", ["zeros", "tiny"])
def test_pictures_of_degenerate_runs(tmp_path: Path, content: str) -> None:
    from gctool.sim.plot import render_svg

    if content == "zeros":  # every worker time 0
        path = tmp_path / "z.csv"
        path.write_text(_text(list(HEADER), [(r, w, s, s) for r, w, s, _ in ROWS]))
        delay = parse_delay(f"trace:{path}")
    else:  # subnormal times: one value to the plot's precision
        delay = parse_delay("pareto:scale=1e-320")
    rep = simulate([("frc", design("frc", n=6, s=1))], delay, iterations=60, seed=1,
                   train="lsq")
    svg = render_svg(rep)
    doc = xml.dom.minidom.parseString(svg)
    assert "nan" not in svg.decode().lower() and "inf" not in svg.decode().lower()
    assert len(doc.getElementsByTagName("polyline")) >= len(rep.rows)


def test_plot_to_stdout_is_only_the_svg(tmp_path: Path) -> None:
    code = tmp_path / "frc.json"
    write_code(design("frc", n=6, s=1), code)
    res = run("simulate", str(code), "--iterations", "40", "--seed", "1", "--plot", "-")
    assert res.exit_code == 0
    doc = xml.dom.minidom.parseString(res.stdout)  # the whole of stdout is one SVG document
    root = doc.documentElement
    assert root is not None and root.tagName == "svg" and "wrote plot" not in res.stderr
    res = run("simulate", str(code), "--iterations", "40", "--plot", "-", "--json")
    assert res.exit_code == 2 and res.stdout == ""
