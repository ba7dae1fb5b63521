"""CI gates on audit reports: conditions a user adds on top of the audited property.

A report that fails a gate it was asked for is not ok (``report.ok`` is False, as for
``attack`` with ``require_tolerance``); its ``verdict`` still says what the audit itself
found, and ``report.gates["failures"]`` says which gate failed.

``verify`` with ``max_condition`` X fails a real/complex code whose worst condition number over
the decoding systems exceeds X (or cannot be bounded); with ``strict`` it fails on any numerical
warning.  Both decide on the worst over every straggler set: when the report's figure is only a
lower bound (its screen re-evaluates the weakest sets), a limit at or above the proved bound
passes, a figure above the limit fails (a witness set), and in between the exact worst is
computed (:func:`settle_condition`, within the budget: refused above it, never guessed).
Exact arithmetic (GF(q), ``exact``) has no condition number, so it passes both.  With
``precision`` P and ``max_error`` E it fails when the proved error bound in P exceeds E on some
straggler set (:mod:`gctool.precision`; GF(q) codes are exact and pass).
"""

from __future__ import annotations

from math import comb
from typing import Any

from gctool.reports import LOWER_BOUND


def numerical_gates(report: Any, max_condition: float | None = None,
                    strict: bool = False, code: Any = None, budget: Any = None) -> list[str]:
    """The gates ``report`` fails, one sentence each (empty: every gate passes).  When the
    report's worst condition is a lower bound (``max_condition_kind``) and the gate's answer
    hinges on the sets it does not cover, the exact worst over every set is computed from
    ``code`` (:func:`settle_condition`, within ``budget``) and replaces it in the report."""
    failures: list[str] = []
    numeric = getattr(report, "arithmetic", "exact") == "float64"
    d = getattr(report, "diagnostics", None)
    if max_condition is not None and numeric and d is not None and report.ok:
        if _undecided(d, max_condition):
            settle_condition(report, code, budget)
        cond = d.max_condition if d.max_condition is not None else d.condition_bound
        if d.max_condition_kind == LOWER_BOUND and (cond is None or cond <= max_condition):
            # no witness above the limit and no exact figure (no code given): the proved bound
            bound = d.condition_bound
            if bound is None or bound > max_condition:
                failures.append(
                    f"`max_condition` {max_condition:g}: the worst condition number is at least "
                    f"{_g(d.max_condition)} (a lower bound) and "
                    + ("unbounded" if bound is None else f"at most {bound:.3g}")
                    + ", so it cannot be shown to be below the limit")
        elif cond is None:
            failures.append(f"`max_condition` {max_condition:g}: the worst condition number "
                            "was not computed, so it cannot be shown to be below the limit")
        elif cond > max_condition:
            where = (f" at stragglers {d.max_condition_stragglers}"
                     if d.max_condition_stragglers else "")
            failures.append(f"`max_condition` {max_condition:g}: worst condition number "
                            f"{cond:.3g}{where} exceeds it")
    if strict and numeric and d is not None and report.ok:
        from gctool.audit.verify.diagnostics import ILL_CONDITIONED

        if _undecided(d, ILL_CONDITIONED):
            settle_condition(report, code, budget)
    if strict:
        failures += [f"`strict`: {w}" for w in getattr(report, "warnings", [])]
    return failures + precision_gates(getattr(report, "precision", None))


def _g(x: float | None) -> str:
    return "unknown" if x is None else f"{x:.3g}"


def _undecided(d: Any, limit: float) -> bool:
    """Whether a lower-bound worst condition leaves ``limit`` open: the figure is at most the
    limit and no proved bound is."""
    if d.max_condition_kind != LOWER_BOUND:
        return False
    if d.max_condition is not None and d.max_condition > limit:
        return False  # a witness set above the limit
    return d.condition_bound is None or d.condition_bound > limit


def settle_condition(report: Any, code: Any, budget: Any = None) -> None:
    """Replace the report's lower-bound worst condition by the exact worst over every
    straggler set of size ``report.s`` (:func:`gctool.codes.conditioning.worst_set`, the
    record ``design`` makes), with its set, and its ill-conditioned warning; refused above
    ``budget`` (:class:`~gctool.errors.BudgetExceeded`), never guessed.  Without ``code``
    the figure stays a lower bound (the gates then go by the proved bound alone)."""
    import numpy as np

    if code is None or np.asarray(code.B).shape[0] != report.n:
        return

    from gctool.audit.verify.diagnostics import ill_conditioned
    from gctool.budget import Budget, format_count
    from gctool.codes.conditioning import worst_set, worst_set_time

    B = np.asarray(code.B)
    total = comb(B.shape[0], report.s)
    (Budget.default() if budget is None else budget).check_work(
        f"the exact worst condition number over all {format_count(total)} straggler sets "
        "(the screen only bounds it, and the gate's limit lies between its figure and its "
        "bound)", worst_set_time(B, report.s),
        "raise `max_work`, or choose a limit above the proved bound")
    d = report.diagnostics
    old = ill_conditioned(d)
    value, stragglers = worst_set(B, report.s)
    d.max_condition = float(value) if np.isfinite(value) else None
    d.max_condition_stragglers = stragglers
    d.max_condition_kind = "exact"
    d.condition_bound = d.max_condition if d.max_condition is not None else d.condition_bound
    new = ill_conditioned(d)
    warnings = [w for w in report.warnings if w != old]
    report.warnings = warnings + ([new] if new is not None else [])


def precision_gates(precision: Any) -> list[str]:
    """The failure of a precision report (:class:`gctool.reports.PrecisionReport`): its bound
    above ``max_error``, or an observed error above the bound (a gctool bug)."""
    if precision is None or precision.ok:
        return []
    head = ("" if precision.max_error is None
            else f"`max_error` {precision.max_error:g}: ")
    return [head + precision.reason]


def apply_gates(report: Any, max_condition: float | None = None, strict: bool = False,
                code: Any = None, budget: Any = None) -> bool:
    """Record the gates in ``report.gates`` (when any is asked for), clear ``report.ok`` when
    one fails, and return whether the report passes them all (``code``, ``budget``: for the
    exact worst condition, :func:`numerical_gates`)."""
    precision = getattr(report, "precision", None)
    max_error = None if precision is None else precision.max_error
    if max_condition is None and not strict and (precision is None or
                                                 (max_error is None and precision.ok)):
        return True
    failures = numerical_gates(report, max_condition, strict, code, budget)
    report.gates = {"max_condition": max_condition, "strict": strict, "failures": failures}
    if precision is not None:
        report.gates["max_error"] = max_error
    if failures:
        report.ok = False
    return not failures


def passed(report: Any) -> bool:
    """Whether ``report`` passes the gates recorded in it by :func:`apply_gates` (True when
    none was asked for)."""
    gates = getattr(report, "gates", None)
    return not (gates and gates["failures"])
