"""Benchmark of the work budget: gctool's time estimates against the time they stand for.

Every command that computes estimates its time before it starts (``gctool/budget.py``: the
shared cost model in nanoseconds of one core; the compiled audit kernels' calibrated time per
straggler set next to each kernel) and refuses it when the estimate, divided by the jobs that
will run it, is above the work budget (``--max-work``, default 5 s).  This script runs
representative commands as the command line runs them (``gctool.cli.main``, in-process, with a
budget large enough that nothing is refused) and prints for each one:

* the estimate: the largest estimate the command checked (``Budget.check_work``: its time on
  the jobs that run it), or, for searches that charge as they go, what their meters charged;
* the measured wall and CPU time of the command (libraries imported and kernels compiled
  beforehand: the first of ``--repeat`` runs warms them and is not reported);
* their ratio, measured wall time / estimate (and CPU time / estimate, which a loaded machine
  disturbs less; with ``--jobs 1`` both should agree).

Target: on the timed cases of issue #28 (``verify`` of real cyclic n=48 s=6, ``verify`` of
cyclic-MDS GF(2^6) n=63 s=6, ``attack -s 6`` of real cyclic n=40, and a complex code) the
estimate is within 2x of the measured wall time (ratio 0.5-2); on the others the ratio is at
most about 1 (an estimate never lets through a run much longer than the budget) and not far
below 0.05 (it never refuses what is quick).  The timed cases need a quiet machine: their
ratios on a loaded one measure the load.

Run:  .venv/bin/python benchmarks/bench_budget.py [--quick] [--jobs N] [--repeat N] [--json]

``--quick`` runs sizes about a hundred times smaller (a smoke test; fixed costs dominate
there).  ``--jobs`` is passed to the commands that take it (default 1).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # the estimates are one core's, as bench_algebraic

import numpy as np  # noqa: E402
import readme  # noqa: E402

#: (name, files to write, command line, note, timed): ``timed`` cases are those whose estimate
#: must be within 2x of the measured wall time
Case = tuple[str, dict[str, Callable[[], bytes]], list[str], str, bool]
#: the budget the cases run with: nothing is refused, every estimate is recorded
NO_REFUSAL = "1000h"


def shuffled_cyclic(n: int, s: int) -> bytes:
    """Tandon's cyclic code with rows and columns shuffled (no structure a shortcut uses)."""
    from gctool.algebra.fields import parse_field
    from gctool.codes import design
    from gctool.io import code_bytes
    from gctool.model import GradientCode

    crc = design("cyclic", n=n, s=s, seed=1)
    rng = np.random.default_rng(0)
    B = np.asarray(crc.B)[rng.permutation(n)][:, rng.permutation(n)]
    return code_bytes(GradientCode(B, parse_field("real"), s, "custom"), npz=False)


def designed(scheme: str, **kw: Any) -> Callable[[], bytes]:
    def make() -> bytes:
        from gctool.codes import design
        from gctool.io import code_bytes

        return code_bytes(design(scheme, **kw), npz=False)
    return make


