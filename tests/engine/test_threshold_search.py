"""The one threshold search (:class:`gctool.engine.sweep.ExceedSearch`): against brute force
over every straggler set, and the same answer from each of its users (``attack --threshold
--method exhaustive``, ``bound``'s exact threshold, ``kron``'s factor thresholds)."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from math import comb
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from gctool.algebra.fields import parse_field
from gctool.audit.attack import threshold
from gctool.bounds import bounds
from gctool.bounds.approx import exact_threshold
from gctool.cli.main import cli
from gctool.codes import design
from gctool.engine.enumeration import unrank_lex
from gctool.engine.sweep import ExceedSearch, SizePlan, lex_plan, rank_tasks
from gctool.errors import SearchInterrupted
from gctool.io import write_code
from gctool.model import GradientCode

from jsondoc import loads
from oracles import decodes_gf, lstsq_error, random_sparse_b

# -- the search itself, on a synthetic value with exact ties --------------------------------
N = 9
WEIGHT = np.array([0.3, 1.0, 0.2, 0.9, 0.5, 0.1, 0.8, 0.4, 0.8])


class Total:
    """The value of a set: the sum of its members' weights, rounded (exact ties)."""

    def errors(self, sets: np.ndarray) -> np.ndarray:
        return np.round(WEIGHT[sets].sum(axis=1), 6)


def brute_first(limit: float, n: int = N) -> tuple[int | None, list[int] | None, int]:
    """(size, first set in lexicographic order over ``limit``, sets checked up to it)."""
    checked = 0
    for t in range(n + 1):
        for S in itertools.combinations(range(n), t):
            checked += 1
            if round(float(WEIGHT[list(S)].sum()), 6) > limit:
                return t, list(S), checked
    return None, None, checked


@pytest.mark.parametrize("limit", [-1.0, 0.0, 0.95, 1.0, 1.75, 2.5, 4.0, 5.0, 6.0])
@pytest.mark.parametrize("chunk", [1, 4, 1000])
def test_first_set_over_the_limit_is_brute_forces(limit: float, chunk: int) -> None:
    size, witness, checked = brute_first(limit)
    found = ExceedSearch(N, Total(), limit, lex_plan(N, lambda s: chunk)).run()
    assert (found.size, found.stragglers, found.complete) == (size, witness, True)
    assert found.checked == checked and found.total == 2**N
    assert found.lower == (size if size is not None else N + 1)
    if size is not None:
        assert found.error == pytest.approx(float(WEIGHT[witness].sum()))
        assert found.error > limit


def test_processes_give_the_same_witness() -> None:
    def plan(s: int) -> SizePlan:
        return SizePlan(lex_plan(N, lambda _: 3)(s).source, rank_tasks(comb(N, s), 3), jobs=2)

    for limit in (1.0, 2.5, 4.0):
        one = ExceedSearch(N, Total(), limit, lex_plan(N, lambda s: 3)).run()
        two = ExceedSearch(N, Total(), limit, plan).run()
        assert (two.size, two.stragglers, two.error, two.checked) == (
            one.size, one.stragglers, one.error, one.checked)


def test_budget_stops_the_search_incomplete_before_the_size() -> None:
    asked: list[tuple[int, int, int]] = []

    def budget(s: int, used: int, need: int) -> str | None:
        asked.append((s, used, need))
        return f"no room for size {s}" if used + need > 50 else None

    found = ExceedSearch(N, Total(), 4.0, lex_plan(N, lambda s: 7), budget=budget).run()
    assert asked == [(0, 0, 1), (1, 1, 9), (2, 10, 36), (3, 46, 84)]
    assert (found.size, found.stragglers, found.complete) == (None, None, False)
    assert (found.lower, found.checked, found.refusal) == (3, 46, "no room for size 3")
    # the threshold at 4.0 is at size 5, so a budget reaching it finds brute force's witness
    roomy = ExceedSearch(N, Total(), 4.0, lex_plan(N, lambda s: 7),
                         budget=lambda s, used, need: None).run()
    assert (roomy.size, roomy.stragglers) == brute_first(4.0)[:2]


def test_top_caps_the_sizes_and_count_sets_the_total() -> None:
    found = ExceedSearch(N, Total(), 4.0, lex_plan(N, lambda s: 5), top=3).run()
    assert (found.size, found.complete, found.lower) == (None, True, 4)
    assert found.checked == found.total == sum(comb(N, t) for t in range(4))
    counted = ExceedSearch(N, Total(), 4.0, lex_plan(N, lambda s: 5), top=2,
                           count=lambda s: 10 * s).run()
    assert counted.total == 0 + 10 + 20


