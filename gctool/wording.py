"""Small wording helpers shared by the library's messages and the CLI's reports."""

from __future__ import annotations


def noun(count: int, word: str, plural: str | None = None) -> str:
    """``word`` for exactly one, else its plural (``plural``, or ``word`` + 's'): 'partition',
    'partitions'; also a verb agreeing with ``count`` (``noun(n, "stands", "stand")``)."""
    return word if count == 1 else plural or word + "s"


def counted(count: int, word: str, plural: str | None = None) -> str:
    """``count`` and its noun, singular for exactly one: '1 straggler', '3 stragglers',
    '20,000 sets' (``plural`` for a noun that does not take an s)."""
    return f"{count:,} {noun(count, word, plural)}"
