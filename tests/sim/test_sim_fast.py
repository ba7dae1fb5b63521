"""The simulator's fast decodability paths against the naive ones (round by round).

The sparse dual path (:func:`gctool.sim.stopping.sparse.sparse_dual_of`) replaces one SVD of B by
sparse LU factorisations for large sparse square codes; here it is forced at small n (where
the naive decoder is affordable) and compared with the SVD path and with the generic decoder.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from sim_reference import contenders_for, run_naive

from gctool.algebra.fields import parse_field
from gctool.codes import design
from gctool.decode import Decoder
from gctool.model import GradientCode
from gctool.sim import stopping
from gctool.sim.contenders import Setting
from gctool.sim.delays import parse_delay
from gctool.sim.lineup import for_code
from gctool.sim.stopping import dual, sparse


@pytest.fixture
def sparse_everywhere(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make ``auto`` take the sparse dual path at every n and density."""
    monkeypatch.setattr(sparse, "SPARSE_FROM", 1)
    monkeypatch.setattr(sparse, "SPARSE_DENSITY", 1.0)


@pytest.mark.parametrize("n,s,seed", [(20, 3, 1), (40, 5, 2), (33, 1, 4)])
def test_sparse_dual_residual_is_the_decoders_error(n: int, s: int, seed: int) -> None:
    code = design("cyclic", n=n, s=s, seed=seed)
    fast = stopping.StopRule(code, dual="sparse")
    ref = stopping.StopRule(code, dual="svd")
    assert fast.dual_method == "sparse" and ref.dual_method == "svd"
    assert fast._dual is not None and ref._dual is not None and fast._walk is not None
    dec, rng = Decoder(code), np.random.default_rng(seed)
    for size in range(0, 2 * s + 3):
        for _ in range(4):
            S = np.sort(rng.choice(n, size, replace=False))
            F = np.setdiff1d(np.arange(n), S)
            truth = dec.decode(F).error
            a = dual.dual_residual(fast._dual, S)
            b = dual.dual_residual(ref._dual, S)
            assert a is not None and b is not None
            assert a == pytest.approx(truth, rel=1e-6, abs=1e-8)
            assert a == pytest.approx(b, rel=1e-6, abs=1e-8)
            assert fast._walk.verdict(S) in (None, dec.decode(F).ok)


def test_sparse_dual_refuses_a_wrong_rank_and_takes_the_svd() -> None:
    # I + P/2 (P a cyclic shift) has rank n, not n - s: the bordered "null space" is not one
    B = np.eye(12) + 0.5 * np.roll(np.eye(12), 1, axis=1)
    code = GradientCode(B, parse_field("real"), 2, "custom")
    rule = stopping.StopRule(code, dual="sparse")
    assert rule.kind == "qr" and rule.dual_method == "svd"
    # a repeated row: rank n - 1 but s = 3 claimed
    B = np.eye(10) + 0.5 * np.roll(np.eye(10), 1, axis=1)
    B[3] = B[2]
    rule = stopping.StopRule(GradientCode(B, parse_field("real"), 3, "custom"), dual="sparse")
    assert rule.dual_method != "sparse"
    with pytest.raises(ValueError):
        stopping.StopRule(code, dual="fastest")


def test_sparse_dual_is_taken_by_default_only_for_large_sparse_square_codes() -> None:
    assert stopping.StopRule(design("cyclic", n=20, s=2, seed=1)).dual_method == "svd"
    big = design("sr-sgc", n=600, seed=1, burst=1, window=2, lam=15)  # cyclic, s = 8
    assert big.params["gc"] == "cyclic"
    assert stopping.StopRule(big).dual_method == "sparse"


@pytest.mark.parametrize("scheme,args,n", [("sr-sgc", (1, 2, 5), 17), ("sr-sgc", (1, 3, 4), 13),
                                           ("m-sgc", (1, 3, 4), 17)])
