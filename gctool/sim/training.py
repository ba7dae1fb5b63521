"""``gctool simulate --train``: real gradient descent in numpy, driven by each scheme's actual
decoding and schedule, timed by the simulated rounds.

Problem (gctool's choice): N = 1200 samples, d = 12 features whose singular values are spread so
that the Hessian's condition number is 20; least squares (``lsq``, y = X β* + N(0, 0.5²)) or
logistic regression (``logistic``, y ~ Bernoulli(σ(X β*))).  Loss = mean loss over samples;
step 1/L (L the smoothness constant); the target loss is ``loss* + gap (loss(β0) - loss*)``
with loss* from the closed form (lsq) or L-BFGS (logistic).

Jobs and models: following the sequential-coding paper's experiments, M = 1 + (largest delay T
among the schemes) models are trained concurrently, job t being one gradient step of model
t mod M; a job is applied when the scheme decodes it (round t + T).  So no scheme ever uses a
stale gradient and every scheme runs the same job sequence.  The time to target is the time
at which every model has reached the target loss.

Gradients are what the master really gets: the data is cut into the scheme's partitions,
workers send their coded combinations, and the master decodes them with the scheme's decoder
(exact, or the optimal least-squares decoder when an approximate code stops at n - s workers;
ignore-stragglers rescales the sum of the fastest n - s partial gradients by n / (n - s)).

Sparsified messages (``--sparsify``, :mod:`gctool.sim.sparsify`): every message a worker
uploads is replaced by an unbiased sparse version (Wangni et al.'s probabilities, or random-k)
before the master decodes it; ``coordinates`` counts the coordinates actually uploaded (dense
messages count all of theirs), so it can be compared across schemes and sparsifiers.

Lazy uploads (``--lazy XI``, LAG-WK with one past difference, Chen et al. 2018): a worker that
the master waited for skips its upload when ``||m_i - m̂_i||² <= XI / n² · ||ĝ_prev||²``, where
m_i is its new message, m̂_i the last message it uploaded for this model and ĝ_prev the model's
previous gradient estimate (so the right side is XI ||β^k - β^(k-1)||² / (η n)²); the master
reuses m̂_i.  Applied to uncoded messages this is LAG, to coded messages LAGC, to an FRC code
(groups) G-LAG.  Sequential schemes are not made lazy.  Communication counts uploaded vectors
in units of one gradient (an m-piece code sends 1/m; an M-SGC worker uploads one vector per
mini-task slot of a round).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from gctool.errors import InvalidInput
from gctool.sim.contenders import Contender, Run, traits

PROBLEMS = ("lsq", "logistic")
#: a run whose loss exceeds this multiple of its starting loss is stopped and marked diverged
DIVERGED = 1e6
N_SAMPLES, N_FEATURES, CONDITION = 1200, 12, 20.0


@dataclass
class Problem:
    kind: str
    X: np.ndarray
    y: np.ndarray
    eta: float
    loss_star: float

    @property
    def N(self) -> int:
        return int(self.X.shape[0])

    def residual(self, beta: np.ndarray) -> np.ndarray:
        z = self.X @ beta
        if self.kind == "lsq":
            return z - self.y
        return 1.0 / (1.0 + np.exp(-z)) - self.y

    def loss(self, beta: np.ndarray) -> float:
        z = self.X @ beta
        if self.kind == "lsq":
            return float(0.5 * np.mean((z - self.y) ** 2))
        return float(np.mean(np.logaddexp(0.0, z) - self.y * z))

    def partial_gradients(self, beta: np.ndarray, bounds: np.ndarray) -> np.ndarray:
        """(K, d): gradient of the mean loss restricted to each contiguous partition."""
        rows = self.X * self.residual(beta)[:, None] / self.N
        C = np.vstack([np.zeros((1, rows.shape[1])), np.cumsum(rows, axis=0)])
        return np.asarray(C[bounds[1:]] - C[bounds[:-1]])


def make_problem(kind: str, rng: np.random.Generator) -> Problem:
    """The synthetic problem of ``kind`` (see the module docs) drawn from ``rng``."""
    if kind not in PROBLEMS:
        raise InvalidInput(f"--problem must be one of {', '.join(PROBLEMS)}")
    Z = rng.standard_normal((N_SAMPLES, N_FEATURES))
    U, _, Vt = np.linalg.svd(Z, full_matrices=False)
    sv = np.sqrt(N_SAMPLES) * np.geomspace(1.0, 1.0 / np.sqrt(CONDITION), N_FEATURES)
    X = (U * sv) @ Vt
    beta_star = rng.standard_normal(N_FEATURES)
    if kind == "lsq":
        y = X @ beta_star + 0.5 * rng.standard_normal(N_SAMPLES)
    else:
        y = (rng.random(N_SAMPLES) < 1.0 / (1.0 + np.exp(-X @ beta_star))).astype(np.float64)
    return problem_for(kind, X, y)


def problem_for(kind: str, X: np.ndarray, y: np.ndarray) -> Problem:
    """The problem of ``kind`` on the data (X, y): step 1/L for least squares and 4/L for
    logistic regression (L the largest eigenvalue of X^T X / N), loss* from the closed form
    (lsq) or L-BFGS (logistic)."""
    if kind not in PROBLEMS:
        raise InvalidInput(f"--problem must be one of {', '.join(PROBLEMS)}")
    L = float(np.linalg.eigvalsh(X.T @ X / len(X)).max())
    if kind == "lsq":
        p = Problem(kind, X, y, 1.0 / L, 0.0)
        opt = np.linalg.lstsq(X, y, rcond=None)[0]
    else:
        p = Problem(kind, X, y, 4.0 / L, 0.0)
        opt = _logistic_optimum(p)
    p.loss_star = p.loss(opt)
    return p


def _logistic_optimum(p: Problem) -> np.ndarray:
    from scipy.optimize import minimize

    res = minimize(p.loss, np.zeros(p.X.shape[1]), method="L-BFGS-B",
                   jac=lambda b: p.X.T @ p.residual(b) / p.N, options={"gtol": 1e-12})
    return np.asarray(res.x)


def bounds_for(N: int, sizes: np.ndarray) -> np.ndarray:
    """Contiguous partition boundaries for the given fractions (rounded, may be empty)."""
    edges = np.rint(np.concatenate([[0.0], np.cumsum(sizes)]) / sizes.sum() * N)
    return edges.astype(np.int64)


#: contenders without a code: every worker holds one partition (ring all-reduce sums them all)
UNCODED = ("uncoded", "ignore", "ring")


class Estimator:
    """Gradient estimates of one contender, with lazy uploads when asked."""

    def __init__(self, c: Contender, problem: Problem, lazy: float | None,
                 sparsifier: Any = None, seed: int = 0) -> None:
        self.c, self.p, self.lazy = c, problem, lazy
        self.sparsifier = sparsifier  # gctool.sim.sparsify.Sparsifier or None
        self.rng = np.random.default_rng(seed)
        self.coordinates = 0  # coordinates of the uploaded messages
        self.decoders: dict[Any, Any] = {}
        self.uploads = self.skipped = 0.0
        self.stale: dict[int, np.ndarray] = {}
        code = c.code
        if code is not None and code.field.is_finite:
            raise InvalidInput(f"{c.name}: training needs a real or complex code, not {code.field}")
        if c.kind in UNCODED:  # every worker sends its own partition's gradient
            self.B, self.m, self.k = np.eye(c.n), 1, c.n
            self.bounds = bounds_for(problem.N, np.ones(c.n))
        elif c.kind == "sgc" and code is not None and traits(code).multiplexed:
            self._msgc_layout()
        else:
            assert code is not None
            self.B, self.m, self.k = np.asarray(code.B), code.m, code.k
            self.bounds = bounds_for(problem.N, np.ones(code.k))

    def _msgc_layout(self) -> None:
        code = self.c.code
        assert code is not None
        n, W, B = code.n, int(code.params["window"]), int(code.params["burst"])
        alpha = float(code.params["decoding"]["d1_fraction"])
        groups = B if code.params["lambda"] < n else 0
        sizes = [alpha / (n * (W - 1))] * (n * (W - 1))
        sizes += [(1 - alpha) / (groups * n)] * (groups * n) if groups else []
        self.d1_parts, self.groups = n * (W - 1), groups
        self.B, self.m, self.k = np.asarray(code.B), 1, len(sizes)
        self.bounds = bounds_for(self.p.N, np.array(sizes))

    # -- decoding ------------------------------------------------------------------------------
    def _decode(self, F: np.ndarray) -> np.ndarray:
        key = tuple(int(i) for i in F)
        a = self.decoders.get(key)
        if a is None:
            from gctool.decode import Decoder

            assert self.c.code is not None
            if "_dec" not in self.decoders:
                self.decoders["_dec"] = Decoder(self.c.code)
            a = self.decoders["_dec"].decode(list(key)).a  # (m, |F|)
            self.decoders[key] = a
        return np.asarray(a)

    def _pieces(self, G: np.ndarray) -> np.ndarray:
        """(k, d) partition gradients -> (k*m, d/m) piece rows (piece-major), zero-padded."""
        if self.m == 1:
            return G
        d = G.shape[1]
        width = -(-d // self.m)
        padded = np.zeros((G.shape[0], width * self.m))
        padded[:, :d] = G
        return np.concatenate([padded[:, u * width:(u + 1) * width] for u in range(self.m)])

    def round_gradient(self, model: int, beta: np.ndarray, used: np.ndarray, exact: bool,
                       prev: np.ndarray | None) -> np.ndarray:
        """Estimate for a single-round scheme from the workers the master used."""
        G = self.p.partial_gradients(beta, self.bounds)
        msgs = self._send(self.B[used] @ self._pieces(G))  # (|F|, d/m)
        msgs = self._lazy(model, used, msgs, prev)
        if self.c.kind in ("uncoded", "ring"):  # everyone: the exact sum
            return np.asarray(msgs.sum(axis=0).real)
        if self.c.kind == "ignore":
            return np.asarray(msgs.sum(axis=0).real * self.c.n / len(used))
        if self.c.kind == "hetero" and "bad" in self.c.extra:  # one-step: sum what arrived
            return np.asarray(msgs.sum(axis=0).real)
        order = np.argsort(used)  # exact or not, the optimal (least-squares) decoding vector
        pieces = self._decode(used[order]) @ msgs[order]  # (m, d/m)
        return np.asarray(pieces.reshape(-1)[: G.shape[1]].real)

    def _send(self, msgs: np.ndarray) -> np.ndarray:
        """The messages as the master receives them: sparsified when asked (unbiased)."""
        if self.sparsifier is None:
            self.coordinates += int(msgs.size)
            return msgs
        out, sent = self.sparsifier.apply(msgs, self.rng)
        self.coordinates += sent
        return np.asarray(out)

    def _lazy(self, model: int, used: np.ndarray, msgs: np.ndarray, prev: np.ndarray | None
              ) -> np.ndarray:
        size = 1.0 / self.m
        if self.lazy is None or prev is None:
            self.uploads += size * len(used)
            if self.lazy is not None:
                self._store(model, used, msgs)
            return msgs
        stale = self.stale.setdefault(model, np.zeros((len(self.B), msgs.shape[1]), msgs.dtype))
        limit = self.lazy / self.c.n**2 * float(np.sum(prev**2))
        out = msgs.copy()
        for row, i in enumerate(used):
            if np.sum(np.abs(msgs[row] - stale[i]) ** 2) <= limit:
                out[row] = stale[i]
                self.skipped += size
            else:
                stale[i] = msgs[row]
                self.uploads += size
        return out

    def _store(self, model: int, used: np.ndarray, msgs: np.ndarray) -> None:
        stale = self.stale.setdefault(model, np.zeros((len(self.B), msgs.shape[1]), msgs.dtype))
        stale[used] = msgs

    def job_gradient(self, beta: np.ndarray, entry: Any) -> np.ndarray:
        """Estimate for a sequential scheme's job from what was delivered for it."""
        from gctool.sequential.model import members

        G = self.p.partial_gradients(beta, self.bounds)
        code = self.c.code
        assert code is not None
        if not traits(code).multiplexed:  # SR-SGC: the job's delivering workers
            F = np.array(members(entry))
            return np.asarray((self._decode(F) @ self._send(self.B[F] @ G))[0].real)
        counts, masks = entry
        total = G[: self.d1_parts].sum(axis=0)  # every worker finished its D1 share
        n = self.c.n
        for g in range(self.groups):
            F = np.array(members(masks[g]))
            Gg = G[self.d1_parts + g * n: self.d1_parts + (g + 1) * n]
            total = total + (self._decode(F) @ self._send(self.B[F] @ Gg))[0].real
        return np.asarray(total)


