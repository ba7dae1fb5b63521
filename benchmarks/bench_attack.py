"""Benchmarks of ``gctool attack``.  Run: ``.venv/bin/python benchmarks/bench_attack.py``.

1. Exhaustive worst-case error, n = 24, s = 4 (10,626 sets): gctool's batched evaluation vs a
   Python loop of ``numpy.linalg.lstsq`` per set, in the same run.  Target: ratio >= 50.
2. ``greedy`` (column-support seeding + swaps + restarts) vs the exhaustive optimum on random
   0/1 codes with n = 10..16, load 3, s = 2..4.  Target: hit rate >= 95% over >= 100 instances.
3. Exact threshold of a real cyclic code (Tandon's CRC, n = 40, s = 6) with ``elementary``
   (and ``milp`` where it finishes).  Target: under 60 s; prints how the time grows with n.
4. Exhaustive worst case of an ill-conditioned code (random real n = K = 32, cond 1e6, s = 5:
   no fast path, every set an SVD by numpy's decoder before the compiled brackets of
   :mod:`gctool.audit.kernels.direct`): the numpy route (``GCTOOL_COMPILED=0``) against the
   compiled walk, ``--jobs`` 1 and 2, interleaved rounds (median wall and CPU, reports equal),
   and the per-set cost of the brackets against numpy's decoder on the same sets, one thread.

``--quick`` runs smaller versions (for a smoke test).
"""

from __future__ import annotations

import itertools
import time
from functools import partial
from math import comb

import numpy as np
import readme
from timing import parser, timed

from gctool.algebra.fields import parse_field
from gctool.audit.attack import attack, threshold
from gctool.budget import Budget
from gctool.codes import design
from gctool.model import GradientCode


def random_01(n: int, load: int, rng: np.random.Generator) -> GradientCode:
    B = np.zeros((n, n))
    for i in range(n):
        B[i, rng.choice(n, size=load, replace=False)] = 1
    return GradientCode(B, parse_field("real"), 0, "random-01")


def lstsq_loop(B: np.ndarray, s: int) -> float:
    n, k = B.shape
    ones, worst = np.ones(k), -1.0
    for S in itertools.combinations(range(n), s):
        A = B[[i for i in range(n) if i not in S]].T
        a = np.linalg.lstsq(A, ones, rcond=None)[0]
        worst = max(worst, float(np.sum((A @ a - ones) ** 2)))
    return worst


def bench_exhaustive(n: int, s: int) -> None:
    print(f"== 1. exhaustive worst case, n = {n}, s = {s} ==")
    rng = np.random.default_rng(0)
    codes = {"random 0/1, load 3": random_01(n, 3, rng),
             "random real, load 3": GradientCode(random_01(n, 3, rng).B
                                                 * rng.standard_normal((n, n)),
                                                 parse_field("real"), 0),
             f"cyclic (CRC), s = {s - 2}": design("cyclic", n, s - 2, seed=1)}
    for name, code in codes.items():
        ref, t_loop = timed(partial(lstsq_loop, np.asarray(code.B), s))
        r, t_fast = timed(partial(attack, code, s, method="exhaustive", symmetry=False))
        assert r.raw_error is not None and abs(r.raw_error - ref) <= 1e-6 * max(1.0, ref)
        print(f"  {name:<26} lstsq loop {t_loop:7.3f} s   gctool {t_fast:7.4f} s   "
              f"ratio {t_loop / t_fast:6.1f}x   (worst error {ref:.4g}, {r.checked:,} sets)")


def bench_greedy(instances: int) -> None:
    print(f"== 2. greedy vs exhaustive optimum, {instances} random 0/1 codes, load 3 ==")
    rng = np.random.default_rng(2024)
    hits = total = 0
    t_greedy = t_exact = 0.0
    for i in range(instances):
        n = int(rng.integers(10, 17))
        s = int(rng.integers(2, 5))
        code = random_01(n, 3, rng)
        g, t = timed(partial(attack, code, s, method="greedy", seed=i))
        t_greedy += t
        e, t = timed(partial(attack, code, s, method="exhaustive"))
        t_exact += t
        assert g.raw_error is not None and e.raw_error is not None
        total += 1
        hits += g.raw_error >= e.raw_error - 1e-9 * max(1.0, e.raw_error)
    print(f"  hit rate {hits}/{total} = {100 * hits / total:.1f}%   (greedy {t_greedy:.2f} s, "
          f"exhaustive {t_exact:.2f} s in total)")


