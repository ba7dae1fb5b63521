"""The public audit API: one function per audit command, returning the report that the command
prints (``report.to_dict()`` is its JSON output).

Each function hands one request record (:mod:`gctool.request`) to the family of the code's
scheme (:func:`gctool.family.family_of`): the matrix-code audits by default
(:func:`gctool.audit.verify`, :func:`gctool.audit.attack.attack`, ...), the family's own where
it has one (sequential schedules, CodedReduce trees, BCC, encoded frames; level profiles of
nested codes).  The return types (:mod:`gctool.results`) list the reports the families answer
with.

The CLI calls exactly these functions, so a pipeline that imports gctool gets the answers the
command line gives::

    import gctool
    code = gctool.read_code("schedule.json")
    report = gctool.verify(code)        # the schedule verifier for an sr-sgc file
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from gctool.budget import Budget
from gctool.errors import InvalidInput
from gctool.family import Family, family_of
from gctool.model import GradientCode
from gctool.reports import WorstReport
from gctool.request import AttackRequest, BoundRequest, ProfileRequest, VerifyRequest
from gctool.results import (
    AttackResult,
    BoundResult,
    CurveResult,
    ProfileReport,
    ThresholdReport,
    VerifyResult,
)

if TYPE_CHECKING:
    from gctool.audit.attack import AttackOptions
    from gctool.reports import PrecisionReport


# -- verify -----------------------------------------------------------------------------------
def verify(code: GradientCode, s: int | None = None, /, request: VerifyRequest | None = None,
           **changes: Any) -> VerifyResult:
    """Decide whether ``code`` tolerates ``s`` stragglers (default: the request's, else the
    code's own s); the report of ``gctool verify``.

    ``request`` (a :class:`~gctool.request.VerifyRequest`, which documents every option;
    default: the defaults) with ``changes`` applied: ``gctool.verify(code, 3,
    method="exhaustive")``.  The gates ``max_condition``/``strict`` are recorded in
    ``report.gates`` (:func:`gctool.gates.passed` tells whether they pass); ``precision`` adds
    ``report.precision``.  Partial stragglers of a multi-message code are
    :func:`gctool.audit.partial.verify_partial`'s question, level profiles of a nested code
    :func:`profile`'s.
    """
    from gctool.gates import apply_gates
    from gctool.numerics import check_tol_applies

    r = VerifyRequest.of(request, **changes if s is None else {**changes, "s": s})
    check_tol_applies(code.field, r.tol)
    family = family_of(code)
    reads = family.verify_reads(r)
    for name in r.chosen():
        if name not in reads:
            _refuse_untaken(name, code.scheme, "verify", reads)
    if r.seed is not None and r.sample is None and r.precision is None and \
            not family.verify_draws:  # nothing to seed: the seed would be ignored
        raise InvalidInput("`seed` applies to `sample` and `precision`", param="seed")
    if r.precision is not None:
        if type(family).verify is not Family.verify:
            raise InvalidInput(f"`precision` applies to codes given by their encoding matrix, "
                               f"not to scheme {code.scheme!r}", param="precision")
        from gctool.precision import check_budget

        check_budget(code, r.s, jobs=r.jobs or 0, budget=r.budget)
    report = family.verify(code, r)
    if r.precision is not None:
        _precision(code, report, r.precision, r.max_error, r.tolerance, r.seed, r.progress, r.jobs,
                   r.budget)
    apply_gates(report, r.max_condition, r.strict, code, r.budget)
    return report


def _precision(code: GradientCode, report: Any, precision: str, max_error: float | None,  # noqa: PLR0913 (the options of ``precision``)
               tol: float, seed: int | None, progress: Any, jobs: int | None,
               budget: Budget | None) -> PrecisionReport:
    """Add the precision section to a verify or attack report (``report.precision``, at its
    ``s``), and its warning to ``report.warnings``."""
    from gctool.precision import certify, warning

    found = certify(code, precision, report.s, max_error=max_error, tol=tol,
                    seed=0 if seed is None else seed, jobs=jobs or 0, progress=progress,
                    budget=budget)
    report.precision = found
    text = warning(found)
    if text is not None:  # a verify report's warnings, an attack report's notes
        getattr(report, "warnings", report.notes).append(text)
    return found


# -- attack, threshold, curve -----------------------------------------------------------------
def _options(options: AttackOptions | None, changes: dict[str, Any]) -> AttackOptions:
    """``options`` with ``changes`` (the attack engine is imported when an attack runs)."""
    from gctool.audit.attack import AttackOptions

    return AttackOptions.of(options, **changes)


def attack(code: GradientCode, s: int | None = None, options: AttackOptions | None = None, *,
           straggler_set: Sequence[int] | None = None, precision: str | None = None,
           max_error: float | None = None, **changes: Any) -> AttackResult:
    """The worst set of ``s`` stragglers (default: the code's s); the report of
    ``gctool attack -s`` (a :class:`~gctool.reports.WorstReport` for matrix codes).

    ``options`` is an :class:`~gctool.audit.attack.AttackOptions` (decoder, weights,
    normalize, method, tol, budgets, seed, jobs, symmetry, random, p, samples, progress, and
    ``runner``: the executor of the exhaustive enumeration, None for ``jobs`` local processes or
    a :class:`gctool.audit.distributed.DaskRunner`); keywords change single options
    (``gctool.attack(code, 3, method="bnb")``).  ``straggler_set`` audits one set (families
    that audit one set: encoded frames).  ``precision`` and ``max_error`` add the proved error
    bound in that format at the same s, as in :func:`verify` (``report.precision``; a bound
    above ``max_error`` makes the report fail).
    """
    from gctool.precision import check_design

    opts = _options(options, changes)
    family = family_of(code)
    if straggler_set is not None and s is not None:
        raise InvalidInput("`s` and `straggler_set` exclude each other", param="straggler_set")
    check_design(precision, max_error)
    if precision is not None:
        if straggler_set is not None or type(family).attack is not Family.attack:
            raise InvalidInput(f"`precision` applies to the worst case of codes given by their "
                               f"encoding matrix, not to scheme {code.scheme!r} or one set",
                               param="precision")
        from gctool.precision import check_budget

        check_budget(code, s, jobs=opts.jobs or 0, budget=opts.budget)
    one = None if straggler_set is None else tuple(straggler_set)
    request = AttackRequest(opts, s=s, straggler_set=one)
    _refuse_unused(family, code, request, "worst", precision)
    report = family.attack(code, request)
    if precision is not None:
        assert isinstance(report, WorstReport)  # the matrix attack's worst case (checked above)
        found = _precision(code, report, precision, max_error, float(opts.tolerance), opts.seed,
                           opts.progress, opts.jobs, opts.budget)
        report.ok = report.ok and found.ok
        if not found.ok:
            report.reason = found.reason
    return report


def threshold(code: GradientCode, epsilon: float | Fraction | str = 0.0,
              options: AttackOptions | None = None, **changes: Any) -> ThresholdReport:
    """The adversarial threshold: the fewest stragglers whose error exceeds ``epsilon`` (typed
    like ``tol``: a float, a Fraction or a decimal string, read exactly); the report of
    ``gctool attack`` (``threshold``).

    The options ``require=T`` (or ``require_tolerance=S``, the same as T = S+1) make the
    report fail unless the threshold is proved to be at least T; ``options`` and keywords as
    for :func:`attack` (plus ``resolution``).
    """
    family = family_of(code)
    request = AttackRequest(_options(options, changes), epsilon=epsilon)
    _refuse_unused(family, code, request, "threshold")
    return family.threshold(code, request)


def curve(code: GradientCode, max_s: int | None = None, options: AttackOptions | None = None,
          *, sizes: Sequence[int] | None = None, **changes: Any) -> CurveResult:
    """The worst-case error for s = 0..max_s (default n), or for the given ``sizes`` only (any
    order, each once; they exclude ``max_s``); the report of ``gctool attack`` (``curve``) (a
    :class:`~gctool.reports.CurveReport` for matrix codes).  Each point is the worst-case
    search that :func:`attack` runs for its s (seeded with the previous point's set), so exact
    points equal ``attack``'s errors.  ``options`` and keywords as for :func:`attack`."""
    family = family_of(code)
    request = AttackRequest(_options(options, changes), s=max_s, sizes=sizes)
    _refuse_unused(family, code, request, "curve")
    return family.curve(code, request)


def _refuse_unused(family: Family, code: GradientCode, request: AttackRequest, mode: str,
                   precision: str | None = None) -> None:
    """Refuse ``tol`` given for a code over a finite field (decoding is exact there), and
    ``seed`` or ``samples`` given to an attack that would not use them (the family's
    :meth:`~gctool.family.Family.unused_draws`; ``precision``'s empirical check draws from the
    seed)."""
    from gctool.numerics import check_tol_applies

    check_tol_applies(code.field, request.options.tol)
    for name, why in family.unused_draws(code, request, mode).items():
        if getattr(request.options, name) is not None and not (
                name == "seed" and precision is not None):
            raise InvalidInput(f"`{name}` does not apply {why}", param=name)


# -- bound ------------------------------------------------------------------------------------
def bound(code: GradientCode | None = None, *, n: int | None = None, k: int | None = None,  # noqa: PLR0913 (the options of gctool bound)
          s: int | None = None, m: int | None = None, d: int | None = None,
          epsilon: float | Fraction | str | None = None, link: Any = None, delay: Any = None,
          budget: Budget | None = None) -> BoundResult:
    """Load lower bounds for (n, k, s, m) and, for a code, how it compares with them; the
    report of ``gctool bound``.  Families with bounds of their own (sequential schedules,
    CodedReduce, BCC, encoded frames) report those.  ``link``/``delay``: the communication and
    compute model of CodedReduce's time per round (CodedReduce only); ``budget`` (default
    :meth:`Budget.default`) bounds the work."""
    budget = Budget.default() if budget is None else budget
    if code is not None:
        if n is not None or k is not None:
            raise InvalidInput("give either a code or n and k, not both")
        if m is not None:  # else dropped: the report is the code's own m
            raise InvalidInput("`m` does not apply with a code (its code has its own m)",
                               param="m")
        family = family_of(code)
        for name, value in (("s", s), ("d", d), ("epsilon", epsilon)):
            if value is not None and name not in family.bound_takes:
                _refuse_untaken(name, code.scheme, "bounds", family.bound_takes)
        return family.bound(code, BoundRequest(s, d, epsilon, link, delay, budget))
    if link is not None or delay is not None:
        raise InvalidInput("`link` and `delay` apply to CodedReduce files only")
    from gctool.bounds import bounds

    return bounds(None, n=n, k=k, s=s, m=m, d=d, epsilon=epsilon, budget=budget)


def _refuse_untaken(name: str, scheme: str, what: str, takes: frozenset[str]) -> None:
    """Refuse option ``name``, given to the ``what`` ("verify", "bounds") of a family that
    reads only ``takes`` of such options."""
    read = " and ".join(f"`{x}`" for x in sorted(takes))
    verb = "takes" if what == "verify" else "take"
    raise InvalidInput(f"`{name}` does not apply to the {what} of scheme {scheme!r}, which " +
                       (f"{verb} {read} only" if read else "come from the file alone"),
                       param=name)


# -- level profiles ---------------------------------------------------------------------------
def profile(code: GradientCode, levels: Sequence[int] | None = None, *,
            level_counts: Sequence[int] | None = None, judge: bool = True,
            normalize: str = "none", budget: Budget | None = None) -> ProfileReport:
    """Decode the level profile ``levels`` of a nested code (one level per worker), or every
    profile with the given ``level_counts`` (exactly one of them); the report of ``gctool
    verify`` with ``profile`` (``judge``: it fails when a profile does not decode) and of
    ``gctool attack`` with ``profile`` (``judge=False``: the error only; ``normalize="k"``
    divides it by k).  The decodings are estimated before they start and refused above
    ``budget``'s ``max_work`` (default :meth:`Budget.default`)."""
    if (levels is None) == (level_counts is None):
        raise InvalidInput("give either a level profile or level counts", param="levels")
    request = ProfileRequest("verify" if judge else "attack",
                             None if levels is None else tuple(levels),
                             None if level_counts is None else tuple(level_counts), normalize,
                             budget)
    return family_of(code).profile(code, request)


__all__ = ["AttackRequest", "BoundRequest", "ProfileRequest", "VerifyRequest", "attack",
           "bound", "curve", "profile", "threshold", "verify"]
