"""A compiled walk in a pool thread ends soon after its run stops (gctool.engine.threads
halt_flag): its task raises Cancelled instead of walking the rest of its range, whose result
would be dropped.  Sets are counted, not timed."""

from __future__ import annotations

from collections.abc import Callable
from math import comb
from typing import Any

import numpy as np
import pytest

from gctool.audit.kernels import numba_available
from gctool.audit.kernels import optimal as kernels
from gctool.audit.oracles.optimal import OptimalOracle

from corpus import code_of
from helpers import built, slowed_calls, slowed_hat_batches, stopped_in_pool

pytestmark = pytest.mark.skipif(not numba_available(), reason="the compiled walk needs numba")


@pytest.mark.parametrize("pause", [0.0, 0.05])
def test_a_walk_ends_when_its_run_stops(monkeypatch: pytest.MonkeyPatch, pause: float) -> None:
    """Real cyclic n = 40, s = 6: the fast path's walk of all C(40, 6) sets (about 0.4 s) in
    a run stopped before it or while it runs walks a fraction of them; outside a pool the
    same walk is whole."""
    monkeypatch.setenv("GCTOOL_COMPILED", "auto")
    code, s = built("cyclic", 40, 6, seed=1), 6
    total = comb(40, s)
    oracle = OptimalOracle(code)
    oracle._plan(s)
    walked: list[int] = []
    real = kernels.hat_range

    def spy(*args: Any) -> int:
        walked.append(int(real(*args)))
        return walked[-1]

    monkeypatch.setattr(kernels, "hat_range", spy)
    assert stopped_in_pool(lambda: oracle.compiled.walk(40, s, 0, total), pause) == "cancelled"
    assert len(walked) == 1 and walked[0] < total // 2
    walked.clear()
    err, _, _ = oracle.compiled.walk(40, s, 0, 5000)  # not in a pool: never stopped
    assert walked == [5000] and err.size == 5000


def test_a_direct_walk_for_a_first_set_over_a_limit_stops_where_numpy_must_decide() -> None:
    """The direct walk (no fast path) of a search for the first set over a limit stops at
    the most-th set whose bracket numpy's decoder must decide (unknown, or reaching above the
    limit), or at the first surely over it, with the brackets of the whole walk."""
    from gctool.audit.kernels.direct import BRACKETED, DirectBrackets

    rng = np.random.default_rng(1)
    U, _, Vh = np.linalg.svd(rng.standard_normal((9, 9)))
    code = code_of((U * np.logspace(0, -6, 9)) @ Vh, 0)
    oracle = OptimalOracle(code)
    walk, s = DirectBrackets(oracle.decoder.Bn, oracle.decoder.T), 3
    total = comb(9, s)
    state, lo, hi = walk.walk(s, 0, total)
    for limit in np.quantile(hi[state == BRACKETED], [0.2, 0.5, 0.9]):
        ask = np.flatnonzero((state != BRACKETED) | ~(hi <= limit))
        sure = np.flatnonzero((state == BRACKETED) & (lo > limit))
        assert ask.size >= 3
        for most in (1, 3):
            end = min(int(ask[most - 1]) + 1, int(sure[0]) + 1 if sure.size else total)
            got = walk.walk(s, 0, total, float(limit), most)
            assert got[0].size == end < total
            for mine, whole in zip(got, (state, lo, hi), strict=True):
                assert np.array_equal(mine, whole[:end], equal_nan=True)


