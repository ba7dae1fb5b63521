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


def test_a_record_whose_sample_is_above_the_budget_refuses_the_design(tmp_path: Path) -> None:
    """cyclic n=20 s=6 (38,760 sets): at 50 ms the screen of every set gives way to an
    estimate on a sample (tests/codes/test_conditioning_record.py); at 5 ms the sample itself
    does not fit, and the design is refused in one line naming the record and --max-work, no
    file written."""
    out = tmp_path / "c.json"
    args = ["design", "cyclic", "-n", "20", "-s", "6", "--seed", "2", "-o", str(out)]
    conditioning._SEEN.clear()
    line = refused(run(*args, "--max-work", "5ms"), "the conditioning record of the design",
                   "straggler sets", "--max-work")
    assert "`" not in line and not out.exists()

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
    from gctool.family import matrix_verify

    with conditioning.screened_by(matrix_verify):  # as design screens
        worst = conditioning.worst_case(B, 6, budget=Budget())
    # the default 5 s admits the screen of every set (not an estimate), not the exact worst
    # over all of them: the record is verify's figure, labelled a lower bound
    assert worst.screened == worst.total and worst.kind == "lower bound"


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


def test_the_exact_check_of_a_gf_draw_is_charged_the_updates_it_makes(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """cyclic n=16 s=3 over GF(3^12) (tables, p odd): the exact check of the draw is
    estimated at the numpy null-space test's time per set (its fixed part, its d columns and
    the entries its elimination updates at the field's rate) for each of its C(16, 3) sets;
    the entries it updates, counted here as the check runs, are those the estimate counts
    (the rows updated on a sample of sets, d + 1 entries each) within 10 %."""
    from math import comb

    from gctool.algebra.fields import parse_field
    from gctool.algebra.gf import GFArith
    from gctool.algebra.linalg import left_null_reduction
    from gctool.audit import nullspace as ns

    fld = parse_field("GF(3^12)")
    updated, sets, checks = [0], [0], []
    update, check = GFArith.mul_sub_mul, bd.Budget.check_work

    def counted(self: GFArith, c: object, a: np.ndarray, f: object, b: object) -> np.ndarray:
        updated[0] += a.size
        return update(self, c, a, f, b)

    def spy(self: Budget, what: str, work: float, *args: object, **kw: object) -> None:
        checks.append((what, work))
        updated[0] = 0  # the estimate's own count (nullspace.updated_rows) is not the check's
        check(self, what, work, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(GFArith, "mul_sub_mul", counted)
    monkeypatch.setattr(bd.Budget, "check_work", spy)
    from gctool.codes import cyclic

    errors = cyclic._Fails.errors

    def tallied(self: cyclic._Fails, S: np.ndarray) -> np.ndarray:
        sets[0] += len(S)
        return errors(self, S)

    monkeypatch.setattr(cyclic._Fails, "errors", tallied)
    code = design("cyclic", n=16, s=3, field="GF(3^12)", seed=1)
    assert code.params["attempts"] == 1 and sets[0] == comb(16, 3)
    during = updated[0]
    [charged] = {work for what, work in checks if "the exact check of a draw's 560" in what}
    N, W, _ = left_null_reduction(GFArith(fld), np.asarray(code.B), np.ones((1, 16), np.int64))
    red = ns.Reduction(N, W, 16 - N.shape[0], True)
    per = ns.gf_nullspace_time(red, 3, 1, fld)
    assert charged == pytest.approx(comb(16, 3) * per)
    entries = (per - ns.GF_NULL_SET_NS - ns.gf_column_ns(3, red.d, 1) * red.d) / ns.entry_ns(fld)
    assert during / sets[0] == pytest.approx(entries, rel=0.1)


@pytest.mark.parametrize(("family", "n", "s", "spec"), [
    ("rs", 20, 5, "GF(3^12)"), ("rs", 20, 4, "GF(3^12)"), ("rs", 22, 4, "GF(2^7)"),
    ("rs", 20, 4, "GF(65537)"), ("cyclic-mds", 21, 4, "GF(2^6)")])
def test_the_rows_the_gf_test_updates_follow_the_echelon_form_of_n(
        monkeypatch: pytest.MonkeyPatch, family: str, n: int, s: int, spec: str) -> None:
    """The estimate's rows updated per set (nullspace.updated_rows, on a sample) are those the
    numpy null-space test updates over every set (counted here), within 12 %.  N is the
    identity on B's free rows, so where d > s (rs) most stragglers are unit rows that no
    pivot updates: rs GF(3^12) n=40 s=5 updates 0.44 rows a set, and the density of N times
    the row pairs below the pivots, charged before, counted 3.75 (the kernel read 0.74 of the
    estimate where a cyclic code read 1.25, the columns' share carrying it)."""
    from itertools import combinations

    from gctool.algebra.gf import GFArith
    from gctool.algebra.linalg import reduced_decodes
    from gctool.audit import nullspace as ns

    code = design(family, n=n, s=s, field=spec)
    red = ns.reduce_gf(code)
    estimate = ns.updated_rows(red, s, code.field)
    rows = [0]
    update = GFArith.mul_sub_mul

    def counted(self: GFArith, c: object, a: np.ndarray, f: object, b: object) -> np.ndarray:
        rows[0] += a.shape[0]
        return update(self, c, a, f, b)

    monkeypatch.setattr(GFArith, "mul_sub_mul", counted)
    S = np.array(list(combinations(range(n), s)))
    reduced_decodes(GFArith(code.field), red.N, red.W, S)
    assert estimate == pytest.approx(rows[0] / len(S), rel=0.12)
    if family == "rs" and red.d > s:
        N = np.asarray(red.N)
        r = min(s, red.d)
        density_count = np.count_nonzero(N) / N.size * (r * (s - 1) - r * (r - 1) / 2)
        assert estimate < density_count / 2  # the unit rows are not updated


def test_a_digit_of_an_update_over_gf_p_m_costs_what_it_costs_in_every_elimination() -> None:
    """Over GF(p^m), p odd, with tables, the null-space test's update c a - f b reads its two
    products from the tables (as over GF(2^m): one cost whatever m) and subtracts digit by
    digit (GFArith._addsub, one pass per digit), as a whole matrix's elimination subtracts
    after its one product: a digit adds the same to each update (within 1.25x).  It was
    charged 20 ns per digit against the elimination's 7.5, and the exact check of a GF(3^12)
    draw read 0.47 of its estimate (the products, cheap since the tables are zero-padded,
    were charged as digits)."""
    from gctool.algebra.fields import parse_field
    from gctool.algebra.linalg import elimination_cost
    from gctool.audit.nullspace import entry_ns

    for p, m in ((3, 12), (3, 5), (7, 7), (5, 9)):
        hi, lo = parse_field(f"GF({p}^{m})"), parse_field(f"GF({p}^{m - 1})")
        null_digit = entry_ns(hi) - entry_ns(lo)
        whole_digit = (elimination_cost(64, 64, hi) - elimination_cost(64, 64, lo)) / 64**3
        assert null_digit > 0 and whole_digit > 0
        assert 1 / 1.25 <= null_digit / whole_digit <= 1.25, (p, m, null_digit, whole_digit)
