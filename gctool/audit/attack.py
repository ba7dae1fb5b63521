"""``attack``: worst-case straggler sets, adversarial thresholds and error curves.

Errors are raw squared decoding errors ``||a^T B_F - t||^2`` (reference §0.1) under the chosen
decoder (:mod:`gctool.audit.oracles`: optimal, fixed, natural); ``normalize="k"`` divides them
by k.  Over GF(q) the error is an indicator (0 decodes, 1 fails).

Methods: ``exhaustive`` (:mod:`~gctool.audit.exhaustive`), ``bnb`` (:mod:`~gctool.audit.bnb`),
``greedy`` (:mod:`~gctool.audit.greedy`), ``milp`` (:mod:`~gctool.audit.milp`), ``elementary``
(:mod:`~gctool.audit.elementary`, thresholds only) and ``auto``: exhaustive when it fits the
budget, then the exact solvers, then the heuristics.  Every result says whether it is exact and
carries the sandwich it proved: ``found <= true worst <= upper_bound`` in worst mode and
``threshold_lower <= T <= threshold_upper`` in threshold mode.

Threshold mode returns ``T_eps = min{|S| : err(S) > eps}`` (strict, so eps = 0 gives the exact
threshold T_0).  Over R/C an error counts as exceeding eps only when it is also above the
decoding tolerance ``tol * k``, so that round-off never makes a decodable set "fail".
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from dataclasses import field as dc_field
from math import comb
from typing import Any, TypeVar

import numpy as np

from gctool.audit import bnb as bnb_mod
from gctool.audit import exhaustive, greedy, randomized
from gctool.audit.checks import check_s
from gctool.audit.oracles import FixedOracle, Oracle, make_oracle
from gctool.audit.outcome import ThresholdOutcome, WorstOutcome
from gctool.decode import DEFAULT_TOL
from gctool.engine.enumeration import pad_to
from gctool.engine.sweep import Runner
from gctool.errors import BudgetExceeded, InvalidInput
from gctool.limits import DEFAULT_MAX_SETS, REL_SLACK, TIE_RTOL
from gctool.model import GradientCode
from gctool.numerics import threshold_level
from gctool.reports import (
    ClosedForm,
    CurveReport,
    Diagnostics,
    OneStepMean,
    RandomMean,
    RandomMeans,
    ThresholdReport,
    WorstPoint,
    WorstReport,
)

NORMALIZATIONS = ("none", "k")
METHODS = ("auto", "exhaustive", "bnb", "greedy", "milp", "elementary")
DEFAULT_MAX_NODES = bnb_mod.DEFAULT_MAX_NODES
DEFAULT_TIME_LIMIT = 60.0
DEFAULT_RESOLUTION = 1e-4
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class AttackOptions:
    """The options of :func:`attack`, :func:`threshold` and :func:`curve` (the flags of
    ``gctool attack``).  Every mode reads the decoder, the search and its budgets; ``random``,
    ``p`` and ``samples`` add random-set means to the worst case and the curve; ``resolution``
    and the gate ``require`` (or ``require_tolerance`` S, the same as ``require`` S+1) belong
    to the threshold.  :meth:`of` makes one from keywords (``AttackOptions.of(method="bnb")``,
    or changes to another: ``AttackOptions.of(opts, seed=2)``)."""

    decoder: str = "optimal"  # "optimal", "fixed" or "natural"
    weights: Sequence[float] | np.ndarray | None = dc_field(
        default=None, compare=False)  # fixed decoder: one weight per worker (or rows)
    normalize: str = "none"  # "none": raw squared error; "k": divided by k
    method: str = "auto"
    tol: float = DEFAULT_TOL
    max_sets: int = DEFAULT_MAX_SETS
    max_nodes: int = DEFAULT_MAX_NODES
    time_limit: float = DEFAULT_TIME_LIMIT
    restarts: int = 20
    seed: int = 0
    jobs: int = 1
    symmetry: bool = True
    resolution: float = DEFAULT_RESOLUTION
    random: bool = False  # mean error over uniformly random s-sets
    p: float | None = None  # mean error when each worker straggles with probability p
    samples: int = randomized.DEFAULT_SAMPLES  # Monte-Carlo samples of the means
    require: int | None = None  # threshold gate: fail unless threshold >= require is proved
    require_tolerance: int | None = None  # the same gate as "tolerates S" (require = S + 1)
    progress: Progress | None = dc_field(default=None, compare=False)
    #: where the exhaustive enumeration runs: None = ``jobs`` local processes, or a
    #: :class:`gctool.audit.distributed.DaskRunner`; results do not depend on it
    runner: Runner | None = dc_field(default=None, compare=False)

    @classmethod
    def of(cls, options: AttackOptions | None = None, **changes: Any) -> AttackOptions:
        """``options`` (default: the defaults) with ``changes`` applied."""
        base = cls() if options is None else options
        if not isinstance(base, AttackOptions):
            raise InvalidInput(f"options must be AttackOptions, got {type(base).__name__}")
        return replace(base, **changes) if changes else base

    @property
    def required(self) -> int | None:
        """The threshold the gate requires (``require_tolerance`` S means S + 1)."""
        return self.require_tolerance + 1 if self.require_tolerance is not None else self.require

    def check(self) -> None:
        if self.normalize not in NORMALIZATIONS:
            raise InvalidInput(f"normalize must be one of {', '.join(NORMALIZATIONS)}")
        if self.method not in METHODS:
            raise InvalidInput(f"method must be one of {', '.join(METHODS)}, got {self.method!r}")
        for name in ("max_sets", "max_nodes"):
            if int(getattr(self, name)) < 1:
                raise InvalidInput(f"{name} must be a positive integer")
        if not (self.time_limit > 0 and np.isfinite(self.time_limit)):
            raise InvalidInput("time_limit must be a positive number of seconds")
        if self.restarts < 0 or self.jobs < 0:
            raise InvalidInput("restarts and jobs must be >= 0")
        if not (0 < self.resolution < np.inf):
            raise InvalidInput("resolution must be a positive number")
        for name in ("require", "require_tolerance"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                      or value < 0):
                raise InvalidInput(f"{name} must be an integer >= 0, got {value!r}")
        if self.require is not None and self.require_tolerance is not None:
            raise InvalidInput("require and require_tolerance exclude each other")

    def for_search(self) -> AttackOptions:
        """Checked options of a worst-case search or curve (the threshold gate refused)."""
        self.check()
        if self.required is not None:
            raise InvalidInput("require and require_tolerance are gates on the threshold")
        return self


def _scale(code: GradientCode, normalize: str) -> float:
    return float(code.k) if normalize == "k" else 1.0


# -- worst case -----------------------------------------------------------------------------------
def _largest(oracle: Oracle) -> tuple[float | None, str]:
    if oracle.max_error is None:
        return None, ""
    if oracle.finite:
        return oracle.max_error, "an indicator error is at most 1"
    what = "||t||^2 (the decoder a = 0)" if oracle.kind == "optimal" else "every group lost"
    return oracle.max_error, f"largest possible error {what}"


def worst_outcome(oracle: Oracle, s: int, opts: AttackOptions,
                  starts: Sequence[Sequence[int]] = ()) -> WorstOutcome:
    """Run the chosen method for the worst set of size s."""
    method = opts.method
    top, why = _largest(oracle)
    if method == "elementary":
        raise InvalidInput("the elementary method computes exact thresholds: use --threshold, "
                           "or another --method for the worst case")
    if method == "auto":
        return _auto_worst(oracle, s, opts, starts)
    if method == "exhaustive":
        return exhaustive.worst(oracle, s, max_sets=opts.max_sets, symmetry=opts.symmetry,
                                jobs=opts.jobs, progress=opts.progress, runner=opts.runner)
    g = _greedy(oracle, s, opts, starts, restarts=opts.restarts if method == "greedy" else 4)
    if method == "greedy":
        g.tighten(top, why)
        return g
    if method == "bnb":
        out = bnb_mod.bnb_worst(oracle, s, incumbent=g, max_nodes=opts.max_nodes,
                                progress=opts.progress)
    else:
        from gctool.audit.milp import milp_worst

        out = milp_worst(oracle, s, time_limit=opts.time_limit, incumbent=g)
    out.tighten(top, why)
    return out


def _greedy(oracle: Oracle, s: int, opts: AttackOptions, starts: Sequence[Sequence[int]],
            restarts: int) -> WorstOutcome:
    top, _ = _largest(oracle)
    return greedy.greedy(oracle, s, seed=opts.seed, restarts=restarts, starts=starts,
                         stop_at=top, progress=opts.progress)


def _auto_worst(oracle: Oracle, s: int, opts: AttackOptions,
                starts: Sequence[Sequence[int]]) -> WorstOutcome:
    top, why = _largest(oracle)
    rot = exhaustive.rotation_for(oracle) if opts.symmetry else None
    if exhaustive.count_evaluated(oracle.n, s, rot) <= opts.max_sets:
        return exhaustive.worst(oracle, s, max_sets=opts.max_sets, symmetry=opts.symmetry,
                                jobs=opts.jobs, progress=opts.progress, runner=opts.runner)
    trail = ["exhaustive over budget"]
    best = _greedy(oracle, s, opts, starts, opts.restarts)
    best.tighten(top, why)
    trail.append("greedy")
    if not best.exact and (oracle.monotone or (isinstance(oracle, FixedOracle)
                                               and not oracle.finite)):
        best = bnb_mod.bnb_worst(oracle, s, incumbent=best, max_nodes=opts.max_nodes,
                                 progress=opts.progress)
        best.tighten(top, why)
        trail.append("bnb")
    if not best.exact and not oracle.finite and oracle.kind in ("optimal", "fixed"):
        from gctool.audit.milp import milp_worst

        m = milp_worst(oracle, s, time_limit=opts.time_limit, incumbent=best)
        m.notes = best.notes + m.notes
        m.tighten(best.upper, best.upper_source)
        best = m
        trail.append("milp")
    best.notes.insert(0, "auto: " + " -> ".join(trail))
    return best


def check_setup(code: GradientCode, decoder: str) -> None:
    """Refuse, before it starts, the set-up of the optimal decoder over R/C above the work or
    memory budget: one SVD of B (K x n), one of its n x n complement, and the n x n
    projectors H and N (:class:`gctool.audit.oracles.OptimalOracle`)."""
    if decoder != "optimal" or code.field.is_finite:
        return
    from gctool.limits import check_memory, check_work, solve_cost

    n, K = code.B.shape
    r = min(n, K)
    what = f"attack (n={n}, k*m={K}, {code.field}): the optimal decoder's set-up (SVDs of B)"
    check_work(what, solve_cost(K, n) + n**3 + 2 * n * n * r,
               "attack a smaller code or a finite-field version of it, or raise --max-work")
    item = np.dtype(code.field.dtype).itemsize
    check_memory(what, item * (6 * n * n + 3 * n * K),
                 "attack a smaller code or a finite-field version of it")


def attack(code: GradientCode, s: int, options: AttackOptions | None = None,
           **changes: Any) -> WorstReport:
    """The worst straggler set of size ``s`` under ``options.decoder``, found by
    ``options.method`` (keywords: changes to ``options``, see :class:`AttackOptions`)."""
    check_s(s, code.n, allow_all=True)
    opts = AttackOptions.of(options, **changes).for_search()
    scale = _scale(code, opts.normalize)
    start = time.perf_counter()
    if opts.method == "exhaustive" or (opts.method == "auto" and opts.decoder == "optimal"):
        # estimated before the oracle's O(n^3) set-up: the sets an exhaustive search would
        # evaluate (auto falls back to the bounded solvers above --max-sets)
        rot = (exhaustive.detect_rotation(code) if opts.symmetry and opts.decoder == "optimal"
               else None)
        need = exhaustive.count_evaluated(code.n, s, rot)
        if need <= opts.max_sets and not exhaustive.may_use_hat(code, s):
            exhaustive.check_set_work(code, s, need, "exhaustive attack")
    check_setup(code, opts.decoder)
    oracle = make_oracle(code, opts.decoder, opts.weights, opts.tol)
    found = worst_outcome(oracle, s, opts)
    report = _worst_report(code, oracle, s, found, scale, opts)
    report.random = _random(oracle, s if opts.random else None, opts.p, scale, opts)
    report.elapsed_s = time.perf_counter() - start
    return report


def _worst_report(code: GradientCode, oracle: Oracle, s: int, found: WorstOutcome,
                  scale: float, opts: AttackOptions) -> WorstReport:
    err = found.error
    decodes = not bool(oracle.fails(err))
    reason = ("every straggler set of this size still decodes" if decodes and found.exact
              else "the worst set leaves an error" if found.exact
              else "heuristic: the true worst error is at least this")
    report = WorstReport(
        s=s, n=code.n, k=code.k, field=str(code.field),
        stragglers=found.stragglers, error=err / scale, raw_error=err, normalize=opts.normalize,
        decoder=oracle.kind, method=found.method, exact=found.exact,
        checked=found.checked if found.method == "exhaustive" else oracle.evaluations,
        total=found.total, reason=reason, diagnostics=_diagnostics(oracle, found.stragglers),
        scheme=code.scheme, decoder_label=oracle.label, decoder_info=oracle.describe(),
        scale=scale, seed=opts.seed, evaluations=oracle.evaluations, notes=list(found.notes))
    if found.upper is not None:
        report.raw_upper_bound = found.upper
        report.upper_bound = found.upper / scale
        report.upper_bound_source = found.upper_source
    report.closed_form = _closed_form(code, oracle, s, err, scale, found.exact)
    return report


def _diagnostics(oracle: Oracle, S: list[int] | None) -> Diagnostics:
    d = Diagnostics()
    dec = None if S is None else oracle.diagnose(S)
    if dec is None:
        return d
    d.max_residual, d.max_condition, d.max_condition_stragglers = dec.residual, dec.cond, S
    d.max_decoder_norm = dec.norm
    d.note = ("optimal decoding of the reported straggler set: residual ||a^T B_F - t||, "
              "condition of B_F on its numerical rank, decoder norm ||a_F||")
    return d


def _closed_form(code: GradientCode, oracle: Oracle, s: int, err: float, scale: float,
                 exact: bool) -> ClosedForm | None:
    if oracle.kind != "optimal":
        return None
    from gctool.codes.closed_forms import closed_form_worst_error

    got = closed_form_worst_error(code, s)
    if got is None:
        return None
    value, source = got
    agree = abs(float(value) - err) <= 1e-6 * max(1.0, abs(err))
    return ClosedForm(float(value), float(value) / scale, source,
                      agree if exact else err <= float(value) * (1 + REL_SLACK) + TIE_RTOL)


def _random(oracle: Oracle, s: int | None, p: float | None, scale: float,
            opts: AttackOptions) -> RandomMeans | None:
    out = RandomMeans()
    kw: dict[str, Any] = {"budget": opts.max_sets, "samples": opts.samples, "seed": opts.seed}
    if s is not None:
        out.uniform = _scaled(RandomMean(**randomized.uniform_mean(oracle, s, **kw), s=s), scale)
    if p is not None:
        out.iid = _scaled(RandomMean(**randomized.iid_mean(oracle, p, **kw), p=p), scale)
    probs = oracle.code.params.get("p")
    if isinstance(probs, list | tuple) and len(probs) == oracle.n:
        out.hetero = _scaled(RandomMean(**randomized.iid_mean(
            oracle, np.asarray(probs, float), **kw), p=PER_WORKER), scale)
        out.hetero_one_step = _one_step(oracle.code, probs, scale)
    return out if out.items() else None


#: the ``p`` of the means under the heterogeneous scheme's own per-worker probabilities
PER_WORKER = "params.p (per worker)"


def _one_step(code: GradientCode, probs: Sequence[float], scale: float) -> OneStepMean | None:
    """The hetero scheme's own figure, E||c - 1||^2 of the one-step decoder (the sum of the
    received messages; sum_j 1/Q_j for the optimal unbiased weights)."""
    if code.field.is_finite or code.m != 1:
        return None
    from gctool.codes.hetero import expected_error

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


# -- curve ----------------------------------------------------------------------------------------
def curve(code: GradientCode, max_s: int | None = None, options: AttackOptions | None = None,
          **changes: Any) -> CurveReport:
    """Worst-case error for s = 0..max_s (default n), optionally with the random-set means
    (keywords: changes to ``options``, see :class:`AttackOptions`)."""
    top = code.n if max_s is None else max_s
    check_s(top, code.n, "max_s", allow_all=True)
    given = AttackOptions.of(options, **changes).for_search()
    opts = replace(given, progress=None)  # progress counts values of s, not sets
    scale = _scale(code, opts.normalize)
    start = time.perf_counter()
    if top >= 1:  # every method evaluates at least the n single stragglers for s = 1
        exhaustive.check_set_work(code, 1, code.n, "attack --curve")
    check_setup(code, opts.decoder)
    oracle = make_oracle(code, opts.decoder, opts.weights, opts.tol)
    points: list[WorstPoint] = []
    prev, checked = None, 0
    for s in range(top + 1):
        before = oracle.evaluations
        found = _curve_point(oracle, s, opts, prev)
        checked += oracle.evaluations - before
        point = WorstPoint(s, found.stragglers, found.error / scale, found.error, found.exact,
                           found.method, None if found.upper is None else found.upper / scale)
        if opts.random:
            mean = randomized.uniform_mean(oracle, s, budget=opts.max_sets,
                                           samples=opts.samples, seed=opts.seed)
            point.mean, point.mean_exact = mean["mean"] / scale, mean["exact"]
        points.append(point)
        prev = found
        if given.progress is not None:
            given.progress(s + 1, top + 1)
    report = CurveReport(
        s=top, n=code.n, k=code.k, field=str(code.field), normalize=opts.normalize,
        decoder=oracle.kind, method=opts.method, exact=all(pt.exact for pt in points),
        checked=checked, total=sum(comb(code.n, t) for t in range(top + 1)),
        reason=f"worst-case error for s = 0..{top}", scheme=code.scheme,
        decoder_label=oracle.label, decoder_info=oracle.describe(), scale=scale,
        seed=opts.seed, evaluations=oracle.evaluations, curve=points)
    report.random = _random(oracle, None, opts.p, scale, opts)
    report.elapsed_s = time.perf_counter() - start
    return report


def _curve_point(oracle: Oracle, s: int, opts: AttackOptions, prev: WorstOutcome | None
                 ) -> WorstOutcome:
    top, why = _largest(oracle)
    if (prev is not None and oracle.monotone and prev.exact and top is not None
            and prev.stragglers is not None and prev.error >= top - TIE_RTOL * max(1.0, top)):
        S = pad_to(prev.stragglers, s, oracle.n)  # monotone: the maximum stays reached
        out = WorstOutcome(S, oracle.error(S), True, prev.method, 1, comb(oracle.n, s))
        out.tighten(top, why)
        return out
    starts = [] if prev is None or prev.stragglers is None else [prev.stragglers]
    return worst_outcome(oracle, s, opts, starts)


# -- threshold ------------------------------------------------------------------------------------
def threshold_outcome(oracle: Oracle, epsilon: float, opts: AttackOptions) -> ThresholdOutcome:
    """Fewest stragglers whose raw error exceeds ``epsilon`` (and the decoding limit).

    Over R/C an error must exceed epsilon by more than the decoding tolerance tol*k to count:
    errors within that resolution of epsilon are ties (err = epsilon, which does not exceed it),
    so exact ties such as a fully straggled 0/1 partition (err = 1 at epsilon = 1) are not
    decided by round-off.  For epsilon = 0 this is the usual "does not decode" test.
    """
    limit = threshold_level(epsilon, oracle.limit)
    if epsilon > 0:
        epsilon = limit
    method = opts.method
    if method == "exhaustive":
        return exhaustive.threshold(oracle, limit, max_sets=opts.max_sets,
                                    symmetry=opts.symmetry, jobs=opts.jobs,
                                    progress=opts.progress, runner=opts.runner)
    if method == "elementary":
        return _elementary(oracle, epsilon, opts)
    if method == "milp":
        from gctool.audit.milp import milp_threshold

        return milp_threshold(oracle, epsilon, resolution=opts.resolution,
                              time_limit=opts.time_limit)
    if method == "bnb":
        return _bnb_threshold(oracle, limit, opts, 0)
    if method == "greedy":
        return _greedy_threshold(oracle, limit, opts, 0)
    return _auto_threshold(oracle, epsilon, limit, opts)


def _elementary(oracle: Oracle, epsilon: float, opts: AttackOptions) -> ThresholdOutcome:
    from gctool.audit.elementary import elementary_threshold
    from gctool.audit.oracles import OptimalOracle

    if not isinstance(oracle, OptimalOracle) or epsilon != 0:
        raise InvalidInput("the elementary method gives the exact threshold (epsilon = 0) "
                           "under optimal decoding")
    return elementary_threshold(oracle, max_sets=opts.max_sets, progress=opts.progress)


def _auto_threshold(oracle: Oracle, epsilon: float, limit: float, opts: AttackOptions
                    ) -> ThresholdOutcome:
    trail: list[str] = []
    try:
        return exhaustive.threshold(oracle, limit, max_sets=opts.max_sets,
                                    symmetry=opts.symmetry, jobs=opts.jobs,
                                    progress=opts.progress, runner=opts.runner)
    except BudgetExceeded:
        trail.append("exhaustive over budget")
    lower = _affordable_sizes(oracle.n, opts.max_sets)
    if epsilon == 0 and oracle.kind == "optimal":
        from gctool.audit.elementary import cost
        from gctool.audit.oracles import OptimalOracle

        assert isinstance(oracle, OptimalOracle)
        if cost(oracle) <= opts.max_sets:
            out = _elementary(oracle, epsilon, opts)
            out.notes.insert(0, "auto: " + " -> ".join(trail + ["elementary"]))
            return out
        trail.append("elementary over budget")
    if not oracle.finite and oracle.kind in ("optimal", "fixed"):
        from gctool.audit.milp import milp_threshold

        out = milp_threshold(oracle, epsilon, resolution=opts.resolution,
                             time_limit=opts.time_limit)
        trail.append("milp")
        if out.exact:
            out.notes.insert(0, "auto: " + " -> ".join(trail))
            return out
        lower = max(lower, out.lower)
    if oracle.monotone:
        out = _bnb_threshold(oracle, limit, opts, lower)
        trail.append("bnb")
        if out.exact or out.threshold is not None:
            out.notes.insert(0, "auto: " + " -> ".join(trail))
            return out
        lower = max(lower, out.lower)
    out = _greedy_threshold(oracle, limit, opts, lower)
    out.notes.insert(0, "auto: " + " -> ".join(trail + ["greedy"]))
    return out


def _affordable_sizes(n: int, max_sets: int) -> int:
    """Sizes below this were fully enumerated by the exhaustive attempt (no set exceeded)."""
    used, t = 0, 0
    while t <= n and used + comb(n, t) <= max_sets:
        used += comb(n, t)
        t += 1
    return t


def _bnb_threshold(oracle: Oracle, limit: float, opts: AttackOptions, lower: int
                   ) -> ThresholdOutcome:
    n = oracle.n
    cap = exhaustive.column_witness(oracle, limit) if oracle.monotone else None
    top = len(cap[0]) if cap else n
    nodes, proven = 0, lower
    for t in range(lower, top + 1):
        res = bnb_mod.search(oracle, t, limit, max_nodes=opts.max_nodes, first=True)
        nodes += res.nodes
        if res.stragglers is not None:
            out = ThresholdOutcome(t, sorted(res.stragglers), res.error, proven == t, "bnb",
                                   proven, nodes, 0)
            return out
        if not res.complete:
            break
        proven = t + 1
    if cap is not None and proven >= len(cap[0]):
        return ThresholdOutcome(len(cap[0]), sorted(cap[0]), cap[1], True, "bnb", len(cap[0]),
                                nodes, 0)
    if proven > n:
        return ThresholdOutcome(None, None, None, True, "bnb", n + 1, nodes, 0)
    out = ThresholdOutcome(None, None, None, False, "bnb", proven, nodes, 0)
    if cap is not None:
        out.threshold, out.stragglers, out.error = len(cap[0]), sorted(cap[0]), cap[1]
    out.notes.append(f"branch and bound stopped at the node budget at size {proven}")
    return out


def _greedy_threshold(oracle: Oracle, limit: float, opts: AttackOptions, lower: int
                      ) -> ThresholdOutcome:
    n = oracle.n
    cap = exhaustive.column_witness(oracle, limit) if oracle.monotone else None
    top = len(cap[0]) if cap else n
    evals = 0
    for t in range(max(lower, 0), top + 1):
        g = greedy.greedy(oracle, t, seed=opts.seed, restarts=opts.restarts, stop_at=None)
        evals += g.checked
        if g.stragglers is not None and bool(oracle.fails(g.error)) and g.error > limit:
            out = ThresholdOutcome(t, g.stragglers, g.error, lower == t, "greedy", lower,
                                   evals, 0)
            out.notes.append("greedy per size: the witness is verified, smaller sizes are "
                             "not proved" if lower < t else "sizes below were proved")
            return out
    if cap is not None:
        return ThresholdOutcome(len(cap[0]), sorted(cap[0]), cap[1], lower == len(cap[0]),
                                "greedy", lower, evals, 0)
    return ThresholdOutcome(None, None, None, False, "greedy", lower, evals, 0)


def threshold(code: GradientCode, epsilon: float = 0.0, options: AttackOptions | None = None,
              **changes: Any) -> ThresholdReport:
    """The adversarial threshold: the fewest stragglers whose error exceeds ``epsilon``
    (keywords: changes to ``options``, see :class:`AttackOptions`; ``require`` or
    ``require_tolerance`` make the report fail unless the threshold is proved high enough)."""
    opts = AttackOptions.of(options, **changes)
    opts.check()
    if not (np.isfinite(epsilon) and epsilon >= 0):
        raise InvalidInput(f"epsilon must be a finite number >= 0, got {epsilon}")
    scale = _scale(code, opts.normalize)
    check_setup(code, opts.decoder)
    oracle = make_oracle(code, opts.decoder, opts.weights, opts.tol)
    if oracle.finite and epsilon != 0:
        raise InvalidInput(f"over {code.field} decoding either succeeds or fails: use epsilon = 0")
    start = time.perf_counter()
    found = threshold_outcome(oracle, epsilon * scale, opts)
    report = _threshold_report(code, oracle, found, epsilon, scale, opts)
    _apply_require(report, found, opts)
    report.elapsed_s = time.perf_counter() - start
    return report


def _threshold_report(code: GradientCode, oracle: Oracle, found: ThresholdOutcome,
                      epsilon: float, scale: float, opts: AttackOptions) -> ThresholdReport:
    t, S, err = found.threshold, found.stragglers, found.error
    if t is not None and found.exact:
        reason = (f"straggling {t} worker(s) {S} pushes the error above {epsilon:g}; "
                  f"no set of {t - 1} or fewer does")
    elif t is not None:
        reason = (f"straggling {t} worker(s) {S} pushes the error above {epsilon:g}; sets "
                  f"smaller than {found.lower} are proved not to (heuristic in between)")
    elif found.exact:
        reason = f"no straggler set pushes the error above {epsilon:g}"
    else:
        reason = f"no witness found; sets smaller than {found.lower} are proved not to exceed"
    if found.resolution is not None:
        reason += (f" (MILP resolution {found.resolution:g}: errors below it count as "
                   "decodable)")
    total = found.total or sum(comb(code.n, x) for x in range(code.n + 1))
    return ThresholdReport(
        s=t, n=code.n, k=code.k, field=str(code.field), stragglers=S,
        error=None if err is None else err / scale, raw_error=err, normalize=opts.normalize,
        decoder=oracle.kind, method=found.method, exact=found.exact, checked=found.checked,
        total=total, threshold=t, epsilon=epsilon, comparison="error > epsilon",
        reason=reason, diagnostics=_diagnostics(oracle, S), scheme=code.scheme,
        decoder_label=oracle.label, decoder_info=oracle.describe(), scale=scale,
        threshold_lower=min(found.lower, code.n + 1), threshold_upper=t,
        resolution=found.resolution, seed=opts.seed, evaluations=oracle.evaluations,
        notes=list(found.notes))


def _apply_require(report: ThresholdReport, found: ThresholdOutcome, opts: AttackOptions
                   ) -> None:
    report.require, report.require_tolerance = opts.required, opts.require_tolerance
    require = opts.required
    if require is None:
        return
    t = found.threshold
    if t is not None and t < require:
        report.require_status, report.ok = "below", False
        report.reason += f"; below the required {require}"
    elif (t is None and found.exact) or found.lower >= require or (found.exact and t is not None):
        report.require_status = "met"
    else:
        report.require_status, report.ok = "unproven", False
        report.reason += (f"; cannot prove the threshold is >= {require} (proved >= "
                          f"{found.lower}): raise the budget or use an exact method")


__all__ = ["AttackOptions", "attack", "curve", "threshold", "threshold_outcome",
           "worst_outcome"]
