"""Scheme metadata types (no numpy) shared by the families (:mod:`gctool.family`), the
registry and the CLI."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

#: report keys of the worst-case condition number recorded by real/complex algebraic designs
CONDITION_KEYS = ("worst_condition", "worst_condition_method", "worst_condition_kind",
                  "worst_condition_sets", "condition_bound")

ParamKind = Literal["int", "float", "str", "choice", "ints", "floats", "path", "flag"]


@dataclass(frozen=True)
class Param:
    """A scheme-specific parameter (a CLI option named like it, dashes for underscores).

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
    #: the CLI option's name when it differs from the parameter's (e.g. ``lambda`` for
    #: ``lam``; ``-x``: a one-letter option)
    flag: str | None = None
    #: a positional CLI argument (e.g. the two code files of ``kron``) instead of an option
    positional: bool = False
    #: old CLI option names, still accepted (hidden from the help, with a deprecation note)
    aliases: tuple[str, ...] = ()
    #: values shell completion offers (a ``str`` parameter that takes names, e.g. bibd's designs)
    suggestions: tuple[str, ...] = ()


@dataclass(frozen=True)
class SimulationTraits:
    """How ``gctool simulate`` (:mod:`gctool.sim`) runs the files of a scheme."""

    #: the lazy-upload rule (LAG-WK, ``lazy``) on the scheme's messages: LAGC for coded
    #: messages, G-LAG on FRC groups
    lazy_rule: str = "LAGC"
    #: nested tolerance levels: one more contender decodes at the level the stragglers allow
    levels: bool = False
    #: M-SGC: the file is the D2 code of multiplexed jobs (an uncoded D1 part; every round a
    #: worker uploads one vector per mini-task slot, delay + 1 slots)
    multiplexed: bool = False


@dataclass(frozen=True)
class StructuredDecoder:
    """A scheme's structured decoder (:mod:`gctool.decode.structured` checks and batches it).

    ``decode_batch(code, U) -> (b, m, L)``: decoding vectors for survivor sets ``U`` (b, L),
    L = n - s, each row sorted; it may raise ``InvalidInput`` (or an arithmetic error) when the
    code's recorded params do not fit.  ``method`` names the method in reports.
    """

    decode_batch: Callable[[Any, Any], Any]
    method: str
