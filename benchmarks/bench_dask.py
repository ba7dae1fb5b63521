"""What ``--executor dask`` costs on a running cluster, against local threads, in one run.

On a loopback ``distributed.LocalCluster`` of single-threaded worker processes (one per core,
started once, as docs/dask.md shows), with the runner the CLI uses (a session per command,
the guided grouping):

* the scheduling cost of one Dask task: no-op tasks through the runner, CPU of every process
  (this one, which holds the client and the scheduler, and the workers) and wall per task;
* the kernels' load per worker process: the extra CPU of the first run on the fresh cluster
  over the second one (numba's cached kernels loaded once per process, by the first task);
* what a command's session costs by itself (connecting, the workers' count, one no-op task);
* what a broadcast scatter of an attack kernel costs (the runner carries kernels of up to
  ``CARRY_MAX`` bytes in its Dask tasks instead), and what carrying a kernel of ``CARRY_MAX``
  bytes adds to each Dask task (no-op tasks with and without it, interleaved);
* per case (``verify`` real cyclic n=48 s=6, ``attack -s 6`` and ``attack --threshold`` on
  real cyclic n=40):
  local threads (``--jobs`` 1 and every core)
  and Dask, in a session and (threshold: one enumeration per size) without one, for
  verify with its kernel scattered once instead of carried in the Dask tasks
  (``CARRY_MAX`` = 0), and for the threshold without its look-ahead (each size started
  only when the one before it is done, as before the look-ahead), in ``--rounds``
  interleaved rounds: wall, CPU of every process, the Dask tasks (those of look-aheads
  dropped when a size found its set included), the seconds the engine tasks took on the
  workers, and the overhead: the extra CPU over one local thread, per Dask task and as a
  share of the run (medians).

Every report is checked to equal the ``--jobs 1`` one.  CPU figures hold on a busy machine;
wall times and speed-ups need a quiet one.

Run:  .venv/bin/python benchmarks/bench_dask.py [--quick] [--write-readme]
"""

from __future__ import annotations

import argparse
import logging
import os
import pickle
import resource
import time
from contextlib import nullcontext
from dataclasses import dataclass
from statistics import median
from typing import Any

from gctool._threads import pin_blas_threads

pin_blas_threads()  # before numpy: as the CLI
os.environ["GCTOOL_MAX_WORK"] = "300h"

import readme  # noqa: E402


@dataclass
class Done:
    """The smallest summary the engine reads (gctool.engine.records.Summary): the task's
    index, the sets it covered, no finding."""

    index: int
    covered: int
    fail_set: None = None


@dataclass
class Noop:
    def run(self, task: Any) -> Done:
        return Done(task[0], task[2] - task[1])


@dataclass
class NoopKernel:
    """A no-op worker whose (tiny) kernel travels in its Dask tasks, as an attack's does."""

    kernel: Any = 0

    def run(self, task: Any) -> Done:
        return Done(task[0], task[2] - task[1])


def same(r: Any) -> dict[str, Any]:
    d = r.to_dict()
    for k in ("elapsed_s", "jobs", "estimate", "executor"):
        d.pop(k, None)
    return d


def _own_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


class Meter:
    """CPU seconds of this process and of the cluster's worker processes."""

    def __init__(self, client: Any) -> None:
        import psutil

        self.procs = [psutil.Process(p) for p in client.run(os.getpid).values()]

    def __call__(self) -> float:
        return _own_cpu() + sum(sum(p.cpu_times()[:2]) for p in self.procs)


def timed(meter: Meter, fn: Any) -> tuple[float, float, Any]:
    c0, w0 = meter(), time.perf_counter()
    out = fn()
    return time.perf_counter() - w0, meter() - c0, out


def cases(quick: bool) -> list[tuple[str, Any]]:
    from gctool.audit.attack import attack, threshold
    from gctool.audit.verify import verify
    from gctool.codes import design

    n, s, an = (24, 4, 20) if quick else (48, 6, 40)
    code = design("cyclic", n=n, s=s, seed=1)
    acode = design("cyclic", n=an, s=s, seed=1)
    return [
        (f"verify real cyclic n={n} s={s}",
         lambda ex: verify(code, s, method="exhaustive", max_sets=10**13, **ex)),
        (f"attack -s {s} real cyclic n={an}",
         lambda ex: attack(acode, s, method="exhaustive", max_sets=10**13, symmetry=False,
                           **ex)),
        (f"attack --threshold real cyclic n={an} s={s}",
         lambda ex: threshold(acode, 0.0, method="exhaustive", max_sets=10**13,
                              symmetry=False, **ex)),
    ]


