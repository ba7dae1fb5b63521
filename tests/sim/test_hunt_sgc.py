"""Hunt for wrong results in the sequential schedules (SR-SGC, M-SGC) against an independent
reference written here from the definitions (reference §5.2 and the authors' simulator's rules,
[KEK23; C: mamaj/Sequential-Gradient-Coding-2, ``selective_repeat_sgc.py``,
``multiplexed_sgc.py``]):

* the (B, W, λ)-bursty model in its interval form: every window of W consecutive rounds has at
  most λ distinct stragglers, and each worker's straggling rounds inside it span fewer than B
  rounds from first to last;
* SR-SGC: every round each worker runs its row of the per-round (n, s)-GC for the new job; if
  job d = r - B was delivered by n - v < n - s workers, the v - s lowest-indexed workers among
  those that missed it redo it in round r; job d decodes when the distinct workers that
  delivered it (rounds d and d + B) decode the per-round code;
* M-SGC: slot m of round r belongs to job r - m; slots m < W - 1 run D1, later slots run the
  worker's D2 group m - (W - 1) if it already delivered its W - 1 D1 mini-tasks of that job,
  else D1 again; job j is due at the end of round j + W - 2 + B and decodes when every worker
  delivered its W - 1 D1 mini-tasks and every D2 group's deliverers decode the (n, λ)-GC of
  the *file* (no D2 when the file's λ = n);
* decodability of a set of rows: exact rational elimination for 0/1 codes (FRC), least squares
  with a residual below 1e-7 for real cyclic codes (their entries are floats).

Tolerance is decided by the reference's own breadth-first search over admissible patterns
(patterns leaving the reference in the same bookkeeping with the same last W - 1 straggler sets
are merged, so it closes over every length), written against the reference classes here and
compared with ``gctool verify``'s verdict and shortest counterexample.
"""

from __future__ import annotations

import itertools
import json
import random
from fractions import Fraction
from math import ceil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import gctool
from gctool.codes import design
from gctool.model import GradientCode
from gctool.request import VerifyRequest
from gctool.sequential.schedule import gc_decodes, realise, scheme_of
from gctool.sim.contenders.base import Setting
from gctool.sim.contenders.schedule import Schedule
from gctool.sim.network import Link

from helpers import run


# -- the independent reference -------------------------------------------------------------------
def admissible(pattern: list[frozenset[int]], B: int, W: int, lam: int) -> bool:
    """Interval form of the (B, W, λ) model, windows ending at every round (rounds before 0
    have no stragglers)."""
    for end in range(len(pattern)):
        window = range(max(0, end - W + 1), end + 1)
        who = set().union(*(pattern[r] for r in window))
        if len(who) > lam:
            return False
        for i in who:
            hit = [r for r in window if i in pattern[r]]
            if hit[-1] - hit[0] >= B:
                return False
    return True


def exact_rank_decodes(rows: np.ndarray) -> bool:
    """Whether the all-ones vector is in the row span (exact, rational entries)."""
    if len(rows) == 0:
        return False
    k = rows.shape[1]
    M = [[Fraction(x) for x in row] for row in rows]
    aug = [row + [Fraction(1)] for row in (list(col) for col in zip(*M, strict=True))]
    # solve rows^T a = 1 (k equations, len(rows) unknowns) by elimination on [rows^T | 1]
    r, cols = 0, len(rows)
    for c in range(cols):
        piv = next((i for i in range(r, k) if aug[i][c] != 0), None)
        if piv is None:
            continue
        aug[r], aug[piv] = aug[piv], aug[r]
        for i in range(k):
            if i != r and aug[i][c] != 0:
                f = aug[i][c] / aug[r][c]
                aug[i] = [a - f * b for a, b in zip(aug[i], aug[r], strict=True)]
        r += 1
    return all(aug[i][cols] == 0 for i in range(r, k))


def float_decodes(rows: np.ndarray) -> bool:
    if len(rows) == 0:
        return False
    a, *_ = np.linalg.lstsq(rows.T, np.ones(rows.shape[1]), rcond=None)
    return bool(np.linalg.norm(rows.T @ a - 1.0) < 1e-7)


