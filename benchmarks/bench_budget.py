"""Benchmark of the work budget: gctool's time estimates against the time they stand for.

Every command that computes estimates its time before it starts (``gctool/budget.py``: the
shared cost model in nanoseconds of one core; the compiled audit kernels' calibrated time per
straggler set next to each kernel) and refuses it when the estimate, divided by the jobs that
will run it, is above the work budget (``--max-work``, default 5 s).  This script runs
representative commands as the command line runs them (``gctool.cli.main``, in-process, with a
budget large enough that nothing is refused) and prints for each one:

* the estimate: the largest estimate the command checked (``Budget.check_work``: its time on
  the jobs that run it), with the parts it spent before it (``Budget.used``: rotation detection
  before a certificate or an enumeration), or, for searches that only charge as they go, what
  their meters charged; for a command whose parts share one budget (``bound``, ``design``:
  ``gctool.budget.SharedWork``), the sum of their estimates, what it refuses on ("summed");
* the measured wall and CPU time of the command (libraries imported and kernels compiled
  beforehand: the first of ``--repeat`` runs warms them and is not reported);
* their ratio, measured wall time / estimate (and CPU time / estimate, which a loaded machine
  disturbs less; with ``--jobs 1`` both should agree).  CPU time counts the processes a run
  starts (a pool of processes on the numpy route), once they have ended.

Target: on the timed cases of issue #28 (``verify`` of real cyclic n=48 s=6, ``verify`` of
cyclic-MDS GF(2^6) n=63 s=6, ``attack -s 6`` of real cyclic n=40, and a complex code) the
estimate is within 2x of the measured wall time (ratio 0.5-2); on the others the ratio is at
most about 1 (an estimate never lets through a run much longer than the budget) and not far
below 0.05 (it never refuses what is quick).  The timed cases need a quiet machine: their
ratios on a loaded one measure the load.

``--unseen`` runs a spread of codes the estimates were not calibrated on (random dense real,
complex, GF(2^8) and GF(65521) codes drawn from ``--seed``, rs over R, C, GF(2^7) and GF(65537),
real cyclic n=64 with
s=7 and 8, sbc, bibd and expander codes that fail at their first sets, frc, samples, the
fixed decoder, encoded frames' spectra (Gaussian frames' k x k eigenproblems on numpy's batches
and the compiled walk, a tight frame's s x s Grams), ``verify``, ``attack -s``,
``attack --threshold`` (among them is-cr and random
complex codes above an epsilon > 0, whose small sizes send their sets to numpy) and
``--curve``, and large dense codes (complex n=200, real n=300, frc n=120, a 1000-worker code)
and a MILP as a user runs them, ``--method auto``; families and fields no estimate was fitted
on: rs over GF(3^4), cyclic-MDS over GF(2^5), a random dense GF(2^31) code (polynomial
arithmetic above the tables), a nested complex code,
frc at d = 40, graph and soft-BIBD thresholds) for each
``--jobs`` of a list
(e.g. ``1,2``), first as a user runs them (default budget), each run (and a refused one's run
with the budget raised) in a fresh process of its own (no compiled kernel loaded yet: the
estimate charges their loading, and a size the loading puts over the budget is refused as on
the command line; the modules the command imports are warmed first by a run on the numpy
kernels alone).  A refused run must be refused in
one line naming ``--max-work``; it is then run with the budget raised, whole when its estimate
is at most ``--cap`` seconds, else on a stratified sample of its engine tasks (verify), its
time extrapolated from the sample's share of the ranks (a search other than verify estimated
above ``MAX_RAISED`` is not run: its refusal is checked).  A run that a meter stopped and that
goes on (auto's heuristic result: "stopped") is estimated at the work its meters let through.
Target: measured / estimated within 0.5-2 on every run of ``MIN_TIMED`` or more.  Codes
whose doubtful sets go to exact arithmetic (e.g. ``comm`` n=40 s=5 m=2, condition 9e9) are
refused by the timed probe (``gctool.budget.probe_rate``) after its first sets: ``attack``
probes before any task, ``verify`` after its first (pilot) chunk.

Run:  .venv/bin/python benchmarks/bench_budget.py [--quick] [--unseen] [--jobs N[,N]]
[--repeat N] [--only TEXT] [--json] [--write-readme]

``--only`` runs the cases whose name or size contains TEXT (a check of one estimate; not with
``--write-readme``).  ``--quick`` runs sizes about a hundred times smaller (a smoke test;
fixed costs dominate there).  ``--jobs`` is passed to the commands that take it (default 1).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import subprocess
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
from timing import random_matrix  # noqa: E402

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


def random_dense(n: int, k: int, s: int, field: str, seed: int) -> Callable[[], bytes]:
    """A random dense n x k code over ``field`` (real, complex, GF(q)) declared to tolerate s:
    no structure, no symmetry, nothing the estimates were calibrated on."""
    def make() -> bytes:
        from gctool.algebra.fields import parse_field
        from gctool.io import code_bytes
        from gctool.model import GradientCode

        B = random_matrix(np.random.default_rng(seed), field, n, k)
        return code_bytes(GradientCode(B, parse_field(field), s, "custom"), npz=False)
    return make


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
             ["bound", "c.json", "--max-work", "5s"], "n=100", False),
            ("design cyclic", {}, ["design", "cyclic", "-n", "200", "-s", "40", "-o",
                                   "d.json"], "n=200, s=40", False),
            ("attack milp (budget)", {"c.json": designed("cyclic", n=10, s=2, seed=1)},
             ["attack", "c.json", "-s", "4", "--method", "milp", "--max-work", "300ms"],
             "n=10, s=4, 300 ms", False),
            ("verify --level-counts", {"n.json": designed("nested", n=8, levels=[1, 3],
                                                          seed=0)},
             ["verify", "n.json", "--level-counts", "2,2,4"], "nested n=8, 420 profiles",
             True),
            ("attack encoded frame", {"e.json": designed("encoded", frame="paley", workers=14,
                                                         s=1)},
             ["attack", "e.json", "-s", "3", "--method", "exhaustive", *j],
             "Paley ETF n=14, s=3", True),
            *design_cases(quick),
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
        # at the default budget: the rows of the decoding of every set are left out (they
        # would take years) and the rank of B and its witness run
        ("bound (rank of B)", {"c.json": lambda: shuffled_cyclic(1000, 3)},
         ["bound", "c.json", "--max-work", "5s"],
         "real n=1000 (rank and witness: 4 factorisations; the searches the rest admits)", False),
        ("design cyclic", {}, ["design", "cyclic", "-n", "1000", "-s", "150", "-o", "d.json"],
         "n=1000, s=150 (1000 solves of 150 x 150, self-check)", False),
        ("attack milp (budget)", {"c.json": designed("cyclic", n=16, s=4, seed=1)},
         ["attack", "c.json", "-s", "6", "--method", "milp", "--max-work", "5s"],
         "cyclic n=16, s=6: node limits from a 5 s budget", False),
        ("verify --level-counts", {"n.json": designed("nested", n=12, levels=[1, 3], seed=0)},
         ["verify", "n.json", "--level-counts", "6,3,3"],
         "nested complex n=12 (18,480 level profiles)", True),
        # the spectral audit: a compiled walk of eigenproblems (gctool.audit.kernels.spectra)
        ("attack encoded frame", {"e.json": designed("encoded", frame="paley", workers=30, s=1)},
         ["attack", "e.json", "-s", "6", "--method", "exhaustive", *j],
         "Paley ETF n=30, k=15, s=6 (594 k sets, compiled walk)", True),
        # the rank of B over GF(q): one Gauss-Jordan elimination out of the caches
        # (gctool.algebra.linalg.elimination_cost)
        ("bound (GF rank)", {"g.json": random_dense(384, 380, 4, "GF(65521)", 1)},
         ["bound", "g.json"], "random dense GF(65521) 384 x 380 (rank of B)", False),
        ("bound (GF rank)", {"g.json": random_dense(512, 500, 4, "GF(2^8)", 1)},
         ["bound", "g.json"], "random dense GF(2^8) 512 x 500 (rank of B)", False),
        # the searches that decode systems of their own (gctool.decode.cost's per-path
        # times): partial work's profiles in batches, the stopping rule's generic decoder one
        # arrival prefix at a time, the elementary vectors' (r - 1) x r systems in batches
        *[(f"verify --partial {fld}", {"p.json": designed("rs", n=21, s=4, field=fld,
                                                          order="rotated", message_size=2)},
           ["verify", "p.json", "--partial", "4"],
           f"rs {fld} n=21, messages of 2 partitions (10,206 profiles)", False)
          for fld in ("GF(2^8)", "GF(65521)", "GF(3^4)", "real")],
        *[(f"simulate {fld}", {"p.json": random_dense(30, 24, 4, fld, 1)},
           ["simulate", "p.json", "--iterations", "200", "--no-baselines", "--seed", "1"],
           f"random dense {fld} n=30 k=24 s=4 (the generic decoder's prefixes)", False)
          for fld in ("GF(2^8)", "GF(2^20)", "GF(3^4)")],
        *[(f"attack elementary {fld}", {"p.json": random_dense(20, 15, 3, fld, 1)},
           ["attack", "p.json", "--threshold", "--method", "elementary"],
           f"random dense {fld} n=20 k=15 (38,760 row sets of rank - 1)", False)
          for fld in ("GF(2^8)", "GF(65521)", "GF(2^20)", "GF(2^31)", "real")],
        *design_cases(quick),
    ]


def design_cases(quick: bool) -> list[Case]:
    """design's estimate (summed over its parts) where it is more than its fixed costs: the
    file written (JSON of 16.8 M entries, NPZ), a BIBD's difference set checked, the exact
    check of a GF(q) cyclic draw over fields with tables and above them."""
    if quick:
        return [
            ("design bibd (JSON)", {}, ["design", "bibd", "--design", "bent-256", "-o",
                                        "b.json"], "bent-256", False),
            ("design cyclic GF(3^12)", {}, ["design", "cyclic", "-n", "12", "-s", "2",
                                            "--field", "GF(3^12)", "--seed", "1", "-o",
                                            "g.json"], "n=12, s=2", False),
        ]
    return [
        ("design bibd (JSON)", {}, ["design", "bibd", "--design", "bent-4096", "-o", "b.json"],
         "bent-4096: check of D, 4096 x 4096 incidence, 84 MB of JSON", True),
        ("design bibd (NPZ)", {}, ["design", "bibd", "--design", "paley-4091", "-o", "b.npz"],
         "paley-4091: 4091 x 4091 incidence, NPZ", True),
        ("design bgc (JSON)", {}, ["design", "bgc", "-n", "3000", "-d", "3", "--seed", "1",
                                   "-o", "r.json"], "bgc n=3000: 9 M entries as JSON", True),
        ("design cyclic GF(3^12)", {}, ["design", "cyclic", "-n", "30", "-s", "5", "--field",
                                        "GF(3^12)", "--seed", "1", "-o", "g.json"],
         "n=30, s=5: exact check of 142,506 sets, tables", True),
        ("design cyclic GF(2^31)", {}, ["design", "cyclic", "-n", "30", "-s", "5", "--field",
                                        "GF(2^31)", "--seed", "1", "-o", "g.json"],
         "n=30, s=5: exact check of 142,506 sets, polynomial arithmetic", True),
        ("design cyclic GF(7^11)", {}, ["design", "cyclic", "-n", "24", "-s", "4", "--field",
                                        "GF(7^11)", "--seed", "1", "-o", "g.json"],
         "n=24, s=4: exact check of 10,626 sets, digit planes", True),
    ]


#: (name, files, command line without --jobs, note) of :func:`unseen_cases`
Unseen = tuple[str, dict[str, Callable[[], bytes]], list[str], str]


def unseen_cases(quick: bool, seed: int) -> list[Unseen]:
    """A spread of codes the estimates were not calibrated on (random dense codes of every
    field, the other schemes, several n and s, codes refused by default), for ``verify``,
    ``attack -s`` and ``attack --threshold``; random codes are drawn from ``seed``."""
    ex = ["--method", "exhaustive"]
    sim = ["--no-baselines", "--seed", "1"]
    if quick:
        return [
            ("verify random real", {"r.json": random_dense(22, 17, 4, "real", seed)},
             ["verify", "r.json", *ex], "random dense real n=22 k=17 s=4"),
            ("verify random GF(2^8)", {"g.json": random_dense(20, 15, 4, "GF(2^8)", seed)},
             ["verify", "g.json", *ex], "random dense GF(2^8) n=20 k=15 s=4"),
            ("verify rs complex", {"z.json": designed("rs", n=20, s=4, field="complex")},
             ["verify", "z.json", *ex], "rs complex n=20 s=4"),
            ("attack -s random", {"a.json": random_dense(18, 13, 4, "real", seed)},
             ["attack", "a.json", "-s", "4", *ex, "--no-symmetry"], "random real n=18 s=4"),
            ("attack --threshold", {"f.json": designed("frc", n=18, s=2)},
             ["attack", "f.json", "--threshold", *ex], "frc n=18 s=2"),
            ("attack --threshold", {"i.json": designed("is-cr", n=20, s=3)},
             ["attack", "i.json", "--threshold", "--epsilon", "0.5", *ex, "--no-symmetry"],
             "is-cr n=20 s=3, epsilon 0.5"),
            ("verify cyclic refused", {"c.json": designed("cyclic", n=26, s=6, seed=seed)},
             ["verify", "c.json", *ex, "--max-work", "100ms"],
             "real cyclic n=26 s=6, budget 100 ms"),
        ]
    return [
        ("verify random real", {"r.json": random_dense(44, 36, 6, "real", seed)},
         ["verify", "r.json", *ex], "random dense real n=44 k=36 s=6 (7.1 M sets, d=8)"),
        ("verify random real", {"r.json": random_dense(30, 14, 7, "real", seed)},
         ["verify", "r.json", *ex], "random dense real n=30 k=14 s=7 (2.0 M sets, d=16)"),
        ("verify random complex", {"z.json": random_dense(36, 30, 5, "complex", seed)},
         ["verify", "z.json", *ex], "random dense complex n=36 k=30 s=5 (377 k sets, d=6)"),
        ("verify rs real", {"v.json": designed("rs", n=40, s=5)},
         ["verify", "v.json", *ex], "rs real n=40 s=5 (658 k sets)"),
        # the complex screen's time per set as d grows (its rate per multiply-add): rs, whose
        # estimate was twice its time at d = 20, and a random dense code at d = 12
        ("verify rs complex", {"z.json": designed("rs", n=40, s=5, field="complex")},
         ["verify", "z.json", *ex], "rs complex n=40 s=5 (658 k sets, d=20)"),
        ("verify random complex", {"z.json": random_dense(40, 28, 6, "complex", seed)},
         ["verify", "z.json", *ex], "random dense complex n=40 k=28 s=6 (3.8 M sets, d=12)"),
        ("verify random GF(p)", {"p.json": random_dense(40, 33, 6, "GF(65521)", seed)},
         ["verify", "p.json", *ex], "random dense GF(65521) n=40 k=33 s=6 (3.8 M sets)"),
        ("verify random GF(2^8)", {"g.json": random_dense(36, 28, 6, "GF(2^8)", seed)},
         ["verify", "g.json", *ex], "random dense GF(2^8) n=36 k=28 s=6 (1.9 M sets)"),
        ("verify rs GF(2^7)", {"g.json": designed("rs", n=50, s=5, field="GF(2^7)")},
         ["verify", "g.json", *ex], "rs GF(2^7) n=50 s=5 (2.1 M sets)"),
        # the screen's time grows with d - s (random dense, d = 20), a GF(p) walk over a
        # sparse N (rs: N in echelon form), the batched elimination over GF(p) (numpy route)
        ("verify random real", {"r.json": random_dense(44, 24, 6, "real", seed)},
         ["verify", "r.json", *ex], "random dense real n=44 k=24 s=6 (7.1 M sets, d=20)"),
        ("verify rs GF(p)", {"p.json": designed("rs", n=48, s=6, field="GF(65537)")},
         ["verify", "p.json", *ex], "rs GF(65537) n=48 s=6 (12.3 M sets)"),
        ("verify cyclic n=64 s=7", {"c.json": designed("cyclic", n=64, s=7, seed=seed)},
         ["verify", "c.json", *ex], "real cyclic n=64 s=7 (621 M sets)"),
        ("verify cyclic n=64 s=8", {"c.json": designed("cyclic", n=64, s=8, seed=seed)},
         ["verify", "c.json", *ex], "real cyclic n=64 s=8 (4.4 G sets)"),
        ("attack -s random real", {"a.json": random_dense(36, 30, 5, "real", seed)},
         ["attack", "a.json", "-s", "5", *ex, "--no-symmetry"],
         "random dense real n=36 k=30 s=5 (377 k sets)"),
        ("attack -s rs complex", {"a.json": designed("rs", n=30, s=5, field="complex")},
         ["attack", "a.json", "-s", "5", *ex, "--no-symmetry"], "rs complex n=30 s=5"),
        ("attack -s GF(2^8)", {"a.json": random_dense(32, 26, 5, "GF(2^8)", seed)},
         ["attack", "a.json", "-s", "5", *ex, "--no-symmetry"],
         "random dense GF(2^8) n=32 k=26 s=5"),
        ("attack -s GF(p)", {"a.json": random_dense(26, 18, 4, "GF(65521)", seed)},
         ["attack", "a.json", "-s", "4", *ex, "--no-symmetry"],
         "random dense GF(65521) n=26 k=18 s=4 (14,950 sets)"),
        ("attack --threshold", {"f.json": designed("frc", n=40, s=4)},
         ["attack", "f.json", "--threshold", *ex], "frc n=40 s=4"),
        ("attack --threshold", {"r.json": random_dense(34, 28, 5, "real", seed)},
         ["attack", "r.json", "--threshold", *ex, "--no-symmetry"],
         "random dense real n=34 k=28 (threshold 7)"),
        # the other schemes: codes that fail at their first sets (the run stops there),
        # samples, the fixed decoder, thresholds with and without symmetry
        ("verify sbc (fails)", {"s.json": designed("sbc", n=40, s=5, seed=1)},
         ["verify", "s.json", *ex], "sbc n=40 s=5 (fails at its first set)"),
        ("verify bibd (fails)", {"b.json": designed("bibd", design="pg2-7", s=7)},
         ["verify", "b.json", *ex], "bibd pg2-7 n=57 s=7 (fails at its first set)"),
        ("verify expander", {"e.json": designed("expander", vertices=40, s=4, d=6, seed=1)},
         ["verify", "e.json", *ex], "expander n=40 d=6 s=4 (fails at its first set)"),
        ("verify frc n=60", {"f.json": designed("frc", n=60, s=5)},
         ["verify", "f.json", *ex], "frc n=60 s=5 (5.5 M sets)"),
        ("verify --sample GF", {"g.json": designed("cyclic-mds", n=51, s=6, field="GF(2^8)")},
         ["verify", "g.json", "--sample", "300000", "--seed", "1"],
         "cyclic-mds GF(2^8) n=51 s=6, 300 k random sets"),
        ("verify --sample real", {"c.json": lambda: shuffled_cyclic(40, 6)},
         ["verify", "c.json", "--sample", "1200000", "--seed", "1"],
         "shuffled cyclic n=40 s=6, 1.2 M random sets"),
        ("attack -s fixed", {"x.json": designed("cyclic", n=34, s=5, seed=1)},
         ["attack", "x.json", "-s", "6", *ex, "--decoder", "fixed", "--no-symmetry"],
         "cyclic n=34 s=6, fixed decoder (1.3 M sets)"),
        ("attack -s expander", {"e.json": designed("expander", vertices=36, s=4, d=6, seed=1)},
         ["attack", "e.json", "-s", "5", *ex, "--no-symmetry"], "expander n=36 d=6 s=5"),
        ("attack --threshold", {"c.json": designed("cyclic", n=40, s=6, seed=1)},
         ["attack", "c.json", "--threshold", *ex], "real cyclic n=40 s=6 (symmetry allowed)"),
        ("attack --threshold", {"z.json": random_dense(34, 28, 5, "complex", seed)},
         ["attack", "z.json", "--threshold", *ex, "--no-symmetry"],
         "random dense complex n=34 k=28 (threshold 7)"),
        ("attack --threshold", {"r.json": random_dense(40, 33, 6, "real", seed)},
         ["attack", "r.json", "--threshold", *ex, "--no-symmetry"],
         "random dense real n=40 k=33 (threshold 8)"),
        ("attack --threshold", {"i.json": designed("is-cr", n=36, s=5)},
         ["attack", "i.json", "--threshold", "--epsilon", "1", *ex, "--no-symmetry"],
         "is-cr n=36 s=5, epsilon 1"),
        ("attack --curve", {"c.json": designed("cyclic", n=30, s=5, seed=1)},
         ["attack", "c.json", "--curve", "--max-s", "6", *ex, "--no-symmetry"],
         "real cyclic n=30, s = 0..6"),
        # thresholds above epsilon > 0 whose small sizes (below 262,144 sets) carry the run:
        # doubtful sets that the compiled walk sends to numpy, timed on a sample of each size
        ("attack --threshold", {"i.json": designed("is-cr", n=30, s=4)},
         ["attack", "i.json", "--threshold", "--epsilon", "0.5", *ex, "--no-symmetry"],
         "is-cr n=30 s=4, epsilon 0.5 (small sizes)"),
        ("attack --threshold", {"z.json": random_dense(28, 20, 4, "complex", seed)},
         ["attack", "z.json", "--threshold", "--epsilon", "1", *ex, "--no-symmetry"],
         "random dense complex n=28 k=20, epsilon 1 (small sizes)"),
        # large dense codes as a user runs them (method auto): the exhaustive search near or
        # over the budget, then greedy and branch and bound held to it as they run (a run
        # stopped there is 'stopped': its estimate is the work its meter let through)
        ("attack -s auto", {"z.json": random_dense(200, 160, 4, "complex", seed)},
         ["attack", "z.json", "-s", "4"], "random dense complex n=200 k=160 s=4 (auto)"),
        ("attack --threshold auto", {"z.json": random_dense(200, 160, 4, "complex", seed)},
         ["attack", "z.json", "--threshold"], "random dense complex n=200 k=160 (auto)"),
        ("attack --curve auto", {"z.json": random_dense(200, 160, 4, "complex", seed)},
         ["attack", "z.json", "--curve", "--max-s", "4"],
         "random dense complex n=200 k=160, s = 0..4 (auto)"),
        ("attack -s auto", {"r.json": random_dense(300, 250, 5, "real", seed)},
         ["attack", "r.json", "-s", "4"], "random dense real n=300 k=250 s=4 (auto)"),
        ("attack --threshold auto", {"f.json": designed("frc", n=120, s=5)},
         ["attack", "f.json", "--threshold"], "frc n=120 s=5 (auto)"),
        ("attack -s milp", {"c.json": designed("cyclic", n=8, s=2, seed=1)},
         ["attack", "c.json", "-s", "2", "--method", "milp"],
         "real cyclic n=8 s=2, MILP (its bound at the solver's tolerance)"),
        # families and fields the estimates were not fitted on: GF(p^m) with p odd and GF(2^5)
        # (the compiled GF walk and exact arithmetic), a nested complex code at its top level,
        # graph and soft-BIBD codes' thresholds, frc at d = 40 (comm with m = 2 pieces, cond
        # 1e9, is left out: its doubtful sets go to exact arithmetic, and a run raised above
        # the budget takes many minutes, whole or sampled)
        ("verify rs GF(3^4)", {"q.json": designed("rs", n=40, s=4, field="GF(3^4)")},
         ["verify", "q.json", *ex], "rs GF(3^4) n=40 s=4 (91 k sets, exact arithmetic)"),
        ("verify cyclic-mds GF(2^5)", {"g.json": designed("cyclic-mds", n=31, s=6,
                                                          field="GF(2^5)")},
         ["verify", "g.json", *ex], "cyclic-mds GF(2^5) n=31 s=6 (736 k sets)"),
        ("verify nested complex", {"n.json": designed("nested", n=40, levels=[2, 5])},
         ["verify", "n.json", *ex], "nested complex n=40 levels 2,5, s=5 (658 k sets)"),
        ("verify frc n=50", {"f.json": designed("frc", n=50, s=4)},
         ["verify", "f.json", *ex], "frc n=50 s=4 (230 k sets, d=40)"),
        # one set per rotation orbit (method auto): the orbit filter and the screen on given
        # sets, not the walk
        ("verify by symmetry", {"z.json": designed("cyclic-mds", n=48, s=6, field="complex")},
         ["verify", "z.json"], "cyclic-mds complex n=48 s=6 (256 k orbit sets)"),
        ("verify by symmetry", {"z.json": designed("cyclic-mds", n=40, s=5, field="complex")},
         ["verify", "z.json"], "cyclic-mds complex n=40 s=5 (16 k orbit sets)"),
        ("verify by symmetry", {"r.json": designed("cyclic-mds", n=47, s=6)},
         ["verify", "r.json"], "cyclic-mds real n=47 s=6 (228 k orbit sets)"),
        ("verify by symmetry", {"i.json": designed("is-cr", n=48, s=5)},
         ["verify", "i.json"], "is-cr n=48 s=5 (36 k orbit sets)"),
        ("attack --threshold", {"g.json": designed("graph", graph="random-regular",
                                                   vertices=20, d=4, s=2, seed=1)},
         ["attack", "g.json", "--threshold", *ex], "graph random-regular v=20 deg 4 (40 edges)"),
        ("attack -s GF(3^4)", {"q.json": designed("rs", n=24, s=4, field="GF(3^4)")},
         ["attack", "q.json", "-s", "4", *ex, "--no-symmetry"], "rs GF(3^4) n=24 s=4"),
        # above the tables: the decoder's polynomial products (gctool.algebra.gf.muladd_ns)
        ("attack -s GF(2^31)", {"a.json": random_dense(24, 18, 3, "GF(2^31)", seed)},
         ["attack", "a.json", "-s", "3", *ex, "--no-symmetry"],
         "random dense GF(2^31) n=24 k=18 s=3 (2,024 sets)"),
        ("attack --threshold", {"b.json": designed("soft-bibd", n=40, s=4, seed=1)},
         ["attack", "b.json", "--threshold", *ex, "--no-symmetry"], "soft-bibd n=40 s=4"),
        # the first batch of a 1000-worker code is far over the budget: a forecast, refused
        ("attack -s n=1000", {"c.json": lambda: shuffled_cyclic(1000, 3)},
         ["attack", "c.json", "-s", "4"], "shuffled cyclic n=1000 s=4 (refused by its meter)"),
        # one set per rotation orbit at sizes and fields the orbit estimate was not fitted on:
        # is-cr sends most of its sets to the second stage and a few to the direct decoder
        # (FloatNullKernel.stage_shares); n=63 s=6 is refused by default
        ("verify by symmetry", {"i.json": designed("is-cr", n=54, s=5)},
         ["verify", "i.json"], "is-cr n=54 s=5 (59 k orbit sets)"),
        ("verify by symmetry", {"i.json": designed("is-cr", n=56, s=6)},
         ["verify", "i.json"], "is-cr n=56 s=6 (580 k orbit sets)"),
        ("verify by symmetry", {"i.json": designed("is-cr", n=63, s=6)},
         ["verify", "i.json"], "is-cr n=63 s=6 (1.1 M orbit sets, refused by default)"),
        ("verify by symmetry", {"g.json": designed("is-cr", n=56, s=6, field="GF(2^8)")},
         ["verify", "g.json"], "is-cr GF(2^8) n=56 s=6 (580 k orbit sets)"),
        ("verify by symmetry", {"z.json": designed("cyclic-mds", n=44, s=6, field="complex")},
         ["verify", "z.json"], "cyclic-mds complex n=44 s=6 (160 k orbit sets)"),
        ("verify by symmetry", {"r.json": designed("cyclic-mds", n=53, s=6)},
         ["verify", "r.json"], "cyclic-mds real n=53 s=6 (433 k orbit sets)"),
        # the structural shortcuts (method auto), each on its own estimate: the row-class
        # certificate where the reduction of B is over the budget (R) or first (GF(q)), one set
        # per row-class pattern after the reduction where that fits (n=1024), and
        # the BCH certificate of a large cyclic-MDS code (NPZ files: JSON of 16 M entries
        # would time the parser)
        ("verify frc certificate", {"f.npz": designed_npz("frc", n=4096, s=15)},
         ["verify", "f.npz"], "frc real n=4096 s=15 (row-class certificate)"),
        ("verify frc certificate", {"f.npz": designed_npz("frc", n=4096, s=15, field="GF(7)")},
         ["verify", "f.npz"], "frc GF(7) n=4096 s=15 (row-class certificate)"),
        ("verify frc certificate", {"f.npz": designed_npz("frc", n=2048, s=7)},
         ["verify", "f.npz"], "frc real n=2048 s=7 (reduction over 5 s: row-class certificate)"),
        ("verify frc patterns", {"f.npz": designed_npz("frc", n=1024, s=7)},
         ["verify", "f.npz"], "frc real n=1024 s=7 (reduction, then 1 class pattern)"),
        ("verify cyclic-mds BCH", {"g.npz": designed_npz("cyclic-mds", n=4095, s=1023,
                                                         field="GF(2^12)")},
         ["verify", "g.npz"], "cyclic-mds GF(2^12) n=4095 s=1023 (BCH certificate)"),
        # reading a large JSON file is most of the run (gctool.budget.read_cost)
        ("verify JSON read", {"f.json": designed("frc", n=2048, s=15, field="GF(7)")},
         ["verify", "f.json"], "frc GF(7) n=2048 s=15 from 12 MB of JSON (row-class certificate)"),
        # the plain walk (no orbits) of a code whose bound leaves most sets below delta: each
        # gets the walk's witness test, a few the second stage and the direct decoder
        # (FloatNullKernel.stage_shares in set_time)
        ("verify walk is-cr", {"i.json": designed("is-cr", n=48, s=5)},
         ["verify", "i.json", *ex], "is-cr n=48 s=5 (1.7 M sets, no orbits)"),
        # refused within TIMED_SPAN of a small budget: the numpy route (below the compiled
        # walk's 300,000 sets), whose calibrated rate read 2.1-2.7x its measured one, and one
        # set per rotation orbit below PROBE_MIN * PROBE orbits, each refused on a timed
        # sample of 1/PROBE_MIN of its sets
        ("verify frc n=50 refused", {"f.json": designed("frc", n=50, s=4)},
         ["verify", "f.json", *ex, "--max-work", "300ms"],
         "frc n=50 s=4 (230 k sets, numpy route), budget 0.3 s"),
        ("verify orbits refused", {"z.json": designed("cyclic-mds", n=48, s=6,
                                                      field="complex")},
         ["verify", "z.json", "--max-work", "200ms"],
         "cyclic-mds complex n=48 s=6 (256 k orbit sets), budget 0.2 s"),
        # the numpy route's screen (below the compiled walk's 300,000 sets) as it factors: a
        # QR of d x s beyond d = s (random dense d = 20), complex numbers, and a code whose
        # screen leaves most sets to the witness test (is-cr: FloatNullKernel.numpy_time)
        ("verify numpy route", {"r.json": random_dense(50, 30, 4, "real", seed)},
         ["verify", "r.json", *ex], "random dense real n=50 k=30 s=4 (230 k sets, d=20)"),
        ("verify numpy route", {"z.json": designed("rs", n=30, s=5, field="complex")},
         ["verify", "z.json", *ex], "rs complex n=30 s=5 (143 k sets, d=25)"),
        ("verify numpy route", {"i.json": designed("is-cr", n=50, s=4)},
         ["verify", "i.json", *ex],
         "is-cr n=50 s=4 (230 k sets, witness tests)"),
        # an encoded frame's spectra (gctool.audit.spectrum.Frame.set_work, kernels.spectra's
        # walk_cost): numpy's batches of k x k eigenproblems (LAPACK's, gctool.budget.
        # eigvalsh_cost), the compiled walk on LAPACK's sides and on a tight frame's s x s Grams
        ("attack encoded frame", {"e.json": designed("encoded", frame="gaussian", n=260, k=200,
                                                     s=1, seed=seed)},
         ["attack", "e.json", "-s", "1", *ex], "gaussian 260 x 200 s=1 (numpy, k x k)"),
        ("attack encoded frame", {"e.json": designed("encoded", frame="gaussian", n=150, k=100,
                                                     s=2, seed=seed)},
         ["attack", "e.json", "-s", "2", *ex], "gaussian 150 x 100 s=2 (11 k sets, numpy)"),
        ("attack encoded frame", {"e.json": designed("encoded", frame="gaussian", n=125, k=22,
                                                     s=3, seed=seed)},
         ["attack", "e.json", "-s", "3", *ex], "gaussian 125 x 22 s=3 (318 k sets, compiled)"),
        ("attack encoded frame", {"e.json": designed("encoded", frame="orthogonal", n=200,
                                                     k=100, s=3, seed=seed)},
         ["attack", "e.json", "-s", "3", *ex], "orthogonal 200 x 100 s=3 (1.3 M sets, s x s)"),
        # the timed probe's windows (gctool.budget.probe_rate): rs real n=36 s=6 hands its
        # costliest sets on in a cluster at the end of the lex order (its last 2.4 % of ranks
        # hold a third of its CPU), the exhaustive attack of is-cr times one set per rotation
        # orbit from the candidates' first ranks, the orbit filter counted apart
        ("verify rs real n=36 s=6", {"v.json": designed("rs", n=36, s=6)},
         ["verify", "v.json", *ex], "rs real n=36 s=6 (1.9 M sets, costly tail)"),
        ("attack -s orbits", {"i.json": designed("is-cr", n=56, s=6)},
         ["attack", "i.json", "-s", "6", *ex], "is-cr n=56 s=6 (one set per orbit)"),
        # simulate's stopping rule (gctool.sim.stopping.rule.rule_cost): a Bernoulli code that
        # not even all n workers decode (no dual walk: a QR and a failing decode a round), the
        # dual walk of a real cyclic code (at n=256 the rounds near the tolerance, the generic
        # decoder's search, weigh as much as the walk), an sbc code of full support whose rank
        # leaves the targets out (a QR a round), and the authors' rule's probes (over C, more
        # workers than B has columns go to the generic decoder; over R, dual residuals)
        ("simulate no set decodes", {"b.json": designed("bgc", n=64, s=4, seed=seed)},
         ["simulate", "b.json", "--iterations", "2000", *sim],
         "bgc n=64 s=4 (partitions nobody holds, cap 60), 2000 rounds"),
        ("simulate dual walk", {"c.json": designed("cyclic", n=64, s=4, seed=seed)},
         ["simulate", "c.json", "--iterations", "2000", *sim],
         "real cyclic n=64 s=4 (cap 60), 2000 rounds"),
        ("simulate near tol", {"c.json": designed("cyclic", n=256, s=8, seed=seed)},
         ["simulate", "c.json", "--iterations", "1000", *sim],
         "real cyclic n=256 s=8 (cap 248), 1000 rounds"),
        ("simulate rank short", {"s.json": designed("sbc", n=64, k=90, s=4, seed=seed)},
         ["simulate", "s.json", "--iterations", "2000", *sim],
         "sbc n=64 k=90 s=4 (rank 64 < k), 2000 rounds"),
        ("simulate rank short", {"s.json": designed("sbc", n=300, k=450, s=4, seed=seed)},
         ["simulate", "s.json", "--iterations", "500", *sim],
         "sbc n=300 k=450 s=4 (rank 300 < k, SVD above 10 ms), 500 rounds"),
        ("simulate --mu probes", {"z.json": random_dense(30, 24, 4, "complex", seed)},
         ["simulate", "z.json", "--iterations", "2000", *sim, "--protocol", "authors",
          "--mu", "3"], "random dense complex n=30 k=24 s=4, mu 3 (probes above k), 2000 rounds"),
        ("simulate --mu probes", {"c.json": designed("cyclic", n=64, s=4, seed=seed)},
         ["simulate", "c.json", "--iterations", "2000", *sim, "--protocol", "authors",
          "--mu", "0.2"], "real cyclic n=64 s=4, mu 0.2, 2000 rounds"),
        # partial work and nested levels (gctool.sim.contenders.partial): the messages' dual
        # walk stops far below the cap (every message) and leaves most rounds to the generic
        # decoder; tandon-partial's stops within the walk; under the authors' rule the sets
        # delivered by the wait, most of them missing more messages than B has columns
        ("simulate partial work", {"p.json": designed("cyclic", n=24, s=3, seed=seed,
                                                      order="rotated", message_size=2)},
         ["simulate", "p.json", "--iterations", "400", *sim],
         "real cyclic n=24 s=3, a message every 2 partitions (72), 400 rounds"),
        ("simulate partial work", {"t.json": designed("tandon-partial", n=64, s=4,
                                                      partitions=8, seed=seed)},
         ["simulate", "t.json", "--iterations", "2000", *sim],
         "tandon-partial n=64 s=4 P=8 (128 messages), 2000 rounds"),
        ("simulate partial --mu", {"p.json": designed("cyclic", n=64, s=4, seed=seed,
                                                      order="rotated", message_size=2)},
         ["simulate", "p.json", "--iterations", "1000", *sim, "--protocol", "authors",
          "--mu", "0.2"], "real cyclic n=64 s=4, messages of 2 partitions, mu 0.2, 1000 rounds"),
        ("simulate nested", {"n.json": designed("nested", n=64, levels=[1, 4], field="real",
                                                seed=seed)},
         ["simulate", "n.json", "--iterations", "200", *sim],
         "nested real n=64 levels 1,4 (128 messages), 200 rounds"),
        ("simulate nested --mu", {"n.json": designed("nested", n=64, levels=[1, 4], seed=seed)},
         ["simulate", "n.json", "--iterations", "1000", *sim, "--protocol", "authors",
          "--mu", "0.2"], "nested complex n=64 levels 1,4 (128 messages), mu 0.2, 1000 rounds"),
        # SR-SGC and M-SGC files (gctool.sim.contenders.schedule): the decodes of the sets
        # each round's straggler pattern leaves (under the authors' rule most patterns leave
        # the model: nobody straggles), and the schedule's updates
        ("simulate sr-sgc", {"r.json": designed("sr-sgc", n=128, seed=seed, burst=1, window=3,
                                                lam=4)},
         ["simulate", "r.json", "--iterations", "4000", *sim],
         "sr-sgc n=128 (B, W, lambda) = (1, 3, 4), 4000 rounds"),
        ("simulate m-sgc --mu", {"m.json": designed("m-sgc", n=128, burst=1, window=3, lam=4)},
         ["simulate", "m.json", "--iterations", "4000", *sim, "--protocol", "authors",
          "--mu", "0.2"], "m-sgc n=128 (B, W, lambda) = (1, 3, 4), mu 0.2, 4000 rounds"),
        # CodedReduce (gctool.sim.contenders.tree) and its flat companions: cyclic level codes
        # of rank f - s, so every parent-round's QR is rank-deficient and the generic decoder
        # searches it (each distinct set of children once); the leaf code on a flat server
        # decodes far below its cap; under the authors' rule the parents' sets
        ("simulate tree", {"t.json": designed("coded-reduce", fanout=8, depth=2, tolerance=2,
                                              seed=seed)},
         ["simulate", "t.json", "--iterations", "300", *sim],
         "coded-reduce f=8 depth 2 s=2 (64 leaves) and its flat companions, 300 rounds"),
        ("simulate tree --mu", {"t.json": designed("coded-reduce", fanout=16, depth=2,
                                                   tolerance=2, seed=seed)},
         ["simulate", "t.json", "--iterations", "300", *sim, "--protocol", "authors",
          "--mu", "0.2"], "coded-reduce f=16 depth 2 s=2 (256 leaves), mu 0.2, 300 rounds"),
    ]


def designed_npz(scheme: str, **kw: Any) -> Callable[[], bytes]:
    """:func:`designed`, as an NPZ file."""
    def make() -> bytes:
        from gctool.codes import design
        from gctool.io import code_bytes

        return code_bytes(design(scheme, **kw), npz=True)
    return make


class Recorder:
    """Records the estimates a command checks (seconds on their jobs), the meters of the
    searches (what they charged, in seconds of one core) and the runs whose parts share one
    budget (``bound``, ``design``: :class:`gctool.budget.SharedWork`, whose meter holds the sum
    of their parts' estimates, what the command refuses on).

    A check is recorded as the run's estimate up to it: its own (``work`` on its jobs, plus
    its ``fixed`` part) plus what the parts spent before it were estimated at, which the
    budget it is checked on says (``Budget.used``: a part admitted and spent, whose later
    parts are held to what it leaves, :meth:`gctool.budget.Budget.rest`: rotation detection
    before a certificate or an enumeration, in verify and attack).  Each part counts once,
    divided by its own jobs: a run's sequential parts are summed, and the checks of one part
    (a search checked before and after its set-up, a threshold search's sizes, a curve's
    points, whose estimates include the points before) are not added up."""

    def __init__(self) -> None:
        self.checks: list[tuple[str, float]] = []
        #: the checks above the budget: a refused run's estimate, or a part that a report
        #: leaves out (bound's rows that say what they did not compute), which the run does
        #: not spend
        self.refused: list[tuple[str, float]] = []
        self.meters: list[Any] = []
        self.shared: list[Any] = []
        #: the estimate (seconds) of the last refusal raised, a check's or a meter's: what a
        #: refused run states (auto catches an exhaustive refusal and goes on)
        self.last: float | None = None

    def install(self) -> None:
        from gctool import budget as bd

        check, meter_init = bd.Budget.check_work, bd.Meter.__init__
        charge, meter_check = bd.Meter.charge, bd.Meter.check
        shared_init = bd.SharedWork.__init__
        rec = self

        def check_work(self: Any, what: str, work: float, remedy: str, jobs: int = 1,
                       fixed: float = 0.0) -> None:
            # the run's estimate up to this check: the parts spent before it and this one
            seconds = self.used + (work / max(1, jobs) + fixed) / bd.NS_PER_S
            try:
                check(self, what, work, remedy, jobs, fixed)
            except bd.BudgetExceeded:  # left out of a report, or the run's refusal
                rec.refused.append((what, seconds))
                rec.last = seconds
                raise
            rec.checks.append((what, seconds))

        def init(self: Any, *args: Any, **kwargs: Any) -> None:
            meter_init(self, *args, **kwargs)
            rec.meters.append(self)

        def shared(self: Any, *args: Any, **kwargs: Any) -> None:
            shared_init(self, *args, **kwargs)
            rec.shared.append(self)

        def metered(original: Callable[..., None]) -> Callable[..., None]:
            def call(self: Any, work: float, what: str = "") -> None:
                try:
                    original(self, work, what)
                except bd.BudgetExceeded as exc:
                    rec.last = exc.needed if exc.kind == "work" else rec.last
                    raise
            return call

        bd.Budget.check_work = check_work  # type: ignore[method-assign]
        bd.Meter.__init__ = init  # type: ignore[method-assign]
        bd.Meter.charge = metered(charge)  # type: ignore[method-assign]
        bd.Meter.check = metered(meter_check)  # type: ignore[method-assign]
        bd.SharedWork.__init__ = shared  # type: ignore[method-assign]

        from gctool.audit import exhaustive

        search = exhaustive._SearchBudget.__call__

        def sizes(self: Any, t: int, used: int, need: int) -> str | None:
            refusal = search(self, t, used, need)  # the estimate of the sizes up to t
            (rec.checks if refusal is None else rec.refused).append(
                (f"threshold search up to size {t}", self.oracle.budget.used + self.time))
            return refusal

        exhaustive._SearchBudget.__call__ = sizes  # type: ignore[method-assign]

    def reset(self) -> None:
        self.checks.clear()
        self.refused.clear()
        self.meters.clear()
        self.shared.clear()
        self.last = None

    def estimate(self, refused: bool = False, charged: bool = False) -> tuple[float, str]:
        """The run's estimate: the sum of its parts when they share one budget (what its
        meter was charged), else the largest estimate it checked and spent, each with the
        parts spent before it (the sum of the run's sequential parts, :class:`Recorder`;
        ``refused``: the run was refused, exit 2: the largest it checked; ``charged``: a
        search held to the budget as it goes, whose checks are its set-up only: what its
        meters charged)."""
        from gctool.budget import NS_PER_S

        if refused and self.last is not None:  # the refusal the run ended with
            return self.last, "estimated"
        checks = self.checks + (self.refused if refused else [])
        checked = max((t for _, t in checks), default=0.0)
        # (a part designed inside a larger run, e.g. simulate's companions of a CodedReduce
        # tree, has a shared budget of its own below the run's estimate)
        summed = max((r.meter.spent for r in self.shared), default=0.0) / NS_PER_S
        if self.shared and not refused and summed >= checked:
            return summed, "summed"
        spent = max((m.spent for m in self.meters), default=0.0) / NS_PER_S
        # a meter that refused (``spent`` past its limit): the search it held stopped there,
        # at the work it had done (``done``; a run that goes on, such as auto's heuristic
        # result), or the run was refused with its forecast (``spent``: the refused step too)
        stopped = [m for m in self.meters if m.spent > m.limit]
        if stopped and not refused:
            done = max(m.done for m in stopped) / NS_PER_S
            if done > checked:
                return done, "stopped"
        # a search admitted on its timed estimate still charges its calibrated work: the
        # meter is the estimate only of searches that checked none, or of those that check
        # their set-up alone and then charge their work as it is spent (``charged``)
        if charged and not refused:
            return spent, "charged"
        return (checked, "estimated") if checked else (spent, "charged")


#: the exit codes of a run ended by a signal (SIGHUP, SIGINT, SIGTERM)
SIGNALLED = (129, 130, 143)


def cli_main(args: list[str]) -> int:
    """``gctool.cli.main`` in this process; a run ended by a signal ends the benchmark too.
    In-process, the CLI turns SIGINT, SIGTERM and SIGHUP into the exit code of the command it
    runs and restores the previous handlers, so a loop over commands that ignores that code
    runs on: a SIGTERM would only end the case it arrived in."""
    from gctool.cli.main import cli

    code = int(cli.main(args, standalone_mode=False) or 0)
    if code in SIGNALLED:
        raise SystemExit(code)
    return code


def cpu_time() -> float:
    """CPU seconds of this process and of its ended child processes (a pool of processes that
    ``--jobs`` starts on the numpy route: ``time.process_time`` alone misses their work)."""
    import resource

    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + kids.ru_utime + kids.ru_stime


#: the cases whose estimate is what their meters charged (:meth:`Recorder.estimate`): the MILP
#: checks only the decoder's set-up before it starts (microseconds), then each solve gets the
#: branch-and-bound nodes that what is left of the budget affords, charged as they are explored
CHARGED = ("attack milp (budget)",)


def run_case(rec: Recorder, args: list[str], charged: bool = False) -> dict[str, Any]:
    rec.reset()
    if "--max-work" not in args:
        args = [*args, "--max-work", NO_REFUSAL]
    c0, w0 = cpu_time(), time.perf_counter()
    with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink), \
            contextlib.redirect_stderr(sink):
        code = cli_main(args)
    cpu, wall = cpu_time() - c0, time.perf_counter() - w0
    est, kind = rec.estimate(code == 2, charged)
    return {"exit": code, "cpu_s": cpu, "wall_s": wall, "estimate_s": est, "kind": kind,
            "ratio": wall / est if est else float("nan"),
            "cpu_ratio": cpu / est if est else float("nan")}


def run_captured(rec: Recorder, args: list[str]) -> dict[str, Any]:
    """Run a command line in-process as the CLI does; its exit code, stderr, estimate and
    wall and CPU time (nothing added to ``args``: the default budget applies; a MILP is
    estimated at what its meter charged, as in :data:`CHARGED`)."""
    rec.reset()
    err = io.StringIO()
    c0, w0 = cpu_time(), time.perf_counter()
    with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink), \
            contextlib.redirect_stderr(err):
        code = cli_main(args)
    cpu, wall = cpu_time() - c0, time.perf_counter() - w0
    est, kind = rec.estimate(code == 2, "milp" in args)
    return {"exit": code, "stderr": err.getvalue(), "cpu_s": cpu, "wall_s": wall,
            "estimate_s": est, "kind": kind}


class Sampled:
    """Runs a verify enumeration on a stratified sample of its engine tasks (as many equal
    shares of the rank space, one task taken from each), for a run too long to measure whole:
    its time is extrapolated from the sample (the tasks' share of the ranks), the rest of the
    command (reduction, pilot, report) measured as it runs.  The verdict of a sampled run
    means nothing (its coverage is not checked)."""

    def __init__(self, fraction: float) -> None:
        self.fraction, self.taken, self.seconds, self.share = fraction, 0, 0.0, 1.0
        self.cpu = 0.0  # CPU seconds of the sampled tasks (every thread of this process)

    def install(self) -> Callable[[], None]:
        from gctool.audit.verify import enumeration

        original = enumeration.run_folded

        def run_folded(worker: Any, tasks: Any, fold: Any, *, jobs: int = 1,
                       runner: Any = None, **_: Any) -> None:
            from gctool.engine.parallel import run_ordered

            ranks = sum(b - a for _, a, b in tasks)
            step = max(1, round(1 / self.fraction))
            picked = [(i, a, b) for i, (_, a, b) in enumerate(tasks[::step])]
            self.taken = sum(b - a for _, a, b in picked)
            self.share = self.taken / max(1, ranks)
            t0, c0 = time.perf_counter(), cpu_time()
            (runner or run_ordered)(worker, picked, jobs, lambda i, s: bool(fold.merge(s)))
            self.seconds, self.cpu = time.perf_counter() - t0, cpu_time() - c0

        enumeration.run_folded = run_folded

        def uninstall() -> None:
            enumeration.run_folded = original
        return uninstall


#: the commands that take --jobs (the others run on one core: their cases run once, at 1)
JOBS_COMMANDS = ("verify", "attack")


def with_jobs(args: list[str], jobs: str) -> list[str]:
    """``args`` with ``--jobs jobs`` when its command takes it."""
    return [*args, "--jobs", jobs] if args[0] in JOBS_COMMANDS else args


def measure_unseen(args: list[str], jobs: str, cap: float) -> dict[str, Any]:
    """One case of ``--unseen`` at ``--jobs jobs``: run as a user would (default budget);
    when refused, check the refusal (one line naming --max-work) and measure the run with the
    budget raised: whole when its estimate is at most ``cap`` seconds, else on a sampled share
    of its ranges (verify only).  Each run is a fresh process's (:func:`run_fresh`)."""
    args = with_jobs(args, jobs)
    first = run_fresh(args)
    out = dict(first, refused=first["exit"] == 2 and "--max-work" in first["stderr"])
    lines = first["stderr"].strip().splitlines()
    if first["exit"] == 2:
        out["message"] = lines[0] if lines else ""
        out["one_line"] = len(lines) == 1 and "--max-work" in out["message"]
    if not out["refused"]:
        out["measured_s"], out["how"] = first["wall_s"], "ran"
        return out
    raised = [*args, "--max-work", NO_REFUSAL]
    if args[0] != "verify" and first["estimate_s"] > MAX_RAISED:
        out.update(measured_s=float("nan"), cpu_s=None, how="-", raised_exit=None)
        return out  # (no sample of a search: a refusal at 51 min is checked, not run)
    if first["estimate_s"] <= cap or args[0] != "verify":
        run = run_fresh(raised)
        out.update(measured_s=run["wall_s"], cpu_s=run["cpu_s"], how="raised",
                   raised_exit=run["exit"])
        return out
    run = run_fresh(raised, cap / 2 / first["estimate_s"])
    rest, rest_cpu = run["wall_s"] - run["sampled_s"], run["cpu_s"] - run["sampled_cpu"]
    out.update(measured_s=rest + run["sampled_s"] / run["share"],
               cpu_s=rest_cpu + run["sampled_cpu"] / run["share"],
               how=f"~{run['share']:.1%}", raised_exit=run["exit"])
    return out


def run_fresh(args: list[str], fraction: float | None = None) -> dict[str, Any]:
    """:func:`run_captured` of ``args`` in a fresh process of this script (``--child``), as a
    user's command line runs: no compiled kernel loaded yet, so the estimates charge their
    loading (:data:`gctool.budget.KERNELS_LOAD_NS`) and the run pays it; with ``fraction``, on a
    sampled share of its tasks (:class:`Sampled`: the share, and the sampled tasks' wall and
    CPU seconds, are returned too).  In one long-lived process a case would see the kernels an
    earlier run had loaded, and a size whose estimate the loading puts over the budget on the
    command line would run there (``attack --threshold`` of random dense complex n=200 at
    ``--jobs 2``: size 4 estimated at 4.7 s warm, 5.26 s cold, so a warm process searched it
    for 9.5 s of CPU that the command line refuses); and a run raised after its refusal would
    be measured without the loading its refusal's estimate charged."""
    spec = json.dumps({"args": args, "fraction": fraction})
    done = subprocess.run([sys.executable, __file__, "--child", spec], capture_output=True,
                          text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"bench_budget: the run of {args} failed in its process:\n"
                         f"{done.stderr[-3000:]}")
    out: dict[str, Any] = json.loads(done.stdout)
    return out


def main_child(spec: str) -> None:
    """``--child SPEC``: one command line of ``--unseen`` (:func:`run_fresh`), its
    :func:`run_captured` as JSON on stdout."""
    from gctool.limits import DEFAULT_MAX_WORK

    a = json.loads(spec)
    rec = Recorder()
    rec.install()
    warm_imports()
    # the modules the command imports as it runs, and the first calls of its libraries
    # (galois' fields), warmed by a run on the numpy kernels alone (GCTOOL_COMPILED=0: none of
    # gctool's compiled kernels loaded), whose estimates charge neither; at the default budget
    before = os.environ.get("GCTOOL_COMPILED")
    os.environ["GCTOOL_COMPILED"] = "0"
    try:
        run_captured(rec, [*a["args"], "--max-work", f"{DEFAULT_MAX_WORK}s"])
    finally:
        os.environ.pop("GCTOOL_COMPILED")
        if before is not None:
            os.environ["GCTOOL_COMPILED"] = before
    from gctool.compiled import kernels_loaded

    assert not kernels_loaded(), "a compiled kernel ran in the warm-up"
    if a["fraction"] is None:
        out = run_captured(rec, a["args"])
    else:
        sampled = Sampled(a["fraction"])
        uninstall = sampled.install()
        try:
            out = run_captured(rec, a["args"])
        finally:
            uninstall()
        out.update(share=sampled.share, sampled_s=sampled.seconds, sampled_cpu=sampled.cpu)
    json.dump(out, sys.stdout, default=str)


def main_unseen(a: argparse.Namespace) -> None:
    """``--unseen``: the estimates on codes they were not calibrated on (see the module)."""
    from gctool import limits

    rec = Recorder()
    rec.install()
    warm_imports()
    cap = 0.5 if a.quick else a.cap
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        here = Path.cwd()
        os.chdir(tmp)
        try:
            if not a.json:
                print(f"default work budget {limits.DEFAULT_MAX_WORK} s; random codes from "
                      f"seed {a.seed}; a refused run is measured with the budget raised "
                      f"(whole up to {cap:g} s estimated, else on a sampled share of its "
                      "ranges)")
                print(f"{'case':<24} {'jobs':>4} {'outcome':<8} {'estimate s':>10} "
                      f"{'measured s':>10} {'how':<7} {'ratio':>6} {'cpu/est':>7}  size")
            for name, files, args, note in unseen_cases(a.quick, a.seed):
                if a.only not in f"{name} {note}":
                    continue
                for fname, make in files.items():
                    Path(fname).write_bytes(make())
                # warm: files cached, and the kernels the case runs in numba's cache on disk
                run_captured(rec, with_jobs(args, "1"))
                for jobs in (a.jobs.split(",") if args[0] in JOBS_COMMANDS else ["1"]):
                    r = measure_unseen(args, jobs, cap)
                    est = r["estimate_s"]
                    r.update(case=name, size=note, args=args, jobs=int(jobs),
                             ratio=r["measured_s"] / est if est else float("nan"))
                    rows.append(r)
                    if a.json:
                        continue
                    outcome = ("refused" if r["refused"] else f"exit {r['exit']}")
                    bad = r["refused"] and not r.get("one_line") or (
                        counts(r) and not 0.5 <= r["ratio"] <= 2)
                    print(f"{name:<24} {jobs:>4} {outcome:<8} {est:10.3g} "
                          f"{r['measured_s']:10.3f} {r['how']:<7} {r['ratio']:6.2f} "
                          f"{cpu_ratio(r):>7}{' !' if bad else '  '}{note}")
        finally:
            os.chdir(here)
    if a.json:
        json.dump({"budget_s": limits.DEFAULT_MAX_WORK, "seed": a.seed, "cases": rows},
                  sys.stdout, indent=2, default=str)
        print()
        return
    timed = [r["ratio"] for r in rows if counts(r)]
    refused = [r for r in rows if r["refused"]]
    worst = max((max(x, 1 / x) for x in timed), default=float("nan"))
    ratios = (f"measured / estimated {min(timed):.2f}-{max(timed):.2f} on the {len(timed)} "
              f"runs of {MIN_TIMED:g} s or more (target 0.5-2; worst factor {worst:.2f}; '!' "
              "marks a case outside it)" if timed else
              f"no run of {MIN_TIMED:g} s or more, whose ratio has a target")
    print(f"{len(refused)} refused, {sum(bool(r.get('one_line')) for r in refused)} in one "
          f"line naming --max-work; {ratios}")


#: a refused search other than verify (which runs on a sample of its tasks) is run with the
#: budget raised only up to this estimate (seconds); beyond, its one-line refusal is checked
MAX_RAISED = 120.0

#: runs whose estimate and measured time are both below this (seconds) are dominated by fixed
#: costs (reading the file, reducing B, loading the kernels): their ratio is not a target
MIN_TIMED = 0.5


def cpu_ratio(r: dict[str, Any]) -> str:
    """CPU time / (estimate x jobs) of a run measured whole or on a sample of its tasks
    (extrapolated as its wall time is; a loaded machine disturbs CPU time less than wall
    time; the estimate is per job), else "-"."""
    cpu, est = r.get("cpu_s"), r["estimate_s"] * int(r["jobs"])
    return f"{cpu / est:.2f}" if cpu is not None and est else "-"


def counts(r: dict[str, Any]) -> bool:
    """Is the ratio of run ``r`` held to the 0.5-2 target (a refusal not run with the budget
    raised has none)?"""
    if r["measured_s"] != r["measured_s"]:
        return False
    return bool(r["refused"] or max(r["estimate_s"], r["measured_s"]) >= MIN_TIMED)


def warm_imports() -> None:
    import scipy.linalg  # noqa: F401
    import scipy.optimize  # noqa: F401

    import gctool.audit.attack  # noqa: F401
    import gctool.audit.verify  # noqa: F401
    import gctool.cli.main  # noqa: F401
    import gctool.exports  # noqa: F401


def main_dask(a: argparse.Namespace) -> None:
    """``--dask``: ``verify`` of real cyclic n=48 s=6 with ``--executor dask`` for each
    ``--jobs`` of the list, as the CLI runs it (in this process, default budget): on a local
    cluster the command starts (``--executor dask`` alone: starting it, its workers loading
    the kernels, closing it), on a running cluster of as many worker processes started here
    (``--scheduler``: its first command, whose workers load the kernels, then warm ones), and
    on local threads; ``--repeat`` rounds in turn (each on a running cluster started afresh),
    medians.  "before" is the estimate without
    what the cluster's start adds since issue #28 (``LOCAL_CLUSTER_NS`` on the local cluster;
    on a warm running cluster, the kernels' load its workers were charged again)."""
    import statistics

    import psutil  # (a dependency of distributed)
    from distributed import Client, LocalCluster

    from gctool.audit.distributed import LOCAL_CLUSTER_NS, local_cluster_options
    from gctool.budget import KERNELS_LOAD_NS, NS_PER_S

    rec = Recorder()
    rec.install()
    warm_imports()
    rounds = max(1, a.repeat)
    print(f"verify real cyclic n=48 s=6, --executor dask, {rounds} rounds; medians; "
          "wall / estimate")
    print(f"load average (1 min) before the rounds: {os.getloadavg()[0]:.1f}", file=sys.stderr)
    print(f"{'--jobs':>6} {'where':<26} {'estimate s':>10} {'before s':>9} {'wall s':>7} "
          f"{'CPU s':>6} {'ratio':>6} {'before':>7}")
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "c48.json")
        from gctool.io import write_code

        write_code(__import__("gctool").design("cyclic", n=48, s=6), path)
        for jobs in a.jobs.split(","):
            base = ["verify", path, "-s", "6", "--jobs", jobs]
            run_case(rec, base)  # (warms this process)
            got: dict[str, list[dict[str, Any]]] = {}
            for _ in range(rounds):  # a running cluster started afresh in each round
                with LocalCluster(**local_cluster_options(int(jobs))) as cluster, \
                        Client(cluster) as client:
                    workers = [psutil.Process(p) for p in client.run(os.getpid).values()]

                    def run(args: list[str], workers: list[Any] = workers) -> dict[str, Any]:
                        """run_case, its CPU with the running cluster's workers'."""
                        w0 = sum(sum(w.cpu_times()[:2]) for w in workers)
                        r = run_case(rec, args)
                        r["cpu_s"] += sum(sum(w.cpu_times()[:2]) for w in workers) - w0
                        return r

                    remote = [*base, "--executor", "dask", "--scheduler",
                              cluster.scheduler_address]
                    for where, args, less in (
                            ("running cluster, first run", remote, 0),
                            ("local cluster (started)", [*base, "--executor", "dask"],
                             LOCAL_CLUSTER_NS),
                            ("running cluster, warm", remote, -KERNELS_LOAD_NS),
                            ("local threads", base, 0)):
                        r = run(args)
                        r["before_s"] = r["estimate_s"] - less / NS_PER_S
                        got.setdefault(where, []).append(r)
            for where, runs in got.items():
                def med(key: str, runs: list[dict[str, Any]] = runs) -> float:
                    return statistics.median(r[key] for r in runs)
                ratio = statistics.median(r["wall_s"] / r["estimate_s"] for r in runs)
                before = statistics.median(r["wall_s"] / r["before_s"] for r in runs)
                print(f"{jobs:>6} {where:<26} {med('estimate_s'):10.2f} {med('before_s'):9.2f} "
                      f"{med('wall_s'):7.2f} {med('cpu_s'):6.2f} {ratio:6.2f} {before:7.2f}")
    print(f"load average (1 min) after: {os.getloadavg()[0]:.1f}", file=sys.stderr)
    print("CPU: this process's, its "
          "ended children's (a started local cluster's workers) and the running cluster's "
          "workers' (not its scheduler's or nannies', which run in this process)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes (smoke test)")
    ap.add_argument("--jobs", default="1", help="--jobs of the commands that take it")
    ap.add_argument("--repeat", type=int, default=2,
                    help="runs per case (the first warms the kernels; the fastest is reported)")
    ap.add_argument("--json", action="store_true", help="one JSON document on stdout")
    ap.add_argument("--unseen", action="store_true",
                    help="a spread of codes the estimates were not calibrated on, with "
                    "refusals checked (--jobs takes a list, e.g. 1,2)")
    ap.add_argument("--dask", action="store_true",
                    help="verify real cyclic n=48 s=6 on Dask: a local cluster it starts, a "
                    "running one (first and warm runs), local threads (--jobs takes a list)")
    ap.add_argument("--seed", type=int, default=2026, help="seed of --unseen's random codes")
    ap.add_argument("--only", default="",
                    help="run only the cases whose name or size contains this text")
    ap.add_argument("--cap", type=float, default=8.0,
                    help="--unseen: measure a refused run whole up to this estimate "
                    "(seconds), else on a sampled share of its ranges")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    a = ap.parse_args()
    os.environ.pop("GCTOOL_MAX_WORK", None)
    if a.child:
        main_child(a.child)
        return
    if a.unseen:
        main_unseen(a)
        return
    if a.dask:
        main_dask(a)
        return
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
                if a.only not in f"{name} {note}":
                    continue
                for fname, make in files.items():
                    Path(fname).write_bytes(make())
                runs = [run_case(rec, args, name in CHARGED)
                        for _ in range(max(2, a.repeat))][1:]
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
        ratios = [r["ratio"] for r in rows if r["timed"]]
        print(f"timed cases: measured / estimated {min(ratios):.2f}-{max(ratios):.2f} "
              "(target 0.5-2; '!' marks a case outside it)" if ratios else
              "timed cases: none among those run (the others' ratios have no target)")


if __name__ == "__main__":
    # the calibrated cases, --unseen and --dask each keep their own block of the README's section
    part = ("unseen" if "--unseen" in sys.argv else "dask" if "--dask" in sys.argv
            else "calibrated")
    with readme.section(__file__, part=part):
        main()