def test_progress_after_every_task_and_the_interrupt_summary() -> None:
    seen: list[tuple[int, int, int]] = []
    search = ExceedSearch(N, Total(), 2.5, lex_plan(N, lambda s: 10),
                          progress=lambda x: seen.append((x.checked, x.evaluated, x.total)))
    found = search.run()
    assert seen[-1][0] == found.checked and all(t == 2**N for _, _, t in seen)
    assert [c for c, _, _ in seen] == sorted(c for c, _, _ in seen)
    assert seen[-1][1] >= found.checked  # the last task is evaluated whole

    class Stops(Total):
        def errors(self, sets: np.ndarray) -> np.ndarray:
            if sets.shape[1] == 3:
                raise KeyboardInterrupt
            return super().errors(sets)

    with pytest.raises(SearchInterrupted, match=r"^bound's search interrupted after checking "
                       r"46 straggler sets; no verdict$"):
        ExceedSearch(N, Stops(), 9.0, lex_plan(N, lambda s: 10), name="bound's search").run()


def test_the_plan_decides_the_rank_order_of_the_witness() -> None:
    """A plan enumerating the sets of each size in reverse gives the first over the limit in
    that order: the tie rule is the plan's order, whatever the chunks."""

    class Reversed:
        n = N
        dense = True  # one set per rank

        def __init__(self, s: int) -> None:
            self.s = s

        def sets(self, task: tuple[int, int, int]) -> tuple[np.ndarray, np.ndarray]:
            _, a, b = task
            ranks = comb(N, self.s) - 1 - np.arange(a, b)
            S = (unrank_lex(N, self.s, ranks) if self.s else np.zeros((1, 0), dtype=np.intp))
            return S, np.ones(S.shape[0], dtype=np.int64)

    def plan(s: int) -> SizePlan:
        return SizePlan(Reversed(s), rank_tasks(comb(N, s), 4))

    found = ExceedSearch(N, Total(), 2.5, plan).run()
    size = brute_first(2.5)[0]
    last = [list(S) for S in itertools.combinations(range(N), size)
            if round(float(WEIGHT[list(S)].sum()), 6) > 2.5][-1]
    assert (found.size, found.stragglers) == (size, last)


# -- codes: brute force over every straggler set ----------------------------------------------
#: an error within this of epsilon is a tie (not above it); errors must stay clear of the band
#: between TIE and CLEAR, where the decision would depend on the tolerance rule
TIE, CLEAR = 1e-9, 1e-6


def brute_threshold(code: GradientCode, eps: float) -> tuple[int | None, list[int] | None]:
    """(T_eps, the first set of that size in lexicographic order whose error exceeds eps),
    by numpy lstsq over R or galois ranks over GF(q), one straggler set at a time."""
    B, n = np.asarray(code.B), code.n
    fails: Callable[[tuple[int, ...]], bool]
    if code.field.is_finite:
        GF = code.field.galois()

        def fails(F: tuple[int, ...]) -> bool:
            return not decodes_gf(GF, B, F)
    else:
        def fails(F: tuple[int, ...]) -> bool:
            gap = lstsq_error(B, F) - eps
            assert not TIE < abs(gap) <= CLEAR, (F, gap)
            return gap > CLEAR

    for t in range(n + 1):
        for S in itertools.combinations(range(n), t):
            if fails(tuple(i for i in range(n) if i not in S)):
                return t, list(S)
    return None, None


def _sparse() -> GradientCode:
    return GradientCode(random_sparse_b(3, 8, 6, 3), parse_field("real"), 1)


FACTORS: dict[str, Callable[[], tuple[GradientCode, GradientCode]]] = {
    "kron-real": lambda: (design("frc", n=4, s=1), design("cyclic", n=3, s=1, seed=2)),
    "kron-gf5": lambda: (design("frc", n=2, s=1, field="gf(5)"),
                         design("frc", n=4, s=1, field="gf(5)")),
}
CODES: dict[str, Callable[[], GradientCode]] = {
    "cyclic-real": lambda: design("cyclic", n=7, s=2, seed=1),
    "cyclic-gf8": lambda: design("cyclic", n=7, s=2, field="gf(8)", seed=1),
    "cyclic-mds": lambda: design("cyclic-mds", n=7, s=2),
    "frc": lambda: design("frc", n=6, s=1),
    "random-sparse": _sparse,
    "bibd-fano": lambda: design("bibd", design="fano"),
    "expander-petersen": lambda: design("expander", graph="petersen", seed=0),
    "bgc": lambda: design("bgc", n=8, k=8, s=2, seed=3),
    **{name: (lambda pair=pair: design("kron", file1=pair()[0], file2=pair()[1]))
       for name, pair in FACTORS.items()},
}
#: error levels: 0 (exact recovery), and for approximate designs levels between their errors
#: and at the exact tie 1 (a fully straggled 0/1 partition)
LEVELS = {"bibd-fano": (0.0, 0.5, 1.0, 1.5), "expander-petersen": (0.0, 0.5, 1.0, 1.5),
          "bgc": (0.0, 1.0, 2.5), "frc": (0.0, 1.0, 1.5), "random-sparse": (0.0, 0.3)}
CASES = [(name, eps) for name in CODES for eps in LEVELS.get(name, (0.0,))]


