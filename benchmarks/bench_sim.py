"""Benchmark of ``gctool simulate``'s stopping rules against the naive path and plain numpy.

Per scheme, time per round of:

* **fast**: :meth:`gctool.sim.contenders.Contender.run` (group counting, batched QR, the O(n)
  bursty-model threshold, null-space certificates; :mod:`gctool.sim.stopping`);
* **naive**: ``run_naive`` of ``tests/sim_reference.py``, gctool's previous path (binary search of
  the stopping prefix with one SVD decode per probe; the bursty model checked arrival by
  arrival);
* **numpy**: a plain-numpy loop for single-round codes: per round, ``numpy.linalg.lstsq`` on
  growing prefixes of the arrival order until one decodes (the way a first simulator would).

naive and numpy run on ``--slow-rounds`` rounds (their cost per round is constant) and their
verdicts are checked against the fast path on those rounds.

Targets (one core: run with ``OPENBLAS_NUM_THREADS=1``):
  * n = 256, 2000 rounds, every default contender of an FRC and a cyclic file on the London
    trace: under 30 s in total;
  * n = 4096, 200 rounds, every default contender of an FRC file (shifted exponential; the
    traces have 256 workers): under 60 s.  Its SR-SGC has a 4096-worker real cyclic per-round
    code, whose dual data come from sparse LU factorisations instead of one SVD of B; the last
    line compares the two at n = 1024 (an SVD at 4096 takes minutes).

Run:  OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/bench_sim.py [--quick] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import readme

# the n = 1024 cases are far above the CLI's default work budget (5 s): give them an hour
os.environ.setdefault("GCTOOL_MAX_WORK", "1h")

from gctool.codes import design
from gctool.sim.contenders import Setting
from gctool.sim.contenders.code import CodeFile
from gctool.sim.contenders.schedule import Schedule
from gctool.sim.delays import parse_delay

sys.path.insert(0, str(Path(__file__).parents[1] / "tests"))
from sim_reference import contenders_for, run_naive  # noqa: E402 (the tests' reference paths)


def numpy_path(c: CodeFile, times: np.ndarray) -> np.ndarray:
    """Durations by linear search over prefixes with lstsq (single-round codes)."""
    B = np.asarray(c.matrix.B, dtype=np.float64)
    ones = np.ones(B.shape[1])
    cap = c.n - c.s
    out = np.empty(len(times))
    for t, row in enumerate(times):
        order = np.argsort(row, kind="stable")
        stop = cap
        for p in range(1, cap + 1):
            F = order[:p]
            a = np.linalg.lstsq(B[F].T, ones, rcond=None)[0]
            if np.sum((B[F].T @ a - ones) ** 2) <= 1e-9 * c.matrix.k:
                stop = p
                break
        out[t] = row[order[stop - 1]]
    return out


def case(label: str, kinds: list[str], n: int, s: int, rounds: int, delay: str,
         slow_rounds: int) -> dict[str, Any]:
    t0 = time.perf_counter()
    codes = [(k, design(k, n=n, s=s, seed=1)) for k in kinds]
    contenders = contenders_for(codes, True, None, 1)
    setup = time.perf_counter() - t0
    model = parse_delay(delay)
    draws = model.draws(rounds, n, np.random.default_rng(1))
    rows = []
    total = setup
    for c in contenders:
        times = model.times(draws, c.loads)
        t0 = time.perf_counter()
        fast = c.run(times, Setting())
        dt = time.perf_counter() - t0
        total += dt
        row: dict[str, Any] = {"scheme": c.name, "fast_ms": 1e3 * dt / rounds}
        if slow_rounds and isinstance(c, CodeFile | Schedule):
            part = times[:slow_rounds]
            t0 = time.perf_counter()
            slow = run_naive(c, part)
            row["naive_ms"] = 1e3 * (time.perf_counter() - t0) / slow_rounds
            if isinstance(c, Schedule):
                row["same"] = slow.jobs == fast.jobs[: len(slow.jobs)]
            else:
                row["same"] = bool(np.array_equal(slow.durations, fast.durations[:slow_rounds]))
            if isinstance(c, CodeFile) and not c.matrix.field.is_finite:
                t0 = time.perf_counter()
                plain = numpy_path(c, part)
                row["numpy_ms"] = 1e3 * (time.perf_counter() - t0) / slow_rounds
                row["same"] = row["same"] and bool(np.allclose(plain, fast.durations[
                    :slow_rounds]))
        rows.append(row)
    return {"case": label, "n": n, "rounds": rounds, "delay": delay, "setup_s": setup,
            "total_s": total, "rows": rows}


def dual_setup(n: int, lam: int = 15) -> dict[str, Any]:
    """SR-SGC's per-round real cyclic code at n workers: the dual data by sparse LU against one
    SVD of B (the previous path), and the residuals of a few straggler sets by both."""
    from gctool.sim.stopping import StopRule
    from gctool.sim.stopping.dual import dual_residual

    code = design("sr-sgc", n=n, seed=1, burst=1, window=2, lam=lam)
    out: dict[str, Any] = {"n": n, "s": code.s}
    rules = {}
    for how in ("sparse", "svd"):
        t0 = time.perf_counter()
        rules[how] = StopRule(code, dual=how)
        out[f"{how}_s"] = time.perf_counter() - t0
        out[f"{how}_method"] = rules[how].dual_method
    rng, worst = np.random.default_rng(0), 0.0
    for size in (1, code.s, code.s + 1, code.s + 3):
        S = np.sort(rng.choice(n, size, replace=False))
        a = dual_residual(rules["sparse"]._dual, S)  # type: ignore[arg-type]
        b = dual_residual(rules["svd"]._dual, S)  # type: ignore[arg-type]
        assert a is not None and b is not None
        worst = max(worst, abs(a - b) / max(abs(b), 1e-12 * n))
    out["residual_rel_diff"] = worst
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="smaller runs (a smoke test)")
    ap.add_argument("--slow-rounds", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if args.quick:
        cases = [("n=64", ["frc", "cyclic"], 64, 7, 200, "trace:london", args.slow_rounds)]
    else:
        cases = [("n=256 (target < 30 s)", ["frc", "cyclic"], 256, 15, 2000, "trace:london",
                  args.slow_rounds),
                 ("n=4096 (target < 60 s)", ["frc"], 4096, 15, 200, "shifted-exp", 0)]
    results = [case(*c) for c in cases]
    dual = dual_setup(256 if args.quick else 1024)
    if args.json:
        print(json.dumps({"cases": results, "dual": dual}, indent=2))
        return
    for res in results:
        print(f"{res['case']}: {res['rounds']} rounds, {res['delay']}; designs "
              f"{res['setup_s']:.1f} s; total {res['total_s']:.1f} s")
        print(f"  {'scheme':28s} {'fast ms/round':>14s} {'naive':>10s} {'numpy':>10s} "
              f"{'x naive':>8s} {'x numpy':>8s}  same")
        for r in res["rows"]:
            nv, npy = r.get("naive_ms"), r.get("numpy_ms")
            fast = max(r["fast_ms"], 1e-6)
            print(f"  {r['scheme']:28s} {r['fast_ms']:14.3f} "
                  f"{'' if nv is None else f'{nv:10.2f}':>10s} "
                  f"{'' if npy is None else f'{npy:10.2f}':>10s} "
                  f"{'' if nv is None else f'{nv / fast:8.0f}':>8s} "
                  f"{'' if npy is None else f'{npy / fast:8.0f}':>8s}  {r.get('same', '')}")
    print(f"SR-SGC per-round cyclic code, n={dual['n']} (s={dual['s']}): dual data by sparse LU "
          f"{dual['sparse_s']:.2f} s ({dual['sparse_method']}), by one SVD of B "
          f"{dual['svd_s']:.2f} s ({dual['svd_method']}), x{dual['svd_s'] / dual['sparse_s']:.0f}; "
          f"residuals agree to {dual['residual_rel_diff']:.1e}")


if __name__ == "__main__":
    with readme.section(__file__):
        main()
