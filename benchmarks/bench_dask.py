"""Benchmark of ``--executor dask`` against the local executor, in the same run.

One exhaustive ``verify`` of a generic real code (every straggler set, no shortcuts) on:

* the local executor with 1 and 2 processes (the default engine);
* a ``distributed.LocalCluster`` on loopback with 1 and 2 single-threaded worker processes,
  with one engine task per Dask task and with ``batch`` engine tasks per Dask task.

It also measures the scheduling overhead per Dask task (round trip of no-op tasks through
:class:`gctool.audit.distributed.DaskRunner`) and the compute time per engine task, and picks
the smallest ``batch`` that keeps overhead / (overhead + compute) under 5 %.  Every run's
verdict and diagnostics are checked to be identical to the single-core run.

Run:  .venv/bin/python benchmarks/bench_dask.py [--n 28] [--s 6] [--json]
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import readme

from gctool.algebra.fields import parse_field
from gctool.audit.distributed import DaskRunner
from gctool.audit.verify import verify
from gctool.model import GradientCode

TARGET = 0.05  # scheduling overhead / run time


@dataclass
class Noop:
    def run(self, task: Any) -> Any:
        return None


def same(r: Any) -> dict[str, Any]:
    d = r.to_dict()
    for k in ("elapsed_s", "jobs", "estimate"):
        d.pop(k, None)
    return d


def timed(fn: Any) -> tuple[float, Any]:
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=28)
    ap.add_argument("--s", type=int, default=6)
    ap.add_argument("--noop-tasks", type=int, default=400)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    logging.getLogger("distributed").setLevel(logging.ERROR)
    from distributed import LocalCluster

    code = GradientCode(np.random.default_rng(0).standard_normal((args.n, args.n // 2)),
                        parse_field("real"), args.s)
    total = math.comb(args.n, args.s)
    rows: list[dict[str, Any]] = []
    t1, ref = timed(lambda: verify(code, method="exhaustive", jobs=1))
    tasks = (ref.estimate or {}).get("sets", total)
    rows.append({"executor": "local", "workers": 1, "seconds": t1})
    t2, r2 = timed(lambda: verify(code, method="exhaustive", jobs=2))
    assert same(r2) == same(ref)
    rows.append({"executor": "local", "workers": 2, "seconds": t2})
    overhead: dict[int, float] = {}
    engine_tasks = 0
    batch_used = 1
    for workers in (1, 2):
        with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                          host="127.0.0.1", dashboard_address=":0") as cluster:
            addr = cluster.scheduler_address
            noop = DaskRunner(scheduler=addr, key="noop")
            t0 = time.perf_counter()
            noop(Noop(), [(i, 0, 0) for i in range(args.noop_tasks)], 1, lambda i, r: False)
            overhead[workers] = (time.perf_counter() - t0) / args.noop_tasks
            one = DaskRunner(scheduler=addr, key="b1")
            td, rd = timed(lambda r=one: verify(code, method="exhaustive", runner=r))
            assert same(rd) == same(ref), "dask result differs from the local one"
            engine_tasks = one.stats["tasks"] + 1  # + the pilot task, run on the client
            per_task = t1 / engine_tasks
            # overhead / (overhead + batch * per_task) <= TARGET
            batch_used = max(1, math.ceil(overhead[1 if workers == 1 else workers]
                                          * (1 - TARGET) / (TARGET * per_task)))
            rows.append({"executor": "dask", "workers": workers, "batch": 1, "seconds": td,
                         "dask_tasks": one.stats["dask_tasks"]})
            big = DaskRunner(scheduler=addr, key="bN", batch=batch_used)
            tb, rb = timed(lambda r=big: verify(code, method="exhaustive", runner=r))
            assert same(rb) == same(ref)
            rows.append({"executor": "dask", "workers": workers, "batch": batch_used,
                         "seconds": tb, "dask_tasks": big.stats["dask_tasks"]})
    per_task = t1 / engine_tasks
    for r in rows:
        r["sets_per_s"] = total / r["seconds"]
        r["vs_local_same_workers"] = next(
            x["seconds"] for x in rows if x["executor"] == "local"
            and x["workers"] == r["workers"]) / r["seconds"]
        if r["executor"] == "dask":
            b = r["batch"]
            r["overhead_share"] = overhead[r["workers"]] / (overhead[r["workers"]]
                                                            + b * per_task)
    out = {"n": args.n, "s": args.s, "sets": total, "engine_tasks": engine_tasks,
           "sets_per_engine_task": tasks / max(1, engine_tasks),
           "compute_s_per_engine_task": per_task,
           "dask_overhead_s_per_task": overhead, "verdict": ref.verdict, "runs": rows}
    if args.json:
        print(json.dumps(out, indent=2))
        return
    print(f"exhaustive verify, real n={args.n} s={args.s}: {total:,} sets in {engine_tasks} "
          f"engine tasks ({per_task * 1e3:.2f} ms each on one core); verdict {ref.verdict}")
    for w, o in overhead.items():
        print(f"Dask overhead per task ({w} worker(s)): {o * 1e3:.2f} ms")
    print(f"{'executor':9} {'workers':>7} {'batch':>5} {'seconds':>8} {'sets/s':>11} "
          f"{'x local':>8} {'overhead':>8}")
    for r in rows:
        share = f"{r['overhead_share']:.1%}" if "overhead_share" in r else "-"
        print(f"{r['executor']:9} {r['workers']:7d} {r.get('batch', '-')!s:>5} "
              f"{r['seconds']:8.3f} {r['sets_per_s']:11,.0f} {r['vs_local_same_workers']:8.2f} "
              f"{share:>8}")
    print(f"overhead target: < {TARGET:.0%} of run time -> batch >= {batch_used} engine tasks "
          "per Dask task on this machine")


if __name__ == "__main__":
    with readme.section(__file__):
        main()
