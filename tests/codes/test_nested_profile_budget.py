"""Level profiles of nested codes are held to the work budget (gctool.api.profile, verify and
attack with --profile or --level-counts): estimated before any decoding, refused in one line
naming the budget (exit 2, nothing on stdout); admitted runs answer as before."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

import gctool.api as api
import gctool.codes.nested as nested
from gctool.budget import Budget
from gctool.codes import design
from gctool.errors import BudgetExceeded
from gctool.io import code_bytes

from helpers import run
from refusals import forbid, refused


@pytest.fixture(scope="module")
def code12():  # noqa: ANN201 (a GradientCode)
    return design("nested", n=12, levels=[1, 3], seed=0)


@pytest.mark.parametrize("counts", [[2, 2, 2], [0, 6, 0], [6, 0, 0], [1, 2, 3, 0], [3, 1, 1, 1]])
def test_census_size_counts_the_enumerated_profiles(counts: list[int]) -> None:
    n = sum(counts)
    brute = sum(1 for p in itertools.product(range(len(counts)), repeat=n)
                if [p.count(t) for t in range(len(counts))] == counts)
    assert nested.census_size(counts) == brute == sum(1 for _ in nested._profiles(n, counts))


def test_the_estimate_grows_with_the_rows_received(code12) -> None:  # noqa: ANN001
    few, many = nested.profile_time(code12, [10, 1, 1]), nested.profile_time(code12, [0, 0, 12])
    assert 0 < few < many


@pytest.mark.parametrize("kw", [{"level_counts": [4, 4, 4]},
                                {"levels": [2, 2, 2, 1, 1, 1, 0, 0, 0, 2, 2, 2]}])
def test_the_library_refuses_before_decoding(code12, monkeypatch: pytest.MonkeyPatch,  # noqa: ANN001
                                             kw: dict) -> None:
    monkeypatch.setattr(nested, "_decode_profile", forbid)
    with pytest.raises(BudgetExceeded) as exc:
        api.profile(code12, budget=Budget(max_work=1e-6), **kw)
    assert exc.value.param == "max_work" and "`max_work`" in str(exc.value)
    assert exc.value.needed is not None and exc.value.needed > 1e-6


def test_an_admitted_census_answers_as_without_a_budget(code12) -> None:  # noqa: ANN001
    counts = [9, 2, 1]  # 660 profiles of every level (2,970 of [8, 2, 2] took 1.9 s a run)
    need = nested.census_size(counts) * nested.profile_time(code12, counts) / 1e9
    held = api.profile(code12, level_counts=counts, budget=Budget(max_work=2 * need))
    free = api.profile(code12, level_counts=counts, budget=Budget(max_work=1e6))
    assert held.to_dict() == free.to_dict() and held.profiles == nested.census_size(counts)
    with pytest.raises(BudgetExceeded):  # the same census just under its estimate
        api.profile(code12, level_counts=counts, budget=Budget(max_work=need / 2))


@pytest.mark.parametrize("command", ["verify", "attack"])
@pytest.mark.parametrize("question", [["--level-counts", "4,4,4"],
                                      ["--profile", "2,2,2,1,1,1,0,0,0,2,2,2"]])
def test_the_cli_refuses_in_one_line_naming_max_work(tmp_path: Path, code12,  # noqa: ANN001
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     command: str, question: list[str]) -> None:
    path = tmp_path / "nested.json"
    path.write_bytes(code_bytes(code12, False))
    monkeypatch.setattr(nested, "_decode_profile", forbid)
    line = refused(run(command, str(path), *question, "--max-work", "1us"),
                   "--max-work", "estimated")
    assert "`" not in line
    assert "profiles" in line if question[0] == "--level-counts" else "profile" in line
