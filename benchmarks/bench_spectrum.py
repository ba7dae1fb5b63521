"""Benchmark of the spectral audit of encoded frames (``gctool attack`` on ``encoded`` files).

Run: ``.venv/bin/python benchmarks/bench_spectrum.py [--quick]``.

The worst epsilon over every set of s stragglers of a Steiner ETF (n = 28, k = 7) and a
Gaussian frame, three ways in the same run:

* naive: a Python loop with one ``numpy.linalg.eigvalsh(S_F^T S_F)`` per set;
* plain numpy: gctool's enumeration with the k x k matrices ``G - S_S^T S_S`` in batches;
* gctool: the same enumeration with the s x s Gram matrices of the stragglers for tight frames
  (``gctool.audit.spectrum``); for a frame that is not tight the two batched paths coincide.

Target: gctool >= 10x the naive loop on the ETF; every method finds the same epsilon.
"""

from __future__ import annotations

import itertools
from math import comb
from typing import Any

import numpy as np
import readme
from timing import parser, timed

from gctool.audit import spectrum
from gctool.codes import design


def naive(S: np.ndarray, s: int) -> float:
    n, k = S.shape
    worst = -np.inf
    for St in itertools.combinations(range(n), s):
        F = [i for i in range(n) if i not in St]
        ev = np.linalg.eigvalsh(S[F].T @ S[F]) * k / len(F)
        worst = max(worst, 1 - ev[0], ev[-1] - 1)
    return float(worst)


def run(name: str, code, s: int) -> None:  # type: ignore[no-untyped-def]
    S = np.asarray(code.B, dtype=float)
    ref, t_naive = timed(lambda: naive(S, s))
    fast, t_fast = timed(lambda: spectrum.worst_spectrum(code, s).epsilon)
    orig = spectrum.Frame.of
    try:  # the plain batched k x k path
        def no_gram(S_: np.ndarray, *args: Any, **kwargs: Any) -> spectrum.Frame:
            f = orig(S_, *args, **kwargs)
            f.tight = False
            return f
        spectrum.Frame.of = staticmethod(no_gram)  # type: ignore[method-assign]
        plain, t_plain = timed(lambda: spectrum.worst_spectrum(code, s).epsilon)
    finally:
        spectrum.Frame.of = orig  # type: ignore[method-assign]
    assert abs(fast - ref) <= 1e-9 and abs(plain - ref) <= 1e-9, (fast, plain, ref)
    print(f"{name}, s = {s} ({comb(S.shape[0], s):,} sets):"
          f" naive {t_naive:.3f}s, plain numpy {t_plain:.3f}s, gctool {t_fast:.3f}s; "
          f"gctool/naive {t_naive / t_fast:.1f}x, gctool/plain {t_plain / t_fast:.1f}x; "
          f"epsilon {fast:.6g}")


def main() -> None:
    s = 3 if parser(__doc__).parse_args().quick else 4
    run("Steiner ETF pg-2 (n=28, k=7)", design("encoded", frame="steiner", system="pg-2", s=1),
        s)
    run("Gaussian frame (n=28, k=7)", design("encoded", frame="gaussian", workers=28, k=7, s=1,
                                             seed=1), s)


if __name__ == "__main__":
    with readme.section(__file__):
        main()
