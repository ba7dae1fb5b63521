"""Delay models of ``gctool simulate``: how long worker i takes in iteration t.

A model draws the run's randomness once (:meth:`DelayModel.draws`, iterations x workers) and
turns it into times for any vector of per-worker loads ``ℓ_i`` (fraction of one job's data the
worker computes, :meth:`DelayModel.times`).  Every scheme of a run sees the same draws (common
random numbers), so differences between schemes are not sampling noise, and worker i of a
scheme with n workers is worker i of every other scheme with at least i + 1 workers.  A model
is an immutable value: a run never changes it (:meth:`DelayModel.for_codes` returns a copy).

Synthetic models (gctool's parametrisation, times in units of "one worker computing the whole
data set"):

* ``shifted-exp:shift=a,rate=mu`` (default a = 1, mu = 1): ``T = ℓ (a + E/mu)``, E ~ Exp(1)
  (the shifted-exponential model of the coded-computing literature, scaled by the load).
* ``pareto:scale=x,shape=alpha`` (default 1, 2.5): ``T = ℓ x U^(-1/alpha)``, U ~ U(0, 1].
* ``markov:p=0.05,q=0.5,slow=10,shift=1,rate=1``: every worker has a two-state Markov chain over
  iterations (good -> bad with probability p, bad -> good with q, started from its stationary
  law p/(p+q) bad); T is the shifted exponential, times ``slow`` in the bad state.  Bursty
  stragglers: the setting of sequential gradient coding.
* ``bernoulli:slow=10,shift=1,rate=1``: heterogeneous stragglers: worker i straggles in a round
  independently with its own probability p_i (its shifted-exponential time times ``slow``).
  The p_i come from ``worker_p`` or, without it, from the first heterogeneous code file of the
  run (``params.p``); workers without a p_i never straggle.  The straggler flags are part of
  the shared draws, so every scheme sees the same stragglers.

Trace model ``trace:PATH`` replays measured times (:mod:`gctool.sim.traces`), with a load model
(:mod:`gctool.sim.loads`) that says how a worker's load changes its time.
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from gctool.errors import InvalidInput, did_you_mean
from gctool.sim.draws import Draws, SyntheticDraws

if TYPE_CHECKING:
    from gctool.model import GradientCode
    from gctool.sim.loads import LoadModel
    from gctool.sim.traces import Trace


@dataclass(frozen=True)
class DelayModel(ABC):
    """A parsed ``delay`` spec."""

    #: the model's name in ``delay`` NAME:... (parsing only)
    name: ClassVar[str] = ""
    #: parameters that must be > 0 (the others >= 0)
    positive: ClassVar[tuple[str, ...]] = ()

    @property
    @abstractmethod
    def label(self) -> str: ...

    #: unit of the times: seconds for traces, one full job for the synthetic models
    time_unit: ClassVar[str] = "job units"

    @abstractmethod
    def draws(self, iterations: int, width: int, rng: np.random.Generator) -> Draws:
        """Randomness shared by every scheme of a run."""

    @abstractmethod
    def times(self, draws: Draws, loads: np.ndarray) -> np.ndarray:
        """(iterations, n) completion times for per-worker loads (n = len(loads))."""

    def order_statistic(self, n: int, k: int, load: float) -> float | None:
        """Closed-form mean of the k-th fastest of n workers with this load, when known."""
        return None

    def for_codes(self, codes: list[tuple[str, GradientCode]]) -> DelayModel:
        """The model as it applies to a run of these files (a copy where it needs them)."""
        return self

    def straggler_probabilities(self) -> tuple[float, ...] | None:
        """The per-worker probabilities behind the draws' straggler flags, if any."""
        return None

    def sweep(self, key: str, value: float) -> DelayModel | None:
        """A copy with parameter ``key`` set to ``value``; None when it has no such one."""
        return None


