"""Benchmark of ``gctool verify`` against the naive per-set method, in the same run.

Naive method: a Python loop over every straggler set that solves the survivors' system on its
own - ``numpy.linalg.lstsq`` over the reals (the way the original gradient-coding code
decodes), galois ``matrix_rank`` of ``B_F`` and ``[B_F; 1]`` over GF(q).  For large cases the
naive loop runs on the first ``--naive-sets`` sets in lexicographic order and its rate is
extrapolated; its verdicts on those sets are checked against verify's.

Targets:
  * real Tandon cyclic code, n=24 s=4 and n=30 s=5: at least 50x the naive sets/s;
  * cyclic-mds over GF(2^4), n=15 s=6 (5005 sets): under 0.5 s;
  * cyclic-mds over GF(2^5), n=31 s=5: under 3 s.

Run:  .venv/bin/python benchmarks/bench_verify.py [--quick] [--jobs N] [--naive-sets N] [--json]

``--quick`` runs small codes (a smoke test).
"""

from __future__ import annotations

import argparse
import itertools
import json
import time
from math import comb
from typing import Any

import numpy as np
import readme
from timing import timed

from gctool.audit.verify import verify
from gctool.model import GradientCode


def cyclic_code(n: int, s: int) -> GradientCode:
    from gctool.codes import design

    return design("cyclic", n=n, s=s, seed=1)


def cyclic_mds(field: str, n: int, s: int) -> GradientCode:
    from gctool.codes import SCHEMES, design

    if "cyclic-mds" in SCHEMES:
        return design("cyclic-mds", n=n, s=s, field=field)
    import galois  # fallback: rows are the shifts of prod_{j=1..s} (x - alpha^j)

    from gctool.algebra.fields import parse_field

    f = parse_field(field).resolved()
    GF = f.galois()
    g = galois.Poly.Roots(GF.primitive_root_of_unity(n) ** np.arange(1, s + 1))
    c = np.zeros(n, dtype=np.int64)
    c[: g.degree + 1] = np.asarray(g.coeffs[::-1].view(np.ndarray))
    return GradientCode(np.array([np.roll(c, i) for i in range(n)]), f, s, "cyclic-mds")


def naive(code: GradientCode, s: int, limit: int) -> tuple[float, int, int]:
    """(seconds, sets done, failing sets) of the per-set loop on the first ``limit`` sets."""
    B, n, k = np.asarray(code.B), code.n, code.k
    ones = np.ones(k)
    GF = code.field.galois() if code.field.is_finite else None
    done = bad = 0
    start = time.perf_counter()
    for S in itertools.islice(itertools.combinations(range(n), s), limit):
        F = [i for i in range(n) if i not in S]
        if GF is None:
            a = np.linalg.lstsq(B[F].T, ones, rcond=None)[0]
            ok = float(np.sum(np.abs(B[F].T @ a - ones) ** 2)) <= 1e-9 * k
        else:
            BF = GF(B[F])
            aug = GF(np.vstack([B[F], np.ones((1, k), dtype=np.int64)]))
            ok = np.linalg.matrix_rank(aug) == np.linalg.matrix_rank(BF)
        done += 1
        bad += not ok
    return time.perf_counter() - start, done, bad


def timed_verify(code: GradientCode, s: int, **kw: Any) -> tuple[float, Any]:
    report, seconds = timed(lambda: verify(code, s, **kw))
    return seconds, report


