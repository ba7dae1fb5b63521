"""Fill numba's on-disk cache with every compiled kernel of gctool (a script, not a test module).

``python tests/warm_kernels.py`` compiles every kernel and prints those it left without a cache
entry, one a line (tests/compiled/test_warm_kernels.py fails on any); ``... 1/2`` and ``2/2``
run the two halves of :data:`PARTS` alone, in two processes at once.  tests/conftest.py runs
the halves in pytest-xdist's controller when the cache is cold (a fresh clone, as CI's), before
the workers run a test: compiling the kernels takes 2-3 minutes of CPU, which each worker
would otherwise spend at the first tests that walk compiled code.  Each kernel is compiled by
running it as the library does (``GCTOOL_COMPILED=1``, small codes whose rows and columns are
shuffled so that no symmetry or certificate skips the enumeration), on walks and on given sets,
over R, C, GF(p) and GF(2^m).  numba replaces its cache files atomically, so no process reads a
partial one."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

import gctool
from gctool.algebra.fields import parse_field
from gctool.codes import design
from gctool.engine.enumeration import unrank_lex
from gctool.model import GradientCode

#: (scheme, field) of n = 7, s = 2: every kind of compiled walk
KINDS = [("cyclic", "real"), ("cyclic-mds", "complex"), ("cyclic-mds", "GF(29)"),
         ("cyclic-mds", "GF(2^3)")]
TOL = 1e-9
#: the environment variable that names the report of the session's warm-up (tests/conftest.py):
#: a line for each part that failed (its exit status and the end of its output) and for each
#: kernel left without a cache entry
REPORT = "GCTOOL_WARM_REPORT"


def kernel_modules() -> list[str]:
    """gctool's modules that compile with numba (their source says ``njit``)."""
    root = Path(gctool.__file__).parent
    return sorted(".".join(f.relative_to(root.parent).with_suffix("").parts)
                  for f in root.rglob("*.py") if "njit" in f.read_text(encoding="utf-8"))


def kernels() -> dict[str, Any]:
    """Every compiled kernel of gctool by the ``module.name`` of its Python function (the
    simulator's are made on their first use: made here, unless ``GCTOOL_COMPILED=0``)."""
    import importlib

    from numba.core.dispatcher import Dispatcher

    from gctool.sim.sgc_search import _kernel

    _kernel()

    found: dict[str, Any] = {}
    for name in kernel_modules():
        for value in vars(importlib.import_module(name)).values():
            if isinstance(value, Dispatcher) and value.py_func.__module__.startswith("gctool"):
                found[f"{value.py_func.__module__}.{value.py_func.__qualname__}"] = value
    return found


def cold(found: dict[str, Any]) -> list[str]:
    """The kernels of ``found`` neither compiled nor loaded here and without a cache entry."""
    return [name for name, d in found.items()
            if not d.signatures and not os.path.exists(d._cache._cache_file._index_path)]


def shuffled(code: GradientCode) -> GradientCode:
    rng = np.random.default_rng(0)
    B = np.asarray(code.B)
    # C order, as the codes of the suite: a kernel's signature tells a read-only row-normalised
    # B (passed as it is) from a copy (made of a B in Fortran order, as the shuffle leaves it)
    B = np.ascontiguousarray(B[rng.permutation(B.shape[0])][:, rng.permutation(B.shape[1])])
    return GradientCode(B, code.field, code.s, "custom")


def _codes() -> list[tuple[str, GradientCode]]:
    return [(field, shuffled(design(scheme, n=7, s=2, field=field))) for scheme, field in KINDS]


def _ill(n: int, K: int, field: str) -> GradientCode:
    """A random n x K code of condition 1e6 (no fast path for attack's oracle)."""
    rng = np.random.default_rng(4)
    G = rng.standard_normal((n, K))
    if field == "complex":
        G = G + 1j * rng.standard_normal((n, K))
    U, _, Vh = np.linalg.svd(G, full_matrices=False)
    return GradientCode((U * np.logspace(0, -6, min(n, K))) @ Vh, parse_field(field), 0,
                        "custom")


def _failing(field: str) -> GradientCode:
    """n = 7, s = 2 (d = 2) with the straggler set {0, 6} failing (the direct decoder)."""
    from scipy.linalg import null_space

    rng = np.random.default_rng(1)
    N = rng.standard_normal((2, 7)).astype(complex if field == "complex" else float)
    if field == "complex":
        N += 1j * rng.standard_normal((2, 7))
    N[:, 6] = 2 * N[:, 0]
    return GradientCode(null_space(N), parse_field(field), 2, "custom")


