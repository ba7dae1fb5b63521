"""The exhaustive attack's choice, per size, between one set per rotation orbit and the plain
walk of every set (:func:`gctool.audit.exhaustive.orbits_pay`): either path gives the same
report (threshold, witness, worst set, exact label); only the work differs.  Nothing is
timed here: the rule is checked on its cost model, the paths on their results."""

from __future__ import annotations

from math import comb

import numpy as np
import pytest

from gctool.audit import exhaustive, symmetry
from gctool.audit.attack import attack
from gctool.audit.attack.thresholds import threshold
from gctool.audit.oracles import make_oracle
from gctool.audit.symmetry import Rotation, count_orbits
from gctool.budget import Budget
from gctool.codes import design
from gctool.engine.enumeration import MAX_RANKABLE

from helpers import built, stage_sets
from oracles import decodes_gf, lstsq_error

#: codes with a rotation symmetry: frc (i -> i + s + 1) and cyclic-MDS (i -> i + 1)
CODES = [("frc", 40, 4), ("frc", 30, 2), ("cyclic-mds", 24, 3), ("cyclic-mds", 15, 4)]


def _forced(monkeypatch: pytest.MonkeyPatch, orbits: bool) -> None:
    monkeypatch.setattr(exhaustive, "orbits_pay", lambda *args: orbits)


@pytest.mark.parametrize(("name", "n", "s"), CODES)
def test_orbits_and_the_plain_walk_give_the_same_threshold(
        monkeypatch: pytest.MonkeyPatch, name: str, n: int, s: int) -> None:
    code = design(name, n=n, s=s)
    reports = {}
    for orbits in (True, False):
        _forced(monkeypatch, orbits)
        reports[orbits] = threshold(code, method="exhaustive", budget=Budget())
    plain = threshold(code, method="exhaustive", symmetry=False, budget=Budget())
    a, b = reports[True], reports[False]
    assert a.threshold == b.threshold == plain.threshold == s + 1
    assert a.stragglers == b.stragglers == plain.stragglers
    assert a.exact and b.exact and plain.exact
    assert a.raw_error == pytest.approx(b.raw_error, rel=1e-9)
    # the paths did differ: every size searched by orbits, or none
    assert any("one set per orbit evaluated" in note for note in a.notes)
    assert any(note.endswith("costs less than one per orbit") for note in b.notes)
    assert a.checked < b.checked


@pytest.mark.parametrize(("name", "n", "s"), CODES[1:])
def test_orbits_and_the_plain_walk_give_the_same_worst_case(
        monkeypatch: pytest.MonkeyPatch, name: str, n: int, s: int) -> None:
    code = design(name, n=n, s=s)
    for t in (s, s + 1):
        reports = {}
        for orbits in (True, False):
            _forced(monkeypatch, orbits)
            reports[orbits] = attack(code, t, method="exhaustive")
        a, b = reports[True], reports[False]
        assert a.stragglers == b.stragglers and a.exact and b.exact
        assert a.raw_error == pytest.approx(b.raw_error, rel=1e-9, abs=1e-12)
        assert a.checked < b.checked == comb(n, t)


