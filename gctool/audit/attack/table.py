"""The code's values in ``bound``'s approximate-code table that the attack's searches find
faster than the table's own decoding of every set (:mod:`gctool.bounds.approx`, which sits below
the audits and takes them as finders): the threshold T_ε and the worst error at s, each by the
exhaustive search of ``attack`` (rotation orbits, compiled walks, the same tie rule), held to
the request's work budget and estimated before it starts.  Above the budget a finder returns no
value and the refusal: what was not computed, its estimate and the budget that computes it."""

from __future__ import annotations

from gctool.audit import exhaustive
from gctool.audit.attack.options import AttackOptions, oracle_for
from gctool.bounds.approx import ThresholdFinder, ThresholdValue, WorstFinder, WorstValue
from gctool.budget import Budget, compute_hint
from gctool.errors import BudgetExceeded
from gctool.model import GradientCode
from gctool.numerics import threshold_level


def _not_computed(exc: BudgetExceeded) -> str:
    """A refusal as the table's note, suggesting the budget that computes it (the attack's own
    remedies name options ``bound`` does not have)."""
    if exc.kind == "work" and exc.needed is not None:
        exc = exc.with_remedy(compute_hint(exc.needed))
    return f"not computed: {exc}"


def table_threshold(budget: Budget) -> ThresholdFinder:
    """T_ε by the search of ``attack --threshold --method exhaustive``, every size estimated
    before any is searched (:func:`gctool.audit.exhaustive.threshold` ``upfront``): the exact
    value, or no value and the refusal at once."""

    def find(code: GradientCode, epsilon: float) -> ThresholdValue:
        opts = AttackOptions(method="exhaustive", budget=budget)
        try:
            oracle = oracle_for(code, opts)
            found = exhaustive.threshold(oracle, threshold_level(epsilon, oracle.limit),
                                         upfront=True)
        except BudgetExceeded as exc:
            return ThresholdValue(None, False, _not_computed(exc), exc.proved or 0)
        return ThresholdValue(found.threshold, True, lower=found.lower)

    return find


def table_worst(budget: Budget) -> WorstFinder:
    """The worst error at s by the search of ``attack -s S --method exhaustive`` (refused
    before it starts above the budget): whether every s-set decodes, else the worst raw
    error, exact."""

    def find(code: GradientCode, s: int) -> WorstValue:
        opts = AttackOptions(method="exhaustive", budget=budget)
        try:
            oracle = oracle_for(code, opts)
            found = exhaustive.worst(oracle, s)
        except BudgetExceeded as exc:
            return WorstValue(None, False, _not_computed(exc))
        error = found.error
        if error is None or not bool(oracle.fails(error)):
            return WorstValue(0.0, True)
        return WorstValue(float(error), False)

    return find
