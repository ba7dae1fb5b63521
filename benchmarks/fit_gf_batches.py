"""Benchmark of the batched GF(q) estimates: the optimal decoder's systems and the exact check.

Two estimates price batches of exact eliminations over GF(q), per set:

* ``gctool.decode.cost.system_time``: one f x K system of the optimal decoder's batch
  (``Decoder.evaluate`` over GF(q): Gauss-Jordan on ``[B_F^T | T^T]`` of a whole batch), here
  over the fields above the exp/log tables (polynomial arithmetic: GF(46337^2), GF(13^7),
  GF(5^10), GF(7^11), GF(3^15), GF(2^31)), where its rate is a share of
  ``gctool.algebra.gf.calc_entry_ns`` per multiply-add;
* ``gctool.audit.nullspace.gf_nullspace_time``: one set of the numpy null-space test
  (``reduced_decodes``, the batched fraction-free elimination of ``[N[:, S]^T | W_S]``), on rs
  designs (N in echelon form: few updates, the d columns carry the time) and cyclic-MDS
  designs (dense N) over GF(3^4), GF(5^2) and GF(3^12), d = 3 to 50.

Every case is measured in one process, interleaved: each round times every case once, and
the best CPU time per set over ``--repeat`` rounds is kept (a load that comes and goes shifts
every case of a round alike).  A decoder case decides random survivor sets of a random dense
code (f survivors, K columns) in one batch of the decoder's own size (``Decoder.chunk_size``,
at most 2 M entries of B_F), cut to about ``--seconds`` of estimated time; an exact-check case
decides one task of the kernel's size (``GFNullKernel.chunk_size``) of random straggler sets.
Prints measured / estimated (target 0.5-2 on every case) and, for the exact check, the time
per column of the d unknowns once the estimate's fixed part and counted updates are taken
off.  The machine's load is printed on stderr before and after.  Run:

    .venv/bin/python benchmarks/fit_gf_batches.py [--quick] [--repeat N] [--seconds S] [--json]
    [--only TEXT]

``--json`` prints the measurements as one JSON document instead (for fitting the constants).
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
import readme  # noqa: E402
from timing import chosen, fit_end, fit_parser, load, within  # noqa: E402

#: (label, field, f x K of a decoder's system or (scheme, n, s) of an exact check, in --quick)
CASES: list[tuple[str, str, tuple[Any, ...], bool]] = [
    *[("decoder", fld, shape, quick) for fld, quick in
      (("GF(46337^2)", True), ("GF(13^7)", False), ("GF(5^10)", False), ("GF(7^11)", True),
       ("GF(3^15)", False), ("GF(2^31)", False))
      for shape in ((12, 10), (26, 24), (40, 30))],
    *[("check rs", fld, ("rs", n, s), quick) for fld, n, s, quick in
      (("GF(3^4)", 24, 4, True), ("GF(3^4)", 40, 5, False), ("GF(3^4)", 30, 5, False),
       ("GF(3^4)", 40, 4, True), ("GF(3^4)", 50, 4, False), ("GF(3^4)", 60, 5, False),
       ("GF(3^4)", 64, 4, False), ("GF(5^2)", 24, 3, False), ("GF(5^2)", 24, 6, False),
       ("GF(3^12)", 40, 5, False), ("GF(3^12)", 30, 3, False))],
    *[("check cyclic-mds", fld, ("cyclic-mds", n, s), quick) for fld, n, s, quick in
      (("GF(3^4)", 16, 3, False), ("GF(3^4)", 20, 4, True), ("GF(3^4)", 40, 6, False),
       ("GF(3^4)", 80, 3, False), ("GF(5^2)", 24, 5, False), ("GF(3^12)", 26, 6, False))],
]
LOW, HIGH = 0.5, 2.0


def decoder_case(field: str, f: int, K: int, seconds: float
                 ) -> tuple[Callable[[], object], int, float, dict[str, Any]]:
    """A batch of the decoder over ``field``: its run, sets, estimate per set and facts."""
    from gctool.algebra.fields import parse_field
    from gctool.decode import Decoder
    from gctool.decode.cost import system_time
    from gctool.model import GradientCode

    fld = parse_field(field).resolved()
    rng = np.random.default_rng(f * 1009 + K)
    s = 2
    code = GradientCode(rng.integers(0, fld.order, size=(f + s, K)), fld, s)
    dec = Decoder(code)
    est = system_time(fld, f, K)
    sets = max(16, min(dec.chunk_size(f), int(seconds * 1e9 / est)))
    F = np.sort(np.argsort(rng.random((sets, f + s)), axis=1)[:, :f], axis=1)
    return (lambda: dec.evaluate(F)), sets, est, {"f": f, "K": K}


def check_case(field: str, scheme: str, n: int, s: int
               ) -> tuple[Callable[[], object], int, float, dict[str, Any]]:
    """A task of the exact check over ``field``: its run, sets, estimate per set and facts."""
    from gctool.algebra.gf import GFArith
    from gctool.algebra.linalg import reduced_decodes
    from gctool.audit import nullspace as ns
    from gctool.codes import design

    code = design(scheme, n=n, s=s, field=field)
    red = ns.reduce_gf(code)
    sets = max(1, min(16384, 400_000 // max(1, s * (red.d + code.m))))  # GFNullKernel's task
    rng = np.random.default_rng(n * 31 + s)
    S = np.sort(np.argsort(rng.random((sets, n)), axis=1)[:, :s], axis=1)
    arith, N, W = GFArith(code.field), np.asarray(red.N), np.asarray(red.W)
    rows = ns.updated_rows(red, s, code.field)
    est = ns.gf_nullspace_time(red, s, code.m, code.field)
    fixed = ns.GF_NULL_SET_NS + ns.entry_ns(code.field) * rows * (red.d + code.m)
    facts = {"n": n, "s": s, "d": red.d, "m": code.m, "rows": rows, "fixed": fixed}
    return (lambda: reduced_decodes(arith, N, W, S)), sets, est, facts


def main() -> None:
    ap = fit_parser(__doc__, quick="a few cases, two rounds", only="only the cases whose name "
                    "or field has TEXT")
    ap.add_argument("--repeat", type=int, default=5, help="rounds (the best is kept)")
    ap.add_argument("--seconds", type=float, default=1.0,
                    help="estimated seconds of a decoder batch at most")
    args = ap.parse_args()
    cases = chosen(CASES, args.quick, args.only, in_quick=3)
    repeat = 2 if args.quick else args.repeat
    seconds = args.seconds / 4 if args.quick else args.seconds
    start = load()
    built = []
    for label, field, arg, _ in cases:
        if label == "decoder":
            built.append((label, field, *decoder_case(field, *arg, seconds)))
        else:
            built.append((label, field, *check_case(field, *arg)))
    best = [np.inf] * len(built)
    for _ in range(repeat):
        for i, (_, _, run, sets, _, _) in enumerate(built):
            c0 = time.process_time()
            run()
            best[i] = min(best[i], (time.process_time() - c0) / sets * 1e9)
    if not args.json:
        print(f"GF(q) batches against system_time (decoder) and gf_nullspace_time (exact check); "
              f"CPU time per set, best of {repeat} interleaved rounds, one process")
        print(f"load before: {start}", file=sys.stderr)  # (not on the README page)
        print(f"{'case':<16} {'field':<11} {'size':<16} {'sets':>6} {'estimate us':>11} "
              f"{'measured us':>11} {'ratio':>5} {'rows':>5} {'column ns':>9}")
    out, ratios = [], []
    for (label, field, _, sets, est, facts), t in zip(built, best, strict=True):
        ratio = t / est
        ratios.append(ratio)
        out.append({"case": label, "field": field, "sets": sets, "estimate_ns": est,
                    "measured_ns": t, **facts})
        if args.json:
            continue
        if label == "decoder":
            size, rows, column = f"{facts['f']} x {facts['K']}", "", ""
        else:
            size = f"n={facts['n']} s={facts['s']} d={facts['d']}"
            rows = f"{facts['rows']:.2f}"
            column = f"{(t - facts['fixed']) / facts['d']:.0f}"
        flag = "" if LOW <= ratio <= HIGH else "  OUTSIDE"
        print(f"{label:<16} {field:<11} {size:<16} {sets:>6} {est / 1e3:11.1f} {t / 1e3:11.1f} "
              f"{ratio:5.2f} {rows:>5} {column:>9}{flag}", flush=True)
    fit_end(args.json, start, out, lambda: f"measured / estimated {within(ratios, LOW, HIGH)}",
            "(rows: the rows the exact check updates per set, counted; column ns: its time per "
            "set less the fixed part and the counted updates as estimated, per column of the d "
            "unknowns)")


if __name__ == "__main__":
    with readme.section(__file__):
        main()