@dataclass(frozen=True)
class Synthetic(DelayModel):
    """A model with numeric parameters (``name:key=value,...``)."""

    params: dict[str, float] = field(default_factory=dict)
    defaults: ClassVar[dict[str, float]] = {}

    @property
    def label(self) -> str:
        return f"{self.name}:" + ",".join(f"{k}={v:g}" for k, v in self.params.items())

    @classmethod
    def parse(cls, rest: str) -> Synthetic:
        from gctool.sim.specs import parse_pairs

        given = parse_pairs(rest, f"`delay` {cls.name}", cls.defaults,
                            f"key=value with keys {', '.join(cls.defaults)}")
        return cls({**cls.defaults, **given}).checked()

    def checked(self) -> Synthetic:
        for key, value in self.params.items():
            if not np.isfinite(value) or value < 0 or (key in self.positive and value == 0):
                raise InvalidInput(f"`delay` {self.name}: {key} must be "
                                   f"{'> 0' if key in self.positive else '>= 0'} and finite")
        return self

    def sweep(self, key: str, value: float) -> DelayModel | None:
        if key not in self.params:
            return None
        return dataclasses.replace(self, params={**self.params, key: float(value)}).checked()

    def draws(self, iterations: int, width: int, rng: np.random.Generator) -> SyntheticDraws:
        E = rng.exponential(size=(iterations, width))
        U = 1.0 - rng.random(size=(iterations, width))
        return SyntheticDraws(iterations, width, flags=self._flags(iterations, width, rng),
                              E=E, U=U)

    def _flags(self, iterations: int, width: int, rng: np.random.Generator
               ) -> np.ndarray | None:
        return None

    def times(self, draws: Draws, loads: np.ndarray) -> np.ndarray:
        """Refuses (:class:`InvalidInput`) parameters whose draws are not finite or exceed
        :data:`gctool.limits.MAX_WORKER_TIME` (a Pareto shape near 0, a huge shift), so that
        every sum and statistic of the run stays finite."""
        assert isinstance(draws, SyntheticDraws)
        ell = np.asarray(loads, dtype=np.float64)[None, :]
        with np.errstate(over="ignore"):
            t = np.asarray(self._times(draws, ell, len(loads)))
        _check_times(self.label, t)
        return t

    @abstractmethod
    def _times(self, draws: SyntheticDraws, ell: np.ndarray, n: int) -> np.ndarray: ...


@dataclass(frozen=True)
class ShiftedExp(Synthetic):
    name: ClassVar[str] = "shifted-exp"
    defaults: ClassVar[dict[str, float]] = {"shift": 1.0, "rate": 1.0}
    positive: ClassVar[tuple[str, ...]] = ("rate",)

    def _times(self, draws: SyntheticDraws, ell: np.ndarray, n: int) -> np.ndarray:
        p = self.params
        return np.asarray(ell * (p["shift"] + draws.E[:, :n] / p["rate"]))

    def order_statistic(self, n: int, k: int, load: float) -> float | None:
        H = np.sum(1.0 / np.arange(n - k + 1, n + 1))
        return float(load * (self.params["shift"] + H / self.params["rate"]))


@dataclass(frozen=True)
class Pareto(Synthetic):
    name: ClassVar[str] = "pareto"
    defaults: ClassVar[dict[str, float]] = {"scale": 1.0, "shape": 2.5}
    positive: ClassVar[tuple[str, ...]] = ("scale", "shape")

    def _times(self, draws: SyntheticDraws, ell: np.ndarray, n: int) -> np.ndarray:
        p = self.params
        return np.asarray(ell * p["scale"] * draws.U[:, :n] ** (-1.0 / p["shape"]))

    def order_statistic(self, n: int, k: int, load: float) -> float | None:
        """``E[X_(k:n)] = x Γ(n+1) Γ(n-k+1-1/α) / (Γ(n-k+1) Γ(n+1-1/α))`` (finite when
        n-k+1 > 1/α)."""
        from scipy.special import gammaln

        a = 1.0 / self.params["shape"]
        if not n - k + 1 > a:
            return None
        log = gammaln(n + 1) + gammaln(n - k + 1 - a) - gammaln(n - k + 1) - gammaln(n + 1 - a)
        return float(load * self.params["scale"] * np.exp(log))


@dataclass(frozen=True)
class Slowdowns(ShiftedExp):
    """The shifted exponential, times ``slow`` in the rounds a worker straggles (flags)."""

    def _times(self, draws: SyntheticDraws, ell: np.ndarray, n: int) -> np.ndarray:
        t = super()._times(draws, ell, n)
        assert draws.flags is not None
        return np.asarray(np.where(draws.flags[:, :n], t * self.params["slow"], t))

    def order_statistic(self, n: int, k: int, load: float) -> float | None:
        return None


@dataclass(frozen=True)
class Markov(Slowdowns):
    name: ClassVar[str] = "markov"
    defaults: ClassVar[dict[str, float]] = {"p": 0.05, "q": 0.5, "slow": 10.0, "shift": 1.0,
                                            "rate": 1.0}
    positive: ClassVar[tuple[str, ...]] = ("rate", "slow")

    def checked(self) -> Synthetic:
        super().checked()
        if not (self.params["p"] <= 1 and self.params["q"] <= 1):
            raise InvalidInput("delay model markov: p and q are probabilities (0..1)")
        return self

    def _flags(self, iterations: int, width: int, rng: np.random.Generator) -> np.ndarray:
        p, q = self.params["p"], self.params["q"]
        bad = np.empty((iterations, width), dtype=bool)
        state = rng.random(width) < (p / (p + q) if p + q > 0 else 0.0)
        for t in range(iterations):
            bad[t] = state
            u = rng.random(width)
            state = np.where(state, u >= q, u < p)
        return bad


