"""What the compiled (numba) code of every layer shares: the ``GCTOOL_COMPILED`` switch
(:func:`mode`), whether numba is installed, whether a kernel has run in this process
(:func:`kernels_loaded`), and the notice on stderr while a first run compiles
(:func:`compile_notice`).  The numba set-up (cache directory, ``njit``) is in :mod:`._jit` and
the walk primitives (:func:`.walk.successor`) in :mod:`.walk`; both import numba, this module
does not, so asking the switch costs nothing.

It sits below the audits (:mod:`gctool.audit.kernels`) and imports none of them.

``GCTOOL_COMPILED`` chooses: ``auto`` (default: each user decides from the size of its work),
``0`` (never: numpy), ``1`` (always, whatever the size; the tests use it to compare both
paths).
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

ENV = "GCTOOL_COMPILED"
#: a block that compiles prints its notice once it has run this long
NOTICE_AFTER_S = 1.0


def mode() -> str:
    """``"auto"``, ``"never"`` or ``"always"`` from ``GCTOOL_COMPILED``."""
    value = os.environ.get(ENV, "auto").strip().lower()
    if value in ("0", "no", "off", "false", "never", "numpy"):
        return "never"
    if value in ("1", "yes", "on", "true", "always"):
        return "always"
    return "auto"


#: gctool's compiled kernels (numba dispatchers), each added as :func:`._jit.njit` makes it:
#: empty while no module of kernels (nor numba) has been imported
KERNELS: list[Any] = []
_ran: list[bool] = []


def kernels_loaded() -> bool:
    """Has a compiled kernel of gctool run in this process (read from numba's cache, or
    compiled: its dispatcher holds a compiled version)?  Imports nothing."""
    if not _ran and any(kernel.overloads for kernel in KERNELS):
        _ran.append(True)
    return bool(_ran)


@dataclass(frozen=True)
class Kind:
    """The compiled kernels a walk loads: those of one module of kernels (``module``, the
    dotted name: naming it imports nothing), over complex numbers or not (the real and the
    complex screen are the same kernels under other signatures, each read from numba's cache
    on its own; GF(q)'s run on integers).  A process that has loaded kernels of another kind
    pays only for reading this kind's from the cache (``gctool.budget``'s ``KIND_LOAD_NS``;
    :class:`Loaded`).  The audits' kinds: :data:`gctool.audit.kernels.REAL` and the others
    there."""

    module: str
    complex: bool = False
    #: the entry point (a kernel's function name in ``module``) whose having run says that
    #: this kind is loaded: a walk's (verify's ``screen_range``) or that of given sets
    #: (``screen_sets``: a run of one set per rotation orbit loads only those, and a walk
    #: after it in the same process still reads its own from the cache); "" any kernel of
    #: the module
    entry: str = ""

    def given(self, entry: str) -> Kind:
        """The kind of the same kernels' entry point of given sets, named ``entry``."""
        return Kind(self.module, self.complex, entry)

    def loaded(self) -> bool:
        """Has a kernel of this kind (its module's, under a signature over complex numbers
        or not, as :attr:`complex` says) run in this process?  Imports nothing."""
        return Loaded.now().has(self)


def _takes_complex(signature: tuple[Any, ...]) -> bool:
    """Does a compiled signature (numba's types of the arguments) take complex numbers?"""
    return any("complex" in str(getattr(t, "dtype", t)) for t in signature)


@dataclass(frozen=True)
class Loaded:
    """What of gctool's compiled code a process has loaded (:meth:`now`: this one, as it
    stands): the kinds of the kernels that have run in it, and whether numba is imported.
    What this process's estimates charge for loading kernels (``gctool.budget``'s
    ``local_load_ns``) and what a Dask worker answers when asked
    (``gctool.audit.distributed``'s ``_worker_state_here``) both read it."""

    kinds: frozenset[Kind] = frozenset()
    numba: bool = False

    @staticmethod
    def now() -> Loaded:
        """This process's (:func:`kernels_loaded`, :func:`numba_imported`).  Imports
        nothing."""
        kinds = frozenset(
            Kind(kernel.py_func.__module__, _takes_complex(sig), entry)
            for kernel in KERNELS for sig in kernel.overloads
            for entry in ("", kernel.py_func.__name__)) if kernels_loaded() else frozenset()
        return Loaded(kinds, numba_imported())

    def has(self, kind: Kind | bool | None = None) -> bool:
        """Are the kernels of ``kind`` loaded (a :class:`Kind`; True or None, a kind not
        named: kernels of any kind count, and once one has run every kind counts)?"""
        return bool(self.kinds) and (not isinstance(kind, Kind) or kind in self.kinds
                                     or _ANY in self.kinds)

    def with_kind(self, kind: Kind | bool | None) -> Loaded:
        """This, once the kernels of ``kind`` have run too (numba with them; a kind of one
        entry point counts for its module's kernels too)."""
        if not isinstance(kind, Kind):
            return Loaded(self.kinds | {_ANY}, True)
        return Loaded(self.kinds | {kind, Kind(kind.module, kind.complex)}, True)


#: a kind of kernels not named (:meth:`Loaded.with_kind`), which counts as any
_ANY = Kind("")


def numba_imported() -> bool:
    """Has this process imported numba (galois does, with any field)?  Imports nothing."""
    import sys

    return "numba" in sys.modules


def numba_available() -> bool:
    """Is numba installed (without importing it)?"""
    from importlib.util import find_spec

    return find_spec("numba") is not None


@contextmanager
def compile_notice(what: str) -> Iterator[None]:
    """Print one line on stderr (a terminal only) if the block takes more than
    :data:`NOTICE_AFTER_S` seconds (the first run after installing or upgrading)."""
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
