"""The one work budget of ``gctool simulate``: the whole run (every contender, the baselines
still to be designed, the training) is estimated before any of it starts and refused in one
line when above ``--max-work``; what the estimate cannot know is charged to one meter shared by
every contender.  Within the budget the results are those of the contenders run directly."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sim_reference import contenders_for

from gctool.budget import Budget, Meter
from gctool.codes import design
from gctool.errors import BudgetExceeded
from gctool.sim import lineup
from gctool.sim import run as sim_run
from gctool.sim.budget import REMEDY, cell_cost
from gctool.sim.contenders import Contender, Setting
from gctool.sim.delays import parse_delay

from helpers import run as _run
from refusals import design_file, forbid, refused


def plan_run(contenders: list[Contender], baselines: list[lineup.Baseline], rounds: int,
             sgc: Any, train: bool) -> Any:
    return lineup.plan_run(contenders, baselines, rounds, Setting(), sgc, train)


def _kinds() -> list[type[Contender]]:
    """Every kind of contender (the subclasses of Contender, recursively)."""
    out, todo = [], list(Contender.__subclasses__())
    while todo:
        cls = todo.pop()
        out.append(cls)
        todo += cls.__subclasses__()
    return out


def _time(ns: float) -> str:
    """An estimate in ns as a --max-work time."""
    return f"{ns / 1e9:.6g}s"


@pytest.fixture
def nothing_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail if a contender runs or a baseline is designed."""
    for cls in _kinds():
        monkeypatch.setattr(cls, "run", forbid)
    monkeypatch.setattr(lineup.BCCBaseline, "build", forbid)
    monkeypatch.setattr(lineup, "sgc_baselines", forbid)


def test_a_run_over_the_budget_is_refused_before_any_work(tmp_path: Path,
                                                         nothing_runs: None) -> None:
    path = design_file(tmp_path, "frc.json", "frc", n=64, s=1)
    line = refused(_run("simulate", path, "--iterations", "1000", "--seed", "1",
                                  "--max-work", "10ms"))
    assert "simulating 6 parts for 1,000 rounds" in line  # the file and 5 baselines
    assert "needs about" in line and "--max-work" in line and "budget of 10 ms" in line


def test_the_refusal_names_the_largest_part(tmp_path: Path, nothing_runs: None) -> None:
    path = design_file(tmp_path, "m.json", "m-sgc", n=8, burst=1, window=40, lam=3)
    line = refused(_run("simulate", path, "--iterations", "2000", "--no-baselines",
                                  "--max-work", "1ms"))
    assert "jobs in flight" in line and "m.json" in line


def test_the_training_is_estimated_before_the_rounds(tmp_path: Path,
                                                     nothing_runs: None) -> None:
    path = design_file(tmp_path, "cyc.json", "cyclic", n=12, s=2, seed=1)
    args = ["simulate", path, "--iterations", "300", "--seed", "1", "--no-baselines"]
    code = design("cyclic", n=12, s=2, seed=1)
    c = lineup.file_contenders([("x", code)])
    alone = plan_run(c, [], 300, None, False).total
    with_training = plan_run(c, [], 300, None, True).total
    assert with_training > 2 * alone
    budget_between = _time((alone + with_training) / 2)
    line = refused(_run(*args, "--train", "--max-work", budget_between))
    assert "training" in line


def test_one_budget_for_every_contender(tmp_path: Path, nothing_runs: None) -> None:
    """Each part alone fits, the run does not: refused."""
    path = design_file(tmp_path, "frc.json", "frc", n=48, s=2)
    code = design("frc", n=48, s=2)
    plan = plan_run(lineup.file_contenders([("x", code)]),
                    lineup.baselines_of([("x", code)]), 500, None, False)
    largest = max(w for _, w in plan.items)
    assert len(plan.items) == 6 and plan.total > 2 * largest
    refused(_run("simulate", path, "--iterations", "500", "--seed", "1",
                           "--max-work", _time(2 * largest)))


def test_frc_4096_is_estimated_before_its_baselines_are_designed(nothing_runs: None) -> None:
    """The README's large case: 1000 rounds of an FRC file with 4096 workers and its
    baselines, refused by the default budget before anything is designed or run."""
    code = design("frc", n=4096, s=1)
    with pytest.raises(BudgetExceeded, match="`max_work`") as err:
        sim_run.simulate([("frc4096", code)], parse_delay("shifted-exp"), iterations=1000,
                         seed=1, budget=Budget())
    assert err.value.kind == "work" and err.value.needed is not None
    assert err.value.needed > Budget().max_work  # the estimate, in seconds, refused it
    plan = plan_run(lineup.file_contenders([("f", code)]),
                    lineup.baselines_of([("f", code)]), 1000, None, False)
    assert 1e10 < plan.total < 1e12


