"""The approximate-code table of ``gctool bound`` (reference §6.3, §6.4, §3.3–§3.6, §4).

Every entry is an :class:`ApproxBound`: the bound's value, its statement and source, which
quantity it bounds (``lower``/``upper``/``exact``), and the code's *actual* value of that
quantity beside it, computed exactly (exhaustively, with optimal decoding) when its estimate
fits the work budget (:func:`left_out`), else ``None`` and a note that says what was not
computed, its estimate and the budget that computes it; ``actual_exact`` says how it was found
(True: exactly; False: not computed; None: no value).  ``holds`` compares the two.  The code's
T_ε comes from a :data:`ThresholdFinder`: ``gctool bound`` passes the exhaustive search of
``attack --threshold`` held to the work budget
(:func:`gctool.audit.attack.table.table_threshold`); this layer's default is
:func:`exact_threshold` within ``ACTUAL_BUDGET`` sets and ``WORK_BUDGET`` units of decoding
work (sets x survivors x k x min(survivors, k)), the search of ``kron``'s factor thresholds.

Errors are raw squared optimal-decoding errors ``min_a ||a^T B_F - 1||^2`` (reference §0.1).
These bounds are for real and complex codes; over GF(q) only the Kronecker threshold applies.

* ``error_lb_fully_straggled``: ``err_s >= #{j : supp(col j) ⊆ S}`` for any |S| = s (a fully
  straggled partition costs exactly 1); S is chosen greedily, any S gives a valid bound.
* ``mean_error_lb_uniform``: for uniformly random s-sets,
  ``E err >= Σ_j C(n - c_j, s - c_j) / C(n, s)``.
* ``iid_error_lb``: independent straggling with probability p_i (the file's ``p`` for
  ``hetero`` codes, otherwise p = s/n): ``E err >= Σ_j Π_{i holds j} p_i``.
* ``spectral_error_ub``: when every column sums to the same r ≠ 0, scaled-uniform decoding
  ``a = n/(r(n-s)) 1_F`` gives ``err <= σ*^2 n s / (r^2 (n-s))`` with
  ``σ* = ||(I - J/n) B||_2`` (σ_2(B) for bi-regular non-negative B: Glasgow–Wootters'
  adversarial proposition; for B = A/d symmetric it is Raviv et al.'s ``(λ/d)^2 ns/(n-s)``).
  Proof: ``1_F = ((n-s)/n) 1 + z`` with z ⊥ 1, ``||z||^2 = s(n-s)/n``.
* ``closed_form_worst_error``: see :mod:`gctool.bounds.closed_forms` (exact).
* ``threshold_lb`` (column-regular codes): ``T_ε >= min(n, floor(ε r^2 n / (σ*^2 n + ε r^2)) + 1)``.
* ``threshold_ub``: ``T_ε <= |S|`` for S = the holders of ⌊ε⌋ + 1 partitions (chosen greedily
  to keep S small): straggling them leaves error >= ⌊ε⌋ + 1 > ε.
* ``kron_threshold``: ``T_0(B_1 ⊗ B_2) = T_0(B_1) T_0(B_2)`` (reference §3.6), from the factor
  thresholds recorded at design time.
* ``hetero_expected_error``: ``Σ_j 1/Q_j``, the expected one-step error of a ``hetero`` code
  under its p_i (reference §4); the actual value is the general one-step formula.

T_ε is ``min{|S| : err > ε}`` (strict), ε defaulting to 0 (exact recovery fails, as in
``attack threshold``; 1 is the error of losing one partition).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from math import ceil, comb, floor, isfinite
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import numpy as np

from gctool.budget import NS_PER_S, Budget, SharedWork, computing_refusal
from gctool.engine.records import Checked
from gctool.errors import BudgetExceeded
from gctool.limits import APPROX_EXACT_SETS, DEFAULT_TOL, REL_SLACK
from gctool.model import GradientCode
from gctool.reports import Bound
from gctool.wording import counted

if TYPE_CHECKING:
    from gctool.engine.records import SetWorker
    from gctool.engine.sweep import (
        Fold,
        LexSource,
        PeakSummary,
        SumFold,
        SumSummary,
        Task,
        WorstFold,
    )
    from gctool.numerics import Tol

F = TypeVar("F", bound="Fold")

ACTUAL_BUDGET = APPROX_EXACT_SETS  # straggler sets per exactly computed actual value
WORK_BUDGET = 2e8  # and at most this many sets x (n-t) x k x min(n-t, k) (decoding work)
#: error level of the threshold rows unless given: 0 (exact recovery fails), the same default
#: as ``attack threshold``, so the rows bracket what that command computes
DEFAULT_EPSILON = 0.0


@dataclass
class ApproxBound(Bound):
    """A bound with the code's actual value of the bounded quantity beside it."""

    quantity: str = ""
    kind: str = ""  # "lower", "upper" or "exact"
    actual: float | None = None
    actual_note: str = ""
    #: how the code's value was found: True exactly (every set searched), False not (not
    #: computed, or only bracketed), None when the row has no actual value
    actual_exact: bool | None = None