def attack_walks() -> None:
    """The optimal decoder's walk and given sets, and the direct brackets (walk, range,
    sets) of codes off its fast path."""
    from gctool.audit.attack import attack
    from gctool.audit.kernels.direct import DirectBrackets
    from gctool.audit.kernels.optimal import _lost_bound
    from gctool.audit.oracles import OptimalOracle

    codes = _codes()[:2]
    for i, (field, code) in enumerate(codes):
        if i == 0:
            attack(code, 2, method="exhaustive")
            OptimalOracle(code).errors(unrank_lex(7, 2, np.arange(21)))
        for K in (8, 5):  # rank n: the walk with a floor; tall (n - s > K): the range
            oracle = OptimalOracle(_ill(8, K, field))
            walk = DirectBrackets(oracle.decoder.Bn, oracle.decoder.T)
            walk.walk(2, 0, 5)
            walk.sets(unrank_lex(8, 2, np.arange(5)))
    for field, code in codes:
        if field == "complex":
            attack(code, 2, method="exhaustive")
            OptimalOracle(code).errors(unrank_lex(7, 2, np.arange(21)))
        oracle = OptimalOracle(code)
        A = np.ascontiguousarray(oracle.Qperp[:3])  # the second stage's bound, called alone
        _lost_bound(A, np.ascontiguousarray(np.linalg.svd(A)[0]), 1)


def verify_walks() -> None:
    """verify's walks, and the given sets of the screen, its second stage, the direct
    decoder and the exact tests."""
    from gctool.audit import nullspace as ns
    from gctool.audit.verify import verify

    S = unrank_lex(7, 2, np.arange(21))
    for field, code in _codes():
        assert verify(code, 2, method="exhaustive").ok
        if field.startswith("GF"):
            gf = ns.GFNullKernel(code, ns.reduce_gf(code))
            gf.chunk_size(2)
            gf.evaluate(S)
            continue
        fails = _failing(field)
        real = ns.FloatNullKernel(fails, TOL, ns.reduce_float(fails, TOL))
        real.chunk_size(2)
        assert not real.evaluate(S).ok.all()


def frame_spectra() -> None:
    """The encoded frames' spectra: a walk, given (sampled) sets and sets one at a time, of a
    frame in Fortran order (Paley's: the walk takes a writable copy) and one in C order
    (Steiner's: the walk takes the read-only frame as it is)."""
    from gctool.audit.kernels.spectra import FrameWalk
    from gctool.audit.spectrum import Frame, frame_matrix, worst_spectrum

    for code in (design("encoded", frame="paley", workers=6, s=1),
                 design("encoded", frame="steiner", system="pg-2", s=1)):
        worst_spectrum(code, 2)
        worst_spectrum(code, 2, sample=3)
        fr = Frame.of(frame_matrix(code))
        walk = FrameWalk(fr.S, fr.G, fr.analysis.rows()[0], fr.c)
        walk.each(unrank_lex(fr.S.shape[0], 2, np.arange(3)), fr._small(2))


def called_alone() -> None:
    """Kernels that tests call with arrays of their own (writable, where the library passes a
    code's read-only ones): the third stage's direct decoder, the QL iteration; and the orbit
    filter, which the library calls with arrays of its own alike."""
    from gctool.audit.kernels.real import direct_sets
    from gctool.audit.kernels.symeig import _ql
    from gctool.compiled.orbits import canonical_range

    n, K = 4, 3
    direct_sets(np.array([[0]]), np.ones((n, K)), np.ones((1, K)), np.ones(n), 1.0,
                np.zeros(1, np.int64), np.zeros(1), np.zeros(1), np.zeros(1),
                np.zeros(n, np.bool_), np.zeros(n, np.int64))
    _ql(np.arange(3.0), np.ones(3), 3, 0)
    canonical_range(np.array([0, 1], dtype=np.int64), 3, 6, 3, True,  # the orbit filter
                    np.empty((3, 2), dtype=np.intp), np.ones(3, dtype=np.int64))


def simulator() -> None:
    """The sequential schemes' round loop (made and compiled on its first use)."""
    from gctool.sim.sgc_search import _kernel

    _kernel()


#: the steps, in two parts of about equal CPU time on a cold cache (each step's CPU there:
#: simulator 5, attack_walks 51, called_alone 4, verify_walks 63, frame_spectra 11 s)
PARTS = ((simulator, attack_walks, called_alone), (verify_walks, frame_spectra))


def main(argv: list[str]) -> int:
    os.environ["GCTOOL_COMPILED"] = "1"
    if argv:  # "i/2": part i alone
        part, parts = map(int, argv[0].split("/"))
        assert parts == len(PARTS), argv
        for step in PARTS[part - 1]:
            step()
        return 0
    for steps in PARTS:
        for step in steps:
            step()
    left = cold(kernels())
    print(*left, sep="\n")
    return 1 if left else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