class Decodes:
    """Decodability of a set of workers by a code's matrix (cached)."""

    def __init__(self, Bmat: np.ndarray) -> None:
        self.B = np.asarray(Bmat, dtype=np.float64)
        self.exact = bool(np.all(np.isin(self.B, (0.0, 1.0))))
        self.cache: dict[frozenset[int], bool] = {}

    def __call__(self, workers: frozenset[int]) -> bool:
        hit = self.cache.get(workers)
        if hit is None:
            rows = self.B[sorted(workers)]
            hit = exact_rank_decodes(rows) if self.exact else float_decodes(rows)
            self.cache[workers] = hit
        return hit


class RefSRSGC:
    """SR-SGC replayed by the reference rules; ``step`` returns (due job, decoded) or None."""

    def __init__(self, n: int, B: int, s: int, decodes: Decodes, selection: str = "lowest"
                 ) -> None:
        self.n, self.B, self.s, self.decodes, self.sel = n, B, s, decodes, selection
        self.got: dict[int, set[int]] = {}
        self.pattern: list[frozenset[int]] = []
        self.tasks: list[list[int]] = []

    def copy(self) -> RefSRSGC:
        out = RefSRSGC(self.n, self.B, self.s, self.decodes, self.sel)
        out.got = {j: set(w) for j, w in self.got.items()}
        out.pattern, out.tasks = list(self.pattern), list(self.tasks)
        return out

    def key(self) -> Any:
        """What the future depends on: the deliverers of the jobs in flight and the last
        W - 1 straggler sets (the caller adds those)."""
        r = len(self.pattern)
        return tuple(frozenset(self.got[j]) if j >= 0 else None for j in range(r - self.B, r))

    def step(self, S: frozenset[int]) -> tuple[int, bool] | None:
        r, n = len(self.pattern), self.n
        run = [r] * n
        d = r - self.B
        if d >= 0:
            missed = [i for i in range(n) if i not in self.got[d]]
            if len(missed) > self.s:
                if self.sel == "stragglers-first":
                    missed.sort(key=lambda i: (i not in self.pattern[d], i))
                for i in missed[: len(missed) - self.s]:
                    run[i] = d
        self.got[r] = set()
        for i in range(n):
            if i not in S:
                self.got[run[i]].add(i)
        self.pattern.append(S)
        self.tasks.append(run)
        if d < 0:
            return None
        return d, self.decodes(frozenset(self.got.pop(d)))


class RefMSGC:
    """M-SGC replayed by the reference rules (``d2``: the file has D2 groups, λ < n)."""

    def __init__(self, n: int, B: int, W: int, d2: bool, decodes: Decodes) -> None:
        self.n, self.B, self.W, self.d2, self.decodes = n, B, W, d2, decodes
        self.D1, self.slots, self.T = W - 1, W - 1 + B, W - 2 + B
        self.count: dict[int, list[int]] = {}
        self.groups: dict[int, list[set[int]]] = {}
        self.rounds = 0

    def copy(self) -> RefMSGC:
        out = RefMSGC(self.n, self.B, self.W, self.d2, self.decodes)
        out.count = {j: list(c) for j, c in self.count.items()}
        out.groups = {j: [set(g) for g in gs] for j, gs in self.groups.items()}
        out.rounds = self.rounds
        return out

    def key(self) -> Any:
        r = self.rounds
        return tuple((tuple(self.count[j]), tuple(frozenset(g) for g in self.groups[j]))
                     if j >= 0 else None for j in range(r - self.T, r))

    def plan(self) -> list[list[tuple[int, str, int] | None]]:
        """(job, part, index) of every worker's slots in the next round."""
        r = self.rounds
        out = []
        for i in range(self.n):
            row: list[tuple[int, str, int] | None] = []
            for m in range(self.slots):
                j = r - m
                if j < 0:
                    row.append(None)
                    continue
                c = self.count.get(j, [0] * self.n)[i]
                row.append((j, "d1", c) if m < self.D1 or c < self.D1 else (j, "d2", m - self.D1))
            out.append(row)
        return out

    def step(self, S: frozenset[int]) -> tuple[int, bool] | None:
        r = self.rounds
        plan = self.plan()
        self.count[r] = [0] * self.n
        self.groups[r] = [set() for _ in range(self.B)]
        for i in range(self.n):
            if i in S:
                continue
            for task in plan[i]:
                if task is None:
                    continue
                j, part, idx = task
                if part == "d1":
                    self.count[j][i] += 1
                else:
                    self.groups[j][idx].add(i)
        self.rounds += 1
        j = r - self.T
        if j < 0:
            return None
        counts, groups = self.count.pop(j), self.groups.pop(j)
        ok = min(counts) >= self.D1 and (not self.d2 or all(
            self.decodes(frozenset(g)) for g in groups))
        return j, ok


