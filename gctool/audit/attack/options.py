"""The options of the three attack modes (:class:`AttackOptions`, the flags of ``gctool
attack``), the names of the search methods and normalisations, and what every mode does
before it searches: refuse an oversized decoder set-up and build the error oracle."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from dataclasses import field as dc_field
from fractions import Fraction
from typing import Any, Protocol

import numpy as np

from gctool.audit import randomized
from gctool.audit.oracles import Oracle, make_oracle
from gctool.audit.oracles.optimal import setup_work
from gctool.budget import Budget
from gctool.decode import DEFAULT_TOL
from gctool.engine.sweep import Runner
from gctool.errors import InvalidInput
from gctool.model import GradientCode
from gctool.numerics import check_tol
from gctool.request import (
    ATTACK_METHODS,
    DEFAULT_MAX_NODES,
    DEFAULT_RESOLUTION,
    DEFAULT_RESTARTS,
    DEFAULT_TIME_LIMIT,
    NORMALIZATIONS,
    check_choice,
    check_int,
)

METHODS = ATTACK_METHODS
Progress = Callable[[int, int], None]

class Setting(Protocol):
    """What decides whether a search method applies: the decoder (``kind``: "optimal",
    "fixed" or "natural"), whether the code's field is finite, and the code (its number of
    targets m).  An oracle is one;
    :func:`setting` makes one before the oracle exists."""

    @property
    def kind(self) -> str: ...

    @property
    def finite(self) -> bool: ...

    @property
    def code(self) -> GradientCode: ...


@dataclass(frozen=True)
class _Setting:
    kind: str
    finite: bool
    code: GradientCode


def setting(code: GradientCode, decoder: str) -> Setting:
    """The :class:`Setting` of ``decoder`` on ``code``, before its oracle is made."""
    return _Setting(decoder, code.field.is_finite, code)


#: when each search method applies to an oracle (its code's field and its decoder) and a
#: threshold level epsilon (None: the worst case, not a threshold): the milp is a program over
#: R/C for the optimal and fixed decoders, the elementary vectors give the exact threshold T_0
#: under optimal decoding, branch and bound prunes on an error monotone in the straggler set or
#: on the quadratic form of fixed weights over R/C (:mod:`gctool.audit.bnb`).
#: ``auto`` runs a method only where it applies, and a refusal suggests only methods that apply.
APPLIES: dict[str, Callable[[Setting, float | None], bool]] = {
    "exhaustive": lambda on, epsilon: True,
    "elementary": lambda on, epsilon: on.kind == "optimal" and epsilon == 0,
    # (the optimal decoder's threshold program at a level epsilon > 0 has one target, m = 1)
    "milp": lambda on, epsilon: not on.finite and (on.kind == "fixed" or (
        on.kind == "optimal" and not (epsilon and on.code.m > 1))),
    # (the optimal and natural decoders' errors are monotone, fixed weights' are not)
    "bnb": lambda on, epsilon: on.kind != "fixed" or not on.finite,
    "greedy": lambda on, epsilon: True,
}

#: what a report's ``checked`` counts, by the method that gives the result, and what the text
#: calls it ("over C of T sets", "with C decoder evaluations"): the enumerations count the
#: distinct straggler sets they evaluated (of ``total``); the searches, and ``auto`` when what
#: it reports is no enumeration's, the decoder's evaluations of the run (``evaluations``), which
#: may repeat a set and outnumber ``total``.  A search's own count is of another kind (branch and
#: bound's nodes, the MILP's solves: an outcome's ``checked``, which its notes report).
CHECKED: dict[str, str] = {
    "exhaustive": "set", "elementary": "set",
    "greedy": "decoder evaluation", "bnb": "decoder evaluation", "milp": "decoder evaluation",
    "auto": "decoder evaluation",
}


def checked_count(method: str, own: int, evaluations: int) -> int:
    """A report's ``checked`` (:data:`CHECKED`): ``own``, the straggler sets an enumeration
    evaluated, or the decoder's ``evaluations`` of the run for every other method."""
    return own if CHECKED[method] == "set" else evaluations


#: the order in which ``auto`` tries the methods of a threshold (each while it applies and fits
#: the budget)
THRESHOLD_ORDER = ("exhaustive", "elementary", "milp", "bnb", "greedy")


