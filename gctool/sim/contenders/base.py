"""What a contender of ``gctool simulate`` is (:class:`Contender`), what it did
(:class:`Run`), the contender of a code file, and which waiting rule it follows (the rules are
described in :mod:`gctool.sim.contenders`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gctool.model import GradientCode
from gctool.registry.info import SimulationTraits


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


@dataclass
class Contender:
    name: str
    kind: str  # uncoded | ignore | code | tree | sgc
    n: int
    loads: np.ndarray  # per-worker fraction of a job's data
    delay: int = 0
    s: int = 0
    code: GradientCode | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # kind-specific data (partial work)
    mu: float | None = None  # the authors' (1 + mu) x fastest straggler rule; None: gctool's
    #: the run's work meter (:class:`gctool.sim.budget.WorkMeter`); None: one per stopping rule
    meter: Any = None

    @property
    def load(self) -> float:
        return float(np.max(self.loads))

    def run(self, times: np.ndarray) -> Run:
        if self.kind == "partial":  # multi-message code using partial work
            from gctool.sim.partial import run_partial

            return run_partial(self, times)
        if self.kind == "encoded":  # encoded optimization: the fastest n - s workers
            from gctool.sim.encoded import run_encoded

            return run_encoded(self, times)
        if self.kind == "nested":  # nested code decoding at the level the stragglers allow
            from gctool.sim.nested import run_nested

            return run_nested(self, times)
        if self.kind in ("ps", "ring") or (self.kind == "tree" and "link" in self.extra):
            from gctool.sim import comm

            if self.kind == "tree":
                return comm.tree_with_link(self, times, self.extra["link"])
            return (comm.run_ps if self.kind == "ps" else comm.run_ring)(self, times)
        from gctool.sim.contenders import baselines, codes, schedules, trees

        if self.mu is not None and self.kind in ("code", "sgc", "ignore"):
            return {"code": codes.run_code_mu, "sgc": schedules.run_sgc_mu,
                    "ignore": baselines.run_ignore_mu}[self.kind](self, times)
        return {"uncoded": baselines.run_uncoded, "ignore": baselines.run_ignore,
                "code": codes.run_code, "tree": trees.run_tree, "sgc": schedules.run_sgc,
                "erasurehead": codes.run_erasurehead,
                "hetero": codes.run_hetero}[self.kind](self, times)


#: contender kinds the authors' (1 + μ) rule does not change (see :mod:`gctool.sim.contenders`)
MU_NOT_APPLIED = {"uncoded": "waits for every worker under both rules",
                  "ring": "waits for every worker under both rules",
                  "encoded": "its estimate uses the fastest n - s workers by design"}


def mu_rule(c: Contender) -> str:
    """Which waiting rule ``c`` follows: ``"authors"`` or ``"gctool"``."""
    return "authors" if c.mu is not None and c.kind not in MU_NOT_APPLIED else "gctool"


def traits(code: GradientCode) -> SimulationTraits:
    """How the simulator runs files of the code's scheme (``SchemeInfo.simulation``; the
    defaults for a scheme name gctool does not know)."""
    from gctool.registry import feature

    found: SimulationTraits = feature(code.scheme, "simulation", SimulationTraits())
    return found


def from_code(code: GradientCode, label: str) -> Contender:
    """A contender for a code file (any scheme gctool can write)."""
    kind = traits(code).kind
    if kind == "encoded":  # data encoding: wait for the fastest n - s
        from gctool.sim.encoded import encoded_contender

        return encoded_contender(code, label)
    if kind == "sgc":
        loads = np.full(code.n, float(code.params.get("load", 0.0)))
        return Contender(label, kind, code.n, loads, int(code.params.get("delay", 0)), code.s,
                         code)
    loads = code.loads / code.k
    return Contender(label, kind, code.n, loads.astype(np.float64), 0, code.s, code)


def run_naive(c: Contender, times: np.ndarray) -> Run:
    """The same run by the naive reference paths (tests and benchmarks compare the two)."""
    if c.kind == "code":
        from gctool.sim.contenders.codes import run_code_naive

        return run_code_naive(c, times)
    if c.kind == "sgc":
        from gctool.sim.contenders.schedules import run_sgc_naive

        return run_sgc_naive(c, times)
    return c.run(times)