def against_threads(label: str, runs: dict[str, list[Any]], cores: int) -> str:
    """Dask against local threads in the same rounds (and the threshold's look-ahead against
    none): the median of the rounds' wall-time ratios."""

    def paired(a: str, b: str) -> float:
        return median([x[0] / y[0] for x, y in zip(runs[a], runs[b], strict=True)])

    dask, none = f"dask {cores}", f"dask {cores}, no look-ahead"
    line = f"{label}: Dask {paired(f'--jobs {cores}', dask):.2f}x the speed of {cores} threads"
    if none in runs:
        line += f"; the look-ahead {paired(none, dask):.2f}x the speed without it"
    return line


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small codes (a smoke test)")
    ap.add_argument("--noop-tasks", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=7,
                    help="interleaved rounds of every run of a case (medians reported)")
    args = ap.parse_args()
    if args.quick:
        os.environ["GCTOOL_COMPILED"] = "1"  # the compiled walks, whatever the size
        args.rounds = 1
    logging.getLogger("distributed").setLevel(logging.ERROR)
    from distributed import Client, LocalCluster

    from gctool.audit.distributed import (
        CARRY_MAX,
        TASK_MIN_S,
        DaskRunner,
        cli_runner,
        local_cluster_options,
    )

    cores = os.cpu_count() or 1
    todo = cases(args.quick)
    rows: list[tuple[str, str, float, float, float, float, int, float]] = []
    pairs: list[str] = []  # per case: Dask against local threads (and the look-ahead)
    with LocalCluster(**local_cluster_options(cores)) as lc, \
            Client(lc, set_as_default=False) as client:
        meter = Meter(client)
        address = lc.scheduler_address

        def dask(fn: Any, session: bool = True, scatter: bool = False, ahead: bool = True
                 ) -> tuple[float, float, Any, dict[str, float]]:
            import gctool.audit.distributed as dist

            runner = cli_runner(address, key="bench")
            real_start, carry_max = dist.DaskRunner.start, dist.CARRY_MAX
            if not ahead:  # the threshold's sizes each started when the one before is done
                dist.DaskRunner.start = lambda *a: None  # type: ignore[method-assign]
            dist.CARRY_MAX = 0 if scatter else carry_max  # the kernel scattered once instead
            try:
                with runner if session else nullcontext():  # the client's parts on every core,
                    wall, cpu, rep = timed(meter, lambda: fn({"runner": runner,  # as the CLI
                                                             "jobs": cores}))
            finally:
                dist.DaskRunner.start, dist.CARRY_MAX = real_start, carry_max  # type: ignore[method-assign]
            # every enumeration's (and dropped look-ahead's) Dask tasks and time on the workers
            return wall, cpu, rep, {k: runner.totals.get(k, 0) for k in ("worker_s",
                                                                         "dask_tasks")}

        first_label, first = todo[0]
        cold = dask(first)[1]  # a fresh cluster: every worker loads the kernels
        warm = dask(first)[1]
        noop = DaskRunner(scheduler=address, key="noop")
        with noop:
            noop(Noop(), [(0, 0, 0)], 1, lambda i, r: False)  # connected, the no-op scattered
            nw, nc, _ = timed(meter, lambda: noop(Noop(), [(i, 0, 0) for i in
                                                          range(args.noop_tasks)],
                                                  1, lambda i, r: False))
        from gctool.audit.attack.options import AttackOptions, oracle_for
        from gctool.audit.oracles.kernel import OracleKernel
        from gctool.codes import design

        an, s = (20, 4) if args.quick else (40, 6)
        kernel = OracleKernel.of(oracle_for(design("cyclic", n=an, s=s, seed=1),
                                            AttackOptions.of(None)))
        sw, sc, _ = timed(meter, lambda: [client.scatter(kernel, broadcast=True, hash=False)
                                          for _ in range(10)])
        # a kernel of CARRY_MAX bytes carried in every Dask task, against a tiny one
        heavy = NoopKernel(os.urandom(CARRY_MAX - 64))  # (random: no compression helps)
        carry: dict[bool, list[float]] = {False: [], True: []}
        for r in range(6):
            for big in ((False, True) if r % 2 == 0 else (True, False)):
                with cli_runner(address, key="carry") as runner:
                    runner(heavy if big else NoopKernel(), [(0, 0, 0)], 1, lambda i, r: False)
                    carry[big].append(timed(meter, lambda big=big, runner=runner: runner(
                        heavy if big else NoopKernel(), [(i, 0, 0) for i in range(
                            args.noop_tasks)], 1, lambda i, r: False))[1])
        def command() -> None:  # a new session: connect, the workers' count, one task
            with cli_runner(address, key="command") as runner:
                runner(NoopKernel(), [(0, 0, 0)], 1, lambda i, r: False)

        command()
        cw, cc, _ = timed(meter, lambda: [command() for _ in range(10)])
        for label, fn in todo:
            fn({"jobs": 1})  # warm: kernels loaded in this process
            dask(fn)  # and in the workers
            ref = fn({"jobs": 1})
            ways: list[tuple[str, Any]] = [
                ("--jobs 1", lambda fn=fn: (*timed(meter, lambda: fn({"jobs": 1})), None)),
                (f"--jobs {cores}", lambda fn=fn: (*timed(meter, lambda: fn({"jobs": cores})),
                                                   None))]
            for session, scatter, ahead in [(True, False, True), (False, False, True)] + (
                    [(True, True, True)] if label == first_label else []) + (
                    [(True, False, False)] if "threshold" in label else []):
                ways.append((f"dask {cores}" + ("" if session else ", no session")
                             + (", kernel scattered" if scatter else "")
                             + ("" if ahead else ", no look-ahead"),
                             lambda fn=fn, a=session, b=scatter, c=ahead: dask(fn, a, b, c)))
            runs: dict[str, list[tuple[float, float, dict[str, float] | None]]] = {
                w: [] for w, _ in ways}
            for r in range(args.rounds):  # interleaved, the order reversed every other round
                for way, run in (ways if r % 2 == 0 else ways[::-1]):
                    wall, cpu, rep, sums = run()
                    assert same(rep) == same(ref), f"{label}: {way} differs from --jobs 1"
                    runs[way].append((wall, cpu, sums))
            one = runs["--jobs 1"]
            c1 = median([c for _, c, _ in one])
            for way, got in runs.items():
                speed = median([a[0] / b[0] for a, b in zip(one, got, strict=True)])
                sums = got[0][2]
                cd = median([c for _, c, _ in got])
                rows.append((label, way, median([w for w, _, _ in got]), speed, cd,
                             median([g[2]["worker_s"] for g in got]) if sums else 0.0,
                             int(sums["dask_tasks"]) if sums else 0, cd - c1))

            pairs.append(against_threads(label, runs, cores))
    print(f"loopback LocalCluster, {cores} single-threaded worker processes, the CLI's runner "
          "(session, guided grouping, the client's parts on every core); CPU of every process; "
          f"per case {args.rounds} interleaved rounds: medians, speed-up the median of the "
          "rounds' ratios --jobs 1 / this run")
    print(f"scheduling per Dask task (no-op tasks, in a session): {nc / args.noop_tasks * 1e3:.1f} "
          f"ms CPU, {nw / args.noop_tasks * 1e3:.1f} ms wall")
    print(f"per command (a new session: connecting, the workers' count, one no-op task and its "
          f"result): {cc / 10 * 1e3:.1f} ms CPU, {cw / 10 * 1e3:.1f} ms wall")
    print(f"scatter(broadcast=True) of the n={an} attack kernel ({len(pickle.dumps(kernel)):,} "
          f"bytes; a session sends it in its Dask tasks instead): {sc / 10 * 1e3:.1f} ms CPU, "
          f"{sw / 10 * 1e3:.1f} ms wall")
    extra = (median(carry[True]) - median(carry[False])) / args.noop_tasks
    print(f"a kernel of {CARRY_MAX - 64:,} bytes carried in every Dask task (no-op tasks, a "
          f"session each, 6 interleaved rounds): {extra * 1e3:+.2f} ms CPU per Dask task "
          f"against a tiny one, {extra / TASK_MIN_S:+.1%} of a Dask task of TASK_MIN_S = "
          f"{TASK_MIN_S:g} s")
    print(f"kernel load per worker process (first run of {first_label} on a fresh cluster "
          f"minus the second): {(cold - warm) / cores:.2f} s CPU")
    print()
    print("| case | run | wall s | x --jobs 1 | CPU s | Dask tasks | on workers s "
          "| extra CPU vs --jobs 1 (per Dask task) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for label, run, wall, speed, cpu, on_workers, tasks, extra in rows:
        dask_cols = (f"{tasks} | {on_workers:.2f} | {extra:.2f} s ({extra / cpu:.0%}; "
                     f"{extra / max(tasks, 1) * 1e3:.0f} ms)"
                     if run.startswith("dask") else "- | - | -")
        print(f"| {label} | {run} | {wall:.2f} | {speed:.2f}x | {cpu:.2f} | {dask_cols} |")

    print()
    print("wall-time ratios of the same rounds (median of the rounds' ratios; need a quiet "
          "machine):")
    for line in pairs:
        print(line)


if __name__ == "__main__":
    with readme.section(__file__):
        main()
