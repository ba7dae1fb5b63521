"""Benchmark of ``gctool train`` on a loopback LocalCluster, in one run.

1. **The cluster's own overhead per round** at n = 16 (cyclic, s = 2): gctool's rounds with no
   injected delay and no computing (``gctool.train``'s overhead rounds: resident tasks, one
   connection per Dask worker) against the plain Dask way on the same kind of cluster: submit
   n small tasks per round and take the first n − s with ``as_completed`` (the rest
   cancelled).  Target: gctool's median at most 25 ms per round.
2. **Predicted against measured** at n = 8 (cyclic, s = 2, logistic regression, shifted
   exponential delays): every scheme runs all its rounds (``all_rounds``), and the median time
   per round ``gctool simulate`` predicts from each recorded trace is compared with the
   measured median, for the code and both baselines.  Target: within 15 %.

Both need a quiet machine (other processes on the cores change the times).  ``--small`` runs
tiny sizes (the test suite uses it); ``--write`` replaces this script's section of
benchmarks/README.md with the figures (``--readme PATH`` writes another file).

Run:  .venv/bin/python benchmarks/bench_train.py [--jobs 2] [--rounds 300] [--write]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

import gctool
from gctool.sim.delays import parse_delay

OVERHEAD_TARGET_S = 0.025
PREDICTION_TARGET = 0.15
BEGIN, END = "<!-- bench_train{}: begin -->", "<!-- bench_train{}: end -->"
README = Path(__file__).resolve().parent / "README.md"


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


def overhead(scheduler: str, n: int, s: int, rounds: int, jobs: int, seed: int
             ) -> dict[str, Any]:
    code = gctool.design("cyclic", n=n, s=s, seed=seed)
    report = gctool.train([(f"cyclic n={n} s={s}", code)], parse_delay("shifted-exp"),
                          iterations=2, seed=seed, time_scale=0.0, scheduler=scheduler,
                          overhead_rounds=rounds, baselines=False)
    assert report.overhead is not None
    o = report.overhead
    plain = dask_rounds(scheduler, n, s, rounds, 12)
    return {"n": n, "s": s, "rounds": rounds, "jobs": jobs,
            "gctool_p50": o.p50["value"], "gctool_p99": o.p99["value"],
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


def markdown(over: dict[str, Any], pred: list[dict[str, Any]], args: argparse.Namespace) -> str:
    ok_over = over["gctool_p50"] <= OVERHEAD_TARGET_S
    tag = "" if args.threads == 1 else f" threads={args.threads}"
    lines = [
        BEGIN.format(tag),
        f"## bench_train.py{tag.replace('=', ' ')}",
        "",
        f"`{' '.join(['python', 'benchmarks/bench_train.py', *args.argv])}` on "
        f"{os.cpu_count()} cores, Python {platform.python_version()}, a loopback LocalCluster of "
        f"{args.jobs} worker processes with {args.threads} thread(s) each (written by the "
        "script).",
        "",
        f"Cluster overhead per round, n = {over['n']}, s = {over['s']}, {over['rounds']} "
        "rounds without delays or computing:",
        "",
        "| method | median ms | p99 ms |",
        "| --- | --- | --- |",
        f"| gctool train (resident tasks) | {1e3 * over['gctool_p50']:.2f} | "
        f"{1e3 * over['gctool_p99']:.2f} |",
        f"| Dask tasks, first n − s by as_completed | {1e3 * over['dask_p50']:.2f} | "
        f"{1e3 * over['dask_p99']:.2f} |",
        "",
        f"gctool: send {1e3 * over['send_p50']:.2f} ms, wait {1e3 * over['wait_p50']:.2f} ms, "
        f"decode and step {1e3 * over['step_p50']:.2f} ms (medians); "
        f"{over['dask_p50'] / over['gctool_p50']:.1f}x faster than the Dask tasks; target "
        f"<= {1e3 * OVERHEAD_TARGET_S:g} ms: {'met' if ok_over else 'NOT met'}.",
        "",
        f"Predicted against measured median time per round ({args.delay} x {args.time_scale:g} "
        f"s, logistic regression, every scheme {args.rounds} rounds):",
        "",
        "| scheme | measured p50 ms | predicted p50 ms | difference | --check error |",
        "| --- | --- | --- | --- | --- |",
    ]
    for p in pred:
        lines.append(f"| {p['scheme']} | {1e3 * p['measured_p50']:.2f} | "
                     f"{1e3 * p['predicted_p50']:.2f} | {100 * p['relative_error']:+.1f} % | "
                     f"{p['check']:.1e} |")
    worst = max(abs(p["relative_error"]) for p in pred)
    met = "met" if worst <= PREDICTION_TARGET else "NOT met"
    lines += ["", f"Largest difference {100 * worst:.1f} % (target <= "
                  f"{100 * PREDICTION_TARGET:g} %: {met}).", END.format(tag)]
    return "\n".join(lines) + "\n"


def write_section(path: Path, section: str) -> None:
    """Replace the section of ``path`` that ``section`` replaces (same markers), or append it."""
    from gctool._files import atomic_write

    begin, end = section.splitlines()[0], section.rstrip("\n").splitlines()[-1]
    text = path.read_text() if path.exists() else "# Benchmarks\n"
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        text = head + section.rstrip("\n") + rest.split(end, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n" + section
    atomic_write(path, text.encode())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1, help="threads per worker process")
    ap.add_argument("--overhead-n", type=int, default=16)
    ap.add_argument("--n", type=int, default=8)
    ap.add_argument("--s", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=300)
    ap.add_argument("--time-scale", type=float, default=0.1)
    ap.add_argument("--delay", default="shifted-exp")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--small", action="store_true", help="tiny sizes (tests)")
    ap.add_argument("--write", action="store_true", help="write benchmarks/README.md")
    ap.add_argument("--readme", type=Path, default=None, help="write this file instead")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    args.argv = [a for a in sys.argv[1:] if a not in ("--write", "--json")]
    if args.small:
        args.overhead_n, args.n, args.s, args.rounds, args.time_scale = 4, 4, 1, 6, 0.01
    from distributed import LocalCluster

    from gctool.trainer.cluster import quiet_dask

    with quiet_dask(), LocalCluster(n_workers=args.jobs, threads_per_worker=args.threads,
                                    host="127.0.0.1", dashboard_address=":0",
                                    processes=True) as cluster:  # one cluster for every part
        over = overhead(cluster.scheduler_address, args.overhead_n, args.s, args.rounds,
                        args.jobs, args.seed)
        pred = prediction(cluster.scheduler_address, args.n, args.s, args.rounds, args.seed,
                          args.time_scale, args.delay)
    section = markdown(over, pred, args)
    if args.json:
        print(json.dumps({"overhead": over, "prediction": pred}))
    else:
        print(section)
    if args.write or args.readme is not None:
        write_section(args.readme or README, section)


if __name__ == "__main__":
    main()
