"""Worst mode of ``attack``: the straggler set of size s with the largest decoding error.

``worst_outcome`` runs the chosen method (``exhaustive``, ``bnb``, ``greedy``, ``milp``) or the
``auto`` strategy: exhaustive when it fits the budget, else greedy, then branch and bound for
monotone errors, then the MILP over R/C; every step tightens the sandwich
``found <= true worst <= upper_bound``.  :func:`attack` turns the outcome into a
:class:`~gctool.reports.WorstReport`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace
from math import comb
from typing import Any

from gctool.audit import bnb, exhaustive, greedy
from gctool.audit.attack.figures import closed_form, diagnostics, random_means
from gctool.audit.attack.options import (
    AttackOptions,
    applies,
    checked_count,
    oracle_for,
    scale_of,
    setting,
)
from gctool.audit.checks import check_s
from gctool.audit.oracles import Oracle
from gctool.audit.outcome import WorstOutcome
from gctool.budget import START_NS
from gctool.errors import BudgetExceeded, InvalidInput, summarised
from gctool.exactls import Undecided
from gctool.model import GradientCode
from gctool.reports import WorstReport


def largest(oracle: Oracle) -> tuple[float | None, str]:
    """The largest error the decoder can leave (a proved upper bound), and why."""
    if oracle.max_error is None:
        return None, ""
    if oracle.finite:
        return oracle.max_error, "an indicator error is at most 1"
    what = "||t||^2 (the decoder a = 0)" if oracle.kind == "optimal" else "every group lost"
    return oracle.max_error, f"largest possible error {what}"


def worst_outcome(oracle: Oracle, s: int, opts: AttackOptions,
                  starts: Sequence[Sequence[int]] = ()) -> WorstOutcome:
    """Run the chosen method for the worst set of size s."""
    method = opts.method
    top, why = largest(oracle)
    if method == "elementary":
        raise InvalidInput("the elementary method computes exact thresholds: use `threshold`, "
                           "or another `method` for the worst case")
    if method == "auto":
        return _auto_worst(oracle, s, opts, starts)
    if method == "exhaustive":
        return exhaustive.worst(oracle, s, symmetry=opts.symmetry, jobs=opts.jobs,
                                progress=opts.progress, runner=opts.runner)
    g = _greedy(oracle, s, opts, starts, restarts=opts.restarts if method == "greedy" else 4)
    if method == "greedy":
        g.tighten(top, why)
        return g
    if method == "bnb":
        out = bnb.bnb_worst(oracle, s, incumbent=g, max_nodes=opts.max_nodes,
                            progress=opts.progress)
    else:
        from gctool.audit.milp import milp_worst

        out = milp_worst(oracle, s, time_limit=opts.time_limit, incumbent=g)
    out.tighten(top, why)
    return out


def _greedy(oracle: Oracle, s: int, opts: AttackOptions, starts: Sequence[Sequence[int]],
            restarts: int) -> WorstOutcome:
    top, _ = largest(oracle)
    return greedy.greedy(oracle, s, seed=opts.drawn_seed, restarts=restarts, starts=starts,
                         stop_at=top, progress=opts.progress)


def _auto_worst(oracle: Oracle, s: int, opts: AttackOptions,
                starts: Sequence[Sequence[int]]) -> WorstOutcome:
    """exhaustive within the budget, else greedy, then bnb and the MILP while the work
    budget lasts; a budget stop keeps the best set found so far, labelled heuristic."""
    top, why = largest(oracle)
    try:
        return exhaustive.worst(oracle, s, symmetry=opts.symmetry, jobs=opts.jobs,
                                progress=opts.progress, runner=opts.runner)
    except Undecided:  # a set float64 cannot decide ends the run, as with every method
        raise
    except BudgetExceeded:  # over the budget, refused before any set
        pass
    trail = ["exhaustive over budget"]
    best = greedy.greedy(oracle, s, seed=opts.drawn_seed, restarts=opts.restarts, starts=starts,
                         stop_at=top, progress=opts.progress, keep_at_budget=True)
    best.tighten(top, why)
    trail.append("greedy")
    step, stop = "greedy", ""
    try:
        if not best.exact and not best.budget_stopped and applies("bnb", oracle):
            step = "bnb"
            found = bnb.bnb_worst(oracle, s, incumbent=best, max_nodes=opts.max_nodes,
                                  progress=opts.progress)
            found.tighten(top, why)
            best = found
            trail.append("bnb")
        if not best.exact and not best.budget_stopped and applies("milp", oracle):
            from gctool.audit.milp import milp_worst

            step = "milp"
            m = milp_worst(oracle, s, time_limit=opts.time_limit, incumbent=best)
            m.notes = best.notes + m.notes
            m.tighten(best.upper, best.upper_source)
            best = m
            trail.append("milp")
    except Undecided:
        raise
    except BudgetExceeded as exc:
        best.budget_stopped, stop = True, f" ({exc})"
        trail.append(step)
    if best.budget_stopped:
        trail[-1] += " stopped by the budget"
        best.stopped(stop)  # exact when the error found reaches the proved upper bound
    best.notes.insert(0, "auto: " + " -> ".join(trail))
    return best


def attack(code: GradientCode, s: int, options: AttackOptions | None = None,
           **changes: Any) -> WorstReport:
    """The worst straggler set of size ``s`` under ``options.decoder``, found by
    ``options.method`` (keywords: changes to ``options``, see :class:`AttackOptions`)."""
    check_s(s, code.n, allow_all=True)
    with summarised(f"interrupted before the search of the {comb(code.n, s):,} straggler sets "
                    f"of size {s} started (0 checked); no verdict"):
        return _attack(code, s, options, **changes)


def _attack(code: GradientCode, s: int, options: AttackOptions | None, **changes: Any
            ) -> WorstReport:
    opts = AttackOptions.of(options, **changes).for_search()
    scale = scale_of(code, opts.normalize)
    start = time.perf_counter()
    if opts.method == "exhaustive":
        # estimated before the oracle's O(n^3) set-up: the sets an exhaustive search would
        # evaluate (auto falls back to the bounded solvers above either budget)
        rot, skipped = None, 0.0
        if opts.symmetry and opts.decoder == "optimal":  # held to the budget, which the
            # oracle is then made with (what the detection leaves)
            rot, budget, skipped = exhaustive.detected_before(code, s, opts.budget)
            opts = replace(opts, budget=budget)
        need = exhaustive.count_evaluated(code.n, s, rot)
        if not exhaustive.may_use_hat(code, s):
            work = exhaustive.set_work(code, s, need)
            used = exhaustive.used_jobs(need, opts.jobs, opts.runner)
            if not exhaustive.may_time(code.n, s, need, opts.budget, work, used, opts.runner):
                exhaustive.check_sets(code, s, need, opts.budget, work, used, START_NS,
                                      skipped,
                                      others=exhaustive.others_for(setting(code, opts.decoder)))
    oracle = oracle_for(code, opts)
    found = worst_outcome(oracle, s, opts)
    report = _worst_report(code, oracle, s, found, scale, opts)
    report.random = random_means(oracle, s if opts.random else None, opts.p, scale, opts,
                                 report.notes)
    report.elapsed_s = time.perf_counter() - start
    return report


def _worst_report(code: GradientCode, oracle: Oracle, s: int, found: WorstOutcome,
                  scale: float, opts: AttackOptions) -> WorstReport:
    err = found.error
    decodes = not bool(oracle.fails(err))
    reason = ("every straggler set of this size still decodes" if decodes and found.exact
              else "the worst set leaves an error" if found.exact
              else "heuristic: the true worst error is at least this")
    report = WorstReport(
        s=s, n=code.n, k=code.k, field=str(code.field),
        stragglers=found.stragglers, error=err / scale, raw_error=err, normalize=opts.normalize,
        decoder=oracle.kind, method=found.method, exact=found.exact,
        checked=checked_count(found.method, found.checked, oracle.evaluations),
        total=found.total, reason=reason, diagnostics=diagnostics(oracle, found.stragglers),
        scheme=code.scheme, decoder_label=oracle.label, decoder_info=oracle.describe(),
        scale=scale, seed=opts.drawn_seed, evaluations=oracle.evaluations, notes=list(found.notes))
    if found.upper is not None:
        report.raw_upper_bound = found.upper
        report.upper_bound = found.upper / scale
        report.upper_bound_source = found.upper_source
    report.closed_form = closed_form(code, oracle, s, err, scale, found.exact)
    return report
