"""auto's methods after an exhaustive threshold search that the budget stopped are held to what
its sizes left of the budget, not to the meter as the sizes' admissions raised it (a MILP
given 20 s of nodes after sizes estimated at 4.8 s of a 5 s budget)."""

from __future__ import annotations

import pytest

from gctool.audit import exhaustive
from gctool.audit.attack import thresholds
from gctool.audit.oracles import make_oracle
from gctool.budget import NS_PER_S, Budget
from gctool.codes import design
from gctool.errors import BudgetExceeded

from helpers import built


def test_a_stopped_search_counts_the_sizes_it_searched_not_the_one_refused() -> None:
    code = built("cyclic", 40, 6, seed=1)
    oracle = make_oracle(code, budget=Budget(max_work=0.05))
    with pytest.raises(BudgetExceeded) as err:
        exhaustive.threshold(oracle, oracle.limit, symmetry=False)
    assert err.value.proved is not None and err.value.proved >= 2  # sizes 0, 1, ... searched
    # what they were estimated at fits the budget (the refused size would not)
    assert 0 < oracle.estimated <= oracle.budget.work_ns


@pytest.mark.parametrize("estimated, left", [(2.0, 2.9), (4.8, 0.1), (7.0, 0.0)])
def test_the_methods_after_it_get_what_its_sizes_left(estimated: float, left: float) -> None:
    oracle = make_oracle(design("cyclic", n=12, s=3, seed=1), budget=Budget(max_work=5.0))
    before = oracle.meter.spent
    oracle.meter.charge(0.1 * NS_PER_S - before)  # the decoder's set-up and 0.1 s in all
    before = oracle.meter.spent
    oracle.meter.admit(30 * NS_PER_S)  # the sizes' admissions, above the budget
    oracle.meter.charge(0.5 * NS_PER_S)  # what the sizes charged (their numpy route)
    oracle.estimated = estimated * NS_PER_S
    thresholds._leave_rest(oracle, before)
    meter = oracle.meter
    assert meter.limit == pytest.approx(meter.spent + left * NS_PER_S)
    assert left == 0 or meter.affords(left * NS_PER_S * 0.99)
    assert not meter.affords(left * NS_PER_S * 1.01 + 1)
