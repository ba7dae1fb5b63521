"""The options of the three attack modes (:class:`AttackOptions`, the flags of ``gctool
attack``), the names of the search methods and normalisations, and what every mode does
before it searches: refuse an oversized decoder set-up and build the error oracle."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from dataclasses import field as dc_field
from typing import Any

import numpy as np

from gctool.audit import randomized
from gctool.audit.checks import ATTACK_REFUSALS, Refusals
from gctool.audit.oracles import Oracle, make_oracle
from gctool.decode import DEFAULT_TOL
from gctool.engine.sweep import Runner
from gctool.errors import InvalidInput
from gctool.limits import DEFAULT_MAX_SETS
from gctool.model import GradientCode
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
    restarts: int = DEFAULT_RESTARTS
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
    #: how refusals name the command that asked and its options (``gctool attack``'s by
    #: default; ``gctool show`` passes its own)
    refusals: Refusals = dc_field(default=ATTACK_REFUSALS, compare=False)

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

    def __post_init__(self) -> None:
        self.check()

    def check(self) -> None:
        """Refuse options out of range (run when the options are made; InvalidInput naming
        the parameter)."""
        check_choice("normalize", self.normalize, NORMALIZATIONS)
        check_choice("method", self.method, METHODS)
        for name, low in (("max_sets", 1), ("max_nodes", 1), ("restarts", 0), ("jobs", 0)):
            check_int(name, getattr(self, name), low)
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


def check_setup(code: GradientCode, decoder: str, refusals: Refusals = ATTACK_REFUSALS) -> None:
    """Refuse, before it starts, the set-up of the optimal decoder over R/C above the work or
    memory budget: one SVD of B (K x n), one of its n x n complement, and the n x n
    projectors H and N (:class:`gctool.audit.oracles.OptimalOracle`)."""
    if decoder != "optimal" or code.field.is_finite:
        return
    from gctool.limits import check_memory, check_work, solve_cost

    n, K = code.B.shape
    r = min(n, K)
    what = (f"{refusals.name('attack')} (n={n}, k*m={K}, {code.field}): the optimal decoder's "
            "set-up (SVDs of B)")
    check_work(what, solve_cost(K, n) + n**3 + 2 * n * n * r, refusals.remedy("work", code))
    item = np.dtype(code.field.dtype).itemsize
    check_memory(what, item * (6 * n * n + 3 * n * K), refusals.remedy("memory", code))


def oracle_for(code: GradientCode, opts: AttackOptions) -> Oracle:
    """The error oracle of ``opts.decoder``, after :func:`check_setup`; its refusals are worded
    by ``opts.refusals``."""
    check_setup(code, opts.decoder, opts.refusals)
    try:
        oracle = make_oracle(code, opts.decoder, opts.weights, opts.tol)
    except KeyboardInterrupt:  # before any search: say so, with the count
        from gctool.errors import SearchInterrupted

        raise SearchInterrupted(f"interrupted while setting up the {opts.decoder} decoder "
                                f"(n = {code.n}); 0 straggler sets checked; no verdict") from None
    oracle.refusals = opts.refusals
    return oracle
