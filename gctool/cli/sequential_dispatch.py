"""Hand sequential (sr-sgc, m-sgc), tree (coded-reduce) and BCC files from ``gctool verify`` and
``gctool bound`` to :mod:`gctool.sequential.audit`.

``verify.py`` and ``bound.py`` call :func:`dispatch_verify` / :func:`dispatch_bound` first for
each file; they return the report when they handled the file and None otherwise, leaving the
command's own behaviour untouched (the command renders the report and sets the exit status).
To decide, the file's scheme is peeked: from the first 64 KiB of a path
(the canonical writer puts ``"scheme"`` on the third line), or by reading stdin once and putting
the bytes back for the command to read again.  Options come from the click context, so the
call sites need no arguments.
"""

from __future__ import annotations

import io
import os
import re
import sys
from typing import Any

import click
from click.core import ParameterSource

from gctool.cli.options import progress_bar

_HEAD = 1 << 16
#: transitions of the exact schedule search unless --max-sets is given (then: that many)
SCHEDULE_MAX_TRANSITIONS = 1_000_000
_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|[{}\[\]]')
_VALUE = re.compile(rb'\s*:\s*"([^"\\]{1,200})"')


def _top_level_scheme(head: bytes) -> str | None:
    """The top-level ``"scheme"`` of a JSON document from its first bytes, or None when it is
    not there (then the caller reads the whole file).  Keys nested in ``params`` and strings
    that merely contain the word do not count; repeated keys are refused by the reader."""
    depth = 0
    for token in _TOKEN.finditer(head):
        text = token.group()
        if text in (b"{", b"["):
            depth += 1
        elif text in (b"}", b"]"):
            depth -= 1
        elif depth == 1 and text == b'"scheme"':
            value = _VALUE.match(head, token.end())
            return value.group(1).decode("utf-8", "replace") if value else None
    return None


def _put_back(data: bytes) -> None:
    sys.stdin = io.TextIOWrapper(io.BytesIO(data))


def peek(path: str | None, schemes: tuple[str, ...]) -> Any:
    """The code in ``path`` if its scheme is one of ``schemes``, else None (stdin intact)."""
    from gctool.io import read_code

    if path is None:
        return None
    if path == "-":
        from gctool._files import read_bytes

        data, _ = read_bytes("-")  # the same errors the command itself would raise
        _put_back(data)
        found = _top_level_scheme(data[:_HEAD])
        if found is not None and found not in schemes:
            return None
        code = read_code("-")
        if code.scheme in schemes:
            return code
        _put_back(data)
        return None
    if not os.path.isfile(path):  # a FIFO or <(...): read it once (read_bytes keeps the bytes)
        if not os.path.exists(path) or os.path.isdir(path):
            return None  # the command reports it
        code = read_code(path)
        return code if code.scheme in schemes else None
    try:
        with open(path, "rb") as fh:
            head = fh.read(_HEAD)
    except (OSError, ValueError):
        return None  # the command reports it
    found = _top_level_scheme(head)
    if found is not None and found not in schemes:
        return None
    code = read_code(path)
    return code if code.scheme in schemes else None


def dispatch_verify(code_file: str) -> Any:
    """``gctool verify`` of a sequential schedule or a CodedReduce tree."""
    from gctool.sequential.audit import VERIFY_SCHEMES, check_lambda, verify_code

    params = click.get_current_context().params
    code = peek(code_file, VERIFY_SCHEMES)
    if code is None:
        return None
    stragglers = params.get("stragglers")
    if code.scheme == "coded-reduce" and stragglers is not None:
        return None  # -s: the core verify checks the flat leaf code
    check_lambda(stragglers, code.n)
    ctx = click.get_current_context()
    budget = params.get("max_sets")
    if budget is None or ctx.get_parameter_source("max_sets") == ParameterSource.DEFAULT:
        budget = SCHEDULE_MAX_TRANSITIONS
    with progress_bar("verify") as progress:
        report = verify_code(code, stragglers, tol=params.get("tol", 1e-9), max_sets=budget,
                             seed=params.get("seed") or 0, progress=progress)
    assert report is not None
    return report


def dispatch_bound(code_file: str | None) -> Any:
    """``gctool bound`` of an SGC, CodedReduce or BCC file."""
    from gctool.sequential.audit import BOUND_SCHEMES, bound_code

    params = click.get_current_context().params
    code = peek(code_file, BOUND_SCHEMES)
    if code is None:
        return None
    if params.get("n") is not None or params.get("k") is not None:
        raise click.UsageError("give either FILE or -n/-k, not both")
    report = bound_code(code)
    assert report is not None
    return report
