"""What a contender of ``gctool simulate`` is (:class:`Contender`), the conditions every
contender of a run shares (:class:`Setting`) and what it did (:class:`Run`).

Each kind of contender is a subclass in its own module of this package and overrides what
differs: how a round ends (:meth:`Contender.run`), its estimated work
(:meth:`Contender.cost`), how its master turns messages into a gradient in training
(:meth:`Contender.estimator`) and the scheme-specific figures of its report row
(:meth:`Contender.figures`).  This module imports none of them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from gctool.model import GradientCode
from gctool.registry.info import SimulationTraits
from gctool.sim.stats import Intervals

if TYPE_CHECKING:
    from gctool.budget import Meter
    from gctool.sim.delays import DelayModel
    from gctool.sim.estimators import Estimator
    from gctool.sim.network import Link
    from gctool.sim.problem import Problem
    from gctool.sim.stopping import StopRule


@dataclass
class Run:
    """What one scheme did over the iterations (rounds) of a simulation."""

    durations: np.ndarray  # (iterations,)
    used: list[np.ndarray] = field(default_factory=list)  # workers the master used, per round
    exact: np.ndarray | None = None  # decoded exactly, per round
    #: sequential schemes: (job, round it was due, decoded, what was delivered)
    jobs: list[tuple[int, int, bool, Any]] = field(default_factory=list)
    deadline_misses: int = 0
    #: ErasureHead: fraction of the k partitions the decoded gradient misses, per round
    lost: np.ndarray | None = None
    #: one-step (heterogeneous) decoding: the error ||c - 1||^2 / k of the round's sum
    error: np.ndarray | None = None
    #: nested codes: the level the round decoded at (0: not exactly), per round
    levels: np.ndarray | None = None
    #: scheme-specific figures copied into the report row (e.g. CodedReduce's levels)
    info: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Setting:
    """The conditions of one run, the same for every contender: the waiting rule (``mu``:
    the authors' (1 + mu) rule; None: gctool's), the network (``link``; None: messages arrive
    when they are sent), the run's work meter and the delay draws' per-round straggler flags
    (``bernoulli``, ``markov``)."""

    mu: float | None = None
    link: Link | None = None
    meter: Meter | None = None
    flags: np.ndarray | None = None
    #: the per-worker straggling probabilities behind ``flags`` (``bernoulli``)
    worker_p: tuple[float, ...] | None = None
    #: how the report's intervals are computed (:mod:`gctool.sim.stats`)
    intervals: Intervals = field(default_factory=Intervals)
    #: the compute times (rounds, n) of the run's delay draws for per-worker loads (n,), drawn
    #: before the estimate (:meth:`Contender.cost` may read them; None: not known)
    times: Callable[[np.ndarray], np.ndarray] | None = None

    def deliver(self, ready: np.ndarray, size: float = 1.0) -> np.ndarray:
        """When messages of ``size`` gradients, ready at ``ready`` (..., messages), reach the
        master over the run's link (:func:`gctool.sim.network.arrivals`); unchanged without
        one."""
        if self.link is None:
            return ready
        from gctool.sim.network import arrivals

        return arrivals(ready, self.link, size)

    def rule(self, code: GradientCode) -> StopRule:
        """The fast decodability oracle of ``code``, charging the run's meter."""
        from gctool.sim.stopping import StopRule

        return StopRule(code, meter=self.meter)


