"""Coded gradient descent driven by a gctool export, with numpy and the standard library only.

    gctool design cyclic -n 8 -s 2 --seed 1 -o crc.json
    gctool export crc.json -o plan.npz --decoders
    python examples/coded_gd.py plan.npz --rounds 30 --seed 1

n worker processes each hold the data partitions their row of B names (``assignment``).  Every
round the master sends the weights w; worker i computes the least-squares gradient g_j of each
of its partitions and, after a random delay (some workers straggle), sends
``sum_j B[i, j] g_j`` (m > 1: the piece-major columns, piece u of g_j at column u*k + j).  The
master decodes with the first arrivals that decode (docs/pipelines.md: from arrived workers to
a row of the decoding table), checks the decoded gradient against the full gradient, and steps.

Exit status 0 when every round decoded the full gradient (within 1e-8 of the partial
gradients' scale) and the weights reached the least-squares solution; 1 otherwise.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import multiprocessing as mp
import sys
import time

import numpy as np

#: a round whose arrivals take longer than this (seconds) is a bug, not a straggler
ROUND_TIMEOUT = 30.0


# -- reading the export -----------------------------------------------------------------------
def load_plan(path: str) -> dict:
    """The arrays and metadata of an export (NPZ or JSON) as numpy arrays."""
    if path.endswith(".npz"):
        z = np.load(path, allow_pickle=False)
        plan = {key: z[key] for key in z.files if key != "meta"}
        plan["meta"] = json.loads(str(z["meta"]))
        return plan
    with open(path, encoding="utf-8") as fh:
        doc = json.load(fh)
    complex_field = doc["code"]["field"] == "complex"

    def matrix(x: list) -> np.ndarray:  # complex entries are [re, im] pairs in JSON
        a = np.array(x, dtype=float)
        return a[..., 0] + 1j * a[..., 1] if complex_field else a

    plan = {"B": matrix(doc["B"]), "target": matrix(doc["target"]), "A": matrix(doc["A"]),
            "patterns": np.array(doc["patterns"], dtype=np.int64).reshape(len(doc["A"]), -1),
            "decodable": np.array(doc["decodable"], dtype=bool)}
    plan["meta"] = {key: doc[key] for key in ("code", "assignment", "decoders")}
    return plan


# -- from arrived workers to a row of the decoding table ---------------------------------------
def pattern_rank(stragglers: list[int], n: int) -> int:
    """Row of the sorted straggler set in the lexicographic order of all s-subsets of
    0..n-1 (the order of ``patterns``): C(n, s) - 1 - sum_i C(n - 1 - c_i, s - i)."""
    s = len(stragglers)
    return math.comb(n, s) - 1 - sum(math.comb(n - 1 - c, s - i)
                                     for i, c in enumerate(sorted(stragglers)))


def decoding_row(arrived: list[int], n: int, s: int, decodable: np.ndarray) -> int | None:
    """The table row to decode with, given the workers that arrived (in arrival order), or
    None to wait for more.  The missing workers must be stragglers of the pattern; with more
    than n - s arrivals, the latest arrivals are added as (ignored) stragglers, and every
    choice is tried until one decodes."""
    missing = sorted(set(range(n)) - set(arrived))
    if len(missing) > s:
        return None
    spare = s - len(missing)
    for ignored in itertools.combinations(list(reversed(arrived)), spare):
        p = pattern_rank(missing + list(ignored), n)
        if decodable[p]:
            return p
    return None


# -- the job ----------------------------------------------------------------------------------
def partial_gradients(X: np.ndarray, y: np.ndarray, parts: list[np.ndarray], w: np.ndarray,
                      m: int) -> np.ndarray:
    """(m, k, dim/m): piece u of the gradient of partition j at [u, j]."""
    g = np.stack([X[idx].T @ (X[idx] @ w - y[idx]) for idx in parts])  # (k, dim)
    return np.stack(np.split(g, m, axis=1))


def worker(i: int, B_row: np.ndarray, data: tuple, m: int, seed: int, inbox: mp.Queue,
           outbox: mp.Queue) -> None:
    """Worker i: for every round's weights, its coded message after a random delay."""
    X, y, parts = data
    rng = np.random.default_rng([seed, i])
    k = len(parts)
    mine = [j for j in range(k) if np.any(B_row.reshape(m, k)[:, j] != 0)]
    while True:
        job = inbox.get()
        if job is None:
            return
        rnd, w = job
        g = np.zeros((m, k, X.shape[1] // m))
        g[:, mine] = partial_gradients(X, y, [parts[j] for j in mine], w, m)
        message = np.einsum("c,cd->d", B_row, g.reshape(m * k, -1))  # sum over columns u*k + j
        delay = 0.001 + rng.exponential(0.002)
        if rng.random() < 0.25:  # a straggler this round
            delay += rng.uniform(0.03, 0.08)
        time.sleep(delay)
        outbox.put((rnd, i, message))


def run(plan: dict, rounds: int, seed: int) -> bool:
    meta = plan["meta"]
    code = meta["code"]
    if str(code["field"]).startswith("GF"):
        sys.exit("a finite-field plan cannot drive real-valued gradient descent")
    n, k = code["n"], code["k"]
    s = meta["decoders"]["s"]  # the pattern size of the table (export -s), not code["s"]
    B, A, target = plan["B"], plan["A"], plan["target"]
    m = target.shape[0]
    A = A.reshape(len(A), m, n)
    assert np.allclose(target, np.kron(np.eye(m), np.ones(k)))

    rng = np.random.default_rng(seed)
    dim = 4 * m
    X = rng.standard_normal((40 * k, dim))
    y = X @ rng.standard_normal(dim) + 0.1 * rng.standard_normal(40 * k)
    parts = np.array_split(np.arange(len(y)), k)
    w_star = np.linalg.lstsq(X, y, rcond=None)[0]
    step = 1.0 / np.linalg.norm(X, 2) ** 2

    ctx = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
    outbox = ctx.Queue()
    inboxes = [ctx.Queue() for _ in range(n)]
    procs = [ctx.Process(target=worker, args=(i, B[i], (X, y, parts), m, seed, inboxes[i], outbox),
                         daemon=True) for i in range(n)]
    for p in procs:
        p.start()
    w = np.zeros(dim)
    worst, waited = 0.0, 0
    try:
        for rnd in range(rounds):
            for box in inboxes:
                box.put((rnd, w))
            arrived: list[int] = []
            messages = np.zeros((n, dim // m), dtype=B.dtype)
            row = None
            while row is None:
                r, i, message = outbox.get(timeout=ROUND_TIMEOUT)
                if r != rnd:  # a late message of an earlier round
                    continue
                arrived.append(i)
                messages[i] = message
                row = decoding_row(arrived, n, s, plan["decodable"])
                if row is None and len(arrived) == n:
                    print(f"FAIL: round {rnd}: no decodable pattern even with all {n} workers")
                    return False
            waited += len(arrived) > n - s
            decoded = (A[row] @ messages).reshape(dim)  # complex codes: imaginary part ~ 0
            g = partial_gradients(X, y, parts, w, m)  # the master's check only
            full = g.sum(axis=1).reshape(dim)
            scale = np.linalg.norm(g, axis=2).sum()  # sum_j ||g_j||: the full gradient -> 0
            worst = max(worst, float(np.linalg.norm(decoded - full) / scale))
            decoded = decoded.real
            w = w - step * decoded
    finally:
        for box in inboxes:
            box.put(None)
        for p in procs:
            p.join(timeout=10)
            if p.is_alive():
                p.terminate()
    error = float(np.linalg.norm(w - w_star) / np.linalg.norm(w_star))
    ok = worst <= 1e-8 and error <= 1e-6
    print(f"{'OK' if ok else 'FAIL'}: n={n} k={k} s={s} m={m}: {rounds} rounds, "
          f"{waited} waited past n - s arrivals; decoded vs full gradient {worst:.2e} "
          f"(relative to sum_j ||g_j||); ||w - w*|| / ||w*|| = {error:.2e}")
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("plan", help="an export with --decoders (.npz or .json)")
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    return 0 if run(load_plan(args.plan), args.rounds, args.seed) else 1


if __name__ == "__main__":
    sys.exit(main())