@pytest.mark.parametrize("args", [
    ["--delay", "shifted-exp"],
    ["--delay", "markov:p=0.1,q=0.3,slow=5", "--protocol", "authors"],
    ["--delay", "trace:london", "--erasurehead", "2"],
])
def test_within_the_budget_the_results_are_the_contenders_own(tmp_path: Path,
                                                              args: list[str]) -> None:
    """The report's rows are those of the contenders run directly, without a meter, on the
    same draws; and the default budget gives the same document as a huge one."""
    path = design_file(tmp_path, "frc.json", "frc", n=12, s=2)
    common = ["simulate", path, "--iterations", "300", "--seed", "7", "--json", *args]
    doc = json.loads(_run(*common).stdout)
    assert doc == json.loads(_run(*common, "--max-work", "1000h").stdout)
    code = design("frc", n=12, s=2)
    delay = parse_delay(args[1])
    mu = 0.2 if "authors" in args else None
    contenders = contenders_for([(path, code)], True, None, 7)
    if "--erasurehead" in args:
        from gctool.sim.contenders.erasurehead import ErasureHead

        contenders.append(ErasureHead(code, path, 2))
    draws = delay.draws(300, 12, np.random.default_rng(7))
    assert [r["name"] for r in doc["rows"]] == [c.name for c in contenders]
    for c, row in zip(contenders, doc["rows"], strict=True):
        run = c.run(delay.times(draws, c.loads), Setting(mu=mu, flags=draws.flags))
        assert row["mean"]["value"] == pytest.approx(float(np.mean(run.durations)), rel=1e-12)
        assert row["deadline_misses"] == run.deadline_misses


def test_the_meter_counts_the_arrival_times_and_the_sparse_set_up() -> None:
    from gctool.sim.stopping import StopRule
    from gctool.sim.stopping.sparse import SPARSE_SETUP_FACTOR

    code = design("sr-sgc", n=600, seed=1, burst=1, window=2, lam=15)  # cyclic, s = 8
    meter = Budget().meter("simulating a test", REMEDY)
    rule = StopRule(code, meter=meter)
    assert rule.dual_method == "sparse"
    assert meter.spent == SPARSE_SETUP_FACTOR * 600 * (code.s + 8) ** 2
    meter.limit = meter.spent + 1
    meter.charge(1, "one more")
    with pytest.raises(BudgetExceeded, match=r"simulating a test \(the arrival times"):
        meter.charge(cell_cost(10, 600), "the arrival times")


