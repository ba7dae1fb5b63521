"""The code's values in ``bound``'s approximate-code table that the attack's searches find
faster than the table's own decoding of every set (:mod:`gctool.bounds.approx`, which sits below
the audits and takes them as finders): the threshold T_ε and the worst error at s, each by the
exhaustive search of ``attack`` (rotation orbits, compiled walks, the same tie rule), held to
the budget ``bound`` leaves them and estimated before it starts.  Above it a finder returns no
value and the refusal (what was not computed and its estimate: the table words its note); a
value found carries the search's estimate, which the table charges to its run."""

from __future__ import annotations

from gctool.audit import exhaustive
from gctool.audit.attack.options import AttackOptions, oracle_for
from gctool.audit.attack.thresholds import threshold_oracle
from gctool.audit.oracles import Oracle
from gctool.bounds.approx import ThresholdFinder, ThresholdValue, WorstFinder, WorstValue
from gctool.budget import NS_PER_S, Budget
from gctool.errors import BudgetExceeded
from gctool.model import GradientCode
from gctool.numerics import Tol


def table_threshold(budget: Budget) -> ThresholdFinder:
    """T_ε by the search of ``attack --threshold --method exhaustive``, every size estimated
    before any is searched (:func:`gctool.audit.exhaustive.threshold` ``upfront``): the exact
    value, or no value and the refusal at once."""

    def find(code: GradientCode, epsilon: Tol) -> ThresholdValue:
        opts = AttackOptions(method="exhaustive", budget=budget)
        oracle = None
        try:
            oracle = threshold_oracle(code, epsilon, 1.0, opts)  # its limit: the ε level
            found = exhaustive.threshold(oracle, oracle.limit, upfront=True)
        except BudgetExceeded as exc:
            return ThresholdValue(None, False, lower=exc.proved or 0, refusal=exc,
                                  seconds=_spent(oracle))
        return ThresholdValue(found.threshold, True, lower=found.lower,
                              seconds=oracle.estimated / NS_PER_S)

    return find


def table_worst(budget: Budget) -> WorstFinder:
    """The worst error at s by the search of ``attack -s S --method exhaustive`` (refused
    before it starts above the budget): whether every s-set decodes, else the worst raw
    error, exact."""

    def find(code: GradientCode, s: int) -> WorstValue:
        opts = AttackOptions(method="exhaustive", budget=budget)
        oracle = None
        try:
            oracle = oracle_for(code, opts)
            found = exhaustive.worst(oracle, s)
        except BudgetExceeded as exc:
            return WorstValue(None, False, refusal=exc, seconds=_spent(oracle))
        error, seconds = found.error, oracle.estimated / NS_PER_S
        if error is None or not bool(oracle.fails(error)):
            return WorstValue(0.0, True, seconds=seconds)
        return WorstValue(float(error), False, seconds=seconds)

    return find


def _spent(oracle: Oracle | None) -> float:
    """What a search refused after it started spent (seconds, as its oracle charged it: the
    oracle's set-up, the column witness), which the table charges to its run all the same."""
    return 0.0 if oracle is None else oracle.meter.spent / NS_PER_S
