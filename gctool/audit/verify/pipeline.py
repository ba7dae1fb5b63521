"""The order of ``verify``'s stages (see the package docstring): :func:`verify_with` builds the
:class:`~gctool.audit.verify.run.Run` of a request (:class:`gctool.request.VerifyRequest`,
checked when it was made); :func:`execute` runs the stages until one answers."""

from __future__ import annotations

from typing import Any

from gctool.audit.checks import check_s
from gctool.audit.symmetry import find_rotation
from gctool.audit.verify.classes import try_classes
from gctool.audit.verify.enumeration import enumerate_sets
from gctool.audit.verify.run import Run
from gctool.audit.verify.shortcuts import (
    certificate,
    check_reduction_work,
    first_checks,
    lost_partition,
    rank_bound,
)
from gctool.engine.parallel import resolve_jobs
from gctool.errors import InvalidInput, SearchInterrupted
from gctool.model import GradientCode
from gctool.reports import VerifyReport
from gctool.request import VerifyRequest


def verify(code: GradientCode, s: int | None = None, **options: Any) -> VerifyReport:
    """Decide whether ``code`` tolerates any ``s`` stragglers (default: the code's own s):
    :func:`verify_with` of ``VerifyRequest(s=s, **options)`` (:class:`gctool.request.VerifyRequest`
    names and checks the options).

    ``jobs`` processes share the enumeration (``None`` or 0: every core); the result does
    not depend on it.  ``runner`` runs the enumeration elsewhere instead (a
    :class:`gctool.audit.distributed.DaskRunner`; same results).  ``exact=True`` decides
    real codes with integer or rational entries in exact rational arithmetic.  Over GF(q)
    every decision is exact; over R/C it follows the tolerance policy of
    :mod:`gctool.decode` and reports diagnostics."""
    return verify_with(code, VerifyRequest(s=s, **options))


def verify_with(code: GradientCode, request: VerifyRequest) -> VerifyReport:
    """The matrix-code verify of ``code`` as ``request`` asks (its gates and precision are
    :func:`gctool.verify`'s)."""
    s = code.s if request.s is None else request.s
    check_s(s, code.n)
    run = Run(code, request, s, resolve_jobs(request.jobs))
    try:
        return execute(run)
    except KeyboardInterrupt:
        raise SearchInterrupted(run.state.summary()) from None


def execute(run: Run) -> VerifyReport:
    """Run the stages in order; the first that answers gives the report (:func:`settle`)."""
    return settle(run, _stages(run))


def settle(run: Run, report: VerifyReport) -> VerifyReport:
    """When float64 could not decide the full set (:func:`first_checks`), the stages ran on
    to look for a clearly failing s-set: a counterexample the direct decoder confirms (it
    proves its verdicts) answers; anything else raises the full set's Undecided.  (A rank-1
    + 1e-14 noise 4 x 2 code stopped undecided at s = 3, every 3-set failing clearly.)"""
    if run.undecided_full is None:
        return report
    S = report.counterexample
    if report.ok or S is None or not run.fails(list(S)):
        raise run.undecided_full
    return report


def _stages(run: Run) -> VerifyReport:
    cheap = run.method != "exhaustive"
    if run.exact:
        from gctool.audit.rational import check_exact_input

        check_exact_input(run.code)
    rot = None
    if cheap:  # a partition all of whose holders straggle: no linear algebra needed
        early = lost_partition(run)
        if early is not None:
            return early
    if cheap and run.finite:  # the BCH certificate needs the rotation
        rot, note = find_rotation(run.code)
        run.symmetry_notes.extend([note] if note else [])
    if cheap and run.s > 0 and run.sample is None:  # a structural proof first: it
        # needs no O(n^3) reduction (a requested sample is a sample: never "ok")
        early = certificate(run, rot)
        if early is not None:
            return early
    if cheap and not run.finite:  # O(n K) per candidate: after the certificates
        rot, note = find_rotation(run.code)
        run.symmetry_notes.extend([note] if note else [])
    check_reduction_work(run)
    early = first_checks(run, cheap)
    if early is not None:
        return early
    red = run.reduction()
    if cheap:
        early = rank_bound(run, red)
        if early is not None:
            return early
    if run.method == "structural":
        raise InvalidInput(
            f"no structural certificate applies to this code at s = {run.s}; use "
            "`method`=auto (enumeration with symmetry) or `method`=exhaustive")
    if run.sample is not None:
        return enumerate_sets(run, red, None)
    if cheap:
        rep = try_classes(run, red, rot)
        if rep is not None:
            return rep
    return enumerate_sets(run, red, rot)
