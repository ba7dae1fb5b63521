"""Catalogue entry point of ``m-sgc`` (the builder lives in :mod:`gctool.sequential.design`)."""

from gctool.sequential.design import build_msgc as build

__all__ = ["build"]
