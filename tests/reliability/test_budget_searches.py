"""The work budget of attack's searches: the elementary threshold and the MILP are estimated
before they start (refused in one line with the estimate and ``--max-work``), the MILP is bounded
by node limits derived from the budget (deterministic, not by the clock), ``auto`` degrades to
the heuristic result found so far when the budget stops it, and ``--random`` after a budget stop
is skipped with a note instead of being charged to the spent budget.  Within the budget the
answers are the exact ones, checked against brute force.  No timed assertions."""

from __future__ import annotations

import functools
from itertools import combinations
from math import comb
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import Result

from gctool.algebra.fields import parse_field
from gctool.audit import elementary as el
from gctool.audit import milp
from gctool.audit.attack import AttackOptions, attack, threshold
from gctool.audit.oracles import OptimalOracle, make_oracle
from gctool.budget import Budget, solve_cost
from gctool.codes import design
from gctool.errors import BudgetExceeded
from gctool.io import code_bytes
from gctool.model import GradientCode

from helpers import run
from jsondoc import loads
from oracles import decodes_rational, lstsq_error, threshold_by


def refused(r: Result, *words: str) -> str:
    lines = r.stderr.rstrip("\n").split("\n")
    assert r.exit_code == 2, (r.exit_code, r.stderr)
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    assert r.stdout == ""
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


def _time(ns: float) -> str:
    """A work estimate in ns as a --max-work time."""
    return f"{ns / 1e9:.17g}s"


def _file(tmp_path: Path, code: GradientCode, name: str = "code.json") -> str:
    path = tmp_path / name
    path.write_bytes(code_bytes(code, path))
    return str(path)


def _forbid(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("the search started before its estimate was checked")


def _low_rank() -> GradientCode:
    """12 workers, rank 3 (the primal enumeration: C(12, 2) = 66 row sets)."""
    rng = np.random.default_rng(4)
    R = np.vstack([np.ones(5), rng.integers(-2, 3, size=(2, 5))])
    A = rng.integers(-2, 3, size=(12, 3))
    A[:, 0] = rng.integers(1, 3, size=12)
    return GradientCode((A @ R).astype(float), parse_field("real"), 0)


@functools.cache
def _low_rank_threshold() -> int | None:
    """The threshold of :func:`_low_rank` by brute force in rational arithmetic (seconds of
    work: computed once for the tests that compare with it)."""
    code = _low_rank()
    return threshold_by(lambda F: decodes_rational(np.asarray(code.B), F), code.n)


def _primal() -> GradientCode:
    """16 workers, rank 5 (the primal enumeration: C(16, 4) = 1,820 row sets, a few ms: more
    than the search's set-up, which a budget one ns short of 66 sets' falls below)."""
    rng = np.random.default_rng(4)
    R = np.vstack([np.ones(8), rng.integers(-2, 3, size=(4, 8))])
    A = rng.integers(-2, 3, size=(16, 5))
    A[:, 0] = rng.integers(1, 3, size=16)
    return GradientCode((A @ R).astype(float), parse_field("real"), 0)


# -- elementary: estimated before any batch or probe ---------------------------------------------
@pytest.mark.parametrize(("code", "side", "step"), [
    (design("cyclic", n=24, s=4, seed=1), "dual", "_screen"),
    (_primal(), "primal", "_null_vectors"),
])
def test_elementary_is_refused_before_its_batches_or_probes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: GradientCode, side: str,
        step: str) -> None:
    oracle = OptimalOracle(code)
    need = el.work(oracle)
    assert need > 0
    monkeypatch.setattr(el, step, _forbid)
    budget = oracle.meter.spent + need - 1  # one nanosecond short
    line = refused(run("attack", _file(tmp_path, code), "--threshold", "--method",
                       "elementary", "--max-work", _time(budget)),
                   "elementary-vector search", side, "--max-work")
    assert "needs about" in line


def test_elementary_within_its_estimate_is_exact_and_spends_no_more(
        monkeypatch: pytest.MonkeyPatch) -> None:
    code = _low_rank()
    want = _low_rank_threshold()
    oracle = OptimalOracle(code)
    base = oracle.meter.spent
    confirm = sum(oracle.set_work(t, comb(code.n, t)) for t in range(1, want))  # smaller sets
    budget = Budget(max_work=(base + oracle.set_work(0, 1) + el.work(oracle)
                              + oracle.set_work(want, 1) + confirm) / 1e9)
    out = el.elementary_threshold(OptimalOracle(code, budget=budget))
    assert out.threshold == want and out.exact