# ---------------------------------------------------------------------------------------------
# exact values by enumeration (small cases)
# ---------------------------------------------------------------------------------------------
class _Errors:
    """Optimal-decoding errors of straggler sets (the SVD decoder of :mod:`gctool.decode`),
    those within the decoder's tolerance (``tol k``) reported as exactly 0; a kernel of the
    enumeration engine (:mod:`gctool.engine.sweep`)."""

    def __init__(self, code: GradientCode, tol: Any = DEFAULT_TOL) -> None:
        from gctool.decode import Decoder

        self.decoder = Decoder(code, tol)
        self.n = code.n
        self.limit = self.decoder.limit  # errors up to here decode (tol k; 0 over GF(q))

    def errors(self, S: np.ndarray) -> np.ndarray:
        from gctool.engine.enumeration import survivors_of

        err = self.decoder.evaluate(survivors_of(S, self.n)).error
        return np.where(err <= self.limit, 0.0, err)


def _run(code: GradientCode, t: int, worker: SetWorker, fold: F, kernel: _Errors) -> F:
    """Every straggler set of size t through ``worker`` into ``fold`` (the engine)."""
    from gctool.engine.sweep import rank_tasks, run_folded

    size = kernel.decoder.chunk_size(code.n - t)
    run_folded(worker, rank_tasks(comb(code.n, t), size), fold)
    return fold


def affordable(code: GradientCode, t: int, sets: int, budget: int = ACTUAL_BUDGET) -> bool:
    """Whether ``sets`` decodings of n - t survivors fit both budgets."""
    f, K = code.n - t, code.B.shape[1]
    return sets <= budget and sets * f * K * max(1, min(f, K)) <= WORK_BUDGET


@dataclass(frozen=True)
class ThresholdValue:
    """The code's T_ε beside the threshold rows: ``value`` (None: no straggler set exceeds ε,
    or not computed), ``exact`` (the search completed: the value is exact, or exactly none),
    ``note`` (why not, when not computed: the estimate and the parameter that would compute
    it), ``lower`` (proved: T_ε >= lower), ``refusal`` (the search's, when refused: the table
    words the note from it) and ``seconds`` (the search's estimate, charged to the run; when
    refused, what it spent before)."""

    value: int | None
    exact: bool
    note: str = ""
    lower: int = 0
    refusal: BudgetExceeded | None = None
    seconds: float = 0.0


#: what finds the code's T_ε for the table: (code, ε) -> :class:`ThresholdValue`
ThresholdFinder = Callable[[GradientCode, "Tol"], ThresholdValue]


@dataclass(frozen=True)
class WorstValue:
    """The code's worst error at s found by a faster search than the table's decoding of every
    set: ``value`` (None: not found), ``decodes`` (every s-set decodes: every error, so the
    mean too, is 0 in the table's terms), ``note`` (why not, when not computed), ``refusal``
    and ``seconds`` (as :class:`ThresholdValue`'s)."""

    value: float | None
    decodes: bool
    note: str = ""
    refusal: BudgetExceeded | None = None
    seconds: float = 0.0


#: what finds the code's worst error at s when the table's own decoding is above the budget:
#: (code, s) -> :class:`WorstValue`
WorstFinder = Callable[[GradientCode, int], WorstValue]
#: a finder's value and its argument (:func:`_find`)
V = TypeVar("V", ThresholdValue, WorstValue)
A = TypeVar("A")


