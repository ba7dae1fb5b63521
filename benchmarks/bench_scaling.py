"""Scaling of the exhaustive audits over cores and over a Dask cluster, in one run.

Cases (``--method exhaustive``, every set, no symmetry reduction, the work budget raised):

* ``verify`` real cyclic n=48 s=6 (12.3 M sets), GF(2^6) cyclic-MDS n=63 s=6 (68 M sets) and
  complex cyclic n=48 s=6;
* ``attack -s 6`` and ``attack --threshold`` (epsilon 0) on real cyclic n=40;
* ``attack -s 6`` on the encoded frame of the Steiner ETF pg-2 (n=28, k=7: the worst spectrum
  of S_F^T S_F over 376,740 sets, the compiled walk of :mod:`gctool.audit.kernels.spectra`);
* ``attack -s 5`` on a random real n = K = 36 code of condition 1e6 (no fast path: the
  compiled brackets of :mod:`gctool.audit.kernels.direct`, 376,992 sets);
* each for ``--jobs`` 1, 2, 4, ... up to the machine's cores, then on a warm local Dask
  cluster (one single-threaded worker process per core, started once, each case run once on it
  before it is timed; Dask tasks grouped as the CLI does; the table gives the number of Dask
  tasks of the run's last enumeration, the last size for a threshold search);
* the per-set CPU cost of ``verify`` real cyclic n=64 s=7 (621 M sets) against n=40 s=6, both
  with every core.

The ``--jobs`` runs (and the per-set costs) are measured before the Dask cluster starts (its
scheduler runs in this process and its workers idle on the same cores: together a few percent
of a core).  Each is run once to warm up, then the ``--jobs`` runs of a case are interleaved
(1, 2, ..., 1, 2, ...: as many rounds as fit in a time allowance per case, :data:`ALLOWANCE_S`,
at least :data:`MIN_ROUNDS` and at most :data:`MAX_ROUNDS`, an odd number), so that a slow
spell of a shared host (a one-job run of the same work varies by half its time from spell to
spell) falls on every side alike, and a sub-second case gets enough rounds for a stable
median.  The speed-up is the median over the rounds of each round's ratio ``--jobs 1`` wall /
``--jobs J`` wall (the two runs next to each other in time); the best-of
ratio (fastest run over fastest run) is given beside it.  Wall and CPU times are medians.

Per run: wall time of the library call (the engine time), speed-up over ``--jobs 1``, CPU
time of the whole run (this process's threads and, for Dask, the workers' processes), the
share of it spent in the caller's thread and in the fold (the serial part: reductions, the
fold, reports; the threads' folds are counted from :data:`gctool.engine.threads.TIMES`) and,
for local threads, the share of the pools' capacity (threads x pool time) spent outside tasks,
with its parts before each thread's first task and after its last
(:data:`gctool.engine.threads.TIMES`).
Every run's report is checked to equal the ``--jobs 1`` one (timings aside).  BLAS runs
single-threaded, as the CLI does.  On fewer than :data:`PROJECTED` (16) cores, ``--jobs 16``
runs in the rounds too (its threads share the cores; its CPU times are per thread, so they
hold): a second table gives its caller thread's share of the CPU and the speed-up on 16 cores
that this serial share allows (Amdahl's law): a bound, not a measurement (the pool threads'
own Python between compiled walks holds the GIL too, and is not counted in it: the table
gives, beside it, the CPU the run spends over ``--jobs 1``, mostly that Python).

Targets (issue: every core and every worker): 2 cores: verify n=48 ``--jobs 2`` >= 1.85x and
attack -s 6 n=40 >= 1.8x; 16 cores: >= 12x for verify and attack, warm Dask >= 10x one local
thread; per-set cost of n=64 s=7 at most 2x that of n=40 s=6.

Run:  .venv/bin/python benchmarks/bench_scaling.py [--quick] [--no-dask] [--case TEXT]
[--write-readme]
(``--quick``: small codes, the compiled kernels forced, :data:`MIN_ROUNDS` rounds, an
in-process Dask cluster: a smoke test; ``--case TEXT``: only the cases whose label contains
TEXT, without the per-set costs).  The README keeps one table per machine (by core count).
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from math import comb
from typing import Any

from gctool._threads import pin_blas_threads

pin_blas_threads()  # before numpy: as the CLI
os.environ["GCTOOL_MAX_WORK"] = "300h"

import readme  # noqa: E402


@dataclass
class Case:
    label: str
    sets: int
    make: Callable[[], Any]  # the code
    run: Callable[[Any, dict[str, Any]], Any]  # (code, executor options) -> report
    code: Any = None


@dataclass
class Row:
    executor: str
    wall: float
    cpu: float
    caller: float
    speedup: float = 1.0  # median of the rounds' ratios (see the module's docstring)
    best: float = 1.0  # fastest --jobs 1 run over this row's fastest run
    idle: str = "-"  # the local threads' idle share, and its start and tail parts
    walls: list[float] = field(default_factory=list)  # every timed run's, in round order


def median(values: list[float]) -> float:
    v = sorted(values)
    h = len(v) // 2
    return v[h] if len(v) % 2 else (v[h - 1] + v[h]) / 2


@dataclass
class Result:
    case: Case
    rows: list[Row] = field(default_factory=list)
    #: the --jobs PROJECTED run on this machine (threads oversubscribing its cores), when it
    #: has fewer cores: what the projection to PROJECTED cores reads
    projected: Row | None = None


#: the core count the table projects to when the machine has fewer
PROJECTED = 16


def amdahl(serial: float, cores: int) -> float:
    """The largest speed-up on ``cores`` of a run whose share ``serial`` of the CPU cannot run
    in parallel (Amdahl's law): ``1 / (serial + (1 - serial) / cores)``."""
    return 1.0 / (serial + (1.0 - serial) / cores)


def _verify(s: int) -> Callable[[Any, dict[str, Any]], Any]:
    from gctool.audit.verify import verify

    return lambda code, ex: verify(code, s, method="exhaustive", max_sets=10**13, **ex)


def _attack(s: int) -> Callable[[Any, dict[str, Any]], Any]:
    from gctool.audit.attack import attack

    return lambda code, ex: attack(code, s, method="exhaustive", max_sets=10**13,
                                   symmetry=False, **ex)


def _threshold() -> Callable[[Any, dict[str, Any]], Any]:
    from gctool.audit.attack import threshold

    return lambda code, ex: threshold(code, 0.0, method="exhaustive", max_sets=10**13,
                                      symmetry=False, **ex)


def _frame_attack(s: int) -> Callable[[Any, dict[str, Any]], Any]:
    import gctool

    return lambda code, ex: gctool.attack(code, s, method="exhaustive", max_sets=10**13, **ex)


def _frame(system: str) -> Callable[[], Any]:
    def make() -> Any:
        from gctool.codes import design

        return design("encoded", frame="steiner", system=system, s=1)

    return make


def _design(scheme: str, n: int, s: int, **kw: Any) -> Callable[[], Any]:
    def make() -> Any:
        from gctool.codes import design

        return design(scheme, n=n, s=s, **kw)

    return make


def _ill_conditioned(n: int) -> Callable[[], Any]:
    def make() -> Any:
        import numpy as np

        from gctool.algebra.fields import parse_field
        from gctool.model import GradientCode

        U, _, Vh = np.linalg.svd(np.random.default_rng(0).standard_normal((n, n)))
        B = (U * np.logspace(0, -6, n)) @ Vh  # cond 1e6: no fast path (FAST_KAPPA)
        return GradientCode(B, parse_field("real"), 0)

    return make


def cases(quick: bool) -> tuple[list[Case], tuple[Case, Case]]:
    """The cases, and the pair whose per-set costs are compared (small, large)."""
    if quick:
        n, s, gf, an, fs, ill = 24, 4, ("GF(2^5)", 31, 4), 24, 5, (20, 3)
        pair = ((20, 3), (24, 4))
    else:
        n, s, gf, an, fs, ill = 48, 6, ("GF(2^6)", 63, 6), 40, 6, (36, 5)
        pair = ((40, 6), (64, 7))
    field_, gn, gs = gf
    out = [
        Case(f"verify real cyclic n={n} s={s}", comb(n, s),
             _design("cyclic", n, s, seed=1), _verify(s)),
        Case(f"verify {field_} cyclic-mds n={gn} s={gs}", comb(gn, gs),
             _design("cyclic-mds", gn, gs, field=field_), _verify(gs)),
        Case(f"verify complex cyclic n={n} s={s}", comb(n, s),
             _design("cyclic", n, s, seed=1, field="complex"), _verify(s)),
        Case(f"attack -s {s} real cyclic n={an}", comb(an, s),
             _design("cyclic", an, s, seed=1), _attack(s)),
        Case(f"attack --threshold real cyclic n={an} s={s}", 0,
             _design("cyclic", an, s, seed=1), _threshold()),
        Case(f"attack -s {fs} encoded Steiner ETF pg-2 n=28 k=7", comb(28, fs),
             _frame("pg-2"), _frame_attack(fs)),
        Case(f"attack -s {ill[1]} ill-conditioned random n={ill[0]}", comb(*ill),
             _ill_conditioned(ill[0]), _attack(ill[1])),
    ]
    per = tuple(Case(f"verify real cyclic n={a} s={b}", comb(a, b),
                     _design("cyclic", a, b, seed=1), _verify(b)) for a, b in pair)
    return out, (per[0], per[1])


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _worker_cpu() -> float:  # runs on a Dask worker
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _same(report: Any) -> Any:
    d = report.to_dict()
    for k in ("elapsed_s", "jobs", "estimate", "executor"):
        d.pop(k, None)
    return d


def measure(case: Case, executor: str, options: dict[str, Any], client: Any = None,
            reps: int = 1) -> tuple[Row, Any]:
    """``reps`` runs: the medians of their times, every wall time (:attr:`Row.walls`), and the
    last report."""
    runs = [once(case, executor, options, client) for _ in range(reps)]
    return merged(runs), runs[-1][1]


def once(case: Case, executor: str, options: dict[str, Any], client: Any = None
         ) -> tuple[Row, Any]:
    """One timed run: its row and its report."""
    from gctool.engine.threads import TIMES

    remote = sum(client.run(_worker_cpu).values()) if client is not None else 0.0
    TIMES.reset()
    c0, t0, w0 = _cpu(), time.thread_time(), time.perf_counter()
    with options.get("runner") or nullcontext():  # a Dask session per run, as the CLI
        report = case.run(case.code, options)
    wall = time.perf_counter() - w0
    # the serial part: the caller's thread, and the folds its pools ran in their threads
    caller, cpu = time.thread_time() - t0 - TIMES.caller_tasks + TIMES.fold, _cpu() - c0
    if client is not None:
        cpu += sum(client.run(_worker_cpu).values()) - remote
    row = Row(executor, wall, cpu, caller, walls=[wall])
    if TIMES.pools:
        row.idle = (f"{TIMES.idle:.1%} ({TIMES.start * 1e3:.1f} + {TIMES.tail * 1e3:.1f} ms"
                    f", {TIMES.pools} pool{'s' if TIMES.pools > 1 else ''}"
                    f", {TIMES.tasks} task{'s' if TIMES.tasks > 1 else ''})")
    return row, report


def merged(runs: list[tuple[Row, Any]]) -> Row:
    """One row of several runs: median times, the idle share of the median-wall run."""
    rows = [r for r, _ in runs]
    mid = sorted(rows, key=lambda r: r.wall)[(len(rows) - 1) // 2]
    return Row(rows[0].executor, median([r.wall for r in rows]), median([r.cpu for r in rows]),
               median([r.caller for r in rows]), idle=mid.idle,
               walls=[w for r in rows for w in r.walls])


def speedups(rows: list[Row]) -> None:
    """Each row's speed-up over the first (``--jobs 1``): the median of the ratios of runs in
    the same round (as many rounds as both have; else of the medians), and best over best."""
    base = rows[0].walls
    for row in rows:
        pairs = list(zip(base, row.walls, strict=False))
        if len(row.walls) == len(base):
            row.speedup = median([a / b for a, b in pairs])
        else:
            row.speedup = median(base) / median(row.walls)
        row.best = min(base) / min(row.walls)


def job_counts(cores: int) -> list[int]:
    out, j = [], 1
    while j < cores:
        out.append(j)
        j *= 2
    return [*out, cores]


@contextmanager
def cluster(workers: int, processes: bool) -> Iterator[tuple[str, Any]]:
    """A local Dask cluster (worker processes on loopback, or threads of this process) and a
    client of it, closed afterwards."""
    import logging

    from distributed import Client, LocalCluster

    from gctool.audit.distributed import local_cluster_options

    logging.getLogger("distributed").setLevel(logging.ERROR)
    # threads of this process still talk TCP on loopback (gctool refuses inproc:// addresses)
    with LocalCluster(**local_cluster_options(workers, processes=processes),
                      protocol="tcp") as lc, \
            Client(lc, set_as_default=False) as client:
        yield lc.scheduler_address, client


#: seconds of timed rounds per case (after the warm-up runs) ...
ALLOWANCE_S = 20.0
#: ... in at least this many rounds and at most this many (sub-second runs vary by a third
#: from run to run on a shared host: the median of a few rounds moves by several percent)
MIN_ROUNDS, MAX_ROUNDS = 3, 31


def repeats(wall: float, allowance: float = ALLOWANCE_S) -> int:
    """Rounds of timed runs after a first (warm-up) round of ``wall`` seconds (every
    ``--jobs`` of the case once): as many as fit in ``allowance`` seconds, odd (one median
    round), within :data:`MIN_ROUNDS` .. :data:`MAX_ROUNDS`."""
    rounds = max(MIN_ROUNDS, min(MAX_ROUNDS, int(allowance / max(wall, 1e-3))))
    return rounds if rounds % 2 else rounds - 1


def run_local(case: Case, jobs: list[int], allowance: float = ALLOWANCE_S
              ) -> tuple[Result, Any]:
    """The ``--jobs`` rows of a case (no Dask cluster alive: its scheduler's threads in this
    process and its idle workers would take a few percent of the cores), and the report every
    other run must equal.  On fewer than :data:`PROJECTED` cores, ``--jobs PROJECTED`` runs in
    the rounds too (:attr:`Result.projected`, not a row of the table)."""
    case.code = case.make()
    extra = [PROJECTED] if jobs[-1] < PROJECTED else []
    case.run(case.code, {"jobs": max(jobs + extra)})  # warm: kernels compiled or loaded
    runs: dict[int, list[tuple[Row, Any]]] = {}
    for j in jobs + extra:  # also the warm-up of each
        runs[j] = [once(case, f"--jobs {j}", {"jobs": j})]
    rounds = repeats(sum(r.wall for r, _ in (v[0] for v in runs.values())), allowance)
    for _ in range(rounds):  # interleaved: a slow spell of the host falls on every side
        for j in jobs + extra:
            runs[j].append(once(case, f"--jobs {j}", {"jobs": j}))
    ref = _same(runs[jobs[0]][-1][1])
    out = Result(case)
    for j in jobs + extra:
        for _, report in runs[j]:
            assert _same(report) == ref, f"{case.label}: --jobs {j} differs from --jobs 1"
    out.rows = [merged(runs[j][1:]) for j in jobs]
    out.projected = merged(runs[extra[0]][1:]) if extra else None
    return out, ref


def run_dask(res: Result, ref: Any, dask: tuple[str, Any], workers: int,
             processes: bool) -> None:
    """The Dask row of a case, on the warm cluster."""
    from gctool.audit.distributed import cli_runner

    case = res.case
    address, client = dask
    runner = cli_runner(address, key=case.label)
    with runner:  # warm: the workers load the kernels
        case.run(case.code, {"runner": runner})
    row, report = measure(case, "", {"runner": runner}, client if processes else None)
    row.executor = f"dask {workers} ({runner.stats.get('dask_tasks', 0)} tasks)"
    assert _same(report) == ref, f"{case.label}: Dask differs from --jobs 1"
    res.rows.append(row)


def per_set(case: Case, jobs: int, warm: bool = True) -> float:
    """CPU seconds per set of one run with ``jobs`` (after a first one, unless the kernel is
    warm already)."""
    case.code = case.make()
    if warm:
        case.run(case.code, {"jobs": jobs})
    row, _ = measure(case, f"--jobs {jobs}", {"jobs": jobs})
    return row.cpu / case.sets


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small codes (a smoke test)")
    ap.add_argument("--no-dask", action="store_true", help="local threads only")
    ap.add_argument("--case", metavar="TEXT",
                    help="only the cases whose label contains TEXT (no per-set costs, no README)")
    args = ap.parse_args()
    if args.quick:
        os.environ["GCTOOL_COMPILED"] = "1"  # the compiled walks, whatever the size
    cores = os.cpu_count() or 1
    jobs = job_counts(cores)
    todo, (small, large) = cases(args.quick)
    if args.case is not None:
        todo = [case for case in todo if args.case in case.label]
        if not todo:
            ap.error(f"no case label contains {args.case!r}")
    processes = not args.quick
    allowance = 0.0 if args.quick else ALLOWANCE_S  # quick: MIN_ROUNDS, a smoke test's rounds
    local = [run_local(case, jobs, allowance) for case in todo]
    if args.case is None:
        small_ns = per_set(small, cores) * 1e9
        large_ns = per_set(large, cores, warm=False) * 1e9  # the same kernel as small's
    with (cluster(cores, processes) if not args.no_dask else _none()) as dask:
        for res, ref in local:
            if dask is not None:
                run_dask(res, ref, dask, cores, processes)
    results = [res for res, _ in local]
    for res in results:
        speedups(res.rows)
    py = ".".join(map(str, sys.version_info[:3]))
    print(f"{cores} cores, Python {py}, wall of the library call after a warm-up run, "
          f"--jobs runs interleaved ({allowance:.0f} s of rounds per case, "
          f"{MIN_ROUNDS} to {MAX_ROUNDS}); speed-up: median of the "
          "rounds' ratios --jobs 1 / this run (Dask: one run, over the --jobs 1 median), best-of: "
          "fastest over fastest; times: medians; local runs without the Dask cluster")
    print()
    print("| case | sets | run | wall s | speed-up | best-of | CPU s | caller + fold "
          "| threads idle (start + tail) |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|")
    for res in results:
        sets = f"{res.case.sets:,}" if res.case.sets else "-"
        for i, r in enumerate(res.rows):
            print(f"| {res.case.label if i == 0 else ''} | {sets if i == 0 else ''} "
                  f"| {r.executor} | {r.wall:.2f} | {r.speedup:.2f}x | {r.best:.2f}x "
                  f"| {r.cpu:.2f} "
                  f"| {r.caller / max(r.cpu, 1e-9):.0%} | {r.idle} |")
    projections(results, cores)
    if args.case is None:
        print()
        print(f"per-set CPU, --jobs {cores}: {large.label} {large_ns:.0f} ns, {small.label} "
              f"{small_ns:.0f} ns: {large_ns / small_ns:.2f}x (target <= 2x)")


def projections(results: list[Result], cores: int) -> None:
    """Per case, the serial share of the CPU (the caller's thread and the folds) at ``--jobs
    PROJECTED`` on this machine's fewer cores, and the speed-up on PROJECTED cores that it
    bounds (Amdahl's law with that share as the serial part: a bound, not a measurement).
    Beside it, the CPU the run spends over ``--jobs 1`` (mostly the pool threads' Python around
    their compiled walks, which holds the GIL as the caller's does: not in the bound)."""
    shown = [res for res in results if res.projected is not None]
    if not shown:
        return
    print()
    print(f"projected to {PROJECTED} cores (a bound, not a measurement): the caller's thread "
          f"and the folds at --jobs {PROJECTED} on these {cores} cores, and the speed-up on "
          f"{PROJECTED} cores it allows by Amdahl's law (serial share = theirs); CPU over "
          "--jobs 1: the threads' own extra (their Python holds the GIL too: not in the bound)")
    print()
    print(f"| case | caller + fold at --jobs {PROJECTED} | CPU s | CPU over --jobs 1 "
          f"| at most, {PROJECTED} cores |")
    print("|---|---:|---:|---:|---:|")
    for res in shown:
        row = res.projected
        assert row is not None
        share = row.caller / max(row.cpu, 1e-9)
        extra = (row.cpu - res.rows[0].cpu) / max(row.cpu, 1e-9)
        print(f"| {res.case.label} | {share:.1%} ({row.caller * 1e3:.1f} ms) | {row.cpu:.2f} "
              f"| {extra:+.1%} | {amdahl(share, PROJECTED):.1f}x |")


@contextmanager
def _none() -> Iterator[None]:
    yield None


if __name__ == "__main__":
    if readme.FLAG in sys.argv and any(a.startswith("--case") for a in sys.argv):
        sys.exit("bench_scaling.py: --case runs part of the table: not with --write-readme")
    with readme.section(__file__, part=f"{os.cpu_count()} cores"):
        main()