def test_elementary_confirmation_over_the_work_budget_is_a_labelled_bound() -> None:
    """The decoder's confirmation of a primal witness is checked against the work budget
    before each size: past it the answer is a bound, not a refusal after the work."""
    code = _low_rank()
    want = _low_rank_threshold()
    assert want is not None and want > 2
    oracle = OptimalOracle(code)
    full_set = oracle.set_work(0, 1)  # "does the full set decode" comes first
    meter = oracle.meter
    witness = oracle.set_work(want, 1)  # the decoder's error of the witness
    meter.limit = (meter.spent + full_set + el.work(oracle) + witness
                   + oracle.set_work(1, code.n) - 1)
    out = el.elementary_threshold(oracle)
    assert not out.exact and out.lower == 1 and out.threshold == want
    assert any("work budget" in note for note in out.notes)
    assert meter.spent <= meter.limit


# -- MILP: one deterministic estimate per solve, node limits from the budget ---------------------
@pytest.mark.parametrize("args", [["-s", "3"], ["--threshold"], ["--threshold", "--epsilon",
                                                                 "0.5"]])
def test_milp_is_refused_before_any_solve(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          args: list[str]) -> None:
    path = _file(tmp_path, design("cyclic", n=8, s=2, seed=1))
    monkeypatch.setattr(milp, "_solve", _forbid)
    line = refused(run("attack", path, *args, "--method", "milp", "--max-work", "10ms"),
                   "MILP", "branch-and-bound nodes", "--max-work")
    assert "needs about" in line


def test_milp_held_to_the_budget_is_deterministic_and_labelled() -> None:
    """A MILP the budget cuts short gives the same answer on every run (node limits, not the
    clock), spends at most the budget, and is labelled heuristic with a proved sandwich."""
    code = design("cyclic", n=16, s=4, seed=1)
    B = np.asarray(code.B)
    runs = []
    for _ in range(2):
        oracle = make_oracle(code, budget=Budget(max_work=0.3))
        found = milp.milp_worst(oracle, 6, time_limit=3600.0)
        runs.append((found.stragglers, found.error, found.upper, oracle.meter.spent))
        assert oracle.meter.spent <= 3e8
        assert not found.exact and found.budget_stopped
        assert any("work budget" in note for note in found.notes)
        F = tuple(i for i in range(code.n) if i not in found.stragglers)
        assert found.error == pytest.approx(lstsq_error(B, F), rel=1e-6)
        assert found.upper is not None and found.upper >= found.error
    assert runs[0] == runs[1]


def test_milp_within_the_budget_matches_brute_force() -> None:
    code = design("cyclic", n=8, s=2, seed=1)
    B = np.asarray(code.B)
    worst = max(lstsq_error(B, tuple(i for i in range(8) if i not in S))
                for S in combinations(range(8), 3))
    found = milp.milp_worst(make_oracle(code), 3, time_limit=3600.0)
    assert found.exact and not found.budget_stopped
    assert found.error == pytest.approx(worst, rel=1e-6)


# -- auto: a budget stop degrades to the heuristic result found so far ---------------------------
def _cyclic24(tmp_path: Path) -> str:
    return _file(tmp_path, design("cyclic", n=24, s=4, seed=1))


@pytest.mark.parametrize("work", ["30ms", "300ms"])
def test_auto_threshold_at_the_budget_is_the_labelled_heuristic_so_far(
        tmp_path: Path, work: str) -> None:
    path = _cyclic24(tmp_path)
    r = run("attack", path, "--threshold", "--max-sets", "100", "--max-work", work, "--json")
    assert r.exit_code == 0, r.stderr
    doc = loads(r.stdout)
    assert doc["exact"] is False and doc["ok"] is True
    assert doc["threshold_lower"] == 2 and doc["threshold_upper"] == 5  # T_0 = s + 1 = 5
    assert any("stopped by the budget" in note for note in doc["notes"])
    assert any("work budget stopped the exact search" in note for note in doc["notes"])
    B = np.asarray(design("cyclic", n=24, s=4, seed=1).B)
    assert not decodes_rational(B, tuple(i for i in range(24) if i not in doc["stragglers"]))
    gate = run("attack", path, "--threshold", "--max-sets", "100", "--max-work", work,
               "--require-tolerance", "4")
    assert gate.exit_code == 1  # the degraded result proves nothing above 2: not met


