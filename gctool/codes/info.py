"""Scheme metadata types (plain data; no numpy) shared by the catalogues and the CLI."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

ParamKind = Literal["int", "float", "str", "choice", "ints", "floats", "path"]


@dataclass(frozen=True)
class Param:
    """A scheme-specific parameter (CLI option ``--name`` with dashes for underscores)."""

    name: str
    kind: ParamKind
    help: str
    default: Any = None
    required: bool = False
    choices: tuple[str, ...] = ()
    short: str | None = None


@dataclass(frozen=True)
class SchemeInfo:
    name: str
    module: str
    summary: str
    description: str
    reference: str
    fields: str = "any field"
    default_field: str = "real"
    randomized: bool = False
    uses: frozenset[str] = frozenset({"n", "s", "k", "field", "seed"})
    s_default: int | None = None  # None: -s is required
    params: tuple[Param, ...] = ()
    examples: tuple[str, ...] = field(default_factory=tuple)
