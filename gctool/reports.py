"""Result objects of the audits.  They record what was found; rendering is the CLI's job.

Every report has ``to_dict()`` with stable keys (the JSON output) and ``ok``: whether the
audited property holds and every gate asked for passes (``verify`` with ``max_condition`` or
``strict``, ``attack`` with ``require_tolerance``; the CLI turns ``ok = False`` into exit code
1).

``attack`` returns one report type per mode, :class:`WorstReport`, :class:`ThresholdReport` and
:class:`CurveReport`, on the shared base :class:`AttackReport`, with typed sub-records
(:class:`ClosedForm`, :class:`RandomMeans`, :class:`WorstPoint`).  Their JSON keeps the one
layout of every mode (``AttackReport.LAYOUT``): keys a mode does not have are written with
their neutral value (null, or "" for ``comparison`` and ``upper_bound_source``).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from dataclasses import field as dc_field
from typing import Any, ClassVar, Literal

#: field metadata: leave the key out of the JSON when the value is None
OMIT_NONE = {"omit_none": True}
#: field metadata: a record for library callers that is never part of the JSON (e.g. the file
#: a call wrote, which the command reports on stderr)
NOT_JSON = {"json": False}


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


def _plain(value: Any) -> Any:
    """``value`` as JSON data: dataclasses as objects (without their :data:`NOT_JSON` fields
    and their None-valued :data:`OMIT_NONE` fields), lists and tuples as lists, numpy scalars
    as numbers and non-finite floats as None."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(v) for f in dataclasses.fields(value)
                if f.metadata.get("json", True)
                and not ((v := getattr(value, f.name)) is None and f.metadata.get("omit_none"))}
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return _jsonable(value)


class Report:
    """Mixin: ``to_dict`` for dataclass reports."""

    def to_dict(self) -> dict[str, Any]:
        doc: dict[str, Any] = _plain(self)
        return doc


#: the label of a worst figure over only some of the straggler sets it ranges over (the true
#: worst lies above it): verify's ``max_condition_kind``, design's ``worst_condition_kind``
LOWER_BOUND = "lower bound"


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
    #: "exact": max_condition is the worst over every straggler set; "lower bound": over the
    #: sets re-evaluated directly only (the true worst lies between it and condition_bound)
    max_condition_kind: str | None = None
    max_residual_kind: str | None = None  # the same for max_residual


@dataclass
class PrecisionEmpirical(Report):
    """The rounded computation run on gradient draws (:mod:`gctool.precision.emulate`) for the
    sets with the largest bounds (every set of a small code): how tight the bound is."""

    max_error: float | None  # largest relative error observed
    stragglers: list[int] | None  # ... and its straggler set
    bound_there: float | None  # the proved bound of that set
    sets: int  # straggler sets emulated
    draws: str  # which gradients were drawn
    seed: int
    #: the worst proved bound divided by the worst observed error (>= 1; null if none seen)
    tightness: float | None
    #: sets whose emulated gradient left the format's range (excluded; the bound assumes none)
    out_of_range: int = 0
    #: sets whose observed error exceeds their proved bound: always 0 (else a gctool bug)
    exceeds_bound: int = 0


@dataclass
class PrecisionReport(Report):
    """A proved bound on the decoded gradient's error when messages and decoding use a
    floating-point format (docs/precision.md)."""

    precision: str  # "float32", "bfloat16", "float16"
    exact: bool  # True over GF(q): exact arithmetic, no rounding
    s: int
    sets: int  # straggler sets bounded (every set of size s)
    #: the largest proved bound: ||g^ - g|| <= bound * sum_j ||g_j|| (null: unbounded, a
    #: coefficient beyond the format's range)
    bound: float | None
    stragglers: list[int] | None  # the set with the largest bound
    residual: float | None  # its part from the rounded coefficients (c^ - t)
    rounding: float | None  # its part from the rounding of the arithmetic
    partition: int | None  # the column of B where the bound is attained
    max_error: float | None  # the gate asked for (None: report only)
    over: int  # sets whose bound exceeds max_error
    ok: bool
    reason: str
    unit_roundoff: float | None
    accumulator: str | None
    norm: str
    decoder: str
    #: largest partial-gradient entry for which no message overflows the format
    headroom: float | None = None
    empirical: PrecisionEmpirical | None = None
    notes: list[str] = dc_field(default_factory=list)
    #: smallest magnitude of a non-zero partial-gradient entry at and above which the bound
    #: holds, underflow included, whatever the signs (docs/precision.md); below it underflow
    #: is outside the bound's model
    floor: float | None = None


