"""The levels of a nested code file (:func:`level_matrices`) and its realised level profiles
for ``verify``/``attack`` (reference §5.1; the ``nested`` family decodes them).

A *level profile* gives each worker the highest level it delivered (0 = nothing; ℓ = its
messages for levels 1..ℓ, see :mod:`gctool.codes.nested`).  ``verify profile`` asks whether
that one profile decodes; ``attack profile`` reports its decoding error.  With level counts
``c_0, ..., c_L`` (``level_counts``) every profile with c_ℓ workers at level ℓ is decoded
(:func:`gctool.codes.nested.profile_census`): verify then passes only when all of them decode,
and attack reports the worst one.  Everything here is exact in the sense of gctool: a single
profile is one decoding, and a census enumerates every profile (refused above
``gctool.codes.nested.MAX_PROFILES``).  Errors are raw squared optimal-decoding errors of the
received rows (reference §0.1), optionally divided by k (``normalize="k"``); over GF(q) they
are indicators (0 decodes, 1 fails).
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field as dc_field
from typing import TYPE_CHECKING, Any

from gctool._lazy import numpy as np
from gctool.errors import InvalidInput, printable
from gctool.reports import Report

if TYPE_CHECKING:
    from gctool.model import GradientCode


@dataclass
class ProfileReport(Report):
    """Result of decoding one level profile, or every profile with given level counts."""

    command: str  # "verify" or "attack"
    mode: str  # "profile" (one realised profile) or "census" (all profiles with level counts)
    scheme: str
    n: int
    k: int
    field: str
    levels: list[int]
    ok: bool
    decodable: bool  # the profile decodes (census: every profile decodes)
    error: float  # the profile's error (census: the worst one), divided by scale
    raw_error: float
    normalize: str = "none"
    scale: float = 1.0
    profile: list[int] | None = None  # the profile (census: a worst one)
    counts: list[int] | None = None
    profiles: int = 1
    decodable_profiles: int = 0
    exact: bool = True
    reason: str = ""
    notes: list[str] = dc_field(default_factory=list)


def parse_levels(text: str, what: str) -> list[int]:
    """Integers separated by commas, spaces, semicolons or newlines, or a JSON list
    (``#`` starts a comment): :func:`gctool.io.parse_list`."""
    from gctool.io import parse_list

    return _levels(parse_list(text, what, "a list of levels"), what)


def _levels(values: list[Any], what: str) -> list[int]:
    out = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, int | str):
            raise InvalidInput(f"{what}: levels are non-negative integers, got "
                               f"{printable(repr(v), 40)}")
        try:
            out.append(int(v))
        except ValueError:
            raise InvalidInput(f"{what}: levels are non-negative integers, got "
                               f"{printable(repr(v), 40)}") from None
    if not out:
        raise InvalidInput(f"{what}: no levels given")
    return out


def read_profile_file(path: str) -> list[int]:
    from gctool.io import read_list_input

    values, label = read_list_input(path, "a list of levels")
    return _levels(values, label)


def level_matrices(code: GradientCode) -> list[np.ndarray]:
    """B_1, ..., B_L of a nested code file (the last one is the file's B)."""
    from gctool.io import decode_matrix

    levels = code.params.get("levels")
    lower = code.params.get("level_B", [])
    if not isinstance(levels, list) or not isinstance(lower, list) or len(lower) != len(levels) - 1:
        raise InvalidInput("not a nested code: params.levels and params.level_B are missing or "
                           "inconsistent")
    mats = [decode_matrix(M, code.field, f"params.level_B[{t}]") for t, M in enumerate(lower)]
    for t, M in enumerate(mats):
        if M.shape != code.B.shape:
            raise InvalidInput(f"params.level_B[{t}] has shape {M.shape}, B has {code.B.shape}")
    return mats + [np.asarray(code.B)]
