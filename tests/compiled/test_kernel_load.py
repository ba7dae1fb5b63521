"""Loading the compiled kernels in a process that has run none (importing numba, reading the
kernels from its cache: about 0.5 s) is a fixed cost of the first compiled run there
(:func:`gctool.budget.start_ns`): verify's estimate counts it then, and not in a process whose
kernels have run (docs/performance.md, "Start-up costs")."""

from __future__ import annotations

import subprocess
import sys
from math import comb
from typing import Any

import pytest

import gctool
from gctool.audit.verify.run import Run
from gctool.budget import KERNELS_LOAD_NS, NS_PER_S, START_NS, Budget, start_ns
from gctool.errors import BudgetExceeded
from gctool.request import VerifyRequest

FRESH = """
import numpy as np
from gctool.compiled import kernels_loaded
seen = [kernels_loaded()]
import gctool.audit.kernels.real  # imports numba and compiles nothing
seen.append(kernels_loaded())
from gctool.compiled.walk import successor
successor(np.array([0, 1], dtype=np.int64), 4)
seen.append(kernels_loaded())
print(seen)
"""


def test_a_fresh_process_has_loaded_no_kernel_until_one_runs() -> None:
    out = subprocess.run([sys.executable, "-c", FRESH], capture_output=True, text=True,
                         check=True, timeout=300)
    assert out.stdout.strip() == "[False, False, True]"


def _needed(code: gctool.GradientCode, s: int) -> float:
    """verify's estimate (seconds) in its refusal under a budget of 5 ms (untimed: far
    above it)."""
    request = VerifyRequest(s=s, method="exhaustive", jobs=1, budget=Budget(max_work=0.005))
    with pytest.raises(BudgetExceeded) as info:
        gctool.verify(code, request=request)
    assert info.value.needed is not None
    return info.value.needed


