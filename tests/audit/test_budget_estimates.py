"""The time estimates behind the work budget (issue 28): a run is refused only when its
calibrated estimate (the sets it evaluates times the time per set of the kernel that will run,
divided by the jobs that run it) is above ``max_work``, whatever its number of sets.

Nothing here is timed: every run is refused before it starts (a budget just above the
reduction of B), and the test reads the estimate the refusal carries (``BudgetExceeded.needed``,
in seconds) and checks how it orders and scales."""

from __future__ import annotations

from collections.abc import Callable
from math import comb
from pathlib import Path

import pytest

from gctool.audit.attack import attack
from gctool.audit.kernels.gf import walk_cost
from gctool.audit.kernels.optimal import walk_cost as hat_cost
from gctool.audit.kernels.real import norm_cost, norm_share, screen_cost
from gctool.audit.verify import verify
from gctool.budget import (
    READ_SAMPLE_BYTES,
    START_NS,
    Budget,
    read_cost,
    read_sample,
    sample_offsets,
)
from gctool.codes import design
from gctool.errors import BudgetExceeded
from gctool.model import GradientCode

from helpers import budget_clock, built, stage_sets

#: above every reduction of B here, below every enumeration
SMALL = Budget(max_work=1e-2)


def refused(code: GradientCode, s: int, jobs: int = 1, **kw: object) -> float:
    """The calibrated estimate (seconds) of verify's enumeration, from its refusal: no timed
    probe replaces it (one does within TIMED_SPAN of the budget, see
    :func:`test_a_refusal_near_the_budget_states_the_timed_estimate`)."""
    from gctool.audit.verify import enumeration

    with pytest.raises(BudgetExceeded) as err, pytest.MonkeyPatch.context() as mp:
        mp.setattr(enumeration, "worth_timing", lambda seconds, budget: False)
        verify(code, s, method="exhaustive", jobs=jobs, budget=SMALL,
               **kw)  # type: ignore[arg-type]
    assert err.value.kind == "work" and "straggler sets" in str(err.value), str(err.value)
    assert err.value.needed is not None
    return err.value.needed


def needed(code: GradientCode, s: int, jobs: int = 1, **kw: object) -> float:
    """The sets' share of the estimate (seconds on ``jobs``): without the run's start,
    :data:`gctool.budget.START_NS`, which every estimate adds on no job's share."""
    return refused(code, s, jobs, **kw) - START_NS / 1e9


@pytest.fixture(scope="module")
def cyc48() -> GradientCode:
    return design("cyclic", n=48, s=6, seed=1)


def walk_time(code: GradientCode, s: int) -> float:
    """The compiled screen's calibrated time per set of size s (ns): its screen, and the share
    of decoder norms it computes in full."""
    from gctool.audit.nullspace import reduce_float

    red = reduce_float(code, 1e-9)
    complex_ = code.field.kind == "complex"
    share = norm_share(red.N.T, red.W, code.row_normalised()[1], s)
    return (screen_cost(s, red.d, complex_)
            + share * norm_cost(code.n, s, red.d, code.m, complex_))


def test_the_estimate_is_the_sets_times_the_kernels_time_per_set(cyc48: GradientCode) -> None:
    """Real cyclic n=48, s=6: C(48, 6) sets on the compiled screen (d = s = 6), whose norm
    bound leaves few decoder norms to compute in full."""
    assert needed(cyc48, 6) == pytest.approx(comb(48, 6) * walk_time(cyc48, 6) / 1e9)
    assert walk_time(cyc48, 6) < 1.1 * screen_cost(6, 6)


def test_a_codes_norm_share_is_its_own_not_its_names() -> None:
    """frc: the triangle inequality's bound ``||D W|| + ||D N^T|| ||z||`` exceeds the largest
    norm on every set (the walk computed each set's norm in full, 3-3.5x the screen's own cost
    on frc n=36-60 at s = 5); the bound from the decoder of the set's first s - 1 stragglers
    cuts most of them (walked: 1-5 %), and the estimate counts what its sample's bounds leave;
    cyclic's bound cuts almost every set.  The share is the code's (its norms and their
    bounds), not its scheme's name."""
    import numpy as np

    from gctool.audit.nullspace import reduce_float
    from gctool.model import GradientCode as Code

    frc = design("frc", n=48, s=5)
    renamed = Code(np.asarray(frc.B), frc.field, 5, "custom")
    shares = []
    for code in (frc, renamed):
        red = reduce_float(code, 1e-9)
        shares.append(norm_share(red.N.T, red.W, code.row_normalised()[1], 5))
        assert walk_time(code, 5) == pytest.approx(screen_cost(5, 40)
                                                   + shares[-1] * norm_cost(48, 5, 40, 1))
    assert shares[0] == shares[1] and 0 < shares[0] < 0.3
    assert needed(frc, 5) == pytest.approx(comb(48, 5) * walk_time(frc, 5) / 1e9)
    cyc = built("cyclic", 40, 6, seed=1)
    red = reduce_float(cyc, 1e-9)
    assert norm_share(red.N.T, red.W, cyc.row_normalised()[1], 6) < 0.05
    # the cost of a norm in full grows with n, d and m
    assert norm_cost(60, 5, 50, 1) > norm_cost(48, 5, 40, 1) < norm_cost(48, 5, 40, 2)
    assert norm_cost(48, 5, 40, 1, complex_=True) > norm_cost(48, 5, 40, 1)


