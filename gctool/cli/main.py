"""Entry point: the ``gctool`` group, lazy command loading, and the one place that maps
outcomes to exit codes (see :mod:`gctool.cli.exit_codes`)."""

from __future__ import annotations

import importlib
import io
import os
import sys
from collections.abc import Callable
from typing import Any

import click

from gctool._memory import keep_heap
from gctool._version import __version__
from gctool.cli.exit_codes import ExitCode, for_signal
from gctool.cli.output import quiet_option

COMMANDS = {
    "design": "gctool.cli.design:design",
    "verify": "gctool.cli.verify:verify",
    "attack": "gctool.cli.attack:attack",
    "bound": "gctool.cli.bound:bound",
    "export": "gctool.cli.export:export",
    "show": "gctool.cli.show:show",
    "simulate": "gctool.cli.simulate:simulate",
    "train": "gctool.cli.train:train",
    "schema": "gctool.cli.meta:schema",
    "reference": "gctool.cli.meta:reference",
    "completion": "gctool.cli.meta:completion",
}


class LazyGroup(click.Group):
    """A group whose subcommands are imported only when used (fast --help and TAB)."""

    def __init__(self, *args: Any, lazy: dict[str, str] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = lazy or {}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(self.lazy) + sorted(super().list_commands(ctx))

    def resolve_command(self, ctx: click.Context, args: list[str]
                        ) -> tuple[str | None, click.Command | None, list[str]]:
        name = click.utils.make_str(args[0])
        if self.get_command(ctx, name) is None and not name.startswith("-"):
            from gctool.cli.output import no_such

            raise no_such("command", name, self.list_commands(ctx), ctx)
        return super().resolve_command(ctx, args)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list with whole summaries (wrapped, never cut with '...')."""
        rows = []
        for name in self.list_commands(ctx):
            cmd = self.get_command(ctx, name)
            if cmd is not None and not cmd.hidden:
                rows.append((name, cmd.get_short_help_str(limit=1000)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in self.lazy:
            module, attr = self.lazy[name].split(":")
            cmd: click.Command = getattr(importlib.import_module(module), attr)
            return cmd
        return super().get_command(ctx, name)


class _ReaderGone(Exception):
    """stdout is a pipe whose reader went away (``| head``): the run ends silently, exit 0."""


class GctoolGroup(LazyGroup):
    """The root group: maps every outcome to the exit-code contract in one place."""

    #: the command of the current invocation ("gctool verify"), named by the interrupted line
    running = "gctool"

    def resolve_command(self, ctx: click.Context, args: list[str]
                        ) -> tuple[str | None, click.Command | None, list[str]]:
        from gctool.cli.options import ascii_numbers

        name, cmd, rest = super().resolve_command(ctx, args)
        if cmd is not None:
            self.running = f"gctool {name}"
            ascii_numbers(cmd)
        return name, cmd, rest

    def invoke(self, ctx: click.Context) -> Any:
        from gctool.budget import Budget
        from gctool.errors import SearchInterrupted

        try:
            Budget.default()  # an invalid GCTOOL_MAX_WORK/MEMORY: one line, after --help, first
            return super().invoke(ctx)
        except KeyboardInterrupt:  # click would print an empty line first (two stderr lines)
            raise SearchInterrupted("interrupted") from None
        except BrokenPipeError:  # click would exit 1
            raise _ReaderGone from None

    def make_context(self, info_name: str | None, args: list[str],
                     parent: click.Context | None = None, **extra: Any) -> click.Context:
        from gctool.errors import SearchInterrupted

        try:
            return super().make_context(info_name, args, parent, **extra)
        except KeyboardInterrupt:  # while the options are parsed: as in invoke
            raise SearchInterrupted("interrupted") from None

    def main(self, args: Any = None, prog_name: str | None = None,
             complete_var: str | None = None, standalone_mode: bool = True, **extra: Any) -> Any:
        def invoke() -> Any:
            from gctool._threads import pin_blas_threads

            pin_blas_threads()  # before numpy loads BLAS (see gctool._threads)
            _quiet_process()
            argv = sys.argv[1:] if args is None else list(args)
            if any("\0" in str(a) for a in argv):  # only reachable through the Python API
                raise click.UsageError("arguments cannot contain NUL bytes")
            return super(GctoolGroup, self).main(
                args=args, prog_name="gctool", complete_var=complete_var, standalone_mode=False,
                **extra)  # one program name everywhere, also under CliRunner

        from gctool import _signals

        self.running = "gctool"
        with _signals.handled(standalone=standalone_mode):
            code = _guarded(invoke, lambda: self.running)
        if standalone_mode:
            _signals.ending()  # a late signal cannot turn the exit code into a kill
            sys.exit(code)
        return code


@click.group(
    cls=GctoolGroup,
    lazy=COMMANDS,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    epilog="""\b
Examples:
  gctool design cyclic -n 8 -s 2 --seed 1 | gctool verify -
  gctool design frc -n 6 -s 2 -o frc.json && gctool attack frc.json --threshold
  gctool bound -n 10 -k 10 -s 3

Exit codes: 0 ok, 1 finding, 2 usage error or invalid input, 3 internal error,
130 interrupted (Ctrl-C), 129 SIGHUP, 143 SIGTERM.""",
)
@click.version_option(__version__, "-V", "--version", prog_name="gctool")
@quiet_option
def cli() -> None:
    """Design and audit gradient codes for straggler-tolerant distributed gradient descent.

    A code is an n x k encoding matrix B over the reals, the complex numbers or GF(q): worker i
    sends sum_j B[i,j] g_j.  It tolerates s stragglers when any n-s rows span the all-ones
    vector.
    """


#: longest message gctool prints on stderr (a hostile file name or value cannot flood the log)
MAX_MESSAGE = 500


def _one_line(text: str) -> str:
    from gctool.errors import printable

    return printable(text, MAX_MESSAGE)


def error_text(exc: Exception) -> str:
    """A library error (``GctoolError``) in the CLI's terms (parameters named as flags)."""
    from gctool.cli.params import in_cli_terms

    return in_cli_terms(str(exc))


def error_message(exc: Exception) -> str:
    """The one-line text of a library error as the CLI prints it after ``gctool: error:``
    (also per file by :mod:`gctool.cli.batch`)."""
    return _one_line(error_text(exc))


def _fail(message: str, code: ExitCode) -> int:
    click.echo(f"gctool: {_one_line(message)}", err=True)
    return int(code)


def _usage(exc: click.ClickException) -> int:
    ctx = getattr(exc, "ctx", None)
    if isinstance(exc, click.exceptions.NoArgsIsHelpError):
        # a group without its command ("gctool", "gctool design"): a usage error, as click
        # >= 8.2 and the contract say; its help goes to stderr (stdout carries output only)
        click.echo(exc.ctx.get_help(), err=True)
        return int(ExitCode.USAGE)
    where = ctx.command_path if ctx is not None else "gctool"
    hint = f" (see '{where} --help')" if isinstance(exc, click.UsageError) else ""
    click.echo(f"{where}: error: {_one_line(exc.format_message())}{hint}", err=True)
    return int(ExitCode.USAGE)


def _guarded(invoke: Callable[[], Any], command: Callable[[], str]) -> int:
    """Run the CLI and return the exit code (never raises for user errors); ``command()``
    names the command that ran, for the interrupted line."""
    from gctool._signals import settle
    from gctool.errors import GctoolError, SearchInterrupted

    try:
        try:
            rv = invoke()
        finally:
            settle()  # the outcome is known: a later signal does not replace it
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except click.ClickException as exc:
        return _usage(exc)
    except (click.Abort, KeyboardInterrupt):
        return _interrupted(command(), "interrupted")
    except SearchInterrupted as exc:
        return _interrupted(command(), exc.summary)
    except GctoolError as exc:
        return _fail(f"error: {error_message(exc)}", ExitCode.USAGE)
    except (BrokenPipeError, _ReaderGone):  # the reader of stdout went away: not an error
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return int(ExitCode.OK)
    except Exception as exc:  # a bug: never show a traceback unless asked to
        from gctool._signals import received

        if received() is not None:  # a library that swallowed the interrupt failed after it
            return _interrupted(command(), "interrupted")  # (numba's compiler callbacks)
        if _out_of_memory(exc):  # an allocation the estimates missed: no file was written
            return _fail(f"error: out of memory: {memory_exhausted()}; try a smaller input or "
                         "budget (--max-sets, --max-patterns, --max-work)", ExitCode.USAGE)
        if os.environ.get("GCTOOL_DEBUG"):
            raise
        return _fail(f"internal error: {type(exc).__name__}: {exc} "
                     "(please report it; GCTOOL_DEBUG=1 shows the traceback)", ExitCode.INTERNAL)
    return int(rv) if isinstance(rv, int) else int(ExitCode.OK)


def _out_of_memory(exc: BaseException) -> bool:
    """Did ``exc`` come from memory running out: a ``MemoryError``, an ``OSError`` ENOMEM (a
    fork, an mmap), or a shared library that could not be mapped while it was imported (the
    loader's message, e.g. OpenBLAS under ``ulimit -v``)?"""
    import errno

    if isinstance(exc, MemoryError):
        return True
    if isinstance(exc, OSError) and exc.errno == errno.ENOMEM:
        return True
    text = str(exc).lower()
    return isinstance(exc, ImportError) and ("failed to map segment" in text
                                             or "cannot allocate memory" in text)


def _interrupted(command: str, summary: str) -> int:
    """Exit 130 after Ctrl-C, 129 after SIGHUP, 143 after SIGTERM, with the one line that names
    the command, says how far it got and which signal stopped it (not for Ctrl-C):
    ``gctool verify: interrupted after checking ... (SIGTERM)``."""
    import signal

    from gctool._signals import received

    signum = received()
    if signum is not None and signum != signal.SIGINT:
        summary = f"{summary} ({signal.Signals(signum).name})"
    from gctool.cli.params import in_cli_terms

    click.echo(f"{command}: {_one_line(in_cli_terms(summary))}", err=True)
    return int(for_signal(signum))


def _quiet_process() -> None:
    """Keep the command's output its own: warnings off (the library reports what matters as
    diagnostics), and anything that native code (LAPACK's XERBLA, the HiGHS MILP solver)
    prints on file descriptor 1 goes to /dev/null instead of into stdout, which stays gctool's
    (its Python stream is moved to a duplicate of the original descriptor).  The standard
    streams are guarded (see :class:`_Guarded`)."""
    import warnings

    if not os.environ.get("GCTOOL_DEBUG"):
        warnings.simplefilter("ignore")
    if sys.stdout is not sys.__stdout__ or sys.stderr is not sys.__stderr__:
        return  # captured (CliRunner, an embedding application)
    for fd in (0, 1, 2):  # a closed standard descriptor: the next file opened would take it
        _occupy(fd)
    stream = sys.__stdout__
    try:
        if stream is not None:
            stream.flush()
        saved = os.dup(1) if stream is not None else None
        devnull = os.open(os.devnull, os.O_WRONLY)
    except (AttributeError, OSError, ValueError):
        return
    os.dup2(devnull, 1)
    os.close(devnull)
    encoding = getattr(stream, "encoding", None) or "utf-8"
    sys.stdout = _Guarded.text(saved, "stdout", encoding,
                               bool(stream is not None and stream.line_buffering))
    if sys.__stderr__ is not None:
        sys.__stderr__.flush()
    sys.stderr = _Guarded.text(2 if sys.__stderr__ is not None else None, None,
                               getattr(sys.__stderr__, "encoding", None) or "utf-8", True)


def _occupy(fd: int) -> None:
    """Point a closed descriptor ``fd`` at /dev/null."""
    try:
        os.fstat(fd)
        return
    except OSError:
        pass
    try:
        null = os.open(os.devnull, os.O_RDWR)
    except OSError:
        return
    if null != fd:
        os.dup2(null, fd)
        os.close(null)


class _Guarded(io.RawIOBase):
    """The descriptor under ``sys.stdout`` or ``sys.stderr``, with one failure each.

    stdout (``name`` given): a full disk or a closed descriptor raises
    :class:`~gctool.errors.OutputError` (one line, exit 2), a closed pipe ``BrokenPipeError``
    (the reader went away: exit 0); stderr (``name`` None): a write that fails is dropped, as
    there is nowhere left to report it.  After the first failure every write is dropped, so
    the interpreter's final flush cannot print "Exception ignored" or change the exit code."""

    def __init__(self, fd: int | None, name: str | None) -> None:
        super().__init__()
        self.fd, self.name, self.failed = fd, name, fd is None and name is None

    @classmethod
    def text(cls, fd: int | None, name: str | None, encoding: str, line_buffering: bool
             ) -> io.TextIOWrapper:
        return io.TextIOWrapper(io.BufferedWriter(cls(fd, name), 1 << 16), encoding=encoding,
                                errors="backslashreplace", line_buffering=line_buffering)

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        if self.fd is None:
            raise io.UnsupportedOperation("the stream is closed")
        return self.fd

    def isatty(self) -> bool:
        return self.fd is not None and os.isatty(self.fd)

    def write(self, data: Any) -> int:
        size = len(memoryview(data))
        if self.failed:
            return size
        try:
            if self.fd is None:
                raise OSError(9, "it is closed")
            return os.write(self.fd, data)
        except OSError as exc:
            self.failed = True
            if self.name is None:
                return size
            if isinstance(exc, BrokenPipeError):
                raise
            from gctool.errors import OutputError

            raise OutputError(f"{self.name}: cannot write ({exc.strerror or exc})") from None


def main(argv: list[str] | None = None) -> int:
    """Run gctool with ``argv`` and return the exit code."""
    return int(cli.main(args=argv, standalone_mode=False))


def run() -> None:
    """Console-script entry point (the process's data segment is limited to the memory budget
    plus headroom: see :func:`limit_process_memory`; glibc's heap keeps freed memory for the
    next temporaries: :func:`gctool._memory.keep_heap`)."""
    limit_process_memory()
    keep_heap()
    cli.main()


def _memory_budget() -> float:
    """The memory budget of this process (``GCTOOL_MAX_MEMORY`` or the default)."""
    from gctool.budget import Budget
    from gctool.errors import InvalidInput
    from gctool.limits import DEFAULT_MAX_MEMORY

    try:
        return Budget.default().max_memory
    except InvalidInput:  # refused with its own line when the command starts
        return float(DEFAULT_MAX_MEMORY)


def limit_process_memory() -> None:
    """Ask the kernel to refuse data allocations of this process beyond the memory budget plus
    :data:`~gctool.limits.MEMORY_HEADROOM` (``RLIMIT_DATA``; never raises the hard limit,
    silently skipped where the platform has no such limit), so that an allocation the
    estimates missed fails with "out of memory" (exit 2) instead of swapping."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not POSIX
        return
    from gctool.limits import MEMORY_HEADROOM

    try:
        want = int(_memory_budget() + MEMORY_HEADROOM)
        if want >= sys.maxsize:  # beyond what the kernel's limit can hold: no limit to set
            return
        soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
        if hard != resource.RLIM_INFINITY:
            want = min(want, hard)
        if soft == resource.RLIM_INFINITY or soft > want:
            resource.setrlimit(resource.RLIMIT_DATA, (want, hard))
            _PROCESS_LIMIT[:] = [want]
    except (ValueError, OverflowError, OSError, AttributeError):
        return


#: the data-segment limit :func:`limit_process_memory` set (empty: it set none)
_PROCESS_LIMIT: list[int] = []


def memory_exhausted() -> str:
    """Which limit an allocation that failed (``MemoryError``) most likely met, for the one
    line that reports it: the address-space limit (``ulimit -v``) when it is the tightest, the
    memory budget when the data-segment limit is the one :func:`limit_process_memory` set, a
    data-segment limit set from outside (``ulimit -d``), or the machine's memory."""
    from gctool.budget import format_bytes
    from gctool.limits import MEMORY_HEADROOM

    try:
        import resource

        space = resource.getrlimit(resource.RLIMIT_AS)[0]
        data = resource.getrlimit(resource.RLIMIT_DATA)[0]
        infinite = resource.RLIM_INFINITY
    except (ImportError, AttributeError, OSError, ValueError):  # pragma: no cover - not POSIX
        return "the process ran out of memory"
    finite = [x for x in (space, data) if x != infinite and x >= 0]
    if space != infinite and space >= 0 and space == min(finite):
        return f"the process reached its address-space limit (ulimit -v, {format_bytes(space)})"
    if data != infinite and data >= 0:
        if _PROCESS_LIMIT and data == _PROCESS_LIMIT[0]:
            return (f"the process reached the memory budget ({format_bytes(_memory_budget())} "
                    f"plus {format_bytes(MEMORY_HEADROOM)} of headroom, GCTOOL_MAX_MEMORY)")
        return f"the process reached its data-segment limit (ulimit -d, {format_bytes(data)})"
    return "the process ran out of memory (the machine's memory)"
