"""``gctool simulate``: race code files and baselines on one set of simulated delays.

Baselines added for every code file (``baselines=True``): uncoded with the file's n; for a
single-round file with s >= 1 also ignore-stragglers with its n and s, BCC with its n (seeded,
default number of batches, see :mod:`gctool.sequential.bcc`), and SR-SGC and M-SGC with its n
for the model (B, W, λ) = ``sgc`` (default (1, 2, s): λ = the file's s, the shortest window,
delay 1).  Every scheme sees the same delay
draws (common random numbers); speed-ups are against uncoded with the same n.

Closed forms (reported as ``theory`` where they exist): with ``shifted-exp`` times
ℓ(a + E/μ), uncoded waits for the maximum, ``E = ℓ (a + H_n / μ)``, and ignore-stragglers for
the (n-s)-th order statistic, ``E = ℓ (a + (H_n - H_s) / μ)``; with ``pareto`` times ℓ x U^(-1/α),
``E[X_(k:n)] = x Γ(n+1) Γ(n-k+1-1/α) / (Γ(n-k+1) Γ(n+1-1/α))`` (finite when n-k+1 > 1/α).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gctool.errors import BudgetExceeded, InvalidInput
from gctool.limits import MAX_CELLS, MAX_ITERATIONS
from gctool.model import GradientCode
from gctool.reports import NOT_JSON, Report
from gctool.sim import stats
from gctool.sim.budget import WorkMeter, cell_cost, plan_run
from gctool.sim.contenders import (
    MU_NOT_APPLIED,
    Contender,
    Run,
    from_code,
    mu_rule,
    traits,
)
from gctool.sim.contenders.baselines import baseline_keys, baselines_for, sgc_baselines
from gctool.sim.delays import DelayModel


@dataclass
class SimulationReport(Report):
    delay: str
    iterations: int
    seed: int
    rows: list[dict[str, Any]]
    training: dict[str, Any] | None
    notes: list[str] = field(default_factory=list)
    ok: bool = True  # no sequential job missed its deadline
    method: str = "monte-carlo"  # estimates with confidence intervals, never a proof
    exact: bool = False
    protocol: str = "gctool"  # waiting rule: gctool's or the authors' (1 + mu) rule
    mu: float | None = None
    time_unit: str = "s"  # "s" for traces; synthetic models count in units of one full job
    #: the SVG plot the call wrote, {"path", "bytes"} (not part of the JSON document)
    plot: dict[str, Any] | None = field(default=None, metadata=NOT_JSON)


def theory(delay: DelayModel, c: Contender) -> float | None:
    """Closed-form mean per iteration of the uncoded and ignore-stragglers baselines."""
    from scipy.special import gammaln

    if c.kind not in ("uncoded", "ignore") or delay.trace is not None:
        return None
    n, ell, k = c.n, 1.0 / c.n, c.n - c.s  # wait for the k-th of n
    p = delay.params
    if delay.name == "shifted-exp":
        H = np.sum(1.0 / np.arange(c.s + 1, n + 1))
        return float(ell * (p["shift"] + H / p["rate"]))
    if delay.name == "pareto" and n - k + 1 > 1.0 / p["shape"]:
        a = 1.0 / p["shape"]
        log = gammaln(n + 1) + gammaln(n - k + 1 - a) - gammaln(n - k + 1) - gammaln(n + 1 - a)
        return float(ell * p["scale"] * np.exp(log))
    return None


def sgc_candidates(n: int, s: int, scheme: str) -> list[tuple[int, int, int]]:
    """(B, W, λ) of ``scheme`` whose load is at most the load (s + 1)/n of an (n, s)-GC: every
    W <= :data:`gctool.sim.sgc_search.SEARCH_MAX_WINDOW`, B < W and every λ."""
    from gctool.sim.sgc_search import candidates

    return candidates(n, s, scheme)


def _searched(n: int, s: int, seed: int, delay: DelayModel, base: dict[str, Any],
              mu: float | None, notes: list[str], rounds: int) -> list[Contender]:
    """The best SR-SGC and M-SGC under the GC baseline's load budget on these very delays
    (the authors' parameter search: it selects on the draws it reports, so it is optimistic);
    every λ is tried (:mod:`gctool.sim.sgc_search`)."""
    from gctool.sim.sgc_search import SEARCH_MAX_WINDOW, best

    cache: dict[float, np.ndarray] = {}

    def times_at(load: float) -> np.ndarray:
        if load not in cache:
            cache[load] = delay.times(base, np.full(n, load))
        return cache[load]

    out = []
    for scheme in ("sr-sgc", "m-sgc"):
        found = best(n, s, scheme, times_at, rounds, mu)
        if found is None:
            continue
        params, _, tried = found
        for c in sgc_baselines(n, s, params, seed, (scheme,)):
            c.name += " (searched)"
            out.append(c)
            notes.append(f"{c.name}: best time per job of {tried} (B, W, lambda) with "
                         f"W <= {SEARCH_MAX_WINDOW}, every lambda, load <= (s+1)/n = "
                         f"{(s + 1) / n:.4g}, on these delays (optimistic: chosen on the "
                         "reported draws)")
    return out


def file_contenders(codes: list[tuple[str, GradientCode]]) -> list[Contender]:
    """The contenders of the code files: each file, and its partial-work and nested-level
    versions where the file has them."""
    out: list[Contender] = []
    for label, code in codes:
        kind = traits(code).kind
        out.append(from_code(code, label))
        if kind == "encoded":
            continue
        if code.order is not None and kind not in ("sgc", "tree"):
            from gctool.sim.partial import partial_contender

            out.append(partial_contender(code, label))  # the same code using partial work
        if traits(code).levels:
            from gctool.sim.nested import nested_contender

            out.append(nested_contender(code, label))  # decoding at the level reached
    return out


def contenders_for(codes: list[tuple[str, GradientCode]], baselines: bool,
                   sgc: tuple[int, int, int] | None, seed: int,
                   search: Any = None) -> list[Contender]:
    """The files and their baselines; ``search(n, s)`` replaces the fixed (B, W, λ) of the
    sequential baselines by a search (see :func:`simulate`)."""
    keys = baseline_keys(codes) if baselines else []
    return file_contenders(codes) + baselines_for(keys, sgc, seed, search)


def _row(c: Contender, run: Run, base: Run | None, delay: DelayModel) -> dict[str, Any]:
    summary = stats.summary(run.durations)
    jobs = len(run.jobs) if c.kind == "sgc" else len(run.durations)
    row: dict[str, Any] = {
        "name": c.name, "kind": c.kind, "n": c.n, "s": c.s, "load": c.load, "delay": c.delay,
        **summary,
        "speedup": None if base is None else stats.ratio_ci(base.durations, run.durations),
        "theory": theory(delay, c),
        "time_per_job": float(run.durations.sum() / max(jobs, 1)),
        "exact_fraction": None if run.exact is None else float(np.mean(run.exact)),
        # ErasureHead: mean fraction of the partitions lost per round
        "lost_fraction": None if run.lost is None else float(np.mean(run.lost)),
        # one-step decoding (heterogeneous codes): ||c - 1||^2 / k per round (mean, p50, p99)
        "one_step_error": None if run.error is None else stats.summary(run.error),
        # nested codes: fraction of rounds decoded at level 1, 2, ..., L (index 0: not exact)
        "level_fractions": None if run.levels is None else [
            float(np.mean(run.levels == lv)) for lv in range(len(c.extra["levels"]) + 1)],
        "deadline_misses": run.deadline_misses,
        "rule": mu_rule(c),  # the waiting rule this scheme followed: "gctool" or "authors"
        # empirical CDF of the time per round: its value at every percent 0, 1, ..., 100
        "percentiles": [float(x) for x in np.quantile(run.durations, np.linspace(0, 1, 101))],
        **run.info,
    }
    return row


PROTOCOLS = ("gctool", "authors")


def _check_run(codes: list[tuple[str, GradientCode]], iterations: int, protocol: str,
               mu: float) -> int:
    """Check the run's arguments; the largest n (the width of the delay arrays)."""
    if not 2 <= iterations <= MAX_ITERATIONS:
        raise InvalidInput(f"iterations must be between 2 and {MAX_ITERATIONS:,}")
    if protocol not in PROTOCOLS:
        raise InvalidInput(f"protocol must be one of {', '.join(PROTOCOLS)}")
    if not (np.isfinite(mu) and mu >= 0):
        raise InvalidInput(f"mu must be a finite number >= 0, got {mu}")
    if len(codes) == 0:
        raise InvalidInput("nothing to simulate: give at least one code file")
    width = max(code.n for _, code in codes)
    if iterations * width > MAX_CELLS:  # the delays are iterations x n arrays (found by fuzzing)
        raise BudgetExceeded(f"{iterations:,} iterations x {width:,} workers = "
                             f"{iterations * width:,} delay draws, above the limit of "
                             f"{MAX_CELLS:,} (use fewer --iterations)")
    return width


def _worker_probabilities(codes: list[tuple[str, GradientCode]]) -> np.ndarray:
    """The per-worker probabilities of the bernoulli delay model: those of the first code whose
    scheme records them (``probabilities_param``)."""
    from gctool.registry import feature

    hetero = [(code, key) for _, code in codes
              if (key := feature(code.scheme, "probabilities_param")) is not None]
    if not hetero:
        raise InvalidInput("delay model bernoulli needs per-worker probabilities: "
                           "--worker-p P1,P2,... or a heterogeneous code file")
    code, key = hetero[0]
    return np.asarray(code.params[key], dtype=np.float64)


def _extra_contenders(contenders: list[Contender], codes: list[tuple[str, GradientCode]],
                      link: Any, erasurehead: int | None, notes: list[str]) -> list[Contender]:
    """With a ``link``, the parameter server and ring all-reduce next to each CodedReduce tree
    (which then pays the link too); with ``erasurehead``, ErasureHead on every file."""
    extra: list[Contender] = []
    if link is not None:
        from gctool.sim import comm

        if not any(c.kind == "tree" for c in contenders):
            raise InvalidInput("--link applies to CodedReduce files only, and none was given")
        for c in [c for c in contenders if c.kind == "tree"]:
            c.extra["link"] = link
            assert c.code is not None
            extra += [comm.ps_contender(c.code, c.name, link), comm.ring_contender(c.n, link)]
            notes.append(f"communication ({link.label}): CodedReduce, the parameter server and "
                         "ring all-reduce pay latency + size/bandwidth per message, serialised "
                         "at each receiver; other schemes do not")
    if erasurehead is not None:
        from gctool.sim.contenders import erasurehead as make_eh
        from gctool.sim.stopping import group_labels

        shaped = [(label, code) for label, code in codes if group_labels(code) is not None]
        if not shaped:
            raise InvalidInput("ErasureHead needs a file of the group shape (FRC: rows constant "
                               "on disjoint supports that cover every partition); none was given")
        extra += [make_eh(code, label, erasurehead) for label, code in shaped]
        notes += [f"{label}: not of the group shape (FRC), so no ErasureHead"
                  for label, code in codes if group_labels(code) is None]
    return extra


def _hetero_columns(contenders: list[Contender], rows: list[dict[str, Any]],
                    delay: DelayModel) -> None:
    """Rows of heterogeneous codes under bad-worker delays: their expected one-step error and
    the workers' probabilities."""
    for c, row in zip(contenders, rows, strict=True):
        if c.kind == "hetero" and "bad" in c.extra and c.code is not None:
            expect = c.code.params.get("expected_error")
            row["expected_error"] = None if expect is None else float(expect) / c.code.k
            row["worker_p"] = [float(x) for x in np.asarray(delay.worker_p)[: c.n]]


def _rule_notes(contenders: list[Contender], mu: float) -> list[str]:
    """What the authors' (1 + mu) protocol means, and which contenders it does not apply to."""
    notes = [f"authors' protocol: stragglers are the workers slower than (1 + {mu:g}) x "
             "the fastest; a round whose stragglers leave the model waits for everyone"]
    for c in contenders:
        why = MU_NOT_APPLIED.get(c.kind)
        note = f"{c.name}: the authors' rule is not applied ({why})"
        if why is not None and note not in notes:
            notes.append(note)
    return notes


def _check_plan(contenders: list[Contender], keys: list[tuple[str, int, int]], rounds: int,
                sgc: tuple[int, int, int] | str | None, train: bool) -> WorkMeter:
    """Refuse, before any work, a run whose estimate is above the work budget; the meter that
    holds the rest of the run to the same budget."""
    plan = plan_run(contenders, keys, rounds, sgc, train)
    plan.check()
    return WorkMeter(f"simulating {len(plan.items)} part(s) for {rounds:,} rounds")


def simulate(codes: list[tuple[str, GradientCode]], delay: DelayModel, *, iterations: int = 1000,  # noqa: PLR0913 (the options of gctool simulate)
             seed: int | None = None, baselines: bool = True,
             sgc: tuple[int, int, int] | str | None = None,
             train: str | None = None, gap: float = 1e-3, lazy: float | None = None,
             protocol: str = "gctool", mu: float = 0.2, sparsify: Any = None,
             erasurehead: int | None = None, link: Any = None,
             models: int | None = None, plot: str | os.PathLike[str] | None = None
             ) -> SimulationReport:
    """Simulate every code file and its baselines on the same delays.

    ``protocol``: ``"gctool"`` (stop at the earliest arrival after which the scheme can do its
    job, :mod:`gctool.sim.contenders`) or ``"authors"`` (Krishnan et al.'s rule: stragglers are
    the workers slower than (1 + ``mu``) x the fastest, and the master waits for everyone when
    that pattern leaves the scheme's model).  ``sgc``: the (B, W, λ) of the SR-SGC and M-SGC
    baselines, or ``"search"`` for the authors' parameter search: for each scheme, the
    (B, W, λ) with the smallest time per job among those whose load is at most the load
    (s + 1)/n of the file's GC (:func:`sgc_candidates`), on these delays.  ``sparsify``:
    a :class:`gctool.sim.sparsify.Sparsifier` applied to every uploaded message in training.
    ``erasurehead``: also race ErasureHead on every file of the group shape (FRC), stopping
    after that many arrivals (:func:`gctool.sim.contenders.erasurehead`).  ``link``
    (:class:`gctool.sim.comm.Link`): CodedReduce files pay per-message latency and bandwidth
    and race a parameter server with the same leaves and ring all-reduce under the same model.
    ``models``: with ``train``, the number of models trained concurrently (job t is a step of
    model t mod M; at least 1 + the largest delay).  ``seed`` (None: a fresh one) seeds the
    delays, the baselines and the training, and is recorded in the report.  ``plot`` writes
    the SVG of the run there atomically (``"-"``: stdout; :mod:`gctool.sim.plot`) and records
    it in ``report.plot``.
    """
    width = _check_run(codes, iterations, protocol, mu)
    from gctool.sim.training import check_options

    check_options(train, lazy, sparsify, models)
    rule_mu = mu if protocol == "authors" else None
    if delay.name == "bernoulli" and delay.worker_p is None:
        delay.worker_p = _worker_probabilities(codes)
    if seed is None:  # a fresh seed, recorded in the report so that the run can be redone
        from gctool.seeds import fresh_seed

        seed = fresh_seed()
    rng = np.random.default_rng(seed)
    base = delay.base(iterations, width, rng)
    notes: list[str] = []
    search = None
    if sgc == "search":
        def search(n: int, s: int) -> list[Contender]:
            return _searched(n, s, seed, delay, base, rule_mu, notes, iterations)
    elif isinstance(sgc, str):
        raise InvalidInput("sgc must be B,W,LAMBDA or 'search'")
    files = file_contenders(codes)
    extra_notes: list[str] = []
    extra = _extra_contenders(files, codes, link, erasurehead, extra_notes)
    keys = baseline_keys(codes) if baselines else []
    for c in files + extra:
        c.mu = rule_mu
    meter = _check_plan(files + extra, keys, iterations, sgc, train is not None)
    contenders = files + baselines_for(keys, None if isinstance(sgc, str) else sgc, seed,
                                       search) + extra
    notes += extra_notes
    if max(c.delay for c in contenders) >= iterations:
        raise InvalidInput("iterations must exceed the largest delay T of the schemes")
    for c in contenders:
        c.mu, c.meter = rule_mu, meter
        if c.kind == "hetero" and "bad" in base:
            c.extra["bad"] = base["bad"][:, : c.n]
    runs = []
    for c in contenders:
        meter.charge(cell_cost(iterations, c.n), f"the arrival times of {c.name}")
        runs.append(c.run(delay.times(base, c.loads)))
    ref = {c.n: r for c, r in zip(contenders, runs, strict=True) if c.kind == "uncoded"}
    rows = [_row(c, r, ref.get(c.n), delay) for c, r in zip(contenders, runs, strict=True)]
    _hetero_columns(contenders, rows, delay)
    training = None
    if train is not None:
        from gctool.sim.training import check_training_work
        from gctool.sim.training import train as run_training

        check_training_work(contenders, runs, meter)
        training = run_training(contenders, runs, train, gap, lazy, seed, sparsify, models)
    notes = list(getattr(delay.trace, "clamped", [])) + notes
    if training is not None and any(c.kind == "encoded" for c in contenders):
        from gctool.sim.encoded import training_notes

        notes += training_notes(training)
    if any(c.kind in ("partial", "nested") for c in contenders):
        from gctool.sim.partial import add_gains

        notes += add_gains(contenders, runs, rows)
    if rule_mu is not None:
        notes += _rule_notes(contenders, rule_mu)
    notes.append("speed-up = mean of uncoded (same n) / mean of the scheme, on the same delays")
    misses = sum(r["deadline_misses"] for r in rows)
    report = SimulationReport(delay.label, iterations, seed, rows, training, notes, misses == 0,
                              protocol=protocol, mu=rule_mu,
                              time_unit="s" if delay.trace is not None else "job units")
    return report if plot is None else _plotted(report, plot)


def _plotted(report: SimulationReport, path: str | os.PathLike[str]) -> SimulationReport:
    """``report`` after writing its SVG to ``path`` (:func:`gctool.sim.plot.write_plot`)."""
    from gctool.sim.plot import write_plot

    write_plot(report, path)
    return report