def shortest_failure(make: Any, n: int, B: int, W: int, lam: int, horizon: int | None = None
                     ) -> tuple[list[frozenset[int]] | None, int]:
    """Breadth-first search over every admissible pattern, merging patterns that leave the
    reference in the same state with the same last W - 1 straggler sets (its future depends on
    nothing else): a shortest pattern that makes a job miss its deadline (None: none, over
    every length unless ``horizon`` stops it), and the transitions tried."""
    subsets = [frozenset(c) for k in range(lam + 1) for c in itertools.combinations(range(n), k)]
    start = make()
    seen: set[tuple[Any, tuple[frozenset[int], ...]]] = {(start.key(), ())}
    frontier: list[tuple[Any, list[frozenset[int]]]] = [(start, [])]
    tried = 0
    while frontier and (horizon is None or len(frontier[0][1]) < horizon):
        nxt = []
        for sim, pattern in frontier:
            recent = pattern[-(W - 1):] if W > 1 else []
            for S in subsets:
                if not admissible(recent + [S], B, W, lam):
                    continue
                tried += 1
                child = sim.copy()
                due = child.step(S)
                if due is not None and not due[1]:
                    return pattern + [S], tried
                tail = tuple((recent + [S])[-(W - 1):]) if W > 1 else ()
                key = (child.key(), tail)
                if key not in seen:
                    seen.add(key)
                    nxt.append((child, pattern + [S]))
        frontier = nxt
    return None, tried


def ref_sr(code: Any, lam: int | None = None, selection: str | None = None) -> RefSRSGC:
    p = code.params
    return RefSRSGC(code.n, p["burst"], code.s, Decodes(code.B),
                    selection or p.get("selection", "lowest"))


def ref_m(code: Any) -> RefMSGC:
    p = code.params
    return RefMSGC(code.n, p["burst"], p["window"], p["lambda"] < code.n, Decodes(code.B))


def masks(pattern: list[frozenset[int]]) -> list[int]:
    return [sum(1 << i for i in S) for S in pattern]


# -- the wrong verdict found: M-SGC verified against another λ --------------------------------
@pytest.mark.parametrize("design_lam,checked_lam", [(1, 4), (4, 1), (4, 2)])
def test_msgc_verify_against_other_lambda_keeps_the_files_d2(design_lam: int, checked_lam: int
                                                            ) -> None:
    """``verify -s λ'`` on an M-SGC file checks the *file's* schedule against (B, W, λ').
    Whether the file has D2 groups is the file's λ < n, not λ' < n: a λ = 1 file checked at
    λ' = n = 4 loses a whole D2 group when all four workers straggle in round 1 (and the
    report said every deadline is met), and a λ = n file (no D2) checked at a smaller λ' must
    pass (every λ'-pattern is an n-pattern, which it survives).  The reference enumerates."""
    n, B, W = 4, 1, 2
    code = design("m-sgc", n=n, seed=1, burst=B, window=W, lam=design_lam)
    rep = gctool.verify(code, checked_lam)
    bad, _ = shortest_failure(lambda: ref_m(code), n, B, W, checked_lam)
    assert rep.exact
    assert rep.ok == (bad is None)
    if bad is not None:
        assert len(rep.counterexample["pattern"]) == len(bad)


# -- tolerance at the claimed (B, W, λ) and one beyond ------------------------------------------
def _cases(seed: int, per_scheme: int) -> list[tuple[str, int, int, int, int]]:
    """Random small designs, ``per_scheme`` of each scheme (n <= 5, and the larger searches
    left out, to keep the reference's search near a second)."""
    rng = random.Random(seed)
    out: set[tuple[str, int, int, int, int]] = set()
    for scheme in ("sr-sgc", "m-sgc"):
        mine: set[tuple[str, int, int, int, int]] = set()
        while len(mine) < per_scheme:
            n, B = rng.randint(3, 5), rng.randint(1, 2)
            W = rng.randint(B + 1, 4 if scheme == "m-sgc" else 5)
            lam = rng.randint(1, n if n < 5 or B == 1 else 2)
            if scheme == "sr-sgc" and ((W - 1) % B or ceil(Fraction(B * lam, W - 1 + B)) >= n):
                continue
            if (B, W) == (2, 4) and lam > 2 or (n, B, W) == (5, 2, 5):  # slow searches
                continue
            mine.add((scheme, n, B, W, lam))
        out |= mine
    return sorted(out)


