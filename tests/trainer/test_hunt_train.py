"""Hunt for wrong results in ``gctool train`` (gctool/trainer/) against an independent reference
written here with plain numpy from the definitions (reference §0, docs/train.md), not from
gctool's code:

* the problems: mean loss over N samples, ``0.5 (x.w - y)^2`` (lsq), ``log(1 + e^z) - y z``
  with ``z = x.w`` (logistic), and the network ``sigma(v . tanh(W x + b) + c)`` with the
  logistic loss (mlp, parameters flattened as W row by row, b, v, c); the data cut into k
  contiguous partitions of near-equal size (boundaries ``rint(j N / k)``); the partial
  gradient g_j is the gradient of the mean loss restricted to partition j;
* a code B (n x mk, rows are workers, u-major columns): worker i sends
  ``f_i = sum_{u,j} B[i, u k + j] g_j^(u)`` with ``g_j^(u)`` piece u of g_j (pieces of width
  ceil(d/m), the last zero-padded);
* survivors F decode exactly iff ``T = I_m (x) 1_k^T`` lies in the row space of ``B_F`` (rank
  test on the singular values); the optimal decoder is least squares, whose residual
  ``R = A B_F - T`` is unique, so the decoded gradient is the full gradient plus ``R P``
  (P the pieces of the partial gradients, real part for complex codes) and its squared
  decoding error is ``||R||^2``;
* the master's rule: it stops at the earliest arrival after which the arrived set decodes
  exactly or counts n - s (uncoded: n; ignore-stragglers: the first n - s, summed and rescaled
  by n/(n - s)); the step is ``w <- w - eta g_hat`` with eta = 1/L (lsq), 4/L (logistic),
  2/L (mlp), L the largest eigenvalue of X^T X / N;
* the target loss is ``loss* + gap (loss(w0) - loss*)`` with loss* the least-squares optimum
  (lsq) or the logistic optimum found here by Newton's method.

The straggler patterns are deterministic: a straggler's injected delay is far longer than a
round takes, so the master never waits for it and its message is cancelled.
"""

from __future__ import annotations

import threading
from itertools import combinations
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gctool
from gctool.trainer.channel import Hub
from gctool.trainer.cluster import Placement
from gctool.trainer.report import row as report_row
from gctool.trainer.rounds import Master
from gctool.trainer.schemes import (
    Coded,
    IgnoreStragglers,
    Uncoded,
    group_data,
    partition_data,
)
from gctool.trainer.worker import _Group, message, serve
from gctool.trainer.workload import Linear, Problem, TwoLayer


# -- the independent reference -------------------------------------------------------------------
def sigmoid(z: np.ndarray) -> np.ndarray:
    return np.asarray(1.0 / (1.0 + np.exp(-z)))


def ref_loss(kind: str, X: np.ndarray, y: np.ndarray, w: np.ndarray) -> float:
    if kind == "lsq":
        return float(0.5 * np.mean((X @ w - y) ** 2))
    z = X @ w if kind == "logistic" else ref_net(X, w)[1]
    return float(np.mean(np.log1p(np.exp(z)) - y * z))


def ref_net(X: np.ndarray, w: np.ndarray) -> tuple[tuple[np.ndarray, ...], np.ndarray]:
    h, d = 8, X.shape[1]
    W, b, v, c = w[: h * d].reshape(h, d), w[h * d: h * d + h], w[h * d + h: h * d + 2 * h], w[-1]
    Z = np.tanh(X @ W.T + b)
    return (W, b, v, Z), Z @ v + c


def ref_gradient(kind: str, X: np.ndarray, y: np.ndarray, w: np.ndarray, N: int) -> np.ndarray:
    """Gradient of (sum over these samples of the loss) / N."""
    if kind == "lsq":
        return X.T @ (X @ w - y) / N
    if kind == "logistic":
        return X.T @ (sigmoid(X @ w) - y) / N
    (W, b, v, Z), z = ref_net(X, w)
    r = (sigmoid(z) - y) / N
    back = (r[:, None] * v[None, :]) * (1 - Z * Z)  # d/d(pre-activation)
    return np.concatenate([(back.T @ X).reshape(-1), back.sum(0), Z.T @ r, [r.sum()]])


def ref_bounds(N: int, k: int) -> np.ndarray:
    return np.rint(np.arange(k + 1) * N / k).astype(int)


def ref_partials(kind: str, X: np.ndarray, y: np.ndarray, w: np.ndarray, k: int) -> np.ndarray:
    b = ref_bounds(len(X), k)
    return np.array([ref_gradient(kind, X[b[j]:b[j + 1]], y[b[j]:b[j + 1]], w, len(X))
                     for j in range(k)])


