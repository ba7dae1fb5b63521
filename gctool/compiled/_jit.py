"""numba set-up shared by the compiled kernels of every layer: where
the cache lives, and ``njit``.

numba caches compiled kernels next to their source (``__pycache__``).  When that directory is
not writable (a read-only site-packages) and ``NUMBA_CACHE_DIR`` is not set, the cache goes to
``$XDG_CACHE_HOME/gctool/numba`` (default ``~/.cache/gctool/numba``) instead, for every module
that compiles with :data:`njit` (they all import this module first).  The test is on this
package's ``__pycache__`` (gctool's install is writable or not as a whole).

numba reads ``NUMBA_CACHE_DIR`` once, when it is imported, and picks a kernel's cache
directory when the kernel is decorated: when another package imported numba before gctool
(galois does), the variable set here would come too late, and a read-only install would cache
in numba's own default folder.  So the directory is also set in numba's configuration
(:func:`effective_cache_dir`), whatever imported numba first."""

from __future__ import annotations

import os
from collections.abc import Callable, MutableMapping
from pathlib import Path
from typing import Any


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

from gctool.compiled import KERNELS  # noqa: E402


def effective_cache_dir(config: Any, environ: MutableMapping[str, str]) -> None:
    """Make ``NUMBA_CACHE_DIR`` (set here, or by the user after numba was imported) numba's
    cache directory: ``config`` (``numba.config``) read the environment when numba was
    imported, perhaps before the variable was set."""
    chosen = environ.get("NUMBA_CACHE_DIR")
    if chosen and config.CACHE_DIR != chosen:
        config.CACHE_DIR = chosen


effective_cache_dir(numba.config, os.environ)

#: nopython, cached on disk, no fast-math (round-off must be what the error bounds assume)
_decorate: Callable[..., Any] = numba.njit(cache=True, nogil=True)


def njit(func: Callable[..., Any]) -> Callable[..., Any]:
    """``func`` compiled by numba (nopython, cached on disk, no fast-math: round-off must be
    what the error bounds assume), and counted among gctool's kernels
    (:data:`gctool.compiled.KERNELS`)."""
    kernel = _decorate(func)
    KERNELS.append(kernel)
    return kernel

