"""The compiled kernels (gctool.audit.kernels) against the numpy kernels they replace.

They are an optimisation: verdicts, counterexamples and exactness labels must be identical,
and diagnostics equal up to round-off.  ``GCTOOL_COMPILED=1`` forces the compiled path
whatever the size, ``0`` disables it."""

from __future__ import annotations

from math import comb
from typing import Any

import numpy as np
import pytest

from gctool.audit import nullspace as ns
from gctool.audit.chunks import summarise
from gctool.audit.kernels.real import DOUBTFUL
from gctool.audit.sweep import SweepWorker
from gctool.audit.verify import verify
from gctool.codes import design
from gctool.engine.enumeration import unrank_lex
from gctool.engine.sweep import LexSource
from gctool.model import GradientCode

from corpus import TOL, adversarial_corpus, code_of, exact_ok
from kernel_corpus import attack_codes, gf_codes, random_codes, walk_codes

CORPUS = adversarial_corpus()


def both(monkeypatch: pytest.MonkeyPatch, fn: Any, *args: Any, **kw: Any) -> tuple[Any, Any]:
    """``fn(*args, **kw)`` with the numpy kernels, then with the compiled ones."""
    monkeypatch.setenv("GCTOOL_COMPILED", "0")
    plain = fn(*args, **kw)
    monkeypatch.setenv("GCTOOL_COMPILED", "1")
    return plain, fn(*args, **kw)


def same_report(a: Any, b: Any) -> None:
    assert (a.ok, a.verdict, a.counterexample, a.exact, a.method, a.kernel, a.checked) == \
        (b.ok, b.verdict, b.counterexample, b.exact, b.method, b.kernel, b.checked)
    da, db = a.diagnostics, b.diagnostics
    for name in ("max_condition", "max_residual", "max_decoder_norm", "condition_bound"):
        x, y = getattr(da, name), getattr(db, name)
        assert (x is None) == (y is None), name
        if x is not None:
            assert x == pytest.approx(y, rel=1e-6), name
    assert da.exact_evaluations == db.exact_evaluations


@pytest.mark.parametrize("name,code,s", random_codes(), ids=[c[0] for c in random_codes()])
@pytest.mark.parametrize("method,kernel", [("auto", "auto"), ("exhaustive", "nullspace")])
def test_verify_compiled_equals_numpy(monkeypatch: pytest.MonkeyPatch, name: str,
                                      code: GradientCode, s: int, method: str,
                                      kernel: str) -> None:
    plain, fast = both(monkeypatch, verify, code, s, method=method, kernel=kernel)
    same_report(plain, fast)


@pytest.mark.parametrize("name,B,s,field", CORPUS, ids=[c[0] for c in CORPUS])
def test_adversarial_corpus_compiled(monkeypatch: pytest.MonkeyPatch, name: str, B: Any,
                                     s: int, field: str) -> None:
    code = code_of(B, s, field)
    truth = exact_ok(B, s)
    for method in ("auto", "exhaustive"):
        for t in (s, s + 1):
            plain, fast = both(monkeypatch, verify, code, t, method=method)
            same_report(plain, fast)
        assert fast.ok == truth or t != s


def _summary_fields(c: Any) -> tuple[Any, ...]:
    return (c.evaluated, c.weight, c.fail_set, c.direct, c.min_fail_err is None,
            c.max_norm and c.max_norm[1], [w[1] for w in c.weakest])


@pytest.mark.parametrize("which,tol,start,stop", [
    ("fails-mid", TOL, 0, 220), ("fails-mid", TOL, 17, 150), ("fails-mid", TOL, 100, 101),
    ("fails-mid", TOL, 119, 220), ("cyclic", 1e-23, 0, 1820), ("cyclic", 1e-23, 33, 1000)])
