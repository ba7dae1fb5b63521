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