CASES = _cases(2026, 9)


@pytest.mark.parametrize("scheme,n,B,W,lam", CASES)
def test_tolerance_at_and_beyond_the_design(scheme: str, n: int, B: int, W: int, lam: int
                                            ) -> None:
    """At the design's λ gctool's exact verify says ok and the reference's search over every
    admissible pattern finds no missed deadline (the paper's claim); at λ + 1 (when <= n)
    both agree, and so they do at the first λ' whose SR-SGC formula asks for a larger s (the
    formula's s is the same for several λ, so λ + 1 is often still inside the claim).  A
    counterexample of gctool is admissible for its λ' (reference model), replays as a miss in
    the reference and is as short as the reference's shortest."""
    extra: dict[str, Any] = {}
    checks = {lam, min(lam + 1, n)}
    if scheme == "sr-sgc":
        extra["selection"] = ("lowest", "stragglers-first")[(n + W + lam) % 2]
        s = ceil(Fraction(B * lam, W - 1 + B))
        checks |= {next((x for x in range(lam + 1, n + 1)
                         if ceil(Fraction(B * x, W - 1 + B)) > s), lam)}
    code = design(scheme, n=n, seed=3, burst=B, window=W, lam=lam, **extra)
    make = (lambda: ref_sr(code)) if scheme == "sr-sgc" else (lambda: ref_m(code))
    for checked in sorted(checks):
        rep = gctool.verify(code, None if checked == lam else checked)
        assert rep.exact and rep.method == "reachable-states"
        bad, _ = shortest_failure(make, n, B, W, checked)
        if checked == lam:
            assert rep.ok and bad is None, (scheme, n, B, W, lam)
            continue
        if rep.ok:
            assert bad is None
            continue
        pattern = [frozenset(S) for S in rep.counterexample["pattern"]]
        assert admissible(pattern, B, W, checked)
        sim = make()
        dues = [sim.step(S) for S in pattern]
        assert dues[-1] == (rep.counterexample["job"], False)
        assert all(d is None or d[1] for d in dues[:-1])
        assert bad is not None and len(bad) == len(pattern)


# -- the schedule gctool realises equals the reference's, pattern by pattern -------------------
def _random_pattern(rng: random.Random, n: int, rounds: int, p: float) -> list[frozenset[int]]:
    return [frozenset(i for i in range(n) if rng.random() < p) for _ in range(rounds)]


@pytest.mark.parametrize("selection", ["lowest", "stragglers-first"])
def test_srsgc_realised_schedule_matches_reference_on_any_pattern(selection: str) -> None:
    """Any pattern, admissible or not: the tasks of every round and every deadline's verdict
    of :func:`realise` equal the reference's (120 random patterns over 6 designs)."""
    rng = random.Random(5)
    checked = 0
    for n, B, W, lam in [(4, 1, 2, 2), (5, 1, 3, 3), (5, 2, 3, 4), (6, 1, 3, 3), (6, 2, 5, 4),
                         (5, 1, 4, 4)]:
        code = design("sr-sgc", n=n, seed=2, burst=B, window=W, lam=lam, selection=selection)
        scheme = scheme_of(code, gc_decodes(code, code.s, False))
        for _ in range(20):
            pattern = _random_pattern(rng, n, 9, rng.choice([0.2, 0.4, 0.6]))
            got = realise(scheme, masks(pattern))
            ref = ref_sr(code)
            for r, S in enumerate(pattern):
                due = ref.step(S)
                assert [row[0][0] for row in got[r]["tasks"]] == ref.tasks[r]
                want = [] if due is None else [{"job": due[0], "decoded": due[1]}]
                assert got[r]["deadlines"] == want
            checked += 1
    assert checked == 120


