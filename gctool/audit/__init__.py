"""Audit engines: ``verify`` (tolerance certificates) and ``attack`` (worst cases, thresholds)."""

from gctool.audit.attack import attack, threshold
from gctool.audit.verify import verify

__all__ = ["attack", "threshold", "verify"]