def test_the_walk_counts_the_sets_its_later_stages_decide(monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    """is-cr n=30 s=4 walked without orbits (method exhaustive; compiled at any size here):
    the walk's bound leaves three quarters of this 0/1 code's sets below delta, each of them
    given the witness test in the walk (about the second stage's cost), and hands a few on to
    its second stage and direct decoder.  The estimate counts them, at the shares of a sample
    (:meth:`gctool.audit.nullspace.FloatNullKernel.stage_shares`, as the orbits' estimate):
    within 1.5x of a work model on the sets the run itself left to each (below delta: the
    numpy kernel's own tests on every set; the second stage and the direct decoder: counted
    as the run calls them), where the screen and norms alone (the estimate before) read a
    twentieth of it (is-cr n=48 s=5: 87 ms for a 2.8-3.9 s walk)."""
    import itertools

    import numpy as np

    from gctool.audit.chunks import ChunkEval
    from gctool.audit.nullspace import FloatNullKernel, direct_time, reduce_float
    from gctool.limits import DEFAULT_TOL

    monkeypatch.setenv("GCTOOL_COMPILED", "1")
    n, s = 30, 4
    code = design("is-cr", n=n, s=s)
    estimate = needed(code, s) * 1e9
    counted = stage_sets(monkeypatch)
    report = verify(code, s, method="exhaustive", jobs=1, budget=Budget(max_work=100.0))
    assert report.ok and report.checked == comb(n, s)
    assert counted["settle"] > 0 and counted["direct"] > 0, counted
    kernel = FloatNullKernel(code, DEFAULT_TOL, reduce_float(code, DEFAULT_TOL))
    S = np.array(list(itertools.combinations(range(n), s)), dtype=np.int64)
    out = ChunkEval.blank(S.shape[0])
    with np.errstate(all="ignore"):
        kernel.screen_numpy(S, out)
    below = int(np.sum(~(out.screen >= kernel.delta * (1 + 1e-6))))
    assert below > S.shape[0] // 2
    d = kernel.red.d
    walk = S.shape[0] * (screen_cost(s, d) + kernel.norm_share(s) * norm_cost(n, s, d, 1))
    model = (walk + (below + counted["settle"]) * kernel.second_time(s)
             + counted["direct"] * direct_time(code, s))
    assert 1 / 1.5 <= estimate / model <= 1.5, (estimate, model, below, counted)
    assert walk < model / 10


def test_the_estimate_is_divided_by_the_jobs_that_run_it(cyc48: GradientCode) -> None:
    """The sets' share is divided by the jobs; the run's start (10 ms) is not."""
    one, two, four = (needed(cyc48, 6, jobs) for jobs in (1, 2, 4))
    assert two == pytest.approx(one / 2) and four == pytest.approx(one / 4)
    assert refused(cyc48, 6, 2) == pytest.approx(one / 2 + START_NS / 1e9)
    assert START_NS == 10_000_000


def test_the_default_budget_no_longer_refuses_a_large_count_that_is_quick(
        cyc48: GradientCode) -> None:
    """12.3 M sets used to be refused by a default of 5 M sets; their estimate (about a second
    on one core) is within the default time budget, and no set count is a default limit."""
    assert comb(48, 6) > 5_000_000
    assert needed(cyc48, 6) < Budget().max_work and Budget().max_sets is None


def test_the_estimate_grows_with_the_sets_and_the_size_of_each_system(cyc48: GradientCode
                                                                       ) -> None:
    """(n = 56 and 48: above the sets that design screens for conditioning, which costs
    seconds at n = 40.)"""
    large = design("cyclic", n=56, s=6, seed=1)
    assert needed(large, 6) / needed(cyc48, 6) == pytest.approx(
        comb(56, 6) * walk_time(large, 6) / (comb(48, 6) * walk_time(cyc48, 6)))
    assert needed(large, 6) > needed(cyc48, 6) * comb(56, 6) / comb(48, 6) * 0.9
    assert screen_cost(7, 7) > screen_cost(6, 6) > screen_cost(5, 5)
    assert screen_cost(6, 6, complex_=True) > screen_cost(6, 6)
    assert walk_cost(6, 6, 1, prime=True) > walk_cost(6, 6, 1) > walk_cost(5, 5, 1)
    assert hat_cost(6, 6, 48) > hat_cost(5, 5, 48) and hat_cost(6, 6, 24) > hat_cost(6, 6, 48)
    assert hat_cost(6, 5, 48) > hat_cost(6, 6, 48)  # a lost direction: each set alone


def test_the_kernel_that_will_run_sets_the_time_per_set(cyc48: GradientCode,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The compiled screen is estimated below the numpy null-space kernel, which is below the
    direct decoder (one least-squares solve per set), on the same sets."""
    compiled = needed(cyc48, 6)
    direct = needed(cyc48, 6, kernel="direct")
    monkeypatch.setenv("GCTOOL_COMPILED", "never")
    numpy = needed(cyc48, 6)
    assert compiled < numpy < direct


def test_finite_fields_and_complex_codes_have_their_own_rates() -> None:
    import numpy as np

    from gctool.audit.nullspace import reduce_gf

    gf = design("cyclic-mds", n=63, s=6, field="GF(2^6)")
    N = reduce_gf(gf).N  # the walk skips the rows whose pivot entry is zero
    density = np.count_nonzero(N) / N.size
    assert 0.5 < density < 1
    assert needed(gf, 6) == pytest.approx(comb(63, 6) * walk_cost(6, 6, 1, False, 63, density)
                                          / 1e9)
    # a sparse N (rs: N in echelon form, d = 27 of n = 50) costs less per set than a dense one
    assert walk_cost(5, 27, 1, False, 50, 0.1) < walk_cost(5, 27, 1, False, 50, 0.9)
    # the first s - 1 rows change (and are brought to echelon again) more often for a small n
    assert walk_cost(6, 6, 1, False, 31) > walk_cost(6, 6, 1, False, 63)
    z = design("cyclic-mds", n=36, s=5, field="complex")
    assert needed(z, 5) == pytest.approx(comb(36, 5) * walk_time(z, 5) / 1e9)
    # the decoder's elimination over GF(p^m), p odd, adds digit by digit: m times a digit's
    # rate per multiply-add, beside GF(2^m)'s and GF(p)'s own rates
    from gctool.algebra import gf as gfa
    from gctool.decode import cost

    rs = design("rs", n=24, s=4, field="GF(3^4)")
    f, K = 20, rs.B.shape[1]
    assert cost.gf_set_time(rs, 4) == pytest.approx(
        cost.ELIMINATION_SET_NS + 4 * gfa.DECODER_DIGIT_NS * f * K * min(f, K))
    assert 4 * gfa.DECODER_DIGIT_NS > gfa.DECODER_PRIME_NS > gfa.DECODER_GF2_NS


def test_the_decoders_svd_costs_less_per_multiply_add_as_its_systems_grow() -> None:
    """The optimal decoder's SVD over R/C (export's tables, the numpy route's sets): its
    estimate grows with f and with K, complex systems cost more than real ones, and its time
    per multiply-add falls with the size down to the large systems' rate (a single rate read
    2.4x low at 37 x 40 and 0.4x at 6 x 4)."""
    from gctool.decode import cost

    sizes = [(6, 4), (12, 10), (20, 20), (37, 40), (54, 50), (100, 90), (196, 160), (400, 350),
             (999, 1000)]
    for complex_ in (False, True):
        times = [cost.svd_time(f, K, complex_) for f, K in sizes]
        assert times == sorted(times) and len(set(times)) == len(times)
        per = [(t - cost.SVD_SET_NS) / (f * K * min(f, K)) for t, (f, K) in zip(times, sizes,
                                                                              strict=True)]
        assert all(a >= b for a, b in zip(per, per[1:], strict=False))
        floor = cost.SVD_LARGE_NS * (cost.SVD_COMPLEX if complex_ else 1.0)
        assert per[-1] == pytest.approx(floor)
    for f, K in sizes:
        assert cost.svd_time(f + 1, K) > cost.svd_time(f, K) < cost.svd_time(f, K + 1)
        assert cost.svd_time(f, K, True) > cost.svd_time(f, K)


def test_the_numpy_test_over_gf_q_counts_its_columns_and_its_updates() -> None:
    """Over GF(q) without a compiled walk (GF(p^m) with p odd), the batched elimination visits every
    one of the d columns and updates the rows below each pivot whose entry is non-zero (counted on a
    sample of sets: nullspace.updated_rows), an addition digit by digit over GF(p^m); over GF(p) an
    update is reduced once (GFArith.mul_sub_mul), cheaper than GF(2^m)'s two table products; the
    mod-p screen of exact verification is charged at GF(p)'s rate."""
    from gctool.algebra.fields import parse_field
    from gctool.audit import nullspace as ns
    from gctool.audit.rational import PRIME, RationalKernel

    rs = design("rs", n=40, s=4, field="GF(3^4)")
    red = ns.reduce_gf(rs)
    assert ns.entry_ns(rs.field) == 4 * ns.GF_NULL_DIGIT_NS and red.d == 32
    assert ns.entry_ns(design("rs", n=40, s=4, field="GF(2^7)").field) == ns.GF_NULL_ENTRY_NS
    prime = ns.entry_ns(design("rs", n=12, s=2, field="GF(13)").field)
    assert prime == ns.entry_ns(parse_field("GF(2147483647)")) == ns.GF_NULL_PRIME_ENTRY_NS
    assert prime < ns.GF_NULL_ENTRY_NS
    per = ns.gf_nullspace_time(red, 4, 1, rs.field)
    assert needed(rs, 4) == pytest.approx(comb(40, 4) * per / 1e9)
    # rs's N is in echelon form: few updates, the columns carry it
    assert per == pytest.approx(ns.GF_NULL_SET_NS + ns.gf_column_ns(4, 32, 1) * 32, rel=0.1)
    dense = design("cyclic-mds", n=40, s=6, field="GF(3^4)")
    dred = ns.reduce_gf(dense)
    fld = dense.field
    assert ns.gf_nullspace_time(dred, 6, 1, fld) > ns.gf_nullspace_time(dred, 6, 1, fld, prime) > (
        ns.gf_nullspace_time(dred, 3, 1, fld, prime))
    assert RationalKernel(dense, dred).set_time(6, 1000) == ns.gf_nullspace_time(
        dred, 6, 1, parse_field(f"GF({PRIME})"))


def test_the_exhaustive_attack_is_estimated_with_its_compiled_walk(
        cyc48: GradientCode, monkeypatch: pytest.MonkeyPatch) -> None:
    """The calibrated estimate is the compiled walk's; the timed probe of that walk replaces
    it (either way), on the jobs that run it (a clock of 100 ms per reading), when it is
    within TIMED_SPAN of the budget; farther above it, the calibrated estimate refuses at
    once, untimed."""
    from gctool.audit.oracles import make_oracle

    oracle = make_oracle(cyc48)
    assert oracle.set_work(6, comb(48, 6)) == pytest.approx(comb(48, 6) * hat_cost(6, 6, 48))
    clock = iter(range(10**6))
    budget_clock(monkeypatch, lambda: next(clock) * 0.1)
    near = Budget(max_work=0.1)  # the calibrated 0.86 s is within TIMED_SPAN of it
    for jobs in (1, 2):
        with pytest.raises(BudgetExceeded) as err:
            attack(cyc48, 6, method="exhaustive", symmetry=False, budget=near, jobs=jobs)
        assert "timed on a sample" in str(err.value)
        assert err.value.needed == pytest.approx(0.1 * comb(48, 6) / jobs, rel=1e-3)
        with pytest.raises(BudgetExceeded) as err:  # 48 times SMALL: not timed
            attack(cyc48, 6, method="exhaustive", symmetry=False, budget=SMALL, jobs=jobs)
        assert "timed" not in str(err.value)
        assert err.value.needed == pytest.approx(oracle.set_work(6, comb(48, 6)) / jobs / 1e9,
                                                 rel=0.05)


def test_a_refusal_near_the_budget_states_the_timed_estimate(
        cyc48: GradientCode, monkeypatch: pytest.MonkeyPatch) -> None:
    """A verify whose calibrated estimate is above the budget but within TIMED_SPAN of it is
    timed before it is refused (its kernel loaded, its pilot run, then the probe), and the
    refusal states the timed estimate (a clock of 100 ms per reading); farther above it, the
    calibrated estimate refuses at once, untimed, as the attack's does."""
    from gctool import budget

    calibrated = needed(cyc48, 6)  # about 0.37 s
    clock = iter(range(10**6))
    budget_clock(monkeypatch, lambda: next(clock) * 0.1)
    near = Budget(max_work=calibrated / 3)
    assert budget.worth_timing(calibrated, near.max_work)
    for jobs in (1, 2):
        with pytest.raises(BudgetExceeded) as err:
            verify(cyc48, 6, method="exhaustive", jobs=jobs, budget=near)
        assert "timed on 1 of them" in str(err.value), str(err.value)
        assert err.value.needed == pytest.approx(0.1 * comb(48, 6) / jobs + START_NS / 1e9,
                                                 rel=1e-3)
        far = Budget(max_work=calibrated / jobs / (budget.TIMED_SPAN + 1))
        with pytest.raises(BudgetExceeded) as err:
            verify(cyc48, 6, method="exhaustive", jobs=jobs, budget=far)
        assert "timed" not in str(err.value)
        assert err.value.needed == pytest.approx(calibrated / jobs + START_NS / 1e9)


def _groups_code(groups: list[list[int]]) -> GradientCode:
    """A repetition code over R: worker i computes the sum of its group's partition (one
    partition per group), so that a straggler set fails exactly when it holds a whole group."""
    import numpy as np

    from gctool.algebra.fields import parse_field

    n = sum(len(g) for g in groups)
    B = np.zeros((n, len(groups)))
    for j, g in enumerate(groups):
        B[g, j] = 1.0
    return GradientCode(B, parse_field("real"), min(len(g) for g in groups) - 1, "custom")


def _numpy_route_runs() -> list[tuple[str, GradientCode, int, dict[str, object]]]:
    """Runs of SAMPLE_MIN sets or more, below PROBE_MIN * PROBE, on the numpy route (below
    the compiled walk's MIN_SETS): a walk of frc n=30 s=4 (27,405 sets, all decodable), of
    two repetition codes whose one failing set of size 4 is the last rank ({26..29}) or
    before the middle ({4..7}, rank 12,455, which the windows at 0, 64, 128, ... miss), and
    one set per rotation orbit of cyclic-MDS real n=30 s=5 (4,751 orbits)."""
    return [("frc", design("frc", n=30, s=4), 4, {"method": "exhaustive"}),
            ("fails-last", _groups_code([list(range(10)), list(range(10, 20)),
                                         list(range(20, 26)), list(range(26, 30))]), 4,
             {"method": "exhaustive"}),
            ("fails-mid", _groups_code([[0, 1, 2, 3, *range(8, 16)], [4, 5, 6, 7],
                                        list(range(16, 30))]), 4, {"method": "exhaustive"}),
            ("orbits", design("cyclic-mds", n=30, s=5), 5, {})]


def _calibrated(code: GradientCode, s: int, jobs: int = 1, **kw: object) -> float:
    """verify's calibrated estimate (seconds on ``jobs``, the run's start included) from its
    refusal under a small budget, with no timed probe in its place."""
    from gctool.audit.verify import enumeration

    with pytest.raises(BudgetExceeded) as err, pytest.MonkeyPatch.context() as mp:
        mp.setattr(enumeration, "worth_timing", lambda seconds, budget: False)
        verify(code, s, jobs=jobs, budget=Budget(max_work=1e-3),
               **kw)  # type: ignore[arg-type]
    assert err.value.kind == "work" and "timed" not in str(err.value), str(err.value)
    assert err.value.needed is not None
    return err.value.needed


@pytest.mark.parametrize("name", ["frc", "orbits"])
def test_a_numpy_route_refusal_near_the_budget_states_the_timed_estimate(
        monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """A run below PROBE_MIN * PROBE sets whose calibrated estimate is above the budget but
    within TIMED_SPAN of it (the numpy route, whose rate per set depends on the code; one set
    per rotation orbit) is
    timed on a sample before it is refused, and the refusal states the timed estimate (a
    clock of 100 ms per reading: its first set after the warm-up decides); farther above the
    budget, the calibrated estimate refuses untimed."""
    from gctool import budget
    from gctool.audit.kernels import MIN_SETS
    from gctool.audit.symmetry import count_orbits, filter_work

    runs = {r[0]: r[1:] for r in _numpy_route_runs()}
    code, s, kw = runs[name]
    assert budget.SAMPLE_MIN <= comb(code.n, s) < min(MIN_SETS, budget.PROBE_MIN * budget.PROBE)
    calibrated = _calibrated(code, s, **kw)
    sets, filt = comb(code.n, s), 0.0
    if name == "orbits":
        sets, filt = count_orbits(code.n, s), filter_work(code.n, s, 1)
    clock = iter(range(10**6))
    budget_clock(monkeypatch, lambda: next(clock) * 0.1)
    near = Budget(max_work=calibrated / 3)
    with pytest.raises(BudgetExceeded) as err:
        verify(code, s, jobs=1, budget=near, **kw)  # type: ignore[arg-type]
    assert "timed on 1 of them" in str(err.value) and "\n" not in str(err.value), \
        str(err.value)
    assert err.value.needed == pytest.approx(0.1 * sets + (filt + START_NS) / 1e9, rel=1e-3)
    far = Budget(max_work=calibrated / (2 * budget.TIMED_SPAN))
    with pytest.raises(BudgetExceeded) as err:
        verify(code, s, jobs=1, budget=far, **kw)  # type: ignore[arg-type]
    assert "timed" not in str(err.value)
    assert err.value.needed == pytest.approx(calibrated)


def _probe_spies(monkeypatch: pytest.MonkeyPatch, scale: float = 1.0) -> list[object]:
    """Record what verify's probes return (None: nothing timed); ``scale`` multiplies the
    timed rate they hand back (the probe still decides its sets)."""
    from gctool.audit.verify import enumeration

    seen: list[object] = []
    for name in ("probe_rate", "probe_sample"):
        real = getattr(enumeration, name)

        def spy(*a: object, _real: Callable[..., object] = real, **k: object) -> object:
            out = _real(*a, **k)
            seen.append(out)
            if out is None:
                return None
            rate, timed, stopped = out  # type: ignore[misc]
            return rate * scale, timed, stopped

        monkeypatch.setattr(enumeration, name, spy)
    return seen


def _doc(code: GradientCode, s: int, jobs: int, **kw: object) -> dict[str, object]:
    doc = verify(code, s, jobs=jobs, **kw).to_dict()  # type: ignore[arg-type]
    for key in ("elapsed_s", "jobs", "estimate"):
        doc.pop(key, None)
    return doc


def test_a_run_within_the_budget_is_not_timed_for_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Below PROBE_MIN * PROBE sets, a run the calibrated estimate admits times nothing: the
    sample is taken only to refuse on it."""
    seen = _probe_spies(monkeypatch)
    for _, code, s, kw in _numpy_route_runs():
        _doc(code, s, 1, **kw)
    assert seen and all(out is None for out in seen), seen


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_run_admitted_on_its_timed_sample_keeps_its_report(
        monkeypatch: pytest.MonkeyPatch, jobs: int) -> None:
    """A run the calibrated estimate puts over the budget but its timed sample within it
    (here the probe's rate divided by 1000) runs, and its report (verdict, counterexample,
    counts, diagnostics) is the one of a run under no budget: the sample's ranges are folded
    in their place, whether the failing set lies before the probed window, after it, or
    nowhere (processes on two jobs)."""
    for name, code, s, kw in _numpy_route_runs():
        plain = _doc(code, s, jobs, **kw)
        # just below the calibrated estimate: its sets' share (5 ms or more) is timed, and
        # the run's start and the orbit filter fit
        budget = Budget(max_work=_calibrated(code, s, jobs, **kw) - 1e-3)
        with pytest.MonkeyPatch.context() as mp:
            seen = _probe_spies(mp, scale=1e-3)
            timed = _doc(code, s, jobs, budget=budget, **kw)
        assert any(out is not None for out in seen), name  # timed, then admitted
        assert timed == plain, name
        assert plain["ok"] == (name in ("frc", "orbits")), name


def test_an_explicit_set_cap_still_refuses(cyc48: GradientCode) -> None:
    with pytest.raises(BudgetExceeded) as err:
        verify(cyc48, 6, method="exhaustive", budget=Budget(max_sets=1_000_000))
    assert (err.value.kind, err.value.param, err.value.needed) == ("sets", "max_sets",
                                                                  comb(48, 6))


def test_a_refusal_is_one_line_with_the_estimate_and_the_flag(cyc48: GradientCode,
                                                               tmp_path: Path) -> None:
    """The CLI refuses in one stderr line naming --max-work, with the library's estimate."""
    from gctool.budget import format_seconds
    from gctool.io import write_code

    from helpers import run

    write_code(cyc48, tmp_path / "c.json")
    res = run("verify", str(tmp_path / "c.json"), "--method", "exhaustive", "--jobs", "2",
              "--max-work", "10ms")
    lines = res.stderr.strip().splitlines()
    assert res.exit_code == 2 and len(lines) == 1, res.stderr
    assert "--max-work" in lines[0] and "`max_work`" not in lines[0]
    assert f"needs about {format_seconds(refused(cyc48, 6, 2))} (estimated, on 2 jobs)" \
        in lines[0]


def test_a_run_the_model_lets_through_is_refused_on_its_timed_probe(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A code whose sets cost more than the calibrated rate (ill-conditioned: the cheap bound
    rarely decides) is refused on the probe's measured time per set: here a clock that
    advances 100 ms per reading, so the probe's first set, timed alone, takes 100 ms (slow
    enough to decide at once)."""

    code = design("cyclic", n=30, s=6, seed=1)  # 593,775 sets: a priori about 50 ms
    clock = iter(range(10**6))  # 100 ms per reading
    budget_clock(monkeypatch, lambda: next(clock) * 0.1)
    with pytest.raises(BudgetExceeded) as err:
        verify(code, 6, method="exhaustive", jobs=2, budget=Budget(max_work=1.0))
    text = str(err.value)
    assert err.value.kind == "work" and "\n" not in text
    assert "timed on 1 of them" in text and "`max_work`" in text
    per_set = 0.1
    assert err.value.needed == pytest.approx(per_set * comb(30, 6) / 2, rel=1e-3) or \
        err.value.needed == pytest.approx(per_set * comb(30, 6), rel=1e-3)
    monkeypatch.undo()
    assert verify(code, 6, method="exhaustive", budget=Budget(max_work=60.0)).ok


def test_a_probe_that_is_not_slow_at_once_times_a_task_of_the_runs_size(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Sets that are quick at first (their first calls from the middle of the ranks) are timed
    on a whole task of the run's size (one chunk of the compiled walk, at most 1/PROBE_MIN of
    the run), cut into windows spread over the ranks (from the middle of each share), as many
    as PROBE_WINDOWS where walk calls cost nothing of their own, walked in bit-reversed order,
    and the probe's rate decides."""
    from gctool import budget

    now, seen = [0.0], list[tuple[int, int]]()
    # a clock of 10 ns per set: the machine's own timing of these calls (tens of us) can read
    # 2-3 times as long on a busy machine, whose probe then takes the calls of slow sets
    budget_clock(monkeypatch, lambda: now[0])

    def walk(a: int, b: int) -> tuple[int, bool]:
        seen.append((a, b))
        now[0] += (b - a) * 1e-8
        return b - a, False

    assert budget.probe_rate(walk, budget.PROBE_MIN * budget.PROBE - 1, 10**6, 1.0) is None
    stop = 10**8
    rate, timed, stopped = budget.probe_rate(walk, stop, 65536, 1e9) or (0.0, 0, True)
    windows, first = budget.PROBE_WINDOWS, budget.PROBE_FIRST
    mid, part = stop // 2, 65536 // windows
    assert windows > 1
    spread = [(stop * i // (2 * windows), stop * i // (2 * windows) + part)
              for i in range(1, 2 * windows, 2)]
    # the warm-up, the rest of the first PROBE_FIRST, one set alone (a call's fixed cost)
    assert seen[:3] == [(mid, mid + 1), (mid + 1, mid + first), (mid + first, mid + first + 1)]
    assert seen[3:] == [spread[i] for i in budget._visits(windows)]
    assert sorted(seen[3:]) == spread and sorted(budget._visits(windows)) == list(range(windows))
    assert timed == first + 1 + 65536 and not stopped and rate == pytest.approx(10)
    # a search that finds what it looks for within a few sets is not timed on them (a task's
    # fixed cost over a few sets would make its rate look thousands of times too high)
    assert budget.probe_rate(lambda a, b: (3, True), stop, 65536, 1.0) is None
    assert budget.probe_rate(lambda a, b: (b - a if a == mid else 100, a != mid), stop, 65536,
                             1.0) is None


def test_a_slow_probe_stops_once_it_shows_the_run_over_the_budget(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Sets that turn slow after the quick first ones (doubtful sets decided in exact
    arithmetic) are walked in calls of growing size, and the probe returns after the one
    that brings it to PROBE_OVER_S at a rate over the budget, instead of walking its whole
    task (comm n=40 s=5 m=2: 83 s of CPU before its refusal); a probe under the budget walks
    it all."""
    from gctool import budget

    now, seen = [0.0], list[tuple[int, int]]()
    budget_clock(monkeypatch, lambda: now[0])
    stop, first = 10**8, budget.PROBE_FIRST
    mid = stop // 2  # (the probe's first calls')

    def walk(a: int, b: int) -> tuple[int, bool]:  # 1 us per set of the first 64, else 1 ms
        seen.append((a, b))
        now[0] += sum(1e-6 if mid <= r < mid + first else 1e-3 for r in range(a, b))
        return b - a, False

    rate, timed, stopped = budget.probe_rate(walk, stop, 65536, over=1e5) or (0.0, 0, True)
    assert rate == pytest.approx(1e6) and not stopped
    assert budget.PROBE_OVER_S <= (timed - first) * 1e-3 < 2 * budget.PROBE_OVER_S
    # (after one set alone: a call that doubles the 65 ranks walked to read their rate per
    # rank, then the windows' calls that double on)
    assert [b - a for a, b in seen[3:]] == [65, 130, 260, 520]  # 0.46 s, then 0.98 s: over
    seen.clear()
    rate, timed, _ = budget.probe_rate(walk, stop, 8192, over=1e7) or (0.0, 0, True)
    # (its first sets, at 1 us, say that a call of 1 ms, the set alone, is a fixed cost that
    # windows would count: one window, from the middle, walked on)
    assert seen[-1][1] == mid + 8192 and rate == pytest.approx(1e6) and timed == 8192


def test_a_probe_times_one_set_alone_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """The probe's first sets are timed alone, and slow ones decide at once (bound of a
    1000-worker code walked 64 sets of 1.6 s each before it refused at 5 s; an
    ill-conditioned code's sets in exact arithmetic take as long, with no calibrated rate
    to foresee it): the first, a warm-up that loads the kernels, then the second, whose
    time alone is the rate."""
    from gctool import budget

    seen: list[tuple[int, int]] = []
    clock = iter(range(10**6))  # each walk takes one second of the thread's CPU
    budget_clock(monkeypatch, lambda: float(next(clock)))

    def walk(a: int, b: int) -> tuple[int, bool]:
        seen.append((a, b))
        return b - a, False

    stop, mid = 10**8, 10**8 // 2  # (the probe's first calls')
    rate, timed, _ = budget.probe_rate(walk, stop, 65536, 1e6) or (0, 0, 0)
    assert seen == [(mid, mid + 1), (mid + 1, mid + 2)] and timed == 1
    assert rate == budget.NS_PER_S
    # a run whose budget affords a second per set: the probe goes on to its task
    seen.clear()
    budget.probe_rate(walk, stop, 65536, 2 * budget.NS_PER_S)
    assert seen[:4] == [(mid, mid + 1), (mid + 1, mid + 2), (mid + 2, mid + 4),
                        (mid + 4, mid + 8)]
    # (slow sets: 64 sets in 7 calls, one set alone, no calls that grow to read their rate
    # (each took the probe's PROBE_EARLY_S), then the windows in calls that double the 65
    # ranks walked, read as they go, each cut where a window starts within it)
    windows = budget.PROBE_WINDOWS
    part, ends, at = 65536 // windows, set(), 0
    while at < 65536:
        at += min(65536 - at, 65 + at)
        ends.add(at)
    cut = sum(1 for j in range(1, windows) if j * part not in ends)
    assert seen[-1][1] == stop * (2 * windows - 1) // (2 * windows) + part
    assert len(seen) == 8 + len(ends) + cut and sum(b - a for a, b in seen) == 65 + 65536


#: the first walk call of a fresh process loads the kernels it decides sets with: numba's
#: cache, 30-60 ms of CPU (seconds when a kernel compiles), paid once per process
LOAD_S = 3.0


def _loading_walk(now: list[float], seen: list[tuple[int, int]], per_set: float,
                  holds: Callable[[int], bool] = lambda r: True
                  ) -> Callable[[int, int], tuple[int, bool]]:
    """A walk on a fake clock ``now`` (seconds): ``per_set`` for each rank that ``holds`` a
    set, 1% of it for the others (the orbit filter's skipping), and :data:`LOAD_S` once, in
    the first call that decides a set."""
    loaded = [False]

    def walk(a: int, b: int) -> tuple[int, bool]:
        seen.append((a, b))
        sets = sum(1 for r in range(a, b) if holds(r))
        now[0] += sets * per_set + (b - a - sets) * per_set / 100
        if sets and not loaded[0]:
            loaded[0] = True
            now[0] += LOAD_S
        return sets, False

    return walk


def test_a_probe_does_not_read_the_kernels_loading_as_the_time_of_its_first_set(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The kernels' loading in the probe's first walk call (3 s here, on a clock of 10 ns
    per set) is not a set's time: read as one, it made the first set's rate 3e9 ns, which
    refused the worst case of frc n=40 s=4 at size 5 (82,251 orbit sets, 0.1 s) at about
    43 h, in a fresh process; the rate is the sets' own, within 2x, and a budget far below
    the loading time does not refuse them."""
    from gctool import budget

    now, seen = [0.0], list[tuple[int, int]]()
    budget_clock(monkeypatch, lambda: now[0])
    stop, over = 10**8, 100.0  # the run affords 100 ns per set: 10x its sets' rate
    probed = budget.probe_rate(_loading_walk(now, seen, 1e-8), stop, 65536, over)
    assert probed is not None and not probed[2]
    assert probed[0] == pytest.approx(10.0, rel=1.0) and probed[0] <= over
    mid = stop // 2  # (the probe's first calls')
    assert seen[0] == (mid, mid + 1)  # the warm-up: one rank
    # slow sets (1 s each) are still refused early, on the set after the warm-up
    now[0], seen[:] = 0.0, []
    rate, timed, _ = budget.probe_rate(_loading_walk(now, seen, 1.0), stop, 65536,
                                       over) or (0.0, 0, True)
    assert rate == pytest.approx(budget.NS_PER_S) and timed == 1 and len(seen) == 2


def test_a_probe_of_orbit_candidates_warms_up_on_their_first_set(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """On rotation orbits the probe's first ranks may hold no set (none of them loads the
    kernels): its warm-up walks on, one rank then calls that double, to the first call that
    decides a set, and no rate counts it; a window whose sets are sparse is still said to be
    (the dense window at rank 0 times them), with the loading in neither."""
    from gctool import budget

    now, seen = [0.0], list[tuple[int, int]]()
    budget_clock(monkeypatch, lambda: now[0])
    stop = 39_030  # sets only in the first 10,000 ranks and at every 50th rank after them
    walk = _loading_walk(now, seen, 1e-6, lambda r: r < 10_000 or r % 50 == 0)
    mid = stop // 2
    probed = budget.probe_rate(walk, stop, 1024, over=1e4, least=budget.SAMPLE_MIN, dense=0)
    # one rank, then 2, 4, 8, 16, 32: the sixth call holds 19,550, the first set after mid
    assert seen[:6] == [(mid, mid + 1), (mid + 1, mid + 3), (mid + 3, mid + 7),
                        (mid + 7, mid + 15), (mid + 15, mid + 31), (mid + 31, mid + 63)]
    assert probed is not None and probed[0] == pytest.approx(1000.0, rel=0.05)
    # every rank holds a set: the first call decides one and loads the kernels, the next
    # one set alone (the warm-up was slow), then the rest of the first PROBE_FIRST together
    now[0], seen[:] = 0.0, []
    probed = budget.probe_rate(_loading_walk(now, seen, 1e-6), stop, 1024, over=1e4,
                               least=budget.SAMPLE_MIN, dense=0)
    assert probed is not None and probed[0] == pytest.approx(1000.0, rel=0.05)
    assert seen[:3] == [(mid, mid + 1), (mid + 1, mid + 2), (mid + 2, mid + budget.PROBE_FIRST)]


def test_the_worst_case_on_orbits_is_not_refused_on_the_kernels_loading(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """frc n=40 s=4 at size 5 by one set per rotation orbit (82,251 of 658,008 sets), its
    probe's walk loading its kernels for 3 s of CPU in its first call (a clock of 10 ns per
    rank walked besides): admitted at the default budget, estimated at its sets' rate."""
    from gctool.audit import exhaustive

    monkeypatch.setattr(exhaustive, "orbits_pay", lambda *args: True)
    now = [0.0]
    budget_clock(monkeypatch, lambda: now[0])
    real = exhaustive._twin_walk

    def twin_walk(*args: object, **kw: object) -> tuple[object, int, int]:
        walk, stop, size = real(*args, **kw)  # type: ignore[arg-type]
        loaded = [False]

        def timed(a: int, b: int) -> tuple[int, bool]:
            some, found = walk(a, b)
            now[0] += (b - a) * 1e-8 + (LOAD_S if some and not loaded[0] else 0.0)
            loaded[0] = loaded[0] or some > 0
            return some, found

        return timed, stop, size

    monkeypatch.setattr(exhaustive, "_twin_walk", twin_walk)
    code = design("frc", n=40, s=4)
    report = attack(code, 5, method="exhaustive", budget=Budget())
    assert report.exact and report.checked == 82_251
    assert any("one set per orbit" in note for note in report.notes)


def test_the_windows_stop_within_their_time_when_one_set_is_slow(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """first_finding walks its first set alone, then what the time left affords at the rate
    so far: sets of seconds each (exact arithmetic) stop it after one, not after a window
    of 32 (minutes)."""
    from gctool import budget

    seen: list[tuple[int, int]] = []
    cpu = [0.0]
    budget_clock(monkeypatch, lambda: cpu[0])

    def walk(a: int, b: int, per: float) -> tuple[int, bool]:
        seen.append((a, b))
        cpu[0] += per * (b - a)
        return b - a, False

    assert budget.first_finding(lambda a, b: walk(a, b, 2.0), 10**6) is None
    assert seen == [(0, 1)]
    seen.clear()  # 0.1 s per set: the first, then the one more the 0.25 s affords
    assert budget.first_finding(lambda a, b: walk(a, b, 0.1), 10**6) is None
    assert seen == [(0, 1), (1, 2), (2, 3)] and cpu[0] == pytest.approx(2.3)


def test_a_small_enumeration_is_timed_on_a_sample_when_asked(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Below PROBE_MIN * PROBE sets, a probe with ``least`` times a sample from the middle:
    SAMPLE sets at least (a task's fixed cost spread over them), 1/PROBE_MIN of larger
    enumerations; below ``least`` (at least SAMPLE_MIN) it says nothing."""
    from gctool import budget

    seen: list[tuple[int, int]] = []

    def walk(a: int, b: int) -> tuple[int, bool]:
        seen.append((a, b))
        return b - a, False

    first = budget.PROBE_FIRST
    for stop, size in ((10_000, budget.SAMPLE), (200_000, 200_000 // budget.PROBE_MIN)):
        seen.clear()
        assert budget.probe_rate(walk, stop, 65536, 1e9) is None  # not asked: not timed
        rate, timed, _ = budget.probe_rate(walk, stop, 65536, 1e9, least=budget.SAMPLE_MIN) \
            or (0.0, 0, True)
        mid = stop // 2
        assert seen == [(mid, mid + 1), (mid + 1, mid + first), (mid + first, mid + size)]
        assert timed == size
    assert budget.probe_rate(walk, budget.SAMPLE_MIN - 1, 65536, 1e9,
                             least=budget.SAMPLE_MIN) is None
    # a finding in the second half of a small sample still times it; at once, it does not
    half = budget.SAMPLE // 2 + first
    head = 5000 + first  # the first set alone, then the first PROBE_FIRST: no finding
    assert budget.probe_rate(lambda a, b: (b - a if a < head else half, a >= head), 10_000,
                             1, 1e9, least=budget.SAMPLE_MIN) is not None
    assert budget.probe_rate(lambda a, b: (b - a if a < head else 10, a >= head), 10_000,
                             1, 1e9, least=budget.SAMPLE_MIN) is None


def test_a_probe_of_drawn_sets_times_all_of_them_as_a_window_is() -> None:
    """verify's orbit runs are timed on sets drawn for the probe (random orbits'
    representatives, :func:`gctool.budget.probe_sample`), as many as a window of their
    enumeration would hold (:func:`gctool.budget.probe_size`), walked by probe_rate's loop:
    the first alone (the warm-up), the rest of the first PROBE_FIRST, then the rest in one
    call when quick; a slow one stops after its first sets over the budget."""
    from gctool import budget

    assert budget.probe_size(10_000, 1, least=budget.PROBE_MIN * budget.PROBE) is None
    assert budget.probe_size(10_000, 1, least=budget.SAMPLE_MIN) == budget.SAMPLE
    assert budget.probe_size(200_000, 1, least=budget.SAMPLE_MIN) == 200_000 // budget.PROBE_MIN
    assert budget.probe_size(10**9, 65536) == 65536
    assert budget.probe_size(10**9, 1) == budget.PROBE
    seen: list[tuple[int, int]] = []

    def walk(a: int, b: int) -> tuple[int, bool]:
        seen.append((a, b))
        return b - a, False

    first = budget.PROBE_FIRST
    rate, timed, stopped = budget.probe_sample(walk, 3000, 1e9) or (0.0, 0, True)
    assert seen == [(0, 1), (1, first), (first, 3000)] and (timed, stopped) == (3000, False)
    assert budget.probe_sample(walk, first, 1e9) is None  # too few to time
    assert budget.probe_sample(lambda a, b: (b - a, True), 3000, 1e9) is None  # fails at once


def test_a_small_threshold_size_is_timed_on_its_own_plan(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """is-cr n=36 at epsilon 1: size 4 (58,905 sets, below PROBE_MIN * PROBE) walks compiled
    with size 5, but every set is doubtful and goes to numpy, so the walk's calibrated rate
    (about 0.1 us per set) is far off: the size is timed on a sample of its own plan, and that
    rate decides (here a probe that reports 1 us per set); sizes below SAMPLE_MIN sets keep
    the calibrated rate."""
    from gctool import budget
    from gctool.audit import exhaustive
    from gctool.audit.oracles import make_oracle

    oracle = make_oracle(built("is-cr", 36, 5))
    asked: list[tuple[int, int]] = []

    def probe(walk: object, stop: int, size: int, over: float, least: int = 0,
              dense: int | None = None) -> tuple:
        asked.append((stop, least))
        return 1000.0, 1024, False

    monkeypatch.setattr(exhaustive, "probe_rate", probe)
    search = exhaustive._SearchBudget(oracle, 1, None, None, 1.0, 6)
    assert search.work(4, comb(36, 4))[1]  # compiled, with size 5
    seconds, how = search.size_time(4, comb(36, 4))
    assert asked == [(comb(36, 4), budget.SAMPLE_MIN)] and "timed on a sample" in how
    assert seconds == pytest.approx(1000.0 * comb(36, 4) / 1e9)
    assert comb(36, 2) < budget.SAMPLE_MIN
    assert search.size_time(2, comb(36, 2)) == (search.work(2, comb(36, 2))[0] / 1e9, "")
    assert len(asked) == 1


def test_a_small_exhaustive_attack_is_timed_on_a_sample(monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    """frc n=40, s=3 (9,880 sets, below PROBE_MIN * PROBE) runs on the numpy route, whose time
    per set depends on the code: it is timed on a sample (here a probe that reports 1 us per
    set), which decides; s=2 (780 sets, below SAMPLE_MIN) keeps the calibrated rate."""
    from gctool import budget
    from gctool.audit import exhaustive

    asked: list[tuple[int, int]] = []

    def probe(walk: object, stop: int, size: int, over: float, least: int = 0,
              dense: int | None = None) -> tuple:
        asked.append((stop, least))
        return 1000.0, 1024, False

    monkeypatch.setattr(exhaustive, "probe_rate", probe)
    code = design("frc", n=40, s=4)
    with pytest.raises(BudgetExceeded) as err:
        attack(code, 3, method="exhaustive", symmetry=False, budget=Budget(max_work=1e-3))
    assert asked == [(comb(40, 3), budget.SAMPLE_MIN)] and "timed on a sample" in str(err.value)
    assert err.value.needed == pytest.approx((1000.0 * comb(40, 3) + budget.START_NS) / 1e9)
    with pytest.raises(BudgetExceeded) as err:
        attack(code, 2, method="exhaustive", symmetry=False, budget=Budget(max_work=1e-3))
    assert len(asked) == 1 and "timed" not in str(err.value)


def test_a_pool_of_processes_is_estimated_as_it_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """rs complex n=30 s=5 on the numpy route: three tasks (65,536 + 65,536 + 11,434 sets) on
    two processes take the first task alone, then one round of two: not half of the three;
    the pool does not start when the tasks after the first take
    under PARALLEL_MIN_S, and a compiled walk's threads share the work whole."""
    from gctool.audit import exhaustive
    from gctool.audit.oracles import make_oracle
    from gctool.budget import PROCESS_TASK_NS
    from gctool.engine.parallel import PARALLEL_MIN_S

    oracle = make_oracle(design("rs", n=30, s=5, field="complex"))
    assert not oracle.will_walk_compiled(5, comb(30, 5)) and oracle.chunk_size(5) == 65536
    work = 1e9  # ns of one core
    jobs, extra = exhaustive.process_cost(oracle, 5, None, work, 2, None, False)
    task = work * 65536 / comb(30, 5)
    assert jobs == 2
    assert work / 2 + extra == pytest.approx(2 * task)
    # many short tasks: the caller's round trips, one after the other, take longest (the
    # processes wait for it), not the tasks' work on two jobs plus the round trips
    monkeypatch.setattr(oracle, "chunk_size", lambda s: 222)
    tasks = -(-comb(30, 5) // 222)
    short = tasks * 0.8 * PROCESS_TASK_NS  # 0.4 ms per task
    jobs, extra = exhaustive.process_cost(oracle, 5, None, short, 2, None, False)
    assert jobs == 2 and short / 2 + extra == pytest.approx(tasks * PROCESS_TASK_NS)
    monkeypatch.undo()
    small = PARALLEL_MIN_S * 1e9  # the two tasks after the first take less than this
    assert exhaustive.process_cost(oracle, 5, None, small, 2, None, False) == (1, 0.0)
    assert exhaustive.process_cost(oracle, 5, None, work, 2, None, True) == (2, 0.0)


def test_the_exhaustive_attack_is_refused_on_its_timed_probe(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The attack re-checks its calibrated estimate on the same probe as verify: with a clock
    of 100 ms per reading, the first sets are slow and the refusal gives their time."""

    code = design("cyclic", n=30, s=6, seed=1)
    clock = iter(range(10**6))
    budget_clock(monkeypatch, lambda: next(clock) * 0.1)
    with pytest.raises(BudgetExceeded) as err:
        attack(code, 6, method="exhaustive", symmetry=False, budget=Budget(max_work=1.0))
    text = str(err.value)
    assert err.value.kind == "work" and "timed on a sample" in text and "`max_work`" in text
    assert err.value.needed == pytest.approx(0.1 * comb(30, 6), rel=1e-3)  # one set timed


def test_a_gf_attack_near_the_budget_is_timed_before_it_is_refused(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Over GF(q) the exhaustive attack checks its calibrated estimate before the oracle's
    set-up; within TIMED_SPAN of the budget that check is left to the timed probe (the
    elimination's time per set depends on the code and the machine), whose refusal states
    the timed time (a clock of 100 ms per reading: the first set alone is 0.1 s); farther
    above it the calibrated estimate refuses at once, untimed."""
    from gctool import budget
    from gctool.audit import exhaustive

    gf = design("cyclic-mds", n=31, s=3, field="GF(2^5)")
    need = comb(31, 3)
    calibrated = (exhaustive.set_work(gf, 3, need) + START_NS) / 1e9
    far = Budget(max_work=calibrated / (3 * budget.TIMED_SPAN))
    with pytest.raises(BudgetExceeded) as err:
        attack(gf, 3, method="exhaustive", symmetry=False, budget=far)
    assert "timed" not in str(err.value) and err.value.needed == pytest.approx(calibrated)
    clock = iter(range(10**6))
    budget_clock(monkeypatch, lambda: next(clock) * 0.1)
    near = Budget(max_work=calibrated / 3)
    assert budget.worth_timing(calibrated, near.max_work)
    with pytest.raises(BudgetExceeded) as err:
        attack(gf, 3, method="exhaustive", symmetry=False, budget=near)
    text = str(err.value)
    assert err.value.kind == "work" and "timed on a sample" in text and "`max_work`" in text
    assert err.value.needed == pytest.approx(0.1 * need, rel=1e-3)


def test_attack_estimates_use_the_kernel_that_will_run(monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    """Below the compiled walk's size, the numpy fast path's time per set (not one
    least-squares solve per set); over GF(q), the batched elimination's (the calibrated
    rates: the timed probe left out)."""
    from gctool.audit import exhaustive
    from gctool.audit.oracles import make_oracle
    from gctool.audit.oracles.base import ERRORS_CALL_NS
    from gctool.audit.oracles.optimal import hat_time
    from gctool.budget import set_cost
    from gctool.decode.cost import GF_CALL_ROW_NS, gf_set_time, single_call_time

    frc = make_oracle(design("frc", n=40, s=4))
    d = frc.Qperp.shape[1]  # type: ignore[attr-defined]
    assert frc.set_work(3, 1000) == pytest.approx(1000 * hat_time(3, d) + ERRORS_CALL_NS)
    assert hat_time(3, d) < set_cost(37, 40) / 20 and hat_time(7, 6) > hat_time(6, 6)
    gf = design("cyclic-mds", n=15, s=4, field="GF(2^4)")
    # a batch over GF(q) costs its pivot steps besides its sets, as one set's call does
    call = single_call_time(gf, 11) - gf_set_time(gf, 4)
    assert call == GF_CALL_ROW_NS * 11 and call > 10 * ERRORS_CALL_NS
    assert make_oracle(gf).set_work(4, 10) == pytest.approx(10 * gf_set_time(gf, 4) + call)
    # the run's fixed cost besides its sets (START_NS) is in every estimate, on no job's share
    monkeypatch.setattr(exhaustive, "probe_rate", lambda *a, **k: None)
    with pytest.raises(BudgetExceeded) as err:  # refused before the oracle's set-up, alike
        attack(gf, 4, method="exhaustive", symmetry=False, budget=Budget(max_work=1e-4))
    assert err.value.needed == pytest.approx(
        (comb(15, 4) * gf_set_time(gf, 4) + call + START_NS) / 1e9)
    with pytest.raises(BudgetExceeded) as err:
        attack(design("frc", n=40, s=4), 3, method="exhaustive", symmetry=False,
               budget=Budget(max_work=2e-3))
    assert err.value.needed == pytest.approx(
        (comb(40, 3) * hat_time(3, d) + ERRORS_CALL_NS + START_NS) / 1e9)


def test_the_windows_bound_where_a_search_stops_within_twice_its_rank() -> None:
    """first_finding: windows at ranks 0, 2w, 4w, ...; a run whose failing sets start at
    rank r stops by the end of the first window past r, at most about 2r + 2w."""
    from gctool import budget

    w, stop = budget.WINDOW, 10**7
    for r in (0, 5, 100, 4097, 123_456, 6_000_000):
        seen: list[int] = []

        def walk(a: int, b: int, r: int = r, seen: list[int] = seen) -> tuple[int, bool]:
            seen.append(a)
            return b - a, b > r
        bound = budget.first_finding(walk, stop)
        assert bound is not None and r < bound <= 2 * r + 2 * w
        assert len(seen) <= 2 + max(0, r // w).bit_length()
    assert budget.first_finding(lambda a, b: (b - a, False), stop) is None
    share, found = budget.walked_share(lambda a, b: (b - a, a >= 64), 10**6, 1000, jobs=2)
    assert found == 64 + w and share == pytest.approx((64 + w + 2 * 1000) / 10**6)
    assert budget.walked_share(lambda a, b: (b - a, True), 10**6, 1000, first=512)[0] == (
        pytest.approx(512 / 10**6))
    # a walk that stops at its finding: the other job's task in progress counts whole unless
    # a window at its start finds one too (then it stops there as well)
    first_only = budget.walked_share(lambda a, b: (b - a, 64 <= a < 1000), 10**6, 1000,
                                     jobs=2, stops=True)
    everywhere = budget.walked_share(lambda a, b: (b - a, a >= 64), 10**6, 1000, jobs=2,
                                     stops=True)
    assert first_only == (pytest.approx((64 + w + 1000) / 10**6), 64 + w)
    assert everywhere == (pytest.approx((64 + w) / 10**6), 64 + w)


def test_a_verify_that_fails_at_once_is_estimated_up_to_its_failing_set(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """frc n=30 tolerates 2: verify -s 3 fails at its first set, in the pilot, which is all
    the refusal counts (the whole enumeration's estimate without the windows)."""
    from gctool.audit.verify import enumeration

    code = design("frc", n=30, s=2)
    tiny = Budget(max_work=1e-3)  # above reducing B and decoding all n workers (0.47 ms)
    with pytest.raises(BudgetExceeded) as err:
        verify(code, s=3, method="exhaustive", budget=tiny)
    assert "up to its first failing set" in str(err.value)
    # the pilot runs alone: two jobs take as long (sbc, bibd and expander codes measured 0.4-0.7
    # of their estimate on one job and 0.7-1.1 on two when it was halved)
    with pytest.raises(BudgetExceeded) as two:
        verify(code, s=3, method="exhaustive", budget=tiny, jobs=2)
    assert two.value.needed == pytest.approx(err.value.needed)
    assert "(estimated, one core)" in str(two.value)
    monkeypatch.setattr(enumeration, "walked_share", lambda *a, **k: (1.0, None))
    with pytest.raises(BudgetExceeded) as whole:
        verify(code, s=3, method="exhaustive", budget=tiny)
    start = START_NS / 1e9  # the run's start, besides its sets
    assert err.value.needed - start < (whole.value.needed - start) * 513 / comb(30, 3)
    # the pilot grows from one set (then 64, then its whole size) and stops at the first
    # head that holds the failing set: here the first set alone
    assert err.value.needed - start == pytest.approx((whole.value.needed - start) / comb(30, 3))


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_run_whose_pilot_fails_plans_no_task_after_it(monkeypatch: pytest.MonkeyPatch,
                                                        jobs: int) -> None:
    """A failing set in the pilot ends the run there: the ranks after it are not cut into
    tasks (264 M sets of bibd pg2-7 at s=7 were 377,172 ranges, most of the run's time)."""
    from gctool.audit.verify import enumeration

    def refuse(*_: object) -> list[tuple[int, int]]:
        raise AssertionError("tasks planned after the pilot's failing set")
    monkeypatch.setattr(enumeration, "rank_ranges", refuse)
    monkeypatch.setattr(enumeration, "guided_ranges", refuse)
    report = verify(design("frc", n=30, s=2), s=3, method="exhaustive", jobs=jobs)
    assert not report.ok and report.counterexample == [0, 1, 2] and report.checked == 1


def test_a_threshold_size_is_estimated_up_to_its_first_failing_set(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A random dense real code (n=28, k=22, d = 6) fails at its first set of size 7: the
    size's estimate counts the walk up to it, not its C(28, 7) sets.  With s = 7 > d the
    compiled walk decides each set itself and its task stops at the failing set (rank 0: the
    first window's first set, walked alone); on two jobs so does the other job's task, whose
    first set fails too (a window at its start finds one)."""
    import numpy as np

    from gctool.algebra.fields import parse_field
    from gctool.audit import exhaustive
    from gctool.audit.oracles import make_oracle

    B = np.random.default_rng(1).standard_normal((28, 22))
    oracle = make_oracle(GradientCode(B, parse_field("real"), 6, "custom"),
                         budget=Budget(max_work=1e-9))
    monkeypatch.setattr(exhaustive, "probe_rate", lambda *a, **k: None)  # the calibrated rate
    assert oracle.walk_stops(7) and not oracle.walk_stops(6)
    per_set = exhaustive._SearchBudget(oracle, 1, None, None, oracle.limit, 28).work(
        7, comb(28, 7))[0] / 1e9 / comb(28, 7)
    for jobs, walked in ((1, 1), (2, 1)):
        search = exhaustive._SearchBudget(oracle, jobs, None, None, oracle.limit, 28)
        seconds, how = search.size_time(7, comb(28, 7))
        assert "first failing set (by rank 1 of" in how
        assert seconds == pytest.approx(per_set * walked / jobs)


def test_a_column_witness_beyond_64_bit_ranks_sets_no_stop_rank() -> None:
    """The threshold search of an FRC code with 90 workers in groups of 30: its column witness
    (30 workers) has a rank among C(90, 30) ~ 6.7e23 sets, beyond int64, so it bounds no walk
    (such sizes are never walked); it raised OverflowError ('attack --threshold' exit 3)."""
    from gctool.audit import exhaustive
    from gctool.audit.oracles import make_oracle
    from gctool.engine.enumeration import MAX_RANKABLE

    oracle = make_oracle(design("frc", n=90, s=29))
    assert comb(90, 30) > MAX_RANKABLE
    search = exhaustive._SearchBudget(oracle, 1, None, None, oracle.limit, 30, list(range(30)))
    assert search.witness_rank is None
    small = exhaustive._SearchBudget(oracle, 1, None, None, oracle.limit, 3, [0, 1, 5])
    assert small.witness_rank == 4  # after [0, 1, 2], [0, 1, 3], [0, 1, 4] and [0, 1, 5]


@pytest.mark.parametrize(("per_set", "fails_at", "size"), [
    (5e-3, None, 1),  # one set already says the pilot would take seconds
    (1e-3, None, 64),  # 64 sets in 64 ms, 16,384 in 16 s
    (1e-6, None, 16384),  # quick: the whole pilot
    (1e-6, 64, 64),  # a head that holds a failing set ends the pilot there
])
def test_the_pilot_grows_only_while_its_first_sets_are_quick(
        monkeypatch: pytest.MonkeyPatch, per_set: float, fails_at: int | None, size: int
        ) -> None:
    """verify's first task runs alone before any timed estimate: it grows from 1 set to
    PROBE_FIRST to its full size only while the sets before put it under PILOT_MAX_S of CPU
    (an ill-conditioned n=1000 code spent 20 s in its pilot before the probe refused it)."""
    from types import SimpleNamespace

    from gctool.audit.verify import enumeration

    cpu = [0.0]
    monkeypatch.setattr(enumeration.time, "thread_time", lambda: cpu[0])
    ran: list[tuple[int, int, int]] = []

    class Worker:
        def run(self, task: tuple[int, int, int]) -> SimpleNamespace:
            ran.append(task)
            cpu[0] += per_set * (task[2] - task[1])
            failing = fails_at is not None and task[2] >= fails_at
            return SimpleNamespace(evaluated=task[2] - task[1],
                                   fail_set=[0, 1] if failing else None)

    got, first, _ = enumeration._pilot(Worker(), 16384)  # type: ignore[arg-type]
    assert got == size and ran[-1] == (0, 0, size) and first.evaluated == size
    heads = [h for h in (1, 64, 16384) if h <= size]
    if size < 16384 and fails_at is None:  # the head that stops it, once more (kernels load)
        heads.append(size)
    assert [b for _, _, b in ran] == heads


def test_the_pilot_does_not_stop_on_a_kernels_loading(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pilot's head that would stop its growth, whose call may load kernels no plan loaded
    (the screen of given sets and its later stages, on rotation orbits: 19-74 ms in a fresh
    process), is decided once more first: the estimate is the sets' own time, not the
    loading's."""
    from types import SimpleNamespace

    from gctool.audit.verify import enumeration

    now = [0.0]
    monkeypatch.setattr(enumeration.time, "thread_time", lambda: now[0])
    monkeypatch.setattr(enumeration.time, "perf_counter", lambda: now[0])
    ran: list[int] = []

    class Worker:
        def __init__(self, load: float, at: int) -> None:
            self.load, self.at = load, at  # seconds, in the at-th call

        def run(self, task: tuple[int, int, int]) -> SimpleNamespace:
            ran.append(task[2])
            now[0] += 1e-6 * task[2] + (self.load if len(ran) == self.at else 0.0)
            return SimpleNamespace(evaluated=task[2], fail_set=None)

    for load, at, heads in ((0.05, 1, [1, 1, 64, 16384]), (0.5, 2, [1, 64, 64, 16384])):
        ran.clear()  # a load in the first set's call, then in the 64 sets' (a later stage's)
        got, _, per_set = enumeration._pilot(Worker(load, at), 16384)  # type: ignore[arg-type]
        assert ran == heads and got == 16384
        assert per_set == pytest.approx(1e-6)


def test_a_size_decides_its_first_sets_for_the_look_ahead_only_when_they_are_cheap(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A size that walks compiled with the next one first decides its HEAD first sets on the
    numpy route (a failing one there spares loading the kernels), unless they are estimated
    above HEAD_MAX_S: bound of a shuffled cyclic n=1000 decided 64 sets of about 5 s each so
    before its estimate."""
    from gctool.audit import exhaustive
    from gctool.audit.oracles import make_oracle

    oracle = make_oracle(built("is-cr", 36, 5))
    walked: list[int] = []
    twin = exhaustive._twin_walk

    def spy(*args: object, **kw: object) -> object:
        walked.append(1)
        return twin(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(exhaustive, "_twin_walk", spy)
    search = exhaustive._SearchBudget(oracle, 1, None, None, 1.0, 6)
    assert search.early(4) and walked == [1]  # 32 sets of is-cr cost microseconds
    heads = oracle.set_work(3, exhaustive.HEAD) / 1e9
    monkeypatch.setattr(exhaustive, "HEAD_MAX_S", heads / 2)
    assert search.early(3) and walked == [1]  # estimated above it: not decided first


class _Clock:
    """A thread clock that advances ``step`` seconds at each reading (the exact decisions'
    meter reads it before and after each step of each set)."""

    def __init__(self, step: float) -> None:
        self.now, self.step = 0.0, step

    def thread_time(self) -> float:
        self.now += self.step
        return self.now


@pytest.mark.parametrize("jobs", [1, 2])
def test_the_exact_decisions_are_charged_to_the_work_budget(
        monkeypatch: pytest.MonkeyPatch, jobs: int) -> None:
    """FRC(12, 2) at tolerance 1/4: 144 sets have error k/4 = tol * k exactly, which float64
    cannot decide: each goes to exact arithmetic, whose own allowance they fit.  Their time
    (here a clock that advances 10 ms at each reading) is charged to the run's work meter,
    so a budget of 0.5 s stops the run there with its refusal (over ``max_work``, not
    undecided); a budget that holds them lets it finish with the same report."""
    from gctool import exactls

    code = design("frc", 12, 2)
    monkeypatch.setattr(exactls, "time", _Clock(0.01))
    with pytest.raises(BudgetExceeded) as err:
        verify(code, 5, method="exhaustive", tol=0.25, jobs=jobs, budget=Budget(max_work=0.5))
    assert not isinstance(err.value, exactls.Undecided)
    assert err.value.kind == "work" and err.value.param == "max_work", str(err.value)
    assert "in exact arithmetic so far" in str(err.value) and "\n" not in str(err.value)
    report = verify(code, 5, method="exhaustive", tol=0.25, jobs=jobs,
                    budget=Budget(max_work=1e4))
    assert report.ok


def test_the_attacks_exact_decisions_are_charged_to_its_meter(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The same sets under ``attack``: the oracle's meter is charged their time, and the
    exhaustive search stops over ``max_work`` (it was admitted on its calibrated estimate,
    far below the budget)."""
    from gctool import exactls

    code = design("frc", 12, 2)
    monkeypatch.setattr(exactls, "time", _Clock(0.01))
    with pytest.raises(BudgetExceeded) as err:
        attack(code, 5, method="exhaustive", symmetry=False, tol=0.25,
               budget=Budget(max_work=0.5))
    assert not isinstance(err.value, exactls.Undecided)
    assert err.value.kind == "work" and err.value.param == "max_work", str(err.value)


def test_a_pool_of_processes_shares_the_exact_decisions_budget(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """On the numpy route with two worker processes, each forked process decides its doubtful
    sets against what the run's meter left, counted with the others' (``Meter.share``), not
    a copy of all of it: FRC(12, 2) at tolerance 1/4, whose 144 exact decisions take about
    17 s of this clock, is refused at a budget of 16 s with two processes as with one (the
    copies let the pool spend up to twice the budget: it finished), and runs on the two
    processes when it fits."""
    from gctool import exactls
    from gctool.audit import nullspace as ns
    from gctool.audit.verify import enumeration

    monkeypatch.setenv("GCTOOL_COMPILED", "never")
    monkeypatch.setattr(exactls, "time", _Clock(0.01))
    monkeypatch.setattr(enumeration, "PARALLEL_MIN_S", 0.0)  # processes for a small run
    monkeypatch.setattr(enumeration, "PILOT", 64)
    for kernel in (ns.DirectKernel, ns.FloatNullKernel):  # tasks of 64 sets: both work
        monkeypatch.setattr(kernel, "chunk_size", lambda self, s, given=False: 64)
    code = design("frc", 12, 2)
    for jobs in (1, 2):
        with pytest.raises(BudgetExceeded) as err:
            verify(code, 5, method="exhaustive", tol=0.25, jobs=jobs,
                   budget=Budget(max_work=16.0))
        assert "in exact arithmetic so far" in str(err.value) and "\n" not in str(err.value)
        assert "work budget of 16 s" in str(err.value)
    report = verify(code, 5, method="exhaustive", tol=0.25, jobs=2, budget=Budget(max_work=64.0))
    assert report.ok and report.jobs == 2


def test_the_attacks_pool_of_processes_shares_the_exact_decisions_budget(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The same under ``attack`` on the numpy route with two processes (tasks of 64 sets): the
    forked copies of the oracle's decoder charge their exact decisions together to what
    its meter left, so the search refused at 16 s of this clock with one job is refused with
    two (the copies let it finish), and finishes at 32 s with either."""
    from gctool import exactls
    from gctool.audit import exhaustive
    from gctool.audit.oracles.optimal import OptimalOracle
    from gctool.engine import parallel

    monkeypatch.setenv("GCTOOL_COMPILED", "never")
    monkeypatch.setattr(exactls, "time", _Clock(0.01))
    monkeypatch.setattr(exhaustive, "PARALLEL_MIN_SETS", 0)
    monkeypatch.setattr(parallel, "PARALLEL_MIN_S", 0.0)
    monkeypatch.setattr(OptimalOracle, "chunk_size", lambda self, s, given=False: 64)
    code = design("frc", 12, 2)
    for jobs in (1, 2):
        with pytest.raises(BudgetExceeded) as err:
            attack(code, 5, method="exhaustive", symmetry=False, tol=0.25, jobs=jobs,
                   budget=Budget(max_work=16.0))
        assert "work budget of 16 s" in str(err.value) and "\n" not in str(err.value)
        attack(code, 5, method="exhaustive", symmetry=False, tol=0.25, jobs=jobs,
               budget=Budget(max_work=32.0))


def test_the_threshold_searchs_pool_of_processes_shares_the_exact_decisions_budget(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The same under the exhaustive threshold search (FRC(12, 2) at tolerance 1/4, limit 3.5:
    threshold 6, about 31 s of this clock in exact decisions, tasks of 64 sets, two
    processes): refused at 16 s with one job and with two (each forked copy of the oracle's
    meter let the pool finish), found at 32 s with either."""
    from gctool import exactls
    from gctool.audit import exhaustive
    from gctool.audit.oracles import make_oracle
    from gctool.audit.oracles.optimal import OptimalOracle
    from gctool.engine import parallel

    monkeypatch.setenv("GCTOOL_COMPILED", "never")
    monkeypatch.setattr(exhaustive, "PARALLEL_MIN_SETS", 0)
    monkeypatch.setattr(parallel, "PARALLEL_MIN_S", 0.0)
    monkeypatch.setattr(OptimalOracle, "chunk_size", lambda self, s, given=False: 64)
    code = design("frc", 12, 2)
    for jobs in (1, 2):
        monkeypatch.setattr(exactls, "time", _Clock(0.01))
        oracle = make_oracle(code, tol=0.25, budget=Budget(max_work=16.0))
        with pytest.raises(BudgetExceeded) as err:
            exhaustive.threshold(oracle, 3.5, symmetry=False, jobs=jobs)
        assert "work budget of 16 s" in str(err.value) and "\n" not in str(err.value)
        monkeypatch.setattr(exactls, "time", _Clock(0.01))
        oracle = make_oracle(code, tol=0.25, budget=Budget(max_work=32.0))
        assert exhaustive.threshold(oracle, 3.5, symmetry=False, jobs=jobs).threshold == 6


def test_a_probe_over_ranks_that_hold_no_sets_gives_no_rate() -> None:
    """Rotation orbits leave the middle of a size's lex ranks empty (their candidates thin out
    along the order): a probe there times the walk skipping ranks, not deciding sets.  It
    walks its window in calls that double (not one rank a call, each with the walk's fixed
    cost) and gives no rate, so the calibrated estimate decides (attack --threshold of frc
    n=40 s=4 read 309 us per set at size 4 for 0.7 us, 5.2 s for a run of 0.2 s: refused)."""
    from gctool import budget

    seen: list[tuple[int, int]] = []
    stop = 39_030

    def walk(a: int, b: int) -> tuple[int, bool]:  # sets only in the first 10,000 ranks
        seen.append((a, b))
        return max(0, min(b, 10_000) - a), False

    assert budget.probe_rate(walk, stop, 1024, over=1.0, least=budget.SAMPLE_MIN) is None
    assert len(seen) <= 12
    assert seen[-1][1] == stop // 2 + max(budget.SAMPLE, stop // budget.PROBE_MIN)
    # a walk whose ranges count nowhere (a twin's) is timed again where its sets are dense
    seen.clear()
    probed = budget.probe_rate(walk, stop, 1024, over=1.0, least=budget.SAMPLE_MIN, dense=0)
    again = seen.index((0, 1))  # after the middle window, as the walk without ``dense``
    assert probed is not None and seen[again - 1][1] == seen[-1][1] + stop // 2
    assert max(b for _, b in seen[again:]) <= 10_000
    assert probed[1] == max(budget.SAMPLE, stop // budget.PROBE_MIN) and probed[0] >= 0
    # a window dense with sets is still timed
    seen.clear()
    rate, timed, _ = budget.probe_rate(lambda a, b: (b - a, False), stop, 1024, over=1.0,
                                       least=budget.SAMPLE_MIN) or (0.0, 0, True)
    assert timed == max(budget.SAMPLE, stop // budget.PROBE_MIN) and rate >= 0


def test_the_threshold_of_a_code_with_rotation_orbits_is_not_refused_on_its_empty_ranks(
) -> None:
    """frc n=40 s=4 (groups of 5, rotation i -> i + 5): its threshold search takes well under
    a second and was refused at the default budget of 5 s, its size 4 probed where its orbit
    candidates are none."""
    from gctool.audit.attack.thresholds import threshold

    code = design("frc", n=40, s=4)
    report = threshold(code, method="exhaustive", budget=Budget())
    assert report.threshold == 5 and report.exact
    # its sizes 3 and 4 are timed where their orbit candidates are dense (rank 0), not left
    # to the compiled walk's rate (a tenth of their batches' time)
    from gctool.audit import exhaustive
    from gctool.audit.oracles import make_oracle

    search = exhaustive._SearchBudget(make_oracle(code, budget=Budget()), 1, None,
                                      exhaustive.rotation_for(make_oracle(code)))
    for t in (3, 4):
        assert "timed" in search.size_time(t, exhaustive.count_evaluated(40, t, search.rot))[1]


def test_a_refused_walk_whose_probe_meets_a_failing_set_is_estimated_up_to_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """verify of frc n=50 s=4 (230,300 sets on the numpy route) under a budget of 0.6 of its
    calibrated estimate is timed instead of refused; its probe, from the middle of the sets,
    meets a failing set at once (one made to fail there), so the run stops by it: it is
    estimated up to that set (about half of it, at the calibrated rate: no set was timed
    before it), admitted, and reports that set (it was refused at the whole run's)."""
    import numpy as np

    from gctool.audit import nullspace as ns
    from gctool.budget import TIMED_SPAN
    from gctool.engine.enumeration import unrank_one

    code = design("frc", n=50, s=4)
    target = np.array(unrank_one(50, 4, comb(50, 4) // 2 + 3))
    for kernel in (ns.DirectKernel, ns.FloatNullKernel):
        def evaluate(self: object, X: np.ndarray, plain: Callable[..., object] = kernel.evaluate
                     ) -> object:
            out: object = plain(self, X)
            hit = np.all(X == target, axis=1) if X.shape[1] == 4 else np.zeros(len(X), bool)
            out.ok[hit], out.error[hit] = False, 1.0  # type: ignore[attr-defined]
            return out

        monkeypatch.setattr(kernel, "evaluate", evaluate)
    with pytest.raises(BudgetExceeded) as err:  # beyond TIMED_SPAN: the calibrated refusal
        verify(code, 4, method="exhaustive", jobs=1, budget=Budget(max_work=0.05))
    whole = err.value.needed
    assert whole is not None and whole > 0.05 * TIMED_SPAN
    report = verify(code, 4, method="exhaustive", jobs=1, budget=Budget(max_work=0.6 * whole))
    assert not report.ok and report.counterexample == target.tolist()
    assert report.checked < comb(50, 4) * 0.6


def test_the_numpy_screens_estimate_grows_with_the_shape_it_factors() -> None:
    """verify's numpy route (below the compiled walk's MIN_SETS) costs per set what its
    batched screen factors: an s x s system where d = s, a QR of d x s beyond (it grows with d
    then, and not before), more with complex numbers; where the screen leaves most sets to the
    witness test (is-cr), a run large enough for the sample of its shares counts them, a
    small one does not.  frc n=50 s=4 is estimated at 2-5 us per set (it took 2.4-3.2 us,
    where the previous model, 6.4 us, read 0.37-0.5)."""
    import numpy as np

    from gctool.algebra.fields import parse_field
    from gctool.audit import nullspace as ns
    from gctool.limits import DEFAULT_TOL

    real = parse_field("real")

    def red(d: int, n: int = 40, complex_: bool = False) -> ns.Reduction:
        N = np.zeros((d, n), complex if complex_ else float)
        return ns.Reduction(N, np.zeros((n, 1)), n - d, True)

    t = [ns.nullspace_time(red(d), 4, 1, real) for d in (4, 5, 8, 16, 32)]
    assert t == sorted(t) and t[1] - t[0] > t[2] - t[1]  # the QR starts beyond d = s
    assert t[4] - t[3] == pytest.approx(2 * (t[3] - t[2]))  # linear in d beyond
    assert ns.nullspace_time(red(8), 6, 1, real) > ns.nullspace_time(red(8), 5, 1, real)
    assert ns.nullspace_time(red(6), 6, 1, real) > ns.nullspace_time(red(5), 5, 1, real)
    assert ns.nullspace_time(red(8, complex_=True), 4, 1, real) > 2 * (
        ns.nullspace_time(red(8), 4, 1, real) - ns.NUMPY_SET_NS)
    frc = design("frc", n=50, s=4)
    kernel = ns.FloatNullKernel(frc, DEFAULT_TOL, ns.reduce_float(frc, DEFAULT_TOL))
    assert not kernel.will_compile(4)
    assert 2_000 <= kernel.set_time(4, comb(50, 4)) <= 5_000
    iscr = design("is-cr", n=30, s=4)
    kernel = ns.FloatNullKernel(iscr, DEFAULT_TOL, ns.reduce_float(iscr, DEFAULT_TOL))
    second, _ = kernel.stage_shares(4)
    screen = ns.nullspace_time(kernel.red, 4, 1, real)
    assert second > 0.5 and kernel.numpy_time(4, ns.NUMPY_SHARES_FROM - 1) == screen
    assert kernel.numpy_time(4, ns.NUMPY_SHARES_FROM) > screen + second * ns.witness_time(
        30, 30, kernel.red.d, 1)


def test_the_gf_rank_estimate_has_the_shape_of_its_elimination() -> None:
    """The rank of B over GF(q) (elementary's first step, :func:`rank_work`) is estimated per
    column, per multiply-add of its Gauss-Jordan updates at its field's rate, and per byte of
    the copy it touches first: increasing in the side, cubic at every size (its updates go a
    block of rows at a time: twice the side, 8 times the updates); prime fields (one
    reduction per update) at most a full table's rate, GF(2^12) (a logarithm for 0: one sum
    and one gather per product) at a full table's, GF(2^20) (its exp table out of the caches)
    above them and GF(2^22) above GF(2^20), GF(p^m) with p odd linear in its digits m."""
    import numpy as np

    from gctool.algebra.fields import parse_field
    from gctool.algebra.linalg import FRESH_BYTE_NS, GF_COLUMN_NS, elimination_cost
    from gctool.audit.elementary import rank_work
    from gctool.audit.oracles import make_oracle

    def updates(side: int, field: str) -> float:
        fld = parse_field(field)
        fresh = FRESH_BYTE_NS * 8 * side**2
        return (elimination_cost(side, side, fld) - side * GF_COLUMN_NS - fresh) / side**3

    for field in ("GF(2^8)", "GF(65521)", "GF(3^4)", "GF(2^31)"):
        t = [elimination_cost(side, side, parse_field(field)) for side in range(16, 1100, 16)]
        assert all(a < b for a, b in zip(t, t[1:], strict=False)), field
    for field in ("GF(2^8)", "GF(65521)"):
        assert updates(512, field) == pytest.approx(updates(256, field))
        assert updates(64, field) == pytest.approx(updates(256, field))
    assert updates(256, "GF(65521)") <= updates(256, "GF(2^8)")
    assert updates(256, "GF(2^12)") == pytest.approx(updates(256, "GF(2^8)"))
    assert updates(256, "GF(2^20)") > 1.5 * updates(256, "GF(2^8)")
    assert updates(256, "GF(2^22)") > updates(256, "GF(2^20)")
    two_digits = updates(256, "GF(3^4)") - updates(256, "GF(3^2)")
    assert two_digits > 0
    assert updates(256, "GF(3^6)") - updates(256, "GF(3^4)") == pytest.approx(two_digits)
    assert elimination_cost(512, 256, parse_field("GF(7)")) < elimination_cost(
        512, 512, parse_field("GF(7)"))
    code = GradientCode(np.eye(300, dtype=np.int64), parse_field("GF(7)"), 1, "custom")
    assert rank_work(make_oracle(code)) == elimination_cost(300, 300, parse_field("GF(7)"))


def test_bound_counts_the_rank_over_gf_as_its_elimination() -> None:
    """``bound`` over GF(q) is the rank of B (its witnesses are exact and cheap): estimated as
    the elimination that computes it, whatever the second witness."""
    import numpy as np

    from gctool.algebra.fields import parse_field
    from gctool.algebra.linalg import elimination_cost
    from gctool.bounds import rank as rank_bound

    fld = parse_field("GF(65521)")
    code = GradientCode(np.random.default_rng(0).integers(0, fld.order, size=(40, 36)), fld, 4,
                        "custom")
    assert rank_bound.work(code) == rank_bound.work(code, second=True) == int(
        elimination_cost(40, 36, fld))


def test_verify_estimates_its_reduction_over_gf_as_the_one_elimination() -> None:
    """verify's reduction of B over GF(q) (:func:`gctool.audit.nullspace.reduce_gf`) is one
    Gauss-Jordan elimination of [B^T | T^T] (K x (n + m)), for the null space and W:
    estimated by the elimination model with B's rank bound (distinct nonzero rows and
    columns) as the pivots (measured / estimated 0.81-1.24 on cyclic-mds GF(2^8) n=255, sbc
    GF(7) n=300, rs GF(401) n=300 and frc GF(7) n=512; a flat 10 ns per multiply-add, whatever
    the field or rank, read 0.41-2.6)."""
    import numpy as np

    from gctool.algebra.fields import parse_field
    from gctool.algebra.linalg import elimination_cost, matrix_rank, rank_bound
    from gctool.audit.verify.run import Run
    from gctool.request import VerifyRequest

    for code in (design("cyclic-mds", n=30, s=3, field="GF(31)"),
                 design("rs", n=20, k=24, s=3, field="GF(2^8)"),
                 design("frc", n=48, s=3, field="GF(7)")):
        n, K = code.B.shape
        fld, B = code.field, np.asarray(code.B)
        pivots = rank_bound(B)
        assert matrix_rank(fld, B) <= pivots <= min(n, K)
        run_ = Run(code, VerifyRequest(s=code.s), code.s, 1)
        assert run_.reduction_work() == int(elimination_cost(K, n + code.m, fld, pivots))
    # frc's groups repeat their rows: 32 pivots, not 128, under half the full-rank model
    frc, fld = design("frc", n=128, s=3, field="GF(7)"), parse_field("GF(7)")
    assert rank_bound(np.asarray(frc.B)) == matrix_rank(fld, np.asarray(frc.B)) == 32
    assert Run(frc, VerifyRequest(s=3), 3, 1).reduction_work() < (
        elimination_cost(128, 129, fld)) / 2


def test_the_rank_bound_counts_distinct_nonzero_lines() -> None:
    """rank_bound (a hash of each line, HASH_ROWS rows at a time) equals the count of distinct
    nonzero rows or columns, whichever is fewer, read by np.unique, on random GF(q)-sized
    integer matrices with repeated and zero lines, across block boundaries.  A run reads it
    once, however often its reduction is estimated (verify of cyclic-mds GF(2^12) n=4095 spent
    0.9 s reading it twice, a line at a time)."""
    import numpy as np

    from gctool.algebra import linalg

    rng = np.random.default_rng(5)
    for rows, cols, q in ((1, 1, 2), (3, 5, 7), (70, 40, 2), (200, 130, 4096), (129, 300, 2**31)):
        base = rng.integers(0, q, size=(max(1, rows // 3), cols), dtype=np.int64)
        M = base[rng.integers(0, len(base), size=rows)]
        M[rng.random(rows) < 0.1] = 0
        M[:, rng.random(cols) < 0.1] = 0
        M[:, : cols // 4] = M[:, cols // 4: 2 * (cols // 4)]  # repeated columns

        def distinct(A: np.ndarray) -> int:
            return sum(1 for line in np.unique(A, axis=0) if line.any())

        assert linalg.rank_bound(M) == min(distinct(M), distinct(M.T)), (rows, cols, q)
    assert linalg.rank_bound(np.zeros((4, 4), dtype=np.int64)) == 0
    assert linalg.rank_bound(np.zeros((0, 3), dtype=np.int64)) == 0
    assert linalg.rank_bound(np.ones((3, 5)) / 3) == 3  # not integers: min(rows, cols)

    from gctool.audit.verify import run as run_module
    from gctool.audit.verify.run import Run
    from gctool.request import VerifyRequest

    code = design("cyclic-mds", n=30, s=3, field="GF(31)")
    calls: list[int] = []
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(run_module, "rank_bound", lambda B: calls.append(len(B)) or linalg.rank_bound(B))
        run_ = Run(code, VerifyRequest(s=3), 3, 1)
        assert run_.reduction_work() == run_.reduction_work()
    assert calls == [30]


def _walked_share(code: GradientCode, s: int, monkeypatch: pytest.MonkeyPatch) -> float:
    """The share of its sets whose decoder norm the compiled walk of verify computed in full
    (:meth:`gctool.audit.kernels.real.RealScreen.walked_share`, counted by the walk itself),
    the walk forced at this size."""
    from gctool.audit.kernels import real

    monkeypatch.setenv("GCTOOL_COMPILED", "1")
    screens: list[real.RealScreen] = []
    walk = real.RealScreen.walk

    def kept(self: real.RealScreen, *args: object) -> object:
        screens.append(self)
        return walk(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(real.RealScreen, "walk", kept)
    report = verify(code, s, method="exhaustive", jobs=1, budget=Budget(max_work=100.0))
    assert report.ok and report.checked == comb(code.n, s)
    screen = screens[-1]
    assert all(x is screen for x in screens)
    assert sum(w for w, _ in screen.counted.values()) >= comb(code.n, s)
    return screen.walked_share()


@pytest.mark.parametrize("n", [28, 30])
def test_the_norm_share_prices_the_walk_as_it_counts_its_own_norms(
        monkeypatch: pytest.MonkeyPatch, n: int) -> None:
    """rs real s=5: the walk computes a share of its decoder norms in full that its running
    maximum over the run sets (n=28: 0.08 %, its largest norms a tail 180 times the sample's,
    which a local search finds; n=30: 52 %, no such tail, counted at SHARE_UNSEEN).  Priced
    as the walk's screen plus its norms, the predicted share is within 1.3x of the walk's own
    count (the rule of a margin over the sample's largest norm, which counted them all: n=28
    0.51 and n=30 1.0, read 0.62-0.72 of it)."""
    from gctool.audit.kernels.real import SHARE_UNSEEN
    from gctool.audit.nullspace import FloatNullKernel, reduce_float
    from gctool.limits import DEFAULT_TOL

    code = design("rs", n=n, s=5)
    kernel = FloatNullKernel(code, DEFAULT_TOL, reduce_float(code, DEFAULT_TOL))
    walked = _walked_share(code, 5, monkeypatch)
    predicted = kernel.norm_share(5)
    d = kernel.red.d
    full = norm_cost(n, 5, d, code.m)

    def priced(share: float) -> float:
        return screen_cost(5, d) + share * full

    assert 0 <= predicted <= SHARE_UNSEEN < 1
    assert 1 / 1.3 <= priced(predicted) / priced(walked) <= 1.3, (predicted, walked)


def test_frc_and_cyclic_compute_the_norms_predicted(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """frc, whose sampled norms lie within SHARE_MARGIN of each other: the bound from the
    decoder of a set's first s - 1 stragglers cuts all but a few sets (walked 1.3 %, predicted
    12 %: a norm in full costs about the screen's set, so within 1.2x in time; the bound
    ``||D W|| + ||D N^T|| ||z||`` alone left every set); cyclic's bound cuts almost every set
    (predicted and walked below 1 %)."""
    from gctool.audit.nullspace import reduce_float

    for code, s, low, high in ((design("frc", n=24, s=5), 5, 0.001, 0.2),
                               (design("cyclic", n=30, s=5, seed=1), 5, 0.0, 0.01)):
        red = reduce_float(code, 1e-9)
        predicted = norm_share(red.N.T, red.W, code.row_normalised()[1], s)
        walked = _walked_share(code, s, monkeypatch)
        assert low <= predicted <= high and low <= walked <= high, (code.scheme, predicted,
                                                                    walked)


def test_the_norm_share_follows_the_walks_floor_at_any_jobs(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """rs real n=40 s=5 (658 k sets): the walk carries its largest norm over the run
    (gctool.audit.kernels.ranges.CARRY), so it computes about 0.02 % of its norms in full at
    one and at two jobs (17 % and 37 % when each piece started from none).  The estimate's
    local search from the sample's largest norms finds a norm at most the run's own largest
    (it is a set's) and of its size (the run's: 4.49, the sample's largest 0.003), so it
    counts only the sets whose bound is above it: priced within 1.3x of the walk at both."""
    import numpy as np

    from gctool.audit.kernels import real
    from gctool.audit.nullspace import FloatNullKernel, reduce_float
    from gctool.engine.enumeration import sample_sets
    from gctool.limits import DEFAULT_TOL

    monkeypatch.setenv("GCTOOL_COMPILED", "1")
    code = design("rs", n=40, s=5)
    kernel = FloatNullKernel(code, DEFAULT_TOL, reduce_float(code, DEFAULT_TOL))
    predicted, d = kernel.norm_share(5), kernel.red.d
    screens: list[real.RealScreen] = []
    walk = real.RealScreen.walk

    def kept(self: real.RealScreen, *args: object) -> object:
        if not any(x is self for x in screens):
            screens.append(self)
        return walk(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(real.RealScreen, "walk", kept)
    worst = []
    for jobs in (1, 2):
        screens.clear()
        report = verify(code, 5, method="exhaustive", jobs=jobs, budget=Budget(max_work=100.0))
        assert report.ok and report.checked == comb(40, 5)
        worst.append(report.diagnostics.max_decoder_norm)
        walked = sum(f for sc in screens for _, f in sc.counted.values()) / comb(40, 5)
        priced = [screen_cost(5, d) + x * norm_cost(40, 5, d, code.m) for x in (predicted,
                                                                                  walked)]
        assert walked < 0.01 and 1 / 1.3 <= priced[0] / priced[1] <= 1.3, (jobs, predicted,
                                                                            walked)
    assert worst[0] == worst[1]
    N, W, scale = kernel.red.N.T, kernel.red.W, kernel.row_scale
    S = sample_sets(40, 5, real.SHARE_SAMPLE, np.random.default_rng(0))
    norms = real._sample_norms(N, W, scale, S)[0]
    found = max(real._climb(N, W, scale, S[i], float(norms[i]), np.inf)
                for i in np.argsort(-norms)[:real.SHARE_STARTS])
    assert norms.max() * real.SHARE_TAIL <= found <= worst[0] * (1 + 1e-6)
    assert found >= worst[0] / 2


def test_the_complex_screen_costs_twice_the_real_rate_per_multiply_add_and_its_own_fixed_part(
        ) -> None:
    """Over C the compiled screen's time per set is a fixed part and a part per multiply-add,
    ``s d (d - s + 1)``, at twice the real rate (its loops pipeline the four real products of
    a complex one): four times the real rate put rs complex n=40 s=5 (d = 20) at 0.45-0.5 of its
    estimate, and a fixed part of its own (random dense complex d = 6 read 1.2-1.5 of the real
    one's).  So complex / real grows with d towards the rate's ratio, from the fixed parts'."""
    from gctool.audit.kernels import real
    from gctool.audit.nullspace import reduce_float

    ratios = [screen_cost(5, d, complex_=True) / screen_cost(5, d) for d in (5, 6, 10, 20, 40)]
    assert ratios == sorted(ratios) and 1.5 < ratios[0] and ratios[-1] < real.SCREEN_COMPLEX
    assert real.SCREEN_COMPLEX == 2
    # the fixed part cancels between two d: what is left is the rate per multiply-add
    for s, (d0, d1) in ((4, (24, 32)), (5, (6, 20)), (7, (7, 16))):
        assert screen_cost(s, d1, complex_=True) - screen_cost(s, d0, complex_=True) == \
            pytest.approx(real.SCREEN_COMPLEX * (screen_cost(s, d1) - screen_cost(s, d0)))
    # the estimate verify refuses rs complex n=40 s=5 on is the walk's at its d = 20
    rs = design("rs", n=40, s=5, field="complex")
    assert reduce_float(rs, 1e-9).d == 20
    assert needed(rs, 5) == pytest.approx(comb(40, 5) * walk_time(rs, 5) / 1e9)
    assert screen_cost(5, 20, complex_=True) < 0.6 * (
        real.SCREEN_SET_NS + 4 * real.SCREEN_ENTRY_NS * 5 * 20 * 16)

# -- the estimates of a decoder norm in full and of reading a code file ---------------------
def test_a_norm_in_full_has_a_fixed_part_a_part_per_multiply_add_and_over_c_per_entry(
        ) -> None:
    """``norm_cost``: a fixed part per set (its decoder, the calls), a part per multiply-add of
    the decoder and its norm, ``d (d - s + 1) + n d m``, and over C twice that rate plus a
    modulus per entry of ``D (W + N^T z)`` (``n m``).  So the fixed part carries small d (it
    read 2x low at d = 6 without it), and over C the ratio to R falls towards NORM_COMPLEX as
    d grows (4x read 0.6-0.8 of the time at d >= 24)."""
    from gctool.audit.kernels.real import (
        NORM_COMPLEX,
        NORM_ENTRY_NS,
        NORM_ROW_COMPLEX_NS,
        NORM_SET_NS,
    )

    # affine in n (the rows of the norm), with the fixed part and the decoder's d (d - s + 1)
    # at n = 0; the same in m
    f = [norm_cost(n, 5, 10, 1) for n in (40, 60, 80)]
    assert f[2] - f[1] == pytest.approx(f[1] - f[0]) == pytest.approx(20 * 10 * NORM_ENTRY_NS)
    assert 3 * f[0] - 2 * f[1] == pytest.approx(NORM_SET_NS + NORM_ENTRY_NS * 10 * 6)
    assert norm_cost(40, 5, 10, 2) - f[0] == pytest.approx(40 * 10 * NORM_ENTRY_NS)
    # a set with d = s still pays its fixed part: at d = 6 it is a third of the estimate or more
    assert NORM_SET_NS >= norm_cost(40, 6, 6, 1) / 3
    # over C: twice the rate per multiply-add and a modulus per entry
    for n, s, d, m in ((40, 5, 6, 1), (60, 5, 32, 2)):
        over = norm_cost(n, s, d, m, complex_=True) - norm_cost(n, s, d, m)
        assert over == pytest.approx((NORM_COMPLEX - 1) * (norm_cost(n, s, d, m) - NORM_SET_NS)
                                     + NORM_ROW_COMPLEX_NS * n * m)
    ratio = [norm_cost(n, s, d, 1, complex_=True) / norm_cost(n, s, d, 1)
             for n, s, d in ((40, 5, 6), (40, 5, 16), (60, 5, 32), (72, 6, 48))]
    assert ratio == sorted(ratio, reverse=True) and NORM_COMPLEX < ratio[-1] < 3 < ratio[0]


MB = 1 << 20
#: a piece of a JSON code file's B: rows of four real floats
ROWS = b"    [0.7373159246785, -1.2096841571066, 0.1143585016617, 2.0193672839401],\n" * 250


def test_a_json_files_estimate_follows_its_content() -> None:
    """The same bytes of JSON cost more to read as more of them are numbers, floats and lists
    (a real frc code's 0.0 and 1.0: 75 ns per byte; random floats 27, complex pairs 45,
    digits of GF(7) 67, one number a line 22): the estimate counts them on its sample, and is
    the same whatever the sample's length."""
    floats = ROWS
    zeros = b"    [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0],\n" * 80
    digits = b"    [1, 0, 3, 6, 2, 5, 4, 1, 0, 3, 6, 2, 5, 4, 3, 6, 2, 5, 4, 1, 0, 3, 6],\n" * 80
    pairs = b"    [[0.7373159246785, -1.2096841571066], [0.1143585016617, 2.0193672839401]],\n"
    spaced = b"      0.7373159246785,\n" * 100
    cost = {name: read_cost(False, 10 * MB, sample) for name, sample in
            (("floats", floats), ("zeros", zeros), ("digits", digits), ("pairs", pairs * 100),
             ("spaced", spaced))}
    assert cost["spaced"] < cost["floats"] < cost["pairs"] < cost["digits"] < cost["zeros"]
    assert read_cost(False, 10 * MB, floats * 3) == pytest.approx(cost["floats"])
    # every one within 2x of the rate of a sample-less estimate (READ_JSON_NS): the same order
    assert all(0.4 < c / read_cost(False, 10 * MB) < 2.5 for c in cost.values()), cost
    # a fixed part: an empty file costs something, NPZ more than JSON; NPZ per byte less
    assert 0 < read_cost(False, 0) < read_cost(True, 0)
    assert read_cost(True, 10 * MB) < read_cost(False, 10 * MB, spaced) / 10


def test_the_sample_is_spread_over_the_file() -> None:
    """A small file's sample is the whole of it; a large one's is READ_SAMPLE_BYTES from each
    of pieces spread from its first byte to its last."""
    data = bytes(range(256)) * 4096  # 1 MiB
    assert read_sample(lambda at, count: data[at:at + count], 5000) == data[:5000]
    offsets = sample_offsets(len(data))
    assert offsets[0] == 0 and offsets[-1] + READ_SAMPLE_BYTES == len(data)
    assert offsets == sorted(set(offsets))
    got = read_sample(lambda at, count: data[at:at + count], len(data))
    assert got == b"".join(data[at:at + READ_SAMPLE_BYTES] for at in offsets)


def test_the_probe_reads_costly_sets_that_cluster_along_the_lex_order(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Sets whose cost clusters along the lex order (rs real n=36 s=6: its doubtful sets,
    2.8-18 us a set over 16 windows, the middle the cheapest) are timed in PROBE_WINDOWS
    windows, one from the middle of each share of the ranks: a first quarter of 100 ns sets
    and the rest at 1 ns read their mean, where one window from the middle read 1 ns."""
    from gctool import budget

    now = [0.0]
    budget_clock(monkeypatch, lambda: now[0])
    stop = 10**8

    def walk(a: int, b: int) -> tuple[int, bool]:
        costly = max(0, min(b, stop // 4) - a)
        now[0] += (costly * 100 + (b - a - costly)) * 1e-9
        return b - a, False

    rate, timed, _ = budget.probe_rate(walk, stop, 65536, 1e9) or (0.0, 0, True)
    assert timed == budget.PROBE_FIRST + 1 + 65536
    assert rate == pytest.approx((100 + 3) / 4, rel=0.01)
    monkeypatch.setattr(budget, "PROBE_WINDOWS", 1)  # one window from the middle
    assert (budget.probe_rate(walk, stop, 65536, 1e9) or (0.0,))[0] == pytest.approx(1.0)


def _call_cost_walk(now: list[float], seen: list[tuple[int, int]], fixed: float,
                    per_set: float) -> Callable[[int, int], tuple[int, bool]]:
    """A walk on a fake clock ``now`` (seconds) whose calls cost ``fixed`` each (a compiled
    walk's set-up: 25-70 us) besides ``per_set`` for each rank."""
    def walk(a: int, b: int) -> tuple[int, bool]:
        seen.append((a, b))
        now[0] += fixed + (b - a) * per_set
        return b - a, False

    return walk


def _blocks(seen: list[tuple[int, int]], apart: tuple[int, int]) -> int:
    """The windows a probe walked in the calls ``seen`` (rank ranges), those that meet the
    ranks ``apart`` (its first calls') left out: runs of ranges that join end to start."""
    ranks = sorted(r for r in seen if not (r[0] < apart[1] and apart[0] < r[1]))
    return sum(1 for i, r in enumerate(ranks) if i == 0 or ranks[i - 1][1] != r[0])


def test_the_probe_sizes_its_windows_from_its_first_calls(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The probe's windows are as many as keep their walk calls' fixed cost within PROBE_CALLS
    of its time, read from its first calls: quick sets (real cyclic n=48 s=6: 27 ns a set, 30
    us a call) get few windows, and their rate is the sets' own within about 2 PROBE_CALLS
    (eight windows read 1.12-1.19x of it); slow ones (rs real n=36 s=6: microseconds a set)
    get PROBE_WINDOWS, whatever their first calls' fixed cost."""
    from gctool import budget

    now, seen = [0.0], list[tuple[int, int]]()
    budget_clock(monkeypatch, lambda: now[0])
    stop, size, fixed = 10**8, 65536, 30e-6
    quick = budget.probe_rate(_call_cost_walk(now, seen, fixed, 27e-9), stop, size, 1e9)
    assert quick is not None and 1 < _blocks(seen, (stop // 2, stop // 2 + size // 8)) <= 4
    assert 27 <= quick[0] <= 27 * (1 + 2 * budget.PROBE_CALLS)
    eight = (8 * fixed + size * 27e-9) / size * budget.NS_PER_S
    assert quick[0] < eight and eight / 27 > 1.1
    seen.clear()
    slow = budget.probe_rate(_call_cost_walk(now, seen, fixed, 5e-6), stop, size, 1e9)
    assert slow is not None
    assert _blocks(seen, (stop // 2, stop // 2 + size // 8)) == budget.PROBE_WINDOWS
    assert slow[0] == pytest.approx(5000, rel=0.01)


@pytest.mark.parametrize("stop", [32, 33, 100, 220, 1000, 4096, 10**5])
def test_the_probe_walks_each_rank_once(monkeypatch: pytest.MonkeyPatch, stop: int) -> None:
    """Whatever the enumeration's size (down to a probe of 8 sets, as the threads' tests set
    it) and the windows its first calls choose, the probe's ranges are apart from each other:
    verify folds each once in its place (:class:`gctool.audit.verify.enumeration.Probed`)."""
    from gctool import budget

    monkeypatch.setattr(budget, "PROBE", 8)
    monkeypatch.setattr(budget, "PROBE_MIN", 4)
    monkeypatch.setattr(budget, "PROBE_FIRST", 3)
    for fixed, per_set in ((0.0, 1e-9), (30e-6, 27e-9), (30e-6, 5e-6), (1.0, 1e-9)):
        now, seen = [0.0], list[tuple[int, int]]()
        budget_clock(monkeypatch, lambda now=now: now[0])
        budget.probe_rate(_call_cost_walk(now, seen, fixed, per_set), stop, 16, 1e12,
                          least=32)
        ranks = sorted(seen)
        assert all(a < b for a, b in ranks) and ranks
        assert all(b <= c for (_, b), (c, _) in zip(ranks, ranks[1:], strict=False))
        assert ranks[-1][1] <= stop


def test_the_attack_probe_leaves_the_orbit_filter_to_its_own_estimate(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The exhaustive attack's probe of rotation orbits times the walk of their candidates
    without its filter (gctool.budget.untimed), which the estimate adds for every candidate
    (exhaustive._filter): counted in the probe's rate per set too, it erred high by the
    filter at the probed ranks' density of orbit sets (is-cr n=56 s=6: 0.6 us of 6.5)."""
    from gctool import budget
    from gctool.audit import exhaustive, sweep
    from gctool.audit.oracles import make_oracle
    from gctool.audit.symmetry import detect_rotation

    code = design("is-cr", n=24, s=3)
    rot = detect_rotation(code)
    assert rot is not None
    oracle = make_oracle(code)
    now = [0.0]
    budget_clock(monkeypatch, lambda: now[0])
    real = sweep.canonical_sets

    def filtered(*args: object, **kw: object) -> object:
        now[0] += 1.0  # a second of the filter per call
        return real(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(sweep, "canonical_sets", filtered)
    walk, stop, _ = exhaustive._twin_walk(oracle, 3, rot)
    before = budget._probe_clock()
    some, _ = walk(0, min(stop, 200))
    assert some > 0 and now[0] >= 1.0  # the filter ran, and the probe's clock left it out
    assert budget._probe_clock() == before