def test_rank_range_summary_equals_numpy_summary(monkeypatch: pytest.MonkeyPatch, which: str,
                                                 tol: float, start: int, stop: int) -> None:
    """Any rank range, including ones that start or stop mid-prefix and one holding a
    failing set (the summary is cut there), summarises like the numpy kernel's chunk; a tiny
    tolerance (large delta) sends many sets through the tighter bound and the fall-back."""
    monkeypatch.setenv("GCTOOL_COMPILED", "1")
    code = random_codes()[4][1] if which == "fails-mid" else design("cyclic", n=16, s=4, seed=3)
    n, s = code.n, code.s
    red = ns.reduce_float(code, tol)
    kernel = ns.FloatNullKernel(code, tol, red)
    kernel.chunk_size(s)
    assert kernel.compiled_screen is not None
    task = (3, start, stop)
    fast = SweepWorker(LexSource(n, s), kernel, True).run(task)
    S = unrank_lex(n, s, np.arange(start, stop))
    slow = summarise(3, S, np.ones(stop - start, dtype=np.int64), kernel.evaluate_numpy(S), True)
    assert _summary_fields(fast) == _summary_fields(slow)
    assert fast.direct > 0 or which == "fails-mid"
    assert fast.max_norm is not None and slow.max_norm is not None
    assert fast.max_norm[0] == pytest.approx(slow.max_norm[0], rel=1e-9)
    assert [w[0] for w in fast.weakest] == pytest.approx([w[0] for w in slow.weakest], rel=1e-9)





def _tol_at_quantile(code: GradientCode, s: int, q: float) -> float:
    """A tolerance whose screen threshold delta falls at quantile q of the sets' bounds
    (many sets near it: det just below, the tighter bound just above, ...).  delta scales as
    1 / sqrt(tol)."""
    S = unrank_lex(code.n, s, np.arange(comb(code.n, s)))
    tol = TOL
    for _ in range(3):
        k = ns.FloatNullKernel(code, tol, ns.reduce_float(code, tol))
        lb = k.evaluate_numpy(S).screen
        target = float(np.quantile(lb[lb > 1e-10], q))
        tol = min(1e-3, tol * (k.delta / target) ** 2)
    return tol


