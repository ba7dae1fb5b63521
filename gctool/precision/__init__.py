"""Certification of real and complex codes at the precision training uses (docs/precision.md).

* :mod:`gctool.precision.formats`: float32, bfloat16 (ml_dtypes) and float16, rounding;
* :mod:`gctool.precision.bound`: the proved bound on the decoded gradient's error, per set;
* :mod:`gctool.precision.emulate`: the rounded computation itself (the empirical check, and
  ``simulate train precision``);
* :mod:`gctool.precision.certify`: every straggler set, the worst one, the gate and the
  empirical check: :func:`certify`.
"""

from __future__ import annotations

from gctool.precision.certify import certify, check_budget, check_max_error, warning
from gctool.precision.design import check_design, design_check, precision_rank
from gctool.precision.formats import NAMES, Format, get_format

__all__ = ["NAMES", "Format", "certify", "check_budget", "check_design", "check_max_error",
           "design_check", "get_format", "precision_rank", "warning"]
