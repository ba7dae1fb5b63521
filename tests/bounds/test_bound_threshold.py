"""``bound``'s threshold rows (T_eps): the code's value comes from the exhaustive search of
``attack --threshold`` (rotation orbits, compiled walks, the same tie rule), labelled exact,
or, when the whole search is estimated above the work budget, from no search at all: the row
says what was not computed, the estimate and the budget that computes it.  The worst error at
s, when decoding every s-set is above the budget, from ``attack -s``'s exhaustive search."""

from __future__ import annotations

import json
import re
import time
from math import ceil, comb
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gctool
from gctool.algebra.fields import parse_field
from gctool.bounds import rank as rank_bound
from gctool.bounds.approx import ApproxBound, exact_threshold
from gctool.budget import (
    NS_PER_S,
    Budget,
    SharedWork,
    computing_refusal,
    format_seconds,
    parse_time,
    suggest_time,
)
from gctool.codes import design
from gctool.decode.cost import decoder_set_time
from gctool.engine.sweep import ExceedSearch
from gctool.io import write_code
from gctool.model import GradientCode

from helpers import run, shared_runs

#: T_0 = 5: 42,504 sets of size 5, above the 20,000 sets bound's own search stops at
CYCLIC = design("cyclic", n=24, s=4, seed=1)
ROW_KEYS = {"name", "value", "statement", "source", "holds", "quantity", "kind", "actual",
            "actual_note", "actual_exact"}


def _calibrated(s: int) -> float:
    """The calibrated seconds of decoding every s-set of CYCLIC: one least-squares solve
    each."""
    return comb(24, s) * ceil(decoder_set_time(CYCLIC, s)) / NS_PER_S


def _rows(code: GradientCode, **kw: object) -> dict[str, ApproxBound]:
    report = gctool.bound(code, **kw)
    return {b.name: b for b in report.bounds if isinstance(b, ApproxBound)}


def test_the_threshold_is_attack_thresholds_and_labelled_exact() -> None:
    assert exact_threshold(CYCLIC, 0.0) == (None, False)  # bound's own search stopped here
    row = _rows(CYCLIC)["threshold_ub"]
    attack = gctool.threshold(CYCLIC, method="exhaustive")
    assert attack.exact and row.actual == attack.threshold == 5
    assert row.actual_exact is True and row.holds is True
    assert row.statement.endswith("code: 5 (exact)") and row.actual_note == "5 (exact)"


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from([0.0, 0.5, 1.0, 2.0]))
def test_bound_attack_and_the_engine_search_agree(seed: int, eps: float) -> None:
    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(3, 9)), int(rng.integers(2, 7))
    B = (rng.random((n, k)) < rng.uniform(0.3, 0.9)) * rng.choice([1.0, -1.0, 0.5], (n, k))
    B[0, 0] = B[0, 0] or 1.0
    code = GradientCode(B, parse_field("real"), 0)
    rows = _rows(code, epsilon=eps)
    if "threshold_ub" not in rows:  # floor(eps) + 1 > k: no row
        assert np.floor(eps) + 1 > k
        return
    row = rows["threshold_ub"]
    truth, complete = exact_threshold(code, eps)
    attack = gctool.threshold(code, eps, method="exhaustive")
    assert complete and attack.exact and row.actual_exact is True
    assert row.actual == (None if truth is None else float(truth))
    assert attack.threshold == truth


