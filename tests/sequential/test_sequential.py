"""Sequential gradient codes: the (B, W, λ) model, loads/delays, schedules and their verifier.

Oracles are independent of gctool's code: the straggler model is checked window by window in
its interval form, and schedules are replayed by hand-written rules.
"""

from __future__ import annotations

import itertools
import random
from fractions import Fraction
from math import ceil

import pytest

from gctool.codes import design
from gctool.sequential import formulas
from gctool.sequential.model import BurstyModel, earliest_admissible, members, popcount, to_mask
from gctool.sequential.schedule import realise
from gctool.sequential.sgc import MSGC, SRSGC
from gctool.sequential.verify import adversary, verify_schedule


# -- the model ------------------------------------------------------------------------------------
def admissible_oracle(pattern: list[set[int]], B: int, W: int, lam: int) -> bool:
    """Every window of W rounds (also those reaching before round 0): <= lam distinct
    stragglers, and each worker's straggling rounds span fewer than B + ... = at most B rounds."""
    for end in range(len(pattern)):
        rounds = range(max(0, end - W + 1), end + 1)
        who = set().union(*(pattern[r] for r in rounds))
        if len(who) > lam:
            return False
        for i in who:
            hit = [r for r in rounds if i in pattern[r]]
            if hit[-1] - hit[0] >= B:
                return False
    return True


@pytest.mark.parametrize("n,B,W,lam", [(3, 1, 2, 2), (3, 2, 3, 2), (4, 1, 3, 2), (3, 2, 4, 3)])
def test_model_matches_window_oracle(n: int, B: int, W: int, lam: int) -> None:
    model = BurstyModel(n, B, W, lam)
    rng = random.Random(7)
    subsets = [set(c) for r in range(n + 1) for c in itertools.combinations(range(n), r)]
    for _ in range(1500):
        pattern = [rng.choice(subsets) if rng.random() < 0.6 else set() for _ in range(6)]
        masks = [to_mask(sorted(S)) for S in pattern]
        assert (model.violation(masks) is None) == admissible_oracle(pattern, B, W, lam)


def test_next_sets_are_exactly_the_admissible_extensions() -> None:
    model = BurstyModel(4, 1, 3, 2)
    rng = random.Random(3)
    for _ in range(200):
        history = tuple(to_mask(rng.sample(range(4), rng.randint(0, 1))) for _ in range(2))
        if model.violation(list(history)) is not None:
            continue
        listed = list(model.next_sets(history))
        assert len(listed) == len(set(listed))
        brute = {S for S in range(16) if model.violation(list(history) + [S]) is None}
        assert set(listed) == brute


def test_earliest_admissible_is_the_shortest_admissible_prefix() -> None:
    model = BurstyModel(5, 2, 3, 2)
    history = (0, to_mask([0, 1]))  # two workers already used the window's budget
    assert earliest_admissible(model, history, [4, 3, 2, 1, 0]) == 3  # stragglers {0, 1}
    assert earliest_admissible(model, history, [0, 1, 2, 3, 4]) == 5  # nobody may straggle
    rng = random.Random(11)
    for _ in range(300):
        hist = tuple(to_mask(rng.sample(range(5), rng.randint(0, 2))) for _ in range(2))
        if model.violation(list(hist)) is not None:
            continue
        order = rng.sample(range(5), 5)
        rests = [model.full & ~to_mask(order[:p]) for p in range(6)]
        assert earliest_admissible(model, hist, order) == min(
            p for p in range(6) if model.allows(hist, rests[p]))


# -- loads and delays (reference §5.2) -----------------------------------------------------------
@pytest.mark.parametrize("n,B,W,lam", [(8, 1, 3, 3), (10, 2, 5, 4), (6, 1, 2, 6), (12, 3, 7, 5)])
def test_loads_and_delays_match_reference(n: int, B: int, W: int, lam: int) -> None:
    s = ceil(Fraction(B * lam, W - 1 + B))
    sr = formulas.srsgc(n, B, W, lam)
    assert (sr.load, sr.delay, sr.s) == (Fraction(s + 1, n), B, s)
    m = formulas.msgc(n, B, W, lam)
    want = (Fraction((lam + 1) * (W - 1 + B), n * (B + (W - 1) * (lam + 1))) if lam < n
            else Fraction(W - 1 + B, n * (W - 1)))
    assert (m.load, m.delay) == (want, W - 2 + B)
    alpha = formulas.msgc_alpha(n, B, W, lam)  # equal mini-tasks: D1 and D2 sizes agree
    assert (W - 1 + B) * alpha / (n * (W - 1)) == m.load
    if lam < n:
        assert alpha / (n * (W - 1)) == (1 - alpha) * (lam + 1) / (n * B)
        assert m.load <= Fraction(lam + 1, n) == formulas.plain_gc(n, lam).load


def test_design_files_record_delay_and_load() -> None:
    sr = design("sr-sgc", n=8, seed=1, burst=1, window=3, lam=3)
    assert sr.params["delay"] == 1 and sr.params["load"] == 0.25 and sr.s == 1
    assert sr.loads.tolist() == [2] * 8  # (s+1)/n of the data per worker per round
    m = design("m-sgc", n=6, seed=1, burst=2, window=4, lam=2)
    assert m.params["delay"] == 4 and m.params["load"] == pytest.approx(15 / 66)
    assert m.s == 2 and m.params["decoding"]["d2_groups"] == 2
    full = design("m-sgc", n=4, seed=1, burst=1, window=2, lam=4)
    assert full.params["load"] == pytest.approx(2 / 4) and full.params["gc"] == "none"


