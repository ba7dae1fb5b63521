"""The real walk's carried norm floor (:data:`gctool.audit.kernels.ranges.CARRY`): a piece of a
range starts from the largest decoder norm known before it (the range's earlier pieces, the
ranges before it that the screen summarised) and computes fewer norms in full, but the report
(verdict, counterexample, worst norm and its set, every JSON field) is the one of the walk
without it, for any jobs and on Dask, ties included; and the worst norm is numpy's.

Tasks and pieces are made tiny (a few sets) so that small codes have many of both."""

from __future__ import annotations

import itertools
import threading
from math import comb
from typing import Any

import numpy as np
import pytest

from gctool.algebra.fields import parse_field
from gctool.audit import nullspace as ns
from gctool.audit.kernels import ranges, real
from gctool.audit.verify import enumeration, verify
from gctool.codes import design
from gctool.model import GradientCode

from helpers import same_report, small_chunks, tied_code
from kernel_corpus import random_codes, walk_codes

JOBS = (1, 2, 3)


def _codes() -> list[tuple[str, GradientCode, int]]:
    rng = np.random.default_rng(4)
    return [("cyclic", design("cyclic", n=14, s=4, seed=3), 4),
            ("rs", design("rs", n=18, s=4), 4),
            ("random", GradientCode(rng.standard_normal((14, 6)), parse_field("real"), 4), 4),
            ("frc", design("frc", n=12, s=3), 3),  # 12 sets within 1e-12 of the worst norm
            ("tied", tied_code(), 2),  # 48 sets within 1e-12 of the worst norm
            ("fails-mid", random_codes()[4][1], 3),
            ("degenerate-prefix", walk_codes()[5][1], 4),
            ("complex", walk_codes()[3][1], 3)]


CODES = _codes()


@pytest.fixture
def tiny(monkeypatch: pytest.MonkeyPatch) -> list[real.RealScreen]:
    """Compiled walks in threads, tasks of 16 sets, pieces of 5; the screens that walk."""
    monkeypatch.setenv("GCTOOL_COMPILED", "1")
    monkeypatch.setattr(ns, "COMPILED_CHUNK", 16)
    monkeypatch.setattr(ns, "COMPILED_PILOT", 5)
    monkeypatch.setattr(enumeration, "THREADS_MIN_S", 0.0)
    monkeypatch.setattr(enumeration, "GUIDED", 1)
    monkeypatch.setattr(ranges, "WALK_PIECE", 5)
    screens: list[real.RealScreen] = []
    walk = real.RealScreen.walk

    def kept(self: real.RealScreen, *args: Any) -> Any:
        if not any(x is self for x in screens):
            screens.append(self)
        return walk(self, *args)

    monkeypatch.setattr(real.RealScreen, "walk", kept)
    return screens


def _verify(code: GradientCode, s: int, **kw: Any) -> Any:
    """verify on the walk (the nullspace kernel), every set."""
    return verify(code, s, method="exhaustive", kernel="nullspace", **kw)


def _full_norms(screens: list[real.RealScreen]) -> int:
    return sum(f for sc in screens for _, f in sc.counted.values())


@pytest.mark.parametrize("name,code,s", CODES, ids=[c[0] for c in CODES])
def test_the_carried_floor_changes_no_field_for_any_jobs(
        tiny: list[real.RealScreen], monkeypatch: pytest.MonkeyPatch, name: str,
        code: GradientCode, s: int) -> None:
    """Every field of the report, float for float, with the floor and without it (the walk
    before it), at 1, 2 and 3 jobs; the worst norm is numpy's (to round-off) and the floor
    cuts norms on the codes whose norms spread."""
    docs, full = {}, {}
    for carry in (False, True):
        monkeypatch.setattr(ranges, "CARRY", carry)
        for jobs in JOBS:
            tiny.clear()
            docs[carry, jobs] = same_report(_verify(code, s, jobs=jobs))
            full[carry, jobs] = _full_norms(tiny)
    base = docs[False, 1]
    for key, doc in docs.items():
        assert doc == base, key
    assert base["kernel"] == "nullspace"
    if name in ("cyclic", "rs", "random"):
        assert full[True, 1] < full[False, 1], full
    monkeypatch.setenv("GCTOOL_COMPILED", "0")
    plain = _verify(code, s, jobs=1).to_dict()["diagnostics"]
    worst = base["diagnostics"]["max_decoder_norm"]
    assert (worst is None) == (plain["max_decoder_norm"] is None)
    if worst is not None:
        assert worst == pytest.approx(plain["max_decoder_norm"], rel=1e-6)


def _brute_norms(code: GradientCode, s: int) -> tuple[np.ndarray, np.ndarray]:
    """Every s-set in lexicographic order with the norm of its minimum-norm decoder (numpy,
    one set at a time: ``||D (W + N^T z)||`` over the survivors, ``z = -pinv(N_S^T) W_S``)."""
    kernel = ns.FloatNullKernel(code, 1e-9, ns.reduce_float(code, 1e-9))
    N, W, scale = kernel.red.N, kernel.red.W, kernel.row_scale
    S = np.array(list(itertools.combinations(range(code.n), s)))
    out = np.empty(S.shape[0])
    for i, row in enumerate(S):
        z = -np.linalg.pinv(N[:, row].T) @ W[row]
        a = (W + N.T @ z) * scale[:, None]
        a[row] = 0
        out[i] = np.linalg.norm(a)
    return S, out


