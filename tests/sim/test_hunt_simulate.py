"""simulate's plain code files against a brute force written without gctool's stopping rules.

Under gctool's waiting rule a round ends at the earliest arrival after which the arrived rows
decode exactly, or at the (n - s)-th arrival with the optimal approximate decoder (docs/
simulate.md).  Here each round is decided prefix by prefix with the exact oracle of
tests/hunt_oracles.py (exact rationals over R/C with the documented tolerance, field tables
over GF(q)) on the same arrival times, including tied ones; the shipped AWS Lambda traces
drive an end-to-end run whose reported figures are recomputed from those rounds.  Metamorphic
properties: relabelling the workers (rows of B and the columns of the times together) changes
no round, and a code that tolerates s never reports an inexact round.
"""

from __future__ import annotations

import itertools
from functools import cache

import numpy as np
import pytest
from hunt_oracles import decodes, random_code

from gctool.algebra.fields import parse_field
from gctool.audit.verify import verify
from gctool.codes import design
from gctool.model import GradientCode
from gctool.sim.contenders.base import Setting
from gctool.sim.contenders.code import CodeFile
from gctool.sim.delays import parse_delay
from gctool.sim.run import simulate


def _random_int_code(seed: int, n: int = 6, k: int = 4, s: int = 2) -> GradientCode:
    """Small-integer rows of two entries each, declared to tolerate s: some tolerate it, some
    do not (rounds that end at the cap without decoding)."""
    rng = np.random.default_rng(seed)
    B = np.zeros((n, k))
    for i in range(n):
        cols = rng.choice(k, 2, replace=False)
        B[i, cols] = rng.integers(1, 3, 2)
    return GradientCode(B, parse_field("real"), s)


CODES = {
    "frc": lambda: design("frc", n=6, s=2),
    "cyclic-real": lambda: design("cyclic", n=7, s=3, seed=2),
    "cyclic-mds-gf8": lambda: design("cyclic-mds", n=7, s=2, field="GF(2^3)"),
    "rs-gf7": lambda: design("rs", n=6, s=2, field="GF(7)"),
    "sbc-approximate": lambda: design("sbc", n=8, s=2, seed=1),
    "int-0": lambda: _random_int_code(0),
    "int-3": lambda: _random_int_code(3),
    # partition 2 is held by no worker: no set of workers decodes it exactly
    "zero-column": lambda: GradientCode(np.array([[1.0, 1.0, 0.0], [0.0, 1.0, 0.0],
                                                  [1.0, 0.0, 0.0], [1.0, 1.0, 0.0]]),
                                        parse_field("real"), 1),
}


@cache
def _code(name: str) -> GradientCode:
    return CODES[name]()


def brute_rounds(code: GradientCode, times: np.ndarray
                 ) -> tuple[np.ndarray, list[tuple[int, ...]], np.ndarray]:
    """(durations, workers used, exact) per round: the first prefix of the stable arrival order
    that decodes exactly (hunt_oracles.decodes), else the (n - s)-th arrival, inexact."""
    cap = code.n - code.s
    seen: dict[frozenset[int], bool] = {}

    def ok(F: tuple[int, ...]) -> bool:
        key = frozenset(F)
        if key not in seen:
            seen[key] = decodes(code, tuple(sorted(F)))
        return seen[key]

    durations, used, exact = [], [], []
    for row in times:
        order = [int(i) for i in np.argsort(row, kind="stable")]
        p = next((q for q in range(1, cap + 1) if ok(tuple(order[:q]))), None)
        durations.append(row[order[(cap if p is None else p) - 1]])
        used.append(tuple(order[:cap if p is None else p]))
        exact.append(p is not None)
    return np.array(durations), used, np.array(exact)


def _times(rng: np.random.Generator, rounds: int, n: int, ties: bool) -> np.ndarray:
    t = rng.exponential(size=(rounds, n)) + 1.0
    return np.round(t * 2) / 2 if ties else t  # half-second steps: many tied arrivals


