"""Threshold mode of ``attack``: ``T_eps = min{|S| : err(S) > eps}``, the fewest stragglers
whose error exceeds ``epsilon`` (strict, so eps = 0 gives the exact threshold T_0).

Over R/C an error counts as exceeding eps only when it is also above the decoding tolerance
``tol * k``, so that round-off never makes a decodable set "fail".  Methods: ``exhaustive``
(sizes in increasing order), ``elementary`` (exact T_0 under optimal decoding), ``milp``,
``bnb`` and ``greedy`` (size by size), and ``auto`` (in that order, each while it fits its
budget).  Every result carries ``threshold_lower <= T <= threshold_upper``; the gate
``require`` fails the report unless the threshold is proved high enough.
"""

from __future__ import annotations

import time
from fractions import Fraction
from math import comb
from typing import Any

from gctool.audit import bnb, exhaustive, greedy
from gctool.audit.attack.figures import diagnostics
from gctool.audit.attack.options import (
    THRESHOLD_ORDER,
    AttackOptions,
    applies,
    checked_count,
    oracle_for,
    scale_of,
)
from gctool.audit.oracles import Oracle
from gctool.audit.outcome import ThresholdOutcome
from gctool.errors import BudgetExceeded, InvalidInput, summarised
from gctool.exactls import Undecided
from gctool.model import GradientCode
from gctool.numerics import Tol, check_tol, level_tol, typed
from gctool.reports import ThresholdReport
from gctool.wording import counted


def threshold_outcome(oracle: Oracle, epsilon: float, opts: AttackOptions) -> ThresholdOutcome:
    """Fewest stragglers whose raw error exceeds ``epsilon`` (and the decoding limit), on an
    oracle made for it (:func:`threshold_oracle`: its limit is the level epsilon + tol*k).

    Over R/C an error must exceed epsilon by more than the decoding tolerance tol*k to count:
    errors within that resolution of epsilon are ties (err = epsilon, which does not exceed it),
    so exact ties such as a fully straggled 0/1 partition (err = 1 at epsilon = 1) are not
    decided by round-off; errors at the level itself are decided exactly, like verify's.  For
    epsilon = 0 this is the usual "does not decode" test.
    """
    limit = oracle.limit
    if epsilon > 0:
        epsilon = limit
    method = opts.method
    if method == "exhaustive":
        return exhaustive.threshold(oracle, limit, symmetry=opts.symmetry, jobs=opts.jobs,
                                    progress=opts.progress, runner=opts.runner)
    if method == "elementary":
        return _elementary(oracle, epsilon, opts)
    if method == "milp":
        from gctool.audit.milp import milp_threshold

        return milp_threshold(oracle, epsilon, resolution=opts.resolution,
                              time_limit=opts.time_limit)
    if method == "bnb":
        return _bnb_threshold(oracle, limit, opts, 0)
    if method == "greedy":
        return _greedy_threshold(oracle, limit, opts, 0)
    return _auto_threshold(oracle, epsilon, limit, opts)


def _elementary(oracle: Oracle, epsilon: float, opts: AttackOptions) -> ThresholdOutcome:
    from gctool.audit.elementary import elementary_threshold
    from gctool.audit.oracles import OptimalOracle

    if not isinstance(oracle, OptimalOracle) or epsilon != 0:
        raise InvalidInput("the elementary method gives the exact threshold (epsilon = 0) "
                           "under optimal decoding")
    return elementary_threshold(oracle, progress=opts.progress)


