"""Compiled audit kernels against the naive per-set loop and a plain-numpy dual test, in ONE run.

For every case it prints sets/s and ns per set of:

* ``naive``: a Python loop over the straggler sets solving each survivors' system on its own
  (``numpy.linalg.lstsq`` over R, galois ``matrix_rank`` over GF(q)); timed on the first
  ``--naive-sets`` sets in lexicographic order and extrapolated;
* ``numpy dual``: the 30-line numpy version of gctool's method over R - one SVD of B, then
  ``|det N[:, S]|`` of every s x s minor of the left null space, batched (no fall-back, no
  diagnostics: a floor for numpy, not an audit);
* ``gctool numpy``: ``verify --method exhaustive`` (or the exhaustive ``attack`` worst case)
  with the numpy kernels (``GCTOOL_COMPILED=0``);
* ``gctool``: the same with the compiled kernels (``GCTOOL_COMPILED=1``), one process;
  and, for n=40/s=6, with ``--jobs 2`` (two threads: the compiled walks release the GIL);
* ``compiled walk alone``: for n=40/s=6, the compiled screen walking every rank with nothing
  around it, in one thread and in two (taking chunks in turn): what this machine gives two threads
  of the kernel at that moment, the ceiling of ``--jobs 2`` (on a virtual machine whose two
  cores may share a physical one, it moves from run to run).

Cases: real Tandon cyclic codes n=24/s=4, n=30/s=5, n=40/s=6 (no naive loop: 3.8 M sets);
cyclic-MDS GF(2^5) n=31/s=5 (exhaustive, no certificate); a random generalised Reed-Solomon
code over GF(257), n=30/s=5; ``attack -s`` exhaustive worst case (optimal decoder, no symmetry)
on the real n=24/s=4 code, and at s=5 on it (the KKT route).

Targets (issue: compiled audit kernels), single core unless stated:
  real n=30/s=5 >= 1000x naive and >= 5x numpy dual; real n=40/s=6 < 2 s; GF(2^5) n=31/s=5
  >= 1e6 sets/s; attack n=24/s=4 >= 500x naive; --jobs 2 >= 1.8x --jobs 1 on n=40/s=6.

Rates are from CPU time (this process plus its finished children), which a machine shared with
other work distorts much less than wall time; the --jobs 2 scaling is a wall-time ratio and
needs two idle cores to mean anything.  Wall times are printed beside.  So the --jobs 2 run is
also measured per thread: the CPU time of the caller's thread before and after the pool runs
(set-up, first chunk, report: serial) and while it runs (the fold, which merges the chunk
summaries the walks hand it), of each pool thread, and how much of it all runs holding the GIL
(outside the compiled walks); on two idle cores its wall time is about
``max(serial + max(busiest pool thread, fold), GIL-held total)``, and the estimated scaling
is the one-job CPU time over that.  Beside it, the compiled walk alone in two threads
(``compiled walk alone``) gives the machine's own ceiling at that moment.  The n=40/s=6 runs
with one job, two jobs and the walk alone alternate, :data:`ROUNDS` rounds, the fastest of
each kept, so that a machine whose speed drifts (a virtual machine's cores may share a
physical one) treats them alike.

Everything runs with one BLAS thread (as the CLI does).  Compilation is done (or loaded from
the cache) before anything is timed.  Run:
  .venv/bin/python benchmarks/bench_kernels.py [--quick] [--naive-sets N] [--json]

``--quick`` runs small codes, few sets and rounds (a smoke test: its figures mean nothing).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import time
from collections.abc import Callable
from math import comb
from typing import Any

from gctool._threads import pin_blas_threads

pin_blas_threads()  # one BLAS thread, as the CLI runs (before numpy loads BLAS)

import numpy as np  # noqa: E402
import readme  # noqa: E402

from gctool.algebra.fields import parse_field  # noqa: E402
from gctool.audit.attack import attack  # noqa: E402
from gctool.audit.verify import verify  # noqa: E402
from gctool.codes import design  # noqa: E402
from gctool.engine.enumeration import rank_ranges, unrank_lex  # noqa: E402
from gctool.model import GradientCode  # noqa: E402
from gctool.numerics import normalise_rows, numerical_rank  # noqa: E402


def cyclic(n: int, s: int) -> GradientCode:
    return design("cyclic", n=n, s=s, seed=1)


def cyclic_mds(field: str, n: int, s: int) -> GradientCode:
    return design("cyclic-mds", n=n, s=s, field=field)


def grs(p: int, n: int, s: int, seed: int = 1) -> GradientCode:
    """Random generalised Reed-Solomon code over GF(p): rows v_i (1, x_i, ..., x_i^(k-1)),
    distinct x_i, non-zero v_i, k = n - s (every k rows are invertible: every set decodes)."""
    rng = np.random.default_rng(seed)
    k = n - s
    x = rng.choice(np.arange(1, p), size=n, replace=False)
    v = rng.integers(1, p, size=n)
    B = np.array([[v[i] * pow(int(x[i]), j, p) % p for j in range(k)] for i in range(n)])
    return GradientCode(B, parse_field(f"GF({p})"), s, "custom")


def cpu() -> float:
    """CPU seconds of this process and its finished children (user + system)."""
    t = os.times()  # clock-tick resolution: used for the children only
    return time.process_time() + t.children_user + t.children_system


def naive_rate(code: GradientCode, s: int, limit: int, worst: bool = False
               ) -> tuple[float, float]:
    """(wall, CPU) sets per second of the per-set loop on the first ``limit`` sets."""
    B, n, k = np.asarray(code.B), code.n, code.k
    ones = np.ones(k)
    GF = code.field.galois() if code.field.is_finite else None
    done = 0
    start, c0 = time.perf_counter(), cpu()
    for S in itertools.islice(itertools.combinations(range(n), s), limit):
        F = [i for i in range(n) if i not in S]
        if GF is None:
            a = np.linalg.lstsq(B[F].T, ones, rcond=None)[0]
            err = float(np.sum((B[F].T @ a - ones) ** 2))
            _ = err if worst else err <= 1e-9 * k
        else:
            aug = GF(np.vstack([B[F], np.ones((1, k), dtype=np.int64)]))
            _ = np.linalg.matrix_rank(aug) == np.linalg.matrix_rank(GF(B[F]))
        done += 1
    return done / (time.perf_counter() - start), done / max(cpu() - c0, 1e-9)


def numpy_dual(code: GradientCode, s: int, chunk: int = 16384, repeat: int = 1
               ) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds, sets with a minor > 1e-12): the plain numpy dual test
    (the fastest of ``repeat`` or more runs, as for gctool's rows: see :func:`fastest`)."""

    def once() -> int:
        Bn, _ = normalise_rows(np.asarray(code.B))
        U, sv, _ = np.linalg.svd(Bn)
        NT = U[:, numerical_rank(sv, Bn.shape):]  # (n, d): the left null space, d = s here
        good = 0
        for a, b in rank_ranges(0, comb(code.n, s), chunk):
            det = np.linalg.det(NT[unrank_lex(code.n, s, np.arange(a, b))])
            good += int(np.sum(np.abs(det) > 1e-12))
        return good

    return fastest(once, repeat)