def test_sgc_with_sparse_dual_equals_naive_path(sparse_everywhere: None, scheme: str,
                                                args: tuple[int, int, int], n: int) -> None:
    B, W, lam = args
    code = design(scheme, n=n, seed=2, burst=B, window=W, lam=lam)
    assert code.params["gc"] == "cyclic"  # a real per-round code decided by the dual
    assert stopping.StopRule(code).dual_method == "sparse"
    c = for_code(code, scheme)
    for spec, seed in (("markov:p=0.2,q=0.4,slow=20", 3), ("trace:london", 4)):
        delay = parse_delay(spec)
        times = delay.times(delay.draws(120, n, np.random.default_rng(seed)), c.loads)
        fast, slow = c.run(times, Setting()), run_naive(c, times)
        assert np.array_equal(fast.durations, slow.durations), spec
        assert fast.jobs == slow.jobs, spec
        assert len(fast.jobs) == 120 - c.delay


def test_code_walk_with_sparse_dual_equals_naive_path(sparse_everywhere: None) -> None:
    code = design("cyclic", n=56, s=4, seed=3)
    assert code.n - code.s >= dual.DUAL_FROM
    rule = stopping.StopRule(code)
    assert rule.dual_method == "sparse"
    c = for_code(code, "crc")
    delay = parse_delay("markov:p=0.1,q=0.3,slow=5")
    times = delay.times(delay.draws(25, code.n, np.random.default_rng(2)), c.loads)
    fast, slow = c.run(times, Setting()), run_naive(c, times)
    assert np.array_equal(fast.durations, slow.durations)
    assert np.array_equal(fast.exact, slow.exact)
    rule.earliest(times, code.n - code.s)
    assert rule.fallbacks == 0


# -- the (B, W, lambda) search: every lambda, scored by the bursty model alone ----------------
@pytest.mark.parametrize("compiled", ["0", "1"])
@pytest.mark.parametrize("scheme,args", [("sr-sgc", (1, 3, 3)), ("m-sgc", (2, 4, 3)),
                                         ("m-sgc", (1, 2, 9)), ("sr-sgc", (2, 3, 4))])
def test_round_times_equal_the_scheme_run(monkeypatch: pytest.MonkeyPatch, compiled: str,
                                          scheme: str, args: tuple[int, int, int]) -> None:
    from gctool.sequential.model import to_mask
    from gctool.sim.sgc_search import round_times

    monkeypatch.setenv("GCTOOL_COMPILED", compiled)
    B, W, lam = args
    code = design(scheme, n=9, seed=1, burst=B, window=W, lam=lam)
    c = for_code(code, scheme)
    delay = parse_delay("markov:p=0.2,q=0.4,slow=20")
    times = delay.times(delay.draws(200, 9, np.random.default_rng(5)), c.loads)
    times[::5] = np.round(times[::5], 1)  # ties: the stable order decides
    for mu in (None, 0.3, 2.0):
        run = c.run(times, Setting(mu=mu))
        durations, late = round_times(times, B, W, lam, mu)
        assert np.array_equal(durations, run.durations), mu
        for t, used in enumerate(run.used):  # the same straggler set every round
            assert to_mask(np.flatnonzero(late[t]).tolist()) == ((1 << 9) - 1) & ~to_mask(
                used.tolist())
        assert len(run.jobs) == 200 - c.delay


@pytest.mark.parametrize("compiled", ["0", "1"])
def test_the_round_loop_ends_on_its_stop_flag(monkeypatch: pytest.MonkeyPatch,
                                              compiled: str) -> None:
    """The round loop reads its stop flag every HALT_EVERY rounds (a signal sets the main
    thread's: gctool.engine.threads.halt_flag): set, it ends there (the rounds after it are
    not replayed: no straggler in them), and round_times raises instead of returning."""
    from gctool.engine.threads import TaskOrder, set_task
    from gctool.sim import sgc_search

    monkeypatch.setenv("GCTOOL_COMPILED", compiled)
    rounds = 4 * sgc_search.HALT_EVERY
    times = np.random.default_rng(1).exponential(size=(rounds, 9))
    loop = sgc_search._kernel()
    at = sgc_search.HALT_EVERY - 1  # the first round that reads the flag
    _, whole = loop(times, 1, 3, 3, -1.0, np.zeros(1, dtype=np.uint8))
    assert whole[at:].any(axis=1).sum() > rounds // 4  # stragglers in the rounds after it
    _, late = loop(times, 1, 3, 3, -1.0, np.ones(1, dtype=np.uint8))
    assert np.array_equal(late[:at], whole[:at]) and not late[at:].any()
    order = TaskOrder()  # a pool's stopped task: Cancelled
    order.stop()
    set_task(order, 0)
    try:
        with pytest.raises(BaseException) as info:
            sgc_search.round_times(times, 1, 3, 3, None)
    finally:
        set_task(None)
    assert type(info.value).__name__ == "Cancelled"