def ref_pieces(G: np.ndarray, m: int) -> np.ndarray:
    """(m k, ceil(d/m)): row u k + j is piece u of g_j."""
    k, d = G.shape
    width = -(-d // m)
    padded = np.zeros((k, m * width))
    padded[:, :d] = G
    return padded.reshape(k, m, width).transpose(1, 0, 2).reshape(m * k, width)


def target_rows(k: int, m: int) -> np.ndarray:
    return np.kron(np.eye(m), np.ones((1, k)))


def ref_exact(BF: np.ndarray, k: int, m: int) -> bool:
    """T in the row space of B_F (numerical rank of B_F vs [B_F; T])."""
    if len(BF) == 0:
        return False
    T = target_rows(k, m)

    def rank(M: np.ndarray) -> int:
        sv = np.linalg.svd(M, compute_uv=False)
        return int((sv > 1e-9 * max(1.0, sv[0])).sum())
    return rank(np.vstack([BF, T])) == rank(BF)


def ref_residual(BF: np.ndarray, k: int, m: int) -> np.ndarray:
    """R = A B_F - T for the least-squares A (unique)."""
    T = target_rows(k, m)
    A = np.linalg.lstsq(BF.T, T.T, rcond=None)[0].T
    return np.asarray(A @ BF - T)


def ref_decoded(B: np.ndarray, F: list[int], G: np.ndarray, m: int) -> tuple[np.ndarray, bool]:
    """The optimal decoder's gradient from survivors F and whether it is exact."""
    k, d = G.shape
    P = ref_pieces(G, m)
    BF = B[sorted(F)]
    est = (target_rows(k, m) + ref_residual(BF, k, m)) @ P
    return np.asarray(est.real).reshape(-1)[:d], ref_exact(BF, k, m)


def ref_newton_logistic(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    w = np.zeros(X.shape[1])
    for _ in range(100):
        p = sigmoid(X @ w)
        g = X.T @ (p - y) / len(X)
        H = (X * (p * (1 - p))[:, None]).T @ X / len(X)
        w = w - np.linalg.solve(H, g)
        if np.linalg.norm(g) < 1e-14:
            break
    return w


def ref_step(kind: str, X: np.ndarray) -> float:
    L = float(np.linalg.eigvalsh(X.T @ X / len(X)).max())
    return {"lsq": 1.0, "logistic": 4.0, "mlp": 2.0}[kind] / L


# -- the problems and codes -----------------------------------------------------------------------
def data(seed: int, N: int = 240, d: int = 4) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, d)) * np.linspace(1.0, 0.4, d)
    y_lsq = X @ rng.standard_normal(d) + 0.3 * rng.standard_normal(N)
    y_log = (rng.random(N) < sigmoid(X @ rng.standard_normal(d))).astype(float)
    return X, y_lsq, y_log


def problem(kind: str, seed: int = 0) -> Problem:
    """gctool's problem object on the data here (step and loss* from the reference)."""
    X, y_lsq, y_log = data(seed)
    y = y_lsq if kind == "lsq" else y_log
    star = (np.linalg.lstsq(X, y, rcond=None)[0] if kind == "lsq"
            else ref_newton_logistic(X, y))
    model = TwoLayer() if kind == "mlp" else Linear(kind)
    loss_star = ref_loss("lsq" if kind == "lsq" else "logistic", X, y, star)
    return Problem(X, y, ref_step(kind, X), loss_star, model)


CODES = {
    "cyclic": ("cyclic", {"n": 6, "s": 2, "seed": 1}),
    "frc": ("frc", {"n": 6, "s": 1}),
    "comm": ("comm", {"n": 6, "s": 1, "m": 2}),
    "ye-abbe": ("ye-abbe", {"n": 5, "s": 1, "m": 2}),
    "cyclic-mds-complex": ("cyclic-mds", {"n": 5, "s": 2, "field": "complex"}),
    "rs-k7": ("rs", {"n": 5, "k": 7, "s": 2}),
    "graph": ("graph", {"vertices": 6, "s": 2, "seed": 1}),
    "bgc": ("bgc", {"n": 6, "k": 6, "d": 2, "s": 2, "seed": 1}),
    "sbc": ("sbc", {"n": 8, "s": 2, "seed": 1}),
    "fano": ("bibd", {"design": "fano", "s": 2}),
    "is-cr": ("is-cr", {"n": 6, "s": 2}),
    "hetero": ("hetero", {"p": [0.1, 0.3, 0.2, 0.4, 0.1, 0.2], "s": 2, "load": 3}),
}
_BUILT: dict[str, Any] = {}


def code_of(name: str) -> Any:
    if name not in _BUILT:
        scheme, kw = CODES[name]
        _BUILT[name] = gctool.design(scheme, **kw)
    return _BUILT[name]


def messages(scheme: Any, prob: Problem, w: np.ndarray) -> np.ndarray:
    """Every logical worker's message as the resident task computes it."""
    bounds = partition_data(prob.X, prob.y, [scheme])
    rows = {scheme.layout: scheme.rows(len(w))}
    held = group_data(prob.X, prob.y, bounds, rows, list(range(scheme.n)))
    return np.array([message(r, prob.model, held, prob.N, w) for r in rows[scheme.layout]])