@pytest.mark.parametrize("name,code,s", walk_codes(), ids=[c[0] for c in walk_codes()])
@pytest.mark.parametrize("q", [None, 0.1, 0.5])
def test_walk_summary_equals_numpy_on_every_route(monkeypatch: pytest.MonkeyPatch, name: str,
                                                  code: GradientCode, s: int,
                                                  q: float | None) -> None:
    """The compiled walk's chunk summary (verdict, cut, counts, weakest sets, largest decoder
    norm) equals the numpy kernel's on every rank range tried, with the tolerance at its
    default and with delta placed among the sets' bounds (q: the fraction of sets below)."""
    monkeypatch.setenv("GCTOOL_COMPILED", "1")
    tol = TOL if q is None else _tol_at_quantile(code, s, q)
    n, total = code.n, comb(code.n, s)
    red = ns.reduce_float(code, tol)
    kernel = ns.FloatNullKernel(code, tol, red)
    kernel.chunk_size(s)
    assert kernel.compiled_screen is not None
    rng = np.random.default_rng(len(name))
    ranges = [(0, total), (1, total), (total // 3, total), (total - 1, total)]
    ranges += [tuple(sorted(rng.choice(total + 1, 2, replace=False))) for _ in range(3)]
    below = 0
    for start, stop in ranges:
        fast = SweepWorker(LexSource(n, s), kernel, True).run((1, start, stop))
        S = unrank_lex(n, s, np.arange(start, stop))
        ev = kernel.evaluate_numpy(S)
        slow = summarise(1, S, np.ones(stop - start, dtype=np.int64), ev, True)
        assert _summary_fields(fast) == _summary_fields(slow), (start, stop)
        assert (fast.min_screen is None) == (slow.min_screen is None)
        if slow.min_screen is not None:
            assert fast.min_screen == pytest.approx(slow.min_screen, rel=1e-9)
        if slow.max_norm is not None:
            assert fast.max_norm is not None
            assert fast.max_norm[0] == pytest.approx(slow.max_norm[0], rel=1e-9)
        assert [w[0] for w in fast.weakest] == pytest.approx([w[0] for w in slow.weakest],
                                                             rel=1e-9)
        below += int((ev.screen < kernel.delta).sum())
    if q is not None:  # delta among the bounds: sets the screen cannot accept
        assert below > 0


@pytest.mark.parametrize("name,code,s", walk_codes()[:3] + [random_codes()[4]],
                         ids=[c[0] for c in walk_codes()[:3] + [random_codes()[4]]])
@pytest.mark.parametrize("q", [None, 0.01, 0.5])
def test_a_chunk_summary_does_not_depend_on_where_the_chunks_are_cut(
        monkeypatch: pytest.MonkeyPatch, name: str, code: GradientCode, s: int,
        q: float | None) -> None:
    """A walked range's doubtful sets are decided by its walker (second stage, compiled
    direct decoder, numpy), so a range walked as one task and as two folded in order give
    the same summary, float for float, wherever it is cut (failing sets cut the chunk and
    are walked again up to them)."""
    from gctool.audit.chunks import Accumulator

    monkeypatch.setenv("GCTOOL_COMPILED", "1")
    tol = TOL if q is None else _tol_at_quantile(code, s, q)
    kernel = ns.FloatNullKernel(code, tol, ns.reduce_float(code, tol))
    kernel.chunk_size(s)
    total = comb(code.n, s)
    rng = np.random.default_rng(7)
    worker = SweepWorker(LexSource(code.n, s), kernel, True)
    cut = 0
    for _ in range(6):
        a, m, b = sorted(rng.choice(total + 1, 3, replace=False).tolist())
        whole, parts = Accumulator(), Accumulator()
        whole.merge(worker.run((0, a, b)))
        if not parts.merge(worker.run((0, a, m))):
            parts.merge(worker.run((1, m, b)))
        cut += whole.fail_set is not None
        for f in ("evaluated", "fail_set", "direct", "max_norm", "max_cond", "max_resid",
                  "min_fail_err", "min_screen", "weakest"):
            assert getattr(whole, f) == getattr(parts, f), (f, a, m, b)
    assert cut > 0 or name != "fails-mid"


def test_the_fold_only_merges(monkeypatch: pytest.MonkeyPatch) -> None:
    """With ``--jobs 2`` the compiled walks run in threads, which decide their doubtful sets
    themselves (a tiny tolerance leaves many to the direct decoder): the fold, in the
    caller's thread, merges summaries and never calls numpy's kernel, and the report is the
    one of ``--jobs 1``."""
    import threading

    from gctool.audit.chunks import Accumulator
    from gctool.audit.verify import enumeration

    monkeypatch.setenv("GCTOOL_COMPILED", "1")
    monkeypatch.setattr(ns, "COMPILED_CHUNK", 16)
    monkeypatch.setattr(ns, "COMPILED_PILOT", 8)
    monkeypatch.setattr(enumeration, "THREADS_MIN_S", 0.0)
    seen: list[str] = []
    folding = threading.local()
    real, merge = ns.FloatNullKernel.decide, Accumulator.merge

    def spy(self: Any, S: np.ndarray, *rest: Any) -> Any:
        assert not getattr(folding, "on", False), "the fold decided a set"
        seen.append(threading.current_thread().name)
        return real(self, S, *rest)

    def merging(self: Any, chunk: Any) -> bool:
        folding.on = True
        try:
            return merge(self, chunk)
        finally:
            folding.on = False

    monkeypatch.setattr(ns.FloatNullKernel, "decide", spy)
    monkeypatch.setattr(Accumulator, "merge", merging)
    code = design("cyclic", n=16, s=4, seed=3)
    docs = []
    for jobs in (1, 2):
        seen.clear()
        report = verify(code, 4, method="exhaustive", jobs=jobs, tol=1e-23)  # many doubtful
        assert report.ok and report.jobs == jobs
        doc = report.to_dict()
        docs.append({k: v for k, v in doc.items() if k not in ("elapsed_s", "jobs", "estimate")})
        assert len(seen) > 5
        if jobs == 2:
            assert set(seen) - {threading.main_thread().name}, "no worker thread decided"
    assert docs[0] == docs[1]


@pytest.mark.parametrize("name,code,s", walk_codes(), ids=[c[0] for c in walk_codes()])
def test_verify_on_walk_codes_equals_numpy(monkeypatch: pytest.MonkeyPatch, name: str,
                                           code: GradientCode, s: int) -> None:
    for t in (s, s + 1):
        plain, fast = both(monkeypatch, verify, code, t, method="exhaustive")
        same_report(plain, fast)


def test_screen_values_match_numpy_per_set() -> None:
    from gctool.audit.kernels.real import RealScreen

    for code, s in [(design("cyclic", n=14, s=4, seed=1), 4), (random_codes()[2][1], 2),
                    (random_codes()[3][1], 3)]:
        red = ns.reduce_float(code, TOL)
        k = ns.FloatNullKernel(code, TOL, red)
        S = unrank_lex(code.n, s, np.arange(comb(code.n, s)))
        ref = k.evaluate_numpy(S)
        lb, norm = RealScreen(red.N.T, red.W, k.row_scale, k.delta).sets(S)
        assert lb == pytest.approx(ref.screen, rel=1e-8)
        accepted = lb >= k.delta
        assert np.array_equal(accepted, ref.ok & ~ref.direct & np.isnan(ref.error))
        assert norm[accepted] == pytest.approx(ref.norm[accepted], rel=1e-8)


def test_env_var_disables_the_compiled_path(monkeypatch: pytest.MonkeyPatch) -> None:
    from gctool.audit import kernels

    code = design("cyclic", n=12, s=3, seed=2)
    red = ns.reduce_float(code, TOL)
    for value, expect in (("0", False), ("off", False), ("1", True), ("always", True)):
        monkeypatch.setenv("GCTOOL_COMPILED", value)
        k = ns.FloatNullKernel(code, TOL, red)
        k.chunk_size(3)
        assert (k.compiled_screen is not None) == expect
    monkeypatch.setenv("GCTOOL_COMPILED", "auto")
    assert kernels.wanted(10**9) and not kernels.wanted(10)


# -- finite fields ------------------------------------------------------------------------------


@pytest.mark.parametrize("name,code,s", gf_codes(), ids=[c[0] for c in gf_codes()])
def test_gf_verify_compiled_equals_numpy(monkeypatch: pytest.MonkeyPatch, name: str,
                                         code: GradientCode, s: int) -> None:
    for method, kernel in (("exhaustive", "nullspace"), ("auto", "auto")):
        for t in (s - 1, s):
            plain, fast = both(monkeypatch, verify, code, t, method=method, kernel=kernel)
            same_report(plain, fast)


@pytest.mark.parametrize("name,code,s", gf_codes()[:4], ids=[c[0] for c in gf_codes()[:4]])
def test_gf_rank_ranges_and_sets_equal_numpy(monkeypatch: pytest.MonkeyPatch, name: str,
                                             code: GradientCode, s: int) -> None:
    monkeypatch.setenv("GCTOOL_COMPILED", "0")
    red = ns.reduce_gf(code)
    S = unrank_lex(code.n, s - 1, np.arange(comb(code.n, s - 1)))
    truth = ns.GFNullKernel(code, red).evaluate(S).ok
    assert truth.any() and not truth.all()  # both verdicts occur
    monkeypatch.setenv("GCTOOL_COMPILED", "1")
    kernel = ns.GFNullKernel(code, red)
    kernel.chunk_size(s - 1)
    assert kernel.compiled_test is not None
    assert np.array_equal(kernel.evaluate(S).ok, truth)
    for start in range(0, S.shape[0], 7):  # every range start: the first failure from there
        c = SweepWorker(LexSource(code.n, s - 1), kernel, False).run((0, start, S.shape[0]))
        bad = np.flatnonzero(~truth[start:])
        assert c.fail_set == (S[start + bad[0]].tolist() if bad.size else None)
        assert c.evaluated == (bad[0] + 1 if bad.size else S.shape[0] - start)


# -- attack: the optimal decoder's error ---------------------------------------------------------


@pytest.mark.parametrize("name,code", attack_codes(), ids=[c[0] for c in attack_codes()])
def test_attack_compiled_equals_numpy(monkeypatch: pytest.MonkeyPatch, name: str,
                                      code: GradientCode) -> None:
    from gctool.audit.attack import attack, threshold

    for s in (code.s, code.s + 2):
        plain, fast = both(monkeypatch, attack, code, s, method="exhaustive", symmetry=False)
        assert (plain.stragglers, plain.exact, plain.method) == \
            (fast.stragglers, fast.exact, fast.method)
        assert fast.raw_error == pytest.approx(plain.raw_error, rel=1e-9, abs=1e-20)
    for eps in (0.0, 0.3):
        plain, fast = both(monkeypatch, threshold, code, method="exhaustive", epsilon=eps)
        assert (plain.threshold, plain.stragglers, plain.exact) == \
            (fast.threshold, fast.stragglers, fast.exact)


def test_attack_compiled_errors_match_numpy_per_set(monkeypatch: pytest.MonkeyPatch) -> None:
    from gctool.audit.oracles import OptimalOracle

    code = design("cyclic", n=12, s=3, seed=2)
    monkeypatch.setenv("GCTOOL_COMPILED", "0")
    for s in (2, 3, 5, 6):
        S = unrank_lex(12, s, np.arange(comb(12, s)))
        ref = OptimalOracle(code).errors(S)
        oracle = OptimalOracle(code)
        oracle._plan(s)
        assert oracle.compiled is not None
        err, pending, _ = oracle.compiled(S)
        assert not pending.all()
        assert err[~pending] == pytest.approx(ref[~pending], rel=1e-9, abs=1e-20)


# -- start-up -----------------------------------------------------------------------------------
def test_blas_threads_pinned_unless_set() -> None:
    from gctool._threads import BLAS_VARS, pin_blas_threads

    env: dict[str, str] = {"MKL_NUM_THREADS": "4"}
    pin_blas_threads(env)
    assert env["MKL_NUM_THREADS"] == "4"  # the user's setting wins
    assert all(env[v] == "1" for v in BLAS_VARS if v != "MKL_NUM_THREADS")
    env = {"GCTOOL_BLAS_THREADS": "2"}
    pin_blas_threads(env)
    assert {env[v] for v in BLAS_VARS} == {"2"}
    env = {"GCTOOL_BLAS_THREADS": "many"}
    pin_blas_threads(env)
    assert {env[v] for v in BLAS_VARS} == {"1"}


def test_cli_process_runs_blas_single_threaded() -> None:
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in
           ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS",
            "GCTOOL_BLAS_THREADS")}
    probe = ("import os\nfrom gctool.cli.main import main\nmain(['--help'])\n"
             "print('T=' + os.environ.get('OPENBLAS_NUM_THREADS', '-'))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env,
                         timeout=120, check=False)
    assert "T=1" in out.stdout.splitlines()


