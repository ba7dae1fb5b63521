"""The order of ``verify``'s stages (see the package docstring): :func:`verify` checks the
request and builds the :class:`~gctool.audit.verify.run.Run`; :func:`execute` runs the stages
until one answers."""

from __future__ import annotations

from gctool.audit.checks import Progress, check_s
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
from gctool.decode import DEFAULT_TOL
from gctool.engine.parallel import resolve_jobs
from gctool.engine.sweep import Runner
from gctool.errors import InvalidInput, SearchInterrupted
from gctool.limits import DEFAULT_MAX_SETS
from gctool.model import GradientCode
from gctool.reports import VerifyReport

METHODS = ("auto", "exhaustive", "structural")
KERNELS = ("auto", "nullspace", "direct")


def verify(  # noqa: PLR0913 (the options of gctool verify)
    code: GradientCode,
    s: int | None = None,
    *,
    tol: float = DEFAULT_TOL,
    max_sets: int = DEFAULT_MAX_SETS,
    progress: Progress | None = None,
    method: str = "auto",
    kernel: str = "auto",
    jobs: int | None = 1,
    sample: int | None = None,
    seed: int | None = None,
    exact: bool = False,
    runner: Runner | None = None,
) -> VerifyReport:
    """Decide whether ``code`` tolerates any ``s`` stragglers (default: the code's own s).

    ``jobs`` processes share the enumeration (``None`` or 0: every core); the result does
    not depend on it.  ``runner`` runs the enumeration elsewhere instead (a
    :class:`gctool.audit.distributed.DaskRunner`; same results).  ``exact=True`` decides
    real codes with integer or rational entries in exact rational arithmetic.  Over GF(q)
    every decision is exact; over R/C it follows the tolerance policy of
    :mod:`gctool.decode` and reports diagnostics."""
    s = code.s if s is None else s
    check_s(s, code.n)
    if method not in METHODS:
        raise InvalidInput(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    if kernel not in KERNELS:
        raise InvalidInput(f"kernel must be one of {', '.join(KERNELS)}, got {kernel!r}")
    if sample is not None and (sample < 1 or method != "auto"):
        raise InvalidInput("--sample N needs N >= 1 and the default method")
    run = Run(code, s, tol, max_sets, progress, method, kernel, resolve_jobs(jobs),
              sample, seed, exact, runner)
    try:
        return execute(run)
    except KeyboardInterrupt:
        raise SearchInterrupted(run.state.summary()) from None


def execute(run: Run) -> VerifyReport:
    """Run the stages in order; the first that answers gives the report."""
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
            "--method auto (enumeration with symmetry) or --method exhaustive")
    if run.sample is not None:
        return enumerate_sets(run, red, None)
    if cheap:
        rep = try_classes(run, red, rot)
        if rep is not None:
            return rep
    return enumerate_sets(run, red, rot)