def start_point(kind: str, seed: int, d: int) -> np.ndarray:
    size = 8 * (d + 2) + 1 if kind == "mlp" else d
    return 0.5 * np.random.default_rng(seed).standard_normal(size)


# -- decoding: every subset of workers, every code -------------------------------------------------
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(sorted(CODES)), kind=st.sampled_from(["lsq", "logistic", "mlp"]),
       seed=st.integers(0, 2**16), data_=st.data())
def test_decoded_gradient_is_the_reference_s_for_every_arrival_set(name: str, kind: str,
                                                                  seed: int, data_: Any) -> None:
    """Any non-empty set of arrived workers, in any arrival order: the master stops exactly when
    the reference says it may (exact decodability or n - s arrivals), and the gradient it
    decodes is the reference's optimal decoding (the full gradient when exact) to 1e-11 of
    sum_j ||g_j||, with the exact flag and the workers used right."""
    code = code_of(name)
    prob = problem(kind, seed % 3)
    w = start_point(kind, seed, prob.X.shape[1])
    scheme = Coded(code, name, 0)
    B, n, k, m = np.asarray(code.B), code.n, code.k, code.m
    G = ref_partials(kind, prob.X, prob.y, w, k)
    np.testing.assert_array_equal(partition_data(prob.X, prob.y, [scheme])[scheme.layout],
                                  ref_bounds(prob.N, k))
    msgs = messages(scheme, prob, w)
    order = data_.draw(st.permutations(range(n)))
    F = list(order[: data_.draw(st.integers(1, n))])
    want, exact = ref_decoded(B, F, G, m)
    scale = np.linalg.norm(G, axis=1).sum()
    assert scheme.done(F) == (exact or len(F) >= n - code.s), (name, F)
    got, got_exact, used = scheme.combine(F, msgs[F], len(w))
    assert used == sorted(F) and got_exact == exact, (name, F, exact)
    assert np.linalg.norm(got - want) <= 1e-11 * scale, (name, F, np.linalg.norm(got - want))
    if exact:
        assert np.linalg.norm(got - G.sum(0)) <= 1e-11 * scale


@pytest.mark.parametrize("name", ["graph", "bgc", "sbc", "fano"])
def test_approximate_codes_decode_with_the_error_the_audit_reports(name: str) -> None:
    """For an approximate code: the reference's worst squared decoding error over the s-sets
    is ``gctool attack``'s, and on the attack's straggler set the master's decoded gradient
    differs from the full gradient by exactly R P with ||R||^2 that error."""
    code = code_of(name)
    B, n, k, m, s = np.asarray(code.B), code.n, code.k, code.m, code.s
    errs = {S: float(np.sum(np.abs(ref_residual(B[[i for i in range(n) if i not in S]], k,
                                                    m)) ** 2))
            for S in combinations(range(n), s)}
    worst = max(errs.values())
    report = gctool.attack(code, s=s)
    assert report.error == pytest.approx(worst, rel=1e-9, abs=1e-12)
    S = tuple(report.stragglers)
    assert errs[S] == pytest.approx(worst, rel=1e-9)
    prob = problem("logistic", 1)
    w = start_point("logistic", 4, prob.X.shape[1])
    scheme = Coded(code, name, 0)
    F = [i for i in range(n) if i not in S]
    got, exact, _ = scheme.combine(F, messages(scheme, prob, w)[F], len(w))
    G = ref_partials("logistic", prob.X, prob.y, w, k)
    R = ref_residual(B[F], k, m)
    assert not exact and worst > 1e-6
    np.testing.assert_allclose(got - G.sum(0), (R @ ref_pieces(G, m)).real.reshape(-1)[:len(w)],
                               rtol=0, atol=1e-12 * np.linalg.norm(G, axis=1).sum())


# -- the master's loop against resident tasks run as threads ---------------------------------------
class _Done:
    """What :class:`Placement` asks of a resident task's future."""

    status = "pending"


class Threads:
    """The resident tasks of ``groups`` as threads of this process (``serve_fn``: the task),
    restarted as new threads when the master asks (Dask's job on a real cluster)."""

    def __init__(self, groups: list[list[int]], schemes: list[Any], prob: Problem,
                 serve_fn: Any = serve) -> None:
        self.hub = Hub("127.0.0.1")
        bounds = partition_data(prob.X, prob.y, schemes)
        d = prob.model.size(prob.X.shape[1])
        rows = {s.layout: s.rows(d) for s in schemes}
        self.threads: list[threading.Thread] = []

        def submit(g: int, _where: str | None) -> _Done:
            t = threading.Thread(target=serve_fn, daemon=True, args=(
                self.hub.address, self.hub.authkey, g, prob.model, prob.N,
                group_data(prob.X, prob.y, bounds, rows, groups[g])))
            t.start()
            self.threads.append(t)
            return _Done()

        self.placement = Placement(groups, ["thread"] * len(groups), submit=submit,
                                   client=None)
        self.placement.futures = [submit(g, None) for g in range(len(groups))]

    def master(self, wait: float = 10.0) -> Master:
        master = Master(self.hub, self.placement, wait)
        master.connect(10)
        return master

    def close(self) -> None:
        self.hub.close()
        for t in self.threads:
            t.join(timeout=10)
            assert not t.is_alive()


