"""The public audit API: one function per audit command, returning the report that the command
prints (``report.to_dict()`` is its ``--json`` output).

Each function hands one request record (:mod:`gctool.request`) to the family of the code's
scheme (:func:`gctool.family.family_of`): the matrix-code audits by default
(:func:`gctool.audit.verify`, :func:`gctool.audit.attack.attack`, ...), the family's own where
it has one (sequential schedules, CodedReduce trees, BCC, encoded frames; level profiles of
nested codes).

The CLI calls exactly these functions, so a pipeline that imports gctool gets the answers the
command line gives::

    import gctool
    code = gctool.read_code("schedule.json")
    report = gctool.verify(code)        # the schedule verifier for an sr-sgc file
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from gctool.errors import InvalidInput
from gctool.family import Family, family_of
from gctool.limits import DEFAULT_TOL
from gctool.model import GradientCode
from gctool.request import (
    AttackRequest,
    BoundRequest,
    ProfileRequest,
    Progress,
    VerifyRequest,
)

if TYPE_CHECKING:
    from gctool.audit.attack import AttackOptions

def _kw(**values: Any) -> dict[str, Any]:
    """The keyword arguments that were given (None = the callee's default)."""
    return {k: v for k, v in values.items() if v is not None}


# -- verify -----------------------------------------------------------------------------------
def verify(code: GradientCode, s: int | None = None, *, method: str = "auto",  # noqa: PLR0913 (the options of gctool verify)
           kernel: str = "auto", jobs: int | None = 1, sample: int | None = None,
           seed: int | None = None, exact: bool = False, tol: float = DEFAULT_TOL,
           max_sets: int | None = None, max_condition: float | None = None,
           strict: bool = False, partial: int | None = None,
           profile: Sequence[int] | None = None, level_counts: Sequence[int] | None = None,
           progress: Progress | None = None, runner: Any = None,
           precision: str | None = None, max_error: float | None = None) -> Any:
    """Decide whether ``code`` tolerates its stragglers; the report of ``gctool verify``.

    ``s`` defaults to the code's own s (for sequential schedules it is the λ to check
    against).  ``max_sets`` (None: each audit's default) bounds the enumeration.  The gates
    ``max_condition``/``strict`` are recorded in ``report.gates`` (see :mod:`gctool.gates`;
    :func:`gctool.gates.passed` tells whether they pass).  ``partial=W`` certifies partial
    stragglers of a multi-message code with at most W partitions of missing work;
    ``profile``/``level_counts`` decode level profiles of a nested code.  ``runner`` is the
    executor of the enumeration (None: ``jobs`` local processes; a
    :class:`gctool.audit.distributed.DaskRunner`: a Dask cluster); results do not depend on it.
    ``precision`` (float32, bfloat16, float16) adds the proved bound on the decoded gradient's
    error with messages and decoders in that format (``report.precision``,
    :mod:`gctool.precision`); ``max_error`` makes it a gate.
    """
    from gctool.gates import apply_gates

    _check_precision(precision, max_error)
    if precision is not None:
        _refuse("precision", profile=profile, level_counts=level_counts, partial=partial)
    if profile is not None or level_counts is not None:
        _refuse("a level profile", s=s, sample=sample, exact=exact or None,
                partial=partial)
        return _profile(code, "verify", profile, level_counts, "none")
    if partial is not None:
        from gctool.audit.partial import verify_partial

        _refuse("partial", s=s, sample=sample)
        return verify_partial(code, partial, tol=tol, progress=progress,
                              method="exhaustive" if method == "exhaustive" else "auto",
                              **_kw(max_sets=max_sets))
    request = VerifyRequest(s, method, kernel, jobs, sample, seed, exact, tol, max_sets,
                            progress, runner)
    family = family_of(code)
    if precision is not None and type(family).verify is not Family.verify:
        raise InvalidInput(f"`precision` applies to codes given by their encoding matrix, not "
                           f"to scheme {code.scheme!r}", param="precision")
    if precision is not None:
        from gctool.precision import check_budget

        check_budget(code, s, jobs=jobs or 0)
    report = family.verify(code, request)
    if precision is not None:
        _precision(code, report, precision, max_error, tol, seed, progress, jobs)
    apply_gates(report, max_condition, strict)
    return report


def _check_precision(precision: str | None, max_error: float | None) -> None:
    from gctool.precision import check_design

    check_design(precision, max_error)


def _precision(code: GradientCode, report: Any, precision: str, max_error: float | None,
               tol: float, seed: int | None, progress: Progress | None, jobs: int | None
               ) -> None:
    """Add the precision section to a verify or attack report (``report.precision``, at its
    ``s``), and its warning to ``report.warnings``."""
    from gctool.precision import certify, warning

    report.precision = certify(code, precision, report.s, max_error=max_error, tol=tol,
                               seed=0 if seed is None else seed, jobs=jobs or 0,
                               progress=progress)
    text = warning(report.precision)
    if text is not None:  # a verify report's warnings, an attack report's notes
        getattr(report, "warnings", report.notes).append(text)


# -- attack, threshold, curve -----------------------------------------------------------------
def _options(options: AttackOptions | None, changes: dict[str, Any]) -> AttackOptions:
    from gctool.audit.attack import AttackOptions

    return AttackOptions.of(options, **changes)


def attack(code: GradientCode, s: int | None = None, options: AttackOptions | None = None, *,  # noqa: PLR0913 (the options of gctool attack -s)
           straggler_set: Sequence[int] | None = None,
           profile: Sequence[int] | None = None, level_counts: Sequence[int] | None = None,
           precision: str | None = None, max_error: float | None = None,
           **changes: Any) -> Any:
    """The worst set of ``s`` stragglers (default: the code's s); the report of
    ``gctool attack -s`` (a :class:`~gctool.reports.WorstReport` for matrix codes).

    ``options`` is an :class:`~gctool.audit.attack.AttackOptions` (decoder, weights,
    normalize, method, tol, budgets, seed, jobs, symmetry, random, p, samples, progress, and
    ``runner``: the executor of the exhaustive enumeration, None for ``jobs`` local processes or
    a :class:`gctool.audit.distributed.DaskRunner`); keywords change single options
    (``gctool.attack(code, 3, method="bnb")``).
    ``straggler_set`` audits one set (families that audit one set: encoded frames);
    ``profile``/``level_counts`` decode level profiles of a nested code.  ``precision`` and
    ``max_error`` add the proved error bound in that format at the same s, as in
    :func:`verify` (``report.precision``; a bound above ``max_error`` makes the report fail).
    """
    opts = _options(options, changes)
    _check_precision(precision, max_error)
    if precision is not None:
        _refuse("precision", straggler_set=straggler_set, profile=profile,
                level_counts=level_counts)
        if type(family_of(code)).attack is not Family.attack:
            raise InvalidInput(f"`precision` applies to codes given by their encoding matrix, "
                               f"not to scheme {code.scheme!r}", param="precision")
        from gctool.precision import check_budget

        check_budget(code, s, jobs=opts.jobs or 0)
    if profile is not None or level_counts is not None:
        _refuse("a level profile", s=s, straggler_set=straggler_set,
                random=opts.random or None, p=opts.p, weights=opts.weights,
                decoder=None if opts.decoder == "optimal" else opts.decoder)
        return _profile(code, "attack", profile, level_counts, opts.normalize)
    if straggler_set is not None:
        _refuse("straggler_set", s=s)
        return _attack(code, AttackRequest("set", opts, straggler_set=tuple(straggler_set)))
    report = _attack(code, AttackRequest("worst", opts, s=s))
    if precision is not None:
        _precision(code, report, precision, max_error, opts.tol, opts.seed, opts.progress,
                   opts.jobs)
        report.ok = report.ok and report.precision.ok
        if not report.precision.ok:
            report.reason = report.precision.reason
    return report


def threshold(code: GradientCode, epsilon: float = 0.0, options: AttackOptions | None = None,
              **changes: Any) -> Any:
    """The adversarial threshold: the fewest stragglers whose error exceeds ``epsilon``; the
    report of ``gctool attack --threshold`` (a :class:`~gctool.reports.ThresholdReport`).

    The options ``require=T`` (or ``require_tolerance=S``, the same as T = S+1) make the
    report fail unless the threshold is proved to be at least T; ``options`` and keywords as
    for :func:`attack` (plus ``resolution``).
    """
    return _attack(code, AttackRequest("threshold", _options(options, changes),
                                       epsilon=epsilon))


def curve(code: GradientCode, max_s: int | None = None, options: AttackOptions | None = None,
          *, sizes: Sequence[int] | None = None, **changes: Any) -> Any:
    """The worst-case error for s = 0..max_s (default n), or for the given ``sizes`` only (any
    order, each once; they exclude ``max_s``); the report of ``gctool attack --curve`` (a
    :class:`~gctool.reports.CurveReport`).  Each point is the worst-case search that
    :func:`attack` runs for its s (seeded with the previous point's set), so exact points
    equal ``attack``'s errors.  ``options`` and keywords as for :func:`attack`."""
    return _attack(code, AttackRequest("curve", _options(options, changes), s=max_s,
                                       sizes=sizes))


def _attack(code: GradientCode, request: AttackRequest) -> Any:
    return family_of(code).attack(code, request)


# -- bound ------------------------------------------------------------------------------------
def bound(code: GradientCode | None = None, *, n: int | None = None, k: int | None = None,  # noqa: PLR0913 (the options of gctool bound)
          s: int | None = None, m: int | None = None, d: int | None = None,
          epsilon: float | None = None, link: Any = None, delay: Any = None) -> Any:
    """Load lower bounds for (n, k, s, m) and, for a code, how it compares with them; the
    report of ``gctool bound``.  Families with bounds of their own (sequential schedules,
    CodedReduce, BCC, encoded frames) report those.  ``link``/``delay``: the
    communication and compute model of CodedReduce's time per round (CodedReduce only)."""
    if code is not None:
        if n is not None or k is not None:
            raise InvalidInput("give either a code or n and k, not both")
        return family_of(code).bound(code, BoundRequest(s, d, epsilon, link, delay))
    if link is not None or delay is not None:
        raise InvalidInput("--link and --delay apply to CodedReduce files only")
    from gctool.bounds import bounds

    return bounds(None, n=n, k=k, s=s, m=m, d=d, epsilon=epsilon)


# -- level profiles ---------------------------------------------------------------------------
def _profile(code: GradientCode, command: str, profile: Sequence[int] | None,
             counts: Sequence[int] | None, normalize: str) -> Any:
    if profile is not None and counts is not None:
        raise InvalidInput("a level profile and level counts exclude each other")
    return family_of(code).profile(code, ProfileRequest(command, _levels(profile),
                                                        _levels(counts), normalize))


def _levels(values: Sequence[int] | None) -> tuple[int, ...] | None:
    return None if values is None else tuple(values)


def _refuse(what: str, **given: Any) -> None:
    """InvalidInput for the first of ``given`` that is set (not None) along with ``what``."""
    for name, value in given.items():
        if value is not None:
            raise InvalidInput(f"{name} does not apply with {what}")


__all__ = ["AttackRequest", "BoundRequest", "ProfileRequest", "VerifyRequest", "attack",
           "bound", "curve", "threshold", "verify"]
