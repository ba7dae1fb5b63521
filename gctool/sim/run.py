"""``gctool simulate``: race code files and baselines on one set of simulated delays.

Which contenders race (the files, their variants and companions, the baselines) is
:mod:`gctool.sim.lineup`; how each one's rounds end is :mod:`gctool.sim.contenders`.  Every
scheme sees the same delay draws (common random numbers) and the same network; speed-ups are
against uncoded with the same n.

Closed forms (reported as ``theory`` where they exist, without a link and under gctool's rule):
with ``shifted-exp`` times ℓ(a + E/μ), uncoded waits for the maximum, ``E = ℓ (a + H_n / μ)``,
and ignore-stragglers (and the count-based GC model) for the (n-s)-th order statistic,
``E = ℓ (a + (H_n - H_s) / μ)``; with ``pareto`` times ℓ x U^(-1/α),
``E[X_(k:n)] = x Γ(n+1) Γ(n-k+1-1/α) / (Γ(n-k+1) Γ(n+1-1/α))`` (finite when n-k+1 > 1/α).
"""

from __future__ import annotations

import dataclasses
import functools
import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gctool.budget import Budget, Meter
from gctool.errors import BudgetExceeded, InvalidInput
from gctool.limits import MAX_CELLS, MAX_ITERATIONS
from gctool.model import GradientCode
from gctool.reports import NOT_JSON, Report
from gctool.request import ITERATIONS, MU, PROTOCOLS, TARGET_GAP
from gctool.sim.budget import REMEDY, cell_cost
from gctool.sim.contenders.base import Contender, Run, Setting
from gctool.sim.contenders.count_gc import CountGC
from gctool.sim.contenders.partial import Partial
from gctool.sim.contenders.tree import Tree
from gctool.sim.contenders.uncoded import Uncoded
from gctool.sim.delays import DelayModel
from gctool.sim.draws import Draws
from gctool.sim.stats import Intervals
from gctool.wording import counted


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
    #: how the intervals were computed, and the independent rounds they rest on (traces: the
    #: distinct recorded rounds the iterations replay; None: every iteration is a fresh draw)
    intervals: str = ""
    independent_rounds: int | None = None
    #: the SVG plot the call wrote, {"path", "bytes"} (not part of the JSON document)
    plot: dict[str, Any] | None = field(default=None, metadata=NOT_JSON)


def _searched(n: int, s: int, seed: int, delay: DelayModel, draws: Draws, setting: Setting,
              notes: list[str], rounds: int) -> list[Contender]:
    """The best SR-SGC and M-SGC under the GC baseline's load budget on these very delays
    (the authors' parameter search: it selects on the draws it reports, so it is optimistic);
    every λ is tried (:mod:`gctool.sim.sgc_search`)."""
    from gctool.sim.lineup import sgc_baselines
    from gctool.sim.sgc_search import SEARCH_MAX_WINDOW, best

    cache: dict[tuple[float, float], np.ndarray] = {}

    def times_at(load: float, size: float) -> np.ndarray:
        if (load, size) not in cache:
            cache[load, size] = setting.deliver(delay.times(draws, np.full(n, load)), size)
        return cache[load, size]

    out = []
    for scheme in ("sr-sgc", "m-sgc"):
        found = best(n, s, scheme, times_at, rounds, setting.mu)
        if found is None:
            continue
        params, _, tried = found
        for c in sgc_baselines(n, s, params, seed, (scheme,)):
            c.name += " (searched)"
            c.role += " (searched)"
            out.append(c)
            notes.append(f"{c.name}: best time per job of {tried} (B, W, lambda) with "
                         f"W <= {SEARCH_MAX_WINDOW}, every lambda, load <= (s+1)/n = "
                         f"{(s + 1) / n:.4g}, on these delays (optimistic: chosen on the "
                         "reported draws)")
    return out


def _check_gc_model(codes: list[tuple[str, GradientCode]],
                    gc_model: str | tuple[int, ...] | None) -> None:
    """``gc_model`` is ``"best"``, None, or values of s of which each fits some file (s < n)."""
    if isinstance(gc_model, str) and gc_model != "best":
        raise InvalidInput("`gc_model` must be S,S,... or 'best'")
    largest = max(code.n for _, code in codes)
    if not isinstance(gc_model, str) and gc_model and max(gc_model) >= largest:
        raise InvalidInput(f"`gc_model`: s = {max(gc_model)} must be below n (largest n of "
                           f"the files: {largest})", param="gc_model")


