"""``gctool simulate``, ``train``: real gradient descent in numpy, driven by each scheme's actual
decoding and schedule, timed by the simulated rounds.

The target loss is ``loss* + gap (loss(β0) - loss*)`` (problem: :mod:`gctool.sim.problem`).

Jobs and models: following the sequential-coding paper's experiments, M = 1 + (largest delay T
among the schemes) models are trained concurrently, job t being one gradient step of model
t mod M; a job is applied when the scheme decodes it (round t + T).  So no scheme ever uses a
stale gradient and every scheme runs the same job sequence.  The time to target is the time
at which every model has reached the target loss.

Gradients are what the master really gets: the data is cut into the scheme's partitions,
workers send their coded combinations, and the master decodes them with the scheme's decoder
(exact, or the optimal least-squares decoder when an approximate code stops at n - s workers;
ignore-stragglers rescales the sum of the fastest n - s partial gradients by n / (n - s)).

How the master combines the messages, sparsified messages and lazy uploads:
:mod:`gctool.sim.estimators`.  The problem: :mod:`gctool.sim.problem`.
"""


from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from gctool.errors import InvalidInput
from gctool.sim.contenders.base import Contender, Run
from gctool.sim.problem import CONDITION, N_FEATURES, N_SAMPLES, Problem
from gctool.wording import counted

#: a run whose loss exceeds this multiple of its starting loss is stopped and marked diverged
DIVERGED = 1e6


def check_options(kind: str | None, lazy: float | None, sparsify: Any,
                  models: int | None = None, precision: str | None = None) -> None:
    """Refuse training options that cannot apply: a sparsifier, lazy uploads or a number of
    models without training (they act on the training's messages and models), or a
    sparsifier with lazy uploads (they exclude each other)."""
    if sparsify is not None and kind is None:
        raise InvalidInput("`sparsify` needs `train` (it sparsifies the training's messages)",
                           param="sparsify")
    if lazy is not None and kind is None:
        raise InvalidInput("`lazy` needs `train` (lazy uploads skip the training's messages)",
                           param="lazy")
    if models is not None and kind is None:
        raise InvalidInput("`models` needs `train` (it counts the models trained "
                           "concurrently)", param="models")
    if sparsify is not None and lazy is not None:
        raise InvalidInput("`sparsify` and `lazy` exclude each other", param="sparsify")
    if precision is not None:
        from gctool.precision import get_format

        get_format(precision)
        if kind is None:
            raise InvalidInput("`precision` needs `train` (it rounds the training's messages)",
                               param="precision")


def train(contenders: list[Contender], runs: list[Run], kind: str, gap: float,  # noqa: PLR0913 (simulate's training options)
          lazy: float | None, seed: int, sparsify: Any = None, models: int | None = None,
          retimers: list[Retimer | None] | None = None, precision: str | None = None
          ) -> dict[str, Any]:
    """Train every contender's M models along its simulated rounds: M = ``models`` (the
    authors' experiment trains several models concurrently) but at least 1 + the largest
    delay T, so that no scheme ever uses a stale gradient.  The caller holds the work to the
    budget first (:func:`check_training_work`).  ``retimers`` (one per contender, or None):
    with a link, the round's time from the messages the master used and their real sizes
    (sparsified or skipped lazy uploads, :func:`retimer`).  ``precision`` (float32, bfloat16,
    float16): messages and decoding rounded as :mod:`gctool.precision` models it."""
    from gctool.sim.problem import make_problem

    rng = np.random.default_rng(seed)
    problem = make_problem(kind, rng)
    M = max(1 + max(c.delay for c in contenders), models or 1)
    inits = [np.asarray(rng.standard_normal(problem.X.shape[1])) for _ in range(M)]
    start = float(np.mean([problem.loss(b) for b in inits]))
    target = problem.loss_star + gap * (start - problem.loss_star)
    retimers = retimers or [None] * len(contenders)
    rounding = None
    if precision is not None:
        from gctool.precision import get_format
        from gctool.precision.emulate import Rounding

        rounding = Rounding(get_format(precision))
    rows = [_train_one(c, run, problem, inits, target, lazy, sparsify, seed, again, rounding)
            for c, run, again in zip(contenders, runs, retimers, strict=True)]
    return {"problem": kind, "models": M, "target": target, "loss_star": problem.loss_star,
            "initial_loss": start, "gap": gap, "lazy": lazy, "rows": rows,
            "samples": problem.N, "features": problem.X.shape[1], "condition": CONDITION,
            "sparsify": None if sparsify is None else sparsify.label,
            "precision": precision}


