"""The label of an attack the work budget stopped: exact exactly when what was proved before
the stop settles the answer, heuristic otherwise, and the report's ``exact``, its header and its
notes all say the same (a wrong label is as bad as a wrong verdict).

The budget is made to stop the search at every one of its charges in turn (the meter refuses
the N-th charge, as it does when the work runs out there: deterministic, unlike a time budget),
with ``max_sets`` holding the exhaustive search and the elementary threshold over their caps, so
that ``auto`` goes on to the bounded searches; every answer is compared with brute force."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest

from gctool.audit.attack import attack, threshold
from gctool.audit.outcome import ThresholdOutcome, WorstOutcome
from gctool.budget import Budget, Meter
from gctool.codes import design
from gctool.errors import BudgetExceeded
from gctool.model import GradientCode

import jsondoc
from helpers import run
from jsondoc import loads
from oracles import brute_worst, decodes_gf, lstsq_error, threshold_by

STOPPED = "the work budget stopped the exact search"
EXACT_NOTE = "so the result is exact"
HEURISTIC_NOTE = "the result is the heuristic one found so far"


@contextmanager
def stop_at_charge(monkeypatch: pytest.MonkeyPatch, allowed: int) -> Iterator[None]:
    """The work budget runs out at the meter's charge number ``allowed + 1`` (its own refusal)."""
    charge = Meter.charge
    count = [0]

    def limited(self: Meter, work: float, what: str = "") -> None:
        count[0] += 1
        if count[0] > allowed:
            self.done = self.spent
            self.spent += float(work)
            raise self._refuse(self.spent, what)
        charge(self, work, what)

    with monkeypatch.context() as m:
        m.setattr(Meter, "charge", limited)
        yield


def _codes() -> list[tuple[str, GradientCode]]:
    return [("frc GF(7)", design("frc", n=8, s=1, field="GF(7)")),
            ("cyclic-mds GF(11)", design("cyclic-mds", n=10, s=2, field="GF(11)")),
            ("cyclic real", design("cyclic", n=8, s=2, seed=1))]


def _decodes(code: GradientCode) -> Any:
    B = np.asarray(code.B)
    if code.field.is_finite:
        GF = code.field.galois()
        return lambda F: decodes_gf(GF, B, F)
    # (a random real B decodes up to round-off: the tolerance rule, tol * k, by numpy's lstsq)
    return lambda F: lstsq_error(B, F) <= 1e-9 * code.k


def _fails(code: GradientCode, S: list[int]) -> bool:
    return not _decodes(code)(tuple(i for i in range(code.n) if i not in S))


CODES = _codes()
SWEEP = range(0, 45)  # charges allowed: from none to past the end of the search


@pytest.mark.parametrize(("name", "code"), CODES, ids=[c[0] for c in CODES])
def test_threshold_stopped_at_every_charge_is_labelled_by_its_proved_bounds(
        monkeypatch: pytest.MonkeyPatch, name: str, code: GradientCode) -> None:
    truth = threshold_by(_decodes(code), code.n)
    assert truth is not None
    kinds = set()
    for allowed in SWEEP:
        with stop_at_charge(monkeypatch, allowed):
            try:
                r = threshold(code, budget=Budget(max_work=100.0), max_sets=3)
            except BudgetExceeded:  # nothing proved and no witness: refused
                continue
        lo, up = r.threshold_lower, r.threshold_upper
        assert lo is not None and lo <= truth, (allowed, r.notes)
        if up is not None:
            assert up >= truth and r.stragglers is not None and len(r.stragglers) == up
            assert _fails(code, r.stragglers)  # the witness is a real one
        # the label is the bounds' own: exact exactly when they meet, and then it is the truth
        assert r.exact == (up is not None and lo == up), (allowed, r.notes)
        if r.exact:
            assert r.threshold == truth
        stopped = [note for note in r.notes if STOPPED in note]
        if stopped:
            assert len(stopped) == 1
            assert (EXACT_NOTE in stopped[0]) == r.exact, (allowed, stopped)
            assert (HEURISTIC_NOTE in stopped[0]) == (not r.exact), (allowed, stopped)
            kinds.add(r.exact)
    # the sweep stops the search both before and after its bounds meet
    assert kinds == {True, False}, name


