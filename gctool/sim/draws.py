"""The randomness of one ``gctool simulate`` run (:class:`Draws`): drawn once by the delay
model (:mod:`gctool.sim.delays`) and shared by every scheme (common random numbers)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class Draws:
    """The randomness of one run, shared by every scheme (common random numbers)."""

    iterations: int
    width: int
    #: (iterations, width) per-round straggler flags (markov, bernoulli), else None
    flags: np.ndarray | None = None
    #: the measured round behind each iteration (traces), else None: every iteration is a
    #: fresh draw
    clusters: np.ndarray | None = None
    #: what the model had to adapt while making times (e.g. loads clamped to a trace's levels)
    notes: list[str] = field(default_factory=list)

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)


@dataclass
class SyntheticDraws(Draws):
    E: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))  # Exp(1)
    U: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))  # U(0, 1]
