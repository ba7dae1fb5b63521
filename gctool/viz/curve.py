"""The worst-case error curve that ``show`` draws: for each number of stragglers s, the largest
optimal-decoding error over all straggler sets of size s, or read from a JSON curve file.

The points come from the audit layer's one curve engine (:func:`gctool.audit.attack.curve`,
exhaustive, exact; the same as ``gctool attack`` (``curve``)), and they are its points
(:class:`~gctool.reports.WorstPoint`, the one record of a curve's point, also for a point read
from a curve file); this module only chooses the sizes within the budget, expresses the points
in the picture's unit, judges which sizes decode and reads curve files.

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
from dataclasses import dataclass, field, replace
from typing import Any

from gctool.budget import Budget
from gctool.errors import CodeFileError
from gctool.limits import DEFAULT_CURVE_SETS
from gctool.model import GradientCode
from gctool.reports import NOT_JSON, Report, WorstPoint

UNIT = "raw squared error / (k*m) (GF(q): 0/1 indicator); 0 = decodes, 1 = nothing recovered"

def fraction(raw: float, code: GradientCode) -> float:
    """Raw error -> the curve's unit (see the module docstring)."""
    return raw if code.field.is_finite else raw / (code.k * code.m)


#: the keys of a point in show's JSON (``curve.points``), in order
POINT_KEYS = ("s", "error", "raw_error", "stragglers", "decodes", "exact")


@dataclass
class Curve(Report):
    """A worst-case error curve as ``show`` draws it: the curve's points (the library's
    :class:`~gctool.reports.WorstPoint`, with ``error`` in :data:`UNIT`: :func:`fraction` of
    ``raw_error``), whether each size decodes, the sizes not computed and where the curve came
    from."""

    source: str  # "exhaustive attack" (computed here) or "file <path>"
    unit: str
    points: list[WorstPoint]
    #: per s of a point: every set of size s decodes (the attack's rule with the decoding
    #: tolerance, or as a curve file states); in the JSON, each point's ``decodes``
    decodes: dict[int, bool] = field(metadata=NOT_JSON)
    skipped: list[int] = field(default_factory=list)
    max_sets: int | None = None
    checked: int = 0

    def to_dict(self) -> dict[str, Any]:
        """show's ``curve`` document: each point with the keys :data:`POINT_KEYS`."""
        doc = super().to_dict()
        doc["points"] = [{key: self.decodes[p["s"]] if key == "decodes" else p[key]
                          for key in POINT_KEYS} for p in doc["points"]]
        return doc

    def informative(self, n: int) -> bool:
        """Worth drawing: some point lies strictly between the trivial ends s = 0 and
        s >= n - 1 (with only those, the curve says nothing about the code)."""
        return any(0 < p.s < n - 1 for p in self.points)

    def first_failure(self) -> WorstPoint | None:
        """The point of the smallest computed s where some set fails to decode."""
        return next((p for p in self.points if not self.decodes[p.s]), None)


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
        return Curve("exhaustive attack", UNIT, [], {}, skipped, max_sets, 0)
    # a curve the budget stops is refused: show never draws (nor writes) part of one
    report = curve(code, sizes=todo, method="exhaustive", keep_at_budget=False,
                   budget=Budget.default() if budget is None else budget,
                   tol=DEFAULT_TOL if tol is None else tol, progress=progress)
    points = [_in_unit(p, report.scale, code) for p in report.curve]
    decodes = {p.s: _decodes(p.raw_error, code, tol) for p in points}
    return Curve("exhaustive attack", UNIT, points, decodes, skipped, max_sets, report.checked)


def _in_unit(point: WorstPoint, scale: float, code: GradientCode) -> WorstPoint:
    """A point of an attack's curve (its errors divided by ``scale``) in the picture's unit."""
    upper = point.upper_bound
    return replace(point, error=fraction(point.raw_error, code),
                   upper_bound=None if upper is None else fraction(upper * scale, code))


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


def _point(item: Any, meta: Mapping[str, Any], code: GradientCode, i: int
           ) -> tuple[WorstPoint, bool]:
    """The point ``i`` of a curve file and whether its size decodes."""
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
    method = item.get("method")  # (an attack's file names it; show does not use it)
    point = WorstPoint(s, S, fraction(raw, code), raw, bool(item.get("exact", True)),
                       method if isinstance(method, str) else "", None)
    return point, decodes


def parse_curve(doc: Any, code: GradientCode, source: str) -> Curve:
    """Validate a curve document against ``code`` (see :func:`read_curve`)."""
    items, meta = _points_of(_report_of(doc))
    for key, value in (("n", code.n), ("k", code.k)):
        if key in meta and meta[key] != value:
            raise CodeFileError(f"the curve is for {key} = {meta[key]!r}, the code has {value}")
    read = sorted((_point(x, meta, code, i) for i, x in enumerate(items)), key=lambda r: r[0].s)
    if not read:
        raise CodeFileError("the curve has no points")
    decodes = {p.s: d for p, d in read}
    if len(decodes) != len(read):
        raise CodeFileError("the curve has two points with the same s")
    skipped = [s for s in range(code.n + 1) if s not in decodes]
    return Curve(f"file {source}", UNIT, [p for p, _ in read], decodes, skipped, None, 0)