def small_threshold(code: GradientCode, epsilon: Tol) -> ThresholdValue:
    """The table's T_ε when no finder is given: :func:`exact_threshold` within its set
    budget (``gctool bound`` passes ``attack --threshold``'s exhaustive search instead, with
    its symmetry, compiled walks and time budget)."""
    value, complete = exact_threshold(code, epsilon)
    return ThresholdValue(value, complete, "" if complete else
                          f"not computed: the search takes more than {ACTUAL_BUDGET:,} sets")


def exact_threshold(code: GradientCode, epsilon: Tol, budget: int = ACTUAL_BUDGET
                    ) -> tuple[int | None, bool]:
    """(T_ε, True) by exhaustive search, (None, True) when no set exceeds ε, or (None, False)
    when the search would take more than ``budget`` sets.  Errors at most the decoding
    tolerance ``tol k`` count as decoding, and errors within it of ε count as equal to ε (not
    above it; the tie rule of ``attack threshold``): 0/1 designs have rational errors that
    tie with round ε such as 1, and float64 round-off must not decide those ties.  The search
    is the engine's :class:`~gctool.engine.sweep.ExceedSearch` (the one ``attack threshold
    method exhaustive`` runs), here with the optimal decoder of :mod:`gctool.decode`."""
    from gctool.engine.sweep import ExceedSearch, lex_plan
    from gctool.numerics import level_tol

    kernel = _Errors(code, level_tol(DEFAULT_TOL, epsilon, code.k))  # its limit: the ε level

    def over_budget(t: int, used: int, need: int) -> str | None:
        if affordable(code, t, used + need, budget):
            return None
        return f"the exact threshold search needs more than {used + need:,} sets at size {t}"

    found = ExceedSearch(code.n, kernel, kernel.limit,
                         lex_plan(code.n, lambda t: kernel.decoder.chunk_size(code.n - t)),
                         budget=over_budget, name="exact threshold search").run()
    return found.size, found.complete


class _Once:
    """The errors of one task's sets, decoded once and handed to each worker of the task
    (:class:`_PeakAndSum`): the first ``errors(S)`` decodes, a call with the same sets again
    returns the same array."""

    def __init__(self, kernel: _Errors) -> None:
        self.kernel = kernel
        self.sets: np.ndarray | None = None
        self.values = np.empty(0)

    def errors(self, S: np.ndarray) -> np.ndarray:
        if self.sets is None or not np.array_equal(S, self.sets):
            self.sets, self.values = S, self.kernel.errors(S)
        return self.values


@dataclass
class _Both(Checked):
    """One task's summaries of :class:`~gctool.engine.sweep.PeakWorker` and
    :class:`~gctool.engine.sweep.SumWorker`."""

    index: int
    checked: int
    peak: PeakSummary
    sum: SumSummary


@dataclass
class _PeakAndSum:
    """The worst set and the sum of the errors of one task's sets, from one decoding of them:
    :class:`~gctool.engine.sweep.PeakWorker` and :class:`~gctool.engine.sweep.SumWorker` run
    on the same errors, so each summary is the one its worker gives alone."""

    source: LexSource
    kernel: _Errors
    summary_type: ClassVar[type] = _Both  # (never checkpointed: bound runs locally)

    def run(self, task: Task) -> _Both:
        from gctool.engine.sweep import PeakWorker, SumWorker

        once = _Once(self.kernel)
        peak = PeakWorker(self.source, once).run(task)
        return _Both(task[0], peak.checked, peak, SumWorker(self.source, once).run(task))


@dataclass
class _WorstAndSum:
    """:class:`~gctool.engine.sweep.WorstFold` and :class:`~gctool.engine.sweep.SumFold` of
    :class:`_PeakAndSum`'s summaries, each merged in task order as on its own."""

    worst: WorstFold
    sum: SumFold

    def merge(self, r: _Both) -> bool:
        self.sum.merge(r.sum)
        return self.worst.merge(r.peak)


