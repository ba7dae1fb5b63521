"""CI gates on audit reports: conditions a user adds on top of the audited property.

A report that fails a gate it was asked for is not ok (``report.ok`` is False, as for
``attack`` with ``require_tolerance``); its ``verdict`` still says what the audit itself
found, and ``report.gates["failures"]`` says which gate failed.

``verify`` with ``max_condition`` X fails a real/complex code whose worst condition number over
the decoding systems exceeds X (or cannot be bounded); with ``strict`` it fails on any numerical
warning.  Exact arithmetic (GF(q), ``exact``) has no condition number, so it passes both.  With
``precision`` P and ``max_error`` E it fails when the proved error bound in P exceeds E on some
straggler set (:mod:`gctool.precision`; GF(q) codes are exact and pass).
"""

from __future__ import annotations

from typing import Any


def numerical_gates(report: Any, max_condition: float | None = None,
                    strict: bool = False) -> list[str]:
    """The gates ``report`` fails, one sentence each (empty: every gate passes)."""
    failures: list[str] = []
    numeric = getattr(report, "arithmetic", "exact") == "float64"
    d = getattr(report, "diagnostics", None)
    if max_condition is not None and numeric and d is not None and report.ok:
        cond = d.max_condition if d.max_condition is not None else d.condition_bound
        if cond is None:
            failures.append(f"`max_condition` {max_condition:g}: the worst condition number "
                            "was not computed, so it cannot be shown to be below the limit")
        elif cond > max_condition:
            where = (f" at stragglers {d.max_condition_stragglers}"
                     if d.max_condition_stragglers else "")
            failures.append(f"`max_condition` {max_condition:g}: worst condition number "
                            f"{cond:.3g}{where} exceeds it")
    if strict:
        failures += [f"`strict`: {w}" for w in getattr(report, "warnings", [])]
    return failures + precision_gates(getattr(report, "precision", None))


def precision_gates(precision: Any) -> list[str]:
    """The failure of a precision report (:class:`gctool.reports.PrecisionReport`): its bound
    above ``max_error``, or an observed error above the bound (a gctool bug)."""
    if precision is None or precision.ok:
        return []
    head = ("" if precision.max_error is None
            else f"`max_error` {precision.max_error:g}: ")
    return [head + precision.reason]


def apply_gates(report: Any, max_condition: float | None = None, strict: bool = False
                ) -> bool:
    """Record the gates in ``report.gates`` (when any is asked for), clear ``report.ok`` when
    one fails, and return whether the report passes them all."""
    precision = getattr(report, "precision", None)
    max_error = None if precision is None else precision.max_error
    if max_condition is None and not strict and (precision is None or
                                                 (max_error is None and precision.ok)):
        return True
    failures = numerical_gates(report, max_condition, strict)
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
