"""Benchmark of design's conditioning screen (``gctool design`` of real/complex codes whose
every straggler set is screened by the null-space bound, :mod:`gctool.codes.conditioning`).

Run: ``.venv/bin/python benchmarks/bench_design.py [--quick]``.

The worst bound ``kappa(B) / sigma_min(N_S)`` over every set of s stragglers and its set, two
ways in the same run (CPU time of this process, one thread):

* plain numpy: batched inverses of the s x s blocks, task by task (``_screen_numpy``);
* gctool: the compiled walk's certified intervals, then numpy on the few tasks that could hold
  the worst set (``_screen_walked``; the kernel is loaded before timing).

Target: gctool >= 5x plain numpy on cyclic n=40, s=6; both record the same bound and set.
"""

from __future__ import annotations

import time
from math import comb

import numpy as np
import readme
from timing import parser, timed

from gctool.algebra.spectral import Spectral
from gctool.codes import conditioning, design


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


def main() -> None:
    args = parser(__doc__).parse_args()
    n, s = (30, 5) if args.quick else (40, 6)
    for field in ("real", "complex"):
        B = np.asarray(design("cyclic", n, s, field=field, seed=1).B)
        run(f"cyclic {field} n={n} (seed 1)", B, s)
    if not args.quick:
        run("rs complex n=40", np.asarray(design("rs", 40, 5, field="complex").B), 5)


if __name__ == "__main__":
    with readme.section(__file__):
        main()