#: a straggler's injected delay: far beyond a round (the master never waits for it)
LATE = 3.0


def delays_for(patterns: list[tuple[int, ...]], rounds: int, n: int, seed: int) -> np.ndarray:
    """Round r: the workers of patterns[r % len] straggle; the others arrive within 2 ms in a
    random order."""
    out = np.random.default_rng(seed).uniform(0, 0.002, (rounds, n))
    for r in range(rounds):
        out[r, list(patterns[r % len(patterns)])] = LATE
    return out


def report_problem(prob: Problem, w0: np.ndarray, kind: str, gap: float) -> Any:
    from gctool.trainer.report import Problem as Info

    start = ref_loss(kind, prob.X, prob.y, w0)
    return Info(kind, None, prob.N, prob.X.shape[1], len(w0), prob.eta, prob.loss_star, start,
                gap, prob.loss_star + gap * (start - prob.loss_star))


def ref_run(kind: str, prob: Problem, w0: np.ndarray, rounds: int, estimate: Any,
            target: float | None) -> dict[str, list[Any]]:
    """The reference trajectory: ``estimate(r, w)`` -> (g_hat, full gradient, sum_j ||g_j||);
    stops after the first round whose loss is at most ``target``."""
    w = w0.copy()
    out: dict[str, list[Any]] = {"loss": [], "error": [], "error_full": []}
    for r in range(rounds):
        g_hat, full, scale = estimate(r, w)
        out["error"].append(float(np.linalg.norm(g_hat - full) / scale))
        norm = float(np.linalg.norm(full))  # meaningful when not a cancellation (docs)
        out["error_full"].append(float(np.linalg.norm(g_hat - full)) / norm
                                 if norm >= 1e-3 * scale else None)
        w = w - prob.eta * g_hat
        out["loss"].append(ref_loss(kind, prob.X, prob.y, w))
        if target is not None and out["loss"][-1] <= target:
            break
    return out