def _numpy_route(route: str, monkeypatch: pytest.MonkeyPatch
                 ) -> tuple[Callable[[np.ndarray], Any], np.ndarray, list[int]]:
    """(the numpy route of ``route`` on given sets, 400 sets it decides in 200 batches of two,
    the list each batch appends its size to, each batch made to take 20 ms)."""
    from gctool.audit import nullspace as ns
    from gctool.engine.enumeration import unrank_lex
    from gctool.limits import DEFAULT_TOL

    monkeypatch.setenv("GCTOOL_COMPILED", "0")
    if route.startswith("verify"):  # its kernel's numpy route (and of the sets the compiled
        # screen leaves): rs real n=36 s=6's last sets all take the compensated residual and
        # the QR certificate; the direct kernel decodes every set (the decoder's chunks)
        code, s = built("rs", 36, 6, seed=1), 6
        S = unrank_lex(36, s, np.arange(comb(36, s) - 400, comb(36, s)))
        if route == "verify direct":
            kernel: Any = ns.DirectKernel(code, DEFAULT_TOL)
            monkeypatch.setattr(kernel.decoder, "chunk_size", lambda f: 2)
            return kernel.evaluate, S, slowed_calls(monkeypatch, kernel.decoder, "evaluate")
        kernel = ns.FloatNullKernel(code, DEFAULT_TOL, ns.reduce_float(code, DEFAULT_TOL))
        monkeypatch.setattr(ns.FloatNullKernel, "cert_batch", lambda self, s: 2)
        return (kernel.evaluate_numpy, S,
                slowed_calls(monkeypatch, ns.FloatNullKernel, "tight_witness"))
    if route == "frame spectra":  # numpy's batched eigenvalues of an encoded frame's sets
        from gctool.audit.spectrum import Frame, _SpectrumWorker, frame_matrix
        from gctool.codes import design
        from gctool.engine.sweep import ListSource

        code = design("encoded", frame="gaussian", workers=16, k=6, s=3, seed=1)
        frame = Frame.of(frame_matrix(code))
        monkeypatch.setattr(Frame, "batch", lambda self, s: 2)
        batches = slowed_calls(monkeypatch, Frame, "spectra")

        def spectra(S: np.ndarray) -> Any:
            return _SpectrumWorker(ListSource(16, S), frame, 1.0).run((0, 0, S.shape[0]))

        return spectra, unrank_lex(16, 3, np.arange(400)), batches
    if route == "fast path":
        code = code_of(np.random.default_rng(1).standard_normal((14, 6)), 4)
    else:  # cond(B) 1e6: no fast path (FAST_KAPPA), each chunk to numpy's decoder
        U, _, Vh = np.linalg.svd(np.random.default_rng(1).standard_normal((14, 14)))
        code = code_of((U * np.logspace(0, -6, 14)) @ Vh, 0)
    oracle = OptimalOracle(code)
    assert oracle._uses_hat(4) is (route == "fast path")
    S = unrank_lex(14, 4, np.arange(400))
    if route == "fast path":
        return oracle.errors, S, slowed_hat_batches(monkeypatch)
    monkeypatch.setattr(oracle.decoder, "chunk_size", lambda f: 2)
    return oracle.errors, S, slowed_calls(monkeypatch, oracle.decoder, "evaluate")


@pytest.mark.parametrize("route", ["fast path", "decoder", "verify certificate",
                                   "verify direct", "frame spectra"])
def test_numpy_batches_end_when_their_run_stops(monkeypatch: pytest.MonkeyPatch,
                                                route: str) -> None:
    """The numpy route of given sets in a pool thread stops between its batches once its run
    stops, as a compiled walk does: an attack oracle's (the fast path's batches; off it, the
    decoder's chunks), verify's (its kernel's compensated residual and QR certificate,
    the direct decoder's chunks) and an encoded frame's spectra.  A task of 200 batches
    (each made to take 20 ms) decides a few of them and raises Cancelled; outside a pool the
    same sets are all decided.  Batches are counted."""
    decide, S, batches = _numpy_route(route, monkeypatch)
    whole = decide(S[:20])  # outside a pool: every batch
    assert batches == [2] * 10
    if route == "verify certificate":
        assert whole.ok.all() and not whole.direct.any()  # (every set through those tests)
    batches.clear()
    assert stopped_in_pool(lambda: decide(S), 0.1) == "cancelled"
    assert 1 <= len(batches) <= 40, len(batches)  # of 200


def test_a_frame_spectra_walk_ends_when_its_run_stops(monkeypatch: pytest.MonkeyPatch) -> None:
    """The compiled spectra of an encoded frame (its walk of a rank range, its given sets) in
    a run stopped before the walk walks no set (its picks untouched) and raises Cancelled;
    one stopped while it runs raises Cancelled too; outside a pool the same walk is whole."""
    from gctool.audit.kernels import spectra as kernels_spectra
    from gctool.audit.spectrum import Frame, frame_matrix
    from gctool.codes import design
    from gctool.engine.enumeration import unrank_lex
    from gctool.engine.threads import Cancelled, TaskOrder, set_task

    monkeypatch.setenv("GCTOOL_COMPILED", "1")
    code = design("encoded", frame="gaussian", workers=60, k=30, s=3, seed=1)
    frame = Frame.of(frame_matrix(code))
    frame.plan(3, comb(60, 3))
    walk, picks = frame.compiled, []
    for name in ("spectra_range", "spectra_sets"):
        real = getattr(kernels_spectra, name)

        def spy(*args: Any, real: Any = real) -> None:
            real(*args)
            picks.append(args[-3].copy())  # (the offsets of the picks: -1 before any set)

        monkeypatch.setattr(kernels_spectra, name, spy)
    total, first = comb(60, 3), np.arange(3, dtype=np.int64)
    order = TaskOrder()
    order.stop()
    set_task(order, 0)
    try:
        with pytest.raises(Cancelled):
            walk.walk(3, False, 1.0, first.copy(), total)
        with pytest.raises(Cancelled):
            walk.sets(unrank_lex(60, 3, np.arange(100)), False, 1.0)
    finally:
        set_task(None)
    assert [p.tolist() for p in picks] == [[-1, -1, -1]] * 2
    assert stopped_in_pool(lambda: walk.walk(3, False, 1.0, first.copy(), total),
                           0.05) == "cancelled"  # (34,220 sets of 30 x 30: about 0.5 s)
    picks.clear()
    _, at, _ = walk.walk(3, False, 1.0, first.copy(), 2000)  # not in a pool: never stopped
    assert len(picks) == 1 and max(at) >= 0