def test_the_meter_is_shared_by_the_contenders_of_a_run(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[Any] = []

    def spying(real: Any) -> Any:
        def spy(self: Contender, times: np.ndarray, setting: Setting) -> Any:
            seen.append(setting.meter)
            return real(self, times, setting)
        return spy

    for cls in _kinds():
        if "run" in vars(cls):
            monkeypatch.setattr(cls, "run", spying(vars(cls)["run"]))
    path = design_file(tmp_path, "frc.json", "frc", n=12, s=2)
    assert _run("simulate", path, "--iterations", "50", "--seed", "1").exit_code == 0
    assert len(seen) == 6 and all(m is seen[0] for m in seen)
    assert isinstance(seen[0], Meter) and seen[0].spent >= 6 * cell_cost(50, 12)


@pytest.mark.parametrize("field", ["real", "complex"])
def test_rounds_no_fast_path_decides_are_estimated_as_the_naive_search(field: str) -> None:
    """A random dense code with more arrivals at the cap than B has columns (n=30, k=24,
    s=4): no prefix QR decides a round and the cap is below the dual walk's, so every round is
    the generic decoder's binary search; the estimate is the work the meter is charged,
    within 2x (issue #28)."""
    from gctool.algebra.fields import parse_field
    from gctool.model import GradientCode
    from gctool.sim.stopping import StopRule
    from gctool.sim.stopping.rule import rule_cost

    rng = np.random.default_rng(1)
    B = rng.standard_normal((30, 24))
    if field == "complex":
        B = B + 1j * rng.standard_normal((30, 24))
    code = GradientCode(B, parse_field(field), 4, "custom")
    meter = Budget().meter("simulating a test", REMEDY)
    rule, rounds, cap = StopRule(code, meter=meter), 40, 26
    times = rng.exponential(size=(rounds, 30))
    exact = rule.earliest(times, cap)[2]
    assert rule.fallbacks == rounds and exact.all()  # every round took the naive path
    estimate = rule_cost(code, rounds, cap)
    assert 0.5 < meter.spent / estimate < 2


def test_a_code_no_set_decodes_is_estimated_as_what_runs() -> None:
    """A Bernoulli code (n=64, s=4) with partitions nobody holds and idle workers: not even
    all n workers decode, so no dual walk (cap 60 >= DUAL_FROM); every round is a QR of the
    cap's prefix, which holds an idle worker, then the generic decoder's one failing decode
    of it.  The estimate is the work the meter is charged, within 2x (issue #28; read 0.04
    when every round was estimated as two dual residuals)."""
    from gctool.sim.stopping import StopRule
    from gctool.sim.stopping.dual import DUAL_FROM
    from gctool.sim.stopping.rule import rule_cost

    code = design("bgc", n=64, s=4, seed=1)
    assert code.params["empty_partitions"] and code.params["idle_workers"] > code.s
    meter = Budget().meter("simulating a test", REMEDY)
    rule, rounds, cap = StopRule(code, meter=meter), 40, 60
    assert cap >= DUAL_FROM and rule._walk is None
    times = np.random.default_rng(1).exponential(size=(rounds, 64))
    assert not rule.earliest(times, cap)[2].any()
    assert rule.fallbacks == rounds  # every round went on to the naive path
    assert 0.5 < meter.spent / rule_cost(code, rounds, cap) < 2


def test_complex_probes_larger_than_k_are_estimated_as_the_generic_decoder() -> None:
    """The authors' rule asks whether the workers arrived decode (one probe a round); over C
    a probe of more workers than B has columns (n=30, k=24, probes of 27) goes to the
    generic decoder, not the QR.  The estimate (probes counted at all n workers) is the work
    the meter is charged, within 2x (issue #28; read 0.05 when counted as QRs)."""
    from gctool.algebra.fields import parse_field
    from gctool.model import GradientCode
    from gctool.sequential.model import from_bits
    from gctool.sim.stopping import StopRule
    from gctool.sim.stopping.rule import rule_cost

    rng = np.random.default_rng(1)
    B = rng.standard_normal((30, 24)) + 1j * rng.standard_normal((30, 24))
    code = GradientCode(B, parse_field("complex"), 4, "custom")
    meter = Budget().meter("simulating a test", REMEDY)
    rule, probes = StopRule(code, meter=meter), 20
    for _ in range(probes):
        arrived = np.zeros(30, bool)
        arrived[rng.choice(30, 27, replace=False)] = True
        assert rule.decodes_mask(from_bits(arrived))
    assert 0.5 < meter.spent / rule_cost(code, 0, 26, probes) < 2


def test_rounds_near_the_tolerance_are_estimated_as_the_naive_search() -> None:
    """A round of the dual walk whose residual one arrival below the cap lies within MARGIN of
    the tolerance goes to QR and then the generic decoder's search, which costs hundreds of
    walked rounds.  The residual of one straggler past the cap is about a chi-square of one
    degree of freedom (P(residual < x) near NEAR_SCALE sqrt(x)), so the estimate counts the
    share near_share of the rounds as the search: the meter's charge over 400 rounds of real
    cyclic n=256 s=8, 4 of them near the tolerance, is the estimate's within 2x (issue #28;
    read 3.0 when only the walk was counted)."""
    from math import sqrt

    from gctool.sim.stopping import StopRule
    from gctool.sim.stopping.dual import NEAR_SCALE, dual_residual
    from gctool.sim.stopping.rule import rule_cost

    code = design("cyclic", n=64, s=4, seed=1)
    dual = StopRule(code)._dual
    assert dual is not None
    rng = np.random.default_rng(3)
    found = np.array([dual_residual(dual, rng.choice(64, 5, replace=False))
                      for _ in range(2000)])
    for x in (1e-3, 1e-2):
        assert 0.5 < np.mean(found < x) / (NEAR_SCALE * sqrt(x)) < 2

    code = design("cyclic", n=256, s=8, seed=1)
    meter = Budget().meter("simulating a test", REMEDY)
    rule, rounds, cap = StopRule(code, meter=meter), 400, 248
    rule.earliest(np.random.default_rng(1).exponential(size=(rounds, 256)), cap)
    assert rule.fallbacks == 4  # near the tolerance: the generic decoder's search
    assert 0.5 < meter.spent / rule_cost(code, rounds, cap) < 2


@pytest.mark.parametrize("field", ["real", "complex"])
def test_the_authors_probes_are_estimated_at_their_sizes(field: str) -> None:
    """The authors' rule asks each round whether the workers arrived by (1 + mu) x the first
    arrival decode: at mu 0.2 a few of them, so the dual residual of a real code solves for
    most workers as stragglers, and a complex code's QR has few columns.  The delays are drawn
    before the estimate, so it counts each distinct set at its size (the same
    authors_arrived the rule asks): the meter's charge is the estimate's within 1.25x (issue
    #28; read 1.44 for real cyclic n=64 s=4 counted at s stragglers, 0.35 for complex n=30
    k=24 counted at all n workers)."""
    from gctool.algebra.fields import parse_field
    from gctool.model import GradientCode
    from gctool.sim.contenders.code import CodeFile

    rng = np.random.default_rng(1)
    if field == "real":
        code = design("cyclic", n=64, s=4, seed=1)
    else:
        B = rng.standard_normal((30, 24)) + 1j * rng.standard_normal((30, 24))
        code = GradientCode(B, parse_field("complex"), 4, "custom")
    rounds, c = 100, CodeFile(code, "file")
    E = rng.exponential(size=(rounds, code.n))

    def times(loads: np.ndarray) -> np.ndarray:
        return loads[None, :] * (1.0 + E)

    meter = _metered(c, times, 0.2)
    estimate = c.cost(rounds, Setting(mu=0.2, times=times)) - cell_cost(rounds, code.n)
    assert 0.8 < meter.spent / estimate < 1.25


def test_simulate_estimates_the_authors_probes_on_its_draws(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """simulate's estimate reads the sizes of the authors' probes from the run's draws."""
    from gctool.sim.stopping import rule

    seen: list[Any] = []
    real = rule.rule_cost

    def spy(code: Any, rounds: int, cap: int, probes: Any = 0) -> float:
        seen.append(probes)
        return real(code, rounds, cap, probes)

    monkeypatch.setattr(rule, "rule_cost", spy)
    path = design_file(tmp_path, "c.json", "cyclic", n=12, s=2, seed=1)
    assert _run("simulate", path, "--iterations", "50", "--seed", "1", "--no-baselines",
                "--protocol", "authors", "--mu", "0.2").exit_code == 0
    sizes = [p for p in seen if isinstance(p, np.ndarray)]
    assert len(sizes) == 1 and sizes[0].max() == 12 and 1 <= len(sizes[0]) <= 51


def test_a_code_of_full_support_that_no_set_decodes_is_estimated_as_what_runs() -> None:
    """An sbc code with fewer workers than partitions (n=64, k=90) holds every partition,
    yet its rank (64) leaves the targets out: no dual walk, a QR a round.  The estimate
    factorises so small a code (as the rule's set-up does) and counts the QR: the meter's
    charge is the estimate's within 2x (issue #28; read 0.35 when estimated as the dual
    walk)."""
    from gctool.sim.stopping import StopRule
    from gctool.sim.stopping.rule import decodes_in_full, rule_cost

    code = design("sbc", n=64, k=90, s=4, seed=1)
    assert int(code.replication.min()) >= code.m and not decodes_in_full(code)
    meter = Budget().meter("simulating a test", REMEDY)
    rule, rounds, cap = StopRule(code, meter=meter), 100, 60
    assert rule._walk is None
    assert not rule.earliest(np.random.default_rng(1).exponential(size=(rounds, 64)), cap)[2].any()
    assert 0.5 < meter.spent / rule_cost(code, rounds, cap) < 2



def _draw_times(n: int, rounds: int) -> Any:
    """The run's times of ``rounds`` rounds of ``n`` workers: loads x (1 + Exp(1)), seeded."""
    E = np.random.default_rng(1).exponential(size=(rounds, n))

    def times(loads: np.ndarray) -> np.ndarray:
        return loads[None, :] * (1.0 + E)

    return times


def _metered(c: Contender, times: Any, mu: float | None) -> Meter:
    """The meter of contender ``c``'s run on ``times`` (under ``mu``: the authors' rule)."""
    meter = Budget().meter("simulating a test", REMEDY)
    c.run(times(c.loads), Setting(mu=mu, meter=meter))
    return meter


def _asked_sets(monkeypatch: pytest.MonkeyPatch) -> dict[int, set[int]]:
    """The sets (masks) every stopping rule is asked whether they decode, by rule, in the order
    the rules are first asked."""
    from gctool.sim.stopping.rule import StopRule

    asked: dict[int, set[int]] = {}
    real = StopRule.decodes_mask

    def spy(self: StopRule, mask: int) -> bool:
        asked.setdefault(id(self), set()).add(mask)
        return real(self, mask)

    monkeypatch.setattr(StopRule, "decodes_mask", spy)
    return asked


def _partial_run(code: Any, rounds: int, mu: float | None) -> tuple[Any, Any, Meter]:
    """The partial-work contender of ``code``, the run's times and the meter of its run."""
    from gctool.sim.contenders.partial import Partial

    c = Partial.of(code, "file")
    times = _draw_times(code.n, rounds)
    return c, times, _metered(c, times, mu)


def test_partial_work_walks_are_estimated_where_they_stop() -> None:
    """A real cyclic code sending a message every two partitions (n=24 s=3, 72 messages):
    partial messages decode far below the cap (every message), so the messages' dual walk
    walks WALK arrivals down, then the generic decoder searches the round.  The estimate reads
    where the walks stop on a sample of the run's draws (the rule's own verdicts: the prefixes
    the run finds, or WALK below the cap for a walk that goes to its end) and counts them: the
    meter's charge (the one-message code's rounds, which partial work runs too, and the
    messages') is the estimate's within 2x (issue #28; read 14 when every walk was counted two
    residuals)."""
    from gctool.sim.stopping import StopRule
    from gctool.sim.stopping.dual import WALK
    from gctool.sim.stopping.rule import STOP_SAMPLE

    code = design("cyclic", n=24, s=3, seed=1, order="rotated", message_size=2)
    rounds = 40
    c, times, meter = _partial_run(code, rounds, None)
    setting = Setting(times=times)
    stops = c.stops(setting)
    assert stops is not None and len(stops) == min(rounds, STOP_SAMPLE)
    mt = c.message_times(times(c.loads), setting)
    rows = np.unique(np.linspace(0, rounds - 1, len(stops)).astype(np.intp))
    M = c.messages.n
    p = StopRule(c.messages).earliest(mt[rows], M)[1]
    walked = p <= M - WALK
    assert walked.any()
    assert np.array_equal(np.where(walked, M - WALK, p), stops)
    estimate = c.cost(rounds, setting) - 2 * cell_cost(rounds, code.n)
    assert 0.5 < meter.spent / estimate < 2


def test_partial_work_probes_are_estimated_at_their_sizes(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Under the authors' rule the master asks whether the messages delivered by the wait
    decode (the one-message code is not run): the estimate counts each distinct set at its
    size, read off the run's draws (the sets the run asks); a set missing more messages than B
    has columns has no dual residual (G_SS is singular) and goes on to the generic decoder, as
    it runs.  The meter's charge is the estimate's within 2x (issue #28; read 3.5 when counted
    at s stragglers)."""

    code = design("cyclic", n=24, s=3, seed=1, order="rotated", message_size=2)
    asked = _asked_sets(monkeypatch)
    c, times, meter = _partial_run(code, 40, 0.2)
    setting = Setting(mu=0.2, times=times)
    sizes = np.asarray(c.probes(40, setting))
    masks = set().union(*asked.values())
    assert sorted(sizes.tolist()) == sorted(bin(m).count("1") for m in masks)
    assert 0.5 < meter.spent / (c.cost(40, setting) - cell_cost(40, code.n)) < 2


def test_a_tree_whose_level_codes_lack_rank_is_estimated_as_the_generic_decoder() -> None:
    """CodedReduce with fan-out 8 and tolerance 2 (cyclic level codes of rank 6): every parent
    asks the prefixes of its 8 children, whose QR is rank-deficient at the cap, so every
    parent-round goes to the generic decoder's search, which decodes each distinct set of
    children once.  The estimate counts the searches (the QR's verdict needs the rank of the
    level code) and their distinct sets: the meter's charge is the estimate's within 2x
    (issue #28; read 14.5 when counted as QRs)."""
    from gctool.sequential.trees import levels_of
    from gctool.sim.contenders.tree import Tree
    from gctool.sim.stopping.rule import rank_of

    code = design("coded-reduce", fanout=8, depth=2, tolerance=2, seed=1)
    assert all(rank_of(lv) == 6 for lv in levels_of(code))
    c, rounds = Tree(code, "tree"), 100
    times = _draw_times(code.n, rounds)
    meter = _metered(c, times, None)
    estimate = c.cost(rounds, Setting(times=times)) - cell_cost(rounds, code.n)
    assert 0.5 < meter.spent / estimate < 2


def test_a_trees_probes_are_estimated_at_their_sizes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Under the authors' rule a parent asks whether its children arrived by the wait decode
    (then all of them), no prefixes: the deepest parents' sets are read off the draws (the
    sets their rule asks, each once), the others' at most one per subset of the children.
    The meter's charge is the estimate's within 2x (issue #28; read 0.06 when every parent
    was counted two sets and a prefix search)."""
    from gctool.sim.contenders.tree import Tree

    code = design("coded-reduce", fanout=8, depth=2, tolerance=2, seed=1)
    asked = _asked_sets(monkeypatch)
    c, rounds = Tree(code, "tree"), 100
    times = _draw_times(code.n, rounds)
    meter = _metered(c, times, 0.2)
    setting = Setting(mu=0.2, times=times)
    deepest = np.asarray(c.probes(rounds, 1, 8, True, setting))
    first = next(iter(asked.values()))  # the deepest parents' rule asks first
    assert sorted(deepest.tolist()) == sorted(bin(m).count("1") for m in first)
    assert 0.5 < meter.spent / (c.cost(rounds, setting) - cell_cost(rounds, code.n)) < 2


def test_a_code_decoding_far_below_its_cap_is_estimated_where_it_stops() -> None:
    """A tree's leaf code on a flat parameter server (the Kronecker product of two cyclic
    codes n=8 s=2: 64 workers, s = 8, rank 36) mostly decodes well below its cap of 56
    arrivals, so the dual walk goes WALK arrivals down and leaves the round to the QR
    (rank-deficient at the cap) and the generic decoder.  The estimate reads where the walks
    stop on a sample of the draws (the prefixes the run finds, or WALK below the cap): the
    meter's charge is the estimate's within 2x (issue #28; read 19.6 when every round was
    counted two residuals)."""
    from gctool.sim.contenders.code import CodeFile
    from gctool.sim.stopping import StopRule
    from gctool.sim.stopping.dual import WALK
    from gctool.sim.stopping.rule import STOP_SAMPLE

    code = design("coded-reduce", fanout=8, depth=2, tolerance=2, seed=1)
    c, rounds = CodeFile(code, "flat"), 60
    times = _draw_times(code.n, rounds)
    meter = _metered(c, times, None)
    setting = Setting(times=times)
    stops = c.stops(setting)
    assert stops is not None and len(stops) == STOP_SAMPLE
    rows = np.unique(np.linspace(0, rounds - 1, STOP_SAMPLE).astype(np.intp))
    cap = code.n - code.s
    p = StopRule(code).earliest(times(c.loads)[rows], cap)[1]
    walked = p <= cap - WALK
    assert walked.mean() > 0.5
    assert np.array_equal(np.where(walked, cap - WALK, p), stops)
    assert 0.5 < meter.spent / (c.cost(rounds, setting) - cell_cost(rounds, code.n)) < 2


@pytest.mark.parametrize("mu", [None, 0.2])
def test_nested_levels_probes_are_estimated_at_their_sizes(
        mu: float | None, monkeypatch: pytest.MonkeyPatch) -> None:
    """A nested complex code (n=32, levels 1,2,4: 96 messages, B of 32 columns) asks, every
    round, whether the messages of the levels up to l delivered by its stop decode: sets of
    one level's messages go to the QR, larger ones to the generic decoder.  The estimate reads
    them off the draws (the stop taken at its latest: the wait, or the one-message code's
    cap), each distinct set once (under mu at least the sets the run asks): the meter's
    charge is the estimate's within 2x (issue #28; under mu 0.2 read 0.42 when every round
    was counted L + 1 sets of every message)."""
    from gctool.sim.contenders.nested import Nested

    code = design("nested", n=32, levels=[1, 2, 4], seed=1)
    asked = _asked_sets(monkeypatch)
    c, rounds = Nested.of(code, "file"), 100
    times = _draw_times(code.n, rounds)
    meter = _metered(c, times, mu)
    setting = Setting(mu=mu, times=times)
    sizes = np.asarray(c.probes(rounds, setting))
    if mu is not None:  # the sets delivered by the wait, or every message: those asked
        masks = set().union(*asked.values())
        assert len(masks) <= len(sizes) <= 2 * len(masks)
    assert 0.5 < meter.spent / (c.cost(rounds, setting) - 2 * cell_cost(rounds, code.n)
                                + (cell_cost(rounds, code.n) if mu is not None else 0)) < 2


def test_a_larger_code_whose_rank_leaves_the_targets_out_is_estimated_as_what_runs() -> None:
    """An sbc code n=300 k=450 (full support, rank 300 < k): its SVD (about 18 ms) is above
    FULL_CHECK_NS, so the estimate asks one QR of [B^T | T^T] (the residual of the targets on
    the rows of B, dual_of's verdict) instead of taking the code for one that decodes: no
    dual walk, as the rule's set-up finds, and a QR a round.  The meter's charge is the
    estimate's within 1.25x (issue #28; read 1.9 when estimated as the dual walk)."""
    from gctool.budget import solve_cost
    from gctool.sim.stopping import StopRule
    from gctool.sim.stopping.rule import FULL_CHECK_NS, decodes_in_full, rule_cost

    code = design("sbc", n=300, k=450, s=4, seed=1)
    assert solve_cost(300, 450) > FULL_CHECK_NS and int(code.replication.min()) >= code.m
    meter = Budget().meter("simulating a test", REMEDY)
    rule, rounds, cap = StopRule(code, meter=meter), 40, 296
    assert rule._walk is None and not decodes_in_full(code)
    rule.earliest(np.random.default_rng(1).exponential(size=(rounds, 300)), cap)
    assert 0.8 < meter.spent / rule_cost(code, rounds, cap) < 1.25


@pytest.mark.parametrize("scheme", ["sr-sgc", "m-sgc"])
@pytest.mark.parametrize("mu", [None, 0.2])
def test_a_schedules_decodes_are_estimated_on_its_patterns(
        scheme: str, mu: float | None, monkeypatch: pytest.MonkeyPatch) -> None:
    """A sequential code's decodes ask, each distinct set once (the rule's cache), the sets its
    steps build from the rounds' straggler patterns (SR-SGC: a job's delivered workers with
    its reattempts; M-SGC: the workers of each D2 group, one a job here, B = 1: those outside
    a round's pattern).  The patterns and the steps follow from the draws and the (B, W, λ)
    model alone (no decoding), so the estimate replays them: the sets the run asks, at their
    sizes (under the authors' rule most patterns leave the model: nobody straggles, one set).
    The
    meter's charge is the estimate's within 1.25x (issue #28; under mu 0.2 read 0.28-0.37 when
    every round was counted a set of s stragglers; SR-SGC under gctool's rule read 1.29 at
    n = 128 and 0.58 at n = 16 when each round's pattern was counted, not the job's set),
    less the estimate's own replay, which the run does not repeat."""
    from gctool.sim.contenders.schedule import Schedule

    code = (design(scheme, n=64, seed=1, burst=1, window=3, lam=4) if scheme == "sr-sgc"
            else design(scheme, n=64, burst=1, window=3, lam=4))
    asked = _asked_sets(monkeypatch)
    c, rounds = Schedule(code, "file"), 300
    times = _draw_times(code.n, rounds)
    meter = _metered(c, times, mu)
    setting = Setting(mu=mu, times=times)
    sizes = np.sort(np.asarray(c.probes(rounds, setting)))
    (masks,) = asked.values()
    run = np.sort([bin(mask).count("1") for mask in masks])
    if scheme == "sr-sgc":
        assert np.array_equal(sizes, run)
    else:  # a D2 group of workers whose D1 counts fell short is a pattern's set less them
        assert abs(len(sizes) - len(run)) <= max(2, len(run) // 20)
    run_part = c.cost(rounds, setting) - cell_cost(rounds, code.n) - c.replay_cost(rounds, setting)
    assert 0.8 < meter.spent / run_part < 1.25


def test_a_schedules_estimate_charges_its_own_replay_and_every_asked_mask(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The estimate of an SR-SGC file replays the run's rounds before the run (Schedule.probes):
    every round that replay visits, counted by a spy, is charged at the schedule's price of a
    round (no per-worker entries), and every set the run's decodes ask by mask, counted by a
    spy, is charged its unpacking (MASK_COST) besides its dual verdict (issue #28: neither was
    charged; sr-sgc n=128 (1, 3, 4) 3000 rounds read CPU / estimate 1.4-1.8 on the CLI, the
    replay about a quarter of the estimate)."""
    from gctool.sim.budget import schedule_cost
    from gctool.sim.contenders import schedule
    from gctool.sim.stopping.dual import verdict_cost
    from gctool.sim.stopping.rule import MASK_COST, rule_cost

    code = design("sr-sgc", n=16, seed=1, burst=1, window=3, lam=4)
    c, rounds = schedule.Schedule(code, "file"), 200
    times = _draw_times(code.n, rounds)
    setting = Setting(times=times)
    replayed = [0]
    real = schedule.replay

    def spy(scheme: Any, at: np.ndarray, choose: Any) -> Any:
        replayed[0] += len(at)
        return real(scheme, at, choose)

    monkeypatch.setattr(schedule, "replay", spy)
    estimate = c.cost(rounds, setting)
    assert replayed[0] == rounds
    sizes = np.asarray(c.probes(rounds, setting))
    assert estimate == (cell_cost(rounds, code.n) + schedule_cost(rounds, code.n, c.delay, False)
                        + rounds * schedule_cost(1, code.n, 0, False)
                        + rule_cost(code, 0, 0, sizes))
    asked = _asked_sets(monkeypatch)
    _metered(c, times, None)
    (masks,) = asked.values()
    verdicts = sum(verdict_cost(code.n - bin(mask).count("1"), code.n, True) for mask in masks)
    assert rule_cost(code, 0, 0, sizes) - rule_cost(code, 0, 0, sizes[:0]) == pytest.approx(
        len(masks) * MASK_COST + verdicts)


@pytest.mark.parametrize("scheme", ["sr-sgc", "m-sgc"])
@pytest.mark.parametrize("mu", [None, 0.2])
def test_a_schedules_replay_is_charged_as_it_runs(
        scheme: str, mu: float | None, monkeypatch: pytest.MonkeyPatch) -> None:
    """The schedule's charge counts what its replay runs: every round the waiting rule's choice
    and the scheme's step on bit masks (under gctool's rule the earliest admissible arrival,
    array operations on the n arrivals), and only M-SGC's step updates an entry per worker of
    every job in flight.  The rounds and the entries the step visits are counted by a spy and
    priced at the measured constants; the charge is theirs within 2x (issue #28; the charge was
    n x (T + 1) entries a round at PY_OP_COST for both schemes: read 4.3 (SR-SGC) and 2.5
    (M-SGC) under mu 0.2 at n = 64, about 5x above the CPU it stood for)."""
    from gctool.sequential.sgc import MSGC, SRSGC
    from gctool.sim.budget import (
        ARRIVAL_COST,
        EARLIEST_COST,
        ENTRY_COST,
        SCHEDULE_ROUND_COST,
    )
    from gctool.sim.contenders.schedule import Schedule

    code = (design(scheme, n=64, seed=1, burst=1, window=3, lam=4) if scheme == "sr-sgc"
            else design(scheme, n=64, burst=1, window=3, lam=4))
    counted = {"rounds": 0, "entries": 0}
    charged: list[float] = []
    for made in (SRSGC, MSGC):
        real = made.step

        def spy(self: Any, r: int, state: Any, history: Any, S: int, real: Any = real) -> Any:
            counted["rounds"] += 1
            if isinstance(self, MSGC):
                counted["entries"] += self.n * sum(e is not None for e in self._entries(state))
            return real(self, r, state, history, S)

        monkeypatch.setattr(made, "step", spy)
    real_charge = Meter.charge

    def record(self: Meter, work: float, what: str = "") -> None:
        if "schedule" in what:
            charged.append(work)
        real_charge(self, work, what)

    monkeypatch.setattr(Meter, "charge", record)
    c, rounds = Schedule(code, "file"), 300
    _metered(c, _draw_times(code.n, rounds), mu)
    per_round = SCHEDULE_ROUND_COST + (EARLIEST_COST + code.n * ARRIVAL_COST
                                       if mu is None else 0)
    work = counted["rounds"] * per_round + counted["entries"] * ENTRY_COST
    assert counted["rounds"] == rounds and (counted["entries"] > 0) == (scheme == "m-sgc")
    assert 0.5 < sum(charged) / work < 2
