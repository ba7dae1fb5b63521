"""What ``simulate`` and ``train`` share: their options ``--worker-p``, ``--target-gap`` and
``--no-baselines`` (FILE... is :data:`gctool.cli.options.code_files_argument`), and the steps
around their library call: :func:`start` (FILE... and ``--plot``/``--json`` checked),
:func:`worker_p_delay` (``--worker-p`` applied to the delay model), :func:`load_codes` and
:func:`load_within_all` (the codes, read within the budget), and
:func:`finish` (the report rendered, its plot announced, the exit code).  Only click is
imported here; the library when the command runs."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from gctool.cli.exit_codes import exit_code
from gctool.cli.options import FloatRange, load_code, load_within
from gctool.cli.output import status, writes_stdout
from gctool.request import TARGET_GAP

if TYPE_CHECKING:
    from gctool.budget import Budget
    from gctool.model import GradientCode
    from gctool.sim.delays import DelayModel

F = TypeVar("F", bound=Callable[..., Any])


def worker_p_option(help: str) -> Callable[[F], F]:
    """``--worker-p P1,P2,...|FILE`` (parameter ``worker_p``) with the command's ``help``."""
    return click.option("--worker-p", "worker_p", default=None, metavar="P1,P2,...|FILE",
                        help=help)


target_gap_option = click.option(
    "--target-gap", type=FloatRange(0, 1, min_open=True), default=TARGET_GAP,
    show_default=True, help="Target loss: loss* + gap (loss(start) - loss*).")
no_baselines_option = click.option("--no-baselines", is_flag=True,
                                   help="Only the given files, no baselines.")


def start(code_files: tuple[str, ...], plot: str | None, as_json: bool) -> None:
    """Refuse FILE... reading stdin twice, and ``--plot`` and ``--json`` both on stdout."""
    from gctool._files import stdin_once

    stdin_once(*code_files)
    if as_json and writes_stdout(plot):
        raise click.UsageError("--plot and --json both write to stdout; choose one")


def worker_p_delay(delay: DelayModel, worker_p: str | None) -> DelayModel:
    """``delay`` with the per-worker straggling probabilities of ``--worker-p`` (read first:
    their own errors come before the model's), which only ``--delay bernoulli`` takes."""
    if worker_p is None:
        return delay
    from gctool.sim.delays import Bernoulli, parse_worker_p

    probabilities = parse_worker_p(worker_p)
    if not isinstance(delay, Bernoulli):
        raise click.UsageError("--worker-p needs --delay bernoulli")
    return delay.with_worker_p(probabilities)


def load_codes(code_files: tuple[str, ...]) -> list[tuple[str, GradientCode]]:
    """(name, code) of each FILE ('-' is named stdin)."""
    return [(name_of(path), load_code(path)) for path in code_files]


def load_within_all(code_files: tuple[str, ...], budget: Budget
                    ) -> tuple[list[tuple[str, GradientCode]], Budget]:
    """(name, code) of each FILE, each read within what the ones before left of ``budget``
    (:func:`gctool.cli.options.load_within`), and what they all leave of it."""
    codes = []
    for path in code_files:
        code, budget = load_within(path, budget)
        codes.append((name_of(path), code))
    return codes, budget


def name_of(path: str) -> str:
    """How a report names FILE (``-`` is stdin)."""
    return path if path != "-" else "stdin"


def finish(report: Any, plot: str | None, as_json: bool) -> int:
    """Say where the plot went (unless on stdout), render the report (unless the SVG itself
    went to stdout) and return the command's exit code."""
    if report.plot is not None and plot != "-":
        status(f"wrote plot to {plot} ({report.plot['bytes']:,} bytes)")
    if as_json or plot != "-":
        from gctool.cli.render import render

        render(report, as_json)
    return int(exit_code(report))