def test_the_first_compiled_run_of_a_process_counts_loading_the_kernels(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Real cyclic n=48 s=6 (12.3 M sets: the compiled walk): estimated KERNELS_LOAD_NS
    higher where no kernel has run; n=12 s=3 (220 sets, numpy alone) the same in both."""
    big, small = gctool.design("cyclic", n=48, s=6), gctool.design("cyclic", n=12, s=3)
    assert comb(48, 6) >= 300_000 > comb(12, 3)
    warm = _needed(big, 6), _needed(small, 3)
    monkeypatch.setattr("gctool.compiled.kernels_loaded", lambda: False)
    monkeypatch.setattr("gctool.compiled.numba_imported", lambda: False)  # a fresh process
    cold = _needed(big, 6), _needed(small, 3)
    assert cold[0] - warm[0] == pytest.approx(KERNELS_LOAD_NS / NS_PER_S)
    assert cold[1] == warm[1]


def test_start_ns() -> None:
    """(The test processes have run a kernel: tests/conftest.py.)"""
    assert start_ns(False) == start_ns(True) == START_NS
    assert Run(gctool.design("cyclic", n=6, s=1), VerifyRequest(), 1, 1).fixed == START_NS


def test_attack_counts_loading_the_kernels_too(monkeypatch: pytest.MonkeyPatch) -> None:
    """The exhaustive attack of real cyclic n=40 s=6 (3.8 M sets, the compiled walk): its
    refusal's estimate is KERNELS_LOAD_NS higher where no kernel has run."""
    from gctool.audit.attack import AttackOptions

    code = gctool.design("cyclic", n=40, s=6)

    def needed() -> float:
        options = AttackOptions(method="exhaustive", budget=Budget(max_work=0.005), jobs=1,
                                symmetry=False)
        with pytest.raises(BudgetExceeded) as info:
            gctool.attack(code, 6, options)
        assert info.value.needed is not None
        return info.value.needed

    warm = needed()
    monkeypatch.setattr("gctool.compiled.kernels_loaded", lambda: False)
    monkeypatch.setattr("gctool.compiled.numba_imported", lambda: False)  # a fresh process
    assert needed() - warm == pytest.approx(KERNELS_LOAD_NS / NS_PER_S)


def test_frame_spectra_count_loading_the_kernels_too(monkeypatch: pytest.MonkeyPatch) -> None:
    """The spectral audit of an encoded frame on its compiled walk (GCTOOL_COMPILED=1, the
    Fano plane's 28 rows at s = 4): KERNELS_LOAD_NS higher where no kernel has run; on numpy
    (GCTOOL_COMPILED=0) the same in both.  (A budget of 100 us lets the frame's one-off
    analysis through, its 7 x 7 Gram's eigenvalues about 3 us, and refuses the walk.)"""
    from gctool.audit.spectrum import worst_spectrum

    code = gctool.design("encoded", frame="steiner", system="pg-2", s=1)

    def needed(mode: str) -> float:
        monkeypatch.setenv("GCTOOL_COMPILED", mode)
        with pytest.raises(BudgetExceeded) as info:
            worst_spectrum(code, 4, budget=Budget(max_work=1e-4))
        assert info.value.needed is not None
        return info.value.needed

    warm = needed("1"), needed("0")
    monkeypatch.setattr("gctool.compiled.kernels_loaded", lambda: False)
    monkeypatch.setattr("gctool.compiled.numba_imported", lambda: False)  # a fresh process
    assert needed("1") - warm[0] == pytest.approx(KERNELS_LOAD_NS / NS_PER_S)
    assert needed("0") == warm[1]


def test_frame_spectra_on_dask_count_the_workers_loading_the_kernels(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The spectral audit of an encoded frame on a Dask runner's workers (GCTOOL_COMPILED=1):
    KERNELS_LOAD_NS (and WORKER_IMPORT_NS: its workers were not asked whether they have
    imported gctool) higher than on local threads in this warm process, until a compiled audit
    has run on that runner (its tasks run here, on threads: :func:`gctool.audit.distributed.ran_on`
    after it); on numpy the same in both."""
    pytest.importorskip("distributed")
    from gctool.audit import spectrum
    from gctool.audit.distributed import WORKER_IMPORT_NS, DaskRunner

    code = gctool.design("encoded", frame="steiner", system="pg-2", s=1)
    runner = DaskRunner(scheduler="tcp://127.0.0.1:8786")  # never contacted

    def needed(mode: str, on: object = None) -> float:
        monkeypatch.setenv("GCTOOL_COMPILED", mode)
        with pytest.raises(BudgetExceeded) as info:
            spectrum.worst_spectrum(code, 4, budget=Budget(max_work=1e-4),
                                    runner=on)  # type: ignore[arg-type]
        assert info.value.needed is not None
        return info.value.needed

    local = needed("1")
    assert needed("1", runner) - local == pytest.approx(
        (KERNELS_LOAD_NS + WORKER_IMPORT_NS) / NS_PER_S)
    assert needed("0", runner) == needed("0")
    from gctool.engine.threads import run_threads

    monkeypatch.setattr(DaskRunner, "__call__", lambda self, *a: run_threads(*a))  # (here)
    monkeypatch.setenv("GCTOOL_COMPILED", "1")
    local_report = spectrum.worst_spectrum(code, 2)
    assert not runner.kernels_warm()
    assert spectrum.worst_spectrum(code, 2, runner=runner).epsilon == local_report.epsilon
    assert runner.kernels_warm() and needed("1", runner) == pytest.approx(local)


def _threshold_time(code: gctool.GradientCode, top: int, runner: object = None
                    ) -> tuple[float, list[float]]:
    """The threshold search's estimate (s) of every size up to ``top`` as it admits them in
    order (no probe: the calibrated rates), and what each size was charged for loading the
    kernels."""
    from gctool.audit import exhaustive
    from gctool.audit.oracles import make_oracle

    oracle = make_oracle(code, budget=Budget(max_work=1e6))
    search = exhaustive._SearchBudget(oracle, 1, runner,  # type: ignore[arg-type]
                                      None, oracle.limit, top)
    loads = []
    for t in range(top + 1):
        assert search(t, 0, comb(code.n, t)) is None
        loads.append(search.loading(t, comb(code.n, t)))
    return search.time, loads


def test_the_threshold_search_counts_loading_the_kernels_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """attack --threshold's search (real cyclic n=40 s=6, sizes 0-7, the large ones on the
    compiled walk): its estimate is KERNELS_LOAD_NS higher where no kernel has run when it
    begins, charged once, to the first size that walks compiled (as verify and the worst-case
    search count it, before a probe loads them); on numpy alone (GCTOOL_COMPILED=0) the same
    in both."""
    import numpy as np

    from gctool.audit import exhaustive

    monkeypatch.setattr(exhaustive, "probe_rate", lambda *a, **k: None)  # calibrated rates
    code = gctool.design("cyclic", n=40, s=6)
    warm, warm_loads = _threshold_time(code, 7)
    assert warm_loads == [0.0] * 8
    from gctool.audit.oracles import make_oracle

    sizes = exhaustive._SearchBudget(make_oracle(code), 1, None, None, np.inf, 7)
    compiled = [sizes.work(t, comb(40, t))[1] for t in range(8)]
    assert any(compiled[1:])
    monkeypatch.setattr("gctool.compiled.kernels_loaded", lambda: False)
    monkeypatch.setattr("gctool.compiled.numba_imported", lambda: False)  # a fresh process
    cold, loads = _threshold_time(code, 7)
    assert cold - warm == pytest.approx(KERNELS_LOAD_NS / NS_PER_S)
    assert loads.count(KERNELS_LOAD_NS / NS_PER_S) == 1 and sum(loads) == max(loads)
    first = loads.index(max(loads))
    assert [t for t in range(1, 8) if compiled[t]][0] == first
    monkeypatch.setenv("GCTOOL_COMPILED", "0")
    assert _threshold_time(code, 7)[1] == [0.0] * 8


def test_dask_workers_count_loading_the_kernels_until_they_have(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """On a Dask runner the workers load their own kernels (in this warm process): verify of
    real cyclic n=48 s=6 (compiled) is estimated KERNELS_LOAD_NS (and WORKER_IMPORT_NS: its
    workers are not asked whether they have imported gctool) higher than on local threads
    until the runner has run a compiled enumeration on its scheduler's workers
    (:meth:`DaskRunner.loaded`, through the runner an enumeration is given); the threshold
    search charges it once, to its first compiled size sent to the cluster.  A local cluster
    started per call never keeps them; a session's keeps them while its client lives."""
    pytest.importorskip("distributed")
    from gctool.audit import distributed, exhaustive
    from gctool.audit.distributed import (
        WORKER_IMPORT_NS,
        DaskRunner,
        estimated,
        kernels_load_ns,
        workers_start_ns,
    )

    load = (KERNELS_LOAD_NS + WORKER_IMPORT_NS) / NS_PER_S
    code = gctool.design("cyclic", n=48, s=6)
    runner = DaskRunner(scheduler="tcp://127.0.0.1:8786")  # never contacted: refused before
    assert workers_start_ns(runner, True) == KERNELS_LOAD_NS + WORKER_IMPORT_NS
    assert workers_start_ns(runner, False) == workers_start_ns(None, True) == 0.0

    def needed(on: object) -> float:
        request = VerifyRequest(s=6, method="exhaustive", jobs=1, budget=Budget(max_work=0.005),
                                runner=on)  # type: ignore[arg-type]
        with pytest.raises(BudgetExceeded) as info:
            gctool.verify(code, request=request)
        assert info.value.needed is not None
        return info.value.needed

    local = needed(None)
    assert needed(runner) - local == pytest.approx(load)
    monkeypatch.setattr(exhaustive, "probe_rate", lambda *a, **k: None)
    small = gctool.design("cyclic", n=40, s=6)
    _, on_threads = _threshold_time(small, 7)
    _, on_workers = _threshold_time(small, 7, DaskRunner(scheduler="tcp://127.0.0.1:8786"))
    assert sum(on_threads) == 0.0 and sum(on_workers) == pytest.approx(load)
    assert on_workers.count(load) == 1
    # an enumeration given the runner as compiled marks its workers (the call itself faked)
    monkeypatch.setattr(DaskRunner, "__call__", lambda self, *a: None)
    estimated(runner, 1.0, False)(None, [], 1, lambda i, r: False)
    assert not runner.kernels_warm()
    estimated(runner, 1.0, True)(None, [], 1, lambda i, r: False)
    assert runner.kernels_warm() and needed(runner) == pytest.approx(local)
    own = DaskRunner()  # a LocalCluster per call
    estimated(own, 1.0, True)(None, [], 1, lambda i, r: False)
    assert not own.kernels_warm() and kernels_load_ns(own, True) == load * NS_PER_S
    session, client = DaskRunner(), object()
    session._session_client = client
    distributed.estimated(session, 1.0, True)(None, [], 1, lambda i, r: False)
    assert session.kernels_warm()
    session._session_client = object()  # its connection lost: a new cluster
    assert not session.kernels_warm()


LOAD_AFTER_NUMBA = """
import gctool
from gctool.budget import local_load_ns, start_ns
seen = [local_load_ns(), start_ns(True) - start_ns(False)]
import numba  # as a run on numpy over GF(q) imports it, before a compiled run
seen += [local_load_ns(), start_ns(True) - start_ns(False)]
print(seen)
"""


def test_a_process_that_imported_numba_is_not_charged_its_import_again() -> None:
    """In a fresh process a compiled run is charged KERNELS_LOAD_NS; once numba is imported
    (a run on numpy over GF(q) imports it), NUMBA_IMPORT_NS less (bench_budget's fresh
    processes, warmed by such a run: verify of GF(2^5) n=31 s=6, 0.27 s of CPU, read 0.44 of
    an estimate that charged numba's import)."""
    from gctool.budget import NUMBA_IMPORT_NS

    out = subprocess.run([sys.executable, "-c", LOAD_AFTER_NUMBA], capture_output=True,
                         text=True, check=True, timeout=300)
    full, less = float(KERNELS_LOAD_NS), float(KERNELS_LOAD_NS - NUMBA_IMPORT_NS)
    assert out.stdout.strip() == str([full, full, less, less])
    assert 0 < NUMBA_IMPORT_NS < KERNELS_LOAD_NS


KINDS_IN_TURN = """
import gctool
from gctool import budget
from gctool.audit import kernels

load, charged = budget.local_load_ns, []

def spy(kind=True, loaded=None):  # what each run's estimate charges for loading kernels
    charged[-1].append(load(kind, loaded))
    return charged[-1][-1]

budget.local_load_ns = spy
reports = []

def run(code):
    charged.append([])
    report = gctool.verify(code, method="exhaustive", jobs=1).to_dict()
    reports.append({k: v for k, v in report.items() if k not in ("elapsed_s", "estimate")})
    charged[-1].append([kernels.GF.loaded(), kernels.REAL.loaded()])

run(gctool.design("cyclic-mds", n=31, s=4, field="GF(2^5)"))
charged.append([])  # the design's conditioning screen is verify's: it loads the real kind
real = gctool.design("cyclic", n=30, s=4)
charged[-1].append([kernels.GF.loaded(), kernels.REAL.loaded()])
run(real)
run(real)
print(charged)
print(reports[1] == reports[2], reports[0]["ok"], reports[1]["ok"])
"""


def test_a_process_is_charged_each_kind_of_kernels_it_has_not_loaded() -> None:
    """In one process (a fresh one: this one's kernels are warm), a GF(2^5) verify that walks
    compiled is charged the whole load, a real design after it KIND_LOAD_NS for the real
    kernels its conditioning screen (verify's) loads, not nothing (it had been: any kernel
    counted as all), and the real verifies after it nothing; the two real reports are the same
    (but for their times)."""
    import os

    from gctool.budget import KIND_LOAD_NS, NUMBA_IMPORT_NS

    env = {**os.environ, "GCTOOL_COMPILED": "1"}  # (both walk compiled)
    out = subprocess.run([sys.executable, "-c", KINDS_IN_TURN], capture_output=True,
                         text=True, check=True, timeout=600, env=env)
    charged, same = out.stdout.strip().splitlines()

    def whole(numba: int) -> list[Any]:
        return [[float(KERNELS_LOAD_NS - numba), [True, False]],
                [float(KIND_LOAD_NS), [True, True]], [0.0, [True, True]], [0.0, [True, True]]]

    assert charged in (str(whole(0)), str(whole(NUMBA_IMPORT_NS)))  # (numba: galois's)
    assert same == "True True True"


def test_the_load_charged_follows_the_kinds_loaded() -> None:
    """local_load_ns by what a process has loaded (gctool.compiled.Loaded, as a threshold
    search keeps it, adding the kinds of the sizes it charged): the whole load with no kernel
    loaded (NUMBA_IMPORT_NS less once numba is imported), KIND_LOAD_NS for a kind not loaded
    beside others, nothing for a loaded kind, and a kind not named (True) counts as any (as
    a Dask runner remembers one its workers ran)."""
    from gctool.audit.kernels import COMPLEX, GF, REAL
    from gctool.budget import KIND_LOAD_NS, NUMBA_IMPORT_NS, local_load_ns
    from gctool.compiled import Loaded

    none = Loaded()
    assert local_load_ns(REAL, none) == local_load_ns(True, none) == KERNELS_LOAD_NS
    assert local_load_ns(REAL, Loaded(numba=True)) == KERNELS_LOAD_NS - NUMBA_IMPORT_NS
    gf = none.with_kind(GF)
    assert gf.numba and local_load_ns(GF, gf) == local_load_ns(True, gf) == 0.0
    assert local_load_ns(REAL, gf) == local_load_ns(COMPLEX, gf) == KIND_LOAD_NS
    both = gf.with_kind(REAL)
    assert local_load_ns(REAL, both) == 0.0 and local_load_ns(COMPLEX, both) == KIND_LOAD_NS
    unnamed = none.with_kind(True)
    assert local_load_ns(True, unnamed) == local_load_ns(REAL, unnamed) == 0.0


def test_the_threshold_search_charges_each_kind_it_walks_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A threshold search whose sizes walk several kinds of kernels (their kinds given here)
    charges each kind once, to its first size: here in a fresh process the first kind the
    whole load, each further kind KIND_LOAD_NS, a size that names no kind (True) nothing
    once a kind is loaded; on a scheduler's workers (not asked: fresh) the first kind their
    import and load, each further kind KIND_LOAD_NS; a size asked about again, the same."""
    pytest.importorskip("distributed")
    from gctool.audit import exhaustive
    from gctool.audit.distributed import WORKER_IMPORT_NS, DaskRunner
    from gctool.audit.kernels import COMPLEX, GF, REAL
    from gctool.audit.oracles import make_oracle
    from gctool.budget import KIND_LOAD_NS
    from gctool.compiled import Loaded

    kinds = [False, REAL, REAL, COMPLEX, GF, True, COMPLEX]
    monkeypatch.setattr(Loaded, "now", staticmethod(lambda: Loaded()))  # a fresh process
    oracle = make_oracle(gctool.design("cyclic", n=12, s=3))

    def charged(runner: object) -> list[float]:
        search = exhaustive._SearchBudget(oracle, 1, None, None, oracle.limit, 6)
        monkeypatch.setattr(search, "work", lambda t, need: (1.0, kinds[t]))
        monkeypatch.setattr(search, "runner_of", lambda t: runner)
        first = [search.loading(t, 1) * NS_PER_S for t in range(7)]
        assert [search.loading(t, 1) * NS_PER_S for t in range(7)] == first  # (asked again)
        return first

    def expected(first: float) -> list[float]:
        return [0.0, first, 0.0, KIND_LOAD_NS, KIND_LOAD_NS, 0.0, 0.0]

    assert charged(None) == pytest.approx(expected(KERNELS_LOAD_NS))
    workers = DaskRunner(scheduler="tcp://127.0.0.1:8786")  # never contacted
    assert charged(workers) == pytest.approx(expected(KERNELS_LOAD_NS + WORKER_IMPORT_NS))
