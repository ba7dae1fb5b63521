"""Scheme metadata types (plain data; no numpy) shared by the catalogues and the CLI."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

ParamKind = Literal["int", "float", "str", "choice", "ints", "floats", "path", "flag"]


@dataclass(frozen=True)
class Param:
    """A scheme-specific parameter (CLI option ``--name`` with dashes for underscores).

    Kinds: ``int``, ``float``, ``str``, ``choice``, ``ints``/``floats`` (comma-separated lists),
    ``path`` (a file) and ``flag`` (a boolean switch, default off).
    """

    name: str
    kind: ParamKind
    help: str
    default: Any = None
    required: bool = False
    choices: tuple[str, ...] = ()
    short: str | None = None
    #: CLI spelling when it differs from ``--name`` (e.g. ``--lambda`` for ``lam``)
    flag: str | None = None
    #: a positional CLI argument (e.g. the two code files of ``kron``) instead of an option
    positional: bool = False
    #: old CLI spellings, still accepted (hidden from --help, with a deprecation note)
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class SchemeInfo:
    """Catalogue entry of a scheme.

    ``uses`` lists the generic options the scheme takes; a scheme whose n or s follow from its
    parameters (``bibd``, ``kron``, ``hetero``) leaves them out.  Its ``build`` then receives
    ``n=None`` (and ``s=None``) and returns the values it chose in the recorded params
    (``"s"``), see :func:`gctool.codes.design`.
    """

    name: str
    module: str
    summary: str
    description: str
    reference: str
    fields: str = "any field"
    default_field: str = "real"
    randomized: bool = False
    #: randomized schemes accept ``best_of`` (keep the best-conditioned of N real/complex
    #: draws, :mod:`gctool.codes.best_of`) unless this is False
    best_of: bool = True
    uses: frozenset[str] = frozenset({"n", "s", "k", "field", "seed"})
    s_default: int | None = None  # None: -s is required
    params: tuple[Param, ...] = ()
    #: keys of the recorded params that ``design`` echoes in its summary (e.g. eigenvalues)
    report_keys: tuple[str, ...] = ()
    examples: tuple[str, ...] = field(default_factory=tuple)

    @property
    def accepts_best_of(self) -> bool:
        return self.randomized and self.best_of
