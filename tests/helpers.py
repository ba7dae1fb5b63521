"""The one way the tests run the command line in this process (a plain helper module, not a
test module): :func:`run` invokes ``gctool ARGS`` with click's runner and returns its
result (exit code, stdout and stderr apart)."""

from __future__ import annotations

from collections.abc import Mapping

from click.testing import CliRunner, Result

from gctool.cli.main import cli


def run(*args: str, input: str | bytes | None = None,
        env: Mapping[str, str | None] | None = None) -> Result:
    """``gctool ARGS`` (``input``: its stdin; ``env``: environment changes).  Exceptions are
    not swallowed: the CLI's own mapping to exit codes (``_guarded``) is what is tested."""
    return CliRunner().invoke(cli, list(args), input=input, env=env, catch_exceptions=False)
