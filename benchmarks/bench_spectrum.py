"""Benchmark of the spectral audit of encoded frames (``gctool attack`` on ``encoded`` files).

Run: ``.venv/bin/python benchmarks/bench_spectrum.py [--quick]``.

The worst epsilon over every set of s stragglers of a Steiner ETF (n = 28, k = 7: tight, s x s
Gram matrices) and a Gaussian frame (not tight: k x k matrices), several ways in the same run:

* naive: a Python loop with one ``numpy.linalg.eigvalsh(S_F^T S_F)`` per set (once);
* plain numpy: gctool's enumeration with the k x k matrices ``G - S_S^T S_S`` in batches;
* numpy route: gctool's numpy batches (``GCTOOL_COMPILED=0``: the s x s Gram matrices of the
  stragglers for tight frames, gathered from S S^T);
* compiled: gctool's compiled walk (``GCTOOL_COMPILED=1``, :mod:`gctool.audit.kernels.spectra`:
  each set's eigenvalues from LAPACK in numba, the chunk's picks without the GIL);

the last three with ``--jobs`` 1 and 2, interleaved in rounds (medians of wall and CPU time);
per set: CPU ns of one job, and the share of the CPU spent in the caller's thread at 2 jobs
(the serial part: with numpy's batches the pool threads hold the GIL for their gathers and
picks, with the compiled walk only between chunks).

The cut-off of the walk's own eigenvalue loops (:data:`gctool.audit.kernels.symeig.MAX_SIDE`):
for sides 4 to 48, one symmetric eigenproblem per call from numba, by
:func:`~gctool.audit.kernels.symeig.eigvalsh_into` and by LAPACK (numba's
``np.linalg.eigvalsh``), interleaved: CPU ns per call on one thread, and with two threads
making the same calls at once, the CPU per call over one thread's (1.00: no contention) and
the wall speed-up (2 x the calls in the time of one thread's: 2.00 on two idle cores).

Target: gctool >= 10x the naive loop on the ETF; every method finds the same epsilon.
"""

from __future__ import annotations

import itertools
import os
import threading
import time
from math import comb
from typing import Any

from gctool._threads import pin_blas_threads

pin_blas_threads()  # before numpy: as the CLI

import numpy as np  # noqa: E402
import readme  # noqa: E402
from timing import parser, timed  # noqa: E402

from gctool.audit import spectrum  # noqa: E402
from gctool.audit.kernels.symeig import MAX_SIDE, eigvalsh_into  # noqa: E402
from gctool.codes import design  # noqa: E402
from gctool.compiled._jit import njit  # noqa: E402

#: timed rounds of every gctool route and --jobs (interleaved; medians)
ROUNDS = 5


def naive(S: np.ndarray, s: int) -> float:
    n, k = S.shape
    worst = -np.inf
    for St in itertools.combinations(range(n), s):
        F = [i for i in range(n) if i not in St]
        ev = np.linalg.eigvalsh(S[F].T @ S[F]) * k / len(F)
        worst = max(worst, 1 - ev[0], ev[-1] - 1)
    return float(worst)


def _plain_frame(orig: Any) -> Any:
    def no_gram(S_: np.ndarray, *args: Any, **kwargs: Any) -> spectrum.Frame:
        f = orig(S_, *args, **kwargs)
        f.tight = False
        return f
    return staticmethod(no_gram)


def once(code: Any, s: int, mode: str, jobs: int) -> tuple[float, float, float, float]:
    """(epsilon, wall, CPU of the process, CPU of the caller's thread) of one audit on route
    ``mode`` (plain: numpy's k x k batches; numpy; compiled)."""
    os.environ["GCTOOL_COMPILED"] = "1" if mode == "compiled" else "0"
    orig = spectrum.Frame.of
    if mode == "plain":
        spectrum.Frame.of = _plain_frame(orig)  # type: ignore[method-assign]
    try:
        c0, t0, w0 = time.process_time(), time.thread_time(), time.perf_counter()
        eps = spectrum.worst_spectrum(code, s, jobs=jobs).epsilon
        return (eps, time.perf_counter() - w0, time.process_time() - c0,
                time.thread_time() - t0)
    finally:
        spectrum.Frame.of = orig  # type: ignore[method-assign]
        os.environ.pop("GCTOOL_COMPILED", None)


def median(values: list[float]) -> float:
    return float(np.median(values))