def _decoding_time(code: GradientCode, sizes: range, budget: Budget) -> tuple[float, str]:
    """(seconds of one core, how) to decode every straggler set of the ``sizes`` with the
    optimal decoder: one least-squares solve each, at the decoder's calibrated time per set
    (:func:`gctool.decode.cost.decoder_set_time`, which verify and attack count for the same
    decoding), or, for one size whose estimate is within
    :data:`~gctool.budget.TIMED_SPAN` of ``budget`` (either side), the rate of
    the decoder timed on a sample of its sets (:func:`gctool.budget.probe_rate`: codes whose
    sets go to exact arithmetic decode ten times slower than the calibration says)."""
    from gctool.budget import SAMPLE_MIN, TIMED_SPAN, probe_rate
    from gctool.decode.cost import decoder_set_time
    from gctool.engine.sweep import LexSource

    n = code.n
    # in integer ns, capped where a float would overflow (2^n sets of a large n)
    work = sum(comb(n, t) * ceil(decoder_set_time(code, t)) for t in sizes)
    seconds = min(work, 10**300) / NS_PER_S
    if len(sizes) != 1 or not (budget.max_work / TIMED_SPAN <= seconds
                               <= budget.max_work * TIMED_SPAN):
        return seconds, ""
    t, kernel = sizes[0], _Errors(code)
    total, source = comb(n, t), LexSource(n, t)

    def walk(a: int, b: int) -> tuple[int, bool]:
        S, _ = source.sets((0, a, b))
        kernel.errors(S)
        return S.shape[0], False

    probed = probe_rate(walk, total, kernel.decoder.chunk_size(n - t), budget.work_ns / total,
                        least=SAMPLE_MIN)
    if probed is None:
        return seconds, ""
    return probed[0] * total / NS_PER_S, ", timed on a sample of its sets"


def _decoding(run: SharedWork, code: GradientCode, what: str, sizes: range) -> str:
    """Why the decoding of every straggler set of the ``sizes`` (``what``) is left out of
    the table: "not computed: ..." (:meth:`SharedWork.not_computed`), or "" when it fits what
    the parts of ``run`` before it left (and it is charged)."""
    left = run.left()
    seconds, how = _decoding_time(code, sizes, left)
    if seconds <= left.max_work:
        run.spend(seconds)
        return ""
    return run.not_computed(computing_refusal(what, seconds, left.max_work, how, left.used))


def _find(run: SharedWork, finder: Callable[[Budget], Callable[[GradientCode, A], V]]
          ) -> Callable[[GradientCode, A], V]:
    """``finder`` held to what the parts of ``run`` before each search left, its search
    charged (or its refusal worded, :meth:`SharedWork.not_computed`)."""
    def find(code: GradientCode, arg: A) -> V:
        found = finder(run.left())(code, arg)
        if found.refusal is not None:
            if found.seconds > 0:  # what the search spent before it was refused
                run.spend(found.seconds)
            return replace(found, note=run.not_computed(found.refusal))
        run.spend(found.seconds)
        return found

    return find


def left_out(code: GradientCode, what: str, sizes: range, budget: Budget) -> str:
    """Why the decoding of every straggler set of the ``sizes`` (``what``) is left out of the
    table: "not computed: ..." with its estimate and the budget that computes it, or "" when
    it fits ``budget`` (a run of this part alone, :func:`_decoding`)."""
    return _decoding(SharedWork(budget), code, what, sizes)


def _worst_and_mean(code: GradientCode, s: int
                    ) -> tuple[float | None, list[int] | None, float | None]:
    """Worst error of s stragglers, its (lexicographically first) set and the mean error;
    one decoding of every set serves both (:func:`left_out` says whether it fits)."""
    from gctool.engine.sweep import LexSource, SumFold, WorstFold

    total = comb(code.n, s)
    kernel = _Errors(code)
    both = _run(code, s, _PeakAndSum(LexSource(code.n, s), kernel),
                _WorstAndSum(WorstFold(), SumFold()), kernel)
    return float(both.worst.error), both.worst.stragglers, both.sum.total / total


def _iid_expectation(code: GradientCode, p: np.ndarray) -> float | None:
    """Expected error under independent straggling with probabilities p_i (every set; sets
    of weight 0 skipped)."""
    from gctool.engine.sweep import LexSource, SumFold, SumWorker

    kernel = _Errors(code)
    return float(sum(_run(code, t, SumWorker(LexSource(code.n, t), kernel, p), SumFold(),
                          kernel).total for t in range(code.n + 1)))


