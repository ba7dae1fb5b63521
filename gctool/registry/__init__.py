"""The scheme registry: scheme name -> :class:`SchemeInfo` (metadata, ``build`` and hooks).

Each scheme lives in one module that defines, after its ``build``, ``SCHEME = SchemeInfo(...)``
(or ``SCHEMES``, a tuple, when the module builds several schemes, as
:mod:`gctool.sequential.design` does for sr-sgc and m-sgc).  ``build`` has the signature

    build(n: int, s: int, k: int | None, field: Field, rng: numpy.random.Generator,
          **params) -> tuple[numpy.ndarray, dict]

returning B and the parameters to record in the file.  The CLI lists schemes and builds their
options from this registry, so scheme modules stay light at import time (numpy through
:mod:`gctool._lazy`, other heavy imports inside functions).  To add a scheme, write its module
and add it to ``MODULES``; the order of ``MODULES`` is the order of ``gctool design --help``.

A family that audits its codes in its own way (a schedule verifier, a tree verifier, a spectral
audit, level profiles) declares capability hooks on its SchemeInfo (``verifier``, ``attacker``,
``bounder``, ``profiler``: :data:`gctool.registry.info.HOOKS`); :mod:`gctool.api`, behind
``gctool.verify``/``attack``/``bound`` and the commands of the same names, finds them with
:func:`capability`.  Schemes without hooks get the matrix-code audits.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from typing import Any

from gctool.registry.info import Param, SchemeInfo

#: modules defining ``SCHEME`` (or ``SCHEMES``), in listing order
MODULES = (
    "gctool.codes.frc",
    "gctool.codes.cyclic",
    "gctool.codes.uncoded",
    "gctool.codes.cyclic_mds",
    "gctool.codes.rs",
    "gctool.codes.comm",
    "gctool.codes.ye_abbe",
    "gctool.codes.tandon_partial",
    "gctool.codes.isgc",
    "gctool.codes.bibd",
    "gctool.codes.expander",
    "gctool.codes.graph",
    "gctool.codes.bgc",
    "gctool.codes.sbc",
    "gctool.codes.soft_bibd",
    "gctool.codes.kron",
    "gctool.codes.hetero",
    "gctool.codes.nested",
    "gctool.sequential.design",
    "gctool.sequential.coded_reduce",
    "gctool.sequential.bcc",
    "gctool.codes.encoded",
)


class _Registry(Mapping[str, SchemeInfo]):
    """The schemes of ``MODULES``, collected at the first look-up (a scheme module may be
    imported before the registry, e.g. ``import gctool.sequential.bcc``)."""

    def __init__(self) -> None:
        self._schemes: dict[str, SchemeInfo] | None = None

    def _load(self) -> dict[str, SchemeInfo]:
        if self._schemes is None:
            schemes: dict[str, SchemeInfo] = {}
            for name in MODULES:
                module = importlib.import_module(name)
                for info in getattr(module, "SCHEMES", None) or (module.SCHEME,):
                    if info.name in schemes:
                        raise RuntimeError(f"scheme {info.name!r} is defined twice")
                    schemes[info.name] = info
            self._schemes = schemes
        return self._schemes

    def __getitem__(self, name: str) -> SchemeInfo:
        return self._load()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._load())

    def __len__(self) -> int:
        return len(self._load())


#: scheme name -> SchemeInfo, in the order of ``MODULES``
SCHEMES: Mapping[str, SchemeInfo] = _Registry()

__all__ = ["MODULES", "SCHEMES", "Param", "SchemeInfo", "capability", "feature", "get_scheme"]


def get_scheme(name: str) -> SchemeInfo:
    from gctool.errors import InvalidInput

    try:
        return SCHEMES[name]
    except KeyError:
        raise InvalidInput(
            f"unknown scheme {name!r}; available: {', '.join(sorted(SCHEMES))}"
        ) from None


def feature(scheme: str, name: str, default: Any = None) -> Any:
    """The :class:`SchemeInfo` field ``name`` of ``scheme`` (e.g. ``structured_decoder``,
    ``grouped``), or ``default`` when the scheme is not registered (a file may record any
    scheme name)."""
    info = SCHEMES.get(scheme)
    return default if info is None else getattr(info, name)


def capability(scheme: str, hook: str) -> Any:
    """The hook ``hook`` (see :data:`gctool.registry.info.HOOKS`) of ``scheme``, or None when the
    scheme has none (or is not in the registry: a file may record any scheme name)."""
    info = SCHEMES.get(scheme)
    return None if info is None else info.hook(hook)
