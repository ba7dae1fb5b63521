"""``gctool verify``: certify that a code tolerates s stragglers."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import click

from gctool.cli.executor_options import executor_options
from gctool.cli.exit_codes import ExitCode
from gctool.cli.options import code_argument, emit_json, json_option, load_code, tol_option
from gctool.cli.profile_options import profile_options

#: default --max-sets of verify (= gctool.limits.DEFAULT_MAX_SETS; not imported, to keep
#: the CLI start-up free of library modules)
VERIFY_MAX_SETS = 5_000_000
SHOW_AFTER_S = 1.0


@contextmanager
def delayed_progress(label: str) -> Iterator[Callable[[int, int], None] | None]:
    """A progress callback that draws a rich bar with an ETA on stderr, only when stderr is a
    terminal and only once the run has lasted about a second."""
    if not sys.stderr.isatty():
        yield None
        return
    start = time.monotonic()
    state: dict[str, Any] = {}

    def update(done: int, total: int) -> None:
        if "bar" not in state:
            if time.monotonic() - start < SHOW_AFTER_S:
                return
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TimeRemainingColumn,
            )

            bar = Progress(f"[bold]{label}", BarColumn(), MofNCompleteColumn(),
                           TimeRemainingColumn(), console=Console(stderr=True), transient=True)
            bar.start()
            state["bar"], state["task"] = bar, bar.add_task(label, total=total)
        state["bar"].update(state["task"], completed=done, total=total)

    try:
        yield update
    finally:
        if "bar" in state:
            state["bar"].stop()


@click.command(epilog="""\b
Examples:
  gctool verify code.json
  gctool verify code.json -s 3 --json
  gctool verify code.json --method exhaustive --jobs 2
  gctool verify big.json --sample 100000 --seed 1
  gctool design cyclic -n 10 -s 3 --seed 1 | gctool verify -

\b
Methods: auto (cheap checks, structural certificates, symmetry, then enumeration),
exhaustive (every straggler set, no shortcuts), structural (a certificate or nothing).
Exit 0 if every set of s stragglers leaves decodable survivors, 1 with a counterexample
(or when --sample finds none: a sample is never a certificate), 2 over budget.""")
@code_argument
@click.option("-s", "stragglers", type=int, default=None,
              help="Number of stragglers to certify (default: the file's s).")
@click.option("--method", type=click.Choice(["auto", "exhaustive", "structural"]),
              default="auto", show_default=True, help="How to certify (see below).")
@click.option("--kernel", type=click.Choice(["auto", "nullspace", "direct"]), default="auto",
              show_default=True,
              help="Per-set test: reduced s x d left-null-space system, or the direct decoder.")
@click.option("--jobs", "-j", type=click.IntRange(0, None), default=0, show_default=True,
              help="Worker processes (0 = every core); results do not depend on it.")
@click.option("--sample", type=click.IntRange(1, None), default=None,
              help="Check N random straggler sets only (heuristic: never reports ok).")
@click.option("--seed", type=click.IntRange(0, 2**63 - 1), default=None,
              help="Seed of --sample (recorded in the report).")
@click.option("--exact", is_flag=True,
              help="Real codes with integer/rational entries: decide in exact rational "
                   "arithmetic.")
@tol_option
@click.option("--max-sets", type=click.IntRange(1, None), default=VERIFY_MAX_SETS,
              show_default=True,
              help="Refuse runs that must evaluate more straggler sets than this (after "
                   "symmetry reductions).")
@json_option
@executor_options("verify")
@profile_options("verify")
def verify(code_file: str, stragglers: int | None, method: str, kernel: str, jobs: int,
           sample: int | None, seed: int | None, exact: bool, tol: float, max_sets: int,
           as_json: bool) -> int:
    """Check that any n-s survivors of FILE can rebuild the full gradient.

    Exact over GF(q) (and with --exact); over the reals and complex numbers a set decodes
    when its squared residual is at most tol*k, and the report gives the worst residual,
    condition number and decoder norm with their straggler sets.  FILE may be '-' for stdin.
    """
    # -- sr-sgc / m-sgc schedules and coded-reduce trees have their own verify --
    from gctool.cli.sequential_dispatch import dispatch_verify

    if (handled := dispatch_verify(code_file)) is not None:
        return handled
    # -------------------------------------------------------------------------------------
    from gctool.audit import verify as run_verify

    code = load_code(code_file)
    with delayed_progress("verify") as progress:
        report = run_verify(code, stragglers, tol=tol, max_sets=max_sets, progress=progress,
                            method=method, kernel=kernel, jobs=jobs, sample=sample, seed=seed,
                            exact=exact)
    if as_json:
        emit_json(report.to_dict())
    else:
        render(report)
    return int(ExitCode.OK if report.ok else ExitCode.FINDING)


def render(r: Any) -> None:
    """Text rendering of a VerifyReport on stdout."""
    from rich.markup import escape

    from gctool.cli.options import fmt, stdout_console

    con = stdout_console()
    head = {"ok": f"[bold green]OK: tolerates any {r.s} stragglers[/]",
            "inconclusive": f"[bold yellow]NOT CERTIFIED: no counterexample among "
                            f"{r.checked:,} sampled sets[/]"}.get(
        r.verdict, f"[bold red]FAIL: does not tolerate {r.s} stragglers[/]")
    con.print(f"{head}  ({escape(r.scheme)}, n={r.n}, k={r.k}, {r.field})")
    con.print(escape(r.reason))
    if r.counterexample is not None:
        con.print(f"counterexample: stragglers {r.counterexample}")
    label = "exact" if r.exact else "heuristic"
    tol = "" if r.tolerance is None else f", tol {r.tolerance:g}"
    kern = f", {r.kernel} kernel" if r.kernel and r.kernel != "none" else ""
    con.print(f"checked {r.checked:,} of {r.total:,} sets by {r.method} ({label}, "
              f"{r.arithmetic} arithmetic{tol}{kern}, {r.jobs} job(s)) in {r.elapsed_s:.3f}s")
    if r.reduction:
        red = r.reduction
        con.print(f"reduction: {red['kind']}, {red['checked']:,} set(s) stand for "
                  f"{red['represents']:,} (x{red['factor']:g})")
    d = r.diagnostics
    if d.max_residual is not None or d.min_failing_error is not None:
        def where(S: list[int] | None) -> str:
            return f"  (stragglers {S})" if S else ""

        con.print(f"  worst residual      {fmt(d.max_residual)}{where(d.max_residual_stragglers)}")
        con.print(f"  worst condition     {fmt(d.max_condition)}"
                  f"{where(d.max_condition_stragglers)}"
                  + (f"  \\[proved bound {fmt(d.condition_bound)}]" if d.condition_bound else ""))
        con.print(f"  largest decoder     {fmt(d.max_decoder_norm)}"
                  f"{where(d.max_decoder_norm_stragglers)}")
        if d.min_failing_error is not None:
            con.print(f"  smallest failing error {fmt(d.min_failing_error)}")
    for w in r.warnings:
        con.print(f"[bold yellow]warning:[/] {escape(w)}")