@pytest.mark.parametrize("ties", [False, True], ids=["distinct", "tied"])
@pytest.mark.parametrize("name", list(CODES))
def test_rounds_equal_the_brute_force(name: str, ties: bool) -> None:
    code = _code(name)
    times = _times(np.random.default_rng(len(name) + ties), 25, code.n, ties)
    run = CodeFile(code, name).run(times, Setting())
    durations, used, exact = brute_rounds(code, times)
    assert run.exact is not None
    assert np.array_equal(run.durations, durations)
    assert [tuple(int(i) for i in u) for u in run.used] == used
    assert np.array_equal(run.exact, exact)


@pytest.mark.parametrize("name", list(CODES))
def test_every_set_of_workers_is_decided_as_the_exact_oracle_decides(name: str) -> None:
    """StopRule.decodes_mask (the authors' rule and the sequential schemes' rounds) on every
    subset.  Found: int-0's survivors [0, 3, 4, 5] (error 4/3) were said to decode: the dual
    residual fitted round-off in rows of the null-space basis that no null vector uses."""
    from gctool.sequential.model import to_mask
    from gctool.sim.stopping import StopRule

    code = _code(name)
    rule = StopRule(code)
    wrong = [F for size in range(code.n + 1) for F in itertools.combinations(range(code.n), size)
             if rule.decodes_mask(to_mask(F)) != decodes(code, F)]
    assert not wrong, wrong[:5]


def test_decodes_mask_on_random_codes_equals_the_exact_oracle() -> None:
    """60 small random codes over R, C and GF(5) (repeated and scaled rows, zero rows and
    columns: hunt_oracles.random_code), every subset of workers.  Before the dual residual
    dropped round-off directions, one of these codes had a failing set said to decode (4 of
    the first 150 codes, 7 sets)."""
    from gctool.sequential.model import to_mask
    from gctool.sim.stopping import StopRule

    rng = np.random.default_rng(1)
    wrong = []
    for _ in range(60):
        code = random_code(rng, ("real", "complex", "GF(5)", "real"))
        rule = StopRule(code)
        wrong += [(np.asarray(code.B).tolist(), F) for size in range(code.n + 1)
                  for F in itertools.combinations(range(code.n), size)
                  if rule.decodes_mask(to_mask(F)) != decodes(code, F)]
    assert not wrong, wrong[:3]


@pytest.mark.parametrize("s", [2, 4])
def test_the_dual_walk_at_a_large_cap_equals_the_generic_decoder(s: int) -> None:
    """gctool's rule from a cap of 48 on walks down with the dual residual.  Ten copies of
    int-0's B on the diagonal (n = 60, k = 40): before the residual dropped round-off
    directions, 18 of 60 rounds at s = 2 (5 at s = 4) stopped at prefixes that do not decode
    and were labelled exact (exact fraction 0.52 for 0.22)."""
    from gctool.sim.stopping import PrefixDecoder, StopRule

    B = np.kron(np.eye(10), np.asarray(_code("int-0").B))
    code = GradientCode(B, parse_field("real"), s)
    rule, naive = StopRule(code), PrefixDecoder(code)
    assert rule._walk is not None  # the walk decides these rounds
    times = np.random.default_rng(s).exponential(size=(60, code.n))
    order, p, exact = rule.earliest(times, code.n - s)
    wrong = [r for r in range(60) if naive.earliest(order[r], code.n - s) != (p[r], exact[r])]
    assert not wrong, wrong


def brute_authors(code: GradientCode, at: np.ndarray, mu: float
                  ) -> tuple[np.ndarray, list[tuple[int, ...]], np.ndarray]:
    """The authors' (1 + mu) rule by its definition: the workers arrived by (1 + mu) x the
    first arrival, if they decode exactly (the round ends at that wait, or at the last arrival
    if everyone is in by then); else everyone, exact only if all n workers decode."""
    durations, used, exact = [], [], []
    everyone = tuple(range(code.n))
    for row in at:
        wait = (1 + mu) * row.min()
        arrived = tuple(int(i) for i in np.flatnonzero(row <= wait))
        if decodes(code, arrived):
            durations.append(min(wait, row.max()))
            used.append(arrived)
            exact.append(True)
        else:
            durations.append(row.max())
            used.append(everyone)
            exact.append(decodes(code, everyone))
    return np.array(durations), used, np.array(exact)