def cases(quick: bool, jobs: str) -> list[Case]:
    j = ["--jobs", jobs]
    if quick:
        return [
            ("verify real cyclic", {"c.json": designed("cyclic", n=20, s=4, seed=1)},
             ["verify", "c.json", "--method", "exhaustive", *j], "n=20, s=4", True),
            ("verify GF(2^4) mds", {"g.json": designed("cyclic-mds", n=15, s=4,
                                                       field="GF(2^4)")},
             ["verify", "g.json", "--method", "exhaustive", *j], "n=15, s=4", True),
            ("attack real cyclic", {"a.json": designed("cyclic", n=16, s=4, seed=1)},
             ["attack", "a.json", "-s", "4", "--method", "exhaustive", *j], "n=16, s=4",
             True),
            ("verify complex mds", {"z.json": designed("cyclic-mds", n=16, s=3,
                                                       field="complex")},
             ["verify", "z.json", "--method", "exhaustive", *j], "n=16, s=3", True),
            ("verify --sample", {"c.json": lambda: shuffled_cyclic(16, 3)},
             ["verify", "c.json", "--sample", "200", "--seed", "1", "--jobs", "1"],
             "n=16, s=3, 200 sets", False),
            ("export --decoders", {"c.json": lambda: shuffled_cyclic(16, 3)},
             ["export", "c.json", "--decoders", "-s", "3", "-o", "plan.npz"], "n=16, s=3",
             False),
            ("bound (rank of B)", {"c.json": lambda: shuffled_cyclic(100, 3)},
             ["bound", "c.json"], "n=100", False),
            ("design cyclic", {}, ["design", "cyclic", "-n", "200", "-s", "40", "-o",
                                   "d.json"], "n=200, s=40", False),
            ("attack milp (budget)", {"c.json": designed("cyclic", n=10, s=2, seed=1)},
             ["attack", "c.json", "-s", "4", "--method", "milp", "--max-work", "300ms"],
             "n=10, s=4, 300 ms", False),
        ]
    return [
        ("verify real cyclic", {"c.json": designed("cyclic", n=48, s=6, seed=1)},
         ["verify", "c.json", "--method", "exhaustive", *j],
         "real cyclic n=48, s=6 (12.3 M sets)", True),
        ("verify GF(2^6) mds", {"g.json": designed("cyclic-mds", n=63, s=6, field="GF(2^6)")},
         ["verify", "g.json", "--method", "exhaustive", *j],
         "cyclic-MDS GF(2^6) n=63, s=6 (68 M sets)", True),
        ("attack real cyclic", {"a.json": designed("cyclic", n=40, s=6, seed=1)},
         ["attack", "a.json", "-s", "6", "--method", "exhaustive", "--no-symmetry", *j],
         "real cyclic n=40, s=6 (3.8 M sets)", True),
        ("verify complex mds", {"z.json": designed("cyclic-mds", n=36, s=5, field="complex")},
         ["verify", "z.json", "--method", "exhaustive", *j],
         "cyclic-MDS complex n=36, s=5 (377 k sets)", True),
        ("verify --sample", {"c.json": lambda: shuffled_cyclic(40, 6)},
         ["verify", "c.json", "--sample", "1200000", "--seed", "1", "--jobs", "1"],
         "shuffled cyclic n=40, s=6, 1.2 M random sets", False),
        ("export --decoders", {"c.json": lambda: shuffled_cyclic(40, 6)},
         ["export", "c.json", "--decoders", "-s", "3", "-o", "plan.npz"],
         "n=40, s=3 (9,880 patterns)", False),
        ("export (structured)", {"m.json": designed("cyclic-mds", n=21, s=8, field="GF(43)")},
         ["export", "m.json", "--decoders", "-s", "8", "--max-patterns", "300000", "-o",
          "plan.npz"], "cyclic-mds GF(43) n=21, s=8 (203,490 patterns)", False),
        ("bound (rank of B)", {"c.json": lambda: shuffled_cyclic(1000, 3)},
         ["bound", "c.json"], "real n=1000 (rank and witness: 4 factorisations)", False),
        ("design cyclic", {}, ["design", "cyclic", "-n", "1000", "-s", "150", "-o", "d.json"],
         "n=1000, s=150 (1000 solves of 150 x 150, self-check)", False),
        ("attack milp (budget)", {"c.json": designed("cyclic", n=16, s=4, seed=1)},
         ["attack", "c.json", "-s", "6", "--method", "milp", "--max-work", "5s"],
         "cyclic n=16, s=6: node limits from a 5 s budget", False),
    ]


