"""The worst-case error curve that ``show`` draws: for each number of stragglers s, the largest
optimal-decoding error over all straggler sets of size s, or read from a JSON curve file.

The points come from the audit layer's one curve engine (:func:`gctool.audit.attack.curve`,
exhaustive, exact; the same as ``gctool attack`` (``curve``)); this module only chooses the sizes
within the budget, converts the raw errors to the picture's unit and reads curve files.

Unit: over the reals and complex numbers ``error = raw / (k*m)``, the raw squared error
``min_a ||a^T B_F - T||^2`` divided by the squared norm of the targets (``k`` for m = 1, where it
equals ``attack normalize k``).  It is 0 when the set decodes and at most 1 (``a = 0``), so
curves of different codes share one axis.  Over GF(q) the raw error is already the indicator
0 (decodes) / 1 (fails) and is used as it is.

Budget (:func:`gctool.audit.attack.curves.plan_sizes`): the points are computed cheapest first
(the number of sets ``C(n, s)`` times the size of the least-squares problems), so both ends of
the curve appear even when the middle does not fit; a point is skipped when it would take the
total above ``max_sets`` straggler sets or above ``CURVE_MAX_WORK`` (an estimate, about 0.4 s of
one core).  Skipped values of s are listed.  When no point strictly between s = 0 and
s = n - 1 fits, no point is computed at all.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from gctool.budget import Budget
from gctool.errors import CodeFileError
from gctool.limits import DEFAULT_CURVE_SETS
from gctool.model import GradientCode
from gctool.reports import Report

UNIT = "raw squared error / (k*m) (GF(q): 0/1 indicator); 0 = decodes, 1 = nothing recovered"

def fraction(raw: float, code: GradientCode) -> float:
    """Raw error -> the curve's unit (see the module docstring)."""
    return raw if code.field.is_finite else raw / (code.k * code.m)


@dataclass
class CurvePoint(Report):
    s: int
    error: float  # raw / (k*m); the 0/1 indicator over GF(q)
    raw_error: float | None
    stragglers: list[int] | None  # a worst set (witness), when known
    decodes: bool  # every set of size s decodes (error within the decoding tolerance)
    exact: bool = True


@dataclass
class Curve(Report):
    source: str  # "exhaustive attack" (computed here) or "file <path>"
    unit: str
    points: list[CurvePoint]
    skipped: list[int] = field(default_factory=list)
    max_sets: int | None = None
    checked: int = 0

    def informative(self, n: int) -> bool:
        """Worth drawing: some point lies strictly between the trivial ends s = 0 and
        s >= n - 1 (with only those, the curve says nothing about the code)."""
        return any(0 < p.s < n - 1 for p in self.points)

    def first_failure(self) -> CurvePoint | None:
        """The point of the smallest computed s where some set fails to decode."""
        return next((p for p in self.points if not p.decodes), None)


def runs(values: list[int]) -> list[set[int]]:
    """Split sorted integers into runs of consecutive values."""
    out: list[set[int]] = []
    for v in values:
        if out and v - 1 in out[-1]:
            out[-1].add(v)
        else:
            out.append({v})
    return out


def ranges(values: list[int]) -> str:
    """[2, 3, 4, 7] -> "2..4, 7"."""
    parts = []
    for run in runs(values):
        lo, hi = min(run), max(run)
        parts.append(str(lo) if lo == hi else f"{lo}..{hi}")
    return ", ".join(parts)


def error_curve(
    code: GradientCode,
    *,
    max_sets: int = DEFAULT_CURVE_SETS,
    tol: float | None = None,
    progress: Callable[[int, int], None] | None = None,
    budget: Budget | None = None,
) -> Curve:
    """Worst-case error for every s = 0..n that fits the budget (exhaustive per s, exact), from
    :func:`gctool.audit.attack.curve` held to ``budget`` (default :meth:`Budget.default`);
    ``progress`` counts the points."""
    from gctool.audit.attack.curves import curve, plan_sizes
    from gctool.decode import DEFAULT_TOL

    todo = plan_sizes(code.n, int(code.B.shape[1]), max_sets)
    skipped = [s for s in range(code.n + 1) if s not in set(todo)]
    if not todo:
        return Curve("exhaustive attack", UNIT, [], skipped, max_sets, 0)
    # a curve the budget stops is refused: show never draws (nor writes) part of one
    report = curve(code, sizes=todo, method="exhaustive", keep_at_budget=False,
                   budget=Budget.default() if budget is None else budget,
                   tol=DEFAULT_TOL if tol is None else tol, progress=progress)
    points = [CurvePoint(p.s, fraction(p.raw_error, code), p.raw_error, p.stragglers,
                         _decodes(p.raw_error, code, tol), p.exact) for p in report.curve]
    return Curve("exhaustive attack", UNIT, points, skipped, max_sets, report.checked)


def _decodes(raw: float, code: GradientCode, tol: float | None) -> bool:
    """The attack's rule: 0 over GF(q); within ``tol * k`` over the reals / complex numbers."""
    from gctool.numerics import DEFAULT_TOL, decodes

    if code.field.is_finite:
        return raw == 0
    return bool(decodes(raw, code.k, DEFAULT_TOL if tol is None else tol))


