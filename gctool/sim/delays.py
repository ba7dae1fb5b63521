"""Delay models of ``gctool simulate``: how long worker i takes in iteration t.

A model draws *base* randomness once per run (iterations x workers) and turns it into times for
any vector of per-worker loads ``ℓ_i`` (fraction of one job's data the worker computes).  Every
scheme of a run sees the same base draws (common random numbers), so differences between
schemes are not sampling noise, and worker i of a scheme with n workers is worker i of every
other scheme with at least i + 1 workers.

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
  The p_i come from ``--worker-p`` or, without it, from the first heterogeneous code file of the
  run (``params.p``); workers without a p_i never straggle.  The straggler flags are part of
  the shared draws, so every scheme sees the same stragglers.

Trace model ``trace:PATH`` reads measured times (:mod:`gctool.sim.traces`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gctool.errors import InvalidInput

SYNTHETIC = {
    "shifted-exp": {"shift": 1.0, "rate": 1.0},
    "pareto": {"scale": 1.0, "shape": 2.5},
    "markov": {"p": 0.05, "q": 0.5, "slow": 10.0, "shift": 1.0, "rate": 1.0},
    "bernoulli": {"slow": 10.0, "shift": 1.0, "rate": 1.0},
}


@dataclass
class DelayModel:
    """A parsed ``--delay`` spec."""

    name: str
    params: dict[str, float] = field(default_factory=dict)
    trace: Any = None  # gctool.sim.traces.Trace for name == "trace"
    worker_p: np.ndarray | None = None  # bernoulli: per-worker straggling probabilities

    @property
    def label(self) -> str:
        if self.trace is not None:
            return f"trace {self.trace.label}"
        args = ",".join(f"{k}={v:g}" for k, v in self.params.items())
        return f"{self.name}:{args}"

    def base(self, iterations: int, width: int, rng: np.random.Generator) -> dict[str, Any]:
        """Randomness shared by every scheme of a run."""
        if self.trace is not None:
            return self.trace.base(iterations, width, rng)
        draws: dict[str, Any] = {"E": rng.exponential(size=(iterations, width)),
                                 "U": 1.0 - rng.random(size=(iterations, width))}
        if self.name == "markov":
            draws["bad"] = _markov_states(iterations, width, self.params["p"], self.params["q"],
                                          rng)
        if self.name == "bernoulli":
            p = np.zeros(width)
            given = np.asarray(self.worker_p if self.worker_p is not None else [], np.float64)
            p[: min(width, len(given))] = given[:width]
            draws["bad"] = rng.random(size=(iterations, width)) < p[None, :]
        return draws

    def times(self, base: dict[str, Any], loads: np.ndarray) -> np.ndarray:
        """(iterations, n) completion times for per-worker loads (n = len(loads)).

        Refuses (:class:`InvalidInput`) parameters whose draws are not finite or exceed
        :data:`gctool.limits.MAX_WORKER_TIME` (a Pareto shape near 0, a huge shift), so that
        every sum and statistic of the run stays finite; traces are checked when read."""
        n = len(loads)
        ell = np.asarray(loads, dtype=np.float64)[None, :]
        if self.trace is not None:
            return np.asarray(self.trace.times(base, np.asarray(loads, dtype=np.float64)))
        p = self.params
        with np.errstate(over="ignore"):
            if self.name == "pareto":
                t = ell * p["scale"] * base["U"][:, :n] ** (-1.0 / p["shape"])
            else:
                t = ell * (p["shift"] + base["E"][:, :n] / p["rate"])
                if self.name in ("markov", "bernoulli"):
                    t = np.where(base["bad"][:, :n], t * p["slow"], t)
        _check_times(self.label, np.asarray(t))
        return np.asarray(t)


def _check_times(label: str, t: np.ndarray) -> None:
    from gctool.limits import MAX_WORKER_TIME

    if t.size and not (np.all(np.isfinite(t)) and float(t.max()) <= MAX_WORKER_TIME):
        raise InvalidInput(f"delay model {label}: some worker times are not finite or above "
                           f"{MAX_WORKER_TIME:g} (a tail too heavy or a scale too large for the "
                           "simulation's sums); choose other parameters")


def _markov_states(iterations: int, width: int, p: float, q: float, rng: np.random.Generator
                   ) -> np.ndarray:
    bad = np.empty((iterations, width), dtype=bool)
    state = rng.random(width) < (p / (p + q) if p + q > 0 else 0.0)
    for t in range(iterations):
        bad[t] = state
        u = rng.random(width)
        state = np.where(state, u >= q, u < p)
    return bad


def parse_delay(spec: str, mapping: str = "interp") -> DelayModel:
    """``name[:key=value,...]``, ``trace:PATH`` or a bare trace path (``mapping``: how loads
    map onto the trace's load levels, see :mod:`gctool.sim.traces`)."""
    import os

    from gctool.sim.traces import load_trace

    text = spec.strip()
    name, _, rest = text.partition(":")
    if name == "trace" or (name not in SYNTHETIC and (text.endswith(".csv") or "/" in text
                                                     or os.path.exists(text))):  # no OSError
        return DelayModel("trace", {}, load_trace(rest if name == "trace" else text, mapping))
    if name not in SYNTHETIC:
        raise InvalidInput(f"unknown delay model {name!r}; use one of "
                           f"{', '.join(SYNTHETIC)} or trace:PATH")
    params = dict(SYNTHETIC[name])
    for item in filter(None, (x.strip() for x in rest.split(","))):
        key, eq, value = item.partition("=")
        if not eq or key.strip() not in params:
            raise InvalidInput(f"delay model {name}: expected key=value with keys "
                               f"{', '.join(params)}, got {item!r}")
        try:
            params[key.strip()] = float(value)
        except ValueError:
            raise InvalidInput(f"delay model {name}: {key} must be a number") from None
    _check(name, params)
    return DelayModel(name, params)


def _check(name: str, p: dict[str, float]) -> None:
    positive = {"shifted-exp": ("rate",), "pareto": ("scale", "shape"),
                "markov": ("rate", "slow"), "bernoulli": ("rate", "slow")}[name]
    for key, value in p.items():
        if not np.isfinite(value) or value < 0 or (key in positive and value == 0):
            raise InvalidInput(f"delay model {name}: {key} must be "
                               f"{'> 0' if key in positive else '>= 0'} and finite")
    if name == "markov" and not (p["p"] <= 1 and p["q"] <= 1):
        raise InvalidInput("delay model markov: p and q are probabilities (0..1)")


def parse_worker_p(spec: str) -> np.ndarray:
    """``--worker-p``: probabilities separated by commas, or a file of them (as ``--p-file``)."""
    import os

    from gctool.codes.hetero import check_probabilities, read_probabilities

    if os.path.exists(spec):
        return np.asarray(check_probabilities(read_probabilities(spec)), dtype=np.float64)
    try:
        values = [float(x) for x in spec.replace(" ", "").split(",") if x]
    except ValueError:
        raise InvalidInput("--worker-p: expected numbers in [0, 1] separated by commas, or a "
                           "file of them") from None
    return np.asarray(check_probabilities(values), dtype=np.float64)
