"""Benchmark of the decoder-norm estimate: ``norm_cost`` against the real walk's norms in full.

``gctool.audit.kernels.real.norm_cost`` estimates the time the compiled real walk
(``screen_range``) takes for one set whose decoder norm it computes in full: the set's
decoder (``_set_decoder``) and its norm over the rows outside the set (``_decoder_norm``).
This script walks the first sets of each code three times in one process
(``RealScreen.walk``, CPU time of the process, best of ``--repeat``):

* none: the walk's bound made to cut every set (a floor far above every norm): the screen;
* prefix: only the prefix's own bound (``_prefix_cut``, its prefix decoder's norm worked out
  once per prefix) cuts, every set: the screen and one norm per prefix;
* all: no bound (rc0 and ||D N^T|| not a number): every accepted set's norm in full, and
  its prefix's;

and prints the time per norm in full, ``(all - none - prefixes x per prefix) / norms``,
against ``norm_cost`` (ratio measured / estimated), and the time per prefix norm.  The codes
are random dense real and complex codes over a grid of d = dim null(B) (d = 6 to 48, n = 30 to
72, s = 3 to 6), and rs, frc and cyclic designs.  Target: within 0.5-2 on every case (the
ratios of a loaded machine measure the load: the machine's load is printed before and after).
Each code runs in a fresh process (the compiled walk loaded from numba's cache).  Run:

    .venv/bin/python benchmarks/fit_norms.py [--quick] [--repeat N] [--json] [--only TEXT]

``--json`` prints the measurements as one JSON document instead (for fitting the constants).
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
os.environ["GCTOOL_COMPILED"] = "always"  # the compiled walk at any size

import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from math import comb  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
import readme  # noqa: E402
from timing import chosen, fit_args, fit_end, fit_parser, in_fresh_process, load, within  # noqa: E402

#: (label, field, n, k or design arguments, s, in --quick): random dense n x k (d = n - k),
#: or ("design", scheme, keyword arguments)
CASES: list[tuple[str, str, int, Any, int, bool]] = [
    ("random", "real", 30, 24, 3, True),
    ("random", "real", 40, 34, 5, False),
    ("random", "real", 40, 30, 5, True),
    ("random", "real", 40, 24, 5, False),
    ("random", "real", 60, 36, 5, False),
    ("random", "real", 60, 28, 5, True),
    ("random", "real", 72, 24, 6, False),
    ("random", "complex", 30, 24, 3, True),
    ("random", "complex", 40, 34, 5, False),
    ("random", "complex", 40, 30, 5, True),
    ("random", "complex", 40, 24, 5, False),
    ("random", "complex", 60, 36, 5, False),
    ("random", "complex", 60, 28, 5, True),
    ("random", "complex", 72, 24, 6, False),
    ("rs", "real", 40, ("rs", {}), 5, False),
    ("rs", "complex", 40, ("rs", {"field": "complex"}), 5, False),
    ("frc", "real", 48, ("frc", {}), 5, False),
    ("cyclic", "real", 48, ("cyclic", {"seed": 1}), 6, False),
]
#: sets walked per case (from the first set), at most
SETS = 40_000
LOW, HIGH = 0.5, 2.0


def build(field: str, n: int, arg: Any, s: int) -> Any:
    from timing import random_matrix

    from gctool.algebra.fields import parse_field
    from gctool.codes import design
    from gctool.model import GradientCode

    if isinstance(arg, list):
        return design(arg[0], n=n, s=s, **arg[1])
    B = random_matrix(np.random.default_rng(n * 7919 + arg), field, n, arg)
    return GradientCode(B, parse_field(field), s, "custom")


def child(spec: str) -> None:
    """One process of one case: its timings as one JSON line."""
    from gctool.audit.kernels.real import norm_cost
    from gctool.audit.nullspace import FloatNullKernel, reduce_float
    from gctool.limits import DEFAULT_TOL

    label, field, n, arg, s, repeat, sets = json.loads(spec)
    code = build(field, n, arg, s)
    kernel = FloatNullKernel(code, DEFAULT_TOL, reduce_float(code, DEFAULT_TOL))
    kernel.plan(s)
    screen = kernel.compiled_screen
    assert screen is not None, "no compiled walk"
    d = kernel.red.d
    count = min(comb(n, s), sets)
    # a new prefix starts after each set whose last straggler is n - 1 (lexicographic order)
    import itertools

    last = np.fromiter((c[-1] for c in itertools.islice(itertools.combinations(range(n), s),
                                                        count - 1)), np.int64, count - 1)
    prefixes = 1 + int(np.sum(last == n - 1))
    rc0, dn = screen.rc0, screen.dn
    modes = {"none": (rc0, dn, 1e100), "prefix": (np.nan, dn, 1e100),
             "all": (np.nan, np.nan, -np.inf)}
    best: dict[str, float] = {}
    full: dict[str, int] = {}
    for _ in range(repeat):
        for mode, (r, g, floor) in modes.items():
            screen.rc0, screen.dn = r, g
            S = np.arange(s, dtype=np.int64)
            pend = np.zeros(count, np.int64)
            screen.counted.clear()
            c0 = time.process_time()
            done = screen.walk(S, count, pend, floor)[0]
            t = time.process_time() - c0
            assert done == count, (done, count)
            best[mode] = min(best.get(mode, np.inf), t)
            full[mode] = screen.counted and sum(f for _, f in screen.counted.values()) or 0
    per_prefix = max(0.0, best["prefix"] - best["none"]) / prefixes
    norms = full["all"]
    per_norm = (best["all"] - best["none"] - prefixes * per_prefix) / max(1, norms)
    est = norm_cost(n, s, d, code.m, field == "complex")
    print(json.dumps({"d": d, "m": code.m, "sets": count, "prefixes": prefixes,
                      "norms": norms, "none_ns": best["none"] / count * 1e9,
                      "norm_ns": per_norm * 1e9, "prefix_ns": per_prefix * 1e9,
                      "estimate_ns": est}))


def main() -> None:
    ap = fit_parser(__doc__, quick="the small cases only, on an eighth of the sets",
                    only="only the cases whose name or field has TEXT")
    ap.add_argument("--repeat", type=int, default=5, help="walks per mode (the best is kept)")
    args = fit_args(ap, child)
    if args is None:
        return
    cases = chosen(CASES, args.quick, args.only, in_quick=5)
    sets = SETS // 8 if args.quick else SETS
    start = load()
    if not args.json:
        print(f"real walk's decoder norms in full against norm_cost; CPU time, best of "
              f"{args.repeat} walks of up to {sets:,} sets per mode, one fresh process per code")
        print(f"load before: {start}", file=sys.stderr)  # (not on the README page)
        print(f"{'case':<8} {'field':<8} {'n':>3} {'d':>3} {'s':>2} {'m':>2} {'norms':>7} "
              f"{'screen ns':>9} {'norm ns':>8} {'estimate':>8} {'ratio':>5} {'prefix ns':>9}")
    out: list[dict[str, Any]] = []
    ratios = []
    for label, field, n, arg, s, _ in cases:
        spec = json.dumps([label, field, n, arg, s, args.repeat, sets])
        r = in_fresh_process(__file__, spec)
        r.update(case=label, field=field, n=n, s=s)
        out.append(r)
        ratio = r["norm_ns"] / r["estimate_ns"]
        ratios.append(ratio)
        if args.json:
            continue
        flag = "" if LOW <= ratio <= HIGH else "  OUTSIDE"
        print(f"{label:<8} {field:<8} {n:>3} {r['d']:>3} {s:>2} {r['m']:>2} {r['norms']:>7,} "
              f"{r['none_ns']:9.0f} {r['norm_ns']:8.0f} {r['estimate_ns']:8.0f} {ratio:5.2f} "
              f"{r['prefix_ns']:9.0f}{flag}", flush=True)
    fit_end(args.json, start, out, lambda: f"measured / estimated {within(ratios, LOW, HIGH)}",
            "(screen ns: the walk's time per set with every norm cut; norm ns: the time of one "
            "norm in full, the set's decoder and its norm; prefix ns: one prefix decoder's norm)")


if __name__ == "__main__":
    with readme.section(__file__):
        main()
