"""Result objects of the audits.  They record what was found; rendering is the CLI's job.

Every report has ``to_dict()`` with stable keys (the ``--json`` output) and ``ok``: whether the
audited property holds (the CLI turns ``ok = False`` into exit code 1).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from dataclasses import field as dc_field
from typing import Any


def _jsonable(value: Any) -> Any:
    """Replace non-finite floats by None and numpy scalars by Python numbers."""
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, str):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


class Report:
    """Mixin: ``to_dict`` for dataclass reports."""

    def to_dict(self) -> dict[str, Any]:
        return _jsonable(asdict(self))  # type: ignore[call-overload]


@dataclass
class Diagnostics(Report):
    """Numerical diagnostics of a real/complex audit (all None over GF(q))."""

    max_residual: float | None = None  # largest ||a^T B_F - 1|| among decodable sets
    max_condition: float | None = None  # largest cond(B_F) among decodable sets
    max_condition_stragglers: list[int] | None = None
    max_decoder_norm: float | None = None  # largest ||a_F||
    min_failing_error: float | None = None  # smallest squared error among failing sets
    note: str = ""
    max_residual_stragglers: list[int] | None = None
    max_decoder_norm_stragglers: list[int] | None = None
    condition_bound: float | None = None  # proved upper bound on cond(B_F) over the sets
    exact_evaluations: int | None = None  # sets whose cond/residual were computed directly


@dataclass
class VerifyReport(Report):
    ok: bool
    s: int
    n: int
    k: int
    field: str
    scheme: str
    counterexample: list[int] | None
    checked: int
    total: int
    exact: bool  # True: proved over every straggler set (or by a certificate)
    method: str
    arithmetic: str  # "exact" (GF(q)) or "float64"
    tolerance: float | None
    reason: str
    diagnostics: Diagnostics = dc_field(default_factory=Diagnostics)
    elapsed_s: float = 0.0
    verdict: str = ""  # "ok", "fail" or "inconclusive" (sampling never certifies)
    kernel: str = ""  # how each set was decided: "nullspace", "direct", "rational", "none"
    jobs: int = 1
    represented: int = 0  # straggler sets covered by the checked ones (symmetry, classes)
    reduction: dict[str, Any] | None = None  # symmetry / row-class reduction, if used
    certificate: str | None = None  # statement of the structural certificate, if used
    estimate: dict[str, Any] | None = None  # work estimate made before starting
    warnings: list[str] = dc_field(default_factory=list)
    sample: dict[str, Any] | None = None  # --sample: requested size and seed
    #: CI gates asked for (max_condition, strict) and the ones that failed (gctool.gates)
    gates: dict[str, Any] | None = None
    #: reductions not used because they hold only up to round-off ("... not used, full
    #: enumeration"); facts about the run, not warnings (no gate counts them)
    notes: list[str] = dc_field(default_factory=list)


@dataclass
class AttackReport(Report):
    mode: str  # "worst" or "threshold"
    s: int | None  # straggler count attacked (worst mode) / threshold size
    n: int
    k: int
    field: str
    stragglers: list[int] | None
    error: float | None  # in the unit given by ``normalize``
    raw_error: float | None  # raw squared error ||a^T B_F - 1||^2
    normalize: str  # "none" or "k"
    decoder: str
    method: str
    exact: bool
    checked: int
    total: int
    threshold: int | None = None
    epsilon: float | None = None
    comparison: str = ""
    ok: bool = True
    reason: str = ""
    diagnostics: Diagnostics = dc_field(default_factory=Diagnostics)
    elapsed_s: float = 0.0
    # -- decoders, methods, sandwiches, curves, random stragglers ------------------
    scheme: str = "custom"
    decoder_label: str = ""  # human description of the decoder (weights, groups, ...)
    decoder_info: dict[str, Any] = dc_field(default_factory=dict)
    scale: float = 1.0  # error = raw_error / scale (k with --normalize k)
    upper_bound: float | None = None  # worst mode: error <= true worst <= upper_bound
    raw_upper_bound: float | None = None
    upper_bound_source: str = ""
    threshold_lower: int | None = None  # threshold mode: lower <= T <= upper
    threshold_upper: int | None = None
    resolution: float | None = None  # milp thresholds: errors below it count as decodable
    closed_form: dict[str, Any] | None = None  # {value, raw_value, source, matches}
    random: dict[str, Any] | None = None  # mean error under random stragglers
    curve: list[dict[str, Any]] | None = None  # worst error for s = 0..max_s
    require: int | None = None  # --require T (threshold mode)
    require_status: str | None = None  # "met", "below" or "unproven"
    require_tolerance: int | None = None  # --require-tolerance S (= --require S+1)
    seed: int | None = None
    evaluations: int = 0
    notes: list[str] = dc_field(default_factory=list)


@dataclass
class Bound(Report):
    name: str
    value: float | int | None
    statement: str
    source: str
    holds: bool | None = None  # for a given code: does the code satisfy it?


@dataclass
class BoundReport(Report):
    n: int
    k: int
    s: int
    m: int
    bounds: list[Bound]
    code: dict[str, Any] | None  # load statistics of the audited code, if any
    meets_bound: bool | None
    findings: list[str]
    ok: bool


@dataclass
class ExportReport(Report):
    path: str
    format: str
    n: int
    k: int
    s: int
    patterns: int
    all_decodable: bool | None
    ok: bool
    bytes: int
    decoder: str | None = None  # "structured" or "generic" (with --decoders)
    fallbacks: int = 0  # patterns whose structured vector failed its check (generic used)
    note: str | None = None


@dataclass
class DesignReport(Report):
    """What ``design -o FILE`` wrote (its ``--json`` summary; schema ``design``)."""

    path: str
    scheme: str
    n: int
    k: int
    s: int
    field: str
    seed: int | None
    bytes: int
    #: the scheme's figures of merit recorded in params (eigenvalues, conditions, best-of);
    #: left out of the JSON when the scheme records none
    report: dict[str, Any] | None = None

    @property
    def ok(self) -> bool:
        """A design audits nothing."""
        return True

    @classmethod
    def of(cls, code: Any, path: str, size: int, keys: tuple[str, ...] = ()) -> DesignReport:
        """The summary of ``code`` written to ``path`` (``size`` bytes), with the params
        named in ``keys`` that the code records."""
        figures = {key: code.params[key] for key in keys if key in code.params}
        return cls(path, code.scheme, code.n, code.k, code.s, str(code.field), code.seed, size,
                   figures or None)

    def to_dict(self) -> dict[str, Any]:
        doc = super().to_dict()
        if doc["report"] is None:
            del doc["report"]
        return doc
