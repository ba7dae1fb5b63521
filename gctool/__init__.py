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
    from typing import Any

__all__ = [
    "BoundReport",
    "AttackOptions",
    "AttackReport",
    "CurveReport",
    "Field",
    "GradientCode",
    "VerifyReport",
    "__version__",
    "attack",
    "bound",
    "curve",
    "decode",
    "design",
    "export",
    "parse_field",
    "read_code",
    "show",
    "simulate",
    "ThresholdReport",
    "threshold",
    "train",
    "verify",
    "WorstReport",
    "write_code",
]

_LAZY = {
    "GradientCode": "gctool.model",
    "Field": "gctool.algebra.fields",
    "parse_field": "gctool.algebra.fields",
    "design": "gctool.codes",
    "verify": "gctool.api",
    "attack": "gctool.api",
    "threshold": "gctool.api",
    "curve": "gctool.api",
    "bound": "gctool.api",
    "export": "gctool.exports",
    "show": "gctool.viz.show",
    "simulate": "gctool.sim.run",
    "train": "gctool.trainer.run",
    "read_code": "gctool.io",
    "write_code": "gctool.io",
    "VerifyReport": "gctool.reports",
    "AttackOptions": "gctool.audit.attack",
    "AttackReport": "gctool.reports",
    "WorstReport": "gctool.reports",
    "ThresholdReport": "gctool.reports",
    "CurveReport": "gctool.reports",
    "BoundReport": "gctool.reports",
}


#: public subpackages: ``gctool.decode`` is the decoder package (its function is
#: ``gctool.decode.decode``); a function of the same name would be replaced by the package as
#: soon as anything imports it
_SUBPACKAGES = ("decode",)


def __getattr__(name: str) -> Any:
    import importlib

    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    if name in _SUBPACKAGES:
        return importlib.import_module(f"gctool.{name}")
    raise AttributeError(f"module 'gctool' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
