"""Closed-form results known for particular schemes (errors, bounds), used by ``bound`` and
``attack`` to show what theory predicts next to what the audit found.

Each function returns ``None`` when no closed form applies to the given code.
"""

from __future__ import annotations

from gctool.model import GradientCode
from gctool.reports import Bound


def scheme_bounds(code: GradientCode, s: int) -> list[Bound]:
    """Scheme-specific bounds/closed forms for ``code`` audited at s stragglers."""
    return []


def closed_form_worst_error(code: GradientCode, s: int) -> tuple[float, str] | None:
    """Exact worst-case raw squared optimal-decoding error for s stragglers, with its source,
    when a closed form is known for the code's scheme."""
    return None
