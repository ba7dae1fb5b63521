"""Worst-case condition number of the decoding systems of a real or complex design.

For survivors F the master solves ``a^T B_F = targets``; its sensitivity is measured by
``cond(B_F) = sigma_max / sigma_min`` of the row-normalised B_F on its numerical rank
(:func:`gctool.numerics.normalise_rows`, :func:`gctool.numerics.numerical_rank`), the quantity
the verifier's diagnostics report and the one float64 decoding depends on, so the numbers are
the same as ``gctool verify``'s.  (B_F may be rank-deficient and still decode,
e.g. ``rs`` codes whose mask repeats a column support.)

``design`` records the worst value over every straggler set of size s when that is cheap (at
most ``EXACT_LIMIT`` sets and ``EXACT_WORK`` multiply-adds, or set classes for cyclic codes, whose
rotations have the same singular values; the value at the worst set is the direct decoder's
float, the one ``gctool verify`` reports for it).  Otherwise it *screens* every set with
``gctool verify``'s own enumeration (:func:`_verified`: the matrix verify, given from above by
:func:`screened_by`, on the jobs of :func:`screen_jobs`) when its estimate fits what the run's
budget left, with the bound it proves (``condition_bound``; the nullspace kernel's
``kappa(B) / sigma_s(N_S)``, CS decomposition, :mod:`gctool.audit.nullspace`).  Verify's
figure is exact when its screen re-evaluated every set it did not decide directly; else it is
the worst of the weakest sets only, a *lower bound* (its ``max_condition_kind``), and the record
computes the exact worst over every set as verify's ``strict`` gate does
(:func:`gctool.gates.settle_condition`: :func:`worst_set`) when the budget admits it, or keeps
verify's figure labelled a lower bound.  Above the budget (or without a verify) the record is an
*estimate*: the maximum over the s-blocks of consecutive workers (clustered missing nodes are
the bad cases of Vandermonde-type codes) plus pseudo-random sets (fixed seed 0, so the estimate is
reproducible), also a lower bound on the true worst case.  The record labels it
(:meth:`Worst.params`: ``worst_condition_kind`` exact, lower bound or estimate,
``worst_condition_sets``) and the CLI says so on stderr when it is not exact
(:func:`estimate_note`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from math import comb
from typing import Any

import numpy as np

from gctool.algebra.fields import Field
from gctool.algebra.spectral import Spectral
from gctool.budget import Budget, format_count
from gctool.limits import CONDITION_EXACT_SETS
from gctool.numerics import condition, normalise_rows, numerical_rank
from gctool.reports import LOWER_BOUND

EXACT_LIMIT = CONDITION_EXACT_SETS  # straggler sets evaluated for an exact worst case
# work caps in multiply-adds, the unit of gctool.budget.solve_cost (about 1 ns each, one core)
EXACT_WORK = 2e9  # ... and multiply-adds spent on it (sum of SVD costs), else an estimate
WORK_LIMIT = 5e7  # multiply-adds spent on an estimate (sum of SVD costs; at least 8 sets ...)
ESTIMATE_MAX_WORK = 1e9  # ... unless 8 sets cost more than this: then fewer, or none at all
NOT_ESTIMATED = "not estimated"
CHUNK = 2048  # straggler sets per batch of SVDs


def _set_time(f: int, cols: int, complex_: bool) -> float:
    """One straggler set's cond(B_F) in a batch (:class:`ConditionKernel`: the singular
    values of f x cols, without vectors), in ns (measured 0.56-1.4x of this, real f x cols
    = 6 x 10 to 60 x 60; one 850 x 1000 set, 1.3x)."""
    from gctool.budget import VALUES_ONLY
    from gctool.decode.cost import svd_time

    return svd_time(f, cols, complex_) / VALUES_ONLY


def _check(budget: Budget | None, what: str, work: float, jobs: int = 1,
           fixed: float = 0.0) -> None:
    """Refuse a step of the record above what the budget leaves (a design's parts share it:
    :meth:`gctool.family.Family.design`), before it starts (``jobs``, ``fixed``: as
    :meth:`~gctool.budget.Budget.check_work`'s)."""
    (Budget.default() if budget is None else budget).check_work(
        f"the conditioning record of the design ({what})", work,
        "use a smaller n or s, a finite field (`field`=auto), or raise `max_work`", jobs, fixed)


class ConditionKernel:
    """cond(B_F) of the row-normalised B_F on its numerical rank, per straggler set (inf when
    B_F is 0); a kernel of the enumeration engine (:class:`gctool.engine.sweep.PeakWorker`
    folds its largest value)."""

    def __init__(self, B: np.ndarray, vectors: bool = False) -> None:
        self.B = normalise_rows(B)[0]  # rows of B_F are rows of B: B_F normalised is (D B)_F
        #: the SVD with its vectors, as the direct decoder factors B_F (gctool.decode.Decoder):
        #: the same floats as verify's (without them: faster, equal to round-off)
        self.vectors = vectors

    def errors(self, S: np.ndarray) -> np.ndarray:
        from gctool.engine.enumeration import survivors_of

        F = survivors_of(S, self.B.shape[0])
        out = []
        for start in range(0, F.shape[0], CHUNK):
            BF = self.B[F[start:start + CHUNK]]
            sv = (np.linalg.svd(BF, full_matrices=False)[1] if self.vectors
                  else np.linalg.svd(BF, compute_uv=False))
            out.append(condition(sv, numerical_rank(sv, BF.shape)))
        return np.concatenate(out) if out else np.zeros(0)


def _worst_enumerated(B: np.ndarray, s: int, count: int) -> float:
    """Largest cond(B_F) over the first ``count`` straggler sets of size s in lexicographic
    order (all of them, or the C(n-1, s-1) sets containing worker 0): :func:`worst_set`'s."""
    return worst_set(B, s, count)[0]


def worst_set(B: np.ndarray, s: int, count: int | None = None
              ) -> tuple[float, list[int] | None]:
    """(largest cond(B_F), its straggler set) over the first ``count`` (default: all C(n, s))
    straggler sets of size s in lexicographic order, the value at the worst set by the direct
    decoder's SVD (the float ``gctool verify`` reports for that set); the exact worst case
    that verify's ``max_condition``/``strict`` gates compute when its screen only bounds it
    (:mod:`gctool.gates`).  Its cost: :func:`worst_set_time`."""
    from gctool.engine.sweep import LexSource, PeakWorker, WorstFold, rank_tasks, run_folded

    count = comb(B.shape[0], s) if count is None else count
    fold = WorstFold()
    worker = PeakWorker(LexSource(B.shape[0], s), ConditionKernel(B))
    run_folded(worker, rank_tasks(count, CHUNK), fold)
    if fold.stragglers is None or not np.isfinite(fold.error):
        return fold.error, None if fold.stragglers is None else list(fold.stragglers)
    worst = np.array([fold.stragglers], dtype=np.intp)
    return float(ConditionKernel(B, vectors=True).errors(worst)[0]), list(fold.stragglers)


def worst_set_time(B: np.ndarray, s: int, count: int | None = None) -> float:
    """The estimated time of :func:`worst_set` (ns of one core)."""
    n, cols = B.shape
    count = comb(n, s) if count is None else count
    return count * _set_time(n - s, cols, bool(np.iscomplexobj(B)))


def _sample(n: int, s: int, n_blocks: int, count: int) -> np.ndarray:
    starts = np.unique(np.linspace(0, n, num=min(n, n_blocks), endpoint=False).astype(int))
    blocks = np.array([[(i + t) % n for t in range(s)] for i in starts], dtype=np.intp)
    rng = np.random.default_rng(0)
    rand = np.array([np.sort(rng.choice(n, s, replace=False)) for _ in range(count)],
                    dtype=np.intp).reshape(count, s)
    return np.concatenate([blocks, rand])


#: jobs of the screen of every set in this context (verify's ``jobs``, :func:`screen_jobs`; 0
#: or None: every core)
_JOBS: ContextVar[int | None] = ContextVar("gctool_screen_jobs", default=1)


#: the matrix verify that screens every straggler set in this context (``(code, request) ->
#: report``: :func:`gctool.family.matrix_verify`, set by :meth:`gctool.family.Family.design`
#: through :func:`screened_by`, since the constructions sit below the audits); None: no
#: screen, so beyond the exact enumeration the record is an estimate
_VERIFY: ContextVar[Callable[[Any, Any], Any] | None] = ContextVar("gctool_screen_verify",
                                                                   default=None)


@contextmanager
def screened_by(verify: Callable[[Any, Any], Any] | None) -> Iterator[None]:
    """Screen every straggler set of the records made inside with ``verify`` (the matrix
    verify, :func:`_verified`)."""
    token = _VERIFY.set(verify)
    try:
        yield
    finally:
        _VERIFY.reset(token)


@contextmanager
def screen_jobs(jobs: int | None) -> Iterator[None]:
    """Run the screens inside (verify's enumeration, :func:`_verified`) on ``jobs`` (0 or
    None: every core).  :meth:`gctool.family.Family.design` wraps a design's construction and
    self-check in it, so the screens of every scheme (recorded by the construction, by
    ``best_of`` or by the self-check) use the design's ``jobs``; the records do not depend on
    it (verify's do not), unless the budget admits the screen on some jobs only."""
    token = _JOBS.set(jobs)
    try:
        yield
    finally:
        _JOBS.reset(token)


@dataclass(frozen=True)
class Worst:
    """A design's worst-case condition record: the figure (None: infinite, or not estimated),
    how it was obtained, a proved upper bound (or None), how many of the ``total``
    straggler sets of size s it covers (``screened``: all of them, or a sample), and whether
    the figure is the worst of some of the sets it covers only (``lower``: verify's screen
    without the exact worst)."""

    value: float | None
    method: str
    bound: float | None
    screened: int
    total: int
    lower: bool = False

    @property
    def kind(self) -> str:
        """``exact``: the worst over every straggler set (directly, by rotation, or verify's
        figure made exact: ``gctool verify --strict``'s); :data:`LOWER_BOUND`: every set
        screened, the worst of the weakest only; ``estimate``: the worst of a sample (also a
        lower bound)."""
        if self.screened < self.total:
            return "estimate"
        return LOWER_BOUND if self.lower else "exact"

    @property
    def exact(self) -> bool:
        """The figure is the worst over every straggler set."""
        return self.kind == "exact"

    def params(self) -> dict[str, Any]:
        """The label the file records beside ``worst_condition``."""
        return {"worst_condition_kind": self.kind,
                "worst_condition_sets": [self.screened, self.total]}


#: the last results of :func:`worst_case` (a seeded design made again, ``best_of`` prefixes)
_SEEN: dict[tuple[Any, ...], Worst] = {}
_SEEN_MAX = 32


def conditioning(B: np.ndarray, s: int, cyclic: bool = False, budget: Budget | None = None,
                 m: int = 1) -> tuple[float | None, str, float | None]:
    """(worst cond(B_F) over straggler sets of size s or a lower bound on it, how it was
    obtained, a proved upper bound or None): :func:`worst_case`'s."""
    w = worst_case(B, s, cyclic, budget, m)
    return w.value, w.method, w.bound


def worst_case(B: np.ndarray, s: int, cyclic: bool = False, budget: Budget | None = None,
               m: int = 1) -> Worst:
    """The worst cond(B_F) over the straggler sets of size s of B (``m`` pieces per partition:
    the targets verify decodes), or a lower bound on it (:class:`Worst` says which); each step
    is checked against ``budget`` (default :meth:`Budget.default`) before it starts (refused:
    :class:`~gctool.errors.BudgetExceeded`; a result already made in this process costs
    nothing)."""
    import hashlib

    B = np.ascontiguousarray(B)
    key = (B.shape, B.dtype.str, s, cyclic, m, hashlib.sha256(B.tobytes()).hexdigest())
    if key not in _SEEN:
        if len(_SEEN) >= _SEEN_MAX:
            _SEEN.pop(next(iter(_SEEN)))
        _SEEN[key] = _conditioning(B, s, cyclic, budget, m)
    return _SEEN[key]


def _finite(value: float | None) -> float | None:
    return value if value is not None and np.isfinite(value) else None


def _conditioning(B: np.ndarray, s: int, cyclic: bool, budget: Budget | None, m: int = 1
                  ) -> Worst:
    from gctool.budget import solve_cost

    n, cols = B.shape
    cx = bool(np.iscomplexobj(B))
    svd = f"the SVD of B ({n} x {cols})"
    if s == 0:  # one system, B itself (on its numerical rank, as for every B_F)
        _check(budget, svd, solve_cost(n, cols))
        return Worst(_finite(Spectral.of(B).kappa), "exact (no stragglers)", None, 1, 1)
    total = comb(n - 1, s - 1) if cyclic else comb(n, s)
    f = n - s
    per_set = f * cols * min(f, cols)
    if total <= EXACT_LIMIT and total * per_set <= EXACT_WORK:
        _check(budget, f"cond(B_F) of {total:,} straggler sets", total * _set_time(f, cols, cx))
        value = _worst_enumerated(B, s, total)  # sets containing 0 come first in lex order
        what = "straggler sets containing worker 0 (rotations have equal conditioning)" \
            if cyclic else "straggler sets"
        method = f"exact: maximum over all {total:,} {what}"
        return Worst(_finite(value), method, None, comb(n, s), comb(n, s))
    verified = _verified(B, s, m, budget)
    if verified is not None:
        return verified
    count = int(min(512, max(8, WORK_LIMIT // max(per_set, 1))))  # the sample's sets
    count = int(min(count, ESTIMATE_MAX_WORK // max(per_set, 1)))
    if count == 0:  # one SVD alone is above the cap (n near 4096): say so, fast
        return Worst(None, (f"{NOT_ESTIMATED}: one decoding system ({f} x {cols}) costs about "
                            f"{per_set:.2g} multiply-adds, above the design cap of "
                            f"{ESTIMATE_MAX_WORK:.2g}; 'gctool verify' reports conditioning"),
                     None, 0, comb(n, s))
    S = _sample(n, s, max(1, count // 2), count - max(1, count // 2))
    _check(budget, f"cond(B_F) of {S.shape[0]:,} straggler sets",
           S.shape[0] * _set_time(f, cols, cx))
    value = float(np.max(ConditionKernel(B).errors(S)))
    where = " containing worker 0" if cyclic else ""
    method = (f"estimate (lower bound): maximum over {S.shape[0]:,} of the {format_count(total)} "
              f"straggler sets{where} (blocks of consecutive workers and seeded random sets); "
              "'gctool verify' reports the worst case")
    return Worst(_finite(value), method, None, S.shape[0], comb(n, s))


def _verified(B: np.ndarray, s: int, m: int, budget: Budget | None) -> Worst | None:
    """The worst condition that ``gctool verify`` reports for B (its enumeration of every
    straggler set of size s: the verify of :func:`screened_by`, on the jobs of
    :func:`screen_jobs`), with its proved bound, made exact as its ``strict`` gate makes it
    (:func:`gctool.gates.settle_condition`: :func:`worst_set`) when verify's is a lower bound
    and the budget admits it (else labelled a lower bound); None when no verify is given, when
    the run's budget refuses it (or float64 cannot decide some set, or verify answered without
    screening every set): the caller then estimates on a sample."""
    from gctool.algebra.fields import parse_field
    from gctool.errors import BudgetExceeded
    from gctool.exactls import Undecided
    from gctool.model import GradientCode
    from gctool.request import VerifyRequest

    verify = _VERIFY.get()
    if verify is None:
        return None
    field = parse_field("complex" if np.iscomplexobj(B) else "real")
    code = GradientCode(B, field, s, params={"m": m} if m > 1 else {})
    try:
        report = verify(code, VerifyRequest(s=s, jobs=_JOBS.get(), budget=budget))
    except (BudgetExceeded, Undecided):
        return None
    total, d = report.total, report.diagnostics
    if report.verdict == "fail" and report.counterexample is not None:
        return Worst(None, (f"exact: gctool verify finds that stragglers "
                            f"{report.counterexample} leave survivors that do not decode in "
                            "float64 (condition infinite)"), None, total, total)
    if not report.ok or report.represented < total or d is None or d.max_condition is None:
        return None
    proved = f" (proved bound {d.condition_bound:.4g})" if d.condition_bound is not None else ""
    value, bound, where = d.max_condition, d.condition_bound, d.max_condition_stragglers
    lower = d.max_condition_kind == LOWER_BOUND
    if lower:  # the worst over every set, as verify --strict computes it (gates.settle_condition)
        try:
            _check(budget, f"the exact worst condition over all {format_count(total)} straggler "
                   "sets (verify's screen only bounds it)", worst_set_time(B, s))
        except BudgetExceeded:
            pass
        else:
            exact, where = worst_set(B, s)
            if not np.isfinite(exact):
                return None
            value = bound = float(exact)
            lower = False
    head = (f"screened: every one of the {format_count(total)} straggler sets by gctool "
            f"verify's enumeration{proved}; ")
    method = head + (
        f"its worst condition, of the weakest sets re-evaluated, is at stragglers "
        f"{where}, where cond(B_F) is {value:.4g} (attained, a lower bound "
        "on the worst case; 'gctool verify' with `strict` computes the exact figure)" if lower
        else f"the worst condition over every set is at stragglers "
        f"{where}, where cond(B_F) is {value:.4g} (the figure 'gctool "
        "verify' with `strict` reports)")
    return Worst(_finite(value), method, _finite(bound), total, total, lower)


def worst_condition(B: np.ndarray, s: int, cyclic: bool = False) -> tuple[float | None, str]:
    """(worst cond(B_F) over straggler sets of size s, how it was obtained): see
    :func:`conditioning`."""
    value, method, _ = conditioning(B, s, cyclic)
    return value, method


def record(B: np.ndarray, field: Field, s: int, cyclic: bool = False,
           budget: Budget | None = None, m: int = 1) -> dict[str, Any]:
    """Params recording the worst-case condition number (real and complex designs only),
    within ``budget`` (:func:`worst_case`), with its label (:meth:`Worst.params`)."""
    if field.is_finite:
        return {}
    w = worst_case(np.asarray(B), s, cyclic, budget, m)
    method = w.method
    if w.value is None and not method.startswith((NOT_ESTIMATED, "exact: gctool verify")):
        method += "; some B_F is singular (condition infinite)"
    out: dict[str, Any] = {"worst_condition": w.value, "worst_condition_method": method,
                           **w.params()}
    if w.bound is not None:
        out["condition_bound"] = w.bound
    return out


def estimate_note(params: dict[str, Any]) -> str | None:
    """The one line that says a recorded worst condition is an estimate on a sample or a lower
    bound (None: it is exact, or none is recorded), naming verify's ``strict`` gate for the
    exact figure."""
    kind = params.get("worst_condition_kind")
    if kind not in ("estimate", LOWER_BOUND):
        return None
    screened, total = params.get("worst_condition_sets", [0, 0])
    value = params.get("worst_condition")
    figure = "not estimated" if value is None else f"{value:.3g}"
    if kind == LOWER_BOUND:
        return (f"the worst-case condition number ({figure}) is a lower bound, the worst of the "
                f"weakest of the {total:,} straggler sets (verify's screen); 'gctool verify' "
                "with `strict` computes the exact figure")
    return (f"the worst-case condition number ({figure}) is an estimate on {screened:,} of the "
            f"{total:,} straggler sets (a lower bound); 'gctool verify' with `strict` screens "
            "every set for the exact figure")