#: runs of a few milliseconds are repeated until they have taken this long in all (as timeit
#: does), so that their fastest run is not one disturbed by the machine
MIN_TOTAL_S = 1.0
#: ... but at most this many runs
MAX_RUNS = 100


def fastest(fn: Callable[[], Any], repeat: int, code: GradientCode | None = None
            ) -> tuple[float, float, Any]:
    """(wall, CPU) seconds of the fastest of at least ``repeat`` runs of ``fn`` (more, up to
    :data:`MAX_RUNS`, while they have taken less than :data:`MIN_TOTAL_S` in all), and its
    result.  Each
    run starts from a ``code`` without the values derived from B (targets, row
    normalisation), as a command-line run does: the first run would otherwise pay for the
    later ones."""
    best, best_cpu, out, runs, spent = float("inf"), float("inf"), None, 0, 0.0
    while runs < repeat or (repeat > 1 and runs < MAX_RUNS and spent < MIN_TOTAL_S):
        if code is not None:
            code.__dict__.pop("_cache", None)
        t0, c0 = time.perf_counter(), cpu()
        out = fn()
        wall = time.perf_counter() - t0
        best, best_cpu = min(best, wall), min(best_cpu, cpu() - c0)
        runs, spent = runs + 1, spent + wall
    return best, best_cpu, out


