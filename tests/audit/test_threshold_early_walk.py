"""A size of a threshold search takes the compiled walk early, with the sizes after it
(gctool.audit.exhaustive WITH_NEXT), only when its first sets do not already stop the search:
a search that stops there never loads the kernels; one that goes on keeps the look-ahead.
Reports are the same for every --jobs."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from gctool.algebra.fields import parse_field
from gctool.audit.attack import threshold
from gctool.audit.kernels import numba_available
from gctool.audit.oracles.optimal import OptimalOracle
from gctool.model import GradientCode

from helpers import built
from helpers import same_report as same

pytestmark = pytest.mark.skipif(not numba_available(), reason="the compiled walk needs numba")


@pytest.fixture
def planned(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The sizes an oracle plans on the compiled walk (kernels loaded)."""
    monkeypatch.setenv("GCTOOL_COMPILED", "auto")
    sizes: list[int] = []
    real = OptimalOracle._plan

    def spy(self: OptimalOracle, s: int, given: bool = False) -> Any:
        sizes.append(s)
        return real(self, s, given)

    monkeypatch.setattr(OptimalOracle, "_plan", spy)
    return sizes


def test_a_search_stopped_by_the_first_sets_loads_no_kernels(planned: list[int]) -> None:
    """Dense n = 60, k = 59: sets of 2 fail from the first (threshold 2), and C(60, 4) sets of
    size 4 would walk compiled by themselves, so size 2 was planned compiled with them."""
    B = np.random.default_rng(3).standard_normal((60, 59))
    code = GradientCode(B, parse_field("real"), 1, "custom")
    one = threshold(code, 0.0, method="exhaustive", jobs=1)
    two = threshold(code, 0.0, method="exhaustive", jobs=2)
    assert one.threshold == 2 and one.stragglers == [0, 1] and one.exact
    assert same(one) == same(two)
    assert planned == []


def test_a_search_that_goes_on_walks_the_sizes_before_compiled(planned: list[int]) -> None:
    """Real cyclic n = 40, s = 6: sizes 3 and 4 walk compiled with size 5 (C(40, 5) sets)."""
    code = built("cyclic", 40, 6, seed=1)
    two = threshold(code, 0.0, method="exhaustive", jobs=2)
    assert two.threshold == 7
    assert {3, 4} <= set(planned) and min(planned) == 3


@pytest.mark.parametrize("route", ["fast path", "direct brackets"])
def test_an_early_orbit_size_loads_the_kind_it_is_charged(monkeypatch: pytest.MonkeyPatch,
                                                          route: str) -> None:
    """A size searched one set per rotation orbit that takes the compiled path early, with a
    size after it (_size_plan), loads the kernels of given sets alone (off the fast path none:
    its given sets go to numpy's decoder), the kind its estimate charges it
    (_SearchBudget.work: size 3 of is-cr n=48 s=5 is early for C(48, 5) sets, not for the
    C(48, 4) of the size after it); the walk's kernels are loaded, and charged, with the next
    size.  is-cr n=48 s=5 (rotation i -> i + 1; size 3 searched one set per orbit), and a copy
    of it off the fast path (its rows times an ill-conditioned circulant).  Kernel loads are
    counted."""
    from gctool.audit.exhaustive import _SearchBudget, _size_plan, count_evaluated, rotation_for
    from gctool.audit.kernels import attack_kind
    from gctool.audit.kernels.direct import DirectBrackets
    from gctool.audit.kernels.optimal import HatErrors

    monkeypatch.setenv("GCTOOL_COMPILED", "auto")
    code = built("is-cr", 48, 5, seed=1)
    if route == "direct brackets":
        lam = np.logspace(0, -5, 25)
        c = np.fft.ifft(np.concatenate([lam, lam[1:24][::-1]])).real
        row = np.asarray(code.B)[0] @ np.array([np.roll(c, i) for i in range(48)])
        code = GradientCode(np.array([np.roll(row, i) for i in range(48)]),
                            parse_field("real"), 5)
    oracle = OptimalOracle(code)
    rot = rotation_for(oracle)
    assert rot is not None and oracle._uses_hat(3) is (route == "fast path")
    loads: list[Any] = []
    hat, direct = HatErrors.warm, DirectBrackets.warm

    def hat_spy(self: HatErrors, s: int, given: bool = False) -> None:
        loads.append(attack_kind(False, False, given))
        hat(self, s, given)

    def direct_spy(self: DirectBrackets, s: int) -> None:
        loads.append(attack_kind(True, False))
        direct(self, s)

    monkeypatch.setattr(HatErrors, "warm", hat_spy)
    monkeypatch.setattr(DirectBrackets, "warm", direct_spy)
    monkeypatch.setattr(_SearchBudget, "early", lambda self, t: True)  # (its first sets pass)
    budget = _SearchBudget(oracle, 1, None, rot, 0.0, 6)
    assert budget.rot_at(3) is rot
    charged = budget.work(3, count_evaluated(48, 3, rot))[1]
    _size_plan(oracle, 3, True, rot, 1, None)
    if route == "fast path":
        assert charged and set(loads) == {charged}, (charged, loads)
    else:
        assert charged is False and loads == []
