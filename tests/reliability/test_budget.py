"""The budget value (:mod:`gctool.budget`): time budgets with their unit, the default from the
environment, refusals that name parameters, and the one meter (charged in task order, so it
stops at the same task for any number of threads)."""

from __future__ import annotations

import threading

import pytest

from gctool import budget as bd
from gctool.budget import Budget, Meter, parse_time
from gctool.cli.params import in_cli_terms
from gctool.engine import threads
from gctool.errors import BudgetExceeded, InvalidInput
from gctool.limits import DEFAULT_MAX_MEMORY, DEFAULT_MAX_WORK


@pytest.mark.parametrize(("raw", "seconds"), [("30s", 30.0), ("1.5min", 90.0), ("2h", 7200.0),
                                              ("500ms", 0.5), (" 1e-4s ", 1e-4), ("3 min", 180),
                                              ("20us", 2e-5)])
def test_a_time_budget_takes_its_unit(raw: str, seconds: float) -> None:
    assert parse_time("max_work", raw) == pytest.approx(seconds)


def test_a_bare_number_is_refused_with_what_it_meant() -> None:
    with pytest.raises(InvalidInput) as err:
        parse_time("GCTOOL_MAX_WORK", "1e12")
    text = str(err.value)
    assert text.startswith("GCTOOL_MAX_WORK: a time needs its unit") and "earlier versions" in text
    assert "about 17 min, written 17min" in text  # 1e12 operations of about 1 ns each
    assert err.value.param == "GCTOOL_MAX_WORK" and "\n" not in text


@pytest.mark.parametrize("raw", ["", "s", "-3s", "0s", "nan s", "infh", "3 days", "3x", "1ns"])
def test_invalid_times_are_refused(raw: str) -> None:
    with pytest.raises(InvalidInput, match="max_work: not a positive time with its unit"):
        parse_time("max_work", raw)


def test_the_default_budget_comes_from_the_environment() -> None:
    assert Budget.default({}) == Budget(float(DEFAULT_MAX_WORK), float(DEFAULT_MAX_MEMORY))
    b = Budget.default({"GCTOOL_MAX_WORK": "2min", "GCTOOL_MAX_MEMORY": "1e6"})
    assert (b.max_work, b.max_memory, b.max_sets) == (120.0, 1e6, None)
    assert Budget.default({"GCTOOL_MAX_WORK": " "}).max_work == DEFAULT_MAX_WORK
    for env, name in (({"GCTOOL_MAX_WORK": "1e9"}, "GCTOOL_MAX_WORK"),
                      ({"GCTOOL_MAX_MEMORY": "lots"}, "GCTOOL_MAX_MEMORY")):
        with pytest.raises(InvalidInput, match=name):
            Budget.default(env)


def test_with_keeps_the_fields_left_unset() -> None:
    b = Budget(10.0, 1e9)
    assert b.with_(max_work=None, max_sets=None) is b
    assert b.with_(max_sets=7) == Budget(10.0, 1e9, 7)


@pytest.mark.parametrize(("field", "value"), [("max_work", 0), ("max_work", float("inf")),
                                              ("max_memory", -1.0), ("max_sets", 0),
                                              ("max_sets", 2.5), ("max_work", True)])
def test_invalid_budgets_name_the_parameter(field: str, value: object) -> None:
    with pytest.raises(InvalidInput, match=f"`{field}` must be") as err:
        Budget(**{field: value})  # type: ignore[arg-type]
    assert err.value.param == field


def test_the_estimate_is_divided_by_the_jobs_that_run_it() -> None:
    b = Budget(max_work=1.0)
    b.check_work("a walk", 3e9, "use fewer sets", jobs=4)  # 0.75 s on 4 jobs: fits
    with pytest.raises(BudgetExceeded) as err:
        b.check_work("a walk", 3e9, "use fewer sets", jobs=2)
    e = err.value
    assert (e.kind, e.param, e.budget) == ("work", "max_work", 1.0)
    assert e.needed == pytest.approx(1.5)
    assert str(e) == ("a walk needs about 1.5 s (estimated, on 2 jobs), above the work budget "
                      "of 1 s (`max_work`, GCTOOL_MAX_WORK); use fewer sets")
    assert "(--max-work, GCTOOL_MAX_WORK)" in in_cli_terms(str(e))