def _count_gcs(ns: list[int], spec: str | tuple[int, ...], delay: DelayModel, draws: Draws,
               setting: Setting, notes: list[str]) -> list[Contender]:
    """The count-based GC model (:class:`gctool.sim.contenders.count_gc.CountGC`) with every
    n of the files: at the given s, or (``"best"``) at the s in 0..n-1 whose mean time per
    round is smallest on these draws (the authors' search over s; optimistic: chosen on the
    reported draws)."""
    out: list[Contender] = []
    for n in ns:
        if isinstance(spec, tuple):
            out += [CountGC(n, s) for s in spec if 0 <= s < n]
            continue
        best: tuple[float, int] | None = None
        for s in range(n):
            c = CountGC(n, s)
            mean = float(c.run(delay.times(draws, c.loads), setting).durations.mean())
            if best is None or mean < best[0]:
                best = (mean, s)
        assert best is not None
        c = CountGC(n, best[1])
        c.name += f" (best of s = 0..{n - 1})"
        out.append(c)
    if out:
        notes.append("gc-model: the count-based GC model (any n - s arrivals decode, load "
                     "(s+1)/n), as in the sequential-GC authors' simulator; a model, not a code"
                     + ("; the best s is chosen on these draws (optimistic)"
                        if not isinstance(spec, tuple) else ""))
    return out


def _row(c: Contender, run: Run, base: Run | None, delay: DelayModel, setting: Setting
         ) -> dict[str, Any]:
    row: dict[str, Any] = {
        "name": c.name, "role": c.role, "kind": c.kind, "n": c.n, "s": c.s, "load": c.load,
        "delay": c.delay,
        **setting.intervals.summary(run.durations),
        "speedup": None if base is None else setting.intervals.ratio(base.durations,
                                                                     run.durations),
        "theory": c.theory(delay, setting),
        "time_per_job": float(run.durations.sum() / max(c.jobs_done(run), 1)),
        "exact_fraction": None if run.exact is None else float(np.mean(run.exact)),
        # ErasureHead: mean fraction of the partitions lost per round
        "lost_fraction": None,
        # one-step decoding (heterogeneous codes): ||c - 1||^2 / k per round (mean, p50, p99)
        "one_step_error": None,
        # nested codes: fraction of rounds decoded at level 1, 2, ..., L (index 0: not exact)
        "level_fractions": None,
        "deadline_misses": run.deadline_misses,
        "rule": c.rule_name(setting.mu),  # the waiting rule this scheme followed
        # empirical CDF of the time per round: its value at every percent 0, 1, ..., 100
        "percentiles": [float(x) for x in np.quantile(run.durations, np.linspace(0, 1, 101))],
    }
    row.update(c.figures(run, setting))
    return row


# the waiting rules (gctool.request.PROTOCOLS): the ``mu`` of the run's setting under each
# (authors: the given mu)


def _check_run(codes: list[tuple[str, GradientCode]], iterations: int, protocol: str,
               mu: float | None) -> int:
    """Check the run's arguments (``mu`` given only with the authors' protocol, which alone
    uses it); the largest n (the width of the delay arrays)."""
    if not 2 <= iterations <= MAX_ITERATIONS:
        raise InvalidInput(f"`iterations` must be between 2 and {MAX_ITERATIONS:,}")
    if protocol not in PROTOCOLS:
        raise InvalidInput(f"`protocol` must be one of {', '.join(PROTOCOLS)}")
    if mu is not None and protocol != "authors":
        raise InvalidInput("`mu` applies to `protocol` authors", param="mu")
    if mu is not None and not (np.isfinite(mu) and mu >= 0):
        raise InvalidInput(f"`mu` must be a finite number >= 0, got {mu}", param="mu")
    if len(codes) == 0:
        raise InvalidInput("nothing to simulate: give at least one code file")
    width = max(code.n for _, code in codes)
    if iterations * width > MAX_CELLS:  # the delays are iterations x n arrays (found by fuzzing)
        raise BudgetExceeded(f"{iterations:,} iterations x {width:,} workers = "
                             f"{iterations * width:,} delay draws, above the limit of "
                             f"{MAX_CELLS:,} (use fewer `iterations`)")
    return width


def _rule_notes(contenders: list[Contender], mu: float) -> list[str]:
    """What the authors' (1 + mu) protocol means, and which contenders it does not apply to."""
    notes = [f"authors' protocol: stragglers are the workers slower than (1 + {mu:g}) x "
             "the fastest; a round whose stragglers leave the model waits for everyone"]
    for c in contenders:
        note = f"{c.name}: the authors' rule is not applied ({c.mu_not_applied})"
        if c.mu_not_applied is not None and note not in notes:
            notes.append(note)
    return notes