def coded_estimate(code: Any, kind: str, prob: Problem, used: list[list[int]]) -> Any:
    B, k, m = np.asarray(code.B), code.k, code.m

    def estimate(r: int, w: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
        G = ref_partials(kind, prob.X, prob.y, w, k)
        return ref_decoded(B, used[r], G, m)[0], G.sum(0), float(np.linalg.norm(G, axis=1).sum())
    return estimate


def check_against_reference(log: Any, ref: dict[str, list[Any]], info: Any, scheme: Any
                            ) -> None:
    """The log's losses and check errors, and the report's row, are the reference's."""
    R = len(ref["loss"])
    assert log.rounds == R and len(log.loss) == R
    np.testing.assert_allclose(log.loss, ref["loss"], rtol=1e-10, atol=0)
    for got, want in zip(log.error_partials, ref["error"], strict=True):
        assert abs(got - want) <= 1e-12 + 1e-7 * want, (got, want)
    row = report_row(scheme, log, info, None, None)
    reached = next((r + 1 for r, x in enumerate(ref["loss"]) if x <= info.target), None)
    assert row.rounds == R and row.rounds_to_target == reached
    assert row.reached == (reached is not None)
    assert row.time_to_target == (log.end[reached - 1] if reached else None)
    assert row.wait_p50 == pytest.approx(np.median(np.subtract(log.decodable, log.start[:R])))
    assert row.final_loss == pytest.approx(ref["loss"][-1], rel=1e-10)
    assert row.exact_fraction == pytest.approx(np.mean(log.exact))
    assert row.workers_used_mean == pytest.approx(np.mean([len(u) for u in log.used]))
    assert row.check is not None and row.check.rounds == R
    assert row.check.max_relative_to_partials == pytest.approx(max(ref["error"]), rel=1e-7,
                                                                 abs=1e-12)
    assert row.check.failed_rounds == []
    full = [e for e in ref["error_full"] if e is not None]
    assert row.check.rounds_relative_to_full == len(full)
    if full:
        assert row.check.max_relative_to_full == pytest.approx(max(full), rel=1e-6, abs=1e-11)
    np.testing.assert_allclose(np.array(row.curve["loss_gap"]) + prob_star(info),
                               ref["loss"], rtol=1e-10)


def prob_star(info: Any) -> float:
    return float(info.loss_star)


@pytest.mark.parametrize("name,kind,patterns", [
    ("graph", "logistic", [(0, 1), (2, 5), (3, 4), (0, 3)]),  # approximate: biased steps
    ("fano", "lsq", [(0, 1), (2, 6), (4, 5)]),
    ("frc", "mlp", [(0, 2, 4), (1, 3, 5), (1, 2, 5)]),  # 3 > s = 1 stragglers that decode
    ("comm", "lsq", [(1,), (4,), ()]),
    ("cyclic-mds-complex", "logistic", [(0, 3), (1, 2)]),
])
def test_the_master_s_trajectory_is_the_reference_s(name: str, kind: str,
                                                    patterns: list[tuple[int, ...]]) -> None:
    """Deterministic straggler sets per round: the master uses exactly the survivors (a subset
    of them when it decodes exactly), never a straggler; its losses after every step, its check
    errors and the report's row are the reference trajectory's, up to the target."""
    code = code_of(name)
    n = code.n
    prob = problem(kind, 2)
    scheme = Coded(code, name, 0)
    w0 = start_point(kind, 7, prob.X.shape[1])
    rounds = 12
    gap = 0.01
    info = report_problem(prob, w0, kind, gap)
    delays = delays_for(patterns, rounds, n, 3)
    cluster = Threads([[0, 1, 2], list(range(3, n))], [scheme], prob)
    try:
        log = cluster.master().run(scheme, prob, w0, delays, rounds, info.target, check=True)
    finally:
        cluster.close()
    B, k, m = np.asarray(code.B), code.k, code.m
    for r, used in enumerate(log.used):
        F = [i for i in range(n) if i not in patterns[r % len(patterns)]]
        if ref_exact(B[F], k, m):  # it may stop at a decoding subset of the survivors
            assert set(used) <= set(F) and ref_exact(B[used], k, m), (r, used)
            assert log.exact[r]
        else:
            assert used == F and not log.exact[r], (r, used)
    ref = ref_run(kind, prob, w0, rounds, coded_estimate(code, kind, prob, log.used),
                  info.target)
    check_against_reference(log, ref, info, scheme)
    assert any(not e for e in log.exact) == (name in ("graph", "fano"))


def plain_estimate(kind: str, prob: Problem, n: int, used: list[list[int]], rescale: float
                   ) -> Any:
    def estimate(r: int, w: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
        G = ref_partials(kind, prob.X, prob.y, w, n)
        return (G[used[r]].sum(0) * rescale, G.sum(0),
                float(np.linalg.norm(G, axis=1).sum()))
    return estimate


def test_the_baselines_trajectories_are_the_reference_s() -> None:
    """Uncoded sums all n partitions (exact gradient descent); ignore-stragglers sums the
    first n - s arrivals (never a straggler) times n/(n - s)."""
    n, s, kind = 6, 2, "lsq"
    prob = problem(kind, 1)
    w0 = start_point(kind, 2, prob.X.shape[1])
    unc, ign = Uncoded(n), IgnoreStragglers(n, s)
    patterns = [(0, 5), (2, 3), (1, 4)]
    cluster = Threads([[0, 1, 2], [3, 4, 5]], [unc, ign], prob)
    try:
        master = cluster.master()
        logs = [master.run(unc, prob, w0, delays_for([()], 6, n, 1), 6, None, check=True),
                master.run(ign, prob, w0, delays_for(patterns, 6, n, 2), 6, None, check=True)]
    finally:
        cluster.close()
    info = report_problem(prob, w0, kind, 1e-3)
    for scheme, log, rescale in ((unc, logs[0], 1.0), (ign, logs[1], n / (n - s))):
        if scheme is ign:
            assert log.used == [[i for i in range(n) if i not in patterns[r % 3]]
                                for r in range(6)]
            assert not any(log.exact)
        else:
            assert log.used == [list(range(n))] * 6 and all(log.exact)
        ref = ref_run(kind, prob, w0, 6, plain_estimate(kind, prob, n, log.used, rescale), None)
        check_against_reference(log, ref, info, scheme)


class StaleGroup(_Group):
    """A resident task's state that, before every round's true messages, sends wrong ones a
    master must never use: the previous round's, the previous run's, and one for a worker
    that does not exist (garbage values, half of them in a batch)."""

    def start(self, r: int, w: np.ndarray) -> None:
        junk = [("msg", self.run, r - 1, row.worker, np.full(row.width, 1e6), 0.0)
                for row in self.rows]
        junk += [("msg", self.run - 1, r, row.worker, np.full(row.width, -1e6), 0.0)
                 for row in self.rows]
        junk.append(("msg", self.run, r, 10**6, np.zeros(1), 0.0))
        self.conn.send(("batch", junk[: len(junk) // 2]))
        for item in junk[len(junk) // 2:]:
            self.conn.send(item)
        super().start(r, w)


def stale_serve(address: Any, authkey: bytes, group: int, model: Any, samples: int,
                held: Any) -> None:
    """:func:`gctool.trainer.worker.serve`'s loop with a :class:`StaleGroup`."""
    import os
    from multiprocessing.connection import Client

    conn = Client(address, authkey=authkey)
    conn.send(("hello", group, os.getpid()))
    state = StaleGroup(conn, model, samples, held)
    try:
        while True:
            if conn.poll(state.timeout()) and not state.handle(conn.recv()):
                break
            state.flush()
    except (OSError, EOFError):
        pass
    finally:
        conn.close()


def test_stale_and_foreign_messages_are_never_used() -> None:
    """Resident tasks that also send last round's, last run's and nobody's messages (with
    garbage values) before the true ones: the trajectory is still the reference's, for an
    approximate code with stragglers and for exact gradient descent, in two runs in a row."""
    code, kind = code_of("graph"), "logistic"
    prob = problem(kind, 0)
    w0 = start_point(kind, 5, prob.X.shape[1])
    scheme = Coded(code, "graph", 0)
    patterns = [(0, 1), (2, 5), ()]
    cluster = Threads([[0, 1], [2, 3], [4, 5]], [scheme], prob, serve_fn=stale_serve)
    try:
        master = cluster.master()
        logs = [master.run(scheme, prob, w0, delays_for(p, 8, 6, 4), 8, None, check=True)
                for p in (patterns, [()])]
    finally:
        cluster.close()
    info = report_problem(prob, w0, kind, 1e-3)
    for log in logs:
        ref = ref_run(kind, prob, w0, 8, coded_estimate(code, kind, prob, log.used), None)
        check_against_reference(log, ref, info, scheme)
    assert [len(u) for u in logs[0].used[:2]] == [4, 4] and not logs[0].exact[0]


def test_closing_the_hub_never_waits_for_an_accepting_thread_that_already_returned() -> None:
    """The accepting thread checks the closing flag between connections; when ``close`` sets
    it just after a group connected (a run that ends right after a group rejoined, Ctrl-C
    during the connect), the thread returns without accepting again.  ``close`` must not then
    wait forever on a connection nobody answers (it used to: a handshake with no one)."""
    hub = Hub("127.0.0.1")
    hub._closing = True  # the race, made certain: the thread sees the flag after a connection
    from multiprocessing.connection import Client

    Client(hub.address, authkey=hub.authkey).close()
    hub._thread.join(timeout=10)
    assert not hub._thread.is_alive()
    hub._closing = False
    closer = threading.Thread(target=hub.close, daemon=True)
    closer.start()
    closer.join(timeout=20)  # a bound for a hang, not a speed figure: it returns at once
    assert not closer.is_alive(), "Hub.close() hangs"


# -- a real Dask LocalCluster against the reference and against the threads ------------------------
def test_a_dask_run_is_the_reference_s_and_the_threads_run_s(tmp_path: Any) -> None:
    """``gctool train`` on a LocalCluster (one worker process: a second would only add its
    start-up, the groups' traffic is the same; 127.0.0.1) with an approximate code whose
    workers 0 and 1 always straggle (bernoulli with p = 1, 1, 0, ...; 1000 times slower): every
    round decodes from workers 2-5, not exactly.  The reported step, loss*, start and target,
    the loss after every round, the rounds to the target, the exit status, the check error and
    the recorded trace's workers are the reference's; the same seed run in this process's
    threads injects the same delays and follows the same trajectory."""
    import json

    from gctool.sim.delays import parse_delay
    from gctool.trainer.run import _delays
    from gctool.trainer.schemes import schemes_for
    from gctool.trainer.workload import make

    from helpers import run

    kind, seed, rounds, T = "logistic", 11, 10, 0.003
    X, _, y = data(5, N=300, d=3)
    np.savez(tmp_path / "d.npz", X=X, y=y)
    code = code_of("graph")
    gctool.write_code(code, str(tmp_path / "g.json"))
    spec = "bernoulli:slow=1000,shift=1,rate=1000"
    result = run("train", str(tmp_path / "g.json"), "--data", str(tmp_path / "d.npz"),
                 "--problem", kind, "--delay", spec, "--worker-p", "1,1,0,0,0,0",
                 "--time-scale", str(T), "--jobs", "1", "--check", "--seed", str(seed),
                 "--iterations", str(rounds), "--target-gap", "0.2", "--no-baselines",
                 "--overhead-rounds", "0", "--record", str(tmp_path / "run.csv"), "--json")
    doc = json.loads(result.stdout)
    info, coded = doc["problem"], doc["rows"][0]
    # the problem: the reference's step, loss*, start (the seed's first normals) and target
    w0 = np.random.default_rng(seed).standard_normal(X.shape[1])
    star = ref_loss(kind, X, y, ref_newton_logistic(X, y))
    assert info["step"] == pytest.approx(ref_step(kind, X), rel=1e-12)
    assert info["loss_star"] == pytest.approx(star, rel=1e-9)
    assert info["initial_loss"] == pytest.approx(ref_loss(kind, X, y, w0), rel=1e-12)
    assert info["target"] == pytest.approx(star + 0.2 * (info["initial_loss"] - star), rel=1e-9)
    # the recorded trace: workers 2-5 arrived every round, 0 and 1 never
    lines = (tmp_path / "run.csv").read_text().splitlines()[1:]
    status = {(int(r), int(i)): st for r, i, _, _, st, *_ in (ln.split(",") for ln in lines)}
    R = coded["rounds"]
    assert all(status[(r, i)] == ("arrived" if i >= 2 else "projected")
               for r in range(R) for i in range(6))
    used = [[2, 3, 4, 5]] * R
    prob = Problem(X, y, ref_step(kind, X), star, Linear(kind))
    ref = ref_run(kind, prob, w0, rounds, coded_estimate(code, kind, prob, used), info["target"])
    assert R == len(ref["loss"])
    np.testing.assert_allclose(np.array(coded["curve"]["loss_gap"]) + info["loss_star"],
                               ref["loss"], rtol=1e-10)
    reached = next((r + 1 for r, x in enumerate(ref["loss"]) if x <= info["target"]), None)
    assert coded["rounds_to_target"] == reached and result.exit_code == (0 if reached else 1)
    assert coded["exact_fraction"] == 0 and coded["workers_used_mean"] == 4
    assert coded["check"]["max_relative_to_partials"] == pytest.approx(max(ref["error"]),
                                                                        rel=1e-7)
    # the same seed in this process: the same injected delays, the same trajectory
    delay = parse_delay(spec).with_worker_p([1, 1, 0, 0, 0, 0])
    again, w_again = make(kind, tmp_path / "d.npz", np.random.default_rng(seed), code.k)
    np.testing.assert_array_equal(w_again, w0)
    scheme = schemes_for([("g", code)], False)[0]
    injected = _delays(delay, [scheme], rounds, seed, T)[0][0]
    recorded = np.array([[float(ln.split(",")[5]) for ln in lines[r * 6:(r + 1) * 6]]
                         for r in range(R)])
    np.testing.assert_allclose(recorded, injected[:R], rtol=0, atol=1e-9)
    cluster = Threads([[0, 1, 2], [3, 4, 5]], [scheme], again)
    try:
        log = cluster.master().run(scheme, again, w0, injected, rounds, info["target"], True)
    finally:
        cluster.close()
    assert log.used == used
    np.testing.assert_allclose(log.loss, np.array(coded["curve"]["loss_gap"]) + info["loss_star"],
                               rtol=1e-13)


# -- what is injected, and a group that dies and comes back ----------------------------------------
def test_injected_delays_follow_each_worker_s_load_with_common_random_numbers() -> None:
    """Worker i of a code computes |supp(b_i)|/k of the data (over all m pieces), a baseline
    worker 1/n: with a (nearly) deterministic shifted exponential the injected seconds are
    time_scale x load; with the default one, worker i's draw per unit of load is the same in
    every scheme of the run (common random numbers), and the report row's load is the
    largest worker load."""
    from gctool.sim.delays import parse_delay
    from gctool.trainer.run import _delays
    from gctool.trainer.schemes import schemes_for

    for name in ("rs-k7", "comm", "bgc", "sbc", "fano"):
        code = code_of(name)
        schemes = schemes_for([(name, code)], True)
        B = np.abs(np.asarray(code.B)).reshape(code.n, code.m, code.k)
        loads = [(B > 0).any(axis=1).sum(axis=1) / code.k] + \
            [np.full(s.n, 1 / s.n) for s in schemes[1:]]
        assert [s.name for s in schemes[1:]] == ["uncoded", f"ignore-stragglers s={code.s}"]
        flat, _ = _delays(parse_delay("shifted-exp:shift=1,rate=1e12"), schemes, 3, 1, 0.25)
        for got, load in zip(flat, loads, strict=True):
            np.testing.assert_allclose(got, np.tile(0.25 * load, (3, 1)), rtol=1e-9)
        assert schemes[0].contender.load == pytest.approx(loads[0].max())
        drawn, _ = _delays(parse_delay("shifted-exp"), schemes, 3, 1, 1.0)
        busy = loads[0] > 0  # sbc has a worker with nothing to compute: it takes no time
        assert (drawn[0][:, ~busy] == 0).all()
        for got, load in zip(drawn[1:], loads[1:], strict=True):
            np.testing.assert_allclose((got / load)[:, busy],
                                       drawn[0][:, busy] / loads[0][busy], rtol=1e-12)


def test_a_group_that_dies_mid_run_is_a_straggler_until_it_rejoins_with_fresh_results() -> None:
    """Group 0 (workers 0 and 1 of an approximate code, s = 2) stops after 3 rounds; the master
    restarts it (here: a new thread, Dask's job on a cluster), it connects again and is sent the
    current run and round.  Every round still decodes from messages computed at that round's
    parameters: the trajectory is the reference's for the sets the master used, the lost
    rounds use workers 2-5 only, and workers 0 and 1 are used again after they rejoin."""
    code, kind = code_of("graph"), "lsq"
    prob = problem(kind, 3)
    w0 = start_point(kind, 1, prob.X.shape[1])
    scheme = Coded(code, "graph", 0)
    rounds = 14
    cluster = Threads([[0, 1], [2, 3], [4, 5]], [scheme], prob)
    ticks = {"n": 0}

    def tick() -> None:
        ticks["n"] += 1
        if ticks["n"] == 3:
            cluster.hub.send(0, ("stop",))

    delays = delays_for([()], rounds, 6, 8) + 0.05  # rounds long enough for it to rejoin
    try:
        master = cluster.master()
        master.tick = tick
        log = master.run(scheme, prob, w0, delays, rounds, None, check=True)
    finally:
        cluster.close()
    events = [(e["event"], e["workers"]) for e in log.events]
    assert events[:2] == [("lost", [0, 1]), ("joined", [0, 1])], log.events
    back_round = log.events[1]["round"]
    assert 3 <= log.events[0]["round"] <= back_round
    assert all(u == [2, 3, 4, 5] for u in log.used[3:back_round])  # stopped before round 3
    assert any({0, 1} <= set(u) for u in log.used[back_round + 1:])
    info = report_problem(prob, w0, kind, 1e-3)
    ref = ref_run(kind, prob, w0, rounds, coded_estimate(code, kind, prob, log.used), None)
    check_against_reference(log, ref, info, scheme)
    assert len(cluster.threads) == 4  # the three groups and the restarted one


def test_two_code_files_and_their_baselines_share_the_groups() -> None:
    """Two code files of different n (6 and 4) and their four baselines on one set of groups
    (sized for n = 6: the n = 4 schemes use part of them, each scheme its own partitioning of
    the data): every scheme's trajectory is the reference's for its own partitions."""
    from gctool.trainer.schemes import schemes_for

    kind = "logistic"
    prob = problem(kind, 4)
    w0 = start_point(kind, 3, prob.X.shape[1])
    codes = [("g6", code_of("graph")), ("c4", gctool.design("cyclic", n=4, s=1, seed=2))]
    schemes = schemes_for(codes, True)
    assert [s.name for s in schemes] == ["g6", "c4", "uncoded", "ignore-stragglers s=2",
                                         "uncoded", "ignore-stragglers s=1"]
    patterns = {"g6": [(1, 4), (0, 5)], "c4": [(3,), (0,)], "ignore-stragglers s=2": [(2, 3)],
                "ignore-stragglers s=1": [(1,)]}
    cluster = Threads([[0, 1, 2], [3, 4, 5]], schemes, prob)
    try:
        master = cluster.master()
        logs = [master.run(s, prob, w0, delays_for(patterns.get(s.name, [()]), 5, s.n, i), 5,
                           None, check=True) for i, s in enumerate(schemes)]
    finally:
        cluster.close()
    info = report_problem(prob, w0, kind, 1e-3)
    for scheme, log in zip(schemes, logs, strict=True):
        survivors = [[i for i in range(scheme.n) if i not in patterns.get(scheme.name, [()])[
            r % len(patterns.get(scheme.name, [()]))]] for r in range(5)]
        if isinstance(scheme, Coded):
            estimate = coded_estimate(scheme.code, kind, prob, log.used)
            assert all(set(u) <= set(F) for u, F in zip(log.used, survivors, strict=True))
        else:
            assert log.used == survivors
            estimate = plain_estimate(kind, prob, scheme.n, log.used, scheme.n / len(
                survivors[0]))
        ref = ref_run(kind, prob, w0, 5, estimate, None)
        check_against_reference(log, ref, info, scheme)


def test_every_message_arrives_after_its_own_worker_s_injected_delay() -> None:
    """Each logical worker sleeps its own injected delay (the column of its worker, whatever
    its group and whatever the scheme's n): with delays 0, 12, 24, ... ms permuted every
    round, no message reaches the master before its worker's delay has passed since the
    round's dispatch (a causal bound, not a speed figure), and the trajectories are the
    reference's for the sets used."""
    kind = "lsq"
    prob = problem(kind, 5)
    w0 = start_point(kind, 6, prob.X.shape[1])
    schemes = [Coded(gctool.design("cyclic", n=4, s=1, seed=3), "c4", 0),
               Coded(code_of("cyclic"), "c6", 1)]
    rng = np.random.default_rng(9)
    cluster = Threads([[0, 1, 2], [3, 4, 5]], schemes, prob)
    runs = []
    try:
        master = cluster.master()
        for scheme in schemes:
            delays = np.array([rng.permutation(scheme.n) * 0.012 for _ in range(5)])
            runs.append((scheme, delays, master.run(scheme, prob, w0, delays, 5, None, True)))
    finally:
        cluster.close()
    info = report_problem(prob, w0, kind, 1e-3)
    for scheme, delays, log in runs:
        arrival = np.array(log.arrival)
        got = ~np.isnan(arrival)
        assert (arrival[got] >= delays[got]).all()
        assert all(sorted(np.flatnonzero(got[r]).tolist()) == log.used[r] for r in range(5))
        ref = ref_run(kind, prob, w0, 5, coded_estimate(scheme.code, kind, prob, log.used),
                      None)
        check_against_reference(log, ref, info, scheme)