def test_sgc_search_tries_every_lambda_and_picks_the_best() -> None:
    from gctool.sequential import formulas
    from gctool.sim.lineup import sgc_baselines
    from gctool.sim.run import simulate
    from gctool.sim.sgc_search import SEARCH_MAX_WINDOW
    from gctool.sim.sgc_search import candidates as sgc_candidates

    n, s = 12, 3
    for scheme, fig in (("m-sgc", formulas.msgc), ("sr-sgc", formulas.srsgc)):
        cands = set(sgc_candidates(n, s, scheme))
        every = {(B, W, lam) for W in range(2, SEARCH_MAX_WINDOW + 1) for B in range(1, W)
                 for lam in range(1, n + 1)
                 if (f := fig(n, B, W, lam).load) is not None and f <= Fraction(s + 1, n)}
        assert cands == every and len(cands) > 10
    delay = parse_delay("trace:canada")  # 60 rounds: the best candidate of each is clear
    rep = simulate([("frc", design("frc", n=n, s=s))], delay, iterations=60, seed=3,
                   sgc="search", protocol="authors", mu=0.2)
    draws = delay.draws(60, n, np.random.default_rng(3))
    for scheme in ("sr-sgc", "m-sgc"):  # brute force: every candidate run in full
        best = None
        for params in sgc_candidates(n, s, scheme):
            for c in sgc_baselines(n, s, params, 3, (scheme,)):
                run = c.run(delay.times(draws, c.loads), Setting(mu=0.2))
                per_job = float(run.durations.sum() / len(run.jobs))
                if best is None or per_job < best[0]:
                    best = (per_job, params)
        assert best is not None
        row = next(r for r in rep.rows if r["name"].startswith(scheme)
                   and r["name"].endswith("(searched)"))
        assert row["name"].startswith(f"{scheme} B,W,L={best[1][0]},{best[1][1]},{best[1][2]}")
        assert row["time_per_job"] == pytest.approx(best[0], rel=1e-12)


def test_round_times_with_many_ties_at_larger_n() -> None:
    from gctool.sim.sgc_search import round_times

    for scheme, (B, W, lam) in (("m-sgc", (1, 3, 30)), ("sr-sgc", (1, 2, 9))):
        code = design(scheme, n=40, seed=1, burst=B, window=W, lam=lam)
        c = for_code(code, scheme)
        rng = np.random.default_rng(8)
        times = np.round(rng.exponential(size=(150, 40)) * 4) / 4 + 0.25  # heavy ties
        run = c.run(times, Setting())
        durations, late = round_times(times, B, W, lam, None)
        assert np.array_equal(durations, run.durations)
        assert all(np.array_equal(np.flatnonzero(~late[t]), np.sort(u))
                   for t, u in enumerate(run.used))


# -- the authors' (1 + mu) rule on every kind of contender ------------------------------------
def _wait(times: np.ndarray, mu: float) -> np.ndarray:
    return times.min(axis=1) * (1.0 + mu)


