"""gctool: design and audit gradient codes.

The public API is imported lazily so that ``import gctool`` (and the CLI's start-up) pulls in
neither numpy-heavy modules nor click, rich, galois or scipy::

    import gctool
    code = gctool.design("cyclic", n=8, s=2, seed=1)
    report = gctool.verify(code)
"""

from __future__ import annotations

from gctool._version import __version__

# the console entry point (gctool._start) imports this package before it can handle signals:
# nothing here may take time at import (not even ``typing``)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from types import ModuleType
    from typing import Any

__all__ = [
    "BoundReport",
    "AttackOptions",
    "AttackReport",
    "CurveReport",
    "Field",
    "GradientCode",
    "VerifyReport",
    "VerifyRequest",
    "__version__",
    "attack",
    "bound",
    "curve",
    "decode",
    "design",
    "export",
    "parse_field",
    "profile",
    "read_code",
    "show",
    "simulate",
    "ThresholdReport",
    "threshold",
    "train",
    "verify",
    "verify_partial",
    "WorstReport",
    "write_code",
]


# The modules behind the public names, imported on first use (real imports, which mypy and
# the import graph see; no module path is written as a string).
def _api() -> ModuleType:
    from gctool import api

    return api


def _model() -> ModuleType:
    from gctool import model

    return model


def _fields() -> ModuleType:
    from gctool.algebra import fields

    return fields


def _codes() -> ModuleType:
    from gctool import codes

    return codes


def _exports() -> ModuleType:
    from gctool import exports

    return exports


def _show() -> ModuleType:
    from gctool.viz import show

    return show


def _simulate() -> ModuleType:
    from gctool.sim import run

    return run


def _train() -> ModuleType:
    from gctool.trainer import run

    return run


def _io() -> ModuleType:
    from gctool import io

    return io


def _reports() -> ModuleType:
    from gctool import reports

    return reports


def _attack() -> ModuleType:
    from gctool.audit import attack

    return attack


def _partial() -> ModuleType:
    from gctool.audit import partial

    return partial


def _request() -> ModuleType:
    from gctool import request

    return request


_LAZY: dict[str, Callable[[], ModuleType]] = {
    "GradientCode": _model,
    "Field": _fields,
    "parse_field": _fields,
    "design": _codes,
    "verify": _api,
    "attack": _api,
    "threshold": _api,
    "curve": _api,
    "bound": _api,
    "profile": _api,
    "verify_partial": _partial,
    "VerifyRequest": _request,
    "export": _exports,
    "show": _show,
    "simulate": _simulate,
    "train": _train,
    "read_code": _io,
    "write_code": _io,
    "VerifyReport": _reports,
    "AttackOptions": _attack,
    "AttackReport": _reports,
    "WorstReport": _reports,
    "ThresholdReport": _reports,
    "CurveReport": _reports,
    "BoundReport": _reports,
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(_LAZY[name](), name)
    if name == "decode":  # the decoder package (its function is gctool.decode.decode)
        from gctool import decode

        return decode
    raise AttributeError(f"module 'gctool' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