def test_msgc_realised_schedule_matches_reference_on_any_pattern() -> None:
    """Same for M-SGC: every slot of every worker and every verdict (120 random patterns over
    6 designs, λ = n among them)."""
    rng = random.Random(6)
    checked = 0
    for n, B, W, lam in [(4, 1, 2, 2), (5, 1, 3, 3), (5, 2, 3, 2), (4, 2, 4, 4), (6, 1, 2, 3),
                         (5, 3, 4, 1)]:
        code = design("m-sgc", n=n, seed=2, burst=B, window=W, lam=lam)
        scheme = scheme_of(code, gc_decodes(code, code.s, False))
        for _ in range(20):
            pattern = _random_pattern(rng, n, 10, rng.choice([0.15, 0.3, 0.5]))
            got = realise(scheme, masks(pattern))
            ref = ref_m(code)
            for r, S in enumerate(pattern):
                plan = ref.plan()
                due = ref.step(S)
                tasks = [[None if t is None else tuple(t) for t in row]
                         for row in got[r]["tasks"]]
                assert tasks == plan
                want = [] if due is None else [{"job": due[0], "decoded": due[1]}]
                assert got[r]["deadlines"] == want
            checked += 1
    assert checked == 120


# -- formulas: load, delay and mini-task sizes recomputed ---------------------------------------
@pytest.mark.parametrize("n,B,W,lam", [(6, 1, 3, 3), (8, 2, 5, 4), (5, 1, 2, 5), (7, 3, 4, 2),
                                       (9, 2, 3, 9), (10, 1, 4, 1)])