def test_authors_rule_on_ignore_stragglers_hetero_and_erasurehead() -> None:
    from gctool.sim.contenders.erasurehead import ErasureHead
    from gctool.sim.contenders.ignore import IgnoreStragglers

    rng = np.random.default_rng(6)
    times = rng.exponential(size=(300, 6)) + 0.3
    mu = 0.4
    authors = Setting(mu=mu)
    wait = _wait(times, mu)
    late = times > wait[:, None]
    last = times.max(axis=1)
    run = IgnoreStragglers(6, 2).run(times, authors)
    inside = late.sum(axis=1) <= 2
    assert 0 < inside.sum() < 300
    assert np.array_equal(run.durations, np.where(inside, np.minimum(wait, last), last))
    het = design("hetero", p=[0.1, 0.2, 0.5, 0.3, 0.2, 0.1], load=2)
    run = for_code(het, "het").run(times, authors)
    W = np.asarray(het.B, dtype=np.float64)
    for t in range(300):  # stop at the wait (or the last arrival), sum what arrived
        got = times[t] <= wait[t]
        assert run.durations[t] == min(wait[t], last[t])
        assert run.error[t] == pytest.approx(np.sum((W[got].sum(axis=0) - 1) ** 2) / het.k)
    frc = design("frc", n=6, s=2)
    groups = np.arange(6) // 3
    run = ErasureHead(frc, "frc", 4).run(times, authors)
    for t in range(300):  # the wait or the 4th arrival, whichever is first
        end = min(wait[t], np.sort(times[t])[3])
        got = times[t] <= end
        assert run.durations[t] == end  # the master cannot know that nobody else comes
        covered = {int(g) for g in groups[got]}
        assert run.lost[t] == pytest.approx(1 - len(covered) / 2)
        assert run.exact[t] == (len(covered) == 2)


def test_authors_rule_on_partial_work_and_nested_levels() -> None:
    from gctool.codes.nested import profile_decoding
    from gctool.sim.contenders.partial import Partial

    mu = 0.5
    code = design("nested", n=6, levels=[1, 3], seed=1)
    c = contenders_for([("nest", code)], False, None, 3)[1]
    delay = parse_delay("shifted-exp")
    times = delay.times(delay.draws(60, 6, np.random.default_rng(3)), c.loads)
    run = c.run(times, Setting(mu=mu))
    wait = _wait(times, mu)
    waited = 0
    for r in range(60):  # the messages sent by the wait decode, or everyone is waited for
        prof = [2 if times[r, i] <= wait[r] else 1 if times[r, i] * 0.5 <= wait[r] else 0
                for i in range(6)]
        if profile_decoding(code, prof)[1]:
            assert run.durations[r] == min(wait[r], times[r].max())
            low = [min(p, 1) for p in prof]
            assert run.levels[r] == (1 if profile_decoding(code, low)[1] else 2)
            waited += 1
        else:
            assert run.durations[r] == times[r].max()
    assert 0 < waited < 60
    part = design("cyclic", n=6, s=2, seed=1, order="natural")
    pc = next(x for x in contenders_for([("p", part)], False, None, 1) if isinstance(x, Partial))
    t2 = np.random.default_rng(2).exponential(size=(80, 6)) + 0.2
    run = pc.run(t2, Setting(mu=mu))
    mt = t2[:, pc.owner] * pc.fractions[None, :]
    dec = Decoder(pc.messages)
    w2 = _wait(t2, mu)
    for r in range(80):
        got = np.flatnonzero(mt[r] <= w2[r])
        ok = bool(dec.decode(got.tolist()).ok)
        assert run.durations[r] == (min(w2[r], t2[r].max()) if ok else t2[r].max())


def test_authors_rule_on_coded_reduce_and_its_baselines() -> None:
    from gctool.sim.contenders.code import CodeFile
    from gctool.sim.network import Link, arrivals
    from gctool.sim.run import simulate

    mu = 0.3
    cr = design("coded-reduce", seed=1, fanout=3, depth=2, tolerance=[1, 1])
    c = for_code(cr, "cr")
    times = np.random.default_rng(5).exponential(size=(200, 9)) + 0.5
    run = c.run(times, Setting(mu=mu))
    for r in range(200):  # level 2: parents of 3 leaves need 2 (tolerance 1); then the root
        ready = []
        for p in range(3):
            kids = times[r, 3 * p: 3 * p + 3]
            w = kids.min() * (1 + mu)
            ready.append(min(w, kids.max()) if (kids <= w).sum() >= 2 else kids.max())
        ready = np.array(ready)
        w = ready.min() * (1 + mu)
        assert run.durations[r] == pytest.approx(min(w, ready.max()) if (ready <= w).sum() >= 2
                                                 else ready.max())
    link = Link(0.05, 10.0)
    at = arrivals(times, link)  # a flat code on the link: its rule on the arrivals
    flat = CodeFile(cr, "flat")
    assert np.array_equal(flat.run(times, Setting(mu=mu, link=link)).durations,
                          flat.run(at, Setting(mu=mu)).durations)
    rep = simulate([("cr", cr)], parse_delay("shifted-exp"), iterations=50, seed=1,
                   link=link, protocol="authors", mu=mu)
    rules = {r["name"]: r["rule"] for r in rep.rows}
    assert rules["cr"] == "authors" and rules["uncoded"] == "gctool"
    assert rules["ring all-reduce n=9"] == "gctool"
    assert any("uncoded: the authors' rule is not applied" in x for x in rep.notes)
    assert any("ring all-reduce n=9: the authors' rule is not applied" in x for x in rep.notes)


