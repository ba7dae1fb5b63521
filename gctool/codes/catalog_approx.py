"""Catalogue of the approximate and combinatorial schemes (bibd, expander, graph, ...)."""

from __future__ import annotations

from gctool.codes.info import Param, SchemeInfo

__all__ = ["Param", "SchemeInfo", "SCHEMES"]

SCHEMES: dict[str, SchemeInfo] = {}