def _gains(contenders: list[Contender], runs: list[Run], rows: list[dict[str, Any]],
           setting: Setting) -> list[str]:
    """Speed-up of each partial-work or nested contender over its one-message code (row key
    and notes)."""
    by_name = {c.name: r for c, r in zip(contenders, runs, strict=True)}
    notes = []
    for c, row in zip(contenders, rows, strict=True):
        base = by_name.get(c.reference.name) if isinstance(c, Partial) else None
        if not isinstance(c, Partial) or base is None:
            continue
        gain = setting.intervals.ratio(base.durations, by_name[c.name].durations)
        row["gain_vs_one_message"] = gain
        value, lo, hi = gain["value"], gain["low"], gain["high"]
        shown = f"{value:.4g}" if lo is None else f"{value:.4g} (95% CI {lo:.4g}-{hi:.4g})"
        notes.append(f"{c.name}: one-message mean / {c.what} mean = "
                     f"{shown} (same delays; per-partition times = worker time x position / "
                     "load)")
    return notes


def _training(contenders: list[Contender], runs: list[Run], meter: Meter,
              options: tuple[str, float, float | None, int, Any, int | None, str | None],
              retimers: list[Any] | None, notes: list[str]) -> dict[str, Any]:
    """Training along the rounds (:mod:`gctool.sim.training`), held to the run's budget;
    ``options``: problem, gap, lazy, seed, sparsifier, models."""
    from gctool.sim.training import check_training_work, train

    kind, gap, lazy, seed, sparsify, models, precision = options
    check_training_work(contenders, runs, meter)
    if retimers is not None:
        notes.append("training on the link: a round lasts until the master has the messages it "
                     "used at their real sizes (sparsified: their non-zeros; a skipped lazy "
                     "upload: nothing), from the workers of the dense run; sequential schemes, "
                     "trees and ring all-reduce keep their dense rounds")
    return train(contenders, runs, kind, gap, lazy, seed, sparsify, models, retimers, precision)