def training_cost(n: int, K: int, rounds: int) -> int:
    """Training work per contender of ``n`` workers and ``K`` columns, decoders excluded: per
    round the partial gradients (N x d) and the messages (n x K x d)."""
    return rounds * N_SAMPLES * N_FEATURES + rounds * n * K * N_FEATURES


def check_training_work(contenders: list[Contender], runs: list[Run], meter: Any = None
                        ) -> None:
    """Charge, before any model is trained, the training's estimated work to ``meter`` (the
    run's :class:`gctool.budget.Meter`; None: check it alone against the default budget):
    :func:`training_cost`, and one call of the decoder on one set (its least-squares system of
    |F| x K, or over GF(q) its elimination: :func:`gctool.decode.cost.single_call_time`) per
    distinct set of used workers of a coded scheme (decoders are cached).
    An upper bound: training stops early at the target."""
    from gctool.decode.cost import single_call_time
    from gctool.sim.budget import alone

    work: float = 0.0
    worst = ""
    for c, run in zip(contenders, runs, strict=True):
        K = c.columns
        mine: float = training_cost(c.n, K, len(c.steps(run)))
        if c.decodes:
            assert c.code is not None  # (a contender that decodes holds its code)
            sizes: dict[tuple[int, ...], int] = {}
            for used in run.used:
                sizes.setdefault(tuple(sorted(int(i) for i in used)), len(used))
            mine += sum(single_call_time(c.code, f) for f in sizes.values())
            if mine >= work:
                worst = f"{c.name}: {len(sizes):,} distinct survivor sets to decode"
        work += mine
    what = f"training over {counted(len(contenders), 'scheme')} ({worst or 'the rounds'})"
    (meter or alone(what)).charge(work, what)


#: (round, workers used, gradients each of their messages carried) -> the round's time
Retimer = Callable[[int, np.ndarray, np.ndarray], float]


def retimer(c: Contender, times: np.ndarray, link: Any) -> Retimer | None:
    """With ``link``: the round lasts until the master has received the messages it used, each
    of its real size (the workers it waits for are those of the dense run); None when the
    contender's messages are not re-timed (sequential schemes, trees, ring all-reduce)."""
    from gctool.sim.network import arrivals

    ready = c.ready(times)
    if ready is None or link is None:
        return None

    def again(r: int, used: np.ndarray, sizes: np.ndarray) -> float:
        got = np.asarray(used)
        return float(arrivals(ready[r, got][None, :], link, sizes[None, :]).max())

    return again


def _train_one(c: Contender, run: Run, problem: Problem, inits: list[np.ndarray],  # noqa: PLR0913 (one contender's training)
               target: float, lazy: float | None, sparsify: Any = None,
               seed: int = 0, again: Retimer | None = None, rounding: Any = None
               ) -> dict[str, Any]:
    rule = c.lazy_rule() if lazy is not None else None
    est = c.estimator(problem, run, lazy, sparsify, seed)
    est.rounding = rounding
    step = problem.eta * est.step_scale
    M = len(inits)
    betas = [b.copy() for b in inits]
    prev: list[np.ndarray | None] = [None] * M
    reached = [False] * M
    durations = np.array(run.durations, dtype=np.float64)
    clock = np.cumsum(durations)
    when = jobs_done = None
    at_target: tuple[float, float, int] | None = None
    diverged = False
    last = len(run.durations) - 1
    curve_t: list[float] = []
    curve_loss: list[float] = []
    for count, (job, r, payload) in enumerate(c.steps(run), start=1):
        m = job % M
        g = est.step(m, betas[m], payload, prev[m])
        if again is not None and est.sizes is not None:  # the messages' real sizes
            durations[r] = again(r, payload[0], est.sizes)
            clock[r] = (clock[r - 1] if r else 0.0) + durations[r]
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
            if est.stops_at_target:
                break
    final = None if diverged else float(np.mean([problem.loss(b) for b in betas]))
    if at_target is not None:  # communication until the target (encoded runs go on after it)
        est.uploads, est.skipped, est.coordinates = at_target
    est.settle(run.used[: last + 1])
    return {**est.report(final), "name": c.name, "lazy_rule": rule,
            # the rounds' times from the messages' real sizes (``link`` with sparsify or lazy)
            "retimed": again is not None,
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
