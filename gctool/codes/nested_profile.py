"""Realised level profiles of nested codes for ``verify``/``attack`` (reference §5.1).

A *level profile* gives each worker the highest level it delivered (0 = nothing; ℓ = its
messages for levels 1..ℓ, see :mod:`gctool.codes.nested`).  ``verify --profile`` asks whether
that one profile decodes; ``attack --profile`` reports its decoding error.  With level counts
``c_0, ..., c_L`` (``--level-counts``) every profile with c_ℓ workers at level ℓ is decoded
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

from gctool.errors import InvalidInput, printable
from gctool.model import GradientCode
from gctool.reports import Report

if TYPE_CHECKING:
    from gctool.api import ProfileRequest


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


def profile_report(code: GradientCode, request: ProfileRequest) -> ProfileReport:
    """``profiler`` hook of nested codes: decode ``request.profile`` (or every profile with
    level ``request.counts``)."""
    from gctool.codes.nested import level_matrices, profile_census, profile_decoding

    command, profile, counts = request.command, request.profile, request.counts
    normalize = request.normalize
    if (profile is None) == (counts is None):
        raise InvalidInput("give either a level profile or level counts")
    if normalize not in ("none", "k"):
        raise InvalidInput("normalize must be 'none' or 'k'")
    L = len(level_matrices(code))  # raises InvalidInput for codes that are not nested
    levels = [int(x) for x in code.params["levels"]]
    scale = float(code.k) if normalize == "k" else 1.0
    base: dict[str, Any] = dict(command=command, scheme=code.scheme, n=code.n, k=code.k,
                                field=str(code.field), levels=levels, normalize=normalize,
                                scale=scale)
    if profile is not None:
        prof = [int(x) for x in profile]
        err, ok = profile_decoding(code, prof)
        at = [sum(1 for x in prof if x == t) for t in range(L + 1)]
        reason = (f"the profile decodes (workers per level 0..{L}: {at})" if ok else
                  f"the profile does not decode (workers per level 0..{L}: {at})")
        return ProfileReport(mode="profile", ok=ok or command != "verify", decodable=ok,
                             error=err / scale, raw_error=err, profile=prof, counts=at,
                             decodable_profiles=int(ok), reason=reason, **base)
    assert counts is not None  # attack reports, verify judges: attack's ok stays True
    census = profile_census(code, [int(c) for c in counts])
    every = census["decodable"] == census["profiles"]
    worst = float(max(census["worst_error"], 0.0))
    reason = (f"{census['decodable']:,} of {census['profiles']:,} profiles with "
              f"{list(counts)} workers at levels 0..{L} decode")
    return ProfileReport(mode="census", ok=every or command != "verify", decodable=every,
                         error=worst / scale, raw_error=worst, profile=census["worst_profile"],
                         counts=[int(c) for c in counts], profiles=census["profiles"],
                         decodable_profiles=census["decodable"], reason=reason, **base)
