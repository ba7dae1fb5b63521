"""The scheme registry: scheme name -> its :class:`~gctool.family.Family`.

Each scheme is a subclass of :class:`gctool.family.Family` in its own module.  The registry
line that names it is one entry point of the group ``gctool.schemes`` in ``pyproject.toml``::

    [project.entry-points."gctool.schemes"]
    frc = "gctool.codes.frc:FRC"

so the registry knows every scheme's name from the installed package's metadata and imports a
scheme's module only when that scheme is looked up: reading a code file imports its own
family and no other (the help of ``gctool design``, which lists them all, imports them all).
Schemes are listed by name.  Another installed package may add schemes the same way.  (After
editing the entry points, reinstall gctool: ``pip install -e .`` rewrites the metadata.)

This package imports no family at run time (the families sit above the audits, which look
schemes up here), only their names' metadata.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

from gctool.registry.info import Param

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

    from gctool.family import Family

#: the entry-point group that names the schemes
GROUP = "gctool.schemes"


class _Registry(Mapping[str, "Family"]):
    """The schemes of the ``gctool.schemes`` entry points; a scheme's module is imported at
    its first look-up."""

    def __init__(self) -> None:
        self._points: dict[str, EntryPoint] | None = None
        self._loaded: dict[str, Family] = {}

    def _entry_points(self) -> dict[str, EntryPoint]:
        if self._points is None:
            from importlib.metadata import entry_points

            points: dict[str, EntryPoint] = {}
            for point in sorted(entry_points(group=GROUP), key=lambda p: p.name):
                points.setdefault(point.name, point)
            if not points:
                raise RuntimeError(f"no gctool scheme is installed (the entry points {GROUP} "
                                   "are missing): reinstall gctool, e.g. pip install -e .")
            self._points = points
        return self._points

    def __getitem__(self, name: str) -> Family:
        family = self._loaded.get(name)
        if family is None:
            point = self._entry_points()[name]
            family = point.load()()
            if family.name != name:
                raise RuntimeError(f"the entry point {name!r} of {GROUP} names a family "
                                   f"called {family.name!r}")
            self._loaded[name] = family
        return family

    def __contains__(self, name: object) -> bool:
        return name in self._entry_points()

    def __iter__(self) -> Iterator[str]:
        return iter(self._entry_points())

    def __len__(self) -> int:
        return len(self._entry_points())


#: scheme name -> Family, by name
SCHEMES: Mapping[str, Family] = _Registry()

__all__ = ["GROUP", "SCHEMES", "Param", "get_scheme"]


def get_scheme(name: str) -> Family:
    """The family named ``name``; :class:`~gctool.errors.InvalidInput` when there is none."""
    from gctool.errors import InvalidInput

    try:
        return SCHEMES[name]
    except KeyError:
        raise InvalidInput(
            f"unknown scheme {name!r}; available: {', '.join(sorted(SCHEMES))}"
        ) from None