class Contender(ABC):
    """A scheme raced by ``gctool simulate``."""

    #: how the report names this kind of contender (a label for readers, never compared)
    kind: ClassVar[str]
    #: why the authors' (1 + mu) rule does not change this contender (None: it applies)
    mu_not_applied: ClassVar[str | None] = None
    #: training decodes the sets of workers the master used by least squares (one decoder
    #: per distinct set, charged to the budget)
    decodes: ClassVar[bool] = False

    def __init__(self, name: str, n: int, loads: np.ndarray, *, s: int = 0, delay: int = 0,
                 code: GradientCode | None = None) -> None:
        self.name, self.n, self.s, self.delay, self.code = name, n, s, delay, code
        self.loads = np.asarray(loads, dtype=np.float64)
        #: what the contender is across runs whose parameters differ (the column of a sweep):
        #: its file's label, or the baseline's name without its parameters
        self.role = name

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, n={self.n}, s={self.s})"

    @property
    def load(self) -> float:
        return float(np.max(self.loads))

    @property
    def columns(self) -> int:
        """Columns of the matrix the workers' messages are combinations of (K = k m)."""
        return self.n if self.code is None else int(self.code.B.shape[1])

    def rule_name(self, mu: float | None) -> str:
        """The waiting rule this contender follows: ``"authors"`` or ``"gctool"``."""
        return "authors" if mu is not None and self.mu_not_applied is None else "gctool"

    # -- rounds ----------------------------------------------------------------------------
    @abstractmethod
    def run(self, times: np.ndarray, setting: Setting) -> Run:
        """The rounds of this contender on compute times ``times`` (rounds, n)."""

    def cost(self, rounds: int, setting: Setting) -> float:
        """Estimated work of ``rounds`` rounds (:mod:`gctool.sim.budget`): drawing and sorting
        the arrival times, and what the subclass adds."""
        from gctool.sim.budget import cell_cost

        return float(cell_cost(rounds, self.n))

    def ready(self, times: np.ndarray) -> np.ndarray | None:
        """When each message of a round is ready to send (rounds, messages), for the training
        to charge the link what the messages really carry; None: not re-timed."""
        return None

    def jobs_done(self, run: Run) -> int:
        """Jobs completed in ``run`` (one per round but for sequential schemes)."""
        return len(run.durations)

    # -- report ----------------------------------------------------------------------------
    def theory(self, delay: DelayModel, setting: Setting) -> float | None:
        """Closed-form mean time per round, when one is known."""
        return None

    def figures(self, run: Run, setting: Setting) -> dict[str, Any]:
        """Scheme-specific figures of the report row."""
        return dict(run.info)

    # -- training --------------------------------------------------------------------------
    def lazy_rule(self) -> str | None:
        """The name of the lazy-upload rule on this contender's messages (None: not lazy)."""
        return "LAGC"

    def estimator(self, problem: Problem, run: Run, lazy: float | None, sparsifier: Any,
                  seed: int) -> Estimator:
        """The master's gradient estimates in training (default: least-squares decoding of
        the code's messages)."""
        from gctool.sim.estimators import CodedEstimator

        assert self.code is not None
        return CodedEstimator(self.name, self.code, problem, lazy, sparsifier, seed)

    def steps(self, run: Run) -> list[tuple[int, int, Any]]:
        """(job, round it is applied, payload for the estimator) in application order."""
        assert run.exact is not None
        return [(t, t, (run.used[t], bool(run.exact[t]))) for t in range(len(run.durations))]


def arrival_stop(times: np.ndarray, order: np.ndarray, p: np.ndarray) -> np.ndarray:
    """The time of the p-th arrival (1-based) of every round, in ``order``."""
    R = len(times)
    return np.asarray(times[np.arange(R), order[np.arange(R), np.asarray(p) - 1]])


def authors_wait(times: np.ndarray, mu: float) -> np.ndarray:
    """The authors' wait of every round: (1 + mu) x its first arrival."""
    return np.asarray(times.min(axis=1) * (1.0 + mu))


def authors_arrived(times: np.ndarray, mu: float) -> np.ndarray:
    """The workers arrived by the authors' wait, (rounds, n) booleans: the set whose
    decodability the authors' rule asks each round."""
    return np.asarray(times <= authors_wait(times, mu)[:, None])


def distinct_sizes(sets: np.ndarray) -> np.ndarray:
    """The sizes of the distinct rows of ``sets`` (rows of booleans): the probes a rule asks,
    each decided once (:meth:`gctool.sim.stopping.StopRule.decodes_mask` caches its
    verdicts)."""
    first = np.unique(np.packbits(sets, axis=1), axis=0, return_index=True)[1]
    return np.asarray(sets[first].sum(axis=1))


def traits(code: GradientCode) -> SimulationTraits:
    """How the simulator runs files of the code's scheme (``Family.simulation``; the
    defaults for a scheme name gctool does not know)."""
    from gctool.registry import SCHEMES

    family = SCHEMES.get(code.scheme)
    return SimulationTraits() if family is None else family.simulation
