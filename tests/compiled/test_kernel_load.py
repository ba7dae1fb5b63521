"""Loading the compiled kernels in a process that has run none (importing numba, reading the
kernels from its cache: about 0.5 s) is a fixed cost of the first compiled run there
(:func:`gctool.budget.start_ns`): verify's estimate counts it then, and not in a process whose
kernels have run (docs/performance.md, "Start-up costs")."""

from __future__ import annotations

import subprocess
import sys
from math import comb

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
    assert needed() - warm == pytest.approx(KERNELS_LOAD_NS / NS_PER_S)


def test_frame_spectra_count_loading_the_kernels_too(monkeypatch: pytest.MonkeyPatch) -> None:
    """The spectral audit of an encoded frame on its compiled walk (GCTOOL_COMPILED=1, the
    Fano plane's 28 rows at s = 4): KERNELS_LOAD_NS higher where no kernel has run; on numpy
    (GCTOOL_COMPILED=0) the same in both."""
    from gctool.audit.spectrum import worst_spectrum

    code = gctool.design("encoded", frame="steiner", system="pg-2", s=1)

    def needed(mode: str) -> float:
        monkeypatch.setenv("GCTOOL_COMPILED", mode)
        with pytest.raises(BudgetExceeded) as info:
            worst_spectrum(code, 4, budget=Budget(max_work=1e-6))
        assert info.value.needed is not None
        return info.value.needed

    warm = needed("1"), needed("0")
    monkeypatch.setattr("gctool.compiled.kernels_loaded", lambda: False)
    assert needed("1") - warm[0] == pytest.approx(KERNELS_LOAD_NS / NS_PER_S)
    assert needed("0") == warm[1]
