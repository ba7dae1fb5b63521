"""Benchmark of the read estimate: ``read_cost`` against reading a code file as a command does.

``gctool.budget.read_cost`` estimates the time of reading a code file (``gctool.io.load_code``:
its bytes, the parse, the checks of its entries and the field's coercion) from its size and
kind (JSON or NPZ), before it is read.  This script writes code files of every field (random
dense real, complex, GF(7), GF(2^8) and GF(65521) matrices; frc's 0/1 rows over R and GF(7))
as JSON and NPZ (stored, as gctool writes it, and compressed, as ``numpy.savez_compressed``
writes it) over a spread of sizes, and reads each one in ``--processes`` fresh processes
(default 3; medians), as a command line does: its modules imported and its field's tables
built first (by reading a small file of the same kind and field), then

* first: the file read once (what a command pays), wall and CPU time of the process;
* again: read a second time in the same process (what ``bench_budget.py``'s runs pay: its
  warm-up run read the file before);

and prints measured / estimated (target 0.5-2 on every file: the estimate decides whether a
read is refused, and is charged to the budget of the run) and the time per byte.  The
machine's load is printed on stderr before and after: the ratios of a loaded machine measure
the load.  Run:

    .venv/bin/python benchmarks/fit_reads.py [--quick] [--processes N] [--json] [--only TEXT]

``--json`` prints the measurements as one JSON document instead (for fitting the constants).
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import json  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
import readme  # noqa: E402
from timing import fit_args, fit_end, fit_parser, in_fresh_process, load, random_matrix, within  # noqa: E402

#: (content, n, NPZ?, in --quick): an n x n matrix (frc: its design at n workers)
CASES: list[tuple[str, int, bool, bool]] = [
    *[(c, n, False, n <= 128) for c in ("real", "complex", "GF(7)", "GF(2^8)", "GF(65521)",
                                         "frc real", "frc GF(7)") for n in (16, 128, 512)],
    # the same codes written by hand: compact (no spaces), integers for reals, one entry a
    # line (json.dumps(indent=2))
    ("real compact", 512, False, False),
    ("real indented", 512, False, False),
    ("frc real ints", 512, False, True),
    ("GF(7) indented", 512, False, False),
    ("complex compact", 256, False, False),
    ("real", 1024, False, False),
    ("complex", 1024, False, False),
    ("GF(2^8)", 1024, False, False),
    ("frc real", 1024, False, False),
    ("frc GF(7)", 2048, False, False),
    *[(c, n, True, n <= 256) for c in ("real", "complex", "GF(7)", "GF(65521)", "frc real")
      for n in (16, 256, 1024, 2048)],
    ("real", 4096, True, False),
    ("frc real", 4096, True, False),
    ("frc GF(7)", 4096, True, False),
    # compressed NPZ (numpy.savez_compressed's members: deflated)
    *[(f"{c} z", n, True, n <= 256) for c in ("real", "GF(7)", "frc real")
      for n in (256, 1024, 2048)],
    ("real z", 4096, True, False),
    ("frc real z", 4096, True, False),
    # compressed to a third (GF(65521): two random bytes an entry), a fifth (GF(2^8)) and not
    # at all (complex)
    *[("GF(65521) z", n, True, n <= 256) for n in (256, 1024, 2048)],
    ("GF(2^8) z", 1024, True, False),
    *[("complex z", n, True, n <= 256) for n in (256, 1024)],
]
LOW, HIGH = 0.5, 2.0


def make(content: str, n: int, npz: bool) -> bytes:
    """The file of a case: gctool's own writing (``code_bytes``), its JSON document written
    again (``compact``, ``indented``, ``ints``: real 0/1 entries as integers), or its NPZ
    with every member deflated (``z``)."""
    if content.endswith(" z"):
        return _deflated(_make(content[:-2], n, npz))
    base, _, style = content.partition(" ")
    if style in ("compact", "indented", "ints") or content == "frc real ints":
        if content == "frc real ints":
            base, style = "frc real", "ints"
        doc = json.loads(make(base, n, False))
        if style == "ints":
            doc["B"] = [[int(x) for x in row] for row in doc["B"]]
            return json.dumps(doc, separators=(",", ":")).encode()
        if style == "compact":
            return json.dumps(doc, separators=(",", ":")).encode()
        return json.dumps(doc, indent=2).encode()
    return _make(content, n, npz)


def _deflated(data: bytes) -> bytes:
    """The NPZ ``data`` with its members deflated, as ``numpy.savez_compressed`` writes them."""
    import io
    import zipfile

    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, \
            zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            dst.writestr(info.filename, src.read(info))
    return out.getvalue()


def _make(content: str, n: int, npz: bool) -> bytes:
    from gctool.algebra.fields import parse_field
    from gctool.codes import design
    from gctool.io import code_bytes
    from gctool.model import GradientCode

    if content.startswith("frc"):
        field = content.split()[1]
        return code_bytes(design("frc", n=n, s=max(1, n // 64 - 1) if n >= 128 else 1,
                                 field=field), npz=npz)
    fld = parse_field(content)
    B = random_matrix(np.random.default_rng(n), content, n, n)
    return code_bytes(GradientCode(B, fld, 1, "custom"), npz=npz)


def child(spec: str) -> None:
    """One process: read the small file, then the case's file twice; timings as JSON."""
    from gctool.budget import Budget
    from gctool.io import load_code

    small, path = json.loads(spec)
    budget = Budget(max_work=1e9)
    load_code(small, budget)  # imports, the field's tables

    def run() -> tuple[float, float]:
        t0, c0 = time.perf_counter(), time.process_time()
        load_code(path, budget)
        return time.perf_counter() - t0, time.process_time() - c0

    first, cpu = run()
    again = run()[0]
    print(json.dumps({"first": first, "cpu": cpu, "again": again}))