def applies(method: str, oracle: Setting, epsilon: float | None = None) -> bool:
    """Whether ``method`` applies to ``oracle`` (or a :class:`Setting`), for the threshold at
    level ``epsilon`` or (None) the worst case (:data:`APPLIES`)."""
    return APPLIES[method](oracle, epsilon)


def methods_after(method: str, oracle: Setting, epsilon: float | None = 0.0) -> str:
    """What a refusal of ``method`` (over its budget) suggests instead: the methods that
    ``auto`` tries after it (:data:`THRESHOLD_ORDER`) and that apply to ``oracle`` (for the
    threshold at level ``epsilon``, or None: the worst case), e.g.
    "`method`=milp, bnb or greedy" over R/C, "`method`=bnb or greedy" over GF(q)."""
    later = THRESHOLD_ORDER[THRESHOLD_ORDER.index(method) + 1:]
    return _listed([m for m in later if applies(m, oracle, epsilon)])


def methods_besides(method: str, oracle: Setting, epsilon: float | None) -> str:
    """What a refusal of ``method`` where it does not apply suggests: every other method that
    applies to ``oracle`` (for the threshold at level ``epsilon``, or None: the worst case)."""
    return _listed([m for m in THRESHOLD_ORDER if m != method and applies(m, oracle, epsilon)])


def _listed(names: list[str]) -> str:
    """"`method`=a, b or c"."""
    return "`method`=" + (names[0] if len(names) == 1
                          else f"{', '.join(names[:-1])} or {names[-1]}")


@dataclass(frozen=True)
class AttackOptions:
    """The options of :func:`attack`, :func:`threshold` and :func:`curve` (the flags of
    ``gctool attack``).  Every mode reads the decoder, the search and its ``budget``
(:class:`~gctool.budget.Budget`: work, memory and an optional cap on the straggler sets of an
exhaustive search); ``random``,
    ``p`` and ``samples`` add random-set means to the worst case and the curve; ``resolution``
    and the gate ``require`` (or ``require_tolerance`` S, the same as ``require`` S+1) belong
    to the threshold.  :meth:`of` makes one from keywords (``AttackOptions.of(method="bnb")``,
    or changes to another: ``AttackOptions.of(opts, seed=2)``)."""

    decoder: str = "optimal"  # "optimal", "fixed" or "natural"
    weights: Sequence[float] | np.ndarray | None = dc_field(
        default=None, compare=False)  # fixed decoder: one weight per worker (or rows)
    normalize: str = "none"  # "none": raw squared error; "k": divided by k
    method: str = "auto"
    #: the decoding tolerance of real and complex codes; None: not given, the default
    #: (:attr:`tolerance`), and the API refuses one given for a code over a finite field
    tol: float | Fraction | None = None
    budget: Budget = dc_field(default_factory=Budget.default)
    #: an explicit cap on the straggler sets of an exhaustive search (None: the budget's own,
    #: by default none); it becomes the budget's ``max_sets``
    max_sets: int | None = None
    max_nodes: int = DEFAULT_MAX_NODES
    time_limit: float = DEFAULT_TIME_LIMIT
    restarts: int = DEFAULT_RESTARTS
    #: the seed of every random draw (greedy restarts, Monte-Carlo means, a frame's sampled
    #: sets); None: not given, the draws use 0 (:attr:`drawn_seed`), and an attack that draws
    #: nothing accepts it silently only then (:func:`gctool.api.attack` refuses one given)
    seed: int | None = None
    jobs: int = 1
    symmetry: bool = True
    resolution: float = DEFAULT_RESOLUTION
    random: bool = False  # mean error over uniformly random s-sets
    p: float | None = None  # mean error when each worker straggles with probability p
    #: Monte-Carlo samples of the means and of a frame's sampled sets; None: not given,
    #: :data:`~gctool.limits.DEFAULT_SAMPLES` (:attr:`sample_count`)
    samples: int | None = None
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
    def drawn_seed(self) -> int:
        """The seed the random draws use: ``seed``, or 0 when none was given."""
        return 0 if self.seed is None else self.seed

    @property
    def sample_count(self) -> int:
        """The Monte-Carlo samples: ``samples``, or the default when none was given."""
        return randomized.DEFAULT_SAMPLES if self.samples is None else self.samples

    @property
    def tolerance(self) -> float | Fraction:
        """The decoding tolerance: ``tol``, or the default when none was given."""
        return DEFAULT_TOL if self.tol is None else self.tol

    @property
    def required(self) -> int | None:
        """The threshold the gate requires (``require_tolerance`` S means S + 1)."""
        return self.require_tolerance + 1 if self.require_tolerance is not None else self.require

    def __post_init__(self) -> None:
        self.check()

    def check(self) -> None:
        """Refuse options out of range (run when the options are made; InvalidInput naming
        the parameter)."""
        check_choice("normalize", self.normalize, NORMALIZATIONS)
        check_choice("method", self.method, METHODS)
        if self.tol is not None:
            # a float, or an exact Fraction / decimal string (kept as a Fraction)
            object.__setattr__(self, "tol", check_tol(self.tol))
        if not isinstance(self.budget, Budget):
            raise InvalidInput(f"budget must be a gctool.budget.Budget, got "
                               f"{type(self.budget).__name__}", param="budget")
        for name, low in (("max_nodes", 1), ("restarts", 0), ("jobs", 0)):
            check_int(name, getattr(self, name), low)
        check_int("seed", self.seed, 0, optional=True)
        check_int("samples", self.samples, 1, optional=True)
        check_int("max_sets", self.max_sets, 1, optional=True)
        if self.max_sets is not None and self.budget.max_sets != self.max_sets:
            object.__setattr__(self, "budget", self.budget.with_(max_sets=self.max_sets))
        if not (self.time_limit > 0 and np.isfinite(self.time_limit)):
            raise InvalidInput("`time_limit` must be a positive number of seconds",
                               param="time_limit")
        if not (0 < self.resolution < np.inf):
            raise InvalidInput("`resolution` must be a positive number", param="resolution")
        for name in ("require", "require_tolerance"):
            check_int(name, getattr(self, name), 0, optional=True)
        if self.require is not None and self.require_tolerance is not None:
            raise InvalidInput("`require` and `require_tolerance` exclude each other",
                               param="require_tolerance")

    def for_search(self) -> AttackOptions:
        """Checked options of a worst-case search or curve (the threshold gate refused)."""
        self.check()
        if self.required is not None:
            raise InvalidInput("require and require_tolerance are gates on the threshold")
        return self