def test_the_frc_threshold_stopped_after_its_bounds_meet_is_exact_on_the_cli(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    """The defect seen on frc n=128 over GF(7): bnb stopped by the budget after the lower bound
    met the witness was headed 'exact' with a note calling it heuristic.  The JSON, the header
    and the notes now agree, both ways."""
    path = tmp_path / "frc.json"
    run("design", "frc", "-n", "8", "-s", "1", "--field", "GF(7)", "-o", str(path), "-q")
    args = ("attack", str(path), "--threshold", "--max-sets", "3", "--max-work", "100s")
    seen: dict[bool, int] = {}
    for allowed in SWEEP:
        with stop_at_charge(monkeypatch, allowed):
            r = run(*args, "--json")
        if r.exit_code != 0:
            continue
        doc = loads(r.stdout)
        if any(STOPPED in note for note in doc["notes"]):
            seen.setdefault(doc["exact"], allowed)
    assert set(seen) == {True, False}
    for exact, allowed in seen.items():
        with stop_at_charge(monkeypatch, allowed):
            doc = loads(run(*args, "--json").stdout)
        with stop_at_charge(monkeypatch, allowed):
            text = run(*args)
        assert text.exit_code == 0
        header = [line for line in text.stdout.splitlines()
                  if line.startswith(("exact:", "not proved"))]
        assert len(header) == 1
        note = next(note for note in doc["notes"] if STOPPED in note)
        if exact:
            assert doc["threshold_lower"] == doc["threshold_upper"] == doc["threshold"] == 2
            assert header[0].startswith("exact: ")
            assert EXACT_NOTE in note and "heuristic" not in text.stdout
            assert "sandwich" not in text.stdout and "tolerates up to 1 straggler" in text.stdout
        else:
            assert doc["threshold_lower"] < 2
            assert header[0].startswith("not proved")
            assert HEURISTIC_NOTE in note and HEURISTIC_NOTE in text.stdout
        # the count of a degraded result is the decoder's evaluations of the run, not 0
        assert doc["checked"] == doc["evaluations"]


def test_a_degraded_threshold_without_a_witness_says_so_in_its_header(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    path = tmp_path / "frc.json"
    run("design", "frc", "-n", "8", "-s", "1", "--field", "GF(7)", "-o", str(path), "-q")
    for allowed in SWEEP:
        with stop_at_charge(monkeypatch, allowed):
            r = run("attack", str(path), "--threshold", "--max-sets", "3", "--max-work",
                    "100s")
        if r.exit_code == 0 and "no witness found" in r.stdout:
            assert "not proved (no witness found): auto" in r.stdout
            assert "witness gives an upper bound" not in r.stdout
            return
    raise AssertionError("no stop left the threshold without a witness")


@pytest.mark.parametrize(("name", "code"), CODES, ids=[c[0] for c in CODES])
def test_worst_case_stopped_at_every_charge_keeps_a_label_its_notes_agree_with(
        monkeypatch: pytest.MonkeyPatch, name: str, code: GradientCode) -> None:
    s = 3
    truth = brute_worst(code, s, lstsq_error)
    stops = 0
    for allowed in SWEEP:
        with stop_at_charge(monkeypatch, allowed):
            try:
                r = attack(code, s, budget=Budget(max_work=100.0), max_sets=3)
            except BudgetExceeded:
                continue
        assert r.raw_error is not None and r.raw_error <= truth * (1 + 1e-9) + 1e-12
        if r.exact:
            assert r.raw_error == pytest.approx(truth, rel=1e-9, abs=1e-12)
        stopped = [note for note in r.notes if STOPPED in note]
        if stopped:
            stops += 1
            assert (EXACT_NOTE in stopped[0]) == r.exact, (allowed, stopped)
            assert (HEURISTIC_NOTE in stopped[0]) == (not r.exact), (allowed, stopped)
    if not code.field.is_finite:  # (over GF(q) greedy reaches the indicator's 1 at once)
        assert stops > 0


def test_a_stopped_worst_case_that_reaches_its_proved_bound_is_exact() -> None:
    """The label of a stopped worst case is its sandwich's: the error found reaching the
    proved upper bound is the worst case, budget stop or not."""
    met = WorstOutcome([0, 1], 1.0, False, "greedy")
    met.tighten(1.0, "an indicator error is at most 1")
    met.stopped(" (over budget)")
    assert met.exact and met.budget_stopped
    assert met.notes[-1].endswith("reaches the proved upper bound (an indicator error is at "
                                  "most 1), so the result is exact")
    open_ = WorstOutcome([0, 1], 0.5, False, "greedy")
    open_.tighten(1.0, "an indicator error is at most 1")
    open_.stopped(" (over budget)")
    assert not open_.exact and HEURISTIC_NOTE in open_.notes[-1]


@pytest.mark.parametrize(("threshold_", "lower", "exact"), [
    (2, 2, True), (3, 2, False), (None, 2, False), (None, 9, True)])
def test_a_stopped_threshold_is_exact_exactly_when_its_bounds_meet(
        threshold_: int | None, lower: int, exact: bool) -> None:
    out = ThresholdOutcome(threshold_, None if threshold_ is None else list(range(threshold_)),
                           None if threshold_ is None else 1.0, not exact, "bnb", lower)
    out.stopped(8, "over budget")
    assert out.exact is exact and out.budget_stopped
    assert (EXACT_NOTE in out.notes[-1]) is exact


def _charges(run_once: Any) -> int:
    """How many charges the meter takes in ``run_once()`` with no stop."""
    charge = Meter.charge
    count = [0]

    def counting(self: Meter, work: float, what: str = "") -> None:
        count[0] += 1
        charge(self, work, what)

    Meter.charge = counting  # type: ignore[method-assign]
    try:
        run_once()
    finally:
        Meter.charge = charge  # type: ignore[method-assign]
    return count[0]


CURVE_CODE = design("cyclic", n=10, s=2, seed=1)


def _curve(**kw: Any) -> Any:
    from gctool.audit.attack import curve

    return curve(CURVE_CODE, 6, budget=Budget(max_work=100.0), max_sets=50, **kw)


def _same_point(a: Any, b: Any) -> bool:
    return (a.s, a.stragglers, a.raw_error, a.exact, a.method, a.upper_bound) == (
        b.s, b.stragglers, b.raw_error, b.exact, b.method, b.upper_bound)


def test_a_curve_the_budget_stops_keeps_the_points_computed_before_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A budget stop anywhere in a curve keeps the points computed (it refused the whole curve
    unless the stop fell in the last point).  The stop changes none of the points before it:
    each equals the unstopped run's; only the point whose search it stopped may differ, labelled
    heuristic unless proved, and named in the notes.  Every point's error is its set's
    (lstsq), every exact point brute force's worst; the curve says where it stopped (the first
    s without a point, and a note giving the refusal, which names the budget to raise), is not
    exact, and has the unstopped report's JSON keys.  With ``keep_at_budget=False`` (show's
    picture) the same stop is refused."""
    from gctool.audit.attack import curve

    B = np.asarray(CURVE_CODE.B)
    truth = {s: brute_worst(CURVE_CODE, s, lstsq_error) for s in range(7)}
    full = _curve()
    assert full.stopped_at is None and full.exact and len(full.curve) == 7
    total = _charges(_curve)
    stopped_at: set[int | None] = set()
    in_last = refused = 0
    for allowed in [*range(0, 12), *range(12, 40, 3), *range(40, total + 1, 17)]:
        with stop_at_charge(monkeypatch, allowed):
            try:
                r = _curve()
            except BudgetExceeded:  # only when no point past s = 0 could be computed
                refused += 1
                assert allowed < 40, allowed
                continue
        with stop_at_charge(monkeypatch, allowed), pytest.raises(BudgetExceeded):
            if r.stopped_at is not None:
                curve(CURVE_CODE, 6, budget=Budget(max_work=100.0), max_sets=50,
                      keep_at_budget=False)
            else:
                raise BudgetExceeded("(a complete curve: nothing to refuse)")
        assert list(r.to_dict()) == list(full.to_dict())
        stopped_at.add(r.stopped_at)
        named = {note.split(":")[0]: note for note in r.notes if STOPPED in note}
        for p in r.curve:
            F = tuple(i for i in range(CURVE_CODE.n) if i not in p.stragglers)
            assert p.raw_error == pytest.approx(lstsq_error(B, F), rel=1e-6, abs=1e-12)
            if p.exact:
                assert p.raw_error == pytest.approx(truth[p.s], rel=1e-9, abs=1e-12)
            else:
                assert p.raw_error <= truth[p.s] * (1 + 1e-9) + 1e-12
            if f"s = {p.s}" in named:  # the point whose search the budget stopped
                assert p is r.curve[-1], (allowed, r.notes)
                assert (EXACT_NOTE in named[f"s = {p.s}"]) == p.exact
                assert (HEURISTIC_NOTE in named[f"s = {p.s}"]) == (not p.exact)
            else:
                assert _same_point(p, full.curve[p.s]), (allowed, p, full.curve[p.s])
        assert r.exact == (r.stopped_at is None and all(p.exact for p in r.curve))
        if r.stopped_at is None:
            in_last += bool(named)
            continue
        assert [p.s for p in r.curve] == list(range(r.stopped_at)) and r.stopped_at > 1
        assert not r.exact and r.s == 6 and r.total == full.total
        missing = "6" if r.stopped_at == 6 else f"{r.stopped_at}..6"
        assert r.reason == (f"worst-case error for s = 0..6; stopped by the budget at s = "
                            f"{r.stopped_at} (s = {missing} not computed)")
        last = r.notes[-1]
        assert last.startswith(f"s = {missing}: not computed: the budget stopped the curve at "
                               f"s = {r.stopped_at} (")
        assert "raise `max_work`" in last and "the work budget of 1" in last, last
    assert refused > 0 and in_last > 0
    assert {None, 2, 3, 4, 5, 6} <= stopped_at, stopped_at


def test_an_exhaustive_curve_over_its_set_cap_keeps_its_exact_points(tmp_path: Any) -> None:
    """--method exhaustive refuses a point whose sets exceed --max-sets before it starts: the
    curve stops there with the exact points before it (brute force's), exit 0, one JSON document
    with the keys of a curve that was not stopped, and text that names the stop and --max-sets;
    `show --svg` (this engine's curve, drawn into a file) refuses the stop, writing nothing."""
    from gctool.audit.attack import curve
    from gctool.io import code_bytes

    r = curve(CURVE_CODE, 6, method="exhaustive", max_sets=50)  # C(10, 3) = 120 > 50
    assert r.stopped_at == 3 and [p.s for p in r.curve] == [0, 1, 2] and not r.exact
    for p in r.curve:
        assert p.exact and p.raw_error == pytest.approx(brute_worst(CURVE_CODE, p.s, lstsq_error),
                                                        rel=1e-9, abs=1e-12)
    assert r.notes[-1].startswith("s = 3..6: not computed: the budget stopped the curve at s = 3 "
                                  "(the exhaustive attack (n=10, k*m=10, s=3) needs 120 straggler "
                                  "sets")
    assert "raise `max_sets`" in r.notes[-1]
    path = tmp_path / "cyclic.json"
    path.write_bytes(code_bytes(CURVE_CODE, path))
    args = ("attack", str(path), "--curve", "--max-s", "6", "--method", "exhaustive")
    text = run(*args, "--max-sets", "50")
    doc = run(*args, "--max-sets", "50", "--json")
    whole = jsondoc.report(run(*args, "--json").stdout)
    assert text.exit_code == doc.exit_code == 0 and text.stderr == doc.stderr == ""
    assert jsondoc.envelope(doc.stdout)["exit_code"] == 0
    report = jsondoc.report(doc.stdout)
    assert list(report) == list(whole)
    assert report["stopped_at"] == 3 and whole["stopped_at"] is None
    assert [p["s"] for p in report["curve"]] == [0, 1, 2] and report["exact"] is False
    assert report["curve"] == whole["curve"][:3]
    lines = text.stdout.splitlines()
    assert any(line.startswith("stopped by the budget at s = 3 (no point from there on; the "
                               "points before it are exact): exhaustive over ") for line in lines)
    assert any("s = 3..6: not computed" in line and "raise --max-sets" in line
               and "`" not in line for line in lines)
    rows = [line.split()[0] for line in lines if line[:1].isdigit()]
    assert rows == ["0", "1", "2"]
    quiet = run("attack", str(path), str(path), "--curve", "--max-s", "6", "--method",
                "exhaustive", "--max-sets", "50")
    assert quiet.exit_code == 0 and "stopped by the budget at s = 3" in quiet.stdout


def test_show_refuses_a_curve_the_budget_stops_and_writes_no_file(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    """show draws this engine's curve into --svg: a budget stop mid-curve is refused (exit 2,
    one line), never a picture of part of the curve, and no file is left."""
    from gctool.io import code_bytes

    path = tmp_path / "cyclic.json"
    path.write_bytes(code_bytes(CURVE_CODE, path))
    svg = tmp_path / "out.svg"
    args = ("show", str(path), "--svg", str(svg))
    total = _charges(lambda: run(*args))
    assert run(*args).exit_code == 0 and svg.exists()
    svg.unlink()
    for allowed in range(total - 4, total):
        with stop_at_charge(monkeypatch, allowed):
            r = run(*args)
        assert r.exit_code == 2 and r.stderr.count("\n") == 1, (allowed, r.stderr)
        assert not svg.exists() and list(tmp_path.iterdir()) == [path]


def test_the_cli_curve_names_the_point_the_budget_stopped(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    from gctool.io import code_bytes

    path = tmp_path / "cyclic.json"
    path.write_bytes(code_bytes(CURVE_CODE, path))
    args = ("attack", str(path), "--curve", "--max-s", "6", "--max-sets", "50", "--max-work",
            "100s")
    total = _charges(lambda: run(*args, "--json"))
    with stop_at_charge(monkeypatch, total - 5):
        doc = loads(run(*args, "--json").stdout)
    with stop_at_charge(monkeypatch, total - 5):
        text = run(*args)
    assert text.exit_code == 0 and doc["exact"] is False and doc["curve"][-1]["exact"] is False
    named = [n for n in doc["notes"] if STOPPED in n]
    assert len(named) == 1 and named[0].startswith("s = 6: " + STOPPED)
    assert named[0].endswith(HEURISTIC_NOTE)
    lines = [line.strip() for line in text.stdout.splitlines()]
    assert any(line.startswith("s = 6: " + STOPPED) and line.endswith(HEURISTIC_NOTE)
               and "`" not in line for line in lines)


def test_padded_curve_points_say_they_were_not_searched(tmp_path: Any) -> None:
    """Past the first s whose worst error is the largest possible, a monotone curve pads that
    set instead of searching: each such point is exact (checked against brute force), and the
    notes say so and which point's method the rows show."""
    from gctool.audit.attack import curve
    from gctool.io import code_bytes

    code = design("cyclic-mds", n=10, s=2, field="GF(11)")
    r = curve(code)
    assert [p.exact for p in r.curve] == [True] * 11
    for p in r.curve:
        assert p.raw_error == brute_worst(code, p.s, lstsq_error)
    assert [p.method for p in r.curve[3:]] == ["exhaustive"] * 8
    assert r.notes == [
        "s = 4..10: the worst set of s = 3 with more stragglers, exact without a search (its "
        "error is already the largest possible, an indicator error is at most 1, and the "
        "optimal decoder's error only grows with the straggler set); the method shown is that "
        "of s = 3"]
    # the fixed decoder's error is not monotone: every point is searched, no such note
    fixed = curve(design("cyclic", n=8, s=2, seed=1), decoder="fixed")
    assert not any("without a search" in note for note in fixed.notes)
    path = tmp_path / "mds.json"
    path.write_bytes(code_bytes(code, path))
    text = run("attack", str(path), "--curve")
    assert text.exit_code == 0 and "s = 4..10: the worst set of s = 3" in text.stdout
    doc = loads(run("attack", str(path), "--curve", "--json").stdout)
    assert doc["notes"] == r.notes


def test_the_curve_table_marks_monte_carlo_means(tmp_path: Any) -> None:
    """The curve's mean column showed Monte-Carlo estimates (more s-sets than --max-sets) as
    plainly as exact means; they are marked '(MC)', with a legend, as --json's mean_exact."""
    from gctool.io import code_bytes

    code = design("cyclic", n=12, s=2, seed=1)
    path = tmp_path / "cyclic.json"
    path.write_bytes(code_bytes(code, path))
    args = ("attack", str(path), "--curve", "--max-s", "4", "--random", "--max-sets", "100")
    doc = loads(run(*args, "--json").stdout)
    text = run(*args)
    assert text.exit_code == 0
    kinds = {p["s"]: p["mean_exact"] for p in doc["curve"]}
    assert set(kinds.values()) == {True, False}  # C(12, s) <= 100 only for s <= 2
    rows = {int(line.split()[0]): line for line in text.stdout.splitlines()
            if line[:1].isdigit()}
    for s, exact in kinds.items():
        assert ("(MC)" in rows[s]) is not exact, rows[s]
    assert "(MC) a Monte-Carlo estimate over random s-sets (seed 0)" in text.stdout
    small = run("attack", str(path), "--curve", "--max-s", "2", "--random")
    assert "(MC)" not in small.stdout and "mean" in small.stdout


def test_a_threshold_of_zero_says_the_code_tolerates_no_stragglers(tmp_path: Any) -> None:
    """A code that fails with every worker (a partition nobody holds) has threshold 0: it read
    'tolerates up to -1 stragglers'."""
    from gctool.algebra.fields import parse_field
    from gctool.io import code_bytes

    B = np.array([[1.0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 1, 0]])
    path = tmp_path / "lost.json"
    path.write_bytes(code_bytes(GradientCode(B, parse_field("real"), 0), path))
    assert threshold_by(lambda F: lstsq_error(B, F) <= 1e-9 * 3, 4) == 0
    doc = loads(run("attack", str(path), "--threshold", "--json").stdout)
    assert doc["threshold"] == 0 and doc["exact"] is True
    for out in (run("attack", str(path), "--threshold").stdout,
                run("attack", str(path), str(path), "--threshold").stdout):
        assert "tolerates no stragglers: the error is above 0 with every worker" in out
        assert "-1 stragglers" not in out  # (tmp_path may hold "-1": pytest-1160)