# -- bound --link: CodedReduce's time per round, ranked as simulate ranks it -------------------
@pytest.mark.parametrize("latency,bandwidth", [(0.05, 10.0), (0.005, 100.0), (0.0, 10.0),
                                               (0.2, 1000.0)])
def test_bound_link_ranks_like_simulate(latency: float, bandwidth: float) -> None:
    import gctool
    from gctool.sim.network import Link
    from gctool.sim.run import simulate

    cr = design("coded-reduce", seed=1, fanout=4, depth=2, tolerance=1)
    link = Link(latency, bandwidth)
    rep = gctool.bound(cr, link=link)
    times = {r["scheme"]: r["time_per_round"] for r in rep.rows}
    assert all(r["time_per_round_ci95"][0] <= r["time_per_round"] <= r["time_per_round_ci95"][1]
               for r in rep.rows if r["scheme"] != "ring-all-reduce")
    sim = simulate([("cr", cr)], parse_delay("shifted-exp"), iterations=600, seed=5, link=link,
                   baselines=False)
    bound_names = {"cr": "coded-reduce", "ps cr (flat, same leaves)": "gc",
                   "ring all-reduce n=16": "ring-all-reduce"}
    means = {bound_names[r["name"]]: r["mean"]["value"] for r in sim.rows
             if r["name"] in bound_names}
    assert sorted(times, key=times.__getitem__) == sorted(means, key=means.__getitem__)
    for name, value in times.items():  # the same model: the means agree within noise
        assert value == pytest.approx(means[name], rel=0.1)


def test_bound_link_options_are_checked(tmp_path: Path) -> None:
    from click.testing import CliRunner

    import gctool
    from gctool.cli.main import cli
    from gctool.errors import InvalidInput
    from gctool.sim.network import Link

    cr = design("coded-reduce", seed=1, fanout=3, depth=2, tolerance=1)
    plain = gctool.bound(cr)
    assert "time_per_round" not in plain.rows[0]
    assert any("`link`" in x for x in plain.statements)  # the CLI says --link
    with pytest.raises(InvalidInput, match="CodedReduce files only"):
        gctool.bound(design("frc", n=4, s=1), link=Link(0.1, 10.0))
    with pytest.raises(InvalidInput, match="needs `link`"):
        gctool.bound(cr, delay=parse_delay("shifted-exp"))
    path = tmp_path / "cr.json"
    gctool.write_code(cr, path)
    runner = CliRunner()
    for args in (["-n", "4", "-k", "4", "-s", "1", "--link", "latency=1"],
                 [str(path), "--link", "latency=-1"], [str(path), "--delay", "pareto"],
                 [str(path), "--link", "latency=1", "--delay", "nosuch"]):
        r = runner.invoke(cli, ["bound", *args])
        assert r.exit_code == 2 and len(r.stderr.strip().splitlines()) == 1, (args, r.stderr)
    r = runner.invoke(cli, ["bound", str(path), "--link", "latency=0.01,bandwidth=50",
                            "--delay", "pareto:shape=3", "--json"])
    assert r.exit_code == 0, r.stderr
    doc = __import__("json").loads(r.stdout)["files"][0]["report"]  # the one file's report
    assert all(isinstance(row["time_per_round"], float) for row in doc["rows"])
    assert doc["params"]["delay"].startswith("pareto")
