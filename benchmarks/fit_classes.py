"""Benchmark of the row-class estimate: ``class_cost`` against the row-class certificate.

``gctool.audit.certificates.class_cost`` estimates the work of ``class_certificate``: its quick
rejection (rows of one support that are not proportional), the classes of proportional rows
(``gctool.row_classes.find_row_classes``: keys of the rows' normal forms, then each candidate
class confirmed exactly, rows proportional by a factor other than +-1 by exact products) and the
targets' check per class.  ``verify`` charges the same estimate when its class patterns look
for the classes.  This script times the certificate (thread CPU time) on:

* frc codes (classes of s + 1 equal rows) over R, C, GF(7), GF(2^8) and GF(65537), n = 12 to
  4096;
* many small classes: frc codes with s = 1 (classes of 2 rows) whose second rows are scaled
  by factors other than +-1 (R: 3, -1/2, 1.5, 2^-9; C: i, 1 + i, 2 - i, i/2), n = 1024 and
  4096;
* dense classes: 2048 x 512 and 256 x 256 of classes of 8 rows sharing the whole support,
  scaled (R and C) or equal;
* classes spread over B (rows of one class far apart): the complex pairs at n = 4096 and the
  real frc n = 4096 s = 7 with their rows in a random order (same classes, same work), and 8
  complex classes of 256 rows on blocks of 64 columns, row i in class i mod 8 (2048 x 512);
* the real dense scaled classes times 2^500 (beyond 2^400 the exact products take mantissas),
  256 x 256 and 2048 x 512;
* classes of one row (a real and a complex cyclic code, n = 600).

Each code runs in ``--processes`` fresh processes (default 3; a user's command line is one):
"first" is the certificate's first call in the process (what a command pays), "again" the
median of three more calls; the printed figure is the median over the processes.  Target:
first within 0.5-2 of the estimate on every case.  The machine's load is printed on stderr
(not on the README page) before and after: the ratios of a loaded machine measure the load.
Run:

    .venv/bin/python benchmarks/fit_classes.py [--quick] [--processes N] [--json] [--only TEXT]

``--quick`` runs the small cases only.  ``--json`` prints the measurements as one JSON
document instead (for fitting the constants).
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

#: (label, field, n, kind, s, in --quick): kind "frc" or "cyclic" (that design at s; cyclic with
#: seed 1), "scaled" (frc at s = 1, every second row scaled), "dense" or "equal" (n rows in
#: classes of 8 over K = s columns, scaled or equal), "spread K" (kind K's rows in a random
#: order), "huge" (dense times 2^500) or "blocks" (8 classes interleaved on K = s columns)
CASES: list[tuple[str, str, int, str, int, bool]] = [
    ("frc", "real", 12, "frc", 2, True),
    ("frc", "real", 600, "frc", 2, True),
    ("frc", "real", 2048, "frc", 7, False),
    ("frc", "real", 4096, "frc", 7, False),
    ("frc", "complex", 600, "frc", 2, True),
    ("frc", "complex", 4096, "frc", 7, False),
    ("frc", "GF(7)", 600, "frc", 2, True),
    ("frc", "GF(2^8)", 4096, "frc", 7, False),
    ("frc", "GF(65537)", 2048, "frc", 7, False),
    ("pairs", "real", 1024, "scaled", 1, True),
    ("pairs", "real", 4096, "scaled", 1, False),
    ("pairs", "complex", 1024, "scaled", 1, True),
    ("pairs", "complex", 4096, "scaled", 1, False),
    ("pairs", "GF(7)", 4096, "frc", 1, False),
    ("dense", "real", 256, "dense", 256, True),
    ("dense", "complex", 256, "dense", 256, True),
    ("dense", "real", 2048, "dense", 512, False),
    ("dense", "complex", 2048, "dense", 512, False),
    ("equal", "complex", 2048, "equal", 512, False),
    ("spread", "complex", 4096, "spread scaled", 1, False),
    ("spread", "real", 4096, "spread frc", 7, False),
    ("spread", "complex", 2048, "blocks", 512, False),
    ("huge", "real", 256, "huge", 256, True),
    ("huge", "real", 2048, "huge", 512, False),
    ("spread", "real", 2048, "spread dense", 512, False),
    ("spread", "complex", 2048, "spread dense", 512, False),
    ("spread", "real", 2048, "spread huge", 512, False),
    ("random", "real", 2048, "random", 512, False),
    ("random", "complex", 256, "random", 256, False),
    ("random", "GF(7)", 4096, "random", 1024, False),
    ("cyclic", "real", 600, "cyclic", 2, False),
    ("cyclic", "complex", 600, "cyclic", 2, False),
]
LOW, HIGH = 0.5, 2.0
#: the factors of the scaled rows: exact products, so the rows stay exactly proportional
FACTORS = {"real": [3.0, -0.5, 1.5, 2.0**-9], "complex": [1j, 1 + 1j, 2 - 1j, 0.5j]}


def build(field: str, n: int, kind: str, s: int) -> Any:
    """The code of one case (``s``: the frc's s, or the dense codes' columns)."""
    from gctool.algebra.fields import parse_field
    from gctool.codes import design
    from gctool.model import GradientCode

    if kind in ("frc", "cyclic"):
        return design(kind, n=n, s=s, field=field, **({"seed": 1} if kind == "cyclic" else {}))
    rng = np.random.default_rng(n)
    if kind.startswith("spread "):  # the rows of another case in a random order: same classes
        code = build(field, n, kind.removeprefix("spread "), s)
        return GradientCode(code.B[rng.permutation(n)], code.field, code.s, "custom")
    if kind == "huge":  # dense scaled classes beyond 2^400: exact products on frexp mantissas
        code = build(field, n, "dense", s)
        return GradientCode(code.B * 2.0**500, code.field, code.s, "custom")
    if kind == "blocks":  # 8 classes of n / 8 rows, class i % 8 on its own K / 8 columns
        base = rng.integers(1, 10, (8, s // 8)) + 1j * rng.integers(1, 10, (8, s // 8))
        B = np.zeros((n, s), dtype=complex)
        for g in range(8):
            B[g::8, g * (s // 8):(g + 1) * (s // 8)] = base[g]
        B *= rng.choice(FACTORS[field] + [1.0], n)[:, None]
        return GradientCode(B, parse_field(field), 1, "custom")
    if kind == "random":  # dense rows of random entries 1..9: no two proportional
        fld = parse_field(field)
        B = rng.integers(1, min(10, fld.order) if fld.is_finite else 10, (n, s))
        if field == "complex":
            B = B + 1j * rng.integers(1, 10, (n, s))
        return GradientCode(B.astype(fld.dtype), fld, 1, "custom")
    if kind == "scaled":
        B = design("frc", n=n, s=s, field=field).B.copy()
        B[1::2] *= rng.choice(FACTORS[field], n // 2)[:, None]
        return GradientCode(B, parse_field(field), s, "custom")
    K = s  # dense: n rows in classes of 8 over all K columns, each class its own row
    base = rng.integers(1, 10, (n // 8, K)).astype(float)
    if field == "complex":
        base = base + 1j * rng.integers(1, 10, (n // 8, K))
    B = np.repeat(base, 8, axis=0)
    if kind == "dense":
        B = B * rng.choice(FACTORS[field] + [1.0], n)[:, None]
    return GradientCode(B, parse_field(field), 1, "custom")


def child(spec: str) -> None:
    """One process of one case: its timings as one JSON line.  What ``verify`` pays for the
    certificate: its sample (read once), the estimate and the certificate given that sample;
    then, warm, the sample and the row classes alone (the class patterns' finding, which
    ``row_classes_cost`` estimates)."""
    from gctool.audit.certificates import (
        class_certificate,
        class_cost,
        class_sample,
        row_classes_cost,
    )
    from gctool.row_classes import find_row_classes, row_classes

    field, n, kind, s = json.loads(spec)
    code = build(field, n, kind, s)
    if code.field.is_finite:  # a command over GF(q) has loaded its arithmetic by then
        import gctool.algebra.gf  # noqa: F401

    def stage() -> tuple[float, float]:
        t0 = time.thread_time()
        sample = class_sample(code)
        estimate = class_cost(code, sample)
        class_certificate(code, 1, sample=sample)
        return time.thread_time() - t0, estimate

    first, estimate = stage()
    again = [stage()[0] for _ in range(3)]
    finding = []
    for _ in range(3):
        t0 = time.thread_time()
        class_sample(code)
        find_row_classes(code)
        finding.append(time.thread_time() - t0)
    classes = row_classes(code)
    print(json.dumps({"K": int(code.B.shape[1]), "classes": len(classes),
                      "nonzeros": int(np.count_nonzero(code.B)), "first_ns": first * 1e9,
                      "again_ns": statistics.median(again) * 1e9, "estimate_ns": estimate,
                      "find_ns": statistics.median(finding) * 1e9,
                      "find_estimate_ns": row_classes_cost(code)}))


def main() -> None:
    ap = fit_parser(__doc__, quick="the small cases only",
                    only="only the cases whose name or field has TEXT")
    ap.add_argument("--processes", type=int, default=3, help="fresh processes per case")
    args = fit_args(ap, child)
    if args is None:
        return
    cases = chosen(CASES, args.quick, args.only, in_quick=5)
    start = load()
    if not args.json:
        print(f"row-class certificate against class_cost; thread CPU time, median of "
              f"{args.processes} fresh processes per code")
        print(f"load before: {start}", file=sys.stderr)  # (not on the README page)
        print(f"{'case':<7} {'field':<10} {'n':>5} {'K':>5} {'classes':>7} {'nonzeros':>9} "
              f"{'first ms':>9} {'again ms':>9} {'estimate':>9} {'ratio':>5} "
              f"{'find ms':>8} {'estimate':>9} {'ratio':>5}")
    out: list[dict[str, Any]] = []
    ratios, finds = [], []
    for label, field, n, kind, s, _ in cases:
        runs = [in_fresh_process(__file__, json.dumps([field, n, kind, s]))
                for _ in range(args.processes)]
        r = dict(runs[0])
        r.update(case=label, field=field, n=n,
                 first_ns=statistics.median(x["first_ns"] for x in runs),
                 again_ns=statistics.median(x["again_ns"] for x in runs),
                 find_ns=statistics.median(x["find_ns"] for x in runs))
        out.append(r)
        ratio = r["first_ns"] / r["estimate_ns"]
        find = r["find_ns"] / r["find_estimate_ns"]
        ratios.append(ratio)
        finds.append(find)
        if args.json:
            continue
        flag = "" if LOW <= ratio <= HIGH and LOW <= find <= HIGH else "  OUTSIDE"
        print(f"{label:<7} {field:<10} {n:>5} {r['K']:>5} {r['classes']:>7} "
              f"{r['nonzeros']:>9,} {r['first_ns'] / 1e6:9.2f} {r['again_ns'] / 1e6:9.2f} "
              f"{r['estimate_ns'] / 1e6:9.2f} {ratio:5.2f} {r['find_ns'] / 1e6:8.2f} "
              f"{r['find_estimate_ns'] / 1e6:9.2f} {find:5.2f}{flag}", flush=True)
    fit_end(args.json, start, out, lambda: f"measured / estimated (first call) "
            f"{within(ratios, LOW, HIGH)}; finding the classes {within(finds, LOW, HIGH)}",
            "(first: the sample, the estimate and the certificate, first called in a fresh "
            "process; again: the median of three more; estimate: class_cost; find: the sample "
            "and the row classes alone, warm (median of 3), against row_classes_cost)")


if __name__ == "__main__":
    with readme.section(__file__):
        main()
