"""Catalogue of the algebraic exact schemes (cyclic-mds, rs, comm)."""

from __future__ import annotations

from gctool.codes.info import Param, SchemeInfo

__all__ = ["Param", "SchemeInfo", "SCHEMES"]

SCHEMES: dict[str, SchemeInfo] = {}