# ---------------------------------------------------------------------------------------------
# curve files
# ---------------------------------------------------------------------------------------------
def read_curve(path: str, code: GradientCode) -> Curve:
    """Read a curve file written by ``gctool attack`` (``curve``, as JSON: its one report; or by
    hand).

    The exact layout of ``attack curve`` was not settled when this was written, so the reader
    accepts: a JSON list of points, or an object holding the points under ``"curve"`` or
    ``"points"`` (possibly nested one level, e.g. ``{"curve": {"points": [...]}}``).  A point is
    an object with ``"s"`` and ``"raw_error"`` or ``"error"``; ``"error"`` is read in the unit
    named by ``"normalize"`` (``"none"``: raw, ``"k"``: raw/k, or ``"fraction"``: raw/(k*m)),
    taken from the point or the document, default ``"none"``.  ``"stragglers"``, ``"exact"`` and
    ``"decodes"`` are optional (``decodes`` defaults to the attack's rule with the default
    tolerance).  ``n`` and ``k`` in the document, when present, must match the code.
    """
    from gctool.io import loads_json, read_text_input

    text, label = read_text_input(path, "a JSON curve file")
    doc = loads_json(text, label)
    try:
        return parse_curve(doc, code, label)
    except CodeFileError as exc:
        raise CodeFileError(f"{label}: {exc}") from None


def _report_of(doc: object) -> object:
    """The report inside the envelope of ``attack``'s JSON (one file), else ``doc``."""
    if not (isinstance(doc, dict) and isinstance(doc.get("files"), list)):
        return doc
    reports = [e["report"] for e in doc["files"] if isinstance(e, dict) and "report" in e]
    if len(reports) != 1:
        raise CodeFileError(f"the document holds {len(reports)} reports; give the curve of one "
                            "code ('gctool attack FILE `curve` `as_json`')")
    return reports[0]


def _points_of(doc: Any) -> tuple[list[Any], Mapping[str, Any]]:
    meta: Mapping[str, Any] = doc if isinstance(doc, dict) else {}
    for _ in range(3):  # the list itself, or nested one or two objects deep
        if isinstance(doc, list):
            return doc, meta
        if not isinstance(doc, dict):
            break
        inner = doc.get("curve", doc.get("points"))
        if isinstance(inner, dict):
            meta = {**meta, **inner}
        doc = inner
    raise CodeFileError("no curve found: expected a list of points, or 'curve' / 'points'")


def _number(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise CodeFileError(f"{what} must be a finite number, got {value!r}")
    if value < 0:
        raise CodeFileError(f"{what} must be >= 0, got {value!r}")
    return float(value)


def _raw(point: Mapping[str, Any], meta: Mapping[str, Any], code: GradientCode, i: int) -> float:
    if point.get("raw_error") is not None:
        return _number(point["raw_error"], f"point {i}: raw_error")
    if point.get("error") is None:
        raise CodeFileError(f"point {i} has neither 'raw_error' nor 'error'")
    value = _number(point["error"], f"point {i}: error")
    unit = point.get("normalize", meta.get("normalize", "none"))
    scale = {"none": 1.0, "k": float(code.k), "fraction": float(code.k * code.m)}.get(unit)
    if scale is None:
        raise CodeFileError(f"point {i}: unknown normalize {unit!r} (none, k or fraction)")
    return value * scale


def _point(item: Any, meta: Mapping[str, Any], code: GradientCode, i: int) -> CurvePoint:
    if not isinstance(item, dict):
        raise CodeFileError(f"point {i} must be an object with 's' and 'raw_error' or 'error'")
    s = item.get("s")
    if isinstance(s, bool) or not isinstance(s, int) or not 0 <= s <= code.n:
        raise CodeFileError(f"point {i}: 's' must be an integer in 0..n = {code.n}, got {s!r}")
    raw = _raw(item, meta, code, i)
    S = item.get("stragglers")
    if S is not None and not (isinstance(S, list) and all(
            isinstance(x, int) and not isinstance(x, bool) for x in S)):
        raise CodeFileError(f"point {i}: 'stragglers' must be a list of worker indices")
    decodes = item.get("decodes")
    if not isinstance(decodes, bool):
        decodes = _decodes(raw, code, None)
    return CurvePoint(s, fraction(raw, code), raw, S, decodes, bool(item.get("exact", True)))


def parse_curve(doc: Any, code: GradientCode, source: str) -> Curve:
    """Validate a curve document against ``code`` (see :func:`read_curve`)."""
    items, meta = _points_of(_report_of(doc))
    for key, value in (("n", code.n), ("k", code.k)):
        if key in meta and meta[key] != value:
            raise CodeFileError(f"the curve is for {key} = {meta[key]!r}, the code has {value}")
    points = sorted((_point(x, meta, code, i) for i, x in enumerate(items)), key=lambda p: p.s)
    if not points:
        raise CodeFileError("the curve has no points")
    if len({p.s for p in points}) != len(points):
        raise CodeFileError("the curve has two points with the same s")
    have = {p.s for p in points}
    skipped = [s for s in range(code.n + 1) if s not in have]
    return Curve(f"file {source}", UNIT, points, skipped, None, 0)