def check_options(kind: str | None, lazy: float | None, sparsify: Any,
                  models: int | None = None) -> None:
    """Refuse training options that cannot apply: a sparsifier, lazy uploads or a number of
    models without training (they act on the training's messages and models), or a
    sparsifier with lazy uploads (they exclude each other)."""
    if sparsify is not None and kind is None:
        raise InvalidInput("sparsify needs train (it sparsifies the training's messages)")
    if lazy is not None and kind is None:
        raise InvalidInput("lazy needs train (lazy uploads skip the training's messages)")
    if models is not None and kind is None:
        raise InvalidInput("models needs train (it counts the models trained concurrently)")
    if sparsify is not None and lazy is not None:
        raise InvalidInput("sparsify and lazy exclude each other")


def train(contenders: list[Contender], runs: list[Run], kind: str, gap: float,
          lazy: float | None, seed: int, sparsify: Any = None, models: int | None = None
          ) -> dict[str, Any]:
    """Train every contender's M models along its simulated rounds: M = ``models`` (the
    authors' experiment trains several models concurrently) but at least 1 + the largest
    delay T, so that no scheme ever uses a stale gradient.  The caller holds the work to the
    budget first (:func:`check_training_work`)."""
    rng = np.random.default_rng(seed)
    problem = make_problem(kind, rng)
    M = max(1 + max(c.delay for c in contenders), models or 1)
    inits = [np.asarray(rng.standard_normal(problem.X.shape[1])) for _ in range(M)]
    start = float(np.mean([problem.loss(b) for b in inits]))
    target = problem.loss_star + gap * (start - problem.loss_star)
    rows = [_train_one(c, run, problem, inits, target, lazy, sparsify, seed)
            for c, run in zip(contenders, runs, strict=True)]
    return {"problem": kind, "models": M, "target": target, "loss_star": problem.loss_star,
            "initial_loss": start, "gap": gap, "lazy": lazy, "rows": rows,
            "samples": problem.N, "features": problem.X.shape[1], "condition": CONDITION,
            "sparsify": None if sparsify is None else sparsify.label}