def timed(fn: Callable[[], Any], compiled: bool, repeat: int = 1,
          code: GradientCode | None = None) -> tuple[float, float, Any]:
    """:func:`fastest` with the compiled kernels on or off."""
    os.environ["GCTOOL_COMPILED"] = "1" if compiled else "0"
    return fastest(fn, repeat, code)


class ThreadClock:
    """Per-thread CPU time of a threaded run (``time.thread_time``): of the caller, of each
    pool thread, and inside the compiled walks (which release the GIL).  A pool thread is a
    :class:`gctool.engine.threads.Carrier` that runs one pool's job after another (a run makes
    several pools: the screen's, then the doubtful sets'), so the clock times every job handed
    to :meth:`Carrier.start <gctool.engine.threads.Carrier.start>` and sums them per thread.
    It instruments the engine and the kernels until :meth:`close`."""

    def __init__(self) -> None:
        import threading

        from gctool.audit.kernels import gf, optimal, real
        from gctool.engine import threads

        self.pool: dict[int, float] = {}
        self.nogil: dict[int, float] = {}
        self.fold = 0.0  # the caller's CPU while the pool runs
        start, run_threads = threads.Carrier.start, threads.run_threads
        walks = ((real, "screen_range"), (gf, "gf_range"), (optimal, "hat_range"))
        self.saved = [(threads.Carrier, "start", threads.Carrier.__dict__["start"]),
                      (threads, "run_threads", run_threads),
                      *((mod, name, getattr(mod, name)) for mod, name in walks)]

        def timed_run(*args: Any) -> None:
            t0 = time.thread_time()
            try:
                run_threads(*args)
            finally:
                self.fold += time.thread_time() - t0

        threads.run_threads = timed_run  # type: ignore[assignment]

        def timed_job(job: Callable[[], None]) -> Callable[[], None]:
            def run() -> None:
                t0 = time.thread_time()
                try:
                    job()
                finally:  # before the job's end is signalled: the caller reads it after
                    key = threading.get_ident()
                    self.pool[key] = self.pool.get(key, 0.0) + time.thread_time() - t0
            return run

        threads.Carrier.start = staticmethod(  # type: ignore[method-assign, assignment]
            lambda job, name: start(timed_job(job), name))
        for mod, name in walks:
            setattr(mod, name, self._walk(getattr(mod, name)))

    def close(self) -> None:
        """The engine and the kernels as they were."""
        for owner, name, value in self.saved:
            setattr(owner, name, value)

    def _walk(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        import threading

        def walk(*args: Any) -> Any:
            t0 = time.thread_time()
            out = fn(*args)
            key = threading.get_ident()
            self.nogil[key] = self.nogil.get(key, 0.0) + time.thread_time() - t0
            return out

        return walk

    def run(self, fn: Callable[[], Any]) -> tuple[dict[str, float], Any]:
        """CPU seconds of ``fn()``'s threads: the caller's ``serial`` part (outside the pool)
        and ``fold`` (while the pool runs), the ``busiest`` pool thread, ``gil`` (held by all
        threads), and the estimated wall time on two idle cores ``est``; and the result."""
        import threading

        self.pool.clear()
        self.nogil.clear()
        self.fold = 0.0
        t0 = time.thread_time()
        out = fn()
        caller = time.thread_time() - t0
        me = threading.get_ident()
        gil = caller - self.nogil.get(me, 0.0)
        gil += sum(c - self.nogil.get(k, 0.0) for k, c in self.pool.items())
        busiest = max(self.pool.values(), default=0.0)
        serial = caller - self.fold
        return {"serial_cpu_s": serial, "fold_cpu_s": self.fold, "busiest_thread_cpu_s": busiest,
                "gil_cpu_s": gil, "est_wall_s": max(serial + max(busiest, self.fold), gil)}, out


def bare_walks(code: GradientCode, s: int) -> tuple[Callable[[], None], Callable[[], None]]:
    """The compiled screen's walk alone (no gctool code around it: no fold, no doubtful sets
    decided) over every rank: in one thread, and in two threads taking chunks of 2^16 ranks
    in turn.  Their ratio is what this machine gives two threads of the kernel at that
    moment: the ceiling of ``--jobs 2``."""
    import threading

    from gctool.audit import nullspace as nsk
    from gctool.limits import DEFAULT_TOL

    kernel = nsk.FloatNullKernel(code, DEFAULT_TOL, nsk.reduce_float(code, DEFAULT_TOL))
    kernel.chunk_size(s)
    screen, n, total = kernel.compiled_screen, code.n, comb(code.n, s)

    def walk(a: int, b: int) -> None:
        S, pend, pos = np.array(unrank_lex(n, s, np.array([a]))[0], np.int64), \
            np.zeros(4096, np.int64), 0
        while pos < b - a:
            pos += screen.walk(S, b - a - pos, pend)[0]

    def take(chunks: Any) -> None:
        for a in chunks:  # next() of a shared iterator runs under the GIL: each chunk once
            walk(a, min(total, a + (1 << 16)))

    def two() -> None:
        chunks = iter(range(0, total, 1 << 16))
        th = [threading.Thread(target=take, args=(chunks,)) for _ in range(2)]
        for t in th:
            t.start()
        for t in th:
            t.join()

    return lambda: walk(0, total), two


#: rounds of the alternating --jobs 1 / --jobs 2 / walk-alone measurement
ROUNDS = 8


def alternate(fns: dict[str, Callable[[], Any]], code: GradientCode
              ) -> dict[str, tuple[float, float, Any]]:
    """(wall, CPU) seconds of the fastest of :data:`ROUNDS` runs of each of ``fns``, run in
    turn round after round (so that a machine whose speed drifts treats them alike), each
    from a ``code`` without derived values; and the last result of each."""
    out: dict[str, tuple[float, float, Any]] = {}
    for _ in range(ROUNDS):
        for name, fn in fns.items():
            code.__dict__.pop("_cache", None)
            t0, c0 = time.perf_counter(), cpu()
            res = fn()
            wall, c = time.perf_counter() - t0, cpu() - c0
            w0, c_0, _ = out.get(name, (wall, c, None))
            out[name] = (min(w0, wall), min(c_0, c), res)
    return out


def row(case: str, sets: int, method: str, wall: float, cpu_s: float, jobs: int = 1
        ) -> dict[str, Any]:
    return {"case": case, "sets": sets, "method": method, "jobs": jobs, "wall_s": wall,
            "cpu_s": cpu_s, "sets_per_s": sets / cpu_s, "ns_per_set": 1e9 * cpu_s / sets,
            "wall_sets_per_s": sets / wall}


def naive_row(case: str, sets: int, method: str, rates: tuple[float, float]) -> dict[str, Any]:
    return row(case, sets, method, sets / rates[0], sets / rates[1])


def real_case(n: int, s: int, naive_sets: int, numpy_kernels: bool = True,
              jobs2: bool = False) -> list[dict[str, Any]]:
    code, total, case = cyclic(n, s), comb(n, s), f"real cyclic n={n} s={s}"
    out = []
    if naive_sets:
        out.append(naive_row(case, total, "naive lstsq loop",
                             naive_rate(code, s, min(naive_sets, total))))
    # minors <= 1e-12 (total - good) would need a fall-back
    w, c, good = numpy_dual(code, s, repeat=1 if jobs2 else 3)
    out.append(row(case, total, "numpy dual test", w, c))

    def run(jobs: int = 1) -> Any:
        return verify(code, s, method="exhaustive", max_sets=10**9, jobs=jobs)

    if numpy_kernels:
        w, c, r = timed(run, False, code=code)
        assert r.ok
        out.append(row(case, total, "gctool (numpy kernels)", w, c))
    if not jobs2:
        w, c, r = timed(run, True, repeat=3, code=code)
        assert r.ok and r.exact
        out.append(row(case, total, "gctool (compiled)", w, c))
    else:  # one job, two jobs and the walk alone in one and two threads, in turn
        os.environ["GCTOOL_COMPILED"] = "1"
        one, two = bare_walks(code, s)
        t = alternate({"gctool (compiled)": run, "gctool (compiled, --jobs 2)": lambda: run(2),
                       "compiled walk alone": one, "compiled walk alone, 2 threads": two}, code)
        for name, (w, c, r) in t.items():
            jobs = 2 if "2" in name else 1
            assert r is None or (r.ok and r.exact and r.jobs == jobs)
            out.append(row(case, total, name, w, c, jobs))
        clock = ThreadClock()
        best: dict[str, Any] | None = None
        try:
            for _ in range(3):  # the fastest of 3 estimates, as for every compiled row
                code.__dict__.pop("_cache", None)  # a fresh code, as for timed()
                times, r = clock.run(lambda: run(2))
                if best is None or times["est_wall_s"] < best["est_wall_s"]:
                    best = times
        finally:
            clock.close()
        assert best is not None
        out.append(dict(row(case, total, "gctool (compiled, --jobs 2) estimate",
                            best["est_wall_s"], best["est_wall_s"], 2), **best))
    return out


def gf_case(case: str, code: GradientCode, s: int, naive_sets: int) -> list[dict[str, Any]]:
    total = comb(code.n, s)
    out = [naive_row(case, total, "naive galois rank loop",
                     naive_rate(code, s, min(naive_sets, total)))]

    def run() -> Any:
        return verify(code, s, method="exhaustive", max_sets=10**9, jobs=1)

    w, c, r = timed(run, False, code=code)
    assert r.ok
    out.append(row(case, total, "gctool (numpy kernels)", w, c))
    w, c, r = timed(run, True, repeat=3, code=code)
    assert r.ok
    out.append(row(case, total, "gctool (compiled)", w, c))
    return out


def attack_case(n: int, code_s: int, s: int, naive_sets: int) -> list[dict[str, Any]]:
    code, total = cyclic(n, code_s), comb(n, s)
    case = f"attack -s {s} worst, cyclic n={n} s={code_s}"
    out = [naive_row(case, total, "naive lstsq loop",
                     naive_rate(code, s, min(naive_sets, total), worst=True))]

    def run() -> Any:
        return attack(code, s, method="exhaustive", symmetry=False, max_sets=10**9)

    w, c, ref = timed(run, False, code=code)
    out.append(row(case, total, "gctool (numpy kernels)", w, c))
    w, c, r = timed(run, True, repeat=3, code=code)
    assert r.stragglers == ref.stragglers and r.exact
    out.append(row(case, total, "gctool (compiled)", w, c))
    return out


def warm() -> None:
    """Compile (or load) every kernel before timing."""
    os.environ["GCTOOL_COMPILED"] = "1"
    verify(cyclic(8, 2), 2, method="exhaustive")
    verify(cyclic_mds("GF(2^3)", 7, 2), 2, method="exhaustive")
    verify(grs(257, 8, 2), 2, method="exhaustive")
    attack(cyclic(8, 2), 3, method="exhaustive", symmetry=False)


def ratio(rows: list[dict[str, Any]], case: str, a: str, b: str, key: str = "sets_per_s"
          ) -> float:
    get = {r["method"]: r[key] for r in rows if r["case"] == case}
    return float(get[a] / get[b]) if a in get and b in get else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--naive-sets", type=int, default=3000,
                        help="sets timed for the naive loops (extrapolated)")
    parser.add_argument("--json", action="store_true", help="print JSON rows")
    parser.add_argument("--quick", action="store_true",
                        help="small codes, few sets and rounds (a smoke test)")
    args = parser.parse_args()
    global ROUNDS, MIN_TOTAL_S
    # (n, s) of the real cyclic codes: small, middle (vs naive), large (--jobs 2); of GF(2^5)
    (sn, ss), (mn, ms), (ln, ls), (gn, gs) = ((12, 2), (14, 3), (36, 5), (31, 2)) \
        if args.quick else ((24, 4), (30, 5), (40, 6), (31, 5))
    ns = min(args.naive_sets, 30) if args.quick else args.naive_sets
    if args.quick:
        ROUNDS, MIN_TOTAL_S = 2, 0.0
    t0 = time.perf_counter()
    warm()
    warm_s = time.perf_counter() - t0
    rows = (real_case(sn, ss, ns) + real_case(mn, ms, ns)
            + real_case(ln, ls, 0, numpy_kernels=False, jobs2=True)
            + gf_case(f"cyclic-mds GF(2^5) n={gn} s={gs}", cyclic_mds("GF(2^5)", gn, gs), gs,
                      ns // 3)
            + gf_case(f"random GRS GF(257) n={mn} s={ms}", grs(257, mn, ms), ms, ns // 3)
            + attack_case(sn, ss, ss, ns) + attack_case(sn, ss, ss + 1, ns))
    c30, c40 = f"real cyclic n={mn} s={ms}", f"real cyclic n={ln} s={ls}"
    a24 = f"attack -s {ss} worst, cyclic n={sn} s={ss}"
    gf = f"cyclic-mds GF(2^5) n={gn} s={gs}"
    sec40 = next(r["cpu_s"] for r in rows if r["case"] == c40
                 and r["method"] == "gctool (compiled)")
    gf_rate = next(r["sets_per_s"] for r in rows if r["case"] == gf
                   and r["method"] == "gctool (compiled)")
    targets = [
        (f"real n={mn} s={ms} vs naive", ratio(rows, c30, "gctool (compiled)",
                                               "naive lstsq loop"), 1000),
        (f"real n={mn} s={ms} vs numpy dual", ratio(rows, c30, "gctool (compiled)",
                                                    "numpy dual test"), 5),
        (f"real n={ln} s={ls} seconds (<)", sec40, 2.0),
        (f"GF(2^5) n={gn} s={gs} sets/s", gf_rate, 1e6),
        (f"attack n={sn} s={ss} vs naive", ratio(rows, a24, "gctool (compiled)",
                                                 "naive lstsq loop"), 500),
        (f"--jobs 2 / --jobs 1 on n={ln} (wall)", ratio(rows, c40, "gctool (compiled, --jobs 2)",
                                                        "gctool (compiled)", "wall_sets_per_s"),
         1.8),
    ]
    ceiling = ratio(rows, c40, "compiled walk alone, 2 threads", "compiled walk alone",
                    "wall_sets_per_s")
    # what two idle cores would give, from per-thread CPU time (ThreadClock)
    est = next(r for r in rows if r["case"] == c40
               and r["method"] == "gctool (compiled, --jobs 2) estimate")
    ideal = sec40 / est["est_wall_s"]
    if args.json:
        print(json.dumps({"rows": rows, "targets": [
            {"name": n, "value": v, "target": t} for n, v, t in targets],
            "warm_s": warm_s, "jobs2_estimate": ideal, "jobs2_ceiling": ceiling}, indent=2))
        return
    print(f"kernels compiled or loaded in {warm_s:.2f} s on {os.cpu_count()} cores")
    print("sets/s and ns/set from CPU time (this process and its children), wall time beside")
    print(f"{'case':38} {'sets':>10} {'method':30} {'cpu s':>8} {'wall s':>8} {'sets/s':>12} "
          f"{'ns/set':>9}")
    for r in rows:
        jobs = f" [{r['jobs']} jobs]" if r["jobs"] > 1 else ""
        print(f"{r['case']:38} {r['sets']:>10,} {r['method'] + jobs:30} {r['cpu_s']:>8.3f} "
              f"{r['wall_s']:>8.3f} {r['sets_per_s']:>12,.0f} {r['ns_per_set']:>9,.0f}")
    print("\ntargets:")
    for name, value, target in targets:
        met = value < target if "(<)" in name else value >= target
        print(f"  {name:32} {value:12,.2f}  target {target:,}  {'met' if met else 'NOT met'}")
    print(f"  (--jobs 2 on two idle cores, from per-thread CPU time: {ideal:.2f}x: one job "
          f"{sec40:.3f} s; two: caller {est['serial_cpu_s']:.3f} s alone, then busiest pool "
          f"thread {est['busiest_thread_cpu_s']:.3f} s beside the fold's "
          f"{est['fold_cpu_s']:.3f} s; GIL held {est['gil_cpu_s']:.3f} s in all; the "
          "wall ratio needs both cores free)")
    print(f"  (this machine's ceiling for --jobs 2: the compiled walk alone, no gctool code, in "
          f"two threads runs {ceiling:.2f}x one; gctool --jobs 2 reaches "
          f"{targets[-1][1] / ceiling:.0%} of it)")


if __name__ == "__main__":
    with readme.section(__file__):
        main()
