"""``gctool verify``: certify that a code tolerates s stragglers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from gctool.cli.batch import run_files
from gctool.cli.executor_options import executor_options
from gctool.cli.options import (
    FloatRange,
    budget_of,
    code_files_argument,
    jobs_option,
    json_option,
    load_within,
    max_error_option,
    max_sets_option,
    max_work_option,
    precision_option,
    progress_bar,
    refuse_with,
    tol_option,
    typed,
)
from gctool.cli.output import quiet_option
from gctool.cli.profile_options import parse_profile, profile_options
from gctool.request import VERIFY_KERNELS, VERIFY_METHODS, VerifyRequest

if TYPE_CHECKING:
    from gctool.reports import Report

#: verify draws its progress bar only once a run has lasted this long (seconds)
SHOW_AFTER_S = 1.0


@click.command(epilog="""\b
Examples:
  gctool verify code.json
  gctool verify frc.json crc.json --max-condition 1e8   # CI: exit 1 if either fails
  gctool verify code.json -s 3 --json
  gctool verify code.json --method exhaustive --jobs 2
  gctool verify code.json --sample 50000 --seed 1
  gctool verify code.json --precision float32 --max-error 1e-3   # float32 messages
  gctool design cyclic -n 10 -s 3 --seed 1 | gctool verify -

code.json, frc.json, crc.json: any code files, e.g. from 'gctool design cyclic -n 8 -s 2
--seed 1 -o code.json' and 'gctool design frc -n 6 -s 2 -o frc.json'.

\b
Methods: auto (cheap checks, structural certificates, symmetry, then enumeration),
exhaustive (every straggler set, no shortcuts), structural (a certificate or nothing).
Exit 0 if every set of s stragglers leaves decodable survivors, 1 with a counterexample
(or when --sample finds none: a sample is never a certificate, or when a gate such as
--max-condition or --strict fails: the headline then reads FAIL (gate)), 2 over budget, on a
bad option or on an unreadable file (one stderr line per such file; the others are still
verified).  With several FILEs or -q: one line per file naming it (the full report below
failures); --json: one document of the same shape for one file or many, with each file's
name, exit status and report, or its error (docs/ci.md); the exit status is the worst of the
files'.""")
@code_files_argument
@click.option("-s", "stragglers", type=int, default=None,
              help="Number of stragglers to certify (default: the file's s).")
@click.option("--method", type=click.Choice(VERIFY_METHODS),
              default=VerifyRequest.method, show_default=True, help="How to certify (see below).")
@click.option("--kernel", type=click.Choice(VERIFY_KERNELS), default=VerifyRequest.kernel,
              show_default=True,
              help="Per-set test: reduced s x d left-null-space system, or the direct decoder.")
@jobs_option
@click.option("--sample", type=click.IntRange(1, None), default=None,
              help="Check N random straggler sets only (heuristic: never reports ok).")
@click.option("--seed", type=click.IntRange(0, 2**63 - 1), default=None,
              help="Seed of --sample and of --precision's draws (recorded in the report; fresh "
                   "seeds are below 2^53).")
@click.option("--exact", is_flag=True,
              help="Real codes with integer/rational entries: decide in exact rational "
                   "arithmetic.")
@click.option("--max-condition", type=FloatRange(1, None), default=None, metavar="X",
              help="Gate: exit 1 when the worst condition number of a real/complex code "
                   "exceeds X (or was not computed).")
@click.option("--strict", is_flag=True,
              help="Gate: exit 1 on any numerical warning (e.g. ill-conditioning).")
@click.option("--partial", "partial_work", type=click.IntRange(0, None), default=None,
              metavar="W",
              help="Multi-message codes (with an 'order'): certify that every profile 'worker "
                   "i finished its first c_i partitions' with at most W partitions of missing "
                   "work decodes.")
@precision_option
@max_error_option
@tol_option
@max_sets_option
@json_option
@max_work_option
@quiet_option
@executor_options("verify")
@profile_options
def verify(code_file: tuple[str, ...], stragglers: int | None, method: str, kernel: str,
           jobs: int, sample: int | None, seed: int | None, exact: bool,
           max_condition: float | None, strict: bool, tol: float | None, max_sets: int | None,
           as_json: bool, max_work: float | None, partial_work: int | None,
           profile: str | None, profile_file: str | None, level_counts: str | None,
           runner: Any, precision: str | None, max_error: float | None) -> int:
    """Check that any n-s survivors of each FILE can rebuild the full gradient.

    Exact over GF(q) (and with --exact); over the reals and complex numbers a set decodes
    when its squared residual is at most tol*k, and the report gives the worst residual,
    condition number and decoder norm with their straggler sets.  FILE may be '-' for stdin.
    """
    profile_args = parse_profile(profile, profile_file, level_counts, code_file)
    question = (("--level-counts" if level_counts is not None else "--profile-file"
                 if profile_file is not None else "--profile") if profile_args else
                "--partial" if partial_work is not None else None)
    if question is not None:  # another question than verify's: its options only
        refuse_with(question, {"-s": stragglers, "--sample": sample, "--seed": seed,
                           "--exact": exact or None, "--precision": precision,
                           "--max-error": max_error, "--max-condition": max_condition,
                           "--strict": strict or None, "--kernel": typed("kernel") or None,
                           "--method structural": True if method == "structural" else None,
                           "--partial": partial_work if profile_args else None,
                           "-j": typed("jobs") or None, "--executor dask": runner,
                           **({"--method": typed("method") or None, "--tol": typed("tol") or None,
                               "--max-sets": max_sets}
                              if profile_args else {})})
    elif method == "structural":  # a certificate or nothing: no straggler set is enumerated
        refuse_with("--method structural", {
            "--executor dask": runner,  # --precision's bound runs in local processes
            **({} if precision is not None else {"-j": typed("jobs") or None,
                                                "--max-sets": max_sets})})
    budget = budget_of(max_work, max_sets)
    request = VerifyRequest(s=stragglers, method=method, kernel=kernel, jobs=jobs,
                            sample=sample, seed=seed, exact=exact, tol=tol, max_sets=max_sets,
                            max_condition=max_condition, strict=strict, precision=precision,
                            max_error=max_error, runner=runner, budget=budget)

    def audit(path: str) -> Report:
        import gctool.api as api

        code, left = load_within(path, budget)  # the rest of the budget after reading it
        with progress_bar("verify", after=SHOW_AFTER_S) as progress:
            if profile_args:
                report: Any = api.profile(code, budget=left, **profile_args)
            elif partial_work is not None:
                from gctool.audit.partial import verify_partial

                report = verify_partial(code, partial_work, tol=tol, progress=progress,
                                        method="exhaustive" if method == "exhaustive" else "auto",
                                        budget=left,
                                        **({} if max_sets is None else {"max_sets": max_sets}))
            else:
                report = api.verify(code, request=VerifyRequest.of(request, progress=progress,
                                                                   budget=left))
        return report

    return run_files("verify", code_file, audit, as_json)
