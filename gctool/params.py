"""The schema of ``params`` in a code file, per scheme, checked when the file is read.

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


def _root(value: Any, where: str, dims: Mapping[str, int]) -> None:
    """cyclic-mds: the root of unity, an element of GF(q) (an integer), a label over R/C
    ("exp(2 pi i/n)"), or null (s = 0)."""
    if value is not None and not isinstance(value, str):
        Int(0, 2**31)(value, where, dims)
    elif isinstance(value, str):
        Str()(value, where, dims)


_ROOT: Check = _root
_ROWS = List(List(Json()), 1, MAX_N)  # a matrix; entries are checked by the code's field reader
_FLOAT = Num()
_LABEL = Str()

#: keys any scheme may record (best-of draws, condition estimates, piece count m)
COMMON: dict[str, Check] = {
    "m": Int(1, MAX_COLUMNS),
    "attempts": Int(0, 10**12),
    "best_of": Json(),
    "worst_condition": Num(0),
    "worst_condition_method": _LABEL,
    "load": Num(0),
    "s": Int(0, "n"),
}

#: (B, W, lambda) sequential schedules
_SGC: dict[str, Check] = {
    "burst": Int(1, 10_000),
    "window": Int(1, 10_000),
    "lambda": Int(0, "n"),
    "delay": Int(0, 20_000),
    "load": Num(0, 1),
    "gc": _LABEL,
    "selection": _LABEL,
    "load_fraction": _LABEL,
    "schedule": Json(),
}

SCHEMES: dict[str, dict[str, Check]] = {
    "frc": {"groups": Int(1, "n")},
    "cyclic": {},
    "uncoded": {},
    "cyclic-mds": {"zeros": List(Int(0, 2**31), 0, "n"), "root": _ROOT},
    "rs": {"nodes": _LABEL},
    "comm": {"nodes": _LABEL, "column_order": _LABEL},
    "bibd": {"v": Int(1, "n"), "kappa": Int(0, "n"), "lambda": Int(0, "n"), "design": _LABEL},
    "expander": {"degree": Int(0, "n"), "vertices": Int(0, MAX_COLUMNS), "graph": _LABEL,
                 "lambda2": _FLOAT, "lambda": _FLOAT, "spectral_bound": _FLOAT},
    "graph": {"degree": Int(0, MAX_COLUMNS), "edges": Int(0, "n"), "vertices": Int(0, "k"),
              "graph": _LABEL, "lambda2": _FLOAT, "sigma2_squared": _FLOAT},
    "bgc": {"d": Num(0), "probability": Num(0, 1)},
    "sbc": {"communities": Int(1, "n"), "p_in": Num(0, 1), "p_out": Num(0, 1)},
    "soft-bibd": {"d": Int(0, "k"), "sweeps": Int(0, 10**9)},
    "kron": {"factor_s": List(Int(0, "n"), 0, 64), "factor_thresholds": List(Int(0, "n"), 0, 64),
             "factor_schemes": List(_LABEL, 0, 64),
             "factor_shapes": List(List(Int(1, MAX_COLUMNS), 2, 2), 0, 64)},
    "hetero": {"p": List(Num(0, 1), "n", "n"), "load": Int(0, "k"),
               "expected_error": Num(0), "expected_error_cyclic": Num(0), "decoder": _LABEL},
    "nested": {"levels": List(Int(0, "n"), 1, "n"), "level_B": List(_ROWS, 0, 64),
               "construction": _LABEL},
    "sr-sgc": {**_SGC, "decoding": Obj(needs=Int(0, "n"))},
    "m-sgc": {**_SGC, "decoding": Obj(d1_fraction=Num(0, 1), d2_groups=Int(0, 10_000),
                                      minitask_size=Num(0, 1))},
    "coded-reduce": {"fanout": Int(2, MAX_N), "depth": Int(1, 12),
                     "tolerance": List(Int(0, MAX_N), 1, 12), "levels": List(_ROWS, 1, 12),
                     "leaves": Int(1, "n"), "level_gc": List(_LABEL, 0, 12)},
    "encoded": {},  # its frame is checked by gctool.codes.encoded.check_params (cross rule)
    "bcc": {"batches": Int(1, "k"), "holders": List(Int(0, "n"), 1, "k"),
            "batch_of_worker": List(Int(0, "k"), "n", "n"), "batch_sizes": List(Int(0, "k")),
            "expected_wait": Num(0), "expected_wait_exact": _LABEL, "decoding": _LABEL},
}

#: keys a scheme cannot be read back without
REQUIRED: dict[str, tuple[str, ...]] = {
    "sr-sgc": ("burst", "window", "lambda", "load"),
    "m-sgc": ("burst", "window", "lambda", "load"),
    "coded-reduce": ("fanout", "depth", "tolerance", "levels"),
}


def _check_keys(params: Mapping[str, Any], schema: Mapping[str, Check], prefix: str,
                dims: Mapping[str, int]) -> None:
    for key, check in schema.items():
        if key in params:
            check(params[key], prefix + key, dims)


def validate(scheme: str, params: Mapping[str, Any], n: int, k: int) -> None:
    """Raise :class:`CodeFileError` unless ``params`` fits the schema of ``scheme``."""
    dims = {"n": n, "k": k}
    missing = [f"params.{key}" for key in REQUIRED.get(scheme, ()) if key not in params]
    if missing:
        raise CodeFileError(f"a {scheme} file needs {', '.join(missing)}")
    schema = {**COMMON, **SCHEMES.get(scheme, {})}
    _check_keys(params, schema, "", dims)
    rule = _CROSS.get(scheme)
    if rule is not None:
        rule(params, n, k)


def _coded_reduce(p: Mapping[str, Any], n: int, k: int) -> None:
    fanout, depth = p["fanout"], p["depth"]
    if depth * math.log2(fanout) > math.log2(MAX_N) + 1e-9 or fanout**depth != n:
        raise CodeFileError(f"a coded-reduce tree has fanout^depth leaves: params.fanout = "
                            f"{fanout}, params.depth = {depth}, but n = {n}")
    if len(p["tolerance"]) != depth or len(p["levels"]) != depth:
        raise CodeFileError(f"a coded-reduce file needs {depth} params.tolerance entries and "
                            f"{depth} params.levels (one per level)")
    if any(t >= fanout for t in p["tolerance"]):
        raise CodeFileError(f"params.tolerance: each level tolerates at most fanout - 1 = "
                            f"{fanout - 1} stragglers")


def _bcc(p: Mapping[str, Any], n: int, k: int) -> None:
    b = p.get("batches")
    for key in ("holders", "batch_sizes"):
        if b is not None and key in p and len(p[key]) != b:
            raise CodeFileError(f"params.{key} must have one entry per batch ({b})")
    if b is not None and any(x >= b for x in p.get("batch_of_worker", [])):
        raise CodeFileError(f"params.batch_of_worker names a batch outside 0..{b - 1}")


def _encoded(p: Mapping[str, Any], n: int, k: int) -> None:
    from gctool.codes.encoded import check_params

    check_params(dict(p), n, k)


_CROSS: dict[str, Callable[[Mapping[str, Any], int, int], None]] = {
    "coded-reduce": _coded_reduce, "bcc": _bcc, "encoded": _encoded,
}
