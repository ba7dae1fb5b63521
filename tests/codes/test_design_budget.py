"""``design`` holds to one work budget: its build (every draw of ``best_of``), its conditioning
record and its self-check share ``max_work`` in that order (:class:`gctool.budget.SharedWork`),
each held to what the parts before it left.  A part that does not fit refuses the design in one
line (exit 2, no file): a design is never written without its record or its self-check."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from gctool import budget as bd
from gctool.budget import NS_PER_S, Budget, SharedWork
from gctool.codes import conditioning, design
from gctool.errors import BudgetExceeded

from helpers import run, shared_runs
from refusals import refused


@pytest.fixture
def runs(monkeypatch: pytest.MonkeyPatch) -> list[SharedWork]:
    """Every :class:`SharedWork` made from now on; no record made before (a record already
    made costs nothing)."""
    conditioning._SEEN.clear()
    return shared_runs(monkeypatch)


def test_the_parts_of_a_design_are_charged_in_order_to_one_budget(runs: list[SharedWork]
                                                                   ) -> None:
    """cyclic n=64 s=1: the build of B, its 64 window solves, the record (cond(B_F) of 64
    sets, exact) and the self-check (the SVD of B), each charged once to one meter held to
    ``max_work``."""
    code = design("cyclic", n=64, s=1, seed=1, budget=Budget(max_work=2.0))
    assert code.params["worst_condition_method"].startswith("exact")
    [run_] = runs
    assert run_.meter.limit == 2.0 * NS_PER_S
    assert len(run_.needs) == 4 and all(need > 0 for need in run_.needs), run_.needs
    assert run_.meter.spent == pytest.approx(sum(run_.needs) * NS_PER_S)
    assert run_.meter.spent <= run_.meter.limit


def test_each_draw_of_best_of_is_charged(runs: list[SharedWork]) -> None:
    design("cyclic", n=40, s=2, seed=3, best_of=3, budget=Budget(max_work=5.0))
    [run_] = runs
    # the builds of the 3 draws; each draw: its window solves and its record; the self-check
    assert len(run_.needs) == 1 + 2 * 3 + 1, run_.needs


def test_a_record_above_the_budget_refuses_the_design(tmp_path: Path) -> None:
    """The screen of rs complex n=36 s=5 (376,992 sets) is estimated before it starts: above
    the budget the design is refused in one line naming the record and --max-work, and no file
    is written; at the default budget it is made."""
    out = tmp_path / "rs.json"
    args = ["design", "rs", "-n", "36", "-s", "5", "--field", "complex", "-o", str(out)]
    line = refused(run(*args, "--max-work", "50ms"), "the conditioning record of the design",
                   "the screen of 376,992 straggler sets", "--max-work")
    assert "`" not in line and not out.exists()
    with pytest.raises(BudgetExceeded, match=r"`max_work`"):  # the library names parameters
        design("rs", n=36, s=5, field="complex", budget=Budget(max_work=0.05))
    assert run(*args).exit_code == 0 and out.exists()


def test_a_self_check_after_the_record_is_held_to_what_the_record_left(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The record charged at 0.9 s of a 1 s budget and the self-check at 0.2 s: each fits the
    budget alone, but the self-check does not fit what the record left, and the refusal says
    so; with 1.2 s both run."""
    monkeypatch.setattr(conditioning, "_set_time", lambda f, cols, cx: 0.9 * NS_PER_S / 64)
    monkeypatch.setattr(bd, "solve_cost", lambda rows, cols, finite=False: 0.2 * NS_PER_S)
    conditioning._SEEN.clear()
    out = tmp_path / "c.json"
    args = ["design", "cyclic", "-n", "64", "-s", "1", "--seed", "1", "-o", str(out)]
    line = refused(run(*args, "--max-work", "1s"), "the float64 self-check of the design",
                   "needs about 200 ms")
    assert re.search(r"above the \d+ ms that the earlier parts of the run \(about 900 ms\) "
                     r"left of the work budget of 1 s \(--max-work", line), line
    assert not out.exists()
    conditioning._SEEN.clear()
    assert run(*args, "--max-work", "1.2s").exit_code == 0 and out.exists()