@pytest.fixture
def searched(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The n of every threshold search run (:class:`ExceedSearch`) from now on."""
    runs: list[int] = []
    real = ExceedSearch.run

    def spy(self: ExceedSearch) -> object:
        runs.append(self.n)
        return real(self)

    monkeypatch.setattr(ExceedSearch, "run", spy)
    return runs


def test_over_the_budget_nothing_is_searched_and_the_row_says_what_computes_it(
        searched: list[int]) -> None:
    row = _rows(CYCLIC, budget=Budget(max_work=1e-3))["threshold_ub"]
    assert searched == []  # refused before any size was searched
    assert row.actual is None and row.actual_exact is False and row.holds is None
    note = row.actual_note
    found = re.fullmatch(
        r"not computed: the exact threshold search \(n=24, every size up to 5: 55,455 "
        r"straggler sets\) needs about (.+?) \(estimated[^)]*\), above (?:the \S+ us that the "
        r"earlier parts of the run \(about \S+ us\) left of )?the work budget of 1 ms "
        r"\(`max_work`, GCTOOL_MAX_WORK\); raise `max_work` to (\S+) to compute it", note)
    assert found, note
    assert row.statement.endswith(f"code: {note}")
    # the suggested budget computes it (twice it: the estimate is timed on samples, and a
    # loaded machine times them slower or faster from one run to the next)
    suggested = parse_time("max_work", found.group(2))
    row = _rows(CYCLIC, budget=Budget(max_work=2 * suggested))["threshold_ub"]
    assert searched == [24] and row.actual == 5 and row.actual_exact is True


@pytest.mark.parametrize(("seconds", "written"), [
    (2.84, "2.9s"), (3.0, "3s"), (0.123, "0.13s"), (12.01, "13s"), (99.5, "1.7min"),
    (1000.0, "17min"), (7300.0, "2.1h")])
def test_a_suggested_budget_is_rounded_up(seconds: float, written: str) -> None:
    assert suggest_time(seconds) == written
    assert parse_time("max_work", written) >= seconds


def test_the_cli_names_its_flag_and_the_json_rows_keep_their_shape(tmp_path: Path) -> None:
    path = tmp_path / "crc24.json"
    write_code(CYCLIC, str(path))
    text = run("bound", str(path), "--max-work", "10ms")  # the rank of B (0.8 ms) goes unnamed
    assert text.exit_code == 0, text.stderr
    line = next(x for x in text.stdout.splitlines() if "T_eps <=" in x)
    assert "code: not computed" in line and "raise --max-work to" in line and "`" not in line
    # the mean at s = 4: calibrated far above the budget, so not timed (one least-squares
    # solve of 20 x 24 per set, decode.cost.decoder_set_time)
    line = next(x for x in text.stdout.splitlines() if "mean error over uniform 4-sets" in x)
    seconds, rank = _calibrated(4), rank_bound.work(CYCLIC) / NS_PER_S
    assert (f"code: not computed: decoding every straggler set of size 4 (10,626 sets) needs "
            f"about {format_seconds(seconds)} (estimated), above the work budget of 10 ms "
            f"(--max-work, GCTOOL_MAX_WORK); raise --max-work to {suggest_time(seconds + rank)} "
            "to compute it") in line
    # the worst: attack -s 4's refusal, with bound's remedy (bound has no --method)
    line = next(x for x in text.stdout.splitlines() if "worst error at s = 4 >=" in x)
    assert "code: not computed: the exhaustive attack (n=24, k*m=24, s=4): 10,626" in line
    assert "raise --max-work to" in line and "--method" not in line
    doc = json.loads(run("bound", str(path), "--json").stdout)
    rows = [b for b in doc["files"][0]["report"]["bounds"] if "actual" in b]
    assert rows and all(set(b) == ROW_KEYS for b in rows)
    worst = next(b for b in rows if b["name"] == "error_lb_fully_straggled")
    assert (worst["actual"], worst["actual_exact"], worst["holds"]) == (0.0, True, True)
    ub = next(b for b in rows if b["name"] == "threshold_ub")
    assert (ub["actual"], ub["actual_exact"], ub["actual_note"]) == (5.0, True, "5 (exact)")


def test_over_the_decoding_budget_the_worst_error_is_attack_s(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Decoding every s-set is calibrated far above the budget (no sample timed): the worst
    error comes from ``attack -s``; when every s-set decodes the mean is 0 too, else the mean
    row says it was not computed."""
    from gctool.decode import cost
    rows = _rows(CYCLIC, budget=Budget(max_work=0.1))  # 10,626 sets, about 0.4 s to decode
    for name in ("error_lb_fully_straggled", "mean_error_lb_uniform"):
        row = rows[name]
        assert (row.actual, row.actual_exact, row.holds, row.actual_note) == (0.0, True, True, "")
    # 42,504 sets, about 1.4 s: ten times that for bound's decoding (not the attack's, whose
    # oracle imported the calibration before), so that a budget three times the attack's
    # (timed at about 0.11 s) is far below it, and not timed
    real = cost.decoder_set_time
    monkeypatch.setattr(cost, "decoder_set_time", lambda code, s: 10 * real(code, s))
    seconds = 10 * _calibrated(5)
    assert seconds > 10 * 0.35
    rows = _rows(CYCLIC, s=5, budget=Budget(max_work=0.35))
    worst, mean = rows["error_lb_fully_straggled"], rows["mean_error_lb_uniform"]
    attack = gctool.attack(CYCLIC, 5, method="exhaustive")
    assert attack.exact and worst.actual == attack.raw_error and worst.actual_exact is True
    assert worst.holds and worst.actual_note == ""
    assert mean.actual is None and mean.actual_exact is None and mean.holds is None
    assert mean.actual_note.startswith("not computed: decoding every straggler set of size 5 "
                                       f"(42,504 sets) needs about {format_seconds(seconds)} "
                                       "(estimated), above "
                                       "the work budget of 350 ms")


def test_without_a_column_witness_the_estimate_stops_at_the_first_failing_size() -> None:
    """At eps = 3 no partition's holders exceed (losing one costs 1), so the search has no
    top but n; the up-front estimate stops at the size where its probes find a failing set
    (5), where the search stops: about 0.3 s, where sizes 6..24 added about 5 s (3 s of
    budget leaves room for a loaded machine)."""
    row = _rows(CYCLIC, epsilon=3.0, budget=Budget(max_work=3.0))["threshold_ub"]
    attack = gctool.threshold(CYCLIC, 3.0, method="exhaustive")
    assert attack.exact and row.actual == attack.threshold == 5 and row.actual_exact is True
    refused = _rows(CYCLIC, epsilon=3.0, budget=Budget(max_work=1e-3))["threshold_ub"]
    assert "the sizes up to the first with a failing set found, 5: 55,455 straggler sets" in \
        refused.actual_note


def test_the_kron_row_is_the_same_search_asked_once(searched: list[int]) -> None:
    """The product's T_0 beside kron's closed form is the table's T_eps at eps = 0: one search
    (attack --threshold's), where the kron row ran its own set-budgeted one and gave up."""
    factor = design("cyclic", n=6, s=1, seed=1)
    product = design("kron", file1=factor, file2=factor)  # n = 36, T_0 = 2 x 2
    assert exact_threshold(product, 0.0) == (None, False)  # C(36, 4) sets: above 20,000
    searched.clear()
    rows = _rows(product)
    assert searched == [36]
    kron, ub = rows["kron_threshold"], rows["threshold_ub"]
    assert kron.actual == ub.actual == 4.0 and kron.holds and ub.holds
    assert (kron.actual_exact, kron.actual_note) == (True, "4 (exact)")
    assert gctool.threshold(product, method="exhaustive").threshold == 4


def test_decoding_estimates_of_every_size_of_a_large_code_stay_finite_and_say_no_budget() -> None:
    """2^1100 straggler sets: the estimate is summed in integers and capped (a float of it
    overflowed: an internal error of ``bound`` on n >= ~1030), and no budget is suggested for
    a computation out of reach (it wrote 'raise --max-work to 2.8e+287h')."""
    from gctool.bounds.approx import left_out
    from gctool.budget import OUT_OF_REACH_S, computing_refusal

    n = 1100
    code = GradientCode(np.eye(n), parse_field("real"), 1)
    note = left_out(code, f"decoding every straggler set of every size (2^{n} sets)",
                    range(n + 1), Budget(max_work=5.0))
    assert note.startswith("not computed: decoding every straggler set of every size "
                           f"(2^{n} sets) needs about "), note
    assert note.endswith("; no work budget computes it"), note
    assert "raise" not in note and "e+" not in note, note
    # within a year of one core the budget that computes it is still named
    near = str(computing_refusal("x", OUT_OF_REACH_S, 5.0))
    assert near.endswith(f"raise `max_work` to {suggest_time(OUT_OF_REACH_S)} to compute it")
    assert str(computing_refusal("x", 2 * OUT_OF_REACH_S, 5.0)).endswith(
        "; no work budget computes it")


# -- one budget for the whole run: its parts share it in order --------------------------------
@pytest.fixture
def shared(monkeypatch: pytest.MonkeyPatch) -> list[SharedWork]:
    """Every run's :class:`SharedWork` from now on (as bench_budget's Recorder keeps the
    meters)."""
    return shared_runs(monkeypatch)


@pytest.mark.parametrize("seconds", [0.3, 0.6, 1.5])
def test_the_parts_of_a_run_hold_to_one_budget(shared: list[SharedWork], seconds: float
                                               ) -> None:
    """The rank of B, the decoding of the s-sets (or attack -s), the iid row and the threshold
    search are each charged their estimate against one meter, each admitted on what the parts
    before it left: what the run was estimated at stays within --max-work (each part held to
    the whole budget alone took up to about 3x it), and so does its CPU time, within a
    generous factor (estimates are within about 2x; the first run of a process loads
    kernels)."""
    gctool.bound(CYCLIC, budget=Budget(max_work=seconds))  # warm: kernels loaded
    shared.clear()
    t0 = time.process_time()
    rows = _rows(CYCLIC, budget=Budget(max_work=seconds))
    cpu = time.process_time() - t0
    [run_] = shared
    assert run_.meter.limit == seconds * NS_PER_S
    assert 0 < run_.meter.spent <= run_.meter.limit
    assert sum(run_.needs) > 0 and len(run_.needs) >= 3  # rank, s-sets or attack -s, iid...
    assert cpu <= 2 * seconds + 0.5, cpu
    assert rows["threshold_ub"].actual in (None, 5.0)


def test_a_part_left_out_because_earlier_parts_used_the_budget_says_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The rank of B charged at all but 5 ms of a 2 s budget: the rows after it are refused on
    what it left (every search costs more than the 5 ms left: a run's start alone is 10 ms),
    and each says so in text and JSON, with the budget that computes it after the rank."""
    monkeypatch.setattr(rank_bound, "work", lambda code, second=False: 1.995 * NS_PER_S)
    path = tmp_path / "crc24.json"
    write_code(CYCLIC, str(path))
    text = run("bound", str(path), "--max-work", "2s")
    assert text.exit_code == 0, text.stderr
    line = next(x for x in text.stdout.splitlines() if "T_eps <=" in x)
    assert ("code: not computed: the exact threshold search (n=24, every size up to 5: 55,455 "
            "straggler sets) needs about ") in line, line
    found = re.search(r"above the 5 ms that the earlier parts of the run \(about 2 s\) left of "
                      r"the work budget of 2 s \(--max-work, GCTOOL_MAX_WORK\); raise "
                      r"--max-work to (\S+) to compute it", line)
    assert found, line
    assert parse_time("max_work", found.group(1)) > 2.0
    doc = json.loads(run("bound", str(path), "--max-work", "2s", "--json").stdout)
    rows = {b["name"]: b for b in doc["files"][0]["report"]["bounds"] if "actual" in b}
    for name in ("threshold_ub", "error_lb_fully_straggled", "mean_error_lb_uniform",
                 "iid_error_lb"):
        note = rows[name]["actual_note"]
        assert rows[name]["actual"] is None and note.startswith("not computed: "), (name, note)
        assert "that the earlier parts of the run (about 2 s) left of the work budget of 2 s " \
            "(`max_work`, GCTOOL_MAX_WORK); raise `max_work` to " in note, (name, note)
    assert rows["threshold_ub"]["actual_exact"] is False


def test_the_budget_named_computes_the_part_after_the_parts_before_it() -> None:
    """The suggested budget counts the parts before it at their estimates, also those left
    out now that a larger budget would admit first (each taking its share)."""
    run_ = SharedWork(Budget(max_work=1.0), spent=0.5)  # the rank: 0.5 s of 1 s
    run_.not_computed(computing_refusal("a", 0.6, 0.5, used=0.5))  # left out: 0.6 s
    assert run_.hint(0.7) == pytest.approx(0.5 + 0.6 + 0.7)  # at 1.2 s, 'a' would run first
    assert run_.hint(3.0) == pytest.approx(0.5 + 0.6 + 3.0)
    run_ = SharedWork(Budget(max_work=1.0), spent=0.5)
    run_.not_computed(computing_refusal("a", 9.0, 0.5, used=0.5))
    assert run_.hint(0.7) == pytest.approx(1.2)  # 'a' stays out at 1.2 s
    assert run_.left().max_work == pytest.approx(0.5) and run_.left().used == 0.5
