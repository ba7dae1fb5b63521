"""The compiled spectra of encoded frames (:mod:`gctool.audit.kernels.spectra`) against numpy's
route, brute force and exact rational arithmetic; the reports of the compiled walk are the same
for every ``jobs`` and chunking, and state numpy's values of the sets it picks (those of
``set_spectrum``, bit for bit)."""

from __future__ import annotations

from fractions import Fraction
from math import comb
from typing import Any

import numpy as np
import pytest

from gctool.audit.kernels.symeig import MAX_SIDE
from gctool.audit.spectrum import Frame, frame_matrix, set_spectrum, worst_spectrum
from gctool.codes import design
from gctool.engine.enumeration import unrank_lex
from gctool.numerics import EPS

from oracles import eigenvalues_below

#: frames of every route: tight (s x s Gram from S S^T: ETFs, Paley, subsampled orthogonal and
#: Hadamard) and not tight (k x k matrices: Gaussian), with (s values)
FRAMES = [
    ("steiner pg-2", lambda: design("encoded", frame="steiner", system="pg-2", s=1), (1, 3)),
    ("paley 10", lambda: design("encoded", frame="paley", workers=10, s=1), (2, 4)),
    ("orthogonal 12x5", lambda: design("encoded", frame="orthogonal", workers=12, k=5, s=1,
                                       seed=3), (2, 4)),
    ("hadamard 16x6", lambda: design("encoded", frame="hadamard", workers=16, k=6, s=1,
                                     seed=2), (3,)),
    ("gaussian 11x4", lambda: design("encoded", frame="gaussian", workers=11, k=4, s=1,
                                     seed=1), (2, 5)),
    ("gaussian 9x6", lambda: design("encoded", frame="gaussian", workers=9, k=6, s=1,
                                    seed=4), (1, 3)),
    # k x k matrices at the largest side of the walk's own loops, and one above (LAPACK's)
    ("gaussian k=MAX_SIDE", lambda: design("encoded", frame="gaussian", workers=MAX_SIDE + 3,
                                           k=MAX_SIDE, s=1, seed=5), (2,)),
    ("gaussian k=MAX_SIDE+1", lambda: design("encoded", frame="gaussian", workers=MAX_SIDE + 3,
                                             k=MAX_SIDE + 1, s=1, seed=6), (1,)),
]
CASES = [(name, make, s) for name, make, sizes in FRAMES for s in sizes]
IDS = [f"{name} s={s}" for name, _, s in CASES]


def _without_time(report: Any) -> dict[str, Any]:
    d = report.to_dict()
    d.pop("elapsed_s", None)
    return d


def _walk(code: Any, s: int) -> tuple[Frame, Any]:
    """The frame of ``code`` with the compiled walk planned for sets of size s."""
    fr = Frame.of(frame_matrix(code))
    fr.analysis.rows()
    fr.compiled = None
    from gctool.audit.kernels.spectra import FrameWalk

    fr.compiled = FrameWalk(fr.S, fr.G, fr.analysis.rows()[0], fr.c)
    return fr, fr.compiled


