"""The schema of ``params`` in a code file, checked when the file is read.

Each scheme declares its own keys next to its ``build`` (``Family.file_params``,
``required_params`` and ``check_params``, built from the checks defined here); this module
holds the checks, the keys every scheme may record and :func:`validate`.

Every key that gctool *reads back* from a file's ``params`` (to verify a schedule, bound a tree,
simulate, attack with the recorded probabilities, ...) has a type and a range here, so that a
hand-edited or hostile file fails at once with exit 2 and one line (``params.depth must be an
integer in 1..12, got 1000000000``) instead of a crash or hours of work later.  Keys that are
only reported (a design's figures such as ``expected_wait`` or ``worst_condition``) are
informational: they must be of their recorded type when listed, and unknown keys are kept as
they are (a newer gctool may add some).  Cross-field rules (a CodedReduce tree has
``fanout^depth = n`` leaves, a BCC assignment names one batch per worker) are checked after the
per-key rules.

Pure Python (no numpy): reading a file header must stay cheap.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from gctool.errors import CodeFileError
from gctool.limits import MAX_COLUMNS, MAX_N
from gctool.reports import LOWER_BOUND

#: longest string value accepted in params (labels and descriptions)
MAX_PARAM_STRING = 2000

Check = Callable[[Any, str, Mapping[str, int]], None]


def _fail(where: str, want: str, value: Any) -> None:
    text = repr(value)
    text = text if len(text) <= 60 else text[:57] + "..."
    raise CodeFileError(f"params.{where} must be {want}, got {text}")


def _bound(value: int | str, dims: Mapping[str, int]) -> int:
    return dims[value] if isinstance(value, str) else value


def Int(lo: int | str = 0, hi: int | str = MAX_COLUMNS) -> Check:
    """An integer in lo..hi (``"n"``/``"k"`` stand for the file's n and k)."""
    def check(value: Any, where: str, dims: Mapping[str, int]) -> None:
        a, b = _bound(lo, dims), _bound(hi, dims)
        if isinstance(value, bool) or not isinstance(value, int) or not a <= value <= b:
            _fail(where, f"an integer in {a}..{b}", value)
    return check


def Num(lo: float = -math.inf, hi: float = math.inf) -> Check:
    """A finite number in [lo, hi]."""
    def check(value: Any, where: str, dims: Mapping[str, int]) -> None:
        ok = not isinstance(value, bool) and isinstance(value, int | float)
        try:
            ok = ok and math.isfinite(value) and lo <= value <= hi
        except OverflowError:  # an integer beyond float range
            ok = False
        if not ok:
            span = "" if (lo, hi) == (-math.inf, math.inf) else f" in [{lo:g}, {hi:g}]"
            _fail(where, f"a finite number{span}", value)
    return check


def Str(*choices: str) -> Check:
    """A string (one of ``choices`` when given), at most :data:`MAX_PARAM_STRING` long."""
    def check(value: Any, where: str, dims: Mapping[str, int]) -> None:
        if not isinstance(value, str) or len(value) > MAX_PARAM_STRING:
            _fail(where, f"a string of at most {MAX_PARAM_STRING} characters", value)
        if choices and value not in choices:
            _fail(where, "one of " + ", ".join(choices), value)
    return check


def List(item: Check, min_len: int | str = 0, max_len: int | str = MAX_COLUMNS) -> Check:
    """A list of ``min_len..max_len`` items, each checked by ``item``."""
    def check(value: Any, where: str, dims: Mapping[str, int]) -> None:
        a, b = _bound(min_len, dims), _bound(max_len, dims)
        if not isinstance(value, list) or not a <= len(value) <= b:
            _fail(where, f"a list of {a}..{b} items" if a != b else f"a list of {a} items",
                  value)
        for i, x in enumerate(value):
            item(x, f"{where}[{i}]", dims)
    return check


def Maybe(item: Check) -> Check:
    """null, or a value that passes ``item`` (a figure recorded only when it was computed)."""
    def check(value: Any, where: str, dims: Mapping[str, int]) -> None:
        if value is not None:
            item(value, where, dims)
    return check


def Obj(**keys: Check) -> Check:
    """An object whose listed keys (when present) pass their checks."""
    def check(value: Any, where: str, dims: Mapping[str, int]) -> None:
        if not isinstance(value, dict):
            _fail(where, "an object", value)
        _check_keys(value, keys, where + ".", dims)
    return check


def Json() -> Check:
    """Any JSON value (informational, never read back)."""
    def check(value: Any, where: str, dims: Mapping[str, int]) -> None:
        return None
    return check


#: a matrix (entries are checked by the code's field reader)
ROWS = List(List(Json()), 1, MAX_N)
#: a label or description (informational)
LABEL = Str()

#: keys any scheme may record (best-of draws, condition estimates, piece count m)
COMMON: dict[str, Check] = {
    "m": Int(1, MAX_COLUMNS),
    "attempts": Int(0, 10**12),
    "best_of": Json(),
    "worst_condition": Maybe(Num(0)),  # null: not estimated, or infinite (a singular B_F)
    "worst_condition_method": LABEL,
    #: exact (the worst over every straggler set), lower bound (every set screened, the worst
    #: of the weakest only) or estimate (a sample), and [screened, total]
    "worst_condition_kind": Str("exact", LOWER_BOUND, "estimate"),
    "worst_condition_sets": List(Json(), 2, 2),
    "load": Num(0),
    "s": Int(0, "n"),
}


def _check_keys(params: Mapping[str, Any], schema: Mapping[str, Check], prefix: str,
                dims: Mapping[str, int]) -> None:
    for key, check in schema.items():
        if key in params:
            check(params[key], prefix + key, dims)


def validate(scheme: str, params: Mapping[str, Any], n: int, k: int) -> None:
    """Raise :class:`CodeFileError` unless ``params`` fits the schema of ``scheme``: the
    :data:`COMMON` keys and the scheme's own ``Family.file_params``, its
    ``required_params`` and its cross-field rule ``check_params`` (a scheme gctool does not
    know is checked for the common keys only)."""
    from gctool.registry import SCHEMES

    family = SCHEMES.get(scheme)
    dims = {"n": n, "k": k}
    required = () if family is None else family.required_params
    missing = [f"params.{key}" for key in required if key not in params]
    if missing:
        raise CodeFileError(f"a {scheme} file needs {', '.join(missing)}")
    _check_keys(params, {**COMMON, **({} if family is None else family.file_params)}, "", dims)
    if family is not None and family.check_params is not None:
        family.check_params(params, n, k)