@pytest.mark.parametrize("name", list(CODES))
def test_the_authors_rule_equals_its_definition(name: str) -> None:
    """Found: a code whose n workers do not decode exactly (zero-column) reported every round
    of the authors' rule as exact (exact fraction 1.0; 0.0 under gctool's rule)."""
    code = _code(name)
    times = _times(np.random.default_rng(len(name)), 25, code.n, False)
    run = CodeFile(code, name).run(times, Setting(mu=0.2))
    durations, used, exact = brute_authors(code, times, 0.2)
    assert run.exact is not None
    assert np.array_equal(run.durations, durations)
    assert [tuple(int(i) for i in u) for u in run.used] == used
    assert np.array_equal(run.exact, exact), (run.exact.mean(), exact.mean())


def test_the_cases_reach_both_outcomes() -> None:
    """The corpus is not vacuous: some rounds stop before the cap, and some codes end rounds at
    the cap without decoding (an approximate design, a random code declared above its
    tolerance)."""
    early = inexact = 0
    for name in CODES:
        code = _code(name)
        times = _times(np.random.default_rng(len(name)), 25, code.n, False)
        durations, used, exact = brute_rounds(code, times)
        early += sum(len(u) < code.n - code.s for u in used)
        inexact += int((~exact).sum())
    assert early > 0 and inexact > 0


@pytest.mark.parametrize("name", list(CODES))
def test_relabelling_the_workers_changes_no_round(name: str) -> None:
    """Rows of B and the columns of the times permuted together: the same durations, the same
    exact flags and the same workers (relabelled), so every aggregate is unchanged."""
    code = _code(name)
    rng = np.random.default_rng(7)
    times = _times(rng, 25, code.n, ties=False)
    perm = rng.permutation(code.n)
    moved = GradientCode(np.asarray(code.B)[perm], code.field, code.s, scheme=code.scheme)
    a = CodeFile(code, name).run(times, Setting())
    b = CodeFile(moved, name).run(times[:, perm], Setting())
    assert np.array_equal(a.durations, b.durations)
    assert a.exact is not None and b.exact is not None and np.array_equal(a.exact, b.exact)
    assert [sorted(int(i) for i in u) for u in a.used] == [
        sorted(int(perm[i]) for i in u) for u in b.used]


@pytest.mark.parametrize(("name", "delay"), [("frc", "trace:london"),
                                             ("cyclic-real", "trace:sydney"),
                                             ("int-3", "trace:canada"),
                                             ("cyclic-mds-gf8", "pareto:shape=2")])
def test_an_end_to_end_run_is_its_rounds(name: str, delay: str) -> None:
    """simulate() on the shipped traces (and a heavy tail): the row's mean, percentiles and
    exact fraction are those of the brute-force rounds on the run's own arrival times, and a
    code that verifies at its s never reports an inexact round."""
    code = _code(name)
    seed, iterations = 11, 60
    report = simulate([(name, code)], parse_delay(delay), iterations=iterations, seed=seed,
                      baselines=False)
    model = parse_delay(delay).for_codes([(name, code)])
    draws = model.draws(iterations, code.n, np.random.default_rng(seed))
    times = model.times(draws, CodeFile(code, name).loads)
    durations, _, exact = brute_rounds(code, times)
    row = report.rows[0]
    assert row["name"] == name and row["s"] == code.s
    assert row["mean"]["value"] == pytest.approx(durations.mean(), rel=1e-12)
    assert row["percentiles"] == pytest.approx(
        np.quantile(durations, np.linspace(0, 1, 101)).tolist(), rel=1e-12)
    assert row["exact_fraction"] == pytest.approx(exact.mean())
    if verify(code, code.s).ok:
        assert row["exact_fraction"] == 1.0
    assert report.ok and not report.exact  # Monte Carlo: estimates, never a proof


def test_the_same_seed_gives_the_same_run() -> None:
    """Traces, baselines and training drawn from the seed: the same seed, the same document."""
    code = _code("cyclic-real")
    runs = [simulate([("c", code)], parse_delay("trace:london"), iterations=40, seed=seed,
                     train="lsq").to_dict() for seed in (3, 3, 4)]
    assert runs[0] == runs[1]
    assert runs[0]["rows"][0]["mean"] != runs[2]["rows"][0]["mean"]
    assert runs[0]["training"] != runs[2]["training"]