def training_cost(n: int, K: int, rounds: int) -> int:
    """Training work per contender of ``n`` workers and ``K`` columns, decoders excluded: per
    round the partial gradients (N x d) and the messages (n x K x d)."""
    return rounds * N_SAMPLES * N_FEATURES + rounds * n * K * N_FEATURES


def check_training_work(contenders: list[Contender], runs: list[Run], meter: Any = None
                        ) -> None:
    """Charge, before any model is trained, the training's estimated work to ``meter`` (the
    run's :class:`gctool.sim.budget.WorkMeter`; None: check it alone against the work budget,
    :func:`gctool.limits.check_work`): :func:`training_cost`, and one least-squares decoder (an
    SVD of |F| x K) per distinct set of used workers of a coded scheme (decoders are cached).
    An upper bound: training stops early at the target."""
    from gctool.limits import check_work, set_cost

    work, worst = 0, ""
    for c, run in zip(contenders, runs, strict=True):
        K = c.code.B.shape[1] if c.code is not None else c.n
        rounds = len(run.jobs) if c.kind == "sgc" else len(run.used)
        mine = training_cost(c.n, K, rounds)
        if c.kind not in ("uncoded", "ignore", "sgc", "encoded") and c.code is not None:
            sizes: dict[tuple[int, ...], int] = {}
            for used in run.used:
                sizes.setdefault(tuple(sorted(int(i) for i in used)), len(used))
            mine += sum(set_cost(f, K) for f in sizes.values())
            if mine >= work:
                worst = f"{c.name}: {len(sizes):,} distinct survivor sets to decode"
        work += mine
    what = f"training over {len(contenders)} scheme(s) ({worst or 'the rounds'})"
    if meter is not None:
        meter.charge(work, what)
    else:
        check_work(what, work, "train with fewer --iterations or smaller codes, or raise "
                   "--max-work")


