"""Catalogue of the multi-round schemes (sr-sgc, m-sgc, coded-reduce, ...)."""

from __future__ import annotations

from gctool.codes.info import Param, SchemeInfo

__all__ = ["Param", "SchemeInfo", "SCHEMES"]

SCHEMES: dict[str, SchemeInfo] = {}