@pytest.fixture(scope="module")
def codes() -> dict[str, GradientCode]:
    return {name: make() for name, make in CODES.items()}


@pytest.mark.parametrize("name, eps", CASES)
def test_every_user_of_the_search_agrees_with_brute_force(
        codes: dict[str, GradientCode], name: str, eps: float) -> None:
    code = codes[name]
    truth, witness = brute_threshold(code, eps)
    for symmetry in (False, True):  # orbit representatives keep the lexicographic witness
        r = threshold(code, eps, method="exhaustive", symmetry=symmetry)
        assert (r.threshold, r.stragglers, r.exact) == (truth, witness, True), symmetry
        assert r.threshold_lower == (truth if truth is not None else code.n + 1)
    assert exact_threshold(code, eps) == (truth, True)
    assert exact_threshold(code, eps, budget=code.n) == (None, False)
    if code.field.is_finite:
        return
    rows = {b.name: b for b in bounds(code, s=min(code.s, code.n - 1), epsilon=eps).bounds}
    actual = rows["threshold_ub"].actual if "threshold_ub" in rows else None
    assert actual == (None if truth is None else float(truth))


@pytest.mark.parametrize("name", list(FACTORS))
def test_kron_records_and_bounds_with_the_same_search(codes: dict[str, GradientCode],
                                                      name: str) -> None:
    prod = codes[name]
    recorded = [brute_threshold(f, 0.0)[0] for f in FACTORS[name]()]
    assert prod.params["factor_thresholds"] == recorded
    row = next(b for b in bounds(prod, s=prod.s).bounds if b.name == "kron_threshold")
    truth = brute_threshold(prod, 0.0)[0]
    assert row.value == recorded[0] * recorded[1] == row.actual == truth


@pytest.mark.parametrize("name, eps", [("bibd-fano", 1.0), ("cyclic-gf8", 0.0),
                                       ("random-sparse", 0.3)])
def test_the_cli_threshold_is_the_search(codes: dict[str, GradientCode], name: str, eps: float,
                                         tmp_path: Path) -> None:
    path = str(tmp_path / "code.json")
    write_code(codes[name], path)
    res = CliRunner().invoke(cli, ["attack", path, "--threshold", "--epsilon", str(eps),
                                   "--method", "exhaustive", "--json"],
                           catch_exceptions=False)
    assert res.exit_code in (0, 1), res.output
    doc = loads(res.stdout)
    assert [doc["threshold"], doc["stragglers"]] == list(brute_threshold(codes[name], eps))


def test_sizes_in_threads_run_as_one_pool(monkeypatch: pytest.MonkeyPatch) -> None:
    """When sizes run in threads (gctool.engine.threads.run_threads), each size and the next
    are started ahead, the next behind it (threads.Ahead(after=...): its threads take over as
    the size before has no task left), once the budget has admitted it; the witness, counts
    and budget questions are those of one job, and a size the budget refuses never starts."""
    from gctool.engine import threads
    from gctool.engine.threads import run_threads

    started: list[tuple[int, bool]] = []
    real = threads.Ahead.__init__

    def spy(self: object, worker: object, tasks: list[object], jobs: int,
            after: object = None) -> None:
        started.append((worker.source.s, after is not None))  # type: ignore[attr-defined]
        real(self, worker, tasks, jobs, after)  # type: ignore[arg-type]

    monkeypatch.setattr(threads.Ahead, "__init__", spy)

    def plan(s: int) -> SizePlan:
        one = lex_plan(N, lambda _: 3)(s)
        return SizePlan(one.source, one.tasks, 2, run_threads if s >= 2 else None)

    for limit in (2.5, 4.0, 9.0):
        asked: list[list[tuple[int, int, int]]] = [[], []]
        runs = []
        for way, (p, ahead) in enumerate([(lex_plan(N, lambda _: 3), None),
                                          (plan, lambda t: (plan(t), Total()))]):
            def budget(s: int, used: int, need: int,
                       mine: list[tuple[int, int, int]] = asked[way]) -> str | None:
                mine.append((s, used, need))
                return "no room" if s >= 6 else None

            started.clear()
            runs.append(ExceedSearch(N, Total(), limit, p, budget=budget, ahead=ahead).run())
        one, two = runs
        assert (two.size, two.stragglers, two.error, two.checked, two.complete, two.lower) == (
            one.size, one.stragglers, one.error, one.checked, one.complete, one.lower)
        # the same questions, and at most the next size's before the size that finds the
        # witness (asked as if none did: the answer is not used)
        assert asked[1][:len(asked[0])] == asked[0] and len(asked[1]) <= len(asked[0]) + 1
        sizes = [s for s, _ in started]
        assert all(s <= 5 for s in sizes)  # size 6 is refused: never started
        assert sizes == sorted(set(sizes)) and min(sizes) == 2
        assert any(behind for _, behind in started)  # a size started behind the one before