def _brute(fr: Frame, walk: Any, s: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(every set, its lambda_min, its lambda_max) by the compiled route one set at a time,
    normalised, in lexicographic order."""
    n, k = fr.S.shape
    sets = unrank_lex(n, s, np.arange(comb(n, s)))
    lo, hi = walk.each(sets, fr._small(s))
    norm = k / (n - s)
    return sets, lo * norm, hi * norm


@pytest.mark.parametrize("name, make, s", CASES, ids=IDS)
def test_compiled_walk_picks_the_first_extreme_sets_and_states_numpys_values(
        name: str, make: Any, s: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The report of the compiled walk names the first set in lexicographic order reaching
    each extreme of the compiled values (brute force over the same per-set route), and states
    for it numpy's values: those set_spectrum gives, bit for bit."""
    monkeypatch.setenv("GCTOOL_COMPILED", "1")
    code = make()
    rep = worst_spectrum(code, s)
    fr, walk = _walk(code, s)
    sets, lmin, lmax = _brute(fr, walk, s)
    eps = np.maximum(1 - lmin, lmax - 1)
    assert rep.stragglers == sets[int(np.argmax(eps))].tolist()
    assert rep.lambda_min_stragglers == sets[int(np.argmin(lmin))].tolist()
    assert rep.lambda_max_stragglers == sets[int(np.argmax(lmax))].tolist()
    one = set_spectrum(code, rep.stragglers)
    assert rep.epsilon == one.epsilon  # bit for bit: one route states the numbers
    assert rep.lambda_min == set_spectrum(code, rep.lambda_min_stragglers).lambda_min
    assert rep.lambda_max == set_spectrum(code, rep.lambda_max_stragglers).lambda_max
    assert rep.exact and rep.checked == comb(code.n, s)


@pytest.mark.parametrize("name, make, s", CASES, ids=IDS)
def test_compiled_and_numpy_routes_agree_within_rounding(
        name: str, make: Any, s: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Per set, the compiled extremes are within the backward-error bound of numpy's (both
    within BOUND k eps ||G|| of the exact ones); the two runs' worst epsilon agree as closely;
    numpy's route picks the first set reaching its own maximum, and states set_spectrum's
    value of it."""
    code = make()
    fr, walk = _walk(code, s)
    n, k = fr.S.shape
    sets, lmin, lmax = _brute(fr, walk, s)
    ev = fr.spectra(sets) * (k / (n - s))
    bound = 2 * BOUND * k * EPS * float(fr.analysis.ev[-1]) * k / (n - s)
    assert np.abs(lmin - ev[:, 0]).max() <= bound
    assert np.abs(lmax - ev[:, -1]).max() <= bound
    monkeypatch.setenv("GCTOOL_COMPILED", "1")
    compiled = worst_spectrum(code, s)
    monkeypatch.setenv("GCTOOL_COMPILED", "0")
    plain = worst_spectrum(code, s)
    assert abs(compiled.epsilon - plain.epsilon) <= bound
    numpy_eps = np.maximum(1 - ev[:, 0], ev[:, -1] - 1)  # numpy's batches pick ...
    assert plain.stragglers == sets[int(np.argmax(numpy_eps))].tolist()
    # ... and the report states set_spectrum's value of the pick (the Gram from the rows)
    assert plain.epsilon == set_spectrum(code, plain.stragglers).epsilon
    assert abs(plain.epsilon - numpy_eps.max()) <= bound


@pytest.mark.parametrize("name, make, s", CASES, ids=IDS)
def test_compiled_report_is_the_same_for_every_jobs_and_chunking(
        name: str, make: Any, s: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tasks of a few sets over 1, 2 and 3 threads, and of the default size: one report
    (the threads walk, the caller folds three picks per task)."""
    from gctool.audit import exhaustive

    monkeypatch.setenv("GCTOOL_COMPILED", "1")
    code = make()
    ref = _without_time(worst_spectrum(code, s))
    monkeypatch.setattr(exhaustive, "PARALLEL_MIN_SETS", 0)
    for chunk in (1, 5, 13):
        monkeypatch.setattr(Frame, "chunk", lambda self, s, chunk=chunk: chunk)
        for jobs in (1, 2, 3):
            assert _without_time(worst_spectrum(code, s, jobs=jobs)) == ref, (chunk, jobs)


def test_the_walk_runs_in_the_jobs_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    """With 2 jobs every task's spectra come from the compiled walk in one of the run's two
    threads: the caller's (one of the --jobs threads, run_threads) and one pool thread."""
    import threading

    from gctool.audit import exhaustive
    from gctool.audit.kernels.spectra import FrameWalk

    monkeypatch.setenv("GCTOOL_COMPILED", "1")
    monkeypatch.setattr(exhaustive, "PARALLEL_MIN_SETS", 0)
    monkeypatch.setattr(Frame, "chunk", lambda self, s: 8)
    where: list[str] = []
    walk, arrived = FrameWalk.walk, threading.Event()

    def spy(self: Any, *args: Any) -> Any:
        # a task waits (10 s at most, once) for the other thread's first: on a loaded machine
        # one thread could walk every task of microseconds before the other starts
        where.append(threading.current_thread().name)
        if len(set(where)) > 1 or not arrived.wait(10):
            arrived.set()
        return walk(self, *args)

    monkeypatch.setattr(FrameWalk, "walk", spy)
    numpy_route: list[int] = []
    monkeypatch.setattr(Frame, "spectra", lambda self, S, gather=True, f=Frame.spectra:
                        numpy_route.append(S.shape[0]) or f(self, S, gather))
    code = design("encoded", frame="paley", workers=14, s=2, seed=1)
    rep = worst_spectrum(code, 2, jobs=2)
    assert len(where) == comb(14, 2) // 8 + 1
    assert len(set(where)) <= 2 and set(where) - {threading.current_thread().name}
    assert numpy_route == [1, 1, 1]  # only the three picks, restated by numpy's route
    assert rep.checked == comb(14, 2)


def test_sampled_sets_take_the_compiled_route_and_match_brute_force(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A sampled audit walks its given sets (not a rank range) and picks the first sampled set
    reaching the largest epsilon; same report for any jobs."""
    from gctool.audit import exhaustive
    from gctool.engine.enumeration import sample_sets

    monkeypatch.setenv("GCTOOL_COMPILED", "1")
    code = design("encoded", frame="gaussian", workers=16, k=6, s=1, seed=1)
    rep = worst_spectrum(code, 4, sample=300, seed=5)
    fr, walk = _walk(code, 4)
    sets = sample_sets(16, 4, 300, np.random.default_rng(5))
    lo, hi = walk.each(sets, fr._small(4))
    norm = 6 / 12
    eps = np.maximum(1 - lo * norm, hi * norm - 1)
    assert rep.method == "sampled" and rep.checked == 300
    assert rep.stragglers == sets[int(np.argmax(eps))].tolist()
    assert rep.epsilon == set_spectrum(code, rep.stragglers).epsilon
    monkeypatch.setattr(exhaustive, "PARALLEL_MIN_SETS", 0)
    monkeypatch.setattr(Frame, "chunk", lambda self, s: 7)
    assert _without_time(worst_spectrum(code, 4, sample=300, seed=5, jobs=2)) == \
        _without_time(rep)


# -- exact arithmetic --------------------------------------------------------------------------
#: the stated bound: each computed extreme eigenvalue of S_F^T S_F is within BOUND k eps ||G||_2
#: of the exact one of the matrix of S's float entries (LAPACK's backward error, and the
#: rounding of the formed Gram or k x k matrix)
BOUND = 4


def _exact_gram(S: np.ndarray, F: list[int]) -> list[list[Fraction]]:
    k = S.shape[1]
    rows = [[Fraction(float(v)) for v in S[i]] for i in F]
    return [[sum((r[a] * r[b] for r in rows), Fraction(0)) for b in range(k)] for a in range(k)]


@pytest.mark.parametrize("make, s", [
    (lambda: design("encoded", frame="paley", workers=6, s=1), 2),
    (lambda: design("encoded", frame="orthogonal", workers=7, k=3, s=1, seed=2), 2),
    (lambda: design("encoded", frame="gaussian", workers=7, k=3, s=1, seed=3), 3),
    (lambda: design("encoded", frame="gaussian", workers=8, k=4, s=1, seed=1), 2),
], ids=["paley 6", "orthogonal 7x3", "gaussian 7x3", "gaussian 8x4"])
def test_compiled_extremes_are_within_the_bound_of_exact_arithmetic(make: Any, s: int) -> None:
    """Every set's compiled lambda_min and lambda_max bracket an exact eigenvalue of
    S_F^T S_F (of S's float entries, in rationals) to within BOUND k eps ||G||: no exact
    eigenvalue below lambda_min - d nor above lambda_max + d, one below lambda_min + d and one
    above lambda_max - d (rational Sturm counts).  So the walk's worst set is worst to within
    2 d exactly; the report states its numpy value, within the same bound."""
    code = make()
    S = frame_matrix(code)
    n, k = S.shape
    fr, walk = _walk(code, s)
    sets = unrank_lex(n, s, np.arange(comb(n, s)))
    lo, hi = walk.each(sets, fr._small(s))
    d = Fraction(BOUND * k * EPS * float(fr.analysis.ev[-1]))
    for St, a, b in zip(sets.tolist(), lo.tolist(), hi.tolist(), strict=True):
        F = [i for i in range(n) if i not in St]
        A = _exact_gram(S, F)
        a_, b_ = Fraction(a), Fraction(b)
        below = eigenvalues_below
        assert below(A, a_ - d) == 0 and below(A, a_ + d) >= 1, (St, "lambda_min")
        assert below(A, b_ + d) == k and below(A, b_ - d) <= k - 1, (St, "lambda_max")
    rep = worst_spectrum(code, s)
    eps = np.maximum(1 - lo * k / (n - s), hi * k / (n - s) - 1)
    assert abs(rep.epsilon - float(eps.max())) <= 2 * float(d) * k / (n - s) + 4 * EPS


def test_exact_ties_go_to_the_first_set_in_lexicographic_order(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A frame of two copies of the unit basis: every set's matrix has 0/1 entries, and the
    sets that lose a row and its copy (lambda_min 0, epsilon 1) tie exactly, bit for bit, on
    either route.  The worst set is the first of them in lexicographic order ([0, 1, 4]), on
    either route, for any jobs and chunking, and the report states set_spectrum's value."""
    from gctool.algebra.fields import parse_field
    from gctool.audit import exhaustive
    from gctool.model import GradientCode

    code = GradientCode(np.vstack([np.eye(4), np.eye(4)]), parse_field("real"), 1, "encoded")
    n, s, k = 8, 3, 4
    fr, walk = _walk(code, s)
    sets = unrank_lex(n, s, np.arange(comb(n, s)))
    lo, hi = walk.each(sets, fr._small(s))
    ev = fr.spectra(sets)
    for a, b in ((lo, hi), (ev[:, 0], ev[:, -1])):  # compiled, numpy
        eps = np.maximum(1 - a * k / (n - s), b * k / (n - s) - 1)
        top = np.flatnonzero(eps == eps.max())
        assert len(top) >= 6 and eps.max() == 1.0  # exact ties
        assert sets[top[0]].tolist() == [0, 1, 4]
    for mode in ("0", "1"):
        monkeypatch.setenv("GCTOOL_COMPILED", mode)
        ref = worst_spectrum(code, s)
        assert ref.stragglers == [0, 1, 4] and ref.epsilon == 1.0
        assert ref.epsilon == set_spectrum(code, [0, 1, 4]).epsilon
        monkeypatch.setattr(exhaustive, "PARALLEL_MIN_SETS", 0)
        for chunk in (1, 3, 10):
            monkeypatch.setattr(Frame, "chunk", lambda self, s, chunk=chunk: chunk)
            assert _without_time(worst_spectrum(code, s, jobs=2)) == _without_time(ref)
        monkeypatch.undo()


@pytest.mark.parametrize("small", [True, False], ids=["s x s", "k x k"])
def test_a_matrix_the_loops_decline_goes_to_lapack(small: bool) -> None:
    """A set whose matrix has a NaN entry is declined by the walk's own eigenvalue loops and
    handed to LAPACK (numba's eigvalsh, which refuses it): no set is dropped silently; the
    sets without the NaN row still take the loops and agree with numpy."""
    from gctool.audit.kernels.spectra import FrameWalk

    S0 = frame_matrix(design("encoded", frame="paley", workers=10, s=1))
    S = S0.copy()
    S[7, 2] = np.nan  # in the matrix of every set that contains 7, not in the others'
    walk = FrameWalk(S, S0.T @ S0, S @ S.T if small else None, 2.0)
    with pytest.raises(np.linalg.LinAlgError, match="NaN"):
        walk.each(np.array([[1, 7]]), small)
    lo, hi = walk.each(np.array([[1, 3]]), small)
    F = [i for i in range(10) if i not in (1, 3)]
    ev = np.linalg.eigvalsh(S0[F].T @ S0[F])
    assert abs(lo[0] - ev[0]) <= 1e-13 and abs(hi[0] - ev[-1]) <= 1e-13


def test_the_budget_counts_the_compiled_walk(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run that walks compiled is estimated at the walk's cost per set (walk_cost), the
    numpy route at its own; both are refused in one line above the budget."""
    from gctool.audit.kernels.spectra import walk_cost
    from gctool.budget import Budget
    from gctool.errors import BudgetExceeded

    code = design("encoded", frame="steiner", system="pg-2", s=1)
    fr = Frame.of(frame_matrix(code))
    fr.analysis.rows()
    monkeypatch.setenv("GCTOOL_COMPILED", "1")
    assert fr.will_compile(4, comb(28, 4))
    assert fr.set_work(4, True, True) == int(walk_cost(4, 7, True, True))
    monkeypatch.setenv("GCTOOL_COMPILED", "0")
    assert not fr.will_compile(4, comb(28, 4))
    monkeypatch.setenv("GCTOOL_COMPILED", "1")
    with pytest.raises(BudgetExceeded, match="max_work"):
        worst_spectrum(code, 4, budget=Budget(max_work=comb(28, 4) * 1e-7))


@pytest.mark.parametrize("k", [MAX_SIDE + 10, 100, 400])
def test_both_routes_charge_lapacks_eigenvalues_alike(k: int) -> None:
    """Above symeig's MAX_SIDE both routes take a set's k x k eigenvalues from LAPACK's
    syevd (numpy's batched eigvalsh, numba's): their charges of a set differ by the forming
    of its matrix alone, an s k^2 multiply-add count, never by an eigenproblem's k^2 or k^3
    order (an SVD's time charged on numpy's route read 2-3x high from k = 100 on, 2x low at
    k = 20, and 1.9x the walk's charge at k = 100)."""
    from gctool.audit.kernels.spectra import walk_cost
    from gctool.audit.spectrum import NUMPY_SET_NS
    from gctool.budget import eigvalsh_cost, product_cost
    from gctool.codes.frame_spectra import Analysis

    rng = np.random.default_rng(k)
    fr = Frame.of(rng.standard_normal((k + 20, k)))
    assert not fr.tight
    for s in (1, 2, 3):
        numpy, walk = fr.set_work(s, False), walk_cost(s, k, False, False)
        forming = (s + 1) * k * (k + 1)
        assert abs(numpy - walk) <= 2 * forming + NUMPY_SET_NS
        assert min(numpy, walk) >= eigvalsh_cost(k)
    # the frame's one-off analysis (its Gram's eigenvalues, gctool.codes.frame_spectra) charges
    # the same k x k eigenproblem as a set does: an SVD's share of it read 0.55x at k = 400
    gram = Analysis.work(k + 20, k, rows=False) - product_cost(k, k + 20, k)
    assert abs(fr.set_work(1, False) - gram) <= 2 * 2 * k * (k + 1) + NUMPY_SET_NS


def _seconds(code: Any, sizes: range, jobs: int = 1) -> float:
    """The calibrated estimate of walking every set of the ``sizes`` of ``code`` on ``jobs``
    (sizes of PARALLEL_MIN_SETS sets or more; the others on one), plus the run's start, in
    seconds (the analysis of the frame, a few microseconds here, aside)."""
    from gctool.audit.exhaustive import PARALLEL_MIN_SETS
    from gctool.budget import NS_PER_S, START_NS

    fr = Frame.of(frame_matrix(code))
    out = START_NS / NS_PER_S
    for s in sizes:
        sets = comb(code.n, s)
        on = jobs if sets >= PARALLEL_MIN_SETS or fr.will_compile(s, sets) else 1
        out += sets * fr.set_work(s, True, fr.will_compile(s, sets)) / NS_PER_S / on
    return out


@pytest.mark.parametrize("command", ["attack", "verify", "curve"])
def test_the_budget_divides_the_sets_by_the_jobs(tmp_path: Any, command: str) -> None:
    """A spectral audit over its budget on one job but within it on two is refused (one line
    naming --max-work, nothing written) with --jobs 1 and runs with --jobs 2: its sets' work
    is divided by the jobs that walk them, the start and the analysis are not."""
    from helpers import run
    from refusals import design_file, refused

    path = design_file(tmp_path, "f.json", "encoded", frame="steiner", system="pg-2", s=1)
    code = design("encoded", frame="steiner", system="pg-2", s=1)
    # at s = 5, C(28, 5) = 98,280 sets: above PARALLEL_MIN_SETS, on every job
    args, sizes = {"attack": (["attack", path, "-s", "5", "--method", "exhaustive"], [5]),
                   "verify": (["verify", path, "-s", "5"], [5]),
                   "curve": (["attack", path, "--curve", "--max-s", "5"], range(6))}[command]
    one, two = _seconds(code, sizes), _seconds(code, sizes, 2)
    assert two < 0.8 * one
    budget = f"{(one + two) / 2:.4f}s"
    before = sorted(tmp_path.iterdir())
    line = refused(run(*args, "--max-work", budget, "--jobs", "1"), "--max-work")
    assert "jobs" not in line
    assert sorted(tmp_path.iterdir()) == before
    ok = run(*args, "--max-work", budget, "--jobs", "2", "--json")
    assert ok.exit_code == 0, ok.stderr
    # on two jobs the refusal says so, with the time on them
    refused(run(*args, "--max-work", f"{0.8 * two:.4f}s", "--jobs", "2"), "--max-work",
            "on 2 jobs")


def test_the_library_divides_the_sets_by_the_jobs() -> None:
    """worst_spectrum and spectrum_curve: the same estimate, refused on one job, run on two
    (the report is the same as an unbudgeted run's)."""
    from gctool.audit.spectrum import spectrum_curve
    from gctool.budget import Budget
    from gctool.errors import BudgetExceeded

    code = design("encoded", frame="steiner", system="pg-2", s=1)
    budget = Budget(max_work=(_seconds(code, [5]) + _seconds(code, [5], 2)) / 2)
    for audit in (lambda jobs: worst_spectrum(code, 5, jobs=jobs, budget=budget),
                  lambda jobs: spectrum_curve(code, sizes=[5], jobs=jobs, budget=budget)):
        with pytest.raises(BudgetExceeded, match="max_work"):
            audit(1)
        audit(2)
    assert _without_time(worst_spectrum(code, 5, jobs=2, budget=budget)) == _without_time(
        worst_spectrum(code, 5))