def run(name: str, code: Any, s: int) -> None:
    S = np.asarray(code.B, dtype=float)
    sets = comb(S.shape[0], s)
    ref, t_naive = timed(lambda: naive(S, s))
    runs = [(mode, jobs) for mode in ("plain", "numpy", "compiled") for jobs in (1, 2)]
    for mode, jobs in runs:  # warm: kernels compiled or loaded
        once(code, s, mode, jobs)
    got: dict[tuple[str, int], list[tuple[float, float, float, float]]] = {r: [] for r in runs}
    for _ in range(ROUNDS):
        for mode, jobs in runs:
            got[(mode, jobs)].append(once(code, s, mode, jobs))
    wall = {r: median([g[1] for g in v]) for r, v in got.items()}
    cpu = {r: median([g[2] for g in v]) for r, v in got.items()}
    caller = {r: median([g[3] / max(g[2], 1e-9) for g in v]) for r, v in got.items()}
    for r, v in got.items():
        assert all(abs(g[0] - ref) <= 1e-9 for g in v), (r, [g[0] for g in v], ref)
    fast = wall[("compiled", 1)]
    print(f"{name}, s = {s} ({sets:,} sets): naive {t_naive:.3f}s, plain numpy "
          f"{wall[('plain', 1)]:.3f}s, numpy route {wall[('numpy', 1)]:.3f}s, compiled "
          f"{fast:.3f}s; compiled/naive {t_naive / fast:.1f}x, compiled/plain "
          f"{wall[('plain', 1)] / fast:.1f}x; epsilon {ref:.6g}")
    for mode in ("numpy", "compiled"):
        print(f"  {mode + ' route':15s} per set {cpu[(mode, 1)] / sets * 1e9:5.0f} ns CPU; "
              f"--jobs 2: {wall[(mode, 1)] / wall[(mode, 2)]:.2f}x the wall of --jobs 1, "
              f"caller's thread {caller[(mode, 2)]:.0%} of the CPU")


@njit
def _calls(A: Any, reps: int, lapack: bool, out: Any) -> None:
    """``reps`` eigenproblems of A (its corner nudged each time), by LAPACK or the walk's
    loops; the sum of their largest eigenvalues in out[0] (so none is skipped)."""
    n = A.shape[0]
    M, w, e = np.empty((n, n)), np.empty(n), np.empty(n)
    acc = 0.0
    for r in range(reps):
        for i in range(n):
            for j in range(n):
                M[i, j] = A[i, j]
        M[0, 0] += r * 1e-12
        if lapack:
            acc += np.linalg.eigvalsh(M)[n - 1]
        else:
            eigvalsh_into(M, n, w, e)
            acc += w[n - 1]
    out[0] = acc


def _threads(A: np.ndarray, reps: int, lapack: bool, threads: int) -> tuple[float, float]:
    """(wall, CPU of the process) of ``threads`` threads each making ``reps`` calls."""
    outs = [np.zeros(1) for _ in range(threads)]
    pool = [threading.Thread(target=_calls, args=(A, reps, lapack, o)) for o in outs]
    c0, w0 = time.process_time(), time.perf_counter()
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    return time.perf_counter() - w0, time.process_time() - c0


def cutoff(sides: tuple[int, ...], budget_ns: float) -> None:
    """The walk's eigenvalue loops against LAPACK by side, on one and two threads."""
    print(f"\ncut-off (MAX_SIDE = {MAX_SIDE}): one eigenproblem per call from numba; medians of "
          f"{ROUNDS} interleaved rounds")
    print("| side | loops ns/call | LAPACK ns/call | loops / LAPACK | 2 threads: CPU per call "
          "over 1 (loops, LAPACK) | 2 threads: speed-up (loops, LAPACK) |")
    print("|---:|---:|---:|---:|---:|---:|")
    rng = np.random.default_rng(1)
    for n in sides:
        X = rng.standard_normal((n + 3, n))
        A = X.T @ X
        reps = max(200, int(budget_ns / (40 * n**3 + 600)))
        for lapack in (False, True):
            _threads(A, 10, lapack, 1)  # compiled
        got: dict[tuple[bool, int], list[tuple[float, float]]] = {}
        for _ in range(ROUNDS):
            for lapack, threads in itertools.product((False, True), (1, 2)):
                got.setdefault((lapack, threads), []).append(_threads(A, reps, lapack, threads))
        wall = {r: median([g[0] for g in v]) for r, v in got.items()}
        cpu = {r: median([g[1] for g in v]) for r, v in got.items()}
        per = {r: cpu[r] / reps / r[1] * 1e9 for r in cpu}
        print(f"| {n} | {per[(False, 1)]:.0f} | {per[(True, 1)]:.0f} | "
              f"{per[(False, 1)] / per[(True, 1)]:.2f} | {per[(False, 2)] / per[(False, 1)]:.2f}, "
              f"{per[(True, 2)] / per[(True, 1)]:.2f} | "
              f"{2 * wall[(False, 1)] / wall[(False, 2)]:.2f}x, "
              f"{2 * wall[(True, 1)] / wall[(True, 2)]:.2f}x |")


def main() -> None:
    quick = parser(__doc__).parse_args().quick
    s = 3 if quick else 5
    print(f"wall: medians of {ROUNDS} interleaved rounds (one run of the naive loop); CPU of "
          "this process; BLAS on one thread")
    run("Steiner ETF pg-2 (n=28, k=7)", design("encoded", frame="steiner", system="pg-2", s=1),
        s)
    run("Gaussian frame (n=28, k=7)", design("encoded", frame="gaussian", workers=28, k=7, s=1,
                                             seed=1), s)
    cutoff((4, 7) if quick else (4, 7, 12, 16, 20, 24, 32, 48), 2e7 if quick else 2e8)


if __name__ == "__main__":
    with readme.section(__file__):
        main()