class _Found:
    """What ``auto`` has established so far: the trail of methods, the proved lower bound and
    the smallest checked witness, so that a budget stop degrades to them."""

    def __init__(self) -> None:
        self.trail: list[str] = []
        self.lower = 0
        self.witness: ThresholdOutcome | None = None
        #: the first budget stop (exhaustive's): a refusal of work not started, which the
        #: meter's later charges would word as spent
        self.first: BudgetExceeded | None = None

    def keep(self, out: ThresholdOutcome) -> None:
        """Record ``out``'s proved lower bound and its witness (the smaller one wins)."""
        self.lower = max(self.lower, out.lower)
        if out.threshold is not None and out.stragglers is not None and (
                self.witness is None or self.witness.threshold is None
                or out.threshold < self.witness.threshold):
            self.witness = out

    def degraded(self, oracle: Oracle, limit: float, exc: BudgetExceeded, step: str
                 ) -> ThresholdOutcome:
        """The result so far when the work budget stopped ``step``: heuristic unless the
        witness meets the proved lower bound (:meth:`ThresholdOutcome.stopped`).  With no
        witness yet, the holders of the least replicated partitions are one, on their own
        estimate when it fits the budget; when it does not and nothing was found, the budget
        stop ``exc`` is the answer (a refusal)."""
        skipped = False
        if self.witness is None and oracle.monotone:
            # the holders of the least replicated partition: a few sets, on their own estimate
            # (up to 8 of them: a conservative one, the first usually fails)
            work = oracle.set_work(0, 8)
            skipped = not oracle.budget.affords(work)
        if self.witness is None and oracle.monotone and not skipped:
            meter = oracle.meter
            meter.limit = max(meter.limit, meter.spent + work)
            try:
                cap = exhaustive.column_witness(oracle, limit)
            except Undecided:
                raise
            except BudgetExceeded:  # their exact decisions, timed as they are spent
                cap = None
            if cap is not None:
                self.keep(ThresholdOutcome(len(cap[0]), sorted(cap[0]), cap[1], False,
                                           "auto", 0))
        w = self.witness
        if w is None and self.lower == 0 and skipped:
            # nothing proved, no witness: the budget affords no part of the search
            raise self.first or exc
        t = None if w is None else w.threshold
        method = "auto" if w is None else w.method
        out = ThresholdOutcome(t, None if w is None else w.stragglers,
                               None if w is None else w.error, False, method,
                               self.lower if t is None else min(self.lower, t),
                               checked_count(method, 0 if w is None else w.checked,
                                             oracle.evaluations))
        if w is not None:
            out.resolution = w.resolution
        trail = self.trail[:-1] if self.trail[-1:] == [step] else self.trail
        out.notes.append("auto: " + " -> ".join(trail + [f"{step} stopped by the budget"]))
        out.stopped(oracle.n, str(exc))  # exact when the proved bounds meet
        return out


def _auto_threshold(oracle: Oracle, epsilon: float, limit: float, opts: AttackOptions
                    ) -> ThresholdOutcome:
    """exhaustive, elementary, milp, bnb, greedy, each while it fits its budget; a budget stop
    degrades to what was found so far, labelled heuristic (:class:`_Found`).  A set that
    float64 cannot decide (:class:`~gctool.exactls.Undecided`) is no budget stop: it ends the
    search, as it ends every method's."""
    found = _Found()
    step = "exhaustive"
    before = oracle.meter.spent
    try:
        try:
            return exhaustive.threshold(oracle, limit, symmetry=opts.symmetry, jobs=opts.jobs,
                                        progress=opts.progress, runner=opts.runner)
        except Undecided:
            raise
        except BudgetExceeded as exc:
            found.first = exc
            found.trail.append("exhaustive over budget")
            found.lower = exc.proved or 0  # the sizes it enumerated before the budget stop
            _leave_rest(oracle, before)
        for step in THRESHOLD_ORDER[1:-1]:  # the exact methods after exhaustive
            out = _auto_step(step, oracle, epsilon, limit, opts, found)
            if out is not None:
                return out
        step = THRESHOLD_ORDER[-1]  # greedy
        out = _greedy_threshold(oracle, limit, opts, found.lower)
    except Undecided:
        raise
    except BudgetExceeded as exc:
        return found.degraded(oracle, limit, exc, step)
    out.notes.insert(0, "auto: " + " -> ".join(found.trail + ["greedy"]))
    return out


def _leave_rest(oracle: Oracle, before: float) -> None:
    """Hold the methods after auto's exhaustive search (stopped by the budget) to what its
    sizes left of the budget: their estimate on their jobs (``oracle.estimated``, the run's
    start included) after the meter's ``before`` (the decoder's set-up).  The sizes it ran
    were let onto the meter above the budget (:meth:`~gctool.budget.Meter.admit`: calibrated
    and timed estimates of one core's work) and charged it little or nothing (a compiled
    walk): random dense complex n=200 on two jobs gave a MILP 20 s of nodes after sizes
    estimated at 4.8 s of a 5 s budget, 76 s in all."""
    meter = oracle.meter
    rest = oracle.budget.work_ns - (before + oracle.estimated)
    meter.limit = min(meter.limit, meter.spent + max(0.0, rest))


