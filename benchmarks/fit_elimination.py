"""Benchmark of the GF(q) elimination estimate: ``elimination_cost`` against the elimination.

``gctool.algebra.linalg.elimination_cost`` estimates one exact elimination of a whole matrix
over GF(q): the rank that ``bound`` and the elementary-vector search compute
(``gctool.algebra.linalg.matrix_rank``: Gauss-Jordan over int64 arrays) and verify's
reduction of B over GF(q).  This script times ``matrix_rank`` itself on a spread of matrices:
GF(2^m) with a product table (GF(2^8)), with log/exp tables and a logarithm for 0 (GF(2^12),
GF(2^16)) and with those tables out of the caches (GF(2^17)-GF(2^22), the largest with
tables), prime fields from GF(2) to GF(65521) and GF(65537), GF(3^4), GF(257^2) and GF(3^12)
(tables, additions digit by digit), GF(2^31), GF(7^11) and GF(46337^2) (above the tables:
polynomial products, an inverse per pivot); shapes from 50 x 50 to 4000 x 4000, tall and
wide, of full rank and deficient (a random product of rank r, or r distinct rows repeated as a
fractional repetition code's), random and structured (cyclic-MDS and rs designs).

Each case runs in ``--processes`` fresh processes (default 3; a user's command line is one):

* fresh: the first elimination of the process (what ``gctool bound`` runs), median over the
  processes, wall time and CPU time (the kernel's included: a loaded machine disturbs it
  less);
* again: the same elimination repeated in the same process;
* warm heap: repeated after the process freed a 30 MB buffer (glibc then keeps the
  elimination's temporaries on its heap instead of returning them to the system after every
  pivot, as a long-lived process such as ``bench_budget.py``'s does).

and prints measured / estimated (the estimate at the rank the elimination found; ``bound``
charges min(rows, cols), verify the distinct rows or columns), the ranges of the three, and,
on a few cases, galois' ``np.linalg.matrix_rank`` of the same matrix as a FieldArray (its JIT
compiled first), with gctool's time over galois'.  Target: fresh within 0.5-2 on every case.
The machine's load (``/proc/loadavg``) is printed on stderr (not on the README page) before
and after: the ratios of a loaded machine measure the load.  Run:

    .venv/bin/python benchmarks/fit_elimination.py [--quick] [--processes N] [--json]
    [--only TEXT]

``--quick`` runs the small cases only (about 30 s).  ``--json`` prints the measurements as one
JSON document instead (for fitting the constants).
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import json  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
import readme  # noqa: E402
from timing import chosen, fit_args, fit_end, fit_parser, in_fresh_process, load, within  # noqa: E402

#: (label, field, rows, cols, kind, rank or design arguments, in --quick, galois compared):
#: kind "random" (entries uniform), "product" (a random product of rank r), "repeated" (r
#: distinct random rows, repeated), "design" (the B of a gctool design: scheme, n, s, k)
CASES: list[tuple[str, str, int, int, str, Any, bool, bool]] = [
    ("random", "GF(2^8)", 50, 50, "random", None, True, False),
    ("random", "GF(2^8)", 128, 128, "random", None, True, True),
    ("random", "GF(2^8)", 200, 200, "random", None, True, False),
    ("random", "GF(2^8)", 384, 384, "random", None, False, False),
    ("random", "GF(2^8)", 512, 500, "random", None, False, False),
    ("random", "GF(2^8)", 768, 768, "random", None, False, False),
    ("random wide", "GF(2^8)", 100, 2000, "random", None, True, False),
    ("random tall", "GF(2^8)", 4000, 60, "random", None, False, False),
    ("product", "GF(2^8)", 1000, 1000, "product", 60, False, False),
    ("repeated (frc-like)", "GF(2^8)", 4000, 4000, "repeated", 8, False, False),
    ("cyclic-mds", "GF(2^8)", 255, 255, "design", ("cyclic-mds", 255, 32, None), True, True),
    ("random", "GF(2^12)", 256, 256, "random", None, False, False),
    ("random", "GF(2^16)", 256, 256, "random", None, False, False),
    ("random", "GF(2^17)", 256, 256, "random", None, False, False),
    ("random", "GF(2^18)", 384, 384, "random", None, False, False),
    ("random", "GF(2^20)", 256, 256, "random", None, False, False),
    ("random", "GF(2^22)", 256, 256, "random", None, False, False),
    ("random wide", "GF(2^22)", 100, 2000, "random", None, False, False),
    ("random", "GF(2)", 300, 300, "random", None, True, False),
    ("random", "GF(7)", 256, 256, "random", None, True, True),
    ("random", "GF(65521)", 64, 64, "random", None, True, False),
    ("random", "GF(65521)", 160, 160, "random", None, True, True),
    ("random", "GF(65521)", 384, 380, "random", None, False, False),
    ("random", "GF(65521)", 640, 640, "random", None, False, False),
    ("random wide", "GF(65521)", 200, 3000, "random", None, False, False),
    ("product", "GF(65521)", 2000, 1500, "product", 40, False, False),
    ("rs", "GF(65537)", 300, 300, "design", ("rs", 300, 30, 300), False, True),
    ("rs", "GF(65537)", 600, 600, "design", ("rs", 600, 60, 600), False, False),
    ("random", "GF(65537)", 100, 100, "random", None, True, False),
    ("random", "GF(3^4)", 192, 192, "random", None, True, False),
    ("random", "GF(257^2)", 160, 160, "random", None, False, False),
    ("random", "GF(3^12)", 128, 128, "random", None, False, False),
    ("random", "GF(2^31)", 64, 64, "random", None, False, False),
    ("random", "GF(2^31)", 200, 200, "random", None, False, False),
    ("random", "GF(7^11)", 64, 64, "random", None, False, False),
    ("random", "GF(46337^2)", 100, 100, "random", None, False, False),
]
#: freed before the warm-heap repeat: glibc's threshold for returning freed memory to the
#: system follows the largest block freed (up to 32 MiB)
WARM_BYTES = 30 << 20
LOW, HIGH = 0.5, 2.0


def build(field: str, rows: int, cols: int, kind: str, arg: Any) -> np.ndarray:
    """The case's matrix (int64 entries), the same in every process."""
    from gctool.algebra.fields import parse_field
    from gctool.algebra.gf import GFArith

    fld = parse_field(field)
    rng = np.random.default_rng(rows * 7919 + cols)
    if kind == "design":
        from gctool.codes import design

        scheme, n, s, k = arg
        return np.asarray(design(scheme, n, s, k, field=field).B, dtype=np.int64)
    if kind == "random":
        return rng.integers(0, fld.order, size=(rows, cols))
    if kind == "repeated":
        distinct = rng.integers(0, fld.order, size=(arg, cols))
        return distinct[np.arange(rows) % arg]
    arith, M = GFArith(fld), np.zeros((rows, cols), dtype=np.int64)
    A, C = rng.integers(0, fld.order, size=(rows, arg)), rng.integers(0, fld.order, (arg, cols))
    for j in range(arg):  # M = A C over the field, one rank-one term at a time
        M = arith.add(M, arith.mul(A[:, j, None], C[None, j, :]))
    return M


