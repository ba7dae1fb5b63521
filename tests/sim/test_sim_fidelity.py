"""simulate as the papers' authors ran it: one network for every scheme, the linear load model,
the count-based GC model at any s, intervals over the recorded rounds, and sweeps."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from gctool.cli.main import cli
from gctool.codes import design
from gctool.errors import InvalidInput
from gctool.sim.contenders import Setting
from gctool.sim.contenders.count_gc import CountGC
from gctool.sim.delays import parse_delay
from gctool.sim.loads import parse_load_model
from gctool.sim.network import Link, arrivals
from gctool.sim.run import simulate
from gctool.sim.stats import REPLICATES, Intervals
from gctool.sim.traces import builtin_dir, read_trace_csv

TRACES = builtin_dir()


# -- the network: every scheme pays for what it sends -------------------------------------------
def test_every_file_pays_the_link_for_what_it_sends() -> None:
    frc = design("frc", n=8, s=1)
    comm = design("comm", n=8, s=1, m=2, seed=1)  # messages of half a gradient
    codes = [("frc", frc), ("comm", comm)]
    free = simulate(codes, parse_delay("shifted-exp"), iterations=300, seed=3, baselines=False)
    link = Link(0.02, 20.0)
    paid = simulate(codes, parse_delay("shifted-exp"), iterations=300, seed=3, baselines=False,
                    link=link)
    delay = parse_delay("shifted-exp")
    draws = delay.draws(300, 8, np.random.default_rng(3))
    for name, code, size in (("frc", frc, 1.0), ("comm", comm, 0.5)):
        before = next(r for r in free.rows if r["name"] == name)["mean"]["value"]
        after = next(r for r in paid.rows if r["name"] == name)["mean"]["value"]
        assert after > before + 0.02  # at least one latency more
        # brute force: the arrivals at the master, then the code's own stopping rule
        times = delay.times(draws, code.loads / code.k)
        at = arrivals(times, link, size)
        want = []
        from gctool.decode import Decoder

        dec = Decoder(code)
        for row in at:
            order = np.argsort(row, kind="stable")
            p = next(p for p in range(1, code.n + 1) if p >= code.n - code.s
                     or dec.decode(sorted(order[:p].tolist())).ok)
            want.append(row[order[p - 1]])
        assert after == pytest.approx(float(np.mean(want)), rel=1e-12)


def test_arrivals_with_a_size_per_message_against_the_queue() -> None:
    rng = np.random.default_rng(2)
    link = Link(0.3, 4.0)
    for _ in range(30):
        r, size = rng.exponential(size=6), rng.random(6)
        t, out = -np.inf, {}
        for j in np.argsort(r, kind="stable"):  # the receiver takes them one after another
            t = max(t, r[j] + 0.3) + size[j] / 4.0
            out[j] = t
        assert np.allclose(arrivals(r[None], link, size[None])[0], [out[j] for j in range(6)])


def test_coded_reduce_races_tandons_gc_at_its_n_and_s() -> None:
    cr = design("coded-reduce", seed=1, fanout=4, depth=2, tolerance=[1, 1])  # n 16, s 3
    link = Link(0.05, 10.0)
    rep = simulate([("cr", cr)], parse_delay("trace:london"), iterations=100, seed=2,
                   baselines=False, link=link)
    names = [r["name"] for r in rep.rows]
    assert names[:2] == ["cr", "gc frc n=16 s=3 (Tandon, flat)"]
    gc = next(r for r in rep.rows if r["name"].startswith("gc frc"))
    assert gc["n"] == cr.n and gc["s"] == cr.s == 3 and gc["load"] == pytest.approx(4 / 16)
    assert any("every scheme pays latency" in x for x in rep.notes)


# -- the linear load model ----------------------------------------------------------------------
def test_linear_load_model_is_the_authors_regression_and_shift() -> None:
    delay = parse_delay("trace:london", "linear")
    model = delay.load_model  # type: ignore[attr-defined]
    levels = (0.0, 0.25, 0.5, 0.75, 1.0)
    files = [read_trace_csv(TRACES / f"london-load{lv:.3f}.csv") for lv in levels]
    x = np.concatenate([np.full(D.size, lv) for lv, D in zip(levels, files, strict=True)])
    y = np.concatenate([D.ravel() for D in files])
    assert model.base_comp == pytest.approx(np.polyfit(x, y, 1)[0], rel=1e-9)
    assert 0.2 < model.base_comp < 0.3 and model.base_load == 0.0
    assert "fitted on 5 files" in delay.label
    draws = delay.draws(30, 5, np.random.default_rng(4))
    loads = np.array([0.0, 0.1, 0.5, 1.0, 0.25])
    base = files[0][draws.round[:, None], draws.cols]  # type: ignore[attr-defined]
    assert np.allclose(delay.times(draws, loads), base + loads * model.base_comp)
    given = parse_delay("trace:london", "linear:base_comp=2.262")
    assert given.load_model.base_comp == 2.262  # type: ignore[attr-defined]
    assert "fitted" not in given.label
    one = parse_delay("trace:london-load0.500", "linear:base_comp=1")
    assert one.load_model.base_load == 0.5  # type: ignore[attr-defined]
    for bad in ("linear:base_comp=x", "linear:speed=1", "linear:base_load=2", "cubic",
                "interp:x=1"):
        with pytest.raises(InvalidInput):
            parse_load_model(bad)
    with pytest.raises(InvalidInput, match="cannot be fitted from one file"):
        parse_delay("trace:london-load0.500", "linear")
    with pytest.raises(InvalidInput, match="not one of the trace's load levels"):
        parse_delay("trace:london", "linear:base_load=0.3")


# -- the count-based GC model -------------------------------------------------------------------
def test_count_gc_against_order_statistics_and_the_authors_rule() -> None:
    rng = np.random.default_rng(1)
    times = rng.exponential(size=(400, 10)) + 0.5
    for s in (0, 3, 9):
        run = CountGC(10, s).run(times, Setting())
        assert np.array_equal(run.durations, np.sort(times, axis=1)[:, 9 - s])
    mu = 0.6
    wait = times.min(axis=1) * (1 + mu)
    late = (times > wait[:, None]).sum(axis=1)
    for s, strict in ((3, False), (3, True)):
        run = CountGC(10, s, strict).run(times, Setting(mu=mu))
        inside = late < s if strict else late <= s
        assert 0 < inside.sum() < 400
        want = np.where(inside, np.minimum(wait, times.max(axis=1)), times.max(axis=1))
        assert np.array_equal(run.durations, want)
    c = CountGC(10, 3)
    assert c.load == pytest.approx(0.4) and c.theory(parse_delay("shifted-exp"), Setting()) \
        == pytest.approx(0.4 * (1 + sum(1 / i for i in range(4, 11))))


def test_gc_model_best_is_the_best_s_on_the_draws() -> None:
    code = design("frc", n=12, s=2)
    delay = parse_delay("trace:sydney")
    rep = simulate([("frc", code)], delay, iterations=120, seed=5, baselines=False,
                   gc_model="best", protocol="authors", mu=1.0)
    row = next(r for r in rep.rows if r["name"].startswith("gc-model"))
    draws = delay.draws(120, 12, np.random.default_rng(5))
    means = [CountGC(12, s).run(delay.times(draws, CountGC(12, s).loads), Setting(mu=1.0))
             .durations.mean() for s in range(12)]
    assert row["name"] == f"gc-model s={int(np.argmin(means))} (best of s = 0..11)"
    assert row["mean"]["value"] == pytest.approx(min(means), rel=1e-12)
    assert any("a model, not a code" in x for x in rep.notes)
    fixed = simulate([("frc", code)], delay, iterations=50, seed=5, baselines=False,
                     gc_model=(1, 6))
    assert [r["name"] for r in fixed.rows][1:] == ["gc-model s=1", "gc-model s=6"]


# -- intervals over the recorded rounds ---------------------------------------------------------
def test_trace_intervals_rest_on_the_recorded_rounds() -> None:
    code = design("frc", n=16, s=3)
    trace = simulate([("frc", code)], parse_delay("trace:london"), iterations=500, seed=1)
    assert trace.independent_rounds == 10 and "10 distinct recorded rounds" in trace.intervals
    synthetic = simulate([("frc", code)], parse_delay("shifted-exp"), iterations=500, seed=1)
    assert synthetic.independent_rounds is None and "batch means" in synthetic.intervals
    for row in trace.rows:
        for key in ("mean", "p50", "p99"):
            assert row[key]["low"] <= row[key]["value"] <= row[key]["high"], (row["name"], key)


def test_the_text_states_the_rounds(tmp_path: Path) -> None:
    path = tmp_path / "frc.json"
    CliRunner().invoke(cli, ["design", "frc", "-n", "8", "-s", "1", "-o", str(path)])
    out = CliRunner().invoke(cli, ["simulate", str(path), "--delay", "trace:london",
                                   "--iterations", "40", "--seed", "1", "--no-baselines"])
    assert out.exit_code == 0 and "bootstrap over the 10 distinct recorded rounds" in out.stdout


def test_the_cluster_bootstrap_against_a_plain_resampling_loop() -> None:
    rng = np.random.default_rng(3)
    clusters = np.repeat(np.arange(7), 13)
    x = rng.exponential(size=len(clusters)) + clusters * 0.3
    y = x * rng.uniform(0.5, 1.5, size=len(x))
    iv = Intervals(clusters, seed=11)
    mean, ratio = iv.mean(x), iv.ratio(x, y)
    # the same replicates drawn by hand: cluster c drawn w_c times -> every member weighs w_c
    reps_mean, reps_ratio = [], []
    for w in iv.weights:
        weight = w[clusters]
        reps_mean.append(np.sum(weight * x) / np.sum(weight))
        reps_ratio.append(np.sum(weight * x) / np.sum(weight * y))
    lo, hi = np.quantile(reps_mean, [0.025, 0.975])
    assert (mean["low"], mean["high"]) == pytest.approx((lo, hi), rel=1e-12)
    lo, hi = np.quantile(reps_ratio, [0.025, 0.975])
    assert (ratio["low"], ratio["high"]) == pytest.approx((lo, hi), rel=1e-12)
    assert iv.weights.shape == (REPLICATES, 7) and np.all(iv.weights.sum(axis=1) == 7)
    # fewer independent units give wider intervals than treating every round as independent
    naive = Intervals(np.arange(len(x)), seed=11).mean(x)
    assert mean["high"] - mean["low"] > 1.5 * (naive["high"] - naive["low"])
    q = iv.quantile(x, 0.5)
    assert q["low"] <= q["value"] <= q["high"]


# -- sweeps ------------------------------------------------------------------------------------
def test_sweep_over_s_prints_one_row_per_value_and_one_plot(tmp_path: Path) -> None:
    frc = tmp_path / "frc.json"
    CliRunner().invoke(cli, ["design", "frc", "-n", "16", "-s", "1", "-o", str(frc)])
    svg = tmp_path / "sweep.svg"
    args = ["simulate", str(frc), "--sweep", "s=1,3,7,15", "--iterations", "60", "--seed", "2"]
    out = CliRunner().invoke(cli, [*args, "--plot", str(svg)])
    assert out.exit_code == 0, out.stderr
    lines = [x for x in out.stdout.splitlines() if x[:3].strip() in ("1", "3", "7", "15")]
    assert [x.split()[0] for x in lines] == ["1", "3", "7", "15"]
    root = ET.parse(svg).getroot()
    ns = "{http://www.w3.org/2000/svg}"
    series = root.findall(f".//{ns}g[@class='sweep']/{ns}polyline")
    assert str(frc) in [p.find(ns + "title").text for p in series]  # type: ignore[union-attr]
    doc = json.loads(CliRunner().invoke(cli, [*args, "--json"]).stdout)
    assert doc["param"] == "s" and doc["values"] == [1, 3, 7, 15]
    # each row is the run of that s: the file designed again, the baselines at that s
    for row, s in zip(doc["rows"], (1, 3, 7, 15), strict=True):
        mine = simulate([(str(frc), design("frc", n=16, s=s))], parse_delay("shifted-exp"),
                        iterations=60, seed=2)
        assert [x["time_per_job"] for x in row["results"]] == pytest.approx(
            [r["time_per_job"] for r in mine.rows], rel=1e-12)
        assert any(x["name"] == f"ignore-stragglers s={s}" for x in row["results"])


@pytest.mark.parametrize("spec,rows", [("mu=0.1,1", 2), ("latency=0,0.1,0.2", 3),
                                       ("bandwidth=1,100", 2), ("rate=0.5,2", 2)])
def test_sweeps_of_the_protocol_the_network_and_the_delays(tmp_path: Path, spec: str,
                                                         rows: int) -> None:
    frc = tmp_path / "frc.json"
    CliRunner().invoke(cli, ["design", "frc", "-n", "8", "-s", "1", "-o", str(frc)])
    out = CliRunner().invoke(cli, ["simulate", str(frc), "--sweep", spec, "--iterations", "40",
                                   "--seed", "1", "--json", "--no-baselines"])
    assert out.exit_code == 0, out.stderr
    doc = json.loads(out.stdout)
    times = [r["results"][0]["time_per_job"] for r in doc["rows"]]
    assert len(times) == rows
    if spec.startswith("latency"):
        assert times == sorted(times) and times[-1] > times[0]  # slower links, longer rounds
    if spec.startswith("mu"):
        assert doc["protocol"] == "authors"


def test_bad_sweeps_are_refused_in_one_line(tmp_path: Path) -> None:
    frc = tmp_path / "frc.json"
    CliRunner().invoke(cli, ["design", "frc", "-n", "8", "-s", "1", "-o", str(frc)])
    for bad in (["--sweep", "speed=1,2"], ["--sweep", "s=1.5"], ["--sweep", "s="],
                ["--sweep", "base_comp=1"], ["--sweep", "s=1", "--train"],
                ["--sweep", "bandwidth=0"]):
        out = CliRunner().invoke(cli, ["simulate", str(frc), "--iterations", "20", *bad])
        assert out.exit_code == 2 and len(out.stderr.strip().splitlines()) == 1, (bad, out.stderr)


def test_training_on_a_link_charges_what_the_messages_carry() -> None:
    from gctool.sim.contenders.code import CodeFile
    from gctool.sim.sparsify import RandomK
    from gctool.sim.training import retimer

    code = design("frc", n=8, s=1)
    link = Link(0.01, 2.0)
    delay = parse_delay("shifted-exp")
    # dense messages: the re-timed round is the run's own round
    c = CodeFile(code, "frc")
    times = delay.times(delay.draws(50, 8, np.random.default_rng(2)), c.loads)
    run = c.run(times, Setting(link=link))
    again = retimer(c, times, link)
    assert again is not None
    for r in range(50):
        used = run.used[r]
        assert again(r, used, np.ones(len(used))) == pytest.approx(run.durations[r])
    # sparsified messages are smaller: the same jobs take less wall clock
    common = dict(iterations=300, seed=1, baselines=False, train="lsq", link=link)
    dense = simulate([("frc", code)], delay, **common)  # type: ignore[arg-type]
    sparse = simulate([("frc", code)], delay, sparsify=RandomK(3), **common)  # type: ignore[arg-type]
    d, sp = dense.training["rows"][0], sparse.training["rows"][0]  # type: ignore[index]
    assert sp["retimed"] and not d["retimed"]
    per_job = [row["time_to_target"] / row["jobs_to_target"] for row in (d, sp)]
    assert per_job[1] < 0.8 * per_job[0]
    assert any("real sizes" in x for x in sparse.notes)


def test_worker_probabilities_need_the_bernoulli_model(tmp_path: Path) -> None:
    frc = tmp_path / "frc.json"
    CliRunner().invoke(cli, ["design", "frc", "-n", "4", "-s", "1", "-o", str(frc)])
    out = CliRunner().invoke(cli, ["simulate", str(frc), "--worker-p", "0.1,0.2,0.3,0.4",
                                   "--iterations", "5"])
    assert out.exit_code == 2 and "--worker-p needs --delay bernoulli" in out.stderr
    ok = CliRunner().invoke(cli, ["simulate", str(frc), "--worker-p", "0.1,0.2,0.3,0.4",
                                  "--delay", "bernoulli", "--iterations", "5", "--json"])
    assert ok.exit_code == 0, ok.stderr
