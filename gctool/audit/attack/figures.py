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
    probs = oracle.code.params.get("p")
    own = probs if isinstance(probs, list | tuple) and len(probs) == oracle.n else None
    if s is None and p is None and own is None:
        return None
    cap = randomized.exact_sets(opts.budget)
    need = sum(randomized.mean_work(oracle, size, q, budget=cap, samples=opts.samples)
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
    kw: dict[str, Any] = {"budget": cap, "samples": opts.samples, "seed": opts.seed}
    if s is not None:
        out.uniform = _scaled(RandomMean(**randomized.uniform_mean(oracle, s, **kw), s=s), scale)
    if p is not None:
        out.iid = _scaled(RandomMean(**randomized.iid_mean(oracle, p, **kw), p=p), scale)
    if own is not None:
        out.hetero = _scaled(RandomMean(**randomized.iid_mean(
            oracle, np.asarray(own, float), **kw), p=PER_WORKER), scale)
        out.hetero_one_step = _one_step(oracle.code, own, scale)
    return out if out.items() else None


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
