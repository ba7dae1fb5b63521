"""``key=value,...`` specs of ``gctool simulate``'s options (delay models, load models, the
link, sparsifiers): one parser, one wording of its errors."""

from __future__ import annotations

from collections.abc import Iterable

from gctool.errors import InvalidInput, did_you_mean


def parse_pairs(rest: str, what: str, keys: Iterable[str], usage: str) -> dict[str, float]:
    """The finite numbers of ``key=value`` items separated by commas, each key one of ``keys``
    at most once; ``what`` names the spec in errors, ``usage`` shows its form."""
    allowed, values = set(keys), {}
    for item in filter(None, (x.strip() for x in rest.split(","))):
        key, eq, value = (x.strip() for x in item.partition("="))
        if not eq or key not in allowed or key in values:
            hint = did_you_mean(key, sorted(allowed)) if eq and key not in allowed else ""
            raise InvalidInput(f"{what}: expected {usage}, got {item!r}{hint}")
        try:
            values[key] = float(value)
        except ValueError:
            raise InvalidInput(f"{what}: {key} must be a number") from None
    return values
