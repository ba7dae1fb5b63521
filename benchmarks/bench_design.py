"""Benchmark of design's screen of every straggler set (``gctool design`` of real/complex codes
whose conditioning record screens every set with verify's own enumeration,
:mod:`gctool.codes.conditioning`).

Run: ``.venv/bin/python benchmarks/bench_design.py [--quick]``.

``design --jobs 1`` against ``--jobs 2`` (verify's enumeration on those jobs,
:func:`gctool.codes.conditioning.screen_jobs`), wall time of the library call ``design(...,
jobs=J)`` with its conditioning computed again each time (the kernels loaded), interleaved
(1, 2, 1, 2, ...: a slow spell of a shared host falls on both sides alike); per case the
median of each round's ratio ``--jobs 1`` / ``--jobs 2`` and the median wall and CPU times.
Both write the same file, byte for byte (checked), whose record is labelled exact.
"""

from __future__ import annotations

import statistics
import time
from functools import partial
from typing import Any

import readme
from timing import parser, timed

from gctool.codes import conditioning, design
from gctool.io import code_bytes


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
    assert code.params["worst_condition_kind"] != "estimate", name  # every set screened
    ratio = statistics.median(a[0] / b[0] for a, b in zip(times[1], times[2], strict=True))
    walls = {j: statistics.median(w for w, _ in times[j]) for j in (1, 2)}
    cpus = {j: statistics.median(c for _, c in times[j]) for j in (1, 2)}
    print(f"{name}: design --jobs 1 {walls[1]:.2f}s wall ({cpus[1]:.2f}s CPU), --jobs 2 "
          f"{walls[2]:.2f}s wall ({cpus[2]:.2f}s CPU); --jobs 1 / --jobs 2 {ratio:.2f}x "
          f"(median of {rounds} interleaved rounds); same file")


def main() -> None:
    args = parser(__doc__).parse_args()
    rounds, (n, s) = (1, (24, 6)) if args.quick else (5, (40, 6))
    for field in ("real", "complex"):
        jobs_ratio(f"cyclic {field} n={n} s={s} (seed 1)", rounds, scheme="cyclic", n=n, s=s,
                   field=field, seed=1)
    if not args.quick:
        jobs_ratio("rs complex n=40 s=5", rounds, scheme="rs", n=40, s=5, field="complex")


if __name__ == "__main__":
    with readme.section(__file__):
        main()
