"""The worst-case error curve: for each number of stragglers s, the largest optimal-decoding
error over all straggler sets of size s (computed with :func:`gctool.audit.attack`, exact), or
read from a JSON curve file.

Unit: over the reals and complex numbers ``error = raw / (k*m)``, the raw squared error
``min_a ||a^T B_F - T||^2`` divided by the squared norm of the targets (``k`` for m = 1, where it
equals ``attack --normalize k``).  It is 0 when the set decodes and at most 1 (``a = 0``), so
curves of different codes share one axis.  Over GF(q) the raw error is already the indicator
0 (decodes) / 1 (fails) and is used as it is.

Budget: the points are computed cheapest first (the number of sets ``C(n, s)`` times the size of
the least-squares problems), so both ends of the curve appear even when the middle does not fit;
a point is skipped when it would take the total above ``max_sets`` straggler sets or above
``MAX_WORK`` (a flop estimate, about a few seconds).  Skipped values of s are listed.  When no
point strictly between s = 0 and s = n - 1 fits, no point is computed at all.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from gctool.errors import CodeFileError
from gctool.limits import CURVE_MAX_WORK, DEFAULT_CURVE_SETS
from gctool.model import GradientCode
from gctool.reports import Report

#: default budget of straggler sets for the whole curve
#: cap on the estimated work sum_s C(n,s) * f * K * min(f, K), f = n - s survivors
MAX_WORK = CURVE_MAX_WORK
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


def _work(n: int, cols: int, s: int) -> float:
    f = n - s
    return math.comb(n, s) * max(1, f) * cols * max(1, min(f, cols))


def plan(n: int, cols: int, max_sets: int, max_work: float = MAX_WORK) -> list[int]:
    """Values of s to compute, cheapest first, within both budgets.

    When nothing strictly between the trivial ends (0 < s < n - 1) fits, nothing is computed:
    the ends alone say nothing about the code, and for large n even they are not free."""
    order = sorted(range(n + 1), key=lambda s: (math.comb(n, s), _work(n, cols, s), s))
    chosen, sets, work = [], 0, 0.0
    for s in order:
        c, w = math.comb(n, s), _work(n, cols, s)
        if sets + c <= max_sets and work + w <= max_work:
            chosen.append(s)
            sets, work = sets + c, work + w
    if not any(0 < s < n - 1 for s in chosen):
        return []
    return sorted(chosen)


def error_curve(
    code: GradientCode,
    *,
    max_sets: int = DEFAULT_CURVE_SETS,
    tol: float | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Curve:
    """Worst-case error for every s = 0..n that fits the budget (exhaustive per s, exact)."""
    from gctool.audit.attack import attack
    from gctool.decode import DEFAULT_TOL

    todo = plan(code.n, int(code.B.shape[1]), max_sets)
    total = sum(math.comb(code.n, s) for s in todo)
    points, done = [], 0
    for s in todo:
        step = None if progress is None else _offset(progress, done, total)
        r = attack(code, s, tol=DEFAULT_TOL if tol is None else tol, max_sets=max_sets,
                   progress=step)
        raw = float(r.raw_error or 0.0)
        points.append(CurvePoint(s, fraction(raw, code), raw, r.stragglers,
                                 _decodes(raw, code, tol), r.exact))
        done += r.checked
    skipped = [s for s in range(code.n + 1) if s not in set(todo)]
    return Curve("exhaustive attack", UNIT, points, skipped, max_sets, done)


def _decodes(raw: float, code: GradientCode, tol: float | None) -> bool:
    """The attack's rule: 0 over GF(q); within ``tol * k`` over the reals / complex numbers."""
    from gctool.numerics import DEFAULT_TOL, decodes

    if code.field.is_finite:
        return raw == 0
    return bool(decodes(raw, code.k, DEFAULT_TOL if tol is None else tol))


def _offset(progress: Callable[[int, int], None], done: int, total: int
            ) -> Callable[[int, int], None]:
    return lambda d, _t: progress(done + d, total)


# ---------------------------------------------------------------------------------------------
# curve files
# ---------------------------------------------------------------------------------------------
def read_curve(path: str, code: GradientCode) -> Curve:
    """Read a curve file written by ``gctool attack --curve --json`` (or by hand).

    The exact layout of ``attack --curve`` was not settled when this was written, so the reader
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
    items, meta = _points_of(doc)
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