def test_attack_rank_range_walk_matches_numpy(monkeypatch: pytest.MonkeyPatch) -> None:
    """The compiled walk over a rank range (shared Cholesky factor of the first s - 1 rows
    for s <= d, per-set KKT otherwise) gives the numpy oracle's errors, from any start."""
    from gctool.audit.oracles import OptimalOracle
    from gctool.audit.oracles.kernel import OracleKernel

    monkeypatch.setenv("GCTOOL_COMPILED", "0")
    for code in (design("cyclic", n=12, s=3, seed=2), attack_codes()[1][1]):
        n = code.n
        for s in (2, 3, 5):
            total = comb(n, s)
            ref = OptimalOracle(code).errors(unrank_lex(n, s, np.arange(total)))
            oracle = OptimalOracle(code)
            assert oracle.errors_range(n, s, 0, total) is None  # not planned: numpy path
            oracle._plan(s)
            for start, stop in ((0, total), (5, total), (total - 3, total), (5, total // 2),
                                (7, 8), (1, 2 * n + 3)):  # whole prefixes and parts of one
                got = oracle.errors_range(n, s, start, stop)
                assert got is not None
                assert got == pytest.approx(ref[start:stop], rel=1e-9, abs=1e-20)
            kernel = OracleKernel.of(oracle)
            peak = kernel.peak_range((0, 4, total), n, s)
            assert peak is not None and peak.checked == total - 4
            i = 4 + int(np.argmax(ref[4:] >= peak.peaks[0][0] * (1 - 1e-9)))
            assert peak.peaks[0][1] == unrank_lex(n, s, np.array([i]))[0].tolist()
            limit = float(np.median(ref))
            over = kernel.exceed_range((0, 2, total), n, s, limit)
            bad = np.flatnonzero(ref[2:] > limit)
            assert over is not None and over.fail_set == (
                unrank_lex(n, s, np.array([2 + bad[0]]))[0].tolist() if bad.size else None)
            # the walk stops at the first set over the limit (the rest is never computed)
            assert over.evaluated == (bad[0] + 1 if bad.size else total - 2)
            first = kernel.exceed_range((0, 2, total), n, s, -1.0)
            assert first is not None and first.evaluated == 1
            assert first.fail_set == unrank_lex(n, s, np.array([2]))[0].tolist()


def test_small_verify_process_loads_no_numba_galois_or_scipy(tmp_path: Any) -> None:
    """A small run stays on the numpy kernels (auto mode decides by size), so the process
    never pays for importing numba or loading compiled kernels; nor for scipy, which only the
    refinement of a near-tolerance set needs (:func:`gctool.exactls.refined_error`)."""
    out = _verify_in_a_fresh_process(
        tmp_path, 8, 2, "", "'LOADED=' + ','.join(m for m in ('numba', 'galois', 'scipy')"
        " if m in sys.modules)")
    assert "OK: tolerates any 2 stragglers" in out.stdout
    assert out.stdout.strip().splitlines()[-1] == "LOADED="


def _verify_in_a_fresh_process(tmp_path: Any, n: int, s: int, before: str, report: str
                               ) -> Any:
    """``verify --method exhaustive`` of the seeded cyclic code (n, s) through the CLI in a
    fresh Python process (auto mode: GCTOOL_COMPILED unset), the statements ``before`` run
    first, and the expression ``report`` printed as its last line; the finished process."""
    import os
    import subprocess
    import sys

    from gctool.io import write_code

    path = tmp_path / f"c{n}.json"
    write_code(design("cyclic", n=n, s=s, seed=1), path)
    probe = (f"import sys\nfrom gctool.cli.main import main\n{before}"
             "try:\n    main(['verify', sys.argv[1], '--method', 'exhaustive'])\n"
             "except SystemExit as e:\n    code = e.code\n"
             f"print({report})")
    env = {k: v for k, v in os.environ.items() if k != "GCTOOL_COMPILED"}
    return subprocess.run([sys.executable, "-c", probe, str(path)], capture_output=True,
                          text=True, env=env, timeout=120, check=False)


def test_the_compiled_unranking_first_max_and_records_are_numpys() -> None:
    """The walks' summaries unrank their picks (:func:`gctool.compiled.walk.unrank_into`) and
    the attack walk finds its range's worst set and its tied records
    (:func:`gctool.compiled.walk.first_max`, :func:`~gctool.compiled.walk.tied_records`) in
    compiled code: the same sets and the same indices as unrank_lex and numerics' first_max
    and tied_records, on every rank kind (first, last, random, C(n, s) near 2^62) and on the
    special values (ties within TIE_RTOL, inf, -inf, nan)."""
    import itertools

    from gctool.compiled.walk import first_max, tied_records, unrank_into
    from gctool.engine.enumeration import binomials
    from gctool.limits import TIE_RTOL
    from gctool.numerics import first_max as numpy_first_max
    from gctool.numerics import tied_records as numpy_tied_records

    rng = np.random.default_rng(3)
    for n, s in ((48, 6), (64, 8), (10, 1), (5, 5), (40, 3), (64, 32), (62, 31)):
        total = comb(n, s)
        ranks = np.array([0, total - 1, total // 2, *rng.integers(0, total, 50)], np.int64)
        out = np.empty((ranks.size, s), np.int64)
        unrank_into(binomials(n, s), total, ranks, out)
        assert out.tolist() == unrank_lex(n, s, ranks).tolist(), (n, s)
    values = (0.0, 1.0, 1.0 + 1e-13, 1.0 - 1e-13, 2.0, np.inf, -np.inf, np.nan, 1e300, 5e-13)
    for size in range(1, 4):
        for row in itertools.product(values, repeat=size):
            err = np.array(row)
            assert first_max(err, TIE_RTOL) == numpy_first_max(err), row
            i = numpy_first_max(err)
            assert tied_records(err, i).tolist() == numpy_tied_records(err, i), row
    for _ in range(500):
        err = rng.choice([0.0, 1.0, 1.0 + 1e-13, 3.0, 3.0 - 2e-12], size=40) * rng.choice([1, 1e10])
        err[rng.random(40) < 0.1] = np.nan
        assert first_max(err, TIE_RTOL) == numpy_first_max(err)
        i = numpy_first_max(err)
        assert tied_records(err, i).tolist() == numpy_tied_records(err, i), err


def test_sets_singular_to_the_second_stage_are_decided_by_the_compiled_direct_decoder(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """is-cr n=18 s=5: the second stage leaves a few sets whose N[:, S] is singular in its
    floats; the compiled direct decoder decides them in the walking thread (numpy's kernel is
    never called) and the summary counts them as directly decoded."""
    from gctool.audit.chunks import ChunkSummary

    monkeypatch.setenv("GCTOOL_COMPILED", "1")
    code, s = design("is-cr", n=18, s=5), 5
    kernel = ns.FloatNullKernel(code, TOL, ns.reduce_float(code, TOL))
    kernel.chunk_size(s)
    total = comb(code.n, s)
    pend = np.zeros(total + 1, dtype=np.int64)
    npend = kernel.compiled_screen.walk(np.arange(s, dtype=np.int64), total, pend)[1]
    left = unrank_lex(code.n, s, pend[:npend])
    what, lb = kernel.compiled_screen.settle(left)[:2]
    left = left[what == DOUBTFUL]
    assert left.shape[0] > 0 and (lb[what == DOUBTFUL] == 0).any()
    ref = kernel.evaluate_numpy(left)

    def numpy(self: Any, S: np.ndarray) -> Any:
        raise AssertionError("numpy's kernel was called")

    monkeypatch.setattr(ns.FloatNullKernel, "evaluate_numpy", numpy)
    now = SweepWorker(LexSource(code.n, s), kernel, True).run((1, 0, total))
    assert isinstance(now, ChunkSummary) and now.fail_set is None
    # numpy's kernel decodes them too, some by its own witness where its floats give N[:, S]
    # a determinant of 1e-17 (the direct counts of the two routes differ on exactly singular
    # sets, never the verdict: docs/performance.md)
    assert now.direct == left.shape[0] and ref.ok.all() and ref.direct.any()


def test_a_numpy_route_verify_that_samples_its_stage_shares_loads_no_numba(tmp_path: Any
                                                                          ) -> None:
    """A run of NUMPY_SHARES_FROM sets or more on the numpy kernels samples the shares of its
    sets that go to the witness test (:meth:`FloatNullKernel.stage_shares`), at the margin of
    the compiled walk's witness test (:data:`gctool.audit.kernels.WITNESS_SHARE`), read without
    importing numba (0.3 s of CPU, which the run's estimate does not charge)."""
    from math import comb

    from gctool.audit.kernels import MIN_SETS
    from gctool.audit.nullspace import NUMPY_SHARES_FROM

    assert NUMPY_SHARES_FROM <= comb(24, 4) < MIN_SETS
    out = _verify_in_a_fresh_process(
        tmp_path, 24, 4,
        "from gctool.audit import nullspace\n"
        "calls = []\nshares = nullspace.FloatNullKernel.stage_shares\n"
        "def counted(self, s):\n    calls.append(s)\n    return shares(self, s)\n"
        "nullspace.FloatNullKernel.stage_shares = counted\n",
        "'SHARES=' + str(calls) + ' NUMBA=' + str('numba' in sys.modules)")
    assert "OK: tolerates any 4 stragglers" in out.stdout, out.stdout + out.stderr
    assert out.stdout.strip().splitlines()[-1] == "SHARES=[4] NUMBA=False", out.stdout
