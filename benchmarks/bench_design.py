"""Benchmark of design's conditioning screen (``gctool design`` of real/complex codes whose
every straggler set is screened by the null-space bound, :mod:`gctool.codes.conditioning`).

Run: ``.venv/bin/python benchmarks/bench_design.py [--quick]``.

The worst bound ``kappa(B) / sigma_min(N_S)`` over every set of s stragglers and its set, two
ways in the same run (CPU time of this process, one thread):

* plain numpy: batched inverses of the s x s blocks, task by task (``_screen_numpy``);
* gctool: the compiled walk's certified intervals, then numpy on the few tasks that could hold
  the worst set (``_screen_walked``; the kernel is loaded before timing).

Target: gctool >= 5x plain numpy on cyclic n=40, s=6; both record the same bound and set.

Then ``design --jobs 1`` against ``--jobs 2`` (the compiled walk's threads,
:func:`gctool.codes.conditioning.screen_jobs`), wall time of the library call ``design(...,
jobs=J)`` with its conditioning computed again each time (the walk loaded), interleaved
(1, 2, 1, 2, ...: a slow spell of a shared host falls on both sides alike); per case the
median of each round's ratio ``--jobs 1`` / ``--jobs 2`` and the median wall and CPU times.
Both write the same file, byte for byte (checked).
"""

from __future__ import annotations

import statistics
import time
from functools import partial
from math import comb
from typing import Any

import numpy as np
import readme
from timing import parser, timed

from gctool.algebra.spectral import Spectral
from gctool.codes import conditioning, design
from gctool.io import code_bytes


def run(name: str, B: np.ndarray, s: int) -> None:
    sp = Spectral.of(B)
    total = comb(B.shape[0], s)
    conditioning._screen_walked(sp, s, min(total, s + 1))  # load the kernel (cached on disk)
    walked, t_walk = timed(lambda: conditioning._screen_walked(sp, s, total), time.process_time)
    plain, t_plain = timed(lambda: conditioning._screen_numpy(sp, s, total), time.process_time)
    assert walked == plain, (walked, plain)
    print(f"{name}, s = {s} ({total:,} sets, d = {sp.d}): plain numpy {t_plain:.2f}s, "
          f"gctool {t_walk:.2f}s CPU; gctool/plain {t_plain / t_walk:.1f}x; "
          f"bound {plain[0]:.6g} at {plain[1]}")


def jobs_ratio(name: str, rounds: int, **kwargs: Any) -> None:
    """``design(**kwargs)`` with ``jobs`` 1 and 2, interleaved: wall and CPU medians, the
    median of the rounds' wall ratios; the two files compared byte for byte."""
    times: dict[int, list[tuple[float, float]]] = {1: [], 2: []}
    files: dict[int, bytes] = {}

    def once(jobs: int) -> tuple[Any, float]:
        conditioning._SEEN.clear()  # the screen runs again
        return timed(lambda: design(**kwargs, jobs=jobs), time.process_time)

    for r in range(rounds + 1):  # round 0 warms up (kernel loaded, caches filled)
        for jobs in (1, 2):
            (code, cpu), wall = timed(partial(once, jobs))
            files[jobs] = code_bytes(code, False)
            if r:
                times[jobs].append((wall, cpu))
    assert files[1] == files[2], name
    ratio = statistics.median(a[0] / b[0] for a, b in zip(times[1], times[2], strict=True))
    walls = {j: statistics.median(w for w, _ in times[j]) for j in (1, 2)}
    cpus = {j: statistics.median(c for _, c in times[j]) for j in (1, 2)}
    print(f"{name}: design --jobs 1 {walls[1]:.2f}s wall ({cpus[1]:.2f}s CPU), --jobs 2 "
          f"{walls[2]:.2f}s wall ({cpus[2]:.2f}s CPU); --jobs 1 / --jobs 2 {ratio:.2f}x "
          f"(median of {rounds} interleaved rounds); same file")


def main() -> None:
    args = parser(__doc__).parse_args()
    n, s = (24, 4) if args.quick else (40, 6)
    for field in ("real", "complex"):
        B = np.asarray(design("cyclic", n, s, field=field, seed=1).B)
        run(f"cyclic {field} n={n} (seed 1)", B, s)
    if not args.quick:
        run("rs complex n=40", np.asarray(design("rs", 40, 5, field="complex").B), 5)
    rounds, (n, s) = (1, (36, 5)) if args.quick else (5, (n, s))  # screens that walk compiled
    for field in ("real", "complex"):
        jobs_ratio(f"cyclic {field} n={n} s={s} (seed 1)", rounds, scheme="cyclic", n=n, s=s,
                   field=field, seed=1)
    if not args.quick:
        jobs_ratio("rs complex n=40 s=5", rounds, scheme="rs", n=40, s=5, field="complex")


if __name__ == "__main__":
    with readme.section(__file__):
        main()