@pytest.mark.parametrize("name,code,s", [c for c in CODES if c[0] in ("cyclic", "rs", "random",
                                                                     "frc", "tied")],
                         ids=["cyclic", "rs", "random", "frc", "tied"])
def test_the_worst_set_is_the_first_of_the_brute_force_worst(
        tiny: list[real.RealScreen], name: str, code: GradientCode, s: int) -> None:
    """Against a numpy loop over every set: the reported worst norm is the largest, and its
    set is the first (lexicographically) of those within round-off of it."""
    S, norms = _brute_norms(code, s)
    doc = _verify(code, s, jobs=2).to_dict()["diagnostics"]
    top = float(norms.max())
    assert doc["max_decoder_norm"] == pytest.approx(top, rel=1e-9)
    near = np.flatnonzero(norms >= top * (1 - 1e-9))
    at = int(np.flatnonzero((S == doc["max_decoder_norm_stragglers"]).all(axis=1))[0])
    assert at in near.tolist()
    if near.size == 1:
        assert at == int(near[0])


@pytest.mark.parametrize("name,code,s", CODES[:6], ids=[c[0] for c in CODES[:6]])
def test_a_floor_at_a_ranges_own_worst_norm_keeps_it_and_its_first_set(
        monkeypatch: pytest.MonkeyPatch, name: str, code: GradientCode, s: int) -> None:
    """Ties: a range walked with its own largest norm as its floor (as when an earlier range
    has the same norm) still reports that norm and its first set (a set whose norm equals the
    floor is never cut), and so does a floor just below it; a floor above it cuts sets."""
    monkeypatch.setenv("GCTOOL_COMPILED", "1")
    kernel = ns.FloatNullKernel(code, 1e-9, ns.reduce_float(code, 1e-9))
    kernel.chunk_size(s)
    screen = kernel.compiled_screen
    total = comb(code.n, s)
    rng = np.random.default_rng(3)
    pend = np.zeros(ranges.PENDING, dtype=np.int64)
    checked = 0
    for _ in range(8):
        a, b = sorted(rng.choice(total + 1, 2, replace=False).tolist())
        S = ranges._first_set(code.n, s, a)
        plain = _full(screen)
        done, npend, top, at, _, _ = screen.walk(S.copy(), b - a, pend)
        plain = _full(screen) - plain
        if at < 0:
            continue
        checked += 1
        for floor in (top, np.nextafter(top, -np.inf), top * (1 - 1e-3)):
            got = screen.walk(S.copy(), b - a, pend, floor)
            assert (got[2], got[3]) == (top, at), (a, b, floor)
        cut = _full(screen)
        above = screen.walk(S.copy(), b - a, pend, top * 4)
        assert _full(screen) - cut <= plain and above[:2] == (done, npend)
    assert checked > 0


def _full(screen: real.RealScreen) -> int:
    """The norms this thread's walks of ``screen`` computed in full so far."""
    return screen.counted.get(threading.get_ident(), (0, 0))[1]


def test_the_floors_are_the_largest_norm_of_the_ranges_that_end_before() -> None:
    """:meth:`RealScreen.found` / :meth:`RealScreen.floor` against the largest norm of the
    recorded ranges ending at or before the start, by brute force."""
    code = design("cyclic", n=10, s=3, seed=1)
    kernel = ns.FloatNullKernel(code, 1e-9, ns.reduce_float(code, 1e-9))
    screen = real.RealScreen(kernel.red.N.T, kernel.red.W, kernel.row_scale, kernel.delta)
    rng = np.random.default_rng(5)
    for _ in range(200):
        screen.floors = {}
        recs: list[tuple[int, float]] = []
        for _ in range(int(rng.integers(0, 12))):
            stop, v = int(rng.integers(0, 20)), float(rng.integers(0, 10))
            v = np.inf if v == 9 else v  # not finite: not recorded
            screen.found(3, stop, v)
            recs += [(stop, v)] if np.isfinite(v) else []
        assert screen.floor(4, 30) == -np.inf
        for start in range(22):
            want = max([v for st, v in recs if st <= start], default=-np.inf)
            assert screen.floor(3, start) == want
        kept = screen.floors.get(3, [])
        assert kept == sorted(kept) and [v for _, v in kept] == sorted({v for _, v in kept})


