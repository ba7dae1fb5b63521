"""The mathematical reference that gctool's output cites ("reference §x"), shipped in the
package (``gctool/data/reference.md``, the same text as ``docs/reference.md``)."""

from __future__ import annotations

from pathlib import Path


def reference_path() -> Path:
    """Where the installed reference is."""
    return Path(__file__).parent / "data" / "reference.md"