def main() -> None:
    ap = fit_parser(__doc__, quick="the small files only",
                    only="only the files whose content has TEXT")
    ap.add_argument("--processes", type=int, default=3, help="fresh processes per file")
    ap.add_argument("--kind", choices=("json", "npz"), help="only the files of this kind")
    args = fit_args(ap, child)
    if args is None:
        return
    from gctool._files import npz_unpacked
    from gctool.budget import read_cost, read_sample

    cases = [c for c in CASES if (c[3] or not args.quick) and args.only in c[0]
             and (args.kind is None or c[2] == (args.kind == "npz"))]
    start = load()
    if not args.json:
        print(f"load_code against read_cost; {args.processes} fresh processes per file "
              "(medians)")
        print(f"load before: {start}", file=sys.stderr)
        print(f"{'content':<15} {'kind':<4} {'n':>5} {'bytes':>11} {'estimate':>9} "
              f"{'first':>8} {'ratio':>5} {'cpu':>5} {'again':>5} {'ns/B':>6}")
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for content, n, npz, _ in cases:
            ext = "npz" if npz else "json"
            small, path = Path(tmp, f"small.{ext}"), Path(tmp, f"code.{ext}")
            small.write_bytes(make(content, 8, npz))
            data = make(content, n, npz)
            path.write_bytes(data)
            size = path.stat().st_size
            spec = json.dumps([str(small), str(path)])
            runs = [in_fresh_process(__file__, spec) for _ in range(args.processes)]
            m = {k: statistics.median(r[k] for r in runs) for k in ("first", "cpu", "again")}
            # the estimate as a command makes it: from pieces of the file (read_sample)
            sample = b"" if npz else read_sample(lambda at, k, b=data: b[at:at + k], size)
            unpacked, packed = npz_unpacked(data, size) if npz else (0, 0)
            est = read_cost(npz, size, sample, unpacked, packed) / 1e9
            m.update(content=content, n=n, npz=npz, bytes=size, unpacked=unpacked,
                     packed=packed, estimate=est,
                     commas=data.count(b","), dots=data.count(b"."), lists=data.count(b"["))
            rows.append(m)
            if args.json:
                continue
            ratio = m["first"] / est if est else float("nan")
            flag = "" if LOW <= ratio <= HIGH else "  OUTSIDE"
            print(f"{content:<15} {ext:<4} {n:>5} {size:>11,} {est * 1e3:7.2f}ms "
                  f"{m['first'] * 1e3:6.1f}ms {ratio:5.2f} {m['cpu'] / est:5.2f} "
                  f"{m['again'] / est:5.2f} {m['first'] / size * 1e9:6.1f}{flag}", flush=True)
    ratios = [r["first"] / r["estimate"] for r in rows]
    fit_end(args.json, start, rows,
            lambda: f"measured / estimated (first read) {within(ratios, LOW, HIGH)}",
            "(first: wall time of the process's first read of the file, after a small file of "
            "its kind and field; cpu: its CPU time; again: a second read in the same process)")


if __name__ == "__main__":
    with readme.section(__file__):
        main()