def _auto_step(step: str, oracle: Oracle, epsilon: float, limit: float, opts: AttackOptions,
               found: _Found) -> ThresholdOutcome | None:
    """One exact method of ``auto`` when it applies and fits: its result when final, else None
    (what it proved is kept in ``found``)."""
    if not applies(step, oracle, epsilon) or (step == "bnb" and not oracle.monotone):
        return None  # (auto's bnb of a threshold: on monotone errors, from a column witness)
    if step == "elementary":
        from gctool.audit import elementary
        from gctool.audit.oracles import OptimalOracle

        assert isinstance(oracle, OptimalOracle)
        cap = oracle.budget.max_sets
        if not oracle.meter.affords(elementary.work(oracle)) or (
                cap is not None and elementary.cost(oracle) > cap):  # (work first: the rank)
            found.trail.append("elementary over budget")
            return None
        out = _elementary(oracle, epsilon, opts)
        out.notes.insert(0, "auto: " + " -> ".join(found.trail + ["elementary"]))
        return out
    if step == "milp":
        from gctool.audit.milp import milp_threshold

        found.trail.append("milp")
        out = milp_threshold(oracle, epsilon, resolution=opts.resolution,
                             time_limit=opts.time_limit)
    else:
        found.trail.append("bnb")
        out = _bnb_threshold(oracle, limit, opts, found.lower, found)
    if out.exact or (step == "bnb" and out.threshold is not None):
        out.notes.insert(0, "auto: " + " -> ".join(found.trail))
        return out
    found.keep(out)
    return None


def _bnb_threshold(oracle: Oracle, limit: float, opts: AttackOptions, lower: int,
                   found: _Found | None = None) -> ThresholdOutcome:
    """bnb size by size from ``lower``; ``found`` (auto) records the column witness and each
    size proved, so that a budget stop keeps them."""
    n = oracle.n
    cap = exhaustive.column_witness(oracle, limit) if oracle.monotone else None
    if cap is not None and found is not None:
        found.keep(ThresholdOutcome(len(cap[0]), sorted(cap[0]), cap[1], False, "bnb", 0))
    top = len(cap[0]) if cap else n
    nodes, proven = 0, lower
    out: ThresholdOutcome | None = None
    for t in range(lower, top + 1):
        res = bnb.search(oracle, t, limit, max_nodes=opts.max_nodes, first=True)
        nodes += res.nodes
        if res.stragglers is not None:
            out = ThresholdOutcome(t, sorted(res.stragglers), res.error, proven == t, "bnb",
                                   proven, nodes, 0)
            break
        if not res.complete:
            break
        proven = t + 1
        if found is not None:
            found.lower = max(found.lower, proven)
    if out is None:
        out = _bnb_without_witness(cap, proven, nodes, n)
    # (``checked``: the nodes, which the report replaces by the decoder's evaluations)
    out.notes.append(f"branch and bound: {counted(nodes, 'node')}")
    return out


def _bnb_without_witness(cap: tuple[list[int], float] | None, proven: int, nodes: int, n: int
                         ) -> ThresholdOutcome:
    """bnb's threshold when its search found no witness: the column witness ``cap`` once the
    sizes below it are proved, none when no size up to n exceeds, else the proved bound."""
    if cap is not None and proven >= len(cap[0]):
        return ThresholdOutcome(len(cap[0]), sorted(cap[0]), cap[1], True, "bnb", len(cap[0]),
                                nodes, 0)
    if proven > n:
        return ThresholdOutcome(None, None, None, True, "bnb", n + 1, nodes, 0)
    out = ThresholdOutcome(None, None, None, False, "bnb", proven, nodes, 0)
    if cap is not None:
        out.threshold, out.stragglers, out.error = len(cap[0]), sorted(cap[0]), cap[1]
    out.notes.append(f"branch and bound stopped at the node budget at size {proven}")
    return out


def _greedy_threshold(oracle: Oracle, limit: float, opts: AttackOptions, lower: int
                      ) -> ThresholdOutcome:
    n = oracle.n
    cap = exhaustive.column_witness(oracle, limit) if oracle.monotone else None
    top = len(cap[0]) if cap else n
    evals = 0
    for t in range(max(lower, 0), top + 1):
        g = greedy.greedy(oracle, t, seed=opts.drawn_seed, restarts=opts.restarts, stop_at=None)
        evals += g.checked
        if g.stragglers is not None and bool(oracle.fails(g.error)) and g.error > limit:
            out = ThresholdOutcome(t, g.stragglers, g.error, lower == t, "greedy", lower,
                                   evals, 0)
            out.notes.append("greedy per size: the witness is verified, smaller sizes are "
                             "not proved" if lower < t else "sizes below were proved")
            return out
    if cap is not None:
        return ThresholdOutcome(len(cap[0]), sorted(cap[0]), cap[1], lower == len(cap[0]),
                                "greedy", lower, evals, 0)
    return ThresholdOutcome(None, None, None, False, "greedy", lower, evals, 0)