def test_orbits_pay_when_the_sets_they_save_cost_more_than_their_filter() -> None:
    rot = Rotation(40, 5, 0, True)
    cand, orbits = comb(40, 5) - comb(35, 5), 82_251
    assert symmetry.compiled_filter(40, 5, 5)  # 333,376 candidates: 250 ms in numpy
    filt = cand * 5 * symmetry.COMPILED_CANONICAL_NS
    assert symmetry.filter_work(40, 5, 5) == filt
    # frc n=40 s=4, size 5: 658,008 sets walked compiled at ~0.16 us against 82,251 orbit
    # sets in batches at ~2.1 us and the filter: the plain walk
    assert not exhaustive.orbits_pay(40, 5, rot, comb(40, 5) * 156.0, orbits * 2140.0)
    # at the plain rate for the orbits' sets (no batch cost given), the orbits
    assert exhaustive.orbits_pay(40, 5, rot, comb(40, 5) * 156.0)
    # the same size at the numpy route's ~1.5 us per set: the orbits
    assert exhaustive.orbits_pay(40, 5, rot, comb(40, 5) * 1500.0, orbits * 1500.0)
    # the boundary: orbits when the saved sets cost just more than the filter
    rate = filt / (comb(40, 5) - orbits)
    assert exhaustive.orbits_pay(40, 5, rot, comb(40, 5) * rate * 1.01)
    assert not exhaustive.orbits_pay(40, 5, rot, comb(40, 5) * rate * 0.99)
    # the batches never cost less than the plain rate
    assert not exhaustive.orbits_pay(40, 5, rot, comb(40, 5) * rate * 0.99, 0.0)
    # a small size filters in numpy (loading the compiled filter would cost more)
    assert not symmetry.compiled_filter(40, 3, 5)
    assert symmetry.filter_work(40, 3, 5) == 3335 * 3 * symmetry.CANONICAL_NS
    # no rotation, the empty set, and sizes too large to rank (no walk runs)
    assert not exhaustive.orbits_pay(40, 5, None, 1.0)
    assert exhaustive.orbits_pay(40, 0, rot, 0.0)
    n = 200
    assert comb(n, n // 2) > MAX_RANKABLE
    assert exhaustive.orbits_pay(n, n // 2, Rotation(n, 1, 0, True), 0.0)


def test_the_threshold_search_chooses_per_size() -> None:
    """frc n=40 s=4: the small sizes (numpy route) by orbits, size 5 (a compiled walk of
    658,008 sets, where the orbits' batches cost 5-10x a walked set) and the size before it
    (walked with it) by every set; the witness bound at the top size is the plain rank
    then."""
    code = design("frc", n=40, s=4)
    oracle = make_oracle(code, budget=Budget())
    rot = exhaustive.rotation_for(oracle)
    assert rot is not None and rot.t == 5
    search = exhaustive._SearchBudget(oracle, 1, None, rot, oracle.limit, 5, [0, 1, 2, 3, 4])
    assert search.rot_at(2) == rot
    assert search.rot_at(4) is None and search.rot_at(5) is None
    assert search.witness_rank == 1
    # each size's choice is its cost model's
    for t in range(1, 6):
        work = search._plain(t, comb(40, t))[0]
        sets = oracle.batch_work(t, count_orbits(40, t, 5))
        assert (search.rot_at(t) is not None) == exhaustive.orbits_pay(40, t, rot, work, sets)
        # and the work of the path chosen is the one the search is estimated with
        need = exhaustive.count_evaluated(40, t, search.rot_at(t))
        if search.rot_at(t) is not None:
            assert search.work(t, need)[0] == pytest.approx(
                symmetry.filter_work(40, t, 5) + max(sets, work * need / comb(40, t)))


def test_the_compiled_filter_keeps_the_numpy_filters_sets_and_weights(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The orbit filter, compiled or in numpy, on every n <= 16, every rotation t | n and
    size s, over the whole candidate prefix and random rank ranges of it: the same sets in
    the same order, the same orbit sizes; one set per orbit, whose sizes add up to C(n, s)."""
    rng = np.random.default_rng(7)
    for n in range(2, 17):
        for t in (d for d in range(1, n) if n % d == 0):
            rot = Rotation(n, t, 0, True)
            for s in range(1, n):
                cand = symmetry.count_candidates(n, s, t)
                ranges = [(0, cand)] + [tuple(sorted(map(int, rng.integers(0, cand + 1, 2))))
                                        for _ in range(2)]
                for a, b in ranges:
                    got = {}
                    for path in (True, False):
                        monkeypatch.setattr(symmetry, "compiled_filter",
                                            lambda *args, on=path: on)
                        got[path] = symmetry.canonical_sets(n, s, rot, a, b, weighted=True)
                    (C1, w1), (C0, w0) = got[True], got[False]
                    assert np.array_equal(C1, C0) and np.array_equal(w1, w0), (n, t, s, a, b)
                    if (a, b) == (0, cand):
                        assert C1.shape[0] == count_orbits(n, s, t)
                        assert int(w1.sum()) == comb(n, s)
                    C, w = symmetry.canonical_sets(n, s, rot, a, b, weighted=False)
                    assert np.array_equal(C, C1) and (w == 1).all()


@pytest.mark.parametrize("jobs", [1, 2])
def test_the_compiled_filters_orbits_give_the_plain_walks_report_on_any_jobs(
        monkeypatch: pytest.MonkeyPatch, jobs: int) -> None:
    """frc n=40 s=4 at size 5, whose 333,376 orbit candidates are filtered compiled: its
    worst case and threshold by orbits (82,251 sets, in processes on two jobs) and by the
    plain walk of the 658,008 (threads), the same on one job and on two."""
    code = design("frc", n=40, s=4)
    assert symmetry.compiled_filter(40, 5, 5)
    worst, limit = {}, {}
    for orbits in (True, False):
        _forced(monkeypatch, orbits)
        worst[orbits] = attack(code, 5, method="exhaustive", jobs=jobs)
        limit[orbits] = threshold(code, method="exhaustive", jobs=jobs, budget=Budget())
    a, b = worst[True], worst[False]
    assert a.checked == 82_251 and b.checked == comb(40, 5)
    assert a.stragglers == b.stragglers and a.exact and b.exact
    assert a.raw_error == pytest.approx(b.raw_error, rel=1e-9, abs=1e-12)
    one = attack(code, 5, method="exhaustive")  # (plain: the last forced)
    assert one.stragglers == b.stragglers and one.raw_error == b.raw_error
    x, y = limit[True], limit[False]
    assert x.threshold == y.threshold == 5 and x.stragglers == y.stragglers
    assert x.exact and y.exact


def _verify_refusal(code: object, s: int) -> float:
    """verify's calibrated estimate (seconds of one core, the run's start included) from its
    refusal under a small budget, with no timed probe in its place."""
    from gctool.audit.verify import enumeration, verify
    from gctool.errors import BudgetExceeded

    with pytest.raises(BudgetExceeded) as err, pytest.MonkeyPatch.context() as mp:
        mp.setattr(enumeration, "worth_timing", lambda seconds, budget: False)
        verify(code, s, jobs=1, budget=Budget(max_work=1e-2))  # type: ignore[arg-type]
    assert "one per rotation orbit" in str(err.value), str(err.value)
    assert err.value.needed is not None
    return err.value.needed


def test_verify_by_orbits_is_estimated_as_the_filter_and_the_screen_of_given_sets() -> None:
    """verify's one set per rotation orbit never walks ranks: the representatives are decided
    as given sets (the compiled screen factors each whole and computes its decoder norm in
    full, :func:`gctool.audit.kernels.real.given_cost`), after the filter of every candidate.
    cyclic-MDS complex n=48 s=6 (255,704 orbit sets) took 1.5-1.8 s of CPU where the walk's
    rate said 14 ms, and so ran under a budget of 0.1 s."""
    from gctool.audit.kernels.real import given_cost, screen_cost, settle_cost
    from gctool.audit.nullspace import FloatNullKernel, reduce_float
    from gctool.budget import START_NS

    code = design("cyclic-mds", n=48, s=6, field="complex")
    orbits = count_orbits(48, 6, 1)
    assert orbits == 255_704
    # (the few sets below delta, at the second stage's cost; none for the direct decoder)
    second, third = FloatNullKernel(code, 1e-9, reduce_float(code, 1e-9)).stage_shares(6)
    assert second < 0.01 and third == 0.0
    sets = orbits * (given_cost(48, 6, 6, 1, complex_=True)
                     + second * settle_cost(48, 48, 1, 6, 6, complex_=True))
    expected = (symmetry.filter_work(48, 6, 1) + sets + START_NS) / 1e9
    assert _verify_refusal(code, 6) == pytest.approx(expected)
    assert expected > 0.5 > 20 * orbits * screen_cost(6, 6, complex_=True) / 1e9
    # real: the same model, a third of the complex one per multiply-add
    assert given_cost(47, 6, 6, 1) < given_cost(47, 6, 6, 1, complex_=True) / 2


def test_verify_by_orbits_over_the_budget_is_refused_in_one_line(tmp_path: object) -> None:
    """The CLI refuses that run under --max-work 0.1s: exit 2, one stderr line naming
    --max-work (it ran to its end before, exit 0)."""
    from pathlib import Path

    from gctool.io import write_code

    from helpers import run

    path = Path(str(tmp_path)) / "z.json"
    write_code(design("cyclic-mds", n=48, s=6, field="complex"), path)
    res = run("verify", str(path), "--max-work", "0.1s")
    lines = res.stderr.strip().splitlines()
    assert res.exit_code == 2 and len(lines) == 1, res.stderr
    assert "--max-work" in lines[0] and "rotation orbit" in lines[0]


def test_gf_sets_given_by_orbits_cost_a_whole_echelon_each() -> None:
    """Over GF(q) too, a given set is brought to echelon whole (1.3-3.3x the walk's cost of a
    set whose rows all change, 4-8x the walk's rate per set): ``given_time`` counts it."""
    import numpy as np

    from gctool.audit.kernels.gf import GIVEN_FACTOR, given_cost, walk_cost
    from gctool.audit.nullspace import GFNullKernel, reduce_gf

    code = design("cyclic-mds", n=63, s=6, field="GF(2^6)")
    kernel = GFNullKernel(code, reduce_gf(code))
    N = np.asarray(kernel.red.N)
    density = float(np.count_nonzero(N)) / N.size
    d = kernel.red.d
    assert kernel.given_time(6, 10**5) == pytest.approx(given_cost(6, d, 1, False, density))
    assert given_cost(6, d, 1, False, density) == pytest.approx(
        GIVEN_FACTOR * walk_cost(6, d, 1, False, 6, density))
    assert kernel.given_time(6, 10**5) > 4 * kernel.set_time(6, 10**5)


def test_verify_by_orbits_counts_the_sets_its_later_stages_decide(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """is-cr n=48 s=5: the screen of given sets leaves most orbit sets of this 0/1 code (N[:, S]
    singular or below delta) to the second stage, and a few to the direct decoder (a
    hundred times a set's screen each).  The estimate counts both, at shares drawn from a
    sample (:meth:`gctool.audit.nullspace.FloatNullKernel.stage_shares`): it is within 1.5x
    of the work model on the sets the run itself sent to each stage (counted, not timed),
    where the screen alone read less than half of it (the run took 2-4x its estimate)."""
    from gctool.audit.kernels import real
    from gctool.audit.nullspace import direct_time
    from gctool.audit.verify import verify
    from gctool.budget import START_NS

    code = built("is-cr", 48, 5)  # design's conditioning record: 15-30 s, not read here
    estimate = _verify_refusal(code, 5) * 1e9
    counted = stage_sets(monkeypatch)
    report = verify(code, 5, jobs=1, budget=Budget(max_work=100.0))
    orbits = count_orbits(48, 5, 1)
    assert report.ok and report.method == "symmetry" and report.checked == orbits
    assert counted["settle"] > orbits // 2 and counted["direct"] > 0, counted
    d = 5
    screen = symmetry.filter_work(48, 5, 1) + orbits * real.given_cost(48, 5, d, 1) + START_NS
    model = (screen + counted["settle"] * real.settle_cost(48, 48, 1, 5, d)
             + counted["direct"] * direct_time(code, 5))
    assert 1 / 1.5 <= estimate / model <= 1.5, (estimate, model, counted)
    assert screen < model / 2


def test_orbit_representatives_are_the_smallest_rotations() -> None:
    """:func:`gctool.audit.symmetry.representatives` against the minimum over every rotation,
    for each rotation t | n; the random orbits of :func:`~gctool.audit.symmetry.orbit_sample`
    are canonical and spread over the candidate ranks, not bunched at the first ones."""
    from gctool.engine.enumeration import rank_lex, sample_sets

    rng = np.random.default_rng(3)
    for n, s in ((12, 4), (15, 5), (16, 3)):
        C = sample_sets(n, s, 200, rng)
        for t in (d for d in range(1, n) if n % d == 0):
            rot = Rotation(n, t, 0, True)
            brute = np.array([min(tuple(sorted((x + r * t) % n for x in S))
                                  for r in range(n // t)) for S in C.tolist()])
            assert np.array_equal(symmetry.representatives(C, rot), brute), (n, s, t)
    # spread as the orbits are: the ranks of the sample against those of every
    # representative (Kolmogorov-Smirnov distance), where the first candidates hold many
    rot = Rotation(24, 1, 0, True)
    R = symmetry.orbit_sample(24, 5, rot, 4096)
    assert symmetry.canonical_mask(R, rot).all()
    every, _ = symmetry.canonical_sets(24, 5, rot, 0, symmetry.count_candidates(24, 5, 1),
                                       weighted=False)
    assert every.shape[0] == count_orbits(24, 5, 1)
    ours, theirs = np.sort(rank_lex(24, R)), np.sort(rank_lex(24, every))
    grid = np.linspace(0, theirs[-1], 200)
    cdf = [np.searchsorted(x, grid, side="right") / x.size for x in (ours, theirs)]
    assert float(np.max(np.abs(cdf[0] - cdf[1]))) < 0.05
    first = np.searchsorted(theirs, 256) / theirs.size  # orbits in a pilot's first ranks
    assert first > 0.05 and abs(np.searchsorted(ours, 256) / ours.size - first) < 0.03


def test_verify_by_orbits_near_the_budget_is_refused_on_its_timed_orbit_sets() -> None:
    """is-cr n=56 s=6 (579,852 orbit sets, about 3 s of one core): under a budget of 0.4 s
    its calibrated estimate is within TIMED_SPAN of it, so the kernel is timed on random
    orbits' representatives (every later stage included) and the refusal states that time
    ("timed on"), where a window from the middle of the candidates held too few sets to
    time anything.  The probe's sets are PROBE representatives, the first of them a warm-up
    that no rate counts (counted among the sets timed, as a window's is)."""
    from gctool.audit.verify import verify
    from gctool.budget import PROBE
    from gctool.errors import BudgetExceeded

    code = design("is-cr", n=56, s=6)
    with pytest.raises(BudgetExceeded) as err:
        verify(code, 6, jobs=1, budget=Budget(max_work=0.4))
    text = str(err.value)
    assert "one per rotation orbit" in text and f"timed on {PROBE:,} of them" in text, text


@pytest.mark.parametrize(("n", "s", "t"), [(48, 6, 1), (40, 5, 5), (30, 4, 3)])
def test_orbit_tasks_hold_about_equal_canonical_sets(n: int, s: int, t: int) -> None:
    """The canonical sets crowd at the first candidate ranks (cyclic-MDS n=48 s=6: 220,103
    of its 255,704 in the second of four equal rank ranges, so two jobs barely beat one);
    :func:`gctool.audit.symmetry.orbit_ranges` cuts the candidates into consecutive ranges
    of about the sets asked for each, none longer than the ranks allowed."""
    from gctool.audit.symmetry import orbit_ranges

    rot = Rotation(n, t, 1, True)
    stop, orbits = symmetry.count_candidates(n, s, t), count_orbits(n, s, t)
    start = min(100, stop // 10)
    sets, ranks = max(1, orbits // 8), stop // 3
    ranges = orbit_ranges(n, s, rot, start, stop, sets, ranks)
    assert ranges[0][0] == start and ranges[-1][1] == stop
    assert all(a < b <= a + ranks for a, b in ranges)
    assert all(b == c for (_, b), (c, _) in zip(ranges, ranges[1:], strict=False))
    held = [symmetry.canonical_sets(n, s, rot, a, b, weighted=False)[0].shape[0]
            for a, b in ranges]
    whole = symmetry.canonical_sets(n, s, rot, 0, start, weighted=False)[0].shape[0]
    assert whole + sum(held) == orbits
    assert 6 <= len(ranges) <= 12, held
    assert max(held) <= 1.6 * sets, (held, sets)
    assert orbit_ranges(n, s, rot, stop, stop, sets, ranks) == []


@pytest.mark.parametrize("field", ["complex", "GF(73)"])
def test_verify_by_orbits_gives_the_same_report_on_any_jobs(
        monkeypatch: pytest.MonkeyPatch, field: str) -> None:
    """verify of one set per rotation orbit, its tasks in two processes (forced, small
    tasks: many cuts of :func:`gctool.audit.symmetry.orbit_ranges`): the report of one job,
    for a code that tolerates s (every orbit checked) and at s + 1 (its certificates off),
    where it stops at the first failing representative in rank order, the one a plain
    check of the representatives finds."""
    import importlib

    from gctool.audit import certificates
    from gctool.audit import nullspace as ns
    from gctool.audit.verify import verify

    from helpers import same_report

    vmod = importlib.import_module("gctool.audit.verify.enumeration")
    monkeypatch.setattr(vmod, "PARALLEL_MIN_S", 0.0)  # always start processes
    monkeypatch.setattr(vmod, "PILOT", 8)
    for kernel in (ns.FloatNullKernel, ns.GFNullKernel, ns.GFDirectKernel, ns.DirectKernel):
        monkeypatch.setattr(kernel, "chunk_size", lambda self, s, given=False: 40)
    pipeline = importlib.import_module("gctool.audit.verify.pipeline")
    for stage in ("certificate", "rank_bound"):  # the enumeration decides s + 1 too
        monkeypatch.setattr(pipeline, stage, lambda *args: None)
    monkeypatch.setattr(certificates, "column_support", lambda *args: None)
    code = design("cyclic-mds", n=24, s=4, field=field)
    GF = code.field.galois() if code.field.is_finite else None

    def decodes(S: list[int]) -> bool:
        F = tuple(i for i in range(24) if i not in S)
        return (decodes_gf(GF, code.B, F) if GF is not None
                else lstsq_error(np.asarray(code.B), F) <= 1e-9 * code.k)

    for s in (4, 5):
        one, two = verify(code, s, jobs=1), verify(code, s, jobs=2)
        assert one.method == "symmetry" and two.jobs == 2
        assert same_report(one) == same_report(two)
        assert one.ok == (s == 4)
        if s == 4:
            assert one.checked == count_orbits(24, 4, 1)
            continue
        rot = Rotation(24, 1, 1, True)
        C, _ = symmetry.canonical_sets(24, s, rot, 0, symmetry.count_candidates(24, s, 1),
                                       weighted=False)
        first = next(list(map(int, S)) for S in C if not decodes(list(map(int, S))))
        assert one.counterexample == first


def test_verify_by_orbits_whose_probe_meets_a_failing_set_is_estimated_up_to_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A run by orbits that its calibrated estimate refuses is timed on random orbits'
    representatives; when one of them fails, the run stops by its rank at the latest, and
    is estimated up to it instead of whole: cyclic-MDS complex n=48 s=6 (255,704 orbit
    sets, 0.7 s of CPU) with one representative made to fail at about 1/10 of them runs
    under a budget of 0.2 s (it was refused at the calibrated estimate of the whole run),
    and stops there."""
    from gctool.audit import nullspace as ns
    from gctool.audit.verify import verify
    from gctool.budget import PROBE, probe_size
    from gctool.engine.enumeration import rank_lex
    from gctool.errors import BudgetExceeded

    code = design("cyclic-mds", n=48, s=6, field="complex")
    rot, orbits = Rotation(48, 1, 1, True), count_orbits(48, 6, 1)
    with pytest.raises(BudgetExceeded):  # (loads the kernels the probe times)
        verify(code, 6, jobs=1, budget=Budget(max_work=0.05))
    S = symmetry.orbit_sample(48, 6, rot, probe_size(orbits, PROBE, 1024) or 0)
    R = rank_lex(48, S)
    j = int(np.argmin(np.where(R > 20_000, R, R.max() + 1)))  # the probe's own sample
    target = S[j]
    plain = ns.FloatNullKernel.evaluate

    def evaluate(self: ns.FloatNullKernel, X: np.ndarray) -> object:
        out = plain(self, X)
        hit = np.all(X == target, axis=1) if X.shape[1] == 6 else np.zeros(len(X), bool)
        out.ok[hit], out.error[hit] = False, 1.0
        return out

    monkeypatch.setattr(ns.FloatNullKernel, "evaluate", evaluate)
    report = verify(code, 6, jobs=1, budget=Budget(max_work=0.2))
    assert not report.ok and report.counterexample == target.tolist()
    assert report.checked < orbits // 4