def _jobs(c: Contender, run: Run) -> list[tuple[int, int, Any]]:
    """(job, round it is applied, payload) in application order."""
    if c.kind == "sgc":
        return [(job, r, entry) for job, r, ok, entry in run.jobs if ok]
    assert run.exact is not None
    return [(t, t, (run.used[t], bool(run.exact[t]))) for t in range(len(run.durations))]


def _rule_name(c: Contender, lazy: float | None) -> str | None:
    """LAG on uncoded messages, G-LAG on FRC groups, LAGC on other coded messages."""
    if lazy is None or c.kind == "sgc":
        return None
    if c.kind in UNCODED:
        return "LAG"
    return traits(c.code).lazy_rule if c.code is not None else "LAGC"


def _train_one(c: Contender, run: Run, problem: Problem, inits: list[np.ndarray],
               target: float, lazy: float | None, sparsify: Any = None,
               seed: int = 0) -> dict[str, Any]:
    est: Any
    if c.kind == "encoded":  # encoded optimization (gctool.sim.encoded)
        from gctool.sim.encoded import EncodedEstimator

        if lazy is not None:
            raise InvalidInput(f"{c.name}: --lazy does not apply to encoded optimization")
        est = EncodedEstimator(c, problem, sparsify, seed)
    else:
        est = Estimator(c, problem, lazy if c.kind != "sgc" else None, sparsify, seed)
    step = problem.eta * getattr(est, "step_scale", 1.0)
    M = len(inits)
    betas = [b.copy() for b in inits]
    prev: list[np.ndarray | None] = [None] * M
    reached = [False] * M
    clock = np.cumsum(run.durations)
    when = jobs_done = None
    at_target: tuple[float, float, int] | None = None
    diverged = False
    last = len(run.durations) - 1
    curve_t: list[float] = []
    curve_loss: list[float] = []
    for count, (job, r, payload) in enumerate(_jobs(c, run), start=1):
        m = job % M
        if c.kind == "sgc":
            g = est.job_gradient(betas[m], payload)
        else:
            g = est.round_gradient(m, betas[m], payload[0], payload[1], prev[m])
        betas[m] = betas[m] - step * g
        prev[m] = g
        loss = problem.loss(betas[m])
        if not loss <= DIVERGED * max(problem.loss(inits[m]), 1.0):  # also NaN
            diverged = True
            break
        reached[m] = reached[m] or loss <= target
        if m == M - 1 or count == 1:  # after every M jobs: one step of every model
            curve_t.append(float(clock[r]))
            curve_loss.append(float(np.mean([problem.loss(b) for b in betas])) - problem.loss_star)
        if all(reached) and when is None:
            when, jobs_done, last = float(clock[r]), count, r
            at_target = (est.uploads, est.skipped, est.coordinates)
            if c.kind != "encoded":  # encoded runs go on: their neighbourhood is reported
                break
    final = None if diverged else float(np.mean([problem.loss(b) for b in betas]))
    if at_target is not None:  # communication until the target (encoded runs go on after it)
        est.uploads, est.skipped, est.coordinates = at_target
    if c.kind == "sgc":  # every worker that finished a round uploads one vector per slot
        assert c.code is not None
        slots = c.delay + 1 if traits(c.code).multiplexed else 1
        est.uploads = float(sum(len(run.used[r]) for r in range(last + 1)) * slots)
    extra = est.report(final) if c.kind == "encoded" else {}
    return {**extra, "name": c.name, "lazy_rule": _rule_name(c, lazy),
            "time_to_target": when, "jobs_to_target": jobs_done,
            "uploads": est.uploads, "skipped_uploads": est.skipped,
            "coordinates": est.coordinates, "diverged": diverged,
            "final_loss": final,
            # loss - loss* (mean over the models) against the wall clock, at most 300 points
            "curve": _thin(curve_t, curve_loss, 300)}


def _thin(t: list[float], y: list[float], limit: int) -> dict[str, list[float]]:
    keep = np.unique(np.linspace(0, len(t) - 1, min(limit, len(t))).round().astype(int))
    return {"time": [t[i] for i in keep], "loss_gap": [y[i] for i in keep]} if t else {
        "time": [], "loss_gap": []}
