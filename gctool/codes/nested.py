"""Nested gradient codes for several tolerance levels s_1 < ... < s_L (reference §5.1).

gctool's model (illustrative, after Maßny et al. 2022; not claimed to be their exact scheme):
level ℓ is a cyclic code whose row i is supported on the window ``{i, ..., i + s_ℓ} mod n``, so
the supports are nested.  Worker i computes its partitions in the order i, i+1, ... and sends
its level-ℓ message (row i of ``B_ℓ``) as soon as it has s_ℓ + 1 of them.  The master decodes
as soon as the all-ones vector lies in the span of every message received so far.

Constructions (``B_ℓ`` for each level):

* complex (default): ``B_ℓ`` is the cyclic code of ``g_ℓ(x) = Π_{t=1..s_ℓ} (x - ω^t)``,
  ω = e^{2πi/n}: nested zero sets {1..s_1} ⊂ ... ⊂ {1..s_L} (Raviv et al.'s DFT construction).
* GF(q) with n | q - 1: the same with ω a primitive n-th root of unity in GF(q).
* real: Tandon's random construction with nested parity checks: one random H (s_L x n, H 1 = 0);
  level ℓ uses its first s_ℓ rows (seeded; each level tolerates s_ℓ stragglers with
  probability 1).

The file's B is the top level (s = s_L), so ``verify``/``attack`` audit the full code by
default; ``params.levels`` lists s_1..s_L and ``params.level_B`` holds the lower levels (same
encoding as B).  A *level profile* says what each worker delivered: 0 = nothing, ℓ = its
messages for levels 1..ℓ.  :func:`profile_decoding` decodes one profile and
:func:`profile_census` counts the decodable profiles with given numbers of workers per level.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Iterator, Sequence
from numbers import Integral
from typing import TYPE_CHECKING, Any

from gctool._lazy import numpy as np
from gctool.algebra.fields import Field
from gctool.budget import NS_PER_S, Budget, format_count, format_seconds
from gctool.codes.nested_profile import level_matrices
from gctool.errors import DesignError, InvalidInput
from gctool.family import Family
from gctool.params import LABEL, ROWS, Int, List
from gctool.registry.info import Param, SimulationTraits

if TYPE_CHECKING:
    from gctool.codes.nested_profile import ProfileReport
    from gctool.model import GradientCode
    from gctool.request import ProfileRequest

def _check_levels(n: int, levels: Any) -> list[int]:
    lv = [] if isinstance(levels, str | bytes) or not isinstance(levels, Iterable) else list(levels)
    if not lv:
        raise DesignError("nested needs `levels` s_1,s_2,... (increasing, e.g. [1, 3]), got "
                          f"{levels!r}")
    if not all(isinstance(x, Integral) and not isinstance(x, bool) for x in lv):
        raise DesignError(f"`levels` must be integers, got {lv!r}")
    lv = [int(x) for x in lv]
    if any(b <= a for a, b in zip(lv, lv[1:], strict=False)) or lv[0] < 0 or lv[-1] >= n:
        raise DesignError(f"`levels` must increase strictly, within 0..n-1 = {n - 1}; got {lv}")
    return lv


def _cyclic_rows(coeffs: Any, n: int, dtype: Any) -> np.ndarray:
    """The n x n matrix whose row i holds ``coeffs`` starting at column i (cyclically)."""
    from gctool.codes.cyclic_mds import circulant

    return circulant(np.asarray(coeffs, dtype=dtype), n, np.zeros(1, dtype=dtype))


def _dft_levels(n: int, levels: list[int], field: Field) -> list[np.ndarray]:
    if field.kind == "complex":
        w = np.exp(2j * np.pi / n)
        out = []
        for s in levels:
            coeffs = np.poly([w**t for t in range(1, s + 1)])[::-1] if s else np.ones(1)
            out.append(_cyclic_rows(coeffs, n, complex))
        return out
    q = field.order
    if (q - 1) % n:
        good = [p for p in range(n + 1, 50 * n, n) if all(p % f for f in range(2, int(p**0.5) + 1))]
        raise DesignError(f"nested codes over GF(q) need n | q - 1 (n = {n}, q = {q}); try "
                          f"GF({good[0]}) or `field`=complex" if good else "use `field`=complex")
    return _dft_levels_gf(n, levels, field)


def _dft_levels_gf(n: int, levels: list[int], field: Field) -> list[np.ndarray]:
    """The GF(q) construction with the plain arithmetic of :class:`GFArith` (no galois)."""
    from gctool.algebra.gf import GFArith

    ar = GFArith(field.resolved())
    w = ar.power(ar.primitive(), (field.order - 1) // n)
    out = []
    for s in levels:
        coeffs = np.ones(1, dtype=np.int64)  # low to high: times (x - w^t) for t = 1..s
        for t in range(1, s + 1):
            shifted = np.concatenate([np.zeros(1, dtype=np.int64), coeffs])  # x * g
            padded = np.concatenate([coeffs, np.zeros(1, dtype=np.int64)])
            coeffs = ar.sub(shifted, ar.mul(np.int64(ar.power(w, t)), padded))
        out.append(_cyclic_rows(coeffs, n, np.int64))
    return out


def _random_levels(n: int, levels: list[int], rng: np.random.Generator) -> list[np.ndarray]:
    H = rng.standard_normal((levels[-1], n))
    H[:, -1] = -H[:, :-1].sum(axis=1)
    out = []
    for s in levels:
        B = np.zeros((n, n))
        for i in range(n):
            B[i, i] = 1.0
            if s:
                W = [(i + t) % n for t in range(1, s + 1)]
                B[i, W] = np.linalg.solve(H[:s, W], -H[:s, i])
        out.append(B)
    return out


def build(n: int, s: int | None, k: int | None, field: Field, rng: np.random.Generator,
          levels: list[int] | None = None, *, budget: Budget
          ) -> tuple[np.ndarray, dict[str, Any]]:
    from gctool.io import encode_matrix

    lv = _check_levels(n, levels)
    if k is not None and k != n:
        raise DesignError(f"nested cyclic codes have k = n = {n} (got -k {k})")
    what = f"nested (n={n}, levels {','.join(str(x) for x in lv)})"
    if field.kind == "real":  # n solves of s x s systems per level
        budget.check_work(f"{what}: {n:,} solves of s x s systems per level",
                          sum(n * max(1, x) ** 3 for x in lv),
                          "use fewer or smaller levels, or a smaller n, or raise `max_work`")
    # every level but the last is recorded in params as nested lists (and written out later):
    # ~80 bytes per real entry, ~130 per complex or GF entry ([re, im] pairs, Python integers)
    per = 80 if field.kind == "real" else 130
    budget.check_memory(f"{what}: the {len(lv) - 1} lower level matrices recorded in the file",
                        (len(lv) - 1) * n * n * per, "use fewer levels or a smaller n")
    if field.kind == "real":
        mats, how = _random_levels(n, lv, rng), "real: random nested parity checks (seeded)"
    else:
        mats, how = _dft_levels(n, lv, field), f"{field}: cyclic codes with zeros ω^1..ω^s_l"
    recorded = {"levels": lv, "construction": how, "s": lv[-1],
                "level_B": [encode_matrix(M, field) for M in mats[:-1]]}
    return mats[-1].astype(field.dtype), recorded


# ---------------------------------------------------------------------------------------------
# level profiles
# ---------------------------------------------------------------------------------------------
def _check_profile(profile: Sequence[int], n: int, L: int) -> np.ndarray:
    prof = np.asarray(profile)
    if prof.shape != (n,) or prof.dtype.kind not in "iu" or prof.min() < 0 or prof.max() > L:
        raise InvalidInput(f"a level profile gives each of the n = {n} workers a level in 0..{L} "
                           f"(0 = nothing received), got {list(profile)}")
    return prof


def profile_decoding(code: GradientCode, profile: Sequence[int]) -> tuple[float, bool]:
    """(raw squared error, decodable) when worker i delivered its levels 1..profile[i]."""
    mats = level_matrices(code)
    return _decode_profile(code, mats, _check_profile(profile, code.n, len(mats)))


def _decode_profile(code: GradientCode, mats: list[np.ndarray], prof: Sequence[int] | np.ndarray
                    ) -> tuple[float, bool]:
    """:func:`profile_decoding` of a checked profile, the levels ``mats`` decoded once."""
    from gctool.model import GradientCode

    rows = [mats[t][i] for i in range(code.n) for t in range(int(prof[i]))]
    if not rows:
        return (1.0 if code.field.is_finite else float(code.k)), False
    from gctool.decode import Decoder

    received = GradientCode(np.array(rows), code.field, 0, "nested-profile")
    d = Decoder(received).decode(range(len(rows)))
    return d.error, d.ok


def _check_counts(code: GradientCode, counts: Sequence[int], L: int) -> None:
    if len(counts) != L + 1 or sum(counts) != code.n or min(counts) < 0:
        raise InvalidInput(f"counts must give the number of workers at each level 0..{L} and "
                           f"sum to n = {code.n}, got {list(counts)}")


def census_size(counts: Sequence[int]) -> int:
    """How many level profiles have ``counts[ℓ]`` workers at level ℓ (a multinomial)."""
    total, left = 1, sum(counts)
    for c in counts:
        total *= math.comb(left, c)
        left -= c
    return total


#: one level profile decoded (:func:`_decode_profile`) costs this much besides its decoding:
#: the received code built and checked and the decoder's set-up (row normalisation, targets:
#: 250-280 us, measured as a fresh decoder's first call less a warm one's), in ns ...
PROFILE_NS = 300_000
#: ... plus this much per worker (the profile drawn and its rows gathered in Python) ...
PROFILE_WORKER_NS = 1_000
#: ... plus the decoder's call on its one set (:func:`gctool.decode.cost.single_call_time`:
#: over R/C the batch call's :data:`~gctool.decode.cost.DECODER_CALL_NS`, which the
#: model before left out: nested complex n = 12, levels 6,3,3 (bench_budget) took 630-730 us
#: per profile where it counted 331) and the set's own system
#: (:func:`gctool.decode.cost.decode_time`).  Measured (minimum CPU time of one core, one BLAS
#: thread, the 2-core development machine under load): nested complex n = 12-30 with 6-18 rows
#: received 645-707 us per profile, 0.99-1.12x of this; 27 rows of n = 24, 1.2 ms (1.7x);
#: real n = 12, 629 us (1.0x); GF(13) n = 12, 1.3 ms (1.2x).


def profile_time(code: GradientCode, counts: Sequence[int]) -> float:
    """Estimated time of one level profile with ``counts[ℓ]`` workers at level ℓ (every such
    profile receives the same number of rows), in ns: the decoder's call on its one set
    (:func:`gctool.decode.cost.single_call_time`) and what it costs besides
    (:data:`PROFILE_NS`, :data:`PROFILE_WORKER_NS`)."""
    from gctool.decode.cost import single_call_time

    rows = sum(level * c for level, c in enumerate(counts))
    fixed = PROFILE_NS + PROFILE_WORKER_NS * code.n
    return fixed + single_call_time(code, rows) if rows else fixed


def check_profile_work(code: GradientCode, counts: Sequence[int], budget: Budget) -> int:
    """Refuse, before any decoding, the profiles with level ``counts`` (ℓ = 0..L) whose
    estimated time is above the work budget; their number when it admits them."""
    total = census_size(counts)
    per = profile_time(code, counts)
    what = (f"decoding every level profile with {list(counts)} workers at levels "
            f"0..{len(counts) - 1} ({format_count(total)} profiles, "
            f"{format_seconds(per / NS_PER_S)} each)" if total > 1 else
            f"decoding the level profile ({sum(counts) - counts[0]} of {code.n} workers "
            f"delivering)")
    budget.check_work(what, float(min(total, 10**30)) * per,
                      "use smaller level counts (fewer profiles), or raise `max_work`"
                      if total > 1 else "raise `max_work`")
    return total


def profile_census(code: GradientCode, counts: Sequence[int],
                   budget: Budget | None = None) -> dict[str, Any]:
    """Decode every profile with ``counts[ℓ]`` workers at level ℓ (ℓ = 0..L), refused before
    it starts when its estimate is above ``budget`` (default :meth:`Budget.default`,
    :func:`check_profile_work`).

    Returns the number of profiles, how many decode, the worst error and one worst profile.
    """
    mats = level_matrices(code)
    _check_counts(code, counts, len(mats))
    check_profile_work(code, counts, Budget.default() if budget is None else budget)
    total, ok, worst, worst_profile = 0, 0, -1.0, None
    for prof in _profiles(code.n, list(counts)):
        total += 1
        err, good = _decode_profile(code, mats, prof)
        ok += good
        if err > worst:
            worst, worst_profile = err, prof
    return {"profiles": total, "decodable": ok, "worst_error": worst,
            "worst_profile": worst_profile}


def _profiles(n: int, counts: list[int]) -> Iterator[list[int]]:
    """All level profiles with the given counts (multiset permutations), in a fixed order."""
    def rec(slots: list[int], level: int) -> Iterator[list[int]]:
        if level == len(counts) - 1:
            prof = [0] * n
            for i in slots:
                prof[i] = level
            yield prof
            return
        for chosen in itertools.combinations(slots, counts[level]):
            rest = [i for i in slots if i not in chosen]
            for prof in rec(rest, level + 1):
                for i in chosen:
                    prof[i] = level
                yield prof

    yield from (list(p) for p in rec(list(range(n)), 0))


class NestedFamily(Family):
    name = "nested"
    build = staticmethod(build)
    summary = "Nested cyclic codes for tolerance levels s_1 < ... < s_L (n = k)."
    description = (
        "Level l has support windows {i..i+s_l}; worker i sends its level-l message after "
        "s_l+1 partitions. complex (default): DFT zeros {1..s_l}; GF(q) with n | q-1: the "
        "same with a root of unity; real: random nested parity checks (seeded). B is the "
        "top level (s = s_L); params.levels and params.level_B hold the levels."
    )
    reference = "after Massny et al. 2022 (MHEBW22), gctool's model; reference §5.1"
    fields = "complex, real, GF(q) with n | q-1"
    default_field = "complex"
    randomized = True
    uses = frozenset({"n", "k", "field", "seed"})
    params = (Param("levels", "ints", "Tolerance levels s_1,...,s_L (increasing).",
                    required=True),)
    report_keys = ("levels",)
    examples = ("gctool design nested -n 6 `levels` 1,3",
                "gctool design nested -n 6 `levels` 1,2 `field` 'GF(7)'")
    simulation = SimulationTraits(levels=True)
    file_params = {"levels": List(Int(0, "n"), 1, "n"), "level_B": List(ROWS, 0, 64),
                   "construction": LABEL}

    def profile(self, code: GradientCode, request: ProfileRequest) -> ProfileReport:
        """Decode ``request.profile`` (or every profile with level ``request.counts``)
        (:mod:`gctool.codes.nested_profile`)."""
        from gctool.codes.nested_profile import ProfileReport

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
        budget = Budget.default() if request.budget is None else request.budget
        if profile is not None:
            prof = [int(x) for x in profile]
            mats = level_matrices(code)
            _check_profile(prof, code.n, L)
            check_profile_work(code, [prof.count(t) for t in range(L + 1)], budget)
            err, ok = _decode_profile(code, mats, prof)
            at = [sum(1 for x in prof if x == t) for t in range(L + 1)]
            reason = (f"the profile decodes (workers per level 0..{L}: {at})" if ok else
                      f"the profile does not decode (workers per level 0..{L}: {at})")
            return ProfileReport(mode="profile", ok=ok or command != "verify", decodable=ok,
                                 error=err / scale, raw_error=err, profile=prof, counts=at,
                                 decodable_profiles=int(ok), reason=reason, **base)
        assert counts is not None  # attack reports, verify judges: attack's ok stays True
        census = profile_census(code, [int(c) for c in counts], budget)
        every = census["decodable"] == census["profiles"]
        worst = float(max(census["worst_error"], 0.0))
        reason = (f"{census['decodable']:,} of {census['profiles']:,} profiles with "
                  f"{list(counts)} workers at levels 0..{L} decode")
        return ProfileReport(mode="census", ok=every or command != "verify", decodable=every,
                             error=worst / scale, raw_error=worst,
                             profile=census["worst_profile"],
                             counts=[int(c) for c in counts], profiles=census["profiles"],
                             decodable_profiles=census["decodable"], reason=reason, **base)