def test_a_dask_run_reports_what_local_threads_do(tiny: list[real.RealScreen],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """On a Dask cluster (two in-process workers: each keeps its own floors), the report is
    the one of local threads and of the walk without the floor."""
    from distributed import LocalCluster

    from gctool.audit.distributed import DaskRunner, local_cluster_options

    picked = [c for c in CODES if c[0] in ("rs", "tied", "fails-mid")]
    tasks = 0
    with LocalCluster(**local_cluster_options(2, processes=False), protocol="tcp://") as c:
        for name, code, s in picked:
            monkeypatch.setattr(ranges, "CARRY", False)
            before = same_report(_verify(code, s, jobs=1))
            monkeypatch.setattr(ranges, "CARRY", True)
            local = same_report(_verify(code, s, jobs=2))
            runner = DaskRunner(scheduler=c.scheduler_address, key=f"carry-{name}")
            dsk = same_report(_verify(code, s, runner=runner))
            assert before == local == dsk, name
            tasks += runner.stats["tasks"]
    assert tasks > 50


def _keep(path: Any, which: str) -> int:
    """Drop entries of the checkpoint at ``path`` as an interruption would leave it: keep the
    ``early`` half of its ranges, the ``late`` half, or every ``other`` one (a run whose later
    ranges finished first, or were saved while earlier ones were lost); the number kept."""
    import json

    doc = json.loads(path.read_text())
    (run,) = doc["runs"].values()
    keys = sorted(run, key=lambda k: json.loads(k)[1])
    half = len(keys) // 2
    kept = {"early": keys[:half], "late": keys[half:], "other": keys[::2]}[which]
    for k in set(keys) - set(kept):
        del run[k]
    path.write_text(json.dumps(doc))
    return len(kept)


RESUMED = [c for c in CODES if c[0] in ("rs", "random", "frc", "tied")]


@pytest.mark.parametrize("name,code,s", RESUMED, ids=[c[0] for c in RESUMED])
def test_a_run_resumed_from_a_partial_checkpoint_reports_what_one_run_does(
        tiny: list[real.RealScreen], monkeypatch: pytest.MonkeyPatch, tmp_path: Any,
        name: str, code: GradientCode, s: int) -> None:
    """A checkpoint records each range's summary as its walk left it under the carried floor
    (a range after a larger norm may hold a smaller one, or none); a run resumed from any part
    of it (the early, late or every other range kept), on a cluster of 1 or 2 workers other
    than the one that wrote it, reports every field of the run without the floor at one job:
    a floor is a norm of a set before the range, so the range holding the first worst set
    reports it whatever was recorded or recomputed elsewhere."""
    import json

    from distributed import LocalCluster

    from gctool.audit.distributed import DaskRunner, local_cluster_options

    if name in ("frc", "tied"):
        small_chunks(monkeypatch, 8)  # Dask tasks of a few sets: many ranges, tied across
    monkeypatch.setattr(ranges, "CARRY", False)
    before = same_report(_verify(code, s, jobs=1))
    monkeypatch.setattr(ranges, "CARRY", True)
    smaller = resumed = 0
    with LocalCluster(**local_cluster_options(1, processes=False, threads=1),
                      protocol="tcp://") as one, \
            LocalCluster(**local_cluster_options(2, processes=False), protocol="tcp://") as two:
        clusters = {"one": one, "two": two}
        own: dict[str, Any] = {}
        for carry in (False, True):  # each range's own largest norm, and under the carry
            monkeypatch.setattr(ranges, "CARRY", carry)
            path = tmp_path / f"own-{carry}.ckpt"
            runner = DaskRunner(scheduler=one.scheduler_address, checkpoint=str(path),
                                key="resume")
            assert same_report(_verify(code, s, runner=runner)) == before
            (own[str(carry)],) = json.loads(path.read_text())["runs"].values()
        text = (tmp_path / "own-True.ckpt").read_text()
        for key, entry in own["True"].items():  # ranges whose recorded norm is not their own
            alone, carried = own["False"][key]["data"], entry["data"]
            smaller += carried["max_norm"] != alone["max_norm"]
        for first, then in (("one", "two"), ("two", "one"), ("two", "two")):
            path = tmp_path / f"{first}-{then}.ckpt"
            runner = DaskRunner(scheduler=clusters[first].scheduler_address,
                                checkpoint=str(path), key="resume")
            assert same_report(_verify(code, s, runner=runner)) == before, (first, then)
            for which in ("early", "late", "other"):
                cut = tmp_path / f"{first}-{then}-{which}.ckpt"
                cut.write_text(path.read_text())
                kept = _keep(cut, which)
                again = DaskRunner(scheduler=clusters[then].scheduler_address,
                                   checkpoint=str(cut), key="resume")
                assert same_report(_verify(code, s, runner=again)) == before, (first, then, which)
                assert again.stats["resumed"] == kept and again.stats["submitted"] > 0
                resumed += kept
        # the file a carried run wrote, cut, and resumed with the carry off: the same too
        monkeypatch.setattr(ranges, "CARRY", False)
        cut = tmp_path / "carried-plain.ckpt"
        cut.write_text(text)
        _keep(cut, "other")
        again = DaskRunner(scheduler=two.scheduler_address, checkpoint=str(cut), key="resume")
        assert same_report(_verify(code, s, runner=again)) == before
    # rs and random: ranges recorded a smaller norm or none (5 of 48 and 7 of 16 ranges on one
    # worker); frc and tied: ties across many ranges (the floor cuts none of them here)
    assert resumed > 0 and (smaller > 0 or name in ("frc", "tied")), name
