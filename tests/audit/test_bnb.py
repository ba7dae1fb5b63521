"""audit/bnb.py: branch and bound against brute force over every straggler set."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from gctool.algebra.fields import parse_field
from gctool.audit.bnb import bnb_worst, search
from gctool.audit.oracles import make_oracle
from gctool.model import GradientCode

from bands import attack_interval
from oracles import brute_worst, exact_lstsq_error, lstsq_error, random_sparse_b


def _code(seed: int, n: int, k: int, load: int) -> GradientCode:
    return GradientCode(random_sparse_b(seed, n, k, load), parse_field("real"), 0)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**16), n=st.integers(3, 7), k=st.integers(1, 4),
       load=st.integers(1, 3), data=st.data())
def test_bnb_finds_the_brute_force_worst(seed: int, n: int, k: int, load: int,
                                         data: st.DataObject) -> None:
    s = data.draw(st.integers(1, n - 1))
    code = _code(seed, n, k, load)
    oracle = make_oracle(code)
    found = bnb_worst(oracle, s)
    assert found.exact
    # a worst set and its exact error, each within the error model attack states
    # (tests/bands.py): float64 need not meet a fixed tolerance on an ill-conditioned B
    B = np.asarray(code.B)
    exact = {T: exact_lstsq_error(B, tuple(i for i in range(n) if i not in T))
             for T in itertools.combinations(range(n), s)}
    S = tuple(found.stragglers)
    lo, hi = attack_interval(code, S, exact[S])
    assert lo <= found.error <= hi, (S, found.error, float(exact[S]))
    top = max(exact, key=lambda T: exact[T])
    assert hi >= attack_interval(code, top, exact[top])[0], (S, top)
    worst = float(exact[top])
    assert len(set(found.stragglers)) == s
    assert abs(oracle.error(found.stragglers) - found.error) <= 1e-9 * max(1.0, worst)


def test_first_returns_a_set_above_the_floor_and_budget_stops_with_a_bound() -> None:
    code = _code(3, 7, 3, 2)
    oracle = make_oracle(code)
    worst = brute_worst(code, 3, lstsq_error)
    hit = search(oracle, 3, worst / 2, first=True)
    assert hit.stragglers is not None and hit.error > worst / 2
    capped = search(oracle, 3, -np.inf, max_nodes=1)
    if not capped.complete:
        assert capped.open_bound is not None and capped.open_bound >= worst - 1e-9