def simulate(codes: list[tuple[str, GradientCode]], delay: DelayModel, *,  # noqa: PLR0913 (the options of gctool simulate)
             iterations: int = ITERATIONS,
             seed: int | None = None, baselines: bool = True,
             sgc: tuple[int, int, int] | str | None = None,
             train: str | None = None, gap: float = TARGET_GAP, lazy: float | None = None,
             protocol: str = PROTOCOLS[0], mu: float | None = None, sparsify: Any = None,
             erasurehead: int | None = None, link: Any = None,
             models: int | None = None, plot: str | os.PathLike[str] | None = None,
             gc_model: str | tuple[int, ...] | None = None,
             precision: str | None = None, budget: Budget | None = None) -> SimulationReport:
    """Simulate every code file and its baselines on the same delays.

    ``protocol``: ``"gctool"`` (stop at the earliest arrival after which the scheme can do its
    job, :mod:`gctool.sim.contenders`) or ``"authors"`` (Krishnan et al.'s rule: stragglers are
    the workers slower than (1 + ``mu``) x the fastest, and the master waits for everyone when
    that pattern leaves the scheme's model; ``mu`` None: :data:`~gctool.request.MU`, and a
    ``mu`` given with the other protocol is refused).  ``sgc``: the (B, W, λ) of the SR-SGC and
    M-SGC baselines, or ``"search"`` for the authors' parameter search: for each scheme, the
    (B, W, λ) with the smallest time per job among those whose load is at most the load
    (s + 1)/n of the file's GC (:func:`gctool.sim.sgc_search.candidates`), on these delays.
    ``sparsify``: a :class:`gctool.sim.sparsify.Sparsifier` applied to every uploaded message
    in training.  ``erasurehead``: also race ErasureHead on every file of the group shape
    (FRC), stopping after that many arrivals
    (:class:`gctool.sim.contenders.erasurehead.ErasureHead`).  ``link``
    (:class:`gctool.sim.network.Link`): every scheme pays per-message latency and bandwidth
    for what it sends (:mod:`gctool.sim.network`).  ``gc_model``: also race the count-based
    GC model (:class:`gctool.sim.contenders.count_gc.CountGC`) with every n of the files, at
    these s or (``"best"``) at the best s on these draws.  ``models``: with ``train``, the
    number of
    models trained concurrently (job t is a step of model t mod M; at least 1 + the largest
    delay).  ``seed`` (None: a fresh one) seeds the delays, the baselines and the training,
    and is recorded in the report.  ``plot`` writes the SVG of the run there atomically
    (``"-"``: stdout; :mod:`gctool.sim.plot`) and records it in ``report.plot``.  Neither
    ``delay`` nor anything else the caller passes is changed.  ``precision`` (float32,
    bfloat16, float16; with ``train``): every message is computed and sent, and every decoding
    done, as :mod:`gctool.precision` models it (float32 accumulation, values in that format).
    ``budget`` (default :meth:`Budget.default`) holds the whole run.
    """
    from gctool.sim import lineup

    width = _check_run(codes, iterations, protocol, mu)
    from gctool.sim.training import check_options

    check_options(train, lazy, sparsify, models, precision)
    if isinstance(sgc, str) and sgc != "search":
        raise InvalidInput("`sgc` must be B,W,LAMBDA or 'search'")
    if sgc is not None and not baselines:
        raise InvalidInput("`sgc` sets the SR-SGC and M-SGC baselines, which `no_baselines` "
                           "leaves out", param="sgc")
    _check_gc_model(codes, gc_model)
    delay = delay.for_codes(codes)
    if seed is None:  # a fresh seed, recorded in the report so that the run can be redone
        from gctool.seeds import fresh_seed

        seed = fresh_seed()
    rng = np.random.default_rng(seed)
    draws = delay.draws(iterations, width, rng)
    rule_mu = dict(zip(PROTOCOLS, (None, MU if mu is None else mu), strict=True))[protocol]
    setting = Setting(rule_mu, link, None, draws.flags, delay.straggler_probabilities(),
                      Intervals(draws.clusters, seed), functools.partial(delay.times, draws))
    notes: list[str] = []
    files = lineup.file_contenders(codes)
    extra = lineup.tree_companions([c for c in files if isinstance(c, Tree)], seed, link)
    if erasurehead is not None:
        extra += lineup.erasurehead_contenders(codes, erasurehead, notes)
    plans = lineup.baselines_of(codes) if baselines else []
    ns = sorted({code.n for _, code in codes})
    models_of_gc: list[Contender] = [CountGC(n, s) for n in ns for s in (
        range(n) if isinstance(gc_model, str) else gc_model or ())]
    plan = lineup.plan_run(files + extra + models_of_gc, plans, iterations, setting, sgc,
                           train is not None)
    budget = Budget.default() if budget is None else budget
    plan.check(budget)  # refuse, before any work, a run above the work budget
    meter = budget.meter(f"simulating {counted(len(plan.items), 'part')} for {iterations:,} rounds",
                         REMEDY)
    setting = dataclasses.replace(setting, meter=meter)
    search = None
    if sgc == "search":
        def search(n: int, s: int) -> list[Contender]:
            return _searched(n, s, seed, delay, draws, setting, notes, iterations)
    fixed = None if isinstance(sgc, str) else sgc
    built = [c for b in plans for c in b.build(seed, fixed, search)]
    contenders = files + built + extra
    if gc_model is not None:
        contenders += _count_gcs(ns, gc_model, delay, draws, setting, notes)
    if max(c.delay for c in contenders) >= iterations:
        raise InvalidInput("`iterations` must exceed the largest delay T of the schemes")
    runs = []
    #: with a link, training charges what its sparsified or lazy messages really carry
    retime = (train is not None and link is not None and rule_mu is None
              and (sparsify is not None or lazy is not None))
    retimers: list[Any] = []
    for c in contenders:
        meter.charge(cell_cost(iterations, c.n), f"the arrival times of {c.name}")
        times = delay.times(draws, c.loads)
        runs.append(c.run(times, setting))
        if retime:
            from gctool.sim.training import retimer

            retimers.append(retimer(c, times, link))
    ref = {c.n: r for c, r in zip(contenders, runs, strict=True) if isinstance(c, Uncoded)}
    rows = [_row(c, r, ref.get(c.n), delay, setting)
            for c, r in zip(contenders, runs, strict=True)]
    training = None
    if train is not None:
        training = _training(contenders, runs, meter,
                             (train, gap, lazy, seed, sparsify, models, precision),
                             retimers if retime else None, notes)
    notes = list(draws.notes) + notes
    if link is not None:
        notes.append(f"communication ({link.label}): every scheme pays latency + "
                     "size/bandwidth per message it sends, serialised at each receiver")
    if training is not None:
        from gctool.sim.contenders.encoded import training_notes

        notes += training_notes(training)
    notes += _gains(contenders, runs, rows, setting)
    if rule_mu is not None:
        notes += _rule_notes(contenders, rule_mu)
    notes.append("speed-up = mean of uncoded (same n) / mean of the scheme, on the same delays")
    misses = sum(r["deadline_misses"] for r in rows)
    report = SimulationReport(delay.label, iterations, seed, rows, training, notes, misses == 0,
                              protocol=protocol, mu=rule_mu, time_unit=delay.time_unit,
                              intervals=setting.intervals.label,
                              independent_rounds=setting.intervals.units)
    return report if plot is None else _plotted(report, plot)


def _plotted(report: SimulationReport, path: str | os.PathLike[str]) -> SimulationReport:
    """``report`` after writing its SVG to ``path`` (:func:`gctool.sim.plot.write_plot`)."""
    from gctool.sim.plot import write_plot

    write_plot(report, path)
    return report