def test_file_loads_delays_and_sizes_recomputed(n: int, B: int, W: int, lam: int) -> None:
    """SR-SGC (when B | W - 1): delay B, load (s + 1)/n with s = ceil(Bλ/(W-1+B)), every row
    of the per-round code computes s + 1 partitions (k = n).  M-SGC: delay W - 2 + B; equal
    mini-tasks α/(n(W-1)) = (1-α)(λ+1)/(nB) solved here for α; load = (W - 1 + B) mini-tasks;
    the D2 code has n - λ = any-set decodability (checked on every (n - λ)-set)."""
    if (W - 1) % B == 0:
        sr = design("sr-sgc", n=n, seed=1, burst=B, window=W, lam=lam)
        s = -(-B * lam // (W - 1 + B))
        assert sr.s == s and sr.params["delay"] == B
        assert Fraction(sr.params["load_fraction"]) == Fraction(s + 1, n)
        assert (np.count_nonzero(sr.B, axis=1) == s + 1).all()
    m = design("m-sgc", n=n, seed=1, burst=B, window=W, lam=lam)
    assert m.params["delay"] == W - 2 + B
    if lam == n:
        alpha = Fraction(1)
        size = Fraction(1, n * (W - 1))
    else:
        # alpha / (n (W-1)) = (1 - alpha)(lam + 1) / (n B)
        alpha = Fraction((lam + 1) * (W - 1), B + (lam + 1) * (W - 1))
        size = alpha / (n * (W - 1))
        assert size == (1 - alpha) * (lam + 1) / (n * B)
        dec = Decodes(m.B)
        assert all(dec(frozenset(F)) for F in itertools.combinations(range(n), n - lam))
    assert Fraction(m.params["load_fraction"]) == (W - 1 + B) * size
    assert Fraction(m.params["decoding"]["d1_fraction_exact"]) == alpha
    assert m.params["decoding"]["minitask_size"] == pytest.approx(float(size), rel=1e-15)


# -- simulate: rounds, stragglers and deadlines under both waiting rules -------------------------
def _ref_rounds(code: Any, times: np.ndarray, mu: float | None
                ) -> tuple[list[float], list[frozenset[int]], list[tuple[int, int, bool]]]:
    """The reference's rounds on arrival times: gctool's rule ends a round at the
    earliest arrival (at least one) after which the late workers keep the pattern admissible;
    the authors' at (1 + mu) x the first arrival when the late workers keep it admissible (at
    the last arrival if that is earlier), else at the last arrival with nobody late."""
    p = code.params
    B, W, lam = p["burst"], p["window"], p["lambda"]
    sim = ref_sr(code) if code.scheme == "sr-sgc" else ref_m(code)
    pattern: list[frozenset[int]] = []
    durations, jobs = [], []
    n = code.n
    for r, row in enumerate(times):
        if mu is None:
            order = sorted(range(n), key=lambda i: (row[i], i))
            for q in range(1, n + 1):
                late = frozenset(order[q:])
                if admissible(pattern + [late], B, W, lam):
                    break
            dur = float(row[order[q - 1]])
        else:
            wait = float(row.min()) * (1 + mu)
            late = frozenset(i for i in range(n) if row[i] > wait)
            if admissible(pattern + [late], B, W, lam):
                dur = min(wait, float(row.max()))
            else:
                late, dur = frozenset(), float(row.max())
        pattern.append(late)
        durations.append(dur)
        due = sim.step(late)
        if due is not None:
            jobs.append((due[0], r, due[1]))
    return durations, pattern, jobs


SIM_FILES = [("sr-sgc", 5, 1, 3, 3), ("sr-sgc", 6, 2, 5, 4), ("m-sgc", 5, 1, 3, 2),
             ("m-sgc", 4, 2, 3, 4), ("m-sgc", 6, 1, 2, 3), ("sr-sgc", 6, 1, 2, 2)]


def _serial(row: np.ndarray, link: Link, size: float) -> np.ndarray:
    """Arrival times at the master of messages of ``size`` vectors ready at ``row``: taken one
    after another in the order they are ready (ties by worker)."""
    out = np.empty(len(row))
    last = -np.inf
    for i in sorted(range(len(row)), key=lambda i: (row[i], i)):
        last = max(last, row[i] + link.latency) + size / link.bandwidth
        out[i] = last
    return out


def _contender_matches_reference(code: GradientCode, times: np.ndarray, mu: float | None,
                                 link: Link | None) -> list[tuple[int, int, bool]]:
    """Run the Schedule contender and the reference on ``times`` (serial arrivals over
    ``link``: one vector a message for SR-SGC, T + 1 for M-SGC): the same round durations,
    stragglers and jobs, and no deadline miss; the reference's jobs."""
    run = Schedule(code, "x").run(times, Setting(mu=mu, link=link))
    if link is not None:
        size = code.params["delay"] + 1 if code.scheme == "m-sgc" else 1
        times = np.array([_serial(row, link, size) for row in times])
    durations, pattern, jobs = _ref_rounds(code, times, mu)
    np.testing.assert_allclose(run.durations, durations, rtol=1e-13, atol=0)
    assert [frozenset(range(code.n)) - frozenset(int(i) for i in u) for u in run.used] == pattern
    assert [(j, r, ok) for j, r, ok, _ in run.jobs] == jobs
    assert run.deadline_misses == 0
    return jobs


@pytest.mark.parametrize("scheme,n,B,W,lam", SIM_FILES)
@pytest.mark.parametrize("mu", [None, 0.3])
@pytest.mark.parametrize("link", [None, Link(0.05, 10.0)])
def test_schedule_contender_matches_reference_rounds(scheme: str, n: int, B: int, W: int,
                                                    lam: int, mu: float | None,
                                                    link: Link | None) -> None:
    """The Schedule contender on heavy-tailed compute times (ties included) ends every round
    when the reference does, uses the workers the reference uses, reports the same jobs with
    the same verdicts and no deadline miss (the schedule is verified).  With a link a worker's
    message is one vector (SR-SGC) or one per slot, T + 1 (M-SGC), and arrivals are serial."""
    code = design(scheme, n=n, seed=4, burst=B, window=W, lam=lam)
    rng = np.random.default_rng(n * 100 + B * 10 + W)
    times = 1.0 + rng.pareto(1.5, size=(60, n))
    times[::7, 0] = times[::7, 1]  # ties between workers 0 and 1
    jobs = _contender_matches_reference(code, times, mu, link)
    assert all(ok for _, _, ok in jobs)
    assert len(jobs) == len(times) - code.params["delay"]


def test_schedule_contender_matches_reference_on_random_designs() -> None:
    """24 random designs (n 3..8, B 1..3, W up to 5, every λ; SR-SGC where B | W - 1), 25
    rounds each of exponential or pareto times under a random rule and link: the same rounds,
    stragglers and verdicts as the reference, and no deadline miss."""
    rng = random.Random(17)
    done = 0
    while done < 24:
        scheme = ("sr-sgc", "m-sgc")[done % 2]
        n, B = rng.randint(3, 8), rng.randint(1, 3)
        W = rng.randint(B + 1, 5)
        lam = rng.randint(1, n)
        if scheme == "sr-sgc" and ((W - 1) % B or ceil(Fraction(B * lam, W - 1 + B)) >= n):
            continue
        code = design(scheme, n=n, seed=done, burst=B, window=W, lam=lam)
        gen = np.random.default_rng(done)
        times = (1.0 + gen.pareto(1.3, size=(25, n)) if done % 3 else
                 0.5 + gen.exponential(1.0, size=(25, n)))
        mu = rng.choice([None, 0.1, 1.0])
        link = rng.choice([None, Link(0.02, 5.0)])
        _contender_matches_reference(code, times, mu, link)
        done += 1


# -- the gradient a decoded job gives in training ----------------------------------------------
@pytest.mark.parametrize("scheme,n,B,W,lam", SIM_FILES)
def test_decoded_jobs_give_the_true_gradient(scheme: str, n: int, B: int, W: int, lam: int
                                             ) -> None:
    """Every job the contender decodes, handed to the scheme's estimator, gives the full
    gradient of the problem (sum of all partitions) to 1e-9 relative."""
    from gctool.sim.problem import make_problem

    code = design(scheme, n=n, seed=4, burst=B, window=W, lam=lam)
    rng = np.random.default_rng(7)
    times = 1.0 + rng.pareto(1.5, size=(30, n))
    c = Schedule(code, "x")
    run = c.run(times, Setting())
    problem = make_problem("lsq", np.random.default_rng(1))
    est = c.estimator(problem, run, None, None, 0)
    beta = np.asarray(np.random.default_rng(2).standard_normal(problem.X.shape[1]))
    truth = problem.X.T @ problem.residual(beta) / problem.N
    steps = c.steps(run)
    assert len(steps) == len(run.jobs) > 0
    for job, _r, payload in steps:
        got = est.step(job, beta, payload, None)
        assert np.linalg.norm(got - truth) <= 1e-9 * np.linalg.norm(truth)


# -- CLI vs library, seeds, --jobs ---------------------------------------------------------------
def test_simulate_cli_equals_library_and_seed_reproduces(tmp_path: Path) -> None:
    """``gctool simulate m.json sr.json --json --seed 5`` prints the rows ``gctool.simulate``
    returns with seed 5 (the sequential rows included); the same seed twice gives the same
    document, another seed other times."""
    from gctool.sim.delays import parse_delay

    m = design("m-sgc", n=5, seed=1, burst=1, window=3, lam=2)
    sr = design("sr-sgc", n=5, seed=1, burst=1, window=3, lam=3)
    paths = []
    for name, code in (("m.json", m), ("sr.json", sr)):
        gctool.write_code(code, tmp_path / name)
        paths.append(str(tmp_path / name))
    args = ["simulate", *paths, "--delay", "pareto:shape=2", "--iterations", "40", "--json"]
    out = [run(*args, "--seed", str(s)) for s in (5, 5, 6)]
    assert [o.exit_code for o in out] == [0, 0, 0]
    docs = [json.loads(o.output) for o in out]
    lib = gctool.simulate([(path, gctool.read_code(path)) for path in paths],
                          parse_delay("pareto:shape=2"), iterations=40, seed=5).to_dict()

    def rows(doc: dict[str, Any]) -> dict[str, Any]:
        return {r["name"]: (r["mean"], r["time_per_job"], r["deadline_misses"])
                for r in doc["rows"]}

    assert rows(docs[0]) == rows(lib) == rows(docs[1])
    assert rows(docs[0]) != rows(docs[2])
    names = [r["name"] for r in docs[0]["rows"]]
    assert any("m.json" in x for x in names) and any("sr.json" in x for x in names)
    assert docs[0]["ok"] and all(r["deadline_misses"] == 0 for r in docs[0]["rows"])
    sgc = [r for r in docs[0]["rows"] if r["kind"] == "sgc"]
    assert len(sgc) >= 2
    for r in sgc:  # R rounds finish the R - T jobs due in the run
        assert r["delay"] > 0
        assert r["time_per_job"] == pytest.approx(r["mean"]["value"] * 40 / (40 - r["delay"]),
                                                  rel=1e-12)


def test_sequential_verify_is_independent_of_jobs() -> None:
    """``jobs`` only runs the per-round code's verify: the schedule verdict, its states and
    counterexample are the same with 1 and 2 processes."""
    code = design("sr-sgc", n=6, seed=1, burst=1, window=3, lam=3)
    one = gctool.verify(code, request=VerifyRequest(s=4, jobs=1)).to_dict()
    two = gctool.verify(code, request=VerifyRequest(s=4, jobs=2)).to_dict()
    for rep in (one, two):
        rep.pop("elapsed_s", None)
        if isinstance(rep.get("component"), dict):
            rep["component"] = {k: v for k, v in rep["component"].items()
                                if k not in ("elapsed_s", "jobs", "timing")}
    assert one["ok"] is False and one == two


# -- the bounded and the heuristic searches ------------------------------------------------------
#: designs checked at a λ' that some admissible pattern defeats (scheme, n, B, W, λ, λ')
FAILING = [("m-sgc", 4, 1, 2, 1, 4), ("sr-sgc", 4, 1, 3, 2, 4), ("m-sgc", 4, 2, 3, 2, 4),
           ("sr-sgc", 5, 1, 2, 2, 4)]


def _failing(case: tuple[str, int, int, int, int, int]) -> tuple[Any, Any]:
    scheme, n, B, W, lam, _ = case
    code = design(scheme, n=n, seed=3, burst=B, window=W, lam=lam)
    return code, (lambda: ref_sr(code)) if scheme == "sr-sgc" else (lambda: ref_m(code))


def _real_failure(rep: Any, make: Any, B: int, W: int, lam: int) -> int:
    """The length of ``rep``'s counterexample after checking it is admissible (reference
    model) and replays as a miss of the named job in the reference (and nothing earlier)."""
    pattern = [frozenset(S) for S in rep.counterexample["pattern"]]
    assert admissible(pattern, B, W, lam)
    sim = make()
    dues = [sim.step(S) for S in pattern]
    assert dues[-1] == (rep.counterexample["job"], False)
    assert all(d is None or d[1] for d in dues[:-1])
    return len(pattern)


@pytest.mark.parametrize("case", FAILING)
def test_horizon_verdicts_are_the_reference_s_at_every_horizon(
        case: tuple[str, int, int, int, int, int]) -> None:
    """``verify`` with a horizon H (library: exact over every admissible pattern of at most H
    rounds) fails exactly when the reference's search bounded at H finds a miss, i.e. from the
    length L of the reference's shortest failure on (checked at H = 1, L - 1, L, L + 1), with
    a counterexample of length L."""
    from gctool.sequential.verify import verify_sequential

    code, make = _failing(case)
    _, n, B, W, _, checked = case
    bad, _ = shortest_failure(make, n, B, W, checked)
    assert bad is not None
    for H in sorted({1, len(bad) - 1, len(bad), len(bad) + 1} - {0}):
        rep = verify_sequential(code, VerifyRequest(s=checked), horizon=H, per_round=False)
        bounded, _ = shortest_failure(make, n, B, W, checked, horizon=H)
        assert rep.exact and rep.ok == (bounded is None) == (H < len(bad)), (case, H)
        if rep.ok:
            assert rep.method == "horizon" and rep.horizon == H
        else:
            assert _real_failure(rep, make, B, W, checked) == len(bad)


@pytest.mark.parametrize("case", FAILING)
def test_the_heuristic_search_reports_only_real_failures(
        case: tuple[str, int, int, int, int, int]) -> None:
    """Past its transition budget ``verify`` runs seeded adversarial roll-outs (not exact):
    at the design's λ (which the reference proves safe) it must say ok; beyond it (a budget
    of one transition, so the exhaustive search cannot find the failure first) every failure
    it reports is admissible and a real miss in the reference (so the verdict is exact),
    and some seed finds one."""
    from gctool.sequential.verify import verify_sequential

    code, make = _failing(case)
    _, n, B, W, lam, checked = case
    assert shortest_failure(make, n, B, W, lam)[0] is None
    safe = verify_sequential(code, VerifyRequest(max_sets=20, seed=1), per_round=False)
    assert safe.ok and not safe.exact and safe.method == "heuristic"
    found = 0
    for seed in range(4):
        rep = verify_sequential(code, VerifyRequest(s=checked, max_sets=1, seed=seed),
                                per_round=False)
        assert rep.method == "heuristic" and rep.exact == (not rep.ok)  # a real miss proves
        if not rep.ok:
            _real_failure(rep, make, B, W, checked)
            found += 1
    assert found
