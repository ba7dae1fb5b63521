"""The one way the tests run the command line in this process (a plain helper module, not a
test module): :func:`run` invokes ``gctool ARGS`` with click's runner and returns its
result (exit code, stdout and stderr apart)."""

from __future__ import annotations

from collections.abc import Mapping

import pytest
from click.testing import CliRunner, Result

from gctool.cli.main import cli


def run(*args: str, input: str | bytes | None = None,
        env: Mapping[str, str | None] | None = None) -> Result:
    """``gctool ARGS`` (``input``: its stdin; ``env``: environment changes).  Exceptions are
    not swallowed: the CLI's own mapping to exit codes (``_guarded``) is what is tested."""
    return CliRunner().invoke(cli, list(args), input=input, env=env, catch_exceptions=False)


def small_chunks(monkeypatch: pytest.MonkeyPatch, chunk: int, *, processes: bool = False,
                 frames: bool = False) -> None:
    """Many rank-range tasks on small codes: every verify kernel and attack oracle cuts its
    range into ``chunk`` sets (the chunk size is read where the tasks are made); ``processes``:
    the local executor really uses its processes however short the run; ``frames``: encoded
    frames' spectra too."""
    import importlib

    from gctool.audit import nullspace as ns
    from gctool.audit import oracles as dec

    for cls in (ns.FloatNullKernel, ns.DirectKernel, ns.GFNullKernel, ns.GFDirectKernel,
                dec.Oracle, dec.OptimalOracle):
        monkeypatch.setattr(cls, "chunk_size", lambda self, s: chunk)
    if processes:
        for module in ("gctool.audit.verify.enumeration", "gctool.engine.parallel"):
            monkeypatch.setattr(importlib.import_module(module), "PARALLEL_MIN_S", 0.0)
    if frames:
        monkeypatch.setattr(importlib.import_module("gctool.audit.spectrum").Frame, "chunk",
                            lambda self, s: chunk)
