"""Small wording helpers shared by the library's messages and the CLI's reports."""

from __future__ import annotations


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``count`` and its noun, singular for exactly one: '1 straggler', '3 stragglers',
    '20,000 sets' (``plural`` for a noun that does not take an s)."""
    return f"{count:,} {noun if count == 1 else plural or noun + 's'}"