def test_the_record_estimates_are_within_reach_of_what_it_takes() -> None:
    """Not a timing test: the record's estimate of a screened code stays of the order of its
    work (it is charged at most a few times its per-set rates): the default budget admits the
    designs the docs show (cyclic n=40 s=6, 3,838,380 sets screened)."""
    B = np.asarray(design("cyclic", n=40, s=6, seed=1, budget=Budget(max_work=30.0)).B)
    conditioning._SEEN.clear()
    conditioning.conditioning(B, 6, budget=Budget())  # the default 5 s admits it


def test_writing_the_file_is_part_of_the_budget(tmp_path: Path) -> None:
    """bibd bent-1024 over GF(7) (no record, no self-check): with a budget above the build and
    its NPZ file but below the build and its JSON file, the JSON design is refused in one line
    naming the file's estimate, and nothing is written; the NPZ one is made.  Without a file
    to write (the library's default) the same budget builds it."""
    from gctool.codes import difference_sets as dsm

    ds = dsm.by_name("bent-1024")
    build = (bd.build_cost(0, 0) + bd.entries_cost(ds.v, ds.v) + dsm.incidence_cost(ds)
             + dsm.check_cost(ds))
    as_json, as_npz = (bd.write_cost("gf", npz, ds.v, ds.v) for npz in (False, True))
    assert as_npz < as_json
    limit = (build + (as_json + as_npz) / 2) / NS_PER_S
    args = ["design", "bibd", "--design", "bent-1024", "--field", "GF(7)"]
    out = tmp_path / "bent.json"
    line = refused(run(*args, "-o", str(out), "--max-work", f"{limit * 1e3:.3f}ms"),
                   "writing its 1,024 x 1,024 B as JSON", "--max-work")
    assert "npz" in line and not out.exists()
    npz = tmp_path / "bent.npz"
    assert run(*args, "-o", str(npz), "--max-work", f"{limit * 1e3:.3f}ms").exit_code == 0
    assert npz.exists()
    design("bibd", design="bent-1024", field="GF(7)", budget=Budget(max_work=limit))


def test_write_cost_counts_the_floats_of_a_json_file() -> None:
    """A JSON entry that is not an integer costs its float's repr besides the entry; NPZ and
    GF(q) files cost the same whatever the values."""
    B = np.zeros((4, 5))
    B[0, :3] = [0.5, 1.0, -2.25]
    C = B + 1j * np.where(B == 0.5, 0.25, 0)
    assert bd.write_cost("real", False, 4, 5, B) == 20 * bd.WRITE_JSON_NS["real"] + \
        2 * bd.WRITE_FLOAT_NS
    assert bd.write_cost("complex", False, 4, 5, C) == 20 * bd.WRITE_JSON_NS["complex"] + \
        3 * bd.WRITE_FLOAT_NS
    assert bd.write_cost("real", True, 4, 5, B) == bd.write_cost("real", True, 4, 5) == \
        20 * bd.WRITE_NPZ_NS


def test_a_large_factorisation_costs_more_per_multiply_add_out_of_the_caches() -> None:
    """solve_cost's share per multiply-add falls to LARGE_SOLVE_SHARE up to CACHE_FROM and
    rises again above it (its matrices leave the caches: design cyclic n=2500's self-check,
    one SVD of B, took 7.2-8.2 s of CPU where the flat share said 5.5 s), up to CACHE_SHARE;
    the time itself grows with the side throughout."""
    share = {n: bd.solve_cost(n, n) / n**3 for n in (400, 700, bd.CACHE_FROM, 1500, 2000, 2500,
                                                     4096)}
    near = pytest.approx  # (the cost is whole nanoseconds)
    assert share[400] > share[700] > share[bd.CACHE_FROM] - 1e-6
    assert share[bd.CACHE_FROM] == near(bd.LARGE_SOLVE_SHARE)
    assert bd.LARGE_SOLVE_SHARE < share[1500] < share[2000] == near(bd.CACHE_SHARE)
    assert share[2500] == near(bd.CACHE_SHARE) and share[4096] == near(bd.CACHE_SHARE)
    sides = range(50, 3000, 37)
    costs = [bd.solve_cost(n, n) for n in sides]
    assert all(a < b for a, b in zip(costs, costs[1:], strict=False))
    # a design's self-check of one block of 2500 x 2500 is estimated at the larger share
    assert bd.solve_cost(2500, 2500) == pytest.approx(bd.CACHE_SHARE * 2500**3)
