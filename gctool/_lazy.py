"""``numpy`` (and ``asyncio``) imported on first use, for the modules every command loads.

Every scheme module carries its family's metadata (:class:`gctool.family.Family`) next to its
``build``, so the help of ``gctool`` and ``gctool design`` and TAB completion import all of
them.
They write ``from gctool._lazy import numpy as np``: ``np`` is a module object whose first
attribute access imports numpy (later accesses are plain attribute look-ups), and to mypy it is
numpy itself.  Other heavy imports of those modules go inside the functions that use them.
``gctool.audit.distributed`` (imported by every audit, used only with Dask) writes ``from
gctool._lazy import asyncio`` the same way: 34 modules no command without Dask needs.
"""

from __future__ import annotations

import importlib
import types
from typing import TYPE_CHECKING, Any

__all__ = ["asyncio", "numpy"]


class _LazyModule(types.ModuleType):
    """Stands for the module ``name``, imported at the first attribute access."""

    def __getattr__(self, attr: str) -> Any:
        module = importlib.import_module(self.__name__)
        self.__dict__.update(module.__dict__)  # later look-ups skip __getattr__
        return getattr(module, attr)


if TYPE_CHECKING:
    import asyncio as asyncio

    import numpy as numpy
else:
    asyncio = _LazyModule("asyncio")
    numpy = _LazyModule("numpy")
