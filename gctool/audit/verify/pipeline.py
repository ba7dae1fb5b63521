"""The order of ``verify``'s stages (see the package docstring): :func:`verify_with` builds the
:class:`~gctool.audit.verify.run.Run` of a request (:class:`gctool.request.VerifyRequest`,
checked when it was made); :func:`execute` runs the stages until one answers.  They share the
request's one work budget in order: each stage admitted on its estimate (the rotation's
detection, a certificate, whether it proves or not, the reduction of B with the decoding with
all n workers) spends it, with the CPU time of the exact decisions the run's meter charged
(:meth:`~gctool.audit.verify.run.Run.spend`), and the stages after it get what that leaves
(:meth:`gctool.budget.Budget.rest`), so their refusals name what the earlier stages used."""

from __future__ import annotations

import itertools
from math import comb
from typing import Any

import numpy as np

from gctool._signals import checkpoint
from gctool.audit.checks import check_s
from gctool.audit.symmetry import Rotation, held_rotation
from gctool.audit.verify.classes import try_classes
from gctool.audit.verify.enumeration import enumerate_sets
from gctool.audit.verify.run import Run
from gctool.audit.verify.shortcuts import (
    certificate,
    check_reduction_work,
    enumeration_work,
    first_checks,
    lost_partition,
    rank_bound,
)
from gctool.decode.cost import decoder_set_time
from gctool.engine.enumeration import survivors_of
from gctool.engine.parallel import resolve_jobs
from gctool.errors import InvalidInput, SearchInterrupted
from gctool.exactls import Undecided
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
    """Run the stages in order; the first that answers gives the report (:func:`settle`).
    A set float64 cannot decide (R/C, s > 0, no sample) is not the end while a set of s
    stragglers that fails clearly exists: :func:`clear_counterexample` looks for one."""
    try:
        return settle(run, _stages(run))
    except Undecided as exc:
        if run.s == 0 or not run.numeric or run.sample is not None:
            raise
        return clear_counterexample(run, exc)


def clear_counterexample(run: Run, undecided: Undecided) -> VerifyReport:
    """The first set of s stragglers (lexicographic order) that the direct decoder proves to
    fail, each set decided on its own (one it cannot decide is passed over); none, or more
    sets than the work budget affords at the decoder's time per set: ``undecided`` is
    raised.  A proved failure is a finding whatever the doubt on other sets; 'ok' never
    follows from here.  (The enumeration stops at its first undecided set: [[1, 3], [2, 6],
    a, 1.5 a + 1e-15 noise] stopped on [0, 1] though straggling [2, 3] fails clearly.)"""
    n, s = run.code.n, run.s
    if not run.budget.affords(comb(n, s) * decoder_set_time(run.code, s)):
        raise undecided
    sets = itertools.combinations(range(n), s)
    step = run.decoder.chunk_size(n - s)
    before = 0  # sets of earlier chunks, all passed over
    while True:
        checkpoint()
        S = np.array(list(itertools.islice(sets, step)), dtype=np.intp).reshape(-1, s)
        if S.shape[0] == 0:
            raise undecided
        at = _first_failing(run, S)
        if at is not None:
            rows = S[at].tolist()
            # the sets scanned up to the counterexample, in lexicographic order
            run.state.checked = run.state.represented = before + at + 1
            return run.report(
                False, "direct-scan", f"straggler set {rows} fails (proved by the direct "
                "decoder; float64 could not decide every set before it)",
                counterexample=rows, kernel="direct")
        before += S.shape[0]


def _first_failing(run: Run, S: np.ndarray) -> int | None:
    """The index in S of the first set whose survivors the direct decoder proves not to
    decode, every set it cannot decide passed over; None if there is none."""
    try:
        ok = run.decoder.evaluate(survivors_of(S, run.code.n)).ok
    except Undecided:
        if S.shape[0] == 1:
            return None
        return next((i for i in range(S.shape[0])
                     if _first_failing(run, S[i:i + 1]) is not None), None)
    bad = np.flatnonzero(~ok)
    return int(bad[0]) if bad.size else None


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

        run.spend(check_exact_input(run.code, run.budget))  # (the later stages get the rest)
    rot = None
    if cheap:  # a partition all of whose holders straggle: no linear algebra needed
        early = lost_partition(run)
        if early is not None:
            return early
    if cheap and run.finite:  # the BCH certificate needs the rotation
        rot = detect(run)
    if cheap and run.s > 0 and run.sample is None:  # a structural proof first: it
        # needs no O(n^3) reduction (a requested sample is a sample: never "ok")
        early = certificate(run, rot)
        if early is not None:
            return early
    if cheap and not run.finite and run.method != "structural":  # O(n K): after the
        rot = detect(run)  # certificates (structural: no enumeration follows, none needed)
    early = check_reduction_work(run, rot) or first_checks(run, cheap)
    if early is not None:
        return early
    red = run.reduction()
    if cheap:
        early = rank_bound(run, red)
        if early is not None:
            return early
    run.spend(0.0)  # the checks' exact decisions, as measured: the enumeration gets the rest
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


def detect(run: Run) -> Rotation | None:
    """The code's rotation, held to the budget (:func:`gctool.audit.symmetry.held_rotation`,
    as ``attack`` holds it): free below :data:`~gctool.audit.symmetry.ROTATION_FREE_NS`,
    else looked for when it fits the budget and costs less than the enumeration without
    orbits (:func:`enumeration_work`), which it can only shorten; ``method=structural``,
    whose BCH certificate needs it, is refused in one line above the budget.  Its notes go
    to the report's; admitted, its estimate is spent: the later stages are held to what it
    leaves (:meth:`gctool.budget.Budget.rest`)."""
    code = run.code
    held = held_rotation(
        code, run.budget, f"verify (n={code.n}, k*m={code.B.shape[1]}, {code.field})",
        needed=run.method == "structural", instead=lambda: enumeration_work(run, None))
    run.symmetry_notes.extend(held.notes)
    run.spend(held.spent)
    return held.rotation