# ---------------------------------------------------------------------------------------------
# the individual bounds
# ---------------------------------------------------------------------------------------------
def bound_entry(name: str, value: float | None, statement: str, source: str, quantity: str,
                kind: str, actual: float | None, note: str = "") -> ApproxBound:
    """One row of the table; ``holds`` compares the code's ``actual`` value with ``value``
    (a ``lower``, ``upper`` or ``exact`` bound, relative slack 1e-7); ``actual_exact`` is
    True when there is an actual value (found exactly), None when not."""
    holds = None
    if actual is not None and value is not None:
        slack = 1e-7 * max(1.0, abs(value))
        holds = {"lower": actual >= value - slack, "upper": actual <= value + slack,
                 "exact": abs(actual - value) <= slack}[kind]
    shown = ("n/a (too many straggler sets to compute exactly)" if actual is None
             else f"{actual:.6g}")
    return ApproxBound(name, value, f"{statement}; code: {note or shown}", source, holds,
                       quantity, kind, actual, note, True if actual is not None else None)


def greedy_cover(support: np.ndarray, s: int) -> int:
    """Partitions whose holders all fit in a greedily grown straggler set of size <= s."""
    S: set[int] = set()
    covered = 0
    holders = [set(np.flatnonzero(col).tolist()) for col in support.T]
    done = np.zeros(len(holders), dtype=bool)
    while True:
        cost = [len(h - S) if not done[j] else np.inf for j, h in enumerate(holders)]
        j = int(np.argmin(cost))
        if done[j] or len(S) + cost[j] > s:
            return covered
        S |= holders[j]
        for jj, h in enumerate(holders):
            if not done[jj] and h <= S:
                done[jj] = True
                covered += 1


def column_regular(code: GradientCode) -> tuple[float, float] | None:
    """(|r|, σ*) when every column of B sums to the same r ≠ 0; σ* = ||(I - J/n) B||_2."""
    B = np.asarray(code.B)
    top = float(np.abs(B).max()) if B.size else 0.0
    if not 0.0 < top < np.inf:
        return None
    unit = 2.0 ** np.frexp(top)[1]  # exact power-of-two scaling: sums of 1e308s cannot overflow
    B = B / unit
    cols = B.sum(axis=0)
    scale = max(1.0 / unit, float(np.abs(B).max()))
    if abs(cols[0]) < 1e-12 * scale or not np.allclose(cols, cols[0], rtol=0,
                                                       atol=REL_SLACK * scale):
        return None
    centred = B - B.mean(axis=0, keepdims=True)
    r, sigma = float(abs(cols[0])) * unit, (spectral_norm(centred) if code.n > 1 else 0.0) * unit
    return (r, sigma) if np.isfinite(r) and np.isfinite(sigma) else None


def spectral_norm(M: np.ndarray) -> float:
    """Largest singular value: dense SVD for small matrices, ARPACK (tol 1e-12) otherwise."""
    if min(M.shape) <= 400:
        return float(np.linalg.norm(M, 2))
    from scipy.sparse.linalg import svds

    return float(svds(M, k=1, tol=1e-12, return_singular_vectors=False)[0])


def _is_symmetric(code: GradientCode) -> bool:
    """B = B^T (then σ* is the largest |eigenvalue| on 1^⊥: Raviv's λ/d for B = A/d)."""
    B = np.asarray(code.B)
    return B.shape[0] == B.shape[1] and bool(np.allclose(B, B.T, rtol=0, atol=1e-12))


def _error_bounds(code: GradientCode, s: int, worst: float | None, mean: float | None,  # noqa: PLR0913 (the rows' inputs)
                  reg: tuple[float, float] | None, notes: tuple[str, str], run: SharedWork
                  ) -> list[ApproxBound]:
    """The error rows at s (``notes``: why the worst and why the mean are left out, or "")."""
    n, support = code.n, code.support
    c = support.sum(axis=0)
    cover = greedy_cover(support, s)
    out = [
        bound_entry("error_lb_fully_straggled", float(cover),
               f"worst error at s = {s} >= partitions whose holders all straggle "
               f"(greedy S): {cover}",
               "[D] reference §6.3 (a fully straggled partition costs exactly 1)",
               f"worst error, s = {s}", "lower", worst, notes[0]),
        bound_entry("mean_error_lb_uniform",
               float(sum(comb(n - int(cj), s - int(cj)) for cj in c if cj <= s) / comb(n, s)),
               f"mean error over uniform {s}-sets >= sum_j C(n-c_j, s-c_j)/C(n,s)",
               "[D] reference §6.3", f"mean error, uniform s = {s}", "lower", mean, notes[1]),
    ]
    from gctool.registry import SCHEMES

    family = SCHEMES.get(code.scheme)
    p_rec = None if family is None else family.worker_probabilities(code)
    p = np.asarray(p_rec, dtype=float) if p_rec is not None else np.full(n, s / n)
    if p.shape == (n,) and np.any(p > 0):
        label = "the file's p_i" if p_rec is not None else f"p = s/n = {s / n:g}"
        value = float(sum(np.prod(p[support[:, j]]) for j in range(code.k)))
        iid = _decoding(run, code, f"decoding every straggler set of every size (2^{n} sets)",
                        range(n + 1))
        out.append(bound_entry("iid_error_lb", value,
                          f"expected error, independent straggling with {label}, >= "
                          f"sum_j prod_(i holds j) p_i = {value:.6g}",
                          "[D] reference §6.3", f"expected error, iid ({label})", "lower",
                          None if iid else _iid_expectation(code, p), iid))
    return out + _spectral(code, s, worst, reg, notes[0])