@dataclass
class VerifyReport(Report):
    ok: bool  # the code tolerates s stragglers and passes every gate asked for (``gates``)
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
    sample: dict[str, Any] | None = None  # ``sample``: requested size and seed
    #: CI gates asked for (max_condition, strict) and the ones that failed (gctool.gates)
    gates: dict[str, Any] | None = None
    #: reductions not used because they hold only up to round-off ("... not used, full
    #: enumeration"); facts about the run, not warnings (no gate counts them)
    notes: list[str] = dc_field(default_factory=list)
    #: ``precision``: the proved error bound in a message format (left out without it)
    precision: PrecisionReport | None = dc_field(default=None, metadata=OMIT_NONE)


@dataclass
class ClosedForm(Report):
    """The scheme's closed-form worst error, compared with the audit's."""

    raw_value: float
    value: float  # raw_value / scale
    source: str
    agrees: bool  # exact audit: equal; heuristic audit: found <= closed form


@dataclass
class RandomMean(Report):
    """Mean error under random stragglers: exact (enumerated ``sets``, or a closed-form
    ``method``) or a seeded Monte-Carlo estimate (``samples``, ``seed``, ``ci95``,
    ``stderr``).  ``mean`` and ``ci95`` are divided by the report's scale; ``raw_*`` are not.
    Keys that do not apply are left out of the JSON."""

    mean: float
    exact: bool
    samples: int | None = dc_field(default=None, metadata=OMIT_NONE)
    seed: int | None = dc_field(default=None, metadata=OMIT_NONE)
    ci95: list[float] | None = dc_field(default=None, metadata=OMIT_NONE)
    stderr: float | None = dc_field(default=None, metadata=OMIT_NONE)
    sets: int | None = dc_field(default=None, metadata=OMIT_NONE)
    method: str | None = dc_field(default=None, metadata=OMIT_NONE)
    raw_mean: float | None = dc_field(default=None, metadata=OMIT_NONE)
    raw_ci95: list[float] | None = dc_field(default=None, metadata=OMIT_NONE)
    s: int | None = dc_field(default=None, metadata=OMIT_NONE)  # uniform s-sets
    p: float | str | None = dc_field(default=None, metadata=OMIT_NONE)  # i.i.d. probability


@dataclass
class OneStepMean(RandomMean):
    """The heterogeneous scheme's own figure: the mean error of its one-step decoder."""

    decoder: str = ""
    design_value: float | None = None  # the expectation recorded by the design


@dataclass
class RandomMeans(Report):
    """Mean errors under random stragglers, next to the adversarial worst case."""

    uniform: RandomMean | None = dc_field(default=None, metadata=OMIT_NONE)
    iid: RandomMean | None = dc_field(default=None, metadata=OMIT_NONE)
    hetero: RandomMean | None = dc_field(default=None, metadata=OMIT_NONE)  # params.p
    hetero_one_step: OneStepMean | None = dc_field(default=None, metadata=OMIT_NONE)

    def items(self) -> list[tuple[str, RandomMean]]:
        """The means present, by kind ("uniform", "iid", "hetero", "hetero_one_step")."""
        return [(f.name, v) for f in dataclasses.fields(self)
                if (v := getattr(self, f.name)) is not None]


@dataclass
class WorstPoint(Report):
    """One s of an error curve: the worst set found and its error."""

    s: int
    stragglers: list[int] | None
    error: float  # raw_error / scale
    raw_error: float
    exact: bool
    method: str
    upper_bound: float | None  # proved: true worst <= upper_bound (divided by scale)
    mean: float | None = dc_field(default=None, metadata=OMIT_NONE)  # random s-sets
    mean_exact: bool | None = dc_field(default=None, metadata=OMIT_NONE)