def bench_threshold(sizes: list[int], s: int, milp_up_to: int) -> None:
    print(f"== 3. exact threshold of a real cyclic code (CRC, s = {s}) ==")
    for n in sizes:
        code = design("cyclic", n, s, seed=1)
        r, t_el = timed(partial(threshold, code, method="elementary", max_sets=10**9,
                                budget=Budget(max_work=3600)))  # (the CLI's default refuses n = 40)
        line = (f"  n = {n:>3}: T_0 = {r.threshold} ({'exact' if r.exact else 'heuristic'}) "
                f"elementary {t_el:7.2f} s")
        if n <= milp_up_to:
            m, t_milp = timed(partial(threshold, code, method="milp", time_limit=60))
            line += (f"   milp {t_milp:6.2f} s -> T_0 = {m.threshold} "
                     f"({'exact' if m.exact else 'not proved exact'})")
        print(line)


def ill_conditioned(n: int, cond: float, seed: int = 0) -> GradientCode:
    """A random real n x n code with singular values from 1 down to 1 / cond."""
    rng = np.random.default_rng(seed)
    U, _, Vh = np.linalg.svd(rng.standard_normal((n, n)))
    return GradientCode((U * np.logspace(0, -np.log10(cond), n)) @ Vh, parse_field("real"), 0)


def bench_ill_conditioned(n: int, s: int, rounds: int) -> None:
    import os
    import statistics

    from gctool.audit.kernels.direct import DirectBrackets
    from gctool.audit.oracles import OptimalOracle
    from gctool.engine.enumeration import survivors_of, unrank_lex

    print(f"== 4. exhaustive worst case, ill-conditioned random real n = K = {n} (cond 1e6), "
          f"s = {s} ==")
    code = ill_conditioned(n, 1e6)
    budget = Budget(max_work=3600)
    runs = {(mode, jobs): [] for mode in ("numpy", "compiled") for jobs in (1, 2)}
    reports = {}
    before = os.environ.get("GCTOOL_COMPILED")
    attack(code, s, method="exhaustive", symmetry=False, budget=budget)  # kernels loaded
    for _ in range(rounds):
        for (mode, jobs), times in runs.items():
            os.environ["GCTOOL_COMPILED"] = "0" if mode == "numpy" else "1"
            c0, w0 = time.process_time(), time.perf_counter()
            r = attack(code, s, method="exhaustive", symmetry=False, jobs=jobs, budget=budget)
            times.append((time.perf_counter() - w0, time.process_time() - c0))
            d = r.to_dict()
            for key in ("elapsed_s", "jobs", "estimate"):
                d.pop(key, None)
            reports[mode, jobs] = d
    if before is None:
        os.environ.pop("GCTOOL_COMPILED", None)
    else:
        os.environ["GCTOOL_COMPILED"] = before
    assert all(d == reports["numpy", 1] for d in reports.values()), "reports differ"
    wall = {key: statistics.median(w for w, _ in v) for key, v in runs.items()}
    for (mode, jobs), v in runs.items():
        print(f"  {mode:<8} --jobs {jobs}: wall {wall[mode, jobs]:7.3f} s   CPU (this process) "
              f"{statistics.median(c for _, c in v):7.3f} s")
    print(f"  --jobs 2 / --jobs 1 speed-up: numpy {wall['numpy', 1] / wall['numpy', 2]:.2f}x, "
          f"compiled {wall['compiled', 1] / wall['compiled', 2]:.2f}x;  compiled over numpy: "
          f"{wall['numpy', 1] / wall['compiled', 1]:.1f}x (--jobs 1), "
          f"{wall['numpy', 2] / wall['compiled', 2]:.1f}x (--jobs 2)   ({rounds} rounds, "
          "medians)")
    oracle = OptimalOracle(code)
    walk = DirectBrackets(oracle.decoder.Bn, oracle.decoder.T)
    count = min(20_000, comb(n, s))
    S = unrank_lex(n, s, np.arange(count))
    walk.walk(s, 0, 10)
    _, t_walk = timed(partial(walk.walk, s, 0, count), time.process_time)
    _, t_np = timed(partial(oracle.decoder.evaluate, survivors_of(S, n)), time.process_time)
    print(f"  per set, one thread: brackets {t_walk / count * 1e6:.1f} us, numpy's decoder "
          f"{t_np / count * 1e6:.1f} us ({t_np / t_walk:.1f}x)")


def main() -> None:
    args = parser(__doc__, quick="small sizes (smoke test)").parse_args()
    if args.quick:
        bench_exhaustive(14, 3)
        bench_greedy(10)
        bench_threshold([10, 16], 4, 10)
        bench_ill_conditioned(16, 3, 1)
        return
    bench_exhaustive(24, 4)
    bench_greedy(120)
    bench_threshold([10, 20, 30, 40], 6, 12)
    bench_ill_conditioned(32, 5, 3)


if __name__ == "__main__":
    with readme.section(__file__):
        main()
