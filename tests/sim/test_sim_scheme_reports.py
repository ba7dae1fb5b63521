"""What ``gctool simulate`` reports for schemes simulated as designed (nested levels, one-step
heterogeneous decoding, ErasureHead, CodedReduce's levels), in the text and in the JSON, and the
communication of the sequential schemes in training."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gctool.codes import design
from gctool.errors import InvalidInput
from gctool.io import write_code
from gctool.sim.delays import parse_delay
from gctool.sim.run import simulate

from helpers import run


def _both(args: list[str]) -> tuple[str, dict[str, Any]]:
    """The text report and the JSON report of the same run."""
    text = run(*args)
    assert text.exit_code == 0, text.stderr
    res = run(*args, "--json")
    assert res.exit_code == 0, res.stderr
    doc: dict[str, Any] = json.loads(res.stdout)
    return text.stdout, doc


def _row(doc: dict[str, Any], start: str) -> dict[str, Any]:
    row: dict[str, Any] = next(r for r in doc["rows"] if r["name"].startswith(start))
    return row


def test_scheme_specific_figures_in_text_and_json(tmp_path: Path) -> None:
    nested, het, frc, cr = (tmp_path / f"{x}.json" for x in ("nested", "het", "frc", "cr"))
    write_code(design("nested", n=8, levels=[1, 3], seed=1), nested)
    p = [0.1, 0.2, 0.5, 0.3, 0.2, 0.1, 0.05, 0.4]
    write_code(design("hetero", p=p, load=2), het)
    write_code(design("frc", n=8, s=3), frc)
    write_code(design("coded-reduce", fanout=4, depth=2, tolerance=[1, 1], seed=1), cr)
    common = ["--iterations", "200", "--seed", "1"]

    text, doc = _both(["simulate", str(nested), *common, "--no-baselines"])
    row = _row(doc, f"{nested} (nested levels)")
    levels = row["level_fractions"]  # index 0: not exact, then level 1, 2
    assert len(levels) == 3 and abs(sum(levels) - 1) < 1e-12 and levels[0] == 0
    gain = row["gain_vs_one_message"]
    assert gain["low"] <= gain["value"] <= gain["high"] and gain["value"] >= 1
    assert "decoded at level 1:" in text and "one-message mean / nested mean" in text

    text, doc = _both(["simulate", str(het), "--delay", "bernoulli:slow=8", *common])
    row = _row(doc, str(het))
    err = row["one_step_error"]
    assert set(err) == {"mean", "p50", "p99"} and err["mean"]["value"] > 0
    assert row["lost_fraction"] is None and row["worker_p"] == p
    assert row["expected_error"] > 0
    assert "one-step decoding, error ||c - 1||^2/k per round: mean" in text
    assert "per-worker straggling probabilities p_i = 0.1, 0.2, 0.5" in text

    text, doc = _both(["simulate", str(frc), "--erasurehead", "3", *common, "--no-baselines"])
    row = _row(doc, "erasurehead")
    assert 0 < row["lost_fraction"] < 1 and 0 < row["exact_fraction"] < 1
    assert row["one_step_error"] is None
    assert "mean fraction of partitions lost" in text

    text, doc = _both(["simulate", str(cr), "--link", "latency=0.01,bandwidth=50", *common])
    row = _row(doc, str(cr))
    assert [lv["level"] for lv in row["levels"]] == [1, 2]
    assert [lv["messages"] for lv in row["levels"]] == [4, 16]
    for lv in row["levels"]:
        assert 0 < lv["messages_used_mean"] <= lv["messages"] and lv["finished_mean"] > 0
    assert row["levels"][0]["finished_mean"] == pytest.approx(row["mean"]["value"])  # the root
    names = {r["name"] for r in doc["rows"]}
    assert {f"ps {cr} (flat, same leaves)", "ring all-reduce n=16"} <= names
    assert any(x.startswith("gc frc n=16 s=") and x.endswith("(Tandon, flat)") for x in names)
    assert "level 2: 16 messages sent" in text
    # every file pays the link, not only CodedReduce: an FRC file's rounds get longer
    _, free = _both(["simulate", str(frc), *common, "--no-baselines"])
    _, paid = _both(["simulate", str(frc), "--link", "latency=0.01,bandwidth=50", *common,
                     "--no-baselines"])
    assert _row(paid, str(frc))["mean"]["value"] > _row(free, str(frc))["mean"]["value"] + 0.01


def test_sequential_schemes_count_their_uploads_until_the_target() -> None:
    frc = design("frc", n=6, s=1)
    rep = simulate([("frc", frc)], parse_delay("shifted-exp"), iterations=400, seed=4,
                   train="lsq", sgc=(1, 2, 1))
    assert rep.training is not None
    rows = {r["name"]: r for r in rep.training["rows"]}
    for name, slots in (("sr-sgc B,W,L=1,2,1", 1), ("m-sgc B,W,L=1,2,1", 2)):
        r = rows[name]
        jobs = r["jobs_to_target"]
        assert jobs is not None
        delay = next(x["delay"] for x in rep.rows if x["name"] == name)
        # every round up to the target's: at least one worker and at most all 6 upload
        assert slots * (jobs + delay) <= r["uploads"] <= slots * 6 * (jobs + delay)
        assert float(r["uploads"]) / slots == np.round(float(r["uploads"]) / slots)


def test_link_and_erasurehead_with_several_files_and_training() -> None:
    cr = design("coded-reduce", fanout=4, depth=2, tolerance=[1, 1], seed=1)
    nested = design("nested", n=8, levels=[1, 3], seed=1)
    frc = design("frc", n=8, s=3)
    from gctool.sim.network import parse_link

    rep = simulate([("cr", cr), ("nested", nested), ("frc", frc)], parse_delay("shifted-exp"),
                   iterations=200, seed=3, erasurehead=4, link=parse_link("latency=0.01"),
                   train="lsq", protocol="authors")
    names = {r["name"] for r in rep.rows}
    # ErasureHead on the group-shaped files only (FRC, and CodedReduce's Kronecker leaf code)
    assert {"erasurehead frc stop=4", "erasurehead cr stop=4"} <= names
    assert not any(x.startswith("erasurehead nested") for x in names)
    assert "nested: not of the group shape (FRC), so no ErasureHead" in rep.notes
    assert len(rep.notes) == len(set(rep.notes))  # one note per uncoded n, not per contender
    assert rep.training is not None
    ring = next(r for r in rep.training["rows"] if r["name"].startswith("ring all-reduce"))
    unc = next(r for r in rep.training["rows"] if r["name"] == "uncoded")
    # ring all-reduce sums every worker's gradient: the same steps as uncoded
    assert ring["jobs_to_target"] == unc["jobs_to_target"] is not None
    with pytest.raises(InvalidInput, match="group shape"):
        simulate([("nested", nested)], parse_delay("shifted-exp"), iterations=50, erasurehead=3)