def test_set_and_memory_refusals_carry_their_fields() -> None:
    b = Budget(max_memory=2**20, max_sets=100)
    b.check_sets("verify", 100, "")
    with pytest.raises(BudgetExceeded) as err:
        b.check_sets("verify (n=9, s=3)", 101, "raise `max_sets`")
    assert (err.value.kind, err.value.needed, err.value.budget) == ("sets", 101, 100)
    assert in_cli_terms(str(err.value)).endswith(
        "above the set budget --max-sets = 100; raise --max-sets")
    Budget().check_sets("anything", 10**30, "")  # no explicit cap
    with pytest.raises(BudgetExceeded, match="3 MiB of memory at once, above the memory budget "
                       r"of 1 MiB \(GCTOOL_MAX_MEMORY\)") as err:
        b.check_memory("a table", 3 * 2**20, "use fewer patterns")
    assert err.value.kind == "memory" and err.value.param is None


def test_the_meter_counts_and_refuses_once_past_its_limit() -> None:
    m = Budget(max_work=1e-6).meter("the search", "use a smaller code")  # 1000 ns
    m.charge(600, "sets")
    assert m.remaining == 400 and m.affords(400) and not m.affords(401)
    with pytest.raises(BudgetExceeded) as err:
        m.check(500)
    assert m.spent == 600  # check charges nothing
    with pytest.raises(BudgetExceeded) as err:
        m.charge(500, "probes")
    assert str(err.value) == ("the search (probes so far) has spent about 0.6 us and would "
                              "need at least 1.1 us (estimated, one core), above the work "
                              "budget of 1 us (`max_work`, GCTOOL_MAX_WORK); use a smaller code")
    assert err.value.needed == pytest.approx(1.1e-6) and m.done == 600


def test_a_refusal_words_a_forecast_as_a_forecast_and_spent_as_spent() -> None:
    """Spent: the budget ran out as the work went on, and no more than the time that passed;
    anything else is a forecast (a first batch of a 1000-worker code estimated at 51 min, two
    seconds after the start, had said 'has spent about 51 min')."""
    words = bd.spent_or_forecast
    assert words(4.8e9, 5.9e9, 6.0, "9 sets decoded") == (
        "has spent about 4.8 s and would need at least 5.9 s (estimated, one core; 9 sets "
        "decoded)")
    assert words(0.3e9, 3.1e12, 2.0) == "would take about 52 min or more (estimated, one core)"
    assert words(4.8e9, 5.9e9, 2.0).startswith("would take about 5.9 s or more")  # 4.8 s in 2
    assert words(1e9, 3e9, 10.0).startswith("would take about 3 s")  # the step is most of it


def _spent_claim(text: str) -> float | None:
    """The seconds a refusal says were spent, or None when it states a forecast only."""
    import re

    if "would take about" in text:
        assert "has spent" not in text, text
        return None
    found = re.search(r"has spent about ([\d.,e-]+) (us|ms|s|min)\b", text)
    assert found, text
    unit = {"us": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0}[found.group(2)]
    return float(found.group(1).replace(",", "")) * unit


def test_a_meter_says_spent_only_for_time_that_passed() -> None:
    import time

    m = Meter(1e7, lambda total, what: BudgetExceeded(m.words(total)))  # 10 ms
    t0 = time.perf_counter()
    with pytest.raises(BudgetExceeded) as err:
        m.charge(5e9)  # the first step alone: 5 s, estimated
    assert str(err.value) == "would take about 5 s or more (estimated, one core)"
    m = Meter(1e7, lambda total, what: BudgetExceeded(m.words(total)))
    t0 = time.perf_counter()
    with pytest.raises(BudgetExceeded) as err:
        while True:
            time.sleep(0.001)
            m.charge(1e6)  # 1 ms of work per ms that passes: the budget runs out as it goes
    elapsed = time.perf_counter() - t0
    spent = _spent_claim(str(err.value))
    assert spent is None or spent <= elapsed * 1.05, (str(err.value), elapsed)


