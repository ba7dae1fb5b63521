"""``best_of``: draw N random designs and keep the best-conditioned one.

A randomized real or complex scheme (e.g. ``cyclic``) decodes exactly with probability 1, but
its draws differ in how well conditioned the decoding systems ``a^T B_F = targets`` are.
``design(..., best_of=N)`` builds N draws and keeps the one whose *worst-case* condition
number over the straggler sets of size s is smallest (:mod:`gctool.codes.conditioning`:
exact over every set when that is cheap; else, when every set can be screened, ranked by the
bound ``gctool verify`` proves, recorded as ``condition_bound``; otherwise an estimate on the
same sampled sets for every draw, a lower bound, and the recorded method says which).

Reproducibility: draw i is built with ``numpy.random.default_rng(SeedSequence(seed,
spawn_key=(i,)))``, i.e. ``SeedSequence(seed).spawn(N)[i]``, from the recorded seed, so the
recorded seed and ``best_of`` regenerate every draw and the choice (the draws of a smaller N are
the first draws of a larger one).  Ties and singular draws: the smallest finite value wins,
the first draw among equals; when every draw has a singular decoding system, draw 0 is kept.

Recorded params: ``best_of`` (N), ``best_of_draw`` (the chosen index), ``best_of_conditions``
(the worst-case condition number of every draw; null = singular), ``best_of_method``,
``best_of_seeding``, and ``worst_condition`` / ``worst_condition_method`` of the chosen draw.
Over GF(q) decoding is exact and there is no conditioning to compare, so ``best_of`` is refused
there, and for deterministic schemes (every draw would be the same code).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from gctool.family import Family

from gctool.algebra.fields import Field
from gctool.budget import Budget
from gctool.codes.conditioning import NOT_ESTIMATED, Worst, worst_case
from gctool.errors import DesignError, InvalidInput, SearchInterrupted

MAX_BEST_OF = 1000
SEEDING = ("draw i is built with numpy.random.default_rng(numpy.random.SeedSequence(seed)"
           ".spawn(best_of)[i]), seed = the recorded seed")

Build = Callable[[np.random.Generator], tuple[np.ndarray, dict[str, Any]]]
#: another ranking of the draws (``design`` with ``precision``): (B, field, s) -> the value to
#: minimise, with a ``label`` attribute naming it
Rank = Callable[[np.ndarray, Field, int], float]


def check_best_of(info: Family, best_of: Any, field: Field | None) -> int:
    """Validate ``best_of`` for this scheme and field (None: field not known yet)."""
    if isinstance(best_of, bool) or not isinstance(best_of, int) or not \
            1 <= best_of <= MAX_BEST_OF:
        raise InvalidInput(f"`best_of` must be an integer between 1 and "
                           f"{MAX_BEST_OF}, got {best_of!r}")
    if not info.accepts_best_of:
        raise DesignError(f"`best_of` draws several random designs, but scheme {info.name!r} "
                          "is deterministic (every draw would be the same code); use it with a "
                          "randomized scheme such as 'cyclic'")
    if field is not None and field.is_finite:
        raise DesignError(_finite(field))
    return best_of


def _finite(field: Field) -> str:
    return (f"`best_of` keeps the best-conditioned draw, which only means something over the "
            f"reals or complex numbers; over {field} decoding is exact and every valid draw is "
            "as good (drop `best_of`, or use `field`=real or complex)")


def draw_rngs(seed: int, count: int) -> list[np.random.Generator]:
    return [np.random.default_rng(child) for child in np.random.SeedSequence(seed).spawn(count)]


def best_of_draws(build: Build, seed: int, count: int, s: int | None, field: Field,  # noqa: PLR0913 (the draws' inputs)
                  rank: Rank | None = None, budget: Budget | None = None
                  ) -> tuple[np.ndarray, dict[str, Any]]:
    """Build ``count`` draws and return the best-conditioned (B, recorded params), or the
    best by ``rank`` when given (recorded as ``best_of_ranked_by`` and ``best_of_ranks``);
    each draw's conditioning is held to ``budget`` (:func:`conditioning`)."""
    best: tuple[float, int, np.ndarray, dict[str, Any], Worst] | None = None
    conditions: list[float | None] = []
    ranks: list[float | None] = []
    try:
        for i, rng in enumerate(draw_rngs(seed, count)):
            B, recorded = build(rng)
            fld = recorded.get("_field", field)
            if fld.is_finite:  # a build that chose its own field
                raise DesignError(_finite(fld))
            worst = worst_case(np.asarray(B), int(recorded.get("s", s) or 0), budget=budget,
                               m=int(recorded.get("m", 1)))
            conditions.append(worst.value)
            # verify's proved bound, if known
            ranked = worst.bound if worst.bound is not None else worst.value
            key = np.inf if ranked is None else ranked
            if rank is not None:
                key = rank(np.asarray(B), fld, int(recorded.get("s", s) or 0))
                ranks.append(key if np.isfinite(key) else None)
            if best is None or key < best[0]:
                best = (key, i, B, recorded, worst)
    except KeyboardInterrupt:
        raise SearchInterrupted(_interrupted(len(conditions), count, best, rank)) from None
    assert best is not None
    _, index, B, recorded, worst = best
    method = worst.method
    recorded = dict(recorded)
    if worst.bound is not None:
        recorded["condition_bound"] = worst.bound
    recorded.update(best_of=count, best_of_draw=index, best_of_conditions=conditions,
                    best_of_method=_method_label(method), best_of_seeding=SEEDING,
                    worst_condition=conditions[index],
                    worst_condition_method=method + (
                        "" if conditions[index] is not None or method.startswith(NOT_ESTIMATED)
                        else "; some B_F is singular (condition infinite) in every draw"),
                    **worst.params())
    if rank is not None:
        recorded.update(best_of_ranked_by=getattr(rank, "label", "rank"), best_of_ranks=ranks)
    return B, recorded


def _method_label(method: str) -> str:
    return ("worst-case condition number of the decoding systems of each draw, "
            + method.replace("exact:", "exact,").replace("estimate (lower bound):",
                                                          "estimated (lower bound),"))


def _interrupted(done: int, count: int, best: Any, rank: Rank | None = None) -> str:
    what = "worst-case condition" if rank is None else getattr(rank, "label", "rank")
    where = "" if best is None or not np.isfinite(best[0]) else \
        f"; the best so far was draw {best[1]} ({what} {best[0]:.4g})"
    return f"`best_of` interrupted after {done} of {count} draws{where}; no file written"
