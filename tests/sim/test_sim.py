"""The simulator: real AWS Lambda traces, closed forms, SGC deadlines, training, the CLI.

The traces are the copies shipped in the package (``gctool/data/traces/aws-lambda``).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from gctool.algebra.fields import parse_field
from gctool.cli.exit_codes import ExitCode
from gctool.cli.main import cli
from gctool.codes import design
from gctool.errors import InvalidInput
from gctool.model import GradientCode
from gctool.sequential.model import to_mask
from gctool.sim.contenders import Setting
from gctool.sim.contenders.ignore import IgnoreStragglers
from gctool.sim.contenders.uncoded import Uncoded
from gctool.sim.delays import parse_delay
from gctool.sim.lineup import for_code
from gctool.sim.loads import Ceil, Interpolate, Nearest
from gctool.sim.run import simulate
from gctool.sim.traces import builtin_dir, load_trace, read_trace_csv

from refusals import refused

#: gctool's rule, no network, no budget meter
SET = Setting()

TRACES = builtin_dir()
LONDON = TRACES / "london"


# -- traces ---------------------------------------------------------------------------------------
def test_trace_files_are_read_as_finished_minus_started() -> None:
    path = TRACES / "canada-load0.000.csv"
    D = read_trace_csv(path)
    assert D.shape == (10, 256)
    with path.open() as fh:
        rows = list(csv.DictReader(fh))
    for row in rows[::97]:
        r, w = int(row["round"]), int(row["worker"])
        assert D[r, w] == pytest.approx(float(row["finished_s"]) - float(row["started_s"]))
    assert D[2].max() > 30  # the README's straggler: canada, load 0, round 2 (~40 s arrival)


def test_trace_levels_and_load_mapping() -> None:
    tr = load_trace(str(LONDON))
    assert tr.levels == (0.0, 0.25, 0.5, 0.75, 1.0) and tr.rounds == 10 and tr.workers == 256
    draws = tr.draws(25, 6, np.random.default_rng(1))
    files = {lv: read_trace_csv(TRACES / f"london-load{lv:.3f}.csv") for lv in tr.levels}
    cells = lambda lv: files[lv][draws.round[:, None], draws.cols]  # noqa: E731
    t = Interpolate().times(tr, draws, np.array([0.25, 0.125, 0.6, 1.0, 0.0, 0.25]))
    assert np.allclose(t[:, 0], cells(0.25)[:, 0])
    assert np.allclose(t[:, 1], 0.5 * cells(0.0)[:, 1] + 0.5 * cells(0.25)[:, 1])
    assert np.allclose(t[:, 2], 0.6 * cells(0.5)[:, 2] + 0.4 * cells(0.75)[:, 2])
    assert np.allclose(Ceil().times(tr, draws, np.full(6, 0.3))[:, 3], cells(0.5)[:, 3])
    assert np.allclose(Nearest().times(tr, draws, np.full(6, 0.3))[:, 4], cells(0.25)[:, 4])
    # blocks of 10 rounds in order, each with one injective worker map
    assert draws.round.tolist()[:12] == list(range(10)) + [0, 1]
    assert np.array_equal(draws.clusters, draws.round)  # the recorded round of each iteration
    for block in range(3):
        cols = draws.cols[block * 10:(block + 1) * 10]
        assert (cols == cols[0]).all() and len(set(cols[0].tolist())) == 6


def test_single_trace_file_ignores_loads() -> None:
    tr = load_trace(str(TRACES / "sydney-load0.500.csv"))
    draws = tr.draws(10, 4, np.random.default_rng(0))
    assert np.allclose(Interpolate().times(tr, draws, np.array([0.1, 0.9, 0.5, 0.0])),
                       read_trace_csv(TRACES / "sydney-load0.500.csv")[
                           draws.round[:, None], draws.cols[:, :4]])


def test_shipped_traces_by_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for region in ("canada", "london", "sydney"):
        tr = parse_delay(f"trace:{region}").trace  # type: ignore[attr-defined]
        assert tr.levels == (0.0, 0.25, 0.5, 0.75, 1.0) and tr.workers == 256
        assert tr.label == f"{region} (5 load levels)"
    one = parse_delay("trace:sydney-load0.750").trace  # type: ignore[attr-defined]
    assert one.levels == (0.75,) and np.array_equal(
        one.durations[0], read_trace_csv(TRACES / "sydney-load0.750.csv"))
    with pytest.raises(InvalidInput, match="shipped traces: canada, london, sydney"):
        parse_delay("trace:paris")
    # a file of the same name in the working directory wins over the shipped trace
    (tmp_path / "london").write_text("round,worker,started_s,finished_s\n0,0,0,2.5\n")
    monkeypatch.chdir(tmp_path)
    assert parse_delay("trace:london").trace.durations[0].tolist() == [[2.5]]  # type: ignore[attr-defined]


def test_shipped_trace_files_are_package_data() -> None:
    import tomllib

    globs = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())[
        "tool"]["setuptools"]["package-data"]["gctool"]
    pkg = TRACES.parent.parent.parent
    shipped = {p for g in globs for p in pkg.glob(g)}
    assert {p for p in TRACES.iterdir()} <= shipped and len(shipped & set(TRACES.iterdir())) == 16


def test_broken_traces_are_rejected(tmp_path: Path) -> None:
    bad = tmp_path / "x-load0.500.csv"
    bad.write_text("round,worker,started_s,finished_s\n0,0,1.0,0.5\n")
    with pytest.raises(InvalidInput, match="before started_s"):
        read_trace_csv(bad)
    bad.write_text("round,worker,start\n")
    with pytest.raises(InvalidInput, match="header"):
        read_trace_csv(bad)
    with pytest.raises(InvalidInput, match="no such CSV"):
        parse_delay(str(tmp_path / "nowhere"))


# -- closed forms ---------------------------------------------------------------------------------
@pytest.mark.parametrize("spec", ["shifted-exp:shift=1,rate=2", "pareto:scale=1,shape=3"])
def test_simulated_means_match_order_statistics(spec: str) -> None:
    code = design("frc", n=10, s=4)
    rep = simulate([("frc", code)], parse_delay(spec), iterations=4000, seed=7,
                   sgc=(1, 2, 1))
    rows = {r["name"]: r for r in rep.rows}
    for name in ("uncoded", "ignore-stragglers s=4"):
        m = rows[name]["mean"]
        assert rows[name]["theory"] is not None
        assert m["low"] <= rows[name]["theory"] <= m["high"], (name, m, rows[name]["theory"])


def test_theory_against_direct_monte_carlo() -> None:
    rng = np.random.default_rng(0)
    n, s = 6, 2
    delay = parse_delay("shifted-exp:shift=0.5,rate=3")
    c = IgnoreStragglers(n, s)
    X = (0.5 + rng.exponential(size=(200_000, n)) / 3) / n
    assert np.sort(X, axis=1)[:, n - s - 1].mean() == pytest.approx(c.theory(delay, SET),
                                                                    rel=5e-3)
    assert Uncoded(n).theory(delay, SET) == pytest.approx(X.max(axis=1).mean(), rel=5e-3)


# -- sequential schemes in the simulator agree with the verifier ----------------------------------
@pytest.mark.parametrize("scheme,args", [("sr-sgc", (1, 3, 2)), ("m-sgc", (1, 3, 2)),
                                         ("m-sgc", (2, 4, 2)), ("sr-sgc", (2, 3, 3))])
def test_sgc_never_misses_a_deadline_on_bursty_delays(scheme: str, args: tuple) -> None:  # type: ignore[type-arg]
    from gctool.sequential.verify import verify_sequential

    B, W, lam = args
    code = design(scheme, n=5, seed=1, burst=B, window=W, lam=lam)
    assert verify_sequential(code).ok  # exhaustive: no admissible pattern breaks a deadline
    c = for_code(code, scheme)
    delay = parse_delay("markov:p=0.2,q=0.4,slow=20")
    times = delay.times(delay.draws(400, 5, np.random.default_rng(3)), c.loads)
    run = c.run(times, SET)
    assert run.deadline_misses == 0 and len(run.jobs) == 400 - c.delay
    pattern = [code_mask(5) & ~to_mask(u.tolist()) for u in run.used]
    from gctool.sequential.schedule import model_of

    assert model_of(code).violation(pattern) is None  # the master's stragglers are admissible
    assert sum(1 for S in pattern if S) > 50  # and there were plenty of them


def code_mask(n: int) -> int:
    return (1 << n) - 1


# -- traces end to end ----------------------------------------------------------------------------
def test_trace_simulation_table_for_gc_and_sgc() -> None:
    codes = [("frc", design("frc", n=8, s=1)), ("crc", design("cyclic", n=8, s=2, seed=1))]
    rep = simulate(codes, parse_delay("trace:london"), iterations=300, seed=2)
    names = [r["name"] for r in rep.rows]
    assert names[:3] == ["frc", "crc", "uncoded"]
    assert any(n.startswith("sr-sgc") for n in names) and any(n.startswith("m-sgc") for n in names)
    assert rep.ok and all(r["deadline_misses"] == 0 for r in rep.rows)
    for r in rep.rows:
        m = r["mean"]
        assert m["low"] <= m["value"] <= m["high"] and r["p50"]["value"] <= r["p99"]["value"]
        assert r["speedup"]["value"] > 0
    un = next(r for r in rep.rows if r["name"] == "uncoded")
    ign = next(r for r in rep.rows if r["name"] == "ignore-stragglers s=1")
    assert un["speedup"]["value"] == pytest.approx(1.0)
    assert ign["mean"]["value"] < un["mean"]["value"]  # waiting for one fewer never hurts


def test_tree_and_bcc_waiting_rules_against_direct_formulas() -> None:
    cr = design("coded-reduce", seed=1, fanout=2, depth=2, tolerance=[1, 0])  # repetition, sum
    times = np.random.default_rng(5).exponential(size=(300, 4))
    run = for_code(cr, "cr").run(times, SET)
    want = np.minimum(times[:, :2].max(axis=1), times[:, 2:].max(axis=1))
    assert np.allclose(run.durations, want) and run.exact.all()
    bcc = design("bcc", n=9, k=6, seed=2, batches=3)
    batch = np.array(bcc.params["batch_of_worker"])
    times = np.random.default_rng(6).exponential(size=(300, 9))
    run = for_code(bcc, "bcc").run(times, SET)
    covered = np.max([times[:, batch == g].min(axis=1) for g in range(3)], axis=0)
    assert np.allclose(run.durations, covered) and run.exact.all()


# -- training -------------------------------------------------------------------------------------
def test_training_reaches_target_with_exact_and_approximate_decoding() -> None:
    frc = design("frc", n=6, s=1)
    approx = GradientCode(np.eye(6), parse_field("real"), 1, "custom")  # claims s = 1, has none
    rep = simulate([("frc", frc), ("approx", approx)], parse_delay("shifted-exp"),
                   iterations=300, seed=4, train="lsq", sgc=(1, 2, 1))
    rows = {r["name"]: r for r in rep.training["rows"]}
    exact_rows = [r for r in rep.rows if r["name"] == "approx"]
    assert exact_rows[0]["exact_fraction"] == 0.0  # stops at n - 1 workers: approximate
    for name in ("frc", "uncoded", "sr-sgc B,W,L=1,2,1", "m-sgc B,W,L=1,2,1"):
        assert rows[name]["time_to_target"] is not None, name
        assert rows[name]["final_loss"] <= rep.training["target"] + 1e-12
    assert rows["frc"]["uploads"] > 0 and rows["frc"]["skipped_uploads"] == 0
    lazy = simulate([("frc", frc)], parse_delay("shifted-exp"), iterations=300, seed=4,
                    train="logistic", lazy=0.5, baselines=False)
    row = lazy.training["rows"][0]
    assert row["skipped_uploads"] > 0 and row["time_to_target"] is not None
    assert row["lazy_rule"] == "G-LAG" and rows["frc"]["lazy_rule"] is None


def test_msgc_job_gradient_is_the_full_gradient() -> None:
    from gctool.sim.contenders import Run
    from gctool.sim.problem import make_problem

    code = design("m-sgc", n=5, seed=1, burst=2, window=3, lam=2)
    problem = make_problem("lsq", np.random.default_rng(0))
    nothing = Run(np.zeros(1))
    est = for_code(code, "m").estimator(problem, nothing, None, None, 0)
    beta = np.random.default_rng(1).standard_normal(problem.X.shape[1])
    full = problem.X.T @ problem.residual(beta) / problem.N
    entry = ((2,) * 5, (to_mask([0, 1, 2]), to_mask([1, 3, 4])))  # any n - λ = 3 per group
    assert np.allclose(est.step(0, beta, entry, None), full)
    sr = design("sr-sgc", n=6, seed=1, burst=1, window=3, lam=3)
    est = for_code(sr, "sr").estimator(problem, nothing, None, None, 0)
    assert np.allclose(est.step(0, beta, to_mask([0, 2, 3, 5]), None), full)


# -- CLI ------------------------------------------------------------------------------------------
def test_simulate_cli(tmp_path: Path) -> None:
    runner = CliRunner()
    frc = tmp_path / "frc.json"
    runner.invoke(cli, ["design", "frc", "-n", "6", "-s", "1", "-o", str(frc)])
    r = runner.invoke(cli, ["simulate", str(frc), "--delay", "trace:london", "--iterations", "60",
                            "--seed", "1", "--json"])
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["seed"] == 1 and doc["delay"].startswith("trace london")
    assert {row["name"] for row in doc["rows"]} >= {"uncoded", "ignore-stragglers s=1"}
    r = runner.invoke(cli, ["simulate", str(frc), "--delay", "markov", "--iterations", "60",
                            "--seed", "1", "--train", "--lazy", "0.5", "--sgc", "1,3,1"])
    assert r.exit_code == 0 and "training" in r.stdout and "m-sgc B,W,L=1,3,1" in r.stdout
    again = runner.invoke(cli, ["simulate", str(frc), "--delay", "markov", "--iterations", "60",
                                "--seed", "1", "--train", "--lazy", "0.5", "--sgc", "1,3,1"])
    assert again.stdout == r.stdout  # a seed makes a run reproducible
    svg = tmp_path / "t.svg"
    r = runner.invoke(cli, ["simulate", str(frc), "--iterations", "50", "--seed", "2",
                            "--plot", str(svg), "--json", "--train"])
    import xml.etree.ElementTree as ET

    ns = "{http://www.w3.org/2000/svg}"
    root = ET.parse(svg).getroot()
    rows = json.loads(r.stdout)["rows"]
    groups = {g.get("class"): g for g in root.findall(ns + "g")}
    assert r.exit_code == 0 and len(root.findall(ns + "g[@class='scheme']")) == len(rows)
    cdf = groups["cdf"]
    assert [p.find(ns + "title").text for p in cdf.findall(ns + "polyline")] == [
        row["name"] for row in rows]
    labels = [t.text for t in root.iter(ns + "text")]
    assert "time per round [job units]" in labels and "fraction of rounds" in labels
    assert "wall-clock time [job units]" in labels and len(
        groups["training"].findall(ns + "polyline")) == len(rows)
    r = runner.invoke(cli, ["simulate", str(frc), "--delay", "trace:london", "--iterations", "20",
                            "--seed", "2", "--plot", str(svg)])
    assert "time per round [s]" in [t.text for t in ET.parse(svg).getroot().iter(ns + "text")]
    rows0 = rows[0]
    ys = [float(p.split(",")[1]) for p in cdf.findall(ns + "polyline")[0].get("points").split()]
    assert ys == sorted(ys, reverse=True)  # a CDF only rises (SVG y grows downwards)
    assert rows0["percentiles"][0] <= rows0["p50"]["value"] <= rows0["percentiles"][-1]
    for bad in (["--delay", "gamma"], ["--delay", "pareto:shape=0"], ["--sgc", "1,2"],
                ["--delay", "trace:/nonexistent/x"], ["-", "-"], ["--iterations", "1"],
                ["--plot", "-", "--json"]):
        out = runner.invoke(cli, ["simulate", str(frc), *bad], input="")
        assert out.exit_code == ExitCode.USAGE, (bad, out.stdout, out.stderr)
        assert len(out.stderr.strip().splitlines()) == 1
    assert "Examples:" in runner.invoke(cli, ["simulate", "--help"]).stdout


# -- fast stopping rules agree with the naive path --------------------------------------------
FAST_CASES = [
    ("frc", dict(n=12, s=2)), ("cyclic", dict(n=10, s=3, seed=1)),
    ("cyclic-mds", dict(n=9, s=2, seed=1)), ("bcc", dict(n=9, k=6, seed=2, batches=3)),
    ("bgc", dict(n=10, k=10, d=3, seed=3)), ("expander", dict(vertices=10, d=3, seed=1)),
    ("comm", dict(n=8, s=2, m=2, seed=1)),
    ("cyclic", dict(n=8, s=2, seed=4, field="GF(7)")),
    ("frc", dict(n=8, s=1, field="GF(5)")),
]


@pytest.mark.parametrize("scheme,kw", FAST_CASES, ids=[c[0] + str(i) for i, c in
                                                       enumerate(FAST_CASES)])
def test_fast_stopping_equals_naive_path(scheme: str, kw: dict) -> None:  # type: ignore[type-arg]
    from sim_reference import run_naive

    kw = dict(kw)
    if "field" in kw:
        kw["field"] = parse_field(kw["field"])
    code = design(scheme, **kw)
    c = for_code(code, scheme)
    specs = ["markov:p=0.2,q=0.3,slow=20"]  # the generic decoder over GF(q) is slow
    if not code.field.is_finite:
        specs += ["shifted-exp:shift=1,rate=2", "trace:sydney"]
    for spec in specs:
        delay = parse_delay(spec)
        rounds = 60 if not code.field.is_finite else 12
        times = delay.times(delay.draws(rounds, code.n, np.random.default_rng(9)), c.loads)
        times[::7] = np.round(times[::7], 1)  # ties: the stable order decides, as in the naive
        fast, slow = c.run(times, SET), run_naive(c, times)
        assert np.array_equal(fast.durations, slow.durations), spec
        assert np.array_equal(fast.exact, slow.exact), spec
        assert all(np.array_equal(a, b) for a, b in zip(fast.used, slow.used, strict=True))


def test_fast_stopping_on_approximate_codes_and_its_kinds() -> None:
    from sim_reference import run_naive

    from gctool.sim.stopping import StopRule

    approx = GradientCode(np.eye(6), parse_field("real"), 1, "custom")  # s = 1 claimed, 0 true
    near = GradientCode(np.eye(6) + 1e-6 * np.ones((6, 6)), parse_field("real"), 1, "custom")
    for code in (approx, near):
        c = for_code(code, "x")
        times = np.random.default_rng(1).exponential(size=(80, 6))
        fast, slow = c.run(times, SET), run_naive(c, times)
        assert np.array_equal(fast.durations, slow.durations)
        assert np.array_equal(fast.exact, slow.exact) and not fast.exact.any()
    assert StopRule(design("frc", n=6, s=1)).kind == "groups"
    assert StopRule(design("bcc", n=9, k=6, seed=2, batches=3)).kind == "groups"
    assert StopRule(design("cyclic", n=6, s=1, seed=1)).kind == "qr"
    assert StopRule(design("cyclic", n=6, s=1, seed=1, field=parse_field("GF(7)"))).kind == \
        "naive"
    # a code with equal supports but unequal entries is not of the group shape
    skew = GradientCode(np.array([[1.0, 1.0, 0, 0], [1.0, 2.0, 0, 0], [0, 0, 1.0, 1.0],
                                  [0, 0, 1.0, 1.0]]), parse_field("real"), 1, "custom")
    assert StopRule(skew).kind == "qr"


@pytest.mark.parametrize("scheme,args", [("sr-sgc", (1, 3, 2)), ("m-sgc", (2, 4, 2)),
                                         ("sr-sgc", (1, 2, 3))])
def test_fast_sgc_equals_naive_path(scheme: str, args: tuple) -> None:  # type: ignore[type-arg]
    from sim_reference import run_naive

    from gctool.sequential.model import BurstyModel, earliest_admissible, earliest_admissible_sorted

    B, W, lam = args
    code = design(scheme, n=7, seed=1, burst=B, window=W, lam=lam)
    c = for_code(code, scheme)
    delay = parse_delay("markov:p=0.2,q=0.4,slow=20")
    times = delay.times(delay.draws(300, 7, np.random.default_rng(3)), c.loads)
    fast, slow = c.run(times, SET), run_naive(c, times)
    assert np.array_equal(fast.durations, slow.durations) and fast.jobs == slow.jobs
    model = BurstyModel(6, 2, 4, 3)
    rng = np.random.default_rng(0)
    for _ in range(300):  # the O(n) threshold form against the arrival-by-arrival oracle
        hist = tuple(int(x) for x in rng.integers(0, 64, size=rng.integers(0, 4)) & 0b101101)
        order = rng.permutation(6)
        assert earliest_admissible_sorted(model, hist, order) == earliest_admissible(
            model, hist, order.tolist())


def test_dual_walk_at_larger_n_equals_naive_path() -> None:
    from sim_reference import run_naive

    from gctool.decode import Decoder
    from gctool.sim.stopping import StopRule
    from gctool.sim.stopping.dual import DUAL_FROM, dual_residual

    code = design("cyclic", n=56, s=4, seed=3)
    assert code.n - code.s >= DUAL_FROM
    c = for_code(code, "crc")
    delay = parse_delay("markov:p=0.1,q=0.3,slow=5")
    times = delay.times(delay.draws(25, code.n, np.random.default_rng(2)), c.loads)
    fast, slow = c.run(times, SET), run_naive(c, times)
    assert np.array_equal(fast.durations, slow.durations)
    assert np.array_equal(fast.exact, slow.exact)
    rule = StopRule(code)
    rule.earliest(times, code.n - code.s)
    assert rule.fallbacks == 0  # every round decided by the dual walk or QR, none by the SVD
    dec, rng = Decoder(code), np.random.default_rng(5)
    for size in (1, 4, 5, 7):  # the dual residual is the least-squares error of the survivors
        S = np.sort(rng.choice(code.n, size, replace=False))
        F = np.setdiff1d(np.arange(code.n), S)
        assert dual_residual(rule._dual, S) == pytest.approx(dec.decode(F).error, abs=1e-8,
                                                              rel=1e-6)


# -- the authors' protocol and parameter search ------------------------------------------------
def test_authors_rule_for_a_gradient_code_against_its_definition() -> None:
    code = design("frc", n=12, s=3)
    groups = np.arange(12) // 4
    c = for_code(code, "frc")
    times = np.random.default_rng(4).exponential(size=(400, 12)) + 0.2
    run = c.run(times, Setting(mu=0.3))
    wait = 1.3 * times.min(axis=1)
    arrived = times <= wait[:, None]
    inside = np.array([all(arrived[t, groups == g].any() for g in range(3)) for t in range(400)])
    last = times.max(axis=1)
    assert np.allclose(run.durations, np.where(inside, np.minimum(wait, last), last))
    assert 0 < inside.sum() < 400  # both branches happen
    assert all(len(u) == (arrived[t].sum() if inside[t] else 12) for t, u in enumerate(run.used))


def test_authors_rule_for_sgc_keeps_the_model_and_meets_deadlines() -> None:
    code = design("m-sgc", n=8, seed=1, burst=1, window=3, lam=2)
    c = for_code(code, "m")
    delay = parse_delay("markov:p=0.1,q=0.4,slow=4")
    times = delay.times(delay.draws(300, 8, np.random.default_rng(1)), c.loads)
    run = c.run(times, Setting(mu=0.5))
    wait = 1.5 * times.min(axis=1)
    waited = np.isclose(run.durations, wait)
    assert np.all(waited | np.isclose(run.durations, times.max(axis=1)))
    assert 0 < waited.sum() < 300 and run.deadline_misses == 0 and len(run.jobs) == 300 - c.delay
    pattern = [code_mask(8) & ~to_mask(u.tolist()) for u in run.used]
    from gctool.sequential.schedule import model_of

    assert model_of(code).violation(pattern) is None


def test_sgc_search_respects_the_load_budget() -> None:
    from gctool.sequential import formulas
    from gctool.sim.sgc_search import candidates

    n, s = 32, 3
    for scheme, fig in (("m-sgc", formulas.msgc), ("sr-sgc", formulas.srsgc)):
        cands = candidates(n, s, scheme)
        assert cands
        for B, W, lam in cands:
            assert fig(n, B, W, lam).load <= (s + 1) / n
        for B, W in {(B, W) for B, W, _ in cands}:  # the largest λ under the budget is tried
            top = max(lam for b, w, lam in cands if (b, w) == (B, W))
            bigger = fig(n, B, W, top + 1).load if top < n else None
            assert bigger is None or bigger > (s + 1) / n
    rep = simulate([("frc", design("frc", n=16, s=3))], parse_delay("trace:canada"),
                   iterations=200, seed=3, sgc="search", protocol="authors", mu=0.2)
    names = [r["name"] for r in rep.rows]
    assert any(x.startswith("m-sgc") and x.endswith("(searched)") for x in names)
    assert rep.protocol == "authors" and rep.mu == 0.2
    for r in rep.rows:
        if "searched" in r["name"]:
            assert r["load"] <= 4 / 16 + 1e-12


def test_simulate_cli_protocol_options(tmp_path: Path) -> None:
    runner = CliRunner()
    frc = tmp_path / "frc.json"
    runner.invoke(cli, ["design", "frc", "-n", "8", "-s", "1", "-o", str(frc)])
    r = runner.invoke(cli, ["simulate", str(frc), "--delay", "trace:sydney", "--iterations",
                            "60", "--seed", "2", "--protocol", "authors", "--mu", "0.3",
                            "--sgc", "search", "--json"])
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["protocol"] == "authors" and doc["mu"] == 0.3
    assert any("(searched)" in row["name"] for row in doc["rows"])
    for bad in (["--sgc", "seek"], ["--protocol", "paper"], ["--mu", "-1"]):
        out = runner.invoke(cli, ["simulate", str(frc), *bad])
        assert out.exit_code == ExitCode.USAGE and len(out.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("args,line", [
    (["--mu", "0.5"], "--mu applies to --protocol authors"),
    (["--protocol", "gctool", "--mu", "0.2"], "--mu applies to --protocol authors"),
    (["--problem", "logistic"], "--problem applies to --train"),
    (["--target-gap", "0.01"], "--target-gap applies to --train"),
    # a sweep of mu runs the authors' protocol at each mu: another protocol, or a mu, is unused
    (["--sweep", "mu=0.5,1", "--protocol", "gctool"],
     "--protocol gctool does not apply with a --sweep of mu"),
    (["--sweep", "mu=0.5,1", "--protocol", "authors", "--mu", "1"],
     "--mu does not apply with a --sweep of mu"),
    (["--sweep", "mu=0.5,1", "--mu", "1"], "--mu does not apply with a --sweep of mu"),
])
def test_simulate_refuses_options_of_another_mode(tmp_path: Path, args: list[str],
                                                  line: str) -> None:
    """An option of the authors' protocol or of the training, given without them, was ignored
    without a word; the default left alone is not refused."""
    runner = CliRunner()
    frc = tmp_path / "frc.json"
    runner.invoke(cli, ["design", "frc", "-n", "4", "-s", "1", "-o", str(frc)])
    plot = tmp_path / "sweep.svg"
    r = runner.invoke(cli, ["simulate", str(frc), "--iterations", "10", "--plot", str(plot),
                            *args])
    assert refused(r, line) and not plot.exists()
    assert runner.invoke(cli, ["simulate", str(frc), "--iterations", "10"]).exit_code == 0
    if "--sweep" in args:  # the sweep alone, or with the authors' protocol typed, runs
        for fine in (["--sweep", "mu=0.5,1"], ["--sweep", "mu=0.5,1", "--protocol", "authors"]):
            assert runner.invoke(cli, ["simulate", str(frc), "--iterations", "10",
                                       *fine]).exit_code == 0, fine


def test_svg_ticks_and_training_curve() -> None:
    from gctool.viz.svgkit import nice_ticks

    for lo, hi in ((0.0, 1.0), (1.37, 7.9), (0.0, 1e-3), (5.0, 5.0), (-2.0, 3.0)):
        t = nice_ticks(lo, hi)
        assert t[0] <= lo and t[-1] >= hi and 2 <= len(t) <= 12
        steps = np.diff(t)
        assert np.allclose(steps, steps[0])
    rep = simulate([("frc", design("frc", n=6, s=1))], parse_delay("shifted-exp"),
                   iterations=200, seed=4, train="lsq", baselines=False)
    curve = rep.training["rows"][0]["curve"]
    assert np.all(np.diff(curve["time"]) >= 0) and len(curve["time"]) == len(curve["loss_gap"])
    assert curve["loss_gap"][-1] < 0.01 * curve["loss_gap"][0]  # exact decoding converges


def test_erasurehead_stops_early_and_loses_whole_groups() -> None:
    from gctool.sim.contenders.erasurehead import ErasureHead

    code = design("frc", n=12, s=2)  # 4 groups of 3 workers, 3 partitions each
    groups = np.arange(12) // 3
    c = ErasureHead(code, "frc", 5)
    times = np.random.default_rng(8).exponential(size=(500, 12))
    run = c.run(times, SET)
    srt = np.sort(times, axis=1)
    exact_at = np.max([times[:, groups == g].min(axis=1) for g in range(4)], axis=0)
    assert np.allclose(run.durations, np.minimum(exact_at, srt[:, 4]))
    assert np.array_equal(run.exact, exact_at <= srt[:, 4])
    for t in range(0, 500, 37):
        arrived = times[t] <= run.durations[t]
        missing = sum(not arrived[groups == g].any() for g in range(4))
        assert run.lost[t] == pytest.approx(missing / 4)
    assert 0 < run.exact.mean() < 1 and run.lost.max() > 0
    with pytest.raises(InvalidInput, match="group shape"):
        ErasureHead(design("cyclic", n=6, s=1, seed=1), "crc", 3)
    rep = simulate([("frc", code)], parse_delay("shifted-exp"), iterations=300, seed=2,
                   train="lsq", baselines=False, erasurehead=5)
    row = next(r for r in rep.rows if r["name"].startswith("erasurehead"))
    assert 0 < row["lost_fraction"] < 1 and row["exact_fraction"] < 1
    tr = next(r for r in rep.training["rows"] if r["name"].startswith("erasurehead"))
    assert tr["time_to_target"] is not None  # approximate decoding still converges here


def test_nested_decodes_at_the_level_reached_against_brute_force() -> None:
    from gctool.codes.nested import profile_decoding

    code = design("nested", n=6, levels=[1, 3], seed=1)
    rep = simulate([("nest", code)], parse_delay("shifted-exp"), iterations=60, seed=3,
                   baselines=False)
    fixed, nested = rep.rows
    assert nested["name"] == "nest (nested levels)" and nested["mean"]["value"] < \
        fixed["mean"]["value"]
    assert sum(nested["level_fractions"]) == pytest.approx(1.0)
    from gctool.sim.contenders.nested import Nested

    c = Nested.of(code, "nest")
    delay = parse_delay("shifted-exp")
    times = delay.times(delay.draws(40, 6, np.random.default_rng(3)), c.loads)
    run = c.run(times, SET)
    one = c.reference.run(times, SET)
    for r in range(40):  # brute force over the message arrival events
        events = sorted({float(times[r, i] * f) for i in range(6) for f in (0.5, 1.0)})
        best, level = one.durations[r], 0
        for t in events:
            prof = [2 if times[r, i] <= t else 1 if times[r, i] * 0.5 <= t else 0
                    for i in range(6)]
            if t <= one.durations[r] and profile_decoding(code, prof)[1]:
                best = t
                low = [min(p, 1) for p in prof]
                level = 1 if profile_decoding(code, low)[1] else 2
                break
        assert run.durations[r] == pytest.approx(best)
        assert run.levels[r] == level


def test_heterogeneous_code_under_per_worker_stragglers() -> None:
    p = [0.1, 0.2, 0.5, 0.3, 0.2, 0.1]
    code = design("hetero", p=p, load=2)
    rep = simulate([("het", code)], parse_delay("bernoulli:slow=8"), iterations=6000, seed=2,
                   baselines=False)
    row = rep.rows[0]
    assert row["worker_p"] == pytest.approx(p)
    # the mean one-step error per round is the design's expectation sum_j 1/Q_j (over k)
    errs = []
    c = for_code(code, "het")
    delay = parse_delay("bernoulli:slow=8").with_worker_p(p)  # type: ignore[attr-defined]
    draws = delay.draws(500, 6, np.random.default_rng(4))
    bad = draws.flags
    times = delay.times(draws, c.loads)
    run = c.run(times, Setting(flags=bad))
    W = np.asarray(code.B)
    for t in range(500):  # brute force: wait for the non-stragglers, sum what arrived
        stop = times[t][~bad[t]].max() if (~bad[t]).any() else times[t].min()
        got = times[t] <= stop
        errs.append(np.sum((W[got].sum(axis=0) - 1) ** 2) / code.k)
        assert run.durations[t] == stop
    assert np.allclose(run.error, errs) and run.lost is None
    se = np.std(errs) / np.sqrt(len(errs))
    assert abs(row["one_step_error"]["mean"]["value"] - row["expected_error"]) < 4 * se
    assert row["lost_fraction"] is None
    assert abs(bad.mean(axis=0) - p).max() < 0.08  # per-worker straggling rates
    with pytest.raises(InvalidInput, match="per-worker probabilities"):
        simulate([("frc", design("frc", n=6, s=1))], parse_delay("bernoulli"), iterations=20)


def test_communication_model_for_coded_reduce_ps_and_ring() -> None:
    from gctool.sim.network import Link, arrivals, parse_link

    link = Link(0.5, 2.0)  # 0.5 s latency, 0.5 s per vector at the receiver
    ready = np.array([[3.0, 0.0, 0.1, 5.0]])
    # sorted 0.0, 0.1, 3.0, 5.0 -> 1.0, 1.5, 4.0, 6.0 (queue, then idle link)
    assert arrivals(ready, link).tolist() == [[4.0, 1.0, 1.5, 6.0]]
    rng = np.random.default_rng(3)
    for _ in range(50):  # the closed form against the step-by-step queue
        r = rng.exponential(size=7)
        t, out = -np.inf, {}
        for j in np.argsort(r, kind="stable"):
            t = max(t, r[j] + 0.5) + 0.5
            out[j] = t
        assert np.allclose(arrivals(r[None], link)[0], [out[j] for j in range(7)])
    cr = design("coded-reduce", seed=1, fanout=2, depth=2, tolerance=[1, 0])
    rep = simulate([("cr", cr)], parse_delay("shifted-exp"), iterations=200, seed=1,
                   link=parse_link("latency=0.5,bandwidth=2"))
    rows = {r["name"]: r for r in rep.rows}
    assert {"ps cr (flat, same leaves)", "ring all-reduce n=4",
            "gc frc n=4 s=1 (Tandon, flat)"} <= set(rows)
    # direct formulas for the 4-leaf tree: level 2 (sum of both children), root (repetition)
    c = for_code(cr, "cr")
    times = np.random.default_rng(5).exponential(size=(100, 4))
    run = c.run(times, Setting(link=link))
    sub = [arrivals(times[:, 2 * g: 2 * g + 2], link).max(axis=1) for g in range(2)]
    root = arrivals(np.stack(sub, axis=1), link).min(axis=1)
    assert np.allclose(run.durations, root)
    from gctool.sim.contenders.ring import RingAllReduce

    ring = RingAllReduce(4).run(times, Setting(link=link))
    assert np.allclose(ring.durations, times.max(axis=1) + 6 * (0.5 + 1 / 8))
    for bad in ("latency=-1", "bandwidth=0", "speed=3"):
        with pytest.raises(InvalidInput):
            parse_link(bad)


def test_concurrent_models_option() -> None:
    frc = design("frc", n=6, s=1)
    rep = simulate([("frc", frc)], parse_delay("shifted-exp"), iterations=400, seed=4,
                   train="lsq", sgc=(1, 3, 1), models=4)
    assert rep.training["models"] == 4
    row = next(r for r in rep.training["rows"] if r["name"] == "frc")
    low = simulate([("frc", frc)], parse_delay("shifted-exp"), iterations=400, seed=4,
                   train="lsq", sgc=(1, 3, 1), models=1)
    assert low.training["models"] == 3  # never fewer than 1 + the largest delay (T = 2)
    one = next(r for r in low.training["rows"] if r["name"] == "frc")
    assert row["jobs_to_target"] > one["jobs_to_target"]  # four models need more jobs


def test_coded_reduce_reports_per_level_communication() -> None:
    from gctool.sim.network import parse_link

    cr = design("coded-reduce", seed=1, fanout=3, depth=2, tolerance=[1, 1])
    rep = simulate([("cr", cr)], parse_delay("shifted-exp"), iterations=100, seed=1,
                   link=parse_link("latency=0.1,bandwidth=5"), baselines=False)
    row = next(r for r in rep.rows if r["name"] == "cr")
    levels = row["levels"]
    assert [lv["level"] for lv in levels] == [1, 2] and [lv["messages"] for lv in levels] == \
        [3, 9]
    assert 2 <= levels[0]["messages_used_mean"] <= 3  # the root needs 2 of its 3 children
    assert 6 <= levels[1]["messages_used_mean"] <= 9
    assert levels[0]["finished_mean"] == pytest.approx(row["mean"]["value"])  # level 1: the root