@pytest.mark.parametrize("method", ["greedy", "bnb"])
def test_an_oracle_refusal_says_spent_no_more_than_the_wall_time(method: str) -> None:
    """The searches' meter (:class:`gctool.audit.oracles.Oracle`): a first batch over the
    budget is a forecast, and what a later refusal says was spent is at most the wall time of
    the call."""
    import time

    from gctool.audit.oracles import make_oracle
    from gctool.codes import design

    code = design("cyclic", n=24, s=4, seed=1)
    oracle = make_oracle(code, budget=Budget(max_work=1e-6))
    with pytest.raises(BudgetExceeded) as err:
        oracle.errors([[0, 1, 2], [0, 1, 3]])
    assert " would take about " in str(err.value) and oracle.evaluations == 0
    from gctool import api

    t0 = time.perf_counter()
    with pytest.raises(BudgetExceeded) as err:
        api.attack(code, 9, method=method, budget=Budget(max_work=0.003))
    spent = _spent_claim(str(err.value))
    assert spent is None or spent <= time.perf_counter() - t0, str(err.value)


class _Charges:
    """Tasks of uneven length that charge one meter; records who was stopped."""

    def __init__(self, meter: Meter) -> None:
        self.meter = meter
        self.lock = threading.Lock()

    def run(self, task: int) -> int:
        threading.Event().wait(0.0005 * ((task * 7) % 5))
        self.meter.charge(10 + task % 3)
        return task


@pytest.mark.parametrize("jobs", [1, 2, 3])
def test_the_meter_stops_at_the_same_task_for_any_number_of_threads(jobs: int) -> None:
    meter = Meter(200, lambda total, what: BudgetExceeded(f"stopped at {total:g}"))
    seen: list[int] = []
    with pytest.raises(BudgetExceeded, match="stopped at 208$"):
        threads.run_threads(_Charges(meter), list(range(40)), jobs,
                            lambda i, r: seen.append(i) or False)
    assert seen == list(range(18))  # 18 tasks spend 198; the 19th passes 200


def test_times_read_as_a_person_writes_them() -> None:
    assert [bd.format_seconds(x) for x in (1.2e-5, 0.0123, 3.45, 600, 9000, 1e12)] == [
        "12 us", "12 ms", "3.5 s", "10 min", "2.5 h", "32,000 years"]


def test_counts_of_any_size_read_as_a_person_writes_them() -> None:
    """Exact below 16 digits; above, two digits and a power of ten, from the integer (a float
    of C(1200, 599), 360 digits, overflows)."""
    from math import comb

    assert [bd.format_count(x) for x in (0, 10_626, 10**15 - 1)] == [
        "0", "10,626", "999,999,999,999,999"]
    assert [bd.format_count(x) for x in (10**15, 123_456_789_012_345_678, 995 * 10**20,
                                         comb(1200, 599))] == [
        "1e15", "1.2e17", "1e23", "4e359"]


def test_a_design_estimate_names_a_huge_set_count_readably() -> None:
    """frc n=120 s=59: the conditioning record (verify's screen, by row classes) names
    C(120, 59) = 9.5e34 sets readably (frc n=1200 s=599 wrote all 360 digits of its count)."""
    from gctool.codes import design

    method = design("frc", n=120, s=59).params["worst_condition_method"]
    assert " of the 9.5e34 straggler sets " in method and "031,057" not in method, method


def test_format_bytes_says_byte_or_bytes() -> None:
    assert bd.format_bytes(1) == "1 byte"
    assert bd.format_bytes(0) == "0 bytes" and bd.format_bytes(2) == "2 bytes"
    assert bd.format_bytes(4096) == "4,096 bytes" and bd.format_bytes(3 * 2**20) == "3 MiB"