def threshold(code: GradientCode, epsilon: Tol = 0.0, options: AttackOptions | None = None,
              **changes: Any) -> ThresholdReport:
    """The adversarial threshold: the fewest stragglers whose error exceeds ``epsilon``
    (keywords: changes to ``options``, see :class:`AttackOptions`; ``require`` or
    ``require_tolerance`` make the report fail unless the threshold is proved high enough)."""
    opts = AttackOptions.of(options, **changes)
    opts.check()
    epsilon = check_tol(epsilon, "epsilon")  # typed like tol: a float, Fraction or decimal
    with summarised(f"interrupted before the threshold search on n = {code.n} started "
                    "(0 straggler sets checked); no verdict"):
        return _threshold(code, epsilon, opts)


def _threshold(code: GradientCode, epsilon: float | Fraction, opts: AttackOptions
               ) -> ThresholdReport:
    scale = scale_of(code, opts.normalize)
    if code.field.is_finite and epsilon != 0:
        raise InvalidInput(f"over {code.field} decoding either succeeds or fails: use epsilon = 0")
    oracle = threshold_oracle(code, epsilon, scale, opts)
    start = time.perf_counter()
    found = threshold_outcome(oracle, float(epsilon) * scale, opts)
    report = _threshold_report(code, oracle, found, epsilon, scale, opts)
    _apply_require(report, found, opts)
    report.elapsed_s = time.perf_counter() - start
    return report


def threshold_oracle(code: GradientCode, epsilon: Tol, scale: float, opts: AttackOptions
                     ) -> Oracle:
    """The oracle of ``opts`` whose decoding limit is the threshold's level: the tolerance
    :func:`gctool.numerics.level_tol` of the raw epsilon (``epsilon * scale``, exactly)."""
    if epsilon == 0 or code.field.is_finite:
        return oracle_for(code, opts)
    raw = typed(epsilon) * int(scale)
    return oracle_for(code, AttackOptions.of(opts, tol=level_tol(opts.tolerance, raw, code.k)))


def _threshold_report(code: GradientCode, oracle: Oracle, found: ThresholdOutcome,
                      typed_epsilon: float | Fraction, scale: float, opts: AttackOptions
                      ) -> ThresholdReport:
    epsilon = float(typed_epsilon)  # reported as its float (a Fraction prints no :g)
    t, S, err = found.threshold, found.stragglers, found.error
    if t is not None and found.exact:
        reason = (f"straggling {counted(t, 'worker')} {S} pushes the error above {epsilon:g}; "
                  f"no set of {t - 1} or fewer does")
    elif t is not None:
        reason = (f"straggling {counted(t, 'worker')} {S} pushes the error above {epsilon:g}; "
                  f"sets "
                  f"smaller than {found.lower} are proved not to (heuristic in between)")
    elif found.exact:
        reason = f"no straggler set pushes the error above {epsilon:g}"
    else:
        reason = f"no witness found; sets smaller than {found.lower} are proved not to exceed"
    if found.resolution is not None:
        reason += (f" (MILP resolution {found.resolution:g}: errors below it count as "
                   "decodable)")
    total = found.total or sum(comb(code.n, x) for x in range(code.n + 1))
    return ThresholdReport(
        s=t, n=code.n, k=code.k, field=str(code.field), stragglers=S,
        error=None if err is None else err / scale, raw_error=err, normalize=opts.normalize,
        decoder=oracle.kind, method=found.method, exact=found.exact,
        checked=checked_count(found.method, found.checked, oracle.evaluations),
        total=total, threshold=t, epsilon=epsilon, comparison="error > epsilon",
        reason=reason, diagnostics=diagnostics(oracle, S), scheme=code.scheme,
        decoder_label=oracle.label, decoder_info=oracle.describe(), scale=scale,
        threshold_lower=min(found.lower, code.n + 1), threshold_upper=t,
        resolution=found.resolution, seed=opts.drawn_seed, evaluations=oracle.evaluations,
        notes=list(found.notes))


def _apply_require(report: ThresholdReport, found: ThresholdOutcome, opts: AttackOptions
                   ) -> None:
    report.require, report.require_tolerance = opts.required, opts.require_tolerance
    require = opts.required
    if require is None:
        return
    t = found.threshold
    if t is not None and t < require:
        report.require_status, report.ok = "below", False
        report.reason += f"; below the required {require}"
    elif (t is None and found.exact) or found.lower >= require or (found.exact and t is not None):
        report.require_status = "met"
    else:
        report.require_status, report.ok = "unproven", False
        report.reason += (f"; cannot prove the threshold is >= {require} (proved >= "
                          f"{found.lower}): raise the budget or use an exact method")
