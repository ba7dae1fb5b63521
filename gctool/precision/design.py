"""``design`` with ``precision``: prove the new design's error bound in a message format,
record it,
warn or refuse; and the ranking of ``best_of`` draws by that bound."""

from __future__ import annotations

from typing import Any

import numpy as np

from gctool.budget import Budget
from gctool.errors import DesignError, InvalidInput
from gctool.model import GradientCode
from gctool.precision.certify import certify, check_max_error, warning
from gctool.precision.formats import Format, get_format


def check_design(precision: str | None, max_error: float | None) -> None:
    """The ``precision``/``max_error`` options of a design, checked before it is built."""
    if precision is not None:
        get_format(precision)
    check_max_error(max_error)
    if max_error is not None and precision is None:
        raise InvalidInput("`max_error` needs `precision` (the format whose rounding it "
                           "limits: float32, bfloat16 or float16)", param="max_error")


def design_check(code: GradientCode, precision: str | Format, max_error: float | None = None,
                 *, best_of_hint: bool = False, budget: Budget | None = None) -> None:
    """Prove ``code``'s error bound in ``precision`` over every set of its s stragglers
    (:func:`gctool.precision.certify`) and record it in ``code.params["precision"]`` (with the
    report's underflow ``floor``: null when exact).  Refuse
    (DesignError, one line saying what would work) when the bound exceeds ``max_error`` or a
    coefficient is beyond the format's range; warn (``params["warnings"]``) above 1%.
    ``best_of_hint``: the scheme draws random coefficients (``best_of`` can rank them);
    ``budget`` (default :meth:`Budget.default`) holds the proof."""
    fmt = get_format(precision)
    limit = check_max_error(max_error)
    if code.field.is_finite:
        code.params["precision"] = {"precision": fmt.name, "exact": True, "bound": 0.0,
                                    "floor": None}
        return
    report = certify(code, fmt, max_error=limit, budget=budget)
    seen = report.empirical.max_error if report.empirical is not None else None
    code.params["precision"] = {"precision": fmt.name, "exact": False, "bound": report.bound,
                                "stragglers": report.stragglers, "observed": seen,
                                "floor": report.floor}
    what = f"the {code.field} {code.scheme} design (n={code.n}, k={code.k}, s={code.s})"
    fix = ("use frc (0/1 coefficients, exact in every format), a finite field (`field` auto), "
           "a smaller s, or a better-conditioned construction"
           + (" (`best_of` N with `precision` ranks random draws by this bound)"
              if best_of_hint and "best_of" not in code.params else ""))
    if report.bound is None:
        raise DesignError(f"{what} cannot be used in {fmt.name}: a coefficient of B or of the "
                          f"decoder of straggler set {report.stragglers} is beyond its range; "
                          f"{fix}")
    if limit is not None and report.bound > limit:
        observed = "" if seen is None else f" ({seen:.2g} observed)"
        raise DesignError(f"{what} has a proved {fmt.name} error bound of {report.bound:.3g} x "
                          f"sum_j ||g_j|| at straggler set {report.stragglers}{observed}, above "
                          f"`max_error` {limit:g}; {fix}")
    text = warning(report)
    if text is not None:
        code.params.setdefault("warnings", []).append(text)


class PrecisionRank:
    """Ranks ``best_of`` draws by their worst proved error bound in a format (smaller is
    better; inf when unbounded), each proof held to ``budget``."""

    def __init__(self, precision: str | Format, budget: Budget | None = None) -> None:
        self.fmt = get_format(precision)
        self.budget = budget
        self.label = f"worst proved {self.fmt.name} error bound"

    def __call__(self, B: np.ndarray, field: Any, s: int) -> float:
        code = GradientCode(np.asarray(B), field, s)
        bound = certify(code, self.fmt, emulate=False, budget=self.budget).bound
        return float("inf") if bound is None else float(bound)


def precision_rank(precision: str | Format, budget: Budget | None = None) -> PrecisionRank:
    return PrecisionRank(precision, budget)