def _spectral(code: GradientCode, s: int, worst: float | None,
              reg: tuple[float, float] | None, note: str) -> list[ApproxBound]:
    """The spectral row, from ``reg = column_regular(code)``."""
    if reg is None:
        return []
    r, sigma = reg
    n = code.n
    value = sigma**2 * n * s / (r**2 * (n - s))
    from gctool.registry import SCHEMES

    family = SCHEMES.get(code.scheme)
    own = None if family is None else family.symmetric_spectral_bound
    if own is not None and _is_symmetric(code):
        name, src = own
    else:
        name, src = "bi-regular sigma_2^2 bound", "Glasgow-Wootters 2021 (adversarial prop.); §3.3c"
    return [bound_entry("spectral_error_ub", value,
                   f"worst error at s = {s} <= {name} = sigma*^2 ns/(r^2(n-s)) = {value:.6g} "
                   f"(sigma*^2 = {sigma**2:.6g}, r = {r:g})", src, f"worst error, s = {s}",
                   "upper", worst, note)]


def _closed_form(code: GradientCode, s: int, worst: float | None, note: str
                 ) -> list[ApproxBound]:
    from gctool.bounds.closed_forms import closed_form_worst_error

    found = closed_form_worst_error(code, s)
    if found is None:
        return []
    value, src = found
    return [bound_entry("closed_form_worst_error", value,
                   f"worst error at s = {s} = {value:.6g} (closed form)", src,
                   f"worst error, s = {s}", "exact", worst, note)]


def _threshold_bounds(code: GradientCode, epsilon: Tol, reg: tuple[float, float] | None,
                      find: ThresholdFinder) -> list[ApproxBound]:
    """The T_ε rows, the lower one from ``reg = column_regular(code)``, beside the code's T_ε
    from ``find`` (asked once, when a row is shown) at ``epsilon`` as typed (exact)."""
    n, rows = code.n, []
    r, sigma = reg if reg is not None else (0.0, 0.0)
    eps = float(epsilon)  # the formula's row is computed in float64 from float64 sigma*, r
    denom = sigma**2 * n + eps * r**2
    ratio = eps * r**2 * n / denom if denom else 0.0
    if reg is not None and isfinite(ratio):  # entries near 1e308 overflow to inf/NaN: no bound
        value = n if not denom else min(n, floor(ratio) + 1)
        rows.append(("threshold_lb", float(value),
                     f"T_eps >= min(n, floor(eps r^2 n/(sigma*^2 n + eps r^2)) + 1) = {value}",
                     "[D] reconstruction of Kadhe et al. 2019; reference §6.4", "lower"))
    # t dead partitions cost at least t, which exceeds eps when t is above the level
    # eps + tol * k exactly (an eps just below an integer by less than tol * k does not make
    # that integer exceed it)
    from gctool.numerics import exact_limit, typed

    t = floor(typed(epsilon) + exact_limit(code.k, DEFAULT_TOL)) + 1
    if t <= code.k:
        size = _cover_columns(code.support, t)
        rows.append(("threshold_ub", float(size),
                     f"T_eps <= {size}: straggle every holder of {counted(t, 'partition')}",
                     "[D] reference §6.4", "upper"))
    if not rows:
        return []
    found = find(code, epsilon)
    quantity = f"threshold T_eps, eps = {eps:g}"
    return [threshold_entry(name, value, statement, source, quantity, kind, found, eps)
            for name, value, statement, source, kind in rows]


