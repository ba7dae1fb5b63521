"""numba set-up shared by the compiled kernels: where the cache lives, and a notice on stderr
when compiling takes longer than a second (the first run after installing or upgrading).

numba caches compiled kernels next to their source (``__pycache__``).  When that directory is
not writable (a read-only site-packages) and ``NUMBA_CACHE_DIR`` is not set, the cache goes to
``$XDG_CACHE_HOME/gctool/numba`` (default ``~/.cache/gctool/numba``) instead."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Iterator, MutableMapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

NOTICE_AFTER_S = 1.0


def user_cache_dir(pycache: Path, environ: MutableMapping[str, str]) -> str | None:
    """The cache directory to give numba (``NUMBA_CACHE_DIR``), or None to keep its default
    (``pycache``, next to the kernels' source) because that one is writable or the user chose."""
    if environ.get("NUMBA_CACHE_DIR"):
        return None
    try:
        pycache.mkdir(exist_ok=True)
        writable = os.access(pycache, os.W_OK)
    except OSError:
        writable = False
    if writable:
        return None
    base = Path(environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return str(base / "gctool" / "numba")


_chosen = user_cache_dir(Path(__file__).parent / "__pycache__", os.environ)
if _chosen is not None:
    os.environ["NUMBA_CACHE_DIR"] = _chosen

import numba  # noqa: E402  (after the cache directory is chosen)

#: nopython, cached on disk, no fast-math (round-off must be what the error bounds assume)
njit: Callable[..., Any] = numba.njit(cache=True, nogil=True)


@contextmanager
def compile_notice(what: str) -> Iterator[None]:
    """Print one line on stderr (a terminal only) if the block takes more than a second."""
    def tell() -> None:
        if sys.stderr.isatty():
            print(f"gctool: compiling the {what} kernels (first run only; cached afterwards)",
                  file=sys.stderr, flush=True)

    timer = threading.Timer(NOTICE_AFTER_S, tell)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
