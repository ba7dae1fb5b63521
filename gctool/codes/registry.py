"""The scheme catalogue: scheme name -> metadata and the module that builds it.

The catalogue is plain data so that the CLI can list schemes and build their options without
importing numpy or the construction modules.  Each construction module exposes

    build(n: int, s: int, k: int | None, field: Field, rng: numpy.random.Generator,
          **params) -> tuple[numpy.ndarray, dict]

returning B and the parameters to record in the file.  To add a scheme, add its module under
``gctool/codes/`` and one :class:`SchemeInfo` entry to ``SCHEMES``.
"""

from __future__ import annotations

import importlib
from typing import Any

from gctool.codes.info import Param, SchemeInfo

#: catalogue modules, each defining ``SCHEMES: dict[str, SchemeInfo]`` (one per family)
CATALOGUES = (
    "gctool.codes.catalog_core",
    "gctool.codes.catalog_algebraic",
    "gctool.codes.catalog_approx",
    "gctool.codes.catalog_sequential",
    "gctool.codes.catalog_encoded",
)


def _collect() -> dict[str, SchemeInfo]:
    schemes: dict[str, SchemeInfo] = {}
    for name in CATALOGUES:
        for key, info in importlib.import_module(name).SCHEMES.items():
            if key in schemes:
                raise RuntimeError(f"scheme {key!r} is defined twice")
            schemes[key] = info
    return schemes


SCHEMES: dict[str, SchemeInfo] = _collect()

__all__ = ["CATALOGUES", "SCHEMES", "Param", "SchemeInfo", "capability", "get_scheme"]


def get_scheme(name: str) -> SchemeInfo:
    from gctool.errors import InvalidInput

    try:
        return SCHEMES[name]
    except KeyError:
        raise InvalidInput(
            f"unknown scheme {name!r}; available: {', '.join(sorted(SCHEMES))}"
        ) from None


def capability(scheme: str, hook: str) -> Any:
    """The hook ``hook`` (see :data:`gctool.codes.info.HOOKS`) of ``scheme``, or None when the
    scheme has none (or is not in the catalogue: a file may record any scheme name)."""
    info = SCHEMES.get(scheme)
    return None if info is None else info.hook(hook)