def case(name: str, code: GradientCode, s: int, jobs: int, naive_sets: int,
         target: str) -> dict[str, Any]:
    total = comb(code.n, s)
    t_auto, r_auto = timed_verify(code, s, jobs=jobs, max_sets=10**9)
    t_one, _ = timed_verify(code, s, jobs=1, max_sets=10**9)
    t_exh, r_exh = timed_verify(code, s, jobs=jobs, method="exhaustive", max_sets=10**9)
    t_naive, done, bad = naive(code, s, min(total, naive_sets))
    rate_naive = done / t_naive
    row = {
        "case": name, "n": code.n, "s": s, "field": str(code.field), "sets": total,
        "ok": r_auto.ok, "method": r_auto.method, "kernel": r_auto.kernel,
        "auto_s": t_auto, "auto_1job_s": t_one, "exhaustive_s": t_exh,
        "auto_sets_per_s": total / t_auto, "exhaustive_sets_per_s": total / t_exh,
        "naive_sets_timed": done, "naive_sets_per_s": rate_naive,
        "naive_estimated_s": total / rate_naive,
        "ratio_auto": total / t_auto / rate_naive,
        "ratio_exhaustive": total / t_exh / rate_naive, "target": target,
        # the default and exhaustive verdicts are one; a failing set among the naive loop's
        # means verify fails; none, when the loop ran every set, that it is ok
        "agree": r_auto.ok == r_exh.ok and (not r_exh.ok if bad else r_exh.ok or done < total),
    }
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=0, help="processes (0 = every core)")
    parser.add_argument("--naive-sets", type=int, default=20_000,
                        help="sets timed for the naive loop (real fields)")
    parser.add_argument("--json", action="store_true", help="print JSON rows")
    parser.add_argument("--quick", action="store_true", help="small codes (a smoke test)")
    args = parser.parse_args()
    verify(cyclic_code(6, 1), 1)  # warm-up: imports
    # (n, s) of the two real codes, the GF(2^4) and the GF(2^5) one
    (r1, r2, g4, g5) = (((12, 2), (14, 3), (15, 3), (31, 2)) if args.quick
                        else ((24, 4), (30, 5), (15, 6), (31, 5)))
    naive_sets = min(args.naive_sets, 200) if args.quick else args.naive_sets
    gf_sets = min(naive_sets // 10 if args.quick else naive_sets, 2000)  # galois' rank is slow
    rows = [
        case("Tandon cyclic (real)", cyclic_code(*r1), r1[1], args.jobs, naive_sets,
             ">= 50x naive"),
        case("Tandon cyclic (real)", cyclic_code(*r2), r2[1], args.jobs, naive_sets,
             ">= 50x naive"),
        case("cyclic-mds GF(2^4)", cyclic_mds("GF(2^4)", *g4), g4[1], args.jobs, gf_sets,
             "< 0.5 s"),
        case("cyclic-mds GF(2^5)", cyclic_mds("GF(2^5)", *g5), g5[1], args.jobs, gf_sets,
             "< 3 s"),
    ]
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"{'case':24} {'n':>3} {'s':>2} {'sets':>8} {'auto s':>8} {'1 job s':>8} "
          f"{'exh. s':>8} {'naive/s':>9} {'auto/s':>10} {'exh./s':>10} {'ratio':>7} "
          f"{'exh.ratio':>9} {'agree':>5}  method (target)")
    for r in rows:
        print(f"{r['case']:24} {r['n']:>3} {r['s']:>2} {r['sets']:>8,} {r['auto_s']:>8.3f} "
              f"{r['auto_1job_s']:>8.3f} {r['exhaustive_s']:>8.3f} "
              f"{r['naive_sets_per_s']:>9,.0f} {r['auto_sets_per_s']:>10,.0f} "
              f"{r['exhaustive_sets_per_s']:>10,.0f} {r['ratio_auto']:>6.0f}x "
              f"{r['ratio_exhaustive']:>8.0f}x {r['agree']!s:>5}  {r['method']}/{r['kernel']} "
              f"({r['target']})")
    print("auto = default verify (cheap checks, certificates, symmetry, nullspace kernel); "
          "exh. = --method exhaustive (every set, no shortcuts); naive = per-set "
          "lstsq / galois matrix_rank loop (rate over the sets timed, extrapolated); "
          "agree = auto, exh. and the naive loop's verdicts on its sets agree")


if __name__ == "__main__":
    with readme.section(__file__):
        main()
