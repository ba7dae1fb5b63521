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
  ``CARRY_MAX`` bytes in its Dask tasks instead);
* per case (``verify`` real cyclic n=48 s=6, ``attack -s 6`` and ``attack --threshold`` on
  real cyclic n=40):
  local threads (``--jobs`` 1 and every core)
  and Dask, in a session and (threshold: one enumeration per size) without one: wall, CPU of
  every process, the Dask tasks, the seconds the engine tasks took on the workers, and the
  overhead: the extra CPU over one local thread, per Dask task and as a share of the run.

Every Dask report is checked to equal the ``--jobs 1`` one.  CPU figures hold on a busy
machine; wall times and speed-ups need a quiet one.

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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small codes (a smoke test)")
    ap.add_argument("--noop-tasks", type=int, default=200)
    args = ap.parse_args()
    if args.quick:
        os.environ["GCTOOL_COMPILED"] = "1"  # the compiled walks, whatever the size
    logging.getLogger("distributed").setLevel(logging.ERROR)
    from distributed import Client, LocalCluster

    from gctool.audit.distributed import DaskRunner, cli_runner, local_cluster_options

    cores = os.cpu_count() or 1
    todo = cases(args.quick)
    rows: list[tuple[str, str, float, float, float, int, float]] = []
    with LocalCluster(**local_cluster_options(cores)) as lc, \
            Client(lc, set_as_default=False) as client:
        meter = Meter(client)
        address = lc.scheduler_address

        def dask(fn: Any, session: bool = True) -> tuple[float, float, Any, dict[str, float]]:
            runner = cli_runner(address, key="bench")
            sums = {"worker_s": 0.0, "dask_tasks": 0}

            def counted(*args: Any) -> None:  # the stats of every enumeration of the run
                runner(*args)
                for k in sums:
                    sums[k] += runner.stats[k]

            with runner if session else nullcontext():
                wall, cpu, rep = timed(meter, lambda: fn({"runner": counted}))
            return wall, cpu, rep, sums

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
        def command() -> None:  # a new session: connect, the workers' count, one task
            with cli_runner(address, key="command") as runner:
                runner(NoopKernel(), [(0, 0, 0)], 1, lambda i, r: False)

        command()
        cw, cc, _ = timed(meter, lambda: [command() for _ in range(10)])
        for label, fn in todo:
            fn({"jobs": 1})  # warm: kernels loaded in this process
            dask(fn)  # and in the workers
            w1, c1, ref = timed(meter, lambda fn=fn: fn({"jobs": 1}))
            rows.append((label, "--jobs 1", w1, c1, 0.0, 0, 0.0))
            wj, cj, rep = timed(meter, lambda fn=fn: fn({"jobs": cores}))
            assert same(rep) == same(ref), f"{label}: --jobs {cores} differs"
            rows.append((label, f"--jobs {cores}", wj, cj, 0.0, 0, 0.0))
            for session in (True, False):
                wd, cd, rep, sums = dask(fn, session)
                assert same(rep) == same(ref), f"{label}: Dask differs from --jobs 1"
                rows.append((label, f"dask {cores}" + ("" if session else ", no session"),
                             wd, cd, sums["worker_s"], int(sums["dask_tasks"]),
                             cd - c1))
    print(f"loopback LocalCluster, {cores} single-threaded worker processes, the CLI's runner "
          "(session, guided grouping); CPU of every process")
    print(f"scheduling per Dask task (no-op tasks, in a session): {nc / args.noop_tasks * 1e3:.1f} "
          f"ms CPU, {nw / args.noop_tasks * 1e3:.1f} ms wall")
    print(f"per command (a new session: connecting, the workers' count, one no-op task and its "
          f"result): {cc / 10 * 1e3:.1f} ms CPU, {cw / 10 * 1e3:.1f} ms wall")
    print(f"scatter(broadcast=True) of the n={an} attack kernel ({len(pickle.dumps(kernel)):,} "
          f"bytes; a session sends it in its Dask tasks instead): {sc / 10 * 1e3:.1f} ms CPU, "
          f"{sw / 10 * 1e3:.1f} ms wall")
    print(f"kernel load per worker process (first run of {first_label} on a fresh cluster "
          f"minus the second): {(cold - warm) / cores:.2f} s CPU")
    print()
    print("| case | run | wall s | x --jobs 1 | CPU s | Dask tasks | on workers s "
          "| extra CPU vs --jobs 1 (per Dask task) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    base = {r[0]: r[2] for r in rows if r[1] == "--jobs 1"}
    for label, run, wall, cpu, on_workers, tasks, extra in rows:
        dask_cols = (f"{tasks} | {on_workers:.2f} | {extra:.2f} s ({extra / cpu:.0%}; "
                     f"{extra / max(tasks, 1) * 1e3:.0f} ms)"
                     if run.startswith("dask") else "- | - | -")
        print(f"| {label} | {run} | {wall:.2f} | {base[label] / wall:.2f}x | {cpu:.2f} "
              f"| {dask_cols} |")


if __name__ == "__main__":
    with readme.section(__file__):
        main()