def test_auto_worst_at_the_budget_keeps_the_best_set_and_skips_the_random_means(
        tmp_path: Path) -> None:
    path = _cyclic24(tmp_path)
    r = run("attack", path, "-s", "9", "--max-sets", "10", "--random", "--max-work", "100ms",
            "--json")
    assert r.exit_code == 0, r.stderr
    doc = loads(r.stdout)
    assert doc["exact"] is False and doc["method"] == "greedy"
    assert doc["random"] is None
    assert any("skipped" in note and "`max_work`" in note for note in doc["notes"])
    assert any("work budget stopped the exact search" in note for note in doc["notes"])
    B = np.asarray(design("cyclic", n=24, s=4, seed=1).B)
    F = tuple(i for i in range(24) if i not in doc["stragglers"])
    assert doc["raw_error"] == pytest.approx(lstsq_error(B, F), rel=1e-6)
    text = run("attack", path, "-s", "9", "--max-sets", "10", "--max-work", "100ms", "--random")
    assert text.exit_code == 0 and "heuristic" in text.stdout
    assert "raise --max-work" in text.stdout  # the notes name the CLI's flags


def test_auto_with_nothing_found_before_the_budget_is_refused(tmp_path: Path) -> None:
    refused(run("attack", _cyclic24(tmp_path), "-s", "9", "--max-sets", "10", "--max-work",
                "3ms"), "work budget", "--max-work")


@pytest.mark.parametrize(("n", "s", "seed"), [(8, 2, 1), (9, 3, 2), (10, 2, 3)])
def test_auto_within_the_budget_is_exact_and_unchanged(n: int, s: int, seed: int) -> None:
    """auto's answers within the default budget: exact, equal to exhaustive enumeration and to
    brute force (the cyclic code's threshold is s + 1 by design), with no budget note."""
    code = design("cyclic", n=n, s=s, seed=seed)
    B = np.asarray(code.B)
    t = threshold(code)
    assert t.exact and t.threshold == s + 1
    assert t.threshold == threshold(code, options=AttackOptions(method="exhaustive")).threshold
    w = attack(code, s + 1, random=True)
    worst = max(lstsq_error(B, tuple(i for i in range(n) if i not in S))
                for S in combinations(range(n), s + 1))
    assert w.exact and w.raw_error == pytest.approx(worst, rel=1e-6) and w.random is not None
    assert not any("budget" in note for note in t.notes + w.notes)


def test_auto_within_the_budget_is_exact_on_a_low_rank_code() -> None:
    """The same for the low-rank code (its threshold by brute force in rational arithmetic)."""
    t = threshold(_low_rank())
    assert t.threshold == _low_rank_threshold() and t.exact
    assert not any("budget" in note for note in t.notes)


def test_random_means_that_do_not_fit_are_skipped_not_charged() -> None:
    code = design("cyclic", n=12, s=2, seed=1)
    oracle = make_oracle(code)
    from gctool.audit.attack.figures import random_means
    from gctool.audit.randomized import mean_work

    opts = AttackOptions(random=True, samples=1000, budget=Budget(max_sets=10))
    need = mean_work(oracle, 4, 0.1, budget=10, samples=1000)
    meter = oracle.meter
    meter.limit = meter.spent + need - 1
    notes: list[str] = []
    spent = meter.spent
    assert random_means(oracle, 4, 0.1, 1.0, opts, notes) is None
    assert meter.spent == spent and "skipped" in notes[0]
    meter.limit = meter.spent + need
    means = random_means(oracle, 4, 0.1, 1.0, opts, [])
    assert means is not None and means.uniform is not None and means.iid is not None
    assert meter.spent <= meter.limit


def test_budget_refusal_is_a_budget_error_with_what_was_proved() -> None:
    exc = BudgetExceeded("over", proved=3)
    assert exc.proved == 3 and str(exc) == "over" and exc.param == "max_work"


# -- bound on a file: the rank and the rank bound's witnesses, before they start ---------------
def test_bound_estimates_the_rank_and_each_witness(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from gctool.bounds import rank as rank_bound

    rng = np.random.default_rng(5)
    code = GradientCode(rng.standard_normal((10, 10)), parse_field("real"), 3)  # rank 10 > 7
    path = _file(tmp_path, code)
    one = rank_bound.FACTORISATION_NS + solve_cost(10, 10)  # a small B: the share is 1
    assert rank_bound.work(code) == 4 * one and rank_bound.work(code, second=True) == 5 * one
    refused(run("bound", path, "--max-work", _time(4 * one - 1)), "the rank of B and its witness")
    monkeypatch.setattr(rank_bound, "witnesses_fail", _forbid)  # refused before any witness
    refused(run("bound", path, "--max-work", _time(5 * one - 1)), "two witnesses")
    monkeypatch.undo()
    r = run("bound", path, "--max-work", _time(5 * one))
    assert r.exit_code in (0, 1), r.stderr