class Recorder:
    """Records the estimates a command checks (seconds on their jobs) and the meters of the
    searches (what they charged, in seconds of one core)."""

    def __init__(self) -> None:
        self.checks: list[tuple[str, float]] = []
        self.meters: list[Any] = []

    def install(self) -> None:
        from gctool import budget as bd

        check, meter_init = bd.Budget.check_work, bd.Meter.__init__
        rec = self

        def check_work(self: Any, what: str, work: float, remedy: str, jobs: int = 1) -> None:
            rec.checks.append((what, work / bd.NS_PER_S / max(1, jobs)))
            check(self, what, work, remedy, jobs)

        def init(self: Any, *args: Any, **kwargs: Any) -> None:
            meter_init(self, *args, **kwargs)
            rec.meters.append(self)

        bd.Budget.check_work = check_work  # type: ignore[method-assign]
        bd.Meter.__init__ = init  # type: ignore[method-assign]

    def reset(self) -> None:
        self.checks.clear()
        self.meters.clear()

    def estimate(self) -> tuple[float, str]:
        from gctool.budget import NS_PER_S

        checked = max((t for _, t in self.checks), default=0.0)
        charged = max((m.spent for m in self.meters), default=0.0) / NS_PER_S
        return (charged, "charged") if charged > checked else (checked, "estimated")


def run_case(rec: Recorder, args: list[str]) -> dict[str, Any]:
    from gctool.cli.main import cli

    rec.reset()
    if "--max-work" not in args:
        args = [*args, "--max-work", NO_REFUSAL]
    c0, w0 = time.process_time(), time.perf_counter()
    with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink), \
            contextlib.redirect_stderr(sink):
        code = int(cli.main(args, standalone_mode=False) or 0)
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    est, kind = rec.estimate()
    return {"exit": code, "cpu_s": cpu, "wall_s": wall, "estimate_s": est, "kind": kind,
            "ratio": wall / est if est else float("nan"),
            "cpu_ratio": cpu / est if est else float("nan")}


def warm_imports() -> None:
    import scipy.linalg  # noqa: F401
    import scipy.optimize  # noqa: F401

    import gctool.audit.attack  # noqa: F401
    import gctool.audit.verify  # noqa: F401
    import gctool.cli.main  # noqa: F401
    import gctool.exports  # noqa: F401


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes (smoke test)")
    ap.add_argument("--jobs", default="1", help="--jobs of the commands that take it")
    ap.add_argument("--repeat", type=int, default=2,
                    help="runs per case (the first warms the kernels; the fastest is reported)")
    ap.add_argument("--json", action="store_true", help="one JSON document on stdout")
    a = ap.parse_args()
    from gctool import limits

    os.environ.pop("GCTOOL_MAX_WORK", None)
    rec = Recorder()
    rec.install()
    warm_imports()
    rows = []
    if not a.json:
        print(f"default work budget {limits.DEFAULT_MAX_WORK} s; --jobs {a.jobs}")
        print(f"{'case':<22} {'estimate s':>10} {'':<9} {'wall s':>8} {'CPU s':>8} "
              f"{'ratio':>6} {'cpu/est':>7}  size")
    with tempfile.TemporaryDirectory() as tmp:
        here = Path.cwd()
        os.chdir(tmp)
        try:
            for name, files, args, note, timed in cases(a.quick, a.jobs):
                for fname, make in files.items():
                    Path(fname).write_bytes(make())
                runs = [run_case(rec, args) for _ in range(max(2, a.repeat))][1:]
                best = min(runs, key=lambda r: r["wall_s"])
                best.update(case=name, size=note, args=args, timed=timed)
                rows.append(best)
                if not a.json:
                    flag = "" if best["exit"] in (0, 1) else f"  (exit {best['exit']})"
                    off = timed and not 0.5 <= best["ratio"] <= 2
                    print(f"{name:<22} {best['estimate_s']:10.3g} {best['kind']:<9} "
                          f"{best['wall_s']:8.3f} {best['cpu_s']:8.3f} {best['ratio']:6.2f} "
                          f"{best['cpu_ratio']:7.2f}{' !' if off else '  '}{note}{flag}")
        finally:
            os.chdir(here)
    if a.json:
        json.dump({"budget_s": limits.DEFAULT_MAX_WORK, "jobs": a.jobs, "cases": rows},
                  sys.stdout, indent=2)
        print()
    else:
        timed = [r["ratio"] for r in rows if r["timed"]]
        print(f"timed cases: measured / estimated {min(timed):.2f}-{max(timed):.2f} "
              "(target 0.5-2; '!' marks a case outside it)")


if __name__ == "__main__":
    with readme.section(__file__):
        main()
