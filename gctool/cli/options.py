"""Options shared by every command, defined once so they are spelled the same everywhere."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import click

from gctool.limits import (
    DEFAULT_MAX_PROFILES,
    DEFAULT_MAX_WORK,
    DEFAULT_SCHEDULE_TRANSITIONS,
    DEFAULT_TOL,
    SPECTRUM_MAX_SETS,
)

if TYPE_CHECKING:
    from hashlib import _Hash

    from gctool.budget import Budget

if TYPE_CHECKING:
    from gctool.model import GradientCode

F = TypeVar("F", bound=Callable[..., Any])


class FloatRange(click.FloatRange):
    """``click.FloatRange`` that also refuses NaN and infinities (every comparison with NaN is
    false, so click's own range check lets ``nan`` through)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None
                ) -> float:
        import math

        rv = super().convert(value, param, ctx)
        if not math.isfinite(rv):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return rv

json_option = click.option(
    "--json", "as_json", is_flag=True, help="Write one JSON document to stdout instead of text."
)


def report_json_option(what: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``--json`` of a command whose output (``-o``) may itself be stdout (design, export):
    with ``-o FILE`` the report on ``what`` was written; with ``-o -`` it is refused."""
    return click.option(
        "--json", "as_json", is_flag=True,
        help=f"With -o FILE: write the report on the {what} as one JSON document to stdout "
             f"instead of text (with -o -, the {what} itself is the JSON on stdout: refused).")


seed_option = click.option(
    "--seed", type=click.IntRange(0, 2**63 - 1), default=None,
    help="Seed for random choices; the seed used is always recorded (fresh seeds are below "
         "2^53, exact in every JSON reader), so results can be redone.",
)
def complete_with(values: Any) -> Any:
    """A ``shell_complete`` callback offering ``values()`` (called when completing, so the
    lists may come from the library) that start with what was typed.  bash inserts a value as
    it is, so one with parentheses (``GF(7)``) is offered quoted there (zsh and fish quote
    what they insert)."""
    def complete(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[Any]:
        import os
        import shlex

        from click.shell_completion import CompletionItem

        bash = os.environ.get("_GCTOOL_COMPLETE", "").startswith("bash")
        typed = incomplete.lstrip("'\"")
        return [CompletionItem(shlex.quote(str(v)) if bash else str(v)) for v in values()
                if str(v).startswith(typed)]

    return complete


#: what completion offers after --field (any GF(p) and GF(p^m) is accepted)
COMMON_FIELDS = ("real", "complex", "auto", "GF(2)", "GF(3)", "GF(5)", "GF(7)", "GF(11)",
                 "GF(13)", "GF(31)", "GF(2^4)", "GF(2^8)")


def delay_models() -> list[str]:
    """The delay models and shipped traces completion offers after --delay."""
    from gctool.sim.delays import SYNTHETIC
    from gctool.sim.traces import BUILTIN

    return list(SYNTHETIC) + [f"trace:{name}" for name in BUILTIN]


def sparsifiers() -> list[str]:
    """The sparsifiers completion offers after --sparsify."""
    from gctool.sim.sparsify import METHODS

    return list(METHODS)


field_option = click.option(
    "--field", "field_spec", metavar="FIELD", default=None,
    shell_complete=complete_with(lambda: COMMON_FIELDS),
    help="real, complex, GF(p), GF(p^m), GF(2^8, x^8+x^4+x^3+x^2+1), or auto (cyclic-mds/rs/comm).",
)
class OutputPath(click.Path):
    """A file gctool will write ('-' = stdout): checked when the options are parsed, before
    any work (:func:`gctool._files.check_output`)."""

    def __init__(self) -> None:
        super().__init__(dir_okay=False, allow_dash=True)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None
                ) -> str:
        from gctool._files import check_output
        from gctool.errors import InvalidInput

        try:
            check_output(value)
        except InvalidInput as exc:
            self.fail(str(exc), param, ctx)
        return str(super().convert(value, param, ctx))


output_path = OutputPath()


class SuffixedOutputPath(OutputPath):
    """A file to write whose format follows its suffix, so a name with any other suffix
    (``plan.csv``, ``plot.txt``) is refused rather than silently written in the wrong format."""

    def __init__(self, suffixes: tuple[str, ...], hint: str) -> None:
        super().__init__()
        self.suffixes, self.hint = suffixes, hint

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None
                ) -> Any:
        import os

        from gctool.cli.output import writes_stdout

        suffix = os.path.splitext(str(value))[1].lower()
        if suffix and suffix not in self.suffixes and not writes_stdout(str(value)) \
                and not str(value).startswith("/dev/"):
            self.fail(f"{value!r}: unknown suffix {suffix!r}; {self.hint}", param, ctx)
        return super().convert(value, param, ctx)


#: ``-o`` of design and export: JSON or NPZ chosen by the suffix
code_output_path = SuffixedOutputPath(
    (".json", ".npz"), "use .json or .npz (the format follows the suffix), or '-' for JSON on "
    "stdout")
#: ``--plot`` of simulate and train, ``--svg`` of show
svg_output_path = SuffixedOutputPath((".svg",), "use .svg (the plot is an SVG)")
#: ``--record`` of train (a delay trace)
csv_output_path = SuffixedOutputPath((".csv",), "use .csv (the trace is CSV)")
code_argument = click.argument("code_file", metavar="FILE", type=click.Path(allow_dash=True))
#: FILE... of the audit commands (verify, attack, bound): the parameter keeps the name
#: ``code_file`` (a tuple) so shared decorators find it
code_files_argument = click.argument("code_file", metavar="FILE...", nargs=-1, required=True,
                                     type=click.Path(allow_dash=True))
jobs_option = click.option(
    "-j", "--jobs", type=click.IntRange(0, None), default=0, show_default=True,
    help="Worker processes, or threads for the compiled kernels (0 = every core; small "
         "searches run in one); results do not depend on it.")
tol_option = click.option(
    "--tol", type=FloatRange(0, None), default=None,
    help=f"Reals/complex: a survivor set decodes when its squared error is <= tol*k (default "
         f"{DEFAULT_TOL:g}; refused over GF(q), where decoding is exact).",
)
precision_option = click.option(
    "--precision", type=click.Choice(["float32", "bfloat16", "float16"]), default=None,
    help="Also prove a bound on the decoded gradient's error when messages and decoders are in "
         "this format (float32 accumulation; docs/precision.md), with its worst straggler set "
         "and an empirical check.")
max_error_option = click.option(
    "--max-error", type=FloatRange(0, None, min_open=True), default=None, metavar="E",
    help="With --precision: exit 1 when the proved bound exceeds E (relative to "
         "sum_j ||g_j||) for some straggler set.")
max_sets_option = click.option(
    "--max-sets", type=click.IntRange(1, None), default=None, metavar="N",
    help="An explicit cap: refuse exhaustive searches over more than N straggler sets (by "
         "default only --max-work, the estimated time, limits them). It also replaces the "
         f"default caps of the searches that count other things: {DEFAULT_SCHEDULE_TRANSITIONS:,}"
         f" transitions of a schedule or tree file, {DEFAULT_MAX_PROFILES:,} partial-work "
         f"profiles, {SPECTRUM_MAX_SETS:,} straggler sets of an encoded frame.",
)


class Time(click.ParamType):
    """A time with its unit (``30s``, ``10min``, ``2h``; :func:`gctool.budget.parse_time`), in
    seconds."""

    name = "time"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None
                ) -> float:
        from gctool.budget import parse_time
        from gctool.errors import InvalidInput

        if isinstance(value, float):
            return value
        try:
            return parse_time(param.opts[0] if param is not None else "TIME", value)
        except InvalidInput as exc:
            self.fail(str(exc).split(": ", 1)[-1], param, ctx)


max_work_option = click.option(
    "--max-work", type=Time(), default=None, metavar="TIME",
    help="Work budget: refuse a step whose estimated time (on the jobs that run it) is above "
         f"TIME, e.g. 30s, 10min, 2h (default {DEFAULT_MAX_WORK}s; env GCTOOL_MAX_WORK).")


def budget_of(max_work: float | None, max_sets: int | None = None) -> Budget:
    """The budget of one invocation: the environment's (:meth:`gctool.budget.Budget.default`)
    with the options given."""
    from gctool.budget import Budget

    return Budget.default().with_(max_work=max_work, max_sets=max_sets)


def typed(name: str) -> bool:
    """Whether the user gave the option of parameter ``name`` on the command line (its default,
    even when it is the same value, is not typed: click's parameter source)."""
    from click.core import ParameterSource

    return click.get_current_context().get_parameter_source(name) is ParameterSource.COMMANDLINE


def refuse_typed(flags: dict[str, str], applies_to: str) -> None:
    """A usage error for the first option of ``flags`` (parameter name -> flag) that the user
    typed where it would be ignored: '--restarts applies to --method auto or greedy'."""
    for name, flag in flags.items():
        if typed(name):
            raise click.UsageError(f"{flag} applies to {applies_to}")


def refuse_with(question: str, given: dict[str, Any]) -> None:
    """A usage error for the first option of ``given`` (flag -> value, None when not set) that
    is set along with ``question``, which does not use it: '-s does not apply with --partial'."""
    for flag, value in given.items():
        if value is not None:
            raise click.UsageError(f"{flag} does not apply with {question}")


def single_file(files: str | tuple[str, ...], why: str) -> str:
    """The one FILE of an option that works on a single code (e.g. ``--profile``)."""
    if isinstance(files, str):
        return files
    if len(files) != 1:
        raise click.UsageError(f"{why} takes exactly one FILE, got {len(files)}")
    return files[0]


def load_code(path: str) -> GradientCode:
    """The code of FILE ``path``, for a command without a work budget (:func:`load_within`
    otherwise)."""
    from gctool.io import read_code

    return read_code(path)


class ReadingKey(Protocol):
    """A key that a command's read of its code file feeds: its bytes go to :attr:`digest` as
    they are read, and :meth:`read` is called once they all have
    (:class:`gctool.cli.executor_options.RunKey`, ``--checkpoint``'s)."""

    digest: _Hash

    def read(self) -> None: ...


#: the key the running command's read of its code file feeds (:func:`load_within`), if any
READING_KEY: ContextVar[ReadingKey | None] = ContextVar("gctool_reading_key", default=None)


def load_within(path: str, budget: Budget) -> tuple[GradientCode, Budget]:
    """(the code of FILE ``path``, what reading it leaves of ``budget`` to the command's work):
    reading is estimated and held to ``budget`` before the file is read
    (:func:`gctool.io.load_code`).  Under ``--checkpoint`` its bytes, as they are read, are
    the run's key's (:class:`gctool.cli.executor_options.RunKey`)."""
    from gctool.io import load_code as load

    key = READING_KEY.get()
    if key is None:
        return load(path, budget)
    code, left = load(path, budget, digest=key.digest)
    key.read()
    return code, left


@contextmanager
def progress_bar(label: str, after: float = 0.0) -> Iterator[Callable[[int, int], None] | None]:
    """The one progress helper: a callback ``update(done, total)`` that draws a rich bar with
    an ETA on stderr, only when stderr is a terminal, and only once the run has lasted
    ``after`` seconds (short runs then draw nothing); None when stderr is not a terminal or
    the run is ``--quiet`` (as status lines)."""
    from gctool.cli.output import quiet, stderr_is_terminal

    if not stderr_is_terminal() or quiet():
        yield None
        return
    import time

    start = time.monotonic()
    state: dict[str, Any] = {}

    def update(done: int, total: int) -> None:
        if "bar" not in state:
            if time.monotonic() - start < after:
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


# -- numbers are ASCII on the command line ------------------------------------------------------
_ASCII_TYPES: dict[type, type] = {}


def _ascii_type(kind: click.ParamType) -> click.ParamType:
    """A copy of ``kind`` whose conversion first refuses numbers in non-ASCII digits (same class
    hierarchy, so help and completion render as before)."""
    cls = type(kind)
    sub = _ASCII_TYPES.get(cls)
    if sub is None:
        def convert(self: Any, value: Any, param: click.Parameter | None,
                    ctx: click.Context | None) -> Any:
            from gctool.io import unicode_number

            if isinstance(value, str):
                fixed = unicode_number(value)
                if fixed is not None:
                    self.fail(f"{value!r} writes a number in non-ASCII digits; gctool reads "
                              f"ASCII digits only (did you mean {fixed!r}?)", param, ctx)
            return cls.convert(self, value, param, ctx)

        sub = _ASCII_TYPES[cls] = type(f"Ascii{cls.__name__}", (cls,), {"convert": convert})
    import copy

    out = copy.copy(kind)
    out.__class__ = sub
    return out


def ascii_numbers(cmd: click.Command | None) -> None:
    """Make every parameter of ``cmd`` except file names read numbers in ASCII only (once per
    command; called where the command line resolves a command)."""
    if cmd is None or getattr(cmd, "_ascii_numbers", False):
        return
    for param in cmd.params:
        if not isinstance(param.type, click.Path | click.File) and \
                type(param.type) not in _ASCII_TYPES.values():
            param.type = _ascii_type(param.type)
    cmd._ascii_numbers = True  # type: ignore[attr-defined]
