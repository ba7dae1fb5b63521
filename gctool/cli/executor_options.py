"""``--executor local|dask``, ``--scheduler ADDRESS`` and ``--checkpoint FILE``.

A decorator for ``verify`` and ``attack``: it adds the three options and calls the command
with one more keyword argument, ``runner``: None for ``--executor local`` (the library's local
processes), a :class:`gctool.audit.distributed.DaskRunner` for ``--executor dask``.  The
command passes it on to the library call (``runner=``), so the enumeration goes to the
cluster.  Only click is imported here; the library (and dask) are imported when the command
runs.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Any

import click

from gctool.cli.options import READING_KEY, output_path


class RunKey:
    """The identity of a ``--checkpoint`` run: the SHA-256 of the command, of the code file's
    bytes as the command reads them (:func:`gctool.cli.options.load_within` hands
    :attr:`digest` to :func:`gctool.io.load_code`, as ``design kron`` hashes a factor's
    file: one read, in order, never held whole) and of the options; :meth:`read` gives it
    to the runner, whose checkpoint entries it keys, once the code is read (no task runs
    before).  Until then the runner's key is one no checkpoint holds."""

    def __init__(self, command: str, kwargs: dict[str, Any], runner: Any) -> None:
        import hashlib
        import json

        from gctool.cli.options import single_file
        from gctool.errors import InvalidInput

        code_file = single_file(kwargs.get("code_file") or "-", "--checkpoint")
        if code_file in (None, "-") or (os.path.exists(code_file) and not os.path.isfile(code_file)
                                        and not os.path.isdir(code_file)):
            # the contract: a checkpointed run and the rerun that resumes it read one file
            raise InvalidInput("--checkpoint needs the code in a regular file (not stdin or a "
                               "pipe)")
        self.digest = hashlib.sha256(command.encode())
        opts = {k: v for k, v in kwargs.items() if k not in ("as_json", "jobs", "code_file")}
        self._opts = json.dumps(opts, sort_keys=True, default=repr).encode()
        self._runner = runner

    def read(self) -> None:
        """The code file has been read whole into :attr:`digest`: key the runner's run."""
        h = self.digest.copy()
        h.update(self._opts)
        self._runner.key = h.hexdigest()


def _scheduler(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """--scheduler is checked when the options are parsed: a malformed address is a usage
    error at once, never a connection attempt (:func:`gctool.audit.distributed.check_address`)."""
    if value is None:
        return None
    from gctool.audit.distributed import check_address, require_dask
    from gctool.errors import InvalidInput

    try:
        address = str(check_address(value))  # a malformed address: refused before dask loads
        require_dask()
        return address
    except InvalidInput as exc:
        raise click.BadParameter(str(exc), ctx, param) from None


def _checkpoint(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """--checkpoint is a regular file or one to create (a FIFO would block the read)."""
    if value is None:
        return None
    from gctool.audit.distributed import check_checkpoint_path
    from gctool.errors import InvalidInput

    try:
        check_checkpoint_path(value)
    except InvalidInput as exc:
        raise click.BadParameter(str(exc), ctx, param) from None
    return value


def executor_options(command: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def decorate(f: Callable[..., Any]) -> Callable[..., Any]:
        @click.option("--executor", type=click.Choice(["local", "dask"]), default="local",
                      show_default=True,
                      help="Where the exhaustive enumeration runs: local processes, or a Dask "
                           "cluster (needs gctool[dask]); results are identical.")
        @click.option("--scheduler", default=None, metavar="ADDRESS", callback=_scheduler,
                      help="Dask scheduler to connect to (e.g. tcp://host:8786); default: a "
                           "local cluster of --jobs processes (at most one per core).")
        @click.option("--checkpoint", type=output_path, default=None, callback=_checkpoint,
                      help="With --executor dask: record finished rank ranges in FILE; a "
                           "rerun with the same FILE resumes.")
        @functools.wraps(f)
        def wrapper(*args: Any, executor: str, scheduler: str | None,
                    checkpoint: str | None, **kwargs: Any) -> int:
            if executor == "local":
                if scheduler is not None or checkpoint is not None:
                    raise click.UsageError("--scheduler and --checkpoint need --executor dask")
                return f(*args, runner=None, **kwargs)
            from gctool.audit.distributed import cli_runner, require_dask, silence_logs
            from gctool.errors import SearchInterrupted

            require_dask()
            silence_logs()  # for the whole process: Dask logs even while the client closes
            # with --checkpoint, a key no checkpoint holds until the code is read (RunKey)
            runner = cli_runner(scheduler, checkpoint,
                                f"{command}-unread-{os.urandom(16).hex()}" if checkpoint
                                else command)
            key = RunKey(command, kwargs, runner) if checkpoint else None
            token = READING_KEY.set(key)
            try:
                with runner:  # one client (cluster) for the command, the code scattered once
                    return f(*args, runner=runner, **kwargs)
            except SearchInterrupted as exc:  # the count is of the sets merged in rank order
                note = runner.unmerged_note()
                if not note:
                    raise
                raise SearchInterrupted(f"{exc.summary}; {note}") from None
            finally:
                READING_KEY.reset(token)

        return wrapper

    return decorate