def threshold_entry(name: str, value: float, statement: str, source: str, quantity: str,  # noqa: PLR0913 (a row's fields)
                    kind: str, found: ThresholdValue, epsilon: float) -> ApproxBound:
    """A row on the code's T_ε: ``found`` beside ``value`` (:func:`bound_entry`), labelled
    exact, or not computed with its note."""
    actual = None if found.value is None else float(found.value)
    note = found.note
    if found.exact:
        note = (f"none (no straggler set pushes the error above {epsilon:g})"
                if found.value is None else f"{found.value} (exact)")
    elif found.lower > 0:
        note += f"; proved T_eps >= {found.lower}"
    return replace(bound_entry(name, value, statement, source, quantity, kind, actual, note),
                   actual_exact=found.exact)


def _once(find: ThresholdFinder) -> ThresholdFinder:
    """``find`` asked once per code and ε (the family's rows and the table's ask alike)."""
    seen: dict[tuple[int, Tol], ThresholdValue] = {}

    def once(code: GradientCode, epsilon: Tol) -> ThresholdValue:
        key = (id(code), epsilon)
        if key not in seen:
            seen[key] = find(code, epsilon)
        return seen[key]

    return once


def _cover_columns(support: np.ndarray, t: int) -> int:
    """Size of a small union of the holder sets of t columns (greedy)."""
    S: set[int] = set()
    holders = [set(np.flatnonzero(col).tolist()) for col in support.T]
    used: set[int] = set()
    for _ in range(t):
        j = min((jj for jj in range(len(holders)) if jj not in used),
                key=lambda jj: (len(holders[jj] - S), jj))
        used.add(j)
        S |= holders[j]
    return len(S)


def _family(code: GradientCode, threshold: ThresholdFinder) -> list[ApproxBound]:
    """The rows of the scheme's own closed forms (``Family.closed_forms``; ``threshold`` finds
    the code's T_ε beside them)."""
    from gctool.registry import SCHEMES

    family = SCHEMES.get(code.scheme)
    return [] if family is None else list(family.closed_forms(code, threshold))


def _small(budget: Budget) -> ThresholdFinder:
    """:func:`small_threshold`, whatever the budget (it counts sets)."""
    return small_threshold


def approx_bounds(code: GradientCode, s: int, epsilon: Tol | None = None,  # noqa: PLR0913 (the table's inputs and its two finders)
                  threshold: Callable[[Budget], ThresholdFinder] | None = None,
                  budget: Budget | None = None,
                  worst: Callable[[Budget], WorstFinder] | None = None,
                  spent: float = 0.0) -> list[ApproxBound]:
    """The table for ``code`` at s stragglers and threshold level ε (default 0), within
    ``budget`` (default :meth:`Budget.default`) shared by its parts (:class:`SharedWork`;
    ``spent``: the seconds the run's parts before the table were estimated at).  The code's
    T_ε from the finder ``threshold`` makes for a budget (default :func:`small_threshold`);
    the code's errors at s from one decoding of every s-set when its estimate fits, else the
    worst from ``worst``'s finder (when given; when it finds that every s-set decodes, the
    mean is 0 too)."""
    # kept as typed: the code's T_eps is decided against the exact level (a Fraction 1/3 is
    # not its float), and floor(eps) of "2.99999999999999999" is 2
    from gctool.numerics import check_tol

    eps = DEFAULT_EPSILON if epsilon is None else check_tol(epsilon, "epsilon")
    if not 0 <= s < code.n:
        return []
    run = SharedWork(Budget.default() if budget is None else budget, spent)
    find = _once(_find(run, threshold or _small))
    out = _family(code, find)
    if code.field.is_finite or code.m != 1:
        return out
    note = _decoding(run, code, f"decoding every straggler set of size {s} "
                     f"({comb(code.n, s):,} sets)", range(s, s + 1))
    worst_s, _, mean = (None, None, None) if note else _worst_and_mean(code, s)
    notes = (note, note)
    if note and worst is not None:
        found = _find(run, worst)(code, s)
        worst_s, notes = found.value, (found.note, note)
        if found.decodes:
            mean, notes = 0.0, ("", "")
    reg = column_regular(code)  # (|r|, σ*): the spectral and the T_ε lower bound rows
    return (_error_bounds(code, s, worst_s, mean, reg, notes, run)
            + _closed_form(code, s, worst_s, notes[0]) + out
            + _threshold_bounds(code, eps, reg, find))