def scale_of(code: GradientCode, normalize: str) -> float:
    """What a report divides raw errors by: k for ``normalize="k"``, else 1."""
    return float(code.k) if normalize == "k" else 1.0


def smaller(code: GradientCode) -> str:
    """What an attack over budget suggests first: a smaller code, or for a real or complex code
    a finite-field version of it (exact table arithmetic)."""
    return "use a smaller code" + ("" if code.field.is_finite
                                   else " or a finite-field version of it")


def check_setup(code: GradientCode, decoder: str, budget: Budget) -> None:
    """Refuse, before it starts, the set-up of the optimal decoder over R/C above the work or
    memory budget (:func:`setup_work`)."""
    if decoder != "optimal" or code.field.is_finite:
        return
    n, K = code.B.shape
    what = f"the optimal decoder's set-up (n={n}, k*m={K}, {code.field}: SVDs of B)"
    budget.check_work(what, setup_work(code), f"{smaller(code)}, or raise `max_work`")
    item = np.dtype(code.field.dtype).itemsize
    budget.check_memory(what, item * (6 * n * n + 3 * n * K), smaller(code))


def oracle_for(code: GradientCode, opts: AttackOptions) -> Oracle:
    """The error oracle of ``opts.decoder`` held to ``opts.budget``, after
    :func:`check_setup`."""
    check_setup(code, opts.decoder, opts.budget)
    try:
        oracle = make_oracle(code, opts.decoder, opts.weights, opts.tolerance, opts.budget)
    except KeyboardInterrupt:  # before any search: say so, with the count
        from gctool.errors import SearchInterrupted

        raise SearchInterrupted(f"interrupted while setting up the {opts.decoder} decoder "
                                f"(n = {code.n}); 0 straggler sets checked; no verdict") from None
    return oracle
