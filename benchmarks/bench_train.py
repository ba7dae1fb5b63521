"""Benchmark of ``gctool train`` on loopback LocalClusters, in one run.

1. **The cluster's own overhead per round** at n = 16 (cyclic, s = 2): gctool's rounds with no
   injected delay and no computing (``gctool.train``'s overhead rounds: resident tasks, one
   connection per Dask worker) against the plain Dask way on the same cluster: submit n small
   tasks per round and take the first n − s with ``as_completed`` (the rest cancelled).  Both
   on 2 worker processes with 1 thread each and with 8 threads each.  Target: gctool's median
   at most 25 ms per round.
2. **Predicted against measured** at n = 8 (cyclic, s = 2, logistic regression, shifted
   exponential delays): every scheme runs all its rounds (``all_rounds``), and the median time
   per round ``gctool simulate`` predicts from each recorded trace is compared with the
   measured median, for the code and both baselines.  Target: within 15 %.

Both need a quiet machine (other processes on the cores change the times).  ``--small`` runs
tiny sizes (the test suite uses it).  ``--write-readme`` writes the report to this script's
section of benchmarks/README.md (``benchmarks/readme.py``).

Run:  .venv/bin/python benchmarks/bench_train.py [--jobs 2] [--rounds 300] [--write-readme]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from typing import Any

import numpy as np
import readme

import gctool
from gctool.sim.delays import parse_delay

OVERHEAD_TARGET_S = 0.025
PREDICTION_TARGET = 0.15


def _zeros(i: int, width: int) -> np.ndarray:
    return np.zeros(width)


def dask_rounds(scheduler: str, n: int, s: int, rounds: int, width: int) -> np.ndarray:
    """Seconds per round of the plain Dask way: n tasks per round, the first n - s taken."""
    from distributed import as_completed

    from gctool.trainer.cluster import dask_client

    out = []
    with dask_client(scheduler, 0) as client:
        client.submit(_zeros, -1, width, pure=False).result()  # the workers are warm
        for _ in range(rounds):
            t0 = time.perf_counter()
            futures = [client.submit(_zeros, i, width, pure=False) for i in range(n)]
            for got, f in enumerate(as_completed(futures, loop=client.loop), start=1):
                f.result()
                if got == n - s:
                    break
            client.cancel(futures)
            out.append(time.perf_counter() - t0)
    return np.array(out)


def overhead(scheduler: str, n: int, s: int, rounds: int, seed: int) -> dict[str, Any]:
    code = gctool.design("cyclic", n=n, s=s, seed=seed)
    report = gctool.train([(f"cyclic n={n} s={s}", code)], parse_delay("shifted-exp"),
                          iterations=2, seed=seed, time_scale=0.0, scheduler=scheduler,
                          overhead_rounds=rounds, baselines=False)
    assert report.overhead is not None
    o = report.overhead
    plain = dask_rounds(scheduler, n, s, rounds, 12)
    return {"gctool_p50": o.p50["value"], "gctool_p99": o.p99["value"],
            "send_p50": o.send_p50, "wait_p50": o.wait_p50, "step_p50": o.step_p50,
            "dask_p50": float(np.median(plain)), "dask_p99": float(np.quantile(plain, 0.99))}


def prediction(scheduler: str, n: int, s: int, rounds: int, seed: int, time_scale: float,  # noqa: PLR0913 (the benchmark's settings)
               delay: str) -> list[dict[str, Any]]:
    code = gctool.design("cyclic", n=n, s=s, seed=seed)
    report = gctool.train([(f"cyclic n={n} s={s}", code)], parse_delay(delay),
                          problem="logistic", iterations=rounds, seed=seed,
                          time_scale=time_scale, scheduler=scheduler, overhead_rounds=0,
                          all_rounds=True, check=True)
    out = []
    for row in report.rows:
        assert row.predicted is not None and row.check is not None
        out.append({"scheme": row.name, "rounds": row.rounds, "measured_p50": row.p50["value"],
                    "predicted_p50": row.predicted.p50,
                    "relative_error": row.predicted.relative_error,
                    "check": row.check.max_relative_to_partials})
    return out


def report(args: argparse.Namespace, over: dict[int, dict[str, Any]],
           pred: list[dict[str, Any]]) -> None:
    print(f"gctool train on loopback LocalClusters of {args.jobs} worker processes "
          f"({os.cpu_count()} cores, Python {platform.python_version()})")
    print(f"cluster overhead per round, n={args.overhead_n} s={args.s}, {args.rounds} rounds "
          "without delays or computing (ms):")
    print(f"  {'method':42s} {'threads':>7s} {'median':>9s} {'p99':>9s}")
    for threads, o in over.items():
        print(f"  {'gctool train (resident tasks)':42s} {threads:7d} "
              f"{1e3 * o['gctool_p50']:9.2f} {1e3 * o['gctool_p99']:9.2f}")
        print(f"  {'Dask tasks, first n - s by as_completed':42s} {threads:7d} "
              f"{1e3 * o['dask_p50']:9.2f} {1e3 * o['dask_p99']:9.2f}")
    for threads, o in over.items():
        met = "met" if o["gctool_p50"] <= OVERHEAD_TARGET_S else "NOT met"
        print(f"  {threads} thread(s): gctool's send {1e3 * o['send_p50']:.2f} ms, wait "
              f"{1e3 * o['wait_p50']:.2f} ms, decode and step {1e3 * o['step_p50']:.2f} ms "
              f"(medians); {o['dask_p50'] / o['gctool_p50']:.1f}x faster than the Dask tasks; "
              f"target <= {1e3 * OVERHEAD_TARGET_S:g} ms: {met}")
    print(f"predicted vs measured median time per round (n={args.n} s={args.s}, {args.delay} x "
          f"{args.time_scale:g} s, logistic regression, every scheme {args.rounds} rounds; ms):")
    print(f"  {'scheme':24s} {'measured':>9s} {'predicted':>9s} {'difference':>10s} "
          f"{'--check':>8s}")
    for p in pred:
        print(f"  {p['scheme']:24s} {1e3 * p['measured_p50']:9.2f} "
              f"{1e3 * p['predicted_p50']:9.2f} {100 * p['relative_error']:+9.1f}% "
              f"{p['check']:8.1e}")
    worst = max(abs(p["relative_error"]) for p in pred)
    met = "met" if worst <= PREDICTION_TARGET else "NOT met"
    print(f"largest difference {100 * worst:.1f} % (target <= {100 * PREDICTION_TARGET:g} %: "
          f"{met})")


def main() -> None:
    from distributed import LocalCluster

    from gctool.audit.distributed import local_cluster_options
    from gctool.trainer.cluster import quiet_dask

    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=2, help="worker processes")
    ap.add_argument("--overhead-n", type=int, default=16)
    ap.add_argument("--n", type=int, default=8)
    ap.add_argument("--s", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=300)
    ap.add_argument("--time-scale", type=float, default=0.1)
    ap.add_argument("--delay", default="shifted-exp")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--small", action="store_true", help="tiny sizes (tests)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if args.small:
        args.overhead_n, args.n, args.s, args.rounds, args.time_scale = 4, 4, 1, 6, 0.01
    over: dict[int, dict[str, Any]] = {}
    pred: list[dict[str, Any]] = []
    for threads in (1,) if args.small else (1, 8):
        with quiet_dask(), LocalCluster(**local_cluster_options(args.jobs, threads=threads)
                                        ) as cluster:
            address = cluster.scheduler_address
            over[threads] = overhead(address, args.overhead_n, args.s, args.rounds, args.seed)
            if threads == 1:
                pred = prediction(address, args.n, args.s, args.rounds, args.seed,
                                  args.time_scale, args.delay)
    if args.json:
        print(json.dumps({"overhead": over, "prediction": pred}))
    else:
        report(args, over, pred)


if __name__ == "__main__":
    with readme.section(__file__):
        main()
