"""What a report adds to the outcome of a search: the decoding diagnostics of the reported
straggler set, the comparison with a scheme's closed-form worst error, and the mean errors over
random straggler sets (uniform s-sets, i.i.d. probability p, a heterogeneous code's own
per-worker probabilities and its one-step decoder), each in the report's unit."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

import numpy as np

from gctool.audit import randomized
from gctool.audit.attack.options import AttackOptions
from gctool.audit.oracles import Oracle
from gctool.budget import NS_PER_S, format_seconds
from gctool.errors import InvalidInput
from gctool.limits import REL_SLACK, TIE_RTOL
from gctool.model import GradientCode
from gctool.reports import ClosedForm, Diagnostics, OneStepMean, RandomMean, RandomMeans


def diagnostics(oracle: Oracle, S: list[int] | None) -> Diagnostics:
    """The optimal decoding of the reported set ``S`` (empty diagnostics without one)."""
    d = Diagnostics()
    dec = None if S is None else oracle.diagnose(S)
    if dec is None:
        return d
    d.max_residual, d.max_condition, d.max_condition_stragglers = dec.residual, dec.cond, S
    d.max_decoder_norm = dec.norm
    d.note = ("optimal decoding of the reported straggler set: residual ||a^T B_F - t||, "
              "condition of B_F on its numerical rank, decoder norm ||a_F||")
    return d


def closed_form(code: GradientCode, oracle: Oracle, s: int, err: float, scale: float,
                exact: bool) -> ClosedForm | None:
    """The scheme's closed-form worst error at ``s`` (optimal decoding), and whether the
    search's ``err`` agrees with it (equals it when exact, stays below it otherwise)."""
    if oracle.kind != "optimal":
        return None
    from gctool.bounds.closed_forms import closed_form_worst_error

    got = closed_form_worst_error(code, s)
    if got is None:
        return None
    value, source = got
    agree = abs(float(value) - err) <= 1e-6 * max(1.0, abs(err))
    return ClosedForm(float(value), float(value) / scale, source,
                      agree if exact else err <= float(value) * (1 + REL_SLACK) + TIE_RTOL)


def random_means(oracle: Oracle, s: int | None, p: float | None, scale: float,
                 opts: AttackOptions, notes: list[str] | None = None) -> RandomMeans | None:
    """Mean errors over uniform ``s``-sets and i.i.d. stragglers with probability ``p`` (each
    when given), and under a heterogeneous code's own ``params.p``; None when there is none.

    Their work is estimated before they start (:func:`gctool.audit.randomized.mean_work`) and
    compared with what the search left of the work budget: when it does not fit (a search the
    budget stopped leaves nothing), the means are skipped and ``notes`` says so."""
    own = own_probabilities(oracle.code)
    if s is None and p is None and own is None:
        return None
    cap = randomized.exact_sets(opts.budget)
    need = sum(randomized.mean_work(oracle, size, q, budget=cap, samples=opts.sample_count)
               for size, q in ((s, p), (None, None if own is None else np.asarray(own, float))))
    if not oracle.meter.affords(need):
        if notes is not None:
            left = oracle.meter.remaining / NS_PER_S
            notes.append(f"random-straggler means skipped: they need about "
                         f"{format_seconds(need / NS_PER_S)} (estimated) and the search left "
                         f"{format_seconds(left) if left > 0 else 'nothing'} of the work "
                         "budget (raise `max_work`, or lower `samples`/`max_sets`)")
        return None
    out = RandomMeans()
    kw: dict[str, Any] = {"budget": cap, "samples": opts.sample_count, "seed": opts.drawn_seed}
    if s is not None:
        out.uniform = _scaled(RandomMean(**randomized.uniform_mean(oracle, s, **kw), s=s), scale)
    if p is not None:
        out.iid = _scaled(RandomMean(**randomized.iid_mean(oracle, p, **kw), p=p), scale)
    if own is not None:
        out.hetero = _scaled(RandomMean(**randomized.iid_mean(
            oracle, np.asarray(own, float), **kw), p=PER_WORKER), scale)
        out.hetero_one_step = _one_step(oracle.code, own, scale)
    return out if out.items() else None


def own_probabilities(code: GradientCode) -> Sequence[float] | None:
    """The per-worker straggling probabilities a heterogeneous code records (``params.p``, one
    per worker), whose mean error every worst case and curve reports; None without them."""
    probs = code.params.get("p")
    return probs if isinstance(probs, list | tuple) and len(probs) == code.n else None


#: the search methods of each attack mode that draw random numbers (greedy restarts; in worst
#: mode and the curve, bnb and milp start from a greedy incumbent)
_DRAWING = {"worst": ("auto", "greedy", "bnb", "milp"), "curve": ("auto", "greedy", "bnb", "milp"),
            "threshold": ("auto", "greedy")}


def unused_draws(code: GradientCode, opts: AttackOptions, mode: str) -> dict[str, str]:
    """Of the options of random draws (``seed``, ``samples``), those an attack of a matrix code
    in ``mode`` ("worst", "threshold" or "curve") would not use, each with the end of the
    sentence that refuses it: "`samples` does not apply " + why."""
    means = mode != "threshold" and (opts.random or opts.p is not None
                                     or own_probabilities(code) is not None)
    if means:
        return {}
    out = {"samples": ("with `threshold`: it sets the Monte-Carlo samples of the means of "
                       "`random` and `p`, which only -s and `curve` report")
           if mode == "threshold" else
           (f"without `random` or `p`: it sets the Monte-Carlo samples of their means, and "
            f"this code (scheme {code.scheme!r}) records no straggling probabilities of its "
            "own (params.p) to average over")}
    if opts.method not in _DRAWING[mode]:
        out["seed"] = (f"with `method` {opts.method}: it draws nothing at random" +
                       ("" if mode == "threshold" else
                        " (`seed` seeds the greedy searches and the means of `random` and `p`)"))
    return out


#: the ``p`` of the means under the heterogeneous scheme's own per-worker probabilities
PER_WORKER = "params.p (per worker)"


def _one_step(code: GradientCode, probs: Sequence[float], scale: float) -> OneStepMean | None:
    """The hetero scheme's own figure, E||c - 1||^2 of the one-step decoder (the sum of the
    received messages; sum_j 1/Q_j for the optimal unbiased weights)."""
    if code.field.is_finite or code.m != 1:
        return None
    from gctool.codes.straggling import expected_error

    try:
        one = expected_error(np.asarray(code.B), np.asarray(probs, float))
    except InvalidInput:  # e.g. every p_i = 1: no one-step figure
        return None
    return _scaled(OneStepMean(one, True, method="closed form (one-step decoder)",
                               p=PER_WORKER, decoder="one-step: sum of the received messages",
                               design_value=code.params.get("expected_error")), scale)


M = TypeVar("M", bound=RandomMean)


def _scaled(mean: M, scale: float) -> M:
    """``mean`` in the report's unit (divided by ``scale``), keeping the raw values."""
    mean.raw_mean, mean.mean = mean.mean, mean.mean / scale
    if mean.ci95 is not None:
        mean.raw_ci95, mean.ci95 = mean.ci95, [x / scale for x in mean.ci95]
    return mean