@dataclass(frozen=True)
class Bernoulli(Slowdowns):
    name: ClassVar[str] = "bernoulli"
    defaults: ClassVar[dict[str, float]] = {"slow": 10.0, "shift": 1.0, "rate": 1.0}
    positive: ClassVar[tuple[str, ...]] = ("rate", "slow")
    #: per-worker straggling probabilities (None: taken from the run's files)
    worker_p: tuple[float, ...] | None = None

    def straggler_probabilities(self) -> tuple[float, ...] | None:
        return self.worker_p

    def with_worker_p(self, p: np.ndarray | list[float]) -> Bernoulli:
        return dataclasses.replace(self, worker_p=tuple(float(x) for x in p))

    def for_codes(self, codes: list[tuple[str, GradientCode]]) -> DelayModel:
        """The model with the per-worker probabilities of the first code whose scheme records
        them (``Family.worker_probabilities``) when ``worker_p`` gave none."""
        from gctool.registry import SCHEMES

        if self.worker_p is not None:
            return self
        for _, code in codes:
            family = SCHEMES.get(code.scheme)
            p = None if family is None else family.worker_probabilities(code)
            if p is not None:
                return self.with_worker_p(np.asarray(p, dtype=np.float64))
        raise InvalidInput("delay model bernoulli needs per-worker probabilities: "
                           "`worker_p` P1,P2,... or a heterogeneous code file")

    def _flags(self, iterations: int, width: int, rng: np.random.Generator) -> np.ndarray:
        p = np.zeros(width)
        given = np.asarray(self.worker_p or (), np.float64)
        p[: min(width, len(given))] = given[:width]
        return np.asarray(rng.random(size=(iterations, width)) < p[None, :])


@dataclass(frozen=True)
class TraceDelay(DelayModel):
    """Measured times (:mod:`gctool.sim.traces`) under a load model (:mod:`gctool.sim.loads`)."""

    trace: Trace
    load_model: LoadModel
    time_unit: ClassVar[str] = "s"

    @property
    def label(self) -> str:
        return f"trace {self.trace.label}, {self.load_model.label}"

    def draws(self, iterations: int, width: int, rng: np.random.Generator) -> Draws:
        return self.trace.draws(iterations, width, rng)

    def times(self, draws: Draws, loads: np.ndarray) -> np.ndarray:
        return self.load_model.times(self.trace, draws, np.asarray(loads, dtype=np.float64))

    def sweep(self, key: str, value: float) -> DelayModel | None:
        model = self.load_model.sweep(key, value)
        return None if model is None else dataclasses.replace(self, load_model=model)


def _check_times(label: str, t: np.ndarray) -> None:
    from gctool.limits import MAX_WORKER_TIME

    if t.size and not (np.all(np.isfinite(t)) and float(t.max()) <= MAX_WORKER_TIME):
        raise InvalidInput(f"delay model {label}: some worker times are not finite or above "
                           f"{MAX_WORKER_TIME:g} (a tail too heavy or a scale too large for the "
                           "simulation's sums); choose other parameters")


#: the synthetic models by their ``delay`` name
SYNTHETIC: dict[str, type[Synthetic]] = {m.name: m for m in (ShiftedExp, Pareto, Markov,
                                                             Bernoulli)}


def parse_delay(spec: str, load_model: str | None = None) -> DelayModel:
    """``name[:key=value,...]``, ``trace:PATH`` or a bare trace path (``load_model``: how loads
    change a trace's times, :func:`gctool.sim.loads.parse_load_model`; None: ``interp``; given
    with a synthetic model, which has no loads, it is refused)."""
    import os

    from gctool.sim.loads import parse_load_model
    from gctool.sim.traces import load_trace

    loads = parse_load_model("interp" if load_model is None else load_model)  # checked first
    text = spec.strip()
    name, _, rest = text.partition(":")
    model = SYNTHETIC.get(name)
    if model is None and (name == "trace" or text.endswith(".csv") or "/" in text
                          or os.path.exists(text)):  # no OSError
        trace = load_trace(rest if name == "trace" else text)
        return TraceDelay(trace, loads.fitted(trace))
    if model is None:
        raise InvalidInput(f"unknown delay model {name!r}{did_you_mean(name, list(SYNTHETIC))}; "
                           f"use one of {', '.join(SYNTHETIC)} or trace:PATH")
    if load_model is not None:
        raise InvalidInput(f"`load_model` applies to a trace delay (trace:...), not to {name}, "
                           "whose times do not depend on the load", param="load_model")
    return model.parse(rest)


def parse_worker_p(spec: str) -> np.ndarray:
    """``worker_p``: probabilities separated by commas, or a file of them (as ``p_file``)."""
    import os

    from gctool.codes.straggling import check_probabilities, read_probabilities

    if os.path.exists(spec):
        return np.asarray(check_probabilities(read_probabilities(spec)), dtype=np.float64)
    try:
        values = [float(x) for x in spec.replace(" ", "").split(",") if x]
    except ValueError:
        raise InvalidInput("`worker_p`: expected numbers in [0, 1] separated by commas, or a "
                           "file of them") from None
    return np.asarray(check_probabilities(values), dtype=np.float64)


__all__ = ["Bernoulli", "DelayModel", "Draws", "Markov", "Pareto", "ShiftedExp", "Synthetic",
           "TraceDelay", "parse_delay", "parse_worker_p"]