@dataclass(kw_only=True)
class AttackReport(Report):
    """What the three attack modes share: the code, the decoder, the search and its label."""

    #: "worst", "threshold" or "curve" (each subclass fixes it)
    mode: ClassVar[str] = ""
    #: the JSON keys of every mode, in order, with the value written when a mode lacks one
    LAYOUT: ClassVar[tuple[tuple[str, Any], ...]] = (
        ("mode", None), ("s", None), ("n", None), ("k", None), ("field", None),
        ("stragglers", None), ("error", None), ("raw_error", None), ("normalize", None),
        ("decoder", None), ("method", None), ("exact", None), ("checked", None),
        ("total", None), ("threshold", None), ("epsilon", None), ("comparison", ""),
        ("ok", None), ("reason", None), ("diagnostics", None), ("elapsed_s", None),
        ("scheme", None), ("decoder_label", None), ("decoder_info", None), ("scale", None),
        ("upper_bound", None), ("raw_upper_bound", None), ("upper_bound_source", ""),
        ("threshold_lower", None), ("threshold_upper", None), ("resolution", None),
        ("closed_form", None), ("random", None), ("curve", None), ("require", None),
        ("require_status", None), ("require_tolerance", None), ("seed", None),
        ("evaluations", None), ("notes", None), ("precision", None), ("stopped_at", None))

    s: int | None  # worst: stragglers attacked; threshold: the threshold; curve: largest s
    n: int
    k: int
    field: str
    normalize: str  # "none" or "k"
    decoder: str
    method: str
    exact: bool
    checked: int
    total: int
    stragglers: list[int] | None = None  # the worst set / the threshold's witness
    error: float | None = None  # in the unit given by ``normalize``
    raw_error: float | None = None  # raw squared error ||a^T B_F - 1||^2
    ok: bool = True
    reason: str = ""
    diagnostics: Diagnostics = dc_field(default_factory=Diagnostics)
    elapsed_s: float = 0.0
    scheme: str = "custom"
    decoder_label: str = ""  # human description of the decoder (weights, groups, ...)
    decoder_info: dict[str, Any] = dc_field(default_factory=dict)
    scale: float = 1.0  # error = raw_error / scale (k with normalize="k")
    seed: int | None = None
    evaluations: int = 0
    notes: list[str] = dc_field(default_factory=list)
    #: ``attack -s precision``: the proved error bound in a message format (null without)
    precision: PrecisionReport | None = None

    def to_dict(self) -> dict[str, Any]:
        own = super().to_dict()
        own["mode"] = self.mode
        return {key: own.get(key, absent) for key, absent in self.LAYOUT}

    @classmethod
    def json_fields(cls) -> list[tuple[str, Any]]:
        """(key, type) of the JSON object, in order (for :mod:`gctool.schemas`)."""
        import typing

        hints = typing.get_type_hints(cls)
        names = {f.name for f in dataclasses.fields(cls)}
        return [(key, Literal[cls.mode] if key == "mode" else hints[key] if key in names
                 else Literal[absent]) for key, absent in cls.LAYOUT]


@dataclass(kw_only=True)
class WorstReport(AttackReport):
    """The worst set of ``s`` stragglers (exact, or heuristic with a proved sandwich
    ``error <= true worst <= upper_bound``)."""

    mode: ClassVar[str] = "worst"
    s: int
    upper_bound: float | None = None
    raw_upper_bound: float | None = None
    upper_bound_source: str = ""
    closed_form: ClosedForm | None = None
    random: RandomMeans | None = None


@dataclass(kw_only=True)
class ThresholdReport(AttackReport):
    """The adversarial threshold: the fewest stragglers whose error exceeds ``epsilon``
    (``threshold_lower <= threshold <= threshold_upper``), and the ``require`` gate."""

    mode: ClassVar[str] = "threshold"
    threshold: int | None = None
    epsilon: float = 0.0
    comparison: str = "error > epsilon"
    threshold_lower: int | None = None
    threshold_upper: int | None = None
    resolution: float | None = None  # milp thresholds: errors below it count as decodable
    require: int | None = None  # the gate "threshold >= require"
    require_status: str | None = None  # "met", "below" or "unproven"
    require_tolerance: int | None = None  # the gate as "tolerates S" (= require S+1)


@dataclass(kw_only=True)
class CurveReport(AttackReport):
    """The worst-case error for s = 0..``s``, optionally with random-set means."""

    mode: ClassVar[str] = "curve"
    s: int
    curve: list[WorstPoint] = dc_field(default_factory=list)
    random: RandomMeans | None = None
    #: the first size asked that the budget left without a point (it stopped the curve there:
    #: ``curve`` holds the points before it, a note gives the refusal); None: every point
    stopped_at: int | None = None


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
    decoder: str | None = None  # "structured" or "generic" (with ``decoders``)
    fallbacks: int = 0  # patterns whose structured vector failed its check (generic used)
    note: str | None = None
    dtype: str = "float64"  # the format of B and A in the file (``dtype``)
    #: ``dtype`` with ``decoders``: the proved error bound of the written decoders (null: none)
    error_bound: float | None = None


@dataclass
class DesignReport(Report):
    """What ``design -o FILE`` wrote (its JSON summary; schema ``design``)."""

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
    report: dict[str, Any] | None = dc_field(default=None, metadata=OMIT_NONE)

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
