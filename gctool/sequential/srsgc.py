"""Catalogue entry point of ``sr-sgc`` (the builder lives in :mod:`gctool.sequential.design`)."""

from gctool.sequential.design import build_srsgc as build

__all__ = ["build"]