def child(spec: str) -> None:
    """One process of one case: its timings as one JSON line."""
    import resource

    from gctool.algebra.fields import parse_field
    from gctool.algebra.linalg import matrix_rank

    label, field, rows, cols, kind, arg, _, naive = json.loads(spec)
    fld = parse_field(field)
    M = build(field, rows, cols, kind, arg)
    matrix_rank(fld, M[:3, :3])  # the field's tables, as any command builds them first

    def run() -> tuple[int, float, float, float, int]:
        before = resource.getrusage(resource.RUSAGE_SELF)
        t0, c0 = time.perf_counter(), time.process_time()
        r = matrix_rank(fld, M)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        after = resource.getrusage(resource.RUSAGE_SELF)
        return (r, wall, cpu, after.ru_stime - before.ru_stime,
                after.ru_minflt - before.ru_minflt)

    rank, fresh, cpu, sys_s, faults = run()
    again = run()[1]
    np.ones(WARM_BYTES // 8).sum()  # allocated and freed: the heap is kept from now on
    warm = run()[1]
    out = {"rank": rank, "fresh": fresh, "cpu": cpu, "sys": sys_s, "faults": faults,
           "again": again, "warm": warm}
    if naive:
        GF = fld.galois()
        A = GF(M)
        np.linalg.matrix_rank(GF(A[:3, :3]))  # compiled
        t0 = time.perf_counter()
        assert int(np.linalg.matrix_rank(A)) == rank, "galois reads another rank"
        out["galois"] = time.perf_counter() - t0
    print(json.dumps(out))


def measure(case: tuple[Any, ...], processes: int) -> dict[str, Any]:
    """Median over ``processes`` fresh processes of each timing of ``case``."""
    runs = []
    for i in range(processes):
        runs.append(in_fresh_process(__file__, json.dumps([*case[:7], case[7] and i == 0])))
    out = {key: statistics.median(r[key] for r in runs)
           for key in ("fresh", "cpu", "sys", "faults", "again", "warm")}
    out["rank"] = runs[0]["rank"]
    out["galois"] = runs[0].get("galois")
    return out


def estimate(field: str, rows: int, cols: int, rank: int) -> float:
    from gctool.algebra.fields import parse_field
    from gctool.algebra.linalg import elimination_cost

    return elimination_cost(rows, cols, parse_field(field), rank) / 1e9


def main() -> None:
    ap = fit_parser(__doc__, quick="the small cases only (about 30 s)",
                    only="only the cases whose name or field has TEXT")
    ap.add_argument("--processes", type=int, default=3, help="fresh processes per case")
    args = fit_args(ap, child)
    if args is None:
        return
    cases = chosen(CASES, args.quick, args.only, in_quick=6)
    start = load()
    if not args.json:
        many = "es per case (medians)" if args.processes > 1 else " per case"
        print(f"matrix_rank over GF(q) against elimination_cost; {args.processes} fresh "
              f"process{many}")
        print(f"load before: {start}", file=sys.stderr)  # (not on the README page)
        print(f"{'case':<21} {'field':<9} {'shape':>11} {'rank':>5} {'estimate':>9} "
              f"{'fresh':>8} {'ratio':>5} {'cpu':>5} {'sys':>5} {'again':>5} {'warm':>5}  galois")
    rows_out: list[dict[str, Any]] = []
    ratios: dict[str, list[float]] = {"fresh": [], "cpu": [], "again": [], "warm": []}
    for case in cases:
        label, field, rows, cols = case[:4]
        m = measure(case, args.processes)
        est = estimate(field, rows, cols, m["rank"])
        m.update(case=label, field=field, rows=rows, cols=cols, estimate=est)
        rows_out.append(m)
        for key in ratios:
            ratios[key].append(m[key] / est)
        if args.json:
            continue
        naive = (f"{m['galois']:7.3f} s, gctool/galois {m['fresh'] / m['galois']:5.2f}x"
                 if m["galois"] else "")
        flag = "" if LOW <= m["fresh"] / est <= HIGH else "  OUTSIDE"
        print(f"{label:<21} {field:<9} {f'{rows}x{cols}':>11} {m['rank']:>5} "
              f"{est:8.3f}s {m['fresh']:7.3f}s {m['fresh'] / est:5.2f} {m['cpu'] / est:5.2f} "
              f"{m['sys'] / m['fresh']:5.0%} {m['again'] / est:5.2f} {m['warm'] / est:5.2f}  "
              f"{naive}{flag}", flush=True)
    fit_end(args.json, start, rows_out,
            lambda: f"measured / estimated: fresh {within(ratios['fresh'], LOW, HIGH)}, its CPU "
            f"{min(ratios['cpu']):.2f}-{max(ratios['cpu']):.2f}, again "
            f"{min(ratios['again']):.2f}-{max(ratios['again']):.2f}, warm heap "
            f"{min(ratios['warm']):.2f}-{max(ratios['warm']):.2f}",
            "(ratio: wall time / estimate; cpu: its CPU time (the process's, the kernel's "
            "included) / estimate, which a loaded machine disturbs less; sys: the share of the "
            "wall time spent in the kernel, mostly the page faults of fresh temporaries)")


if __name__ == "__main__":
    with readme.section(__file__):
        main()