@pytest.mark.parametrize("args,message", [
    (dict(burst=2, window=4, lam=2), "B | W-1"),
    (dict(burst=3, window=3, lam=2), "smaller than the window"),
    (dict(burst=1, window=3, lam=9), "cannot exceed n"),
])
def test_invalid_sgc_designs(args: dict, message: str) -> None:  # type: ignore[type-arg]
    from gctool.errors import DesignError

    with pytest.raises(DesignError, match=message.replace("|", r"\|")):
        design("sr-sgc", n=6, seed=1, **args)


# -- schedules -----------------------------------------------------------------------------------
def count_decodes(n: int, s: int):  # type: ignore[no-untyped-def]
    return lambda mask: popcount(mask) >= n - s


def test_srsgc_replay_by_hand() -> None:
    """n = 4, B = 1, W = 2, λ = 2: s = 1.  Round 0 loses workers 0 and 1 (v = 2 > s), so one of
    them (the lowest, worker 0) redoes job 0 in round 1; job 0 then has 3 = n - s results."""
    model = BurstyModel(4, 1, 2, 2)
    sch = SRSGC(model, count_decodes(4, 1))
    rounds = realise(sch, [to_mask([0, 1]), 0])
    assert [row[0] for row in rounds[1]["tasks"]] == [[0, "gc", 0], [1, "gc", 0],
                                                      [1, "gc", 0], [1, "gc", 0]]
    assert rounds[1]["deadlines"] == [{"job": 0, "decoded": True}]


def test_msgc_replay_by_hand() -> None:
    """n = 3, B = 1, W = 2, λ = 1: 2 slots; slot 1 of worker 0 re-attempts its D1 mini-task of
    the job whose D1 slot it lost."""
    sch = MSGC(BurstyModel(3, 1, 2, 1), count_decodes(3, 1))
    rounds = realise(sch, [to_mask([0]), 0, 0])
    assert rounds[1]["tasks"][0] == [[1, "d1", 0], [0, "d1", 0]]
    assert rounds[1]["tasks"][1] == [[1, "d1", 0], [0, "d2", 0]]
    assert rounds[1]["deadlines"] == [{"job": 0, "decoded": True}]


CASES = [(4, 1, 2, 2), (5, 1, 3, 3), (5, 2, 3, 2), (6, 1, 2, 3), (4, 1, 2, 4), (5, 1, 4, 4)]


@pytest.mark.parametrize("n,B,W,lam", CASES)
@pytest.mark.parametrize("kind", ["sr-lowest", "sr-stragglers-first", "m"])
def test_exhaustive_verification_passes(n: int, B: int, W: int, lam: int, kind: str) -> None:
    model = BurstyModel(n, B, W, lam)
    if kind.startswith("sr"):
        if (W - 1) % B:
            return
        fig = formulas.srsgc(n, B, W, lam)
        assert fig.s is not None
        sch: SRSGC | MSGC = SRSGC(model, count_decodes(n, fig.s),
                                  selection=kind.removeprefix("sr-"))
    else:
        sch = MSGC(model, count_decodes(n, lam))
    rep = verify_schedule(sch, load=0.0, max_sets=2_000_000)
    assert rep.ok and rep.exact and rep.method == "reachable-states" and rep.horizon is None


@pytest.mark.parametrize("kind", ["sr", "m"])
def test_stronger_adversary_breaks_schedule_with_real_counterexample(kind: str) -> None:
    n, B, W, lam = 6, 1, 3, 3
    design_model, strong = BurstyModel(n, B, W, lam), BurstyModel(n, B, W, lam + 1)
    if kind == "sr":
        s = formulas.srsgc(n, B, W, lam).s
        assert s is not None
        sch: SRSGC | MSGC = SRSGC(strong, count_decodes(n, s), s=s)
    else:
        sch = MSGC(strong, count_decodes(n, lam))
    rep = verify_schedule(sch, load=0.0, max_sets=2_000_000)
    assert not rep.ok and rep.counterexample is not None
    pattern = [to_mask(S) for S in rep.counterexample["pattern"]]
    assert strong.violation(pattern) is None  # admissible for the stronger model ...
    assert design_model.violation(pattern) is not None  # ... but not for the designed one
    last = realise(sch, pattern)[-1]["deadlines"]
    assert {"job": rep.counterexample["job"], "decoded": False} in last


def test_horizon_and_heuristic_modes() -> None:
    n, B, W, lam = 6, 1, 3, 3
    sch = MSGC(BurstyModel(n, B, W, lam), count_decodes(n, lam))
    rep = verify_schedule(sch, load=0.0, horizon=2)
    assert rep.ok and rep.exact and rep.method == "horizon" and rep.horizon == 2
    rep = verify_schedule(sch, load=0.0, max_sets=300, seed=5)
    assert rep.ok and not rep.exact and rep.method == "heuristic" and rep.seed == 5
    weak = MSGC(BurstyModel(n, B, W, lam + 2), count_decodes(n, lam))
    rollouts, _, failure = adversary(weak, 12, 20_000, seed=1)
    assert failure is not None  # real: replay it
    last = realise(weak, failure.pattern)[-1]["deadlines"]
    assert {"job": failure.job, "decoded": False} in last
    assert weak.model.violation(failure.pattern) is None


def test_members_roundtrip() -> None:
    assert members(to_mask([5, 0, 3])) == [0, 3, 5]
