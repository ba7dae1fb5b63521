"""Sparsified messages for ``gctool simulate train sparsify``.

Reference: J. Wangni, J. Wang, J. Liu, T. Zhang, "Gradient sparsification for
communication-efficient distributed optimization", NeurIPS 2018.  A message g (a vector of d
coordinates) is sent as ``Q(g)_i = Z_i g_i / p_i`` with independent ``Z_i ~ Bernoulli(p_i)``,
so ``E[Q(g)] = g`` (unbiased) and ``E||Q(g)||^2 = sum_i g_i^2 / p_i``.  The probabilities solve
the paper's convex program

    minimise  sum_i p_i   (expected number of coordinates sent)
    subject to  sum_i g_i^2 / p_i <= (1 + eps) sum_i g_i^2,   0 < p_i <= 1

whose KKT conditions give ``p_i = min(1, lambda |g_i|)``: with the coordinates sorted by
decreasing |g_i| and the first t of them kept with probability 1, ``lambda = sum_{i>t} |g_i| /
((1+eps) ||g||^2 - sum_{i<=t} g_i^2)``, for the smallest t with ``lambda |g_(t+1)| <= 1``
(the paper computes the same solution by an iterative greedy algorithm; gctool uses this
closed form, checked against scipy's SLSQP in the tests).  Coordinates with g_i = 0 get
p_i = 0 (never sent; the estimate is exactly 0 there).

Baseline ``random-k``: keep k coordinates chosen uniformly at random and scale them by d/k
(also unbiased, every p_i = k/d).

Specs: ``wangni`` or ``wangni:eps=E`` (default E = 1: at most double the second moment) and
``random-k`` or ``random-k:k=K`` (default k = ceil(d/4)).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np

from gctool.errors import InvalidInput, did_you_mean


class Sparsifier(ABC):
    """Unbiased sparsification of uploaded messages."""

    @property
    @abstractmethod
    def label(self) -> str: ...

    @abstractmethod
    def probabilities(self, msgs: np.ndarray) -> np.ndarray:
        """The probability with which each coordinate of each row is sent."""

    def apply(self, msgs: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, int]:
        """Sparsify every row of ``msgs``; returns (unbiased sparse rows, coordinates sent)."""
        msgs = np.asarray(msgs)
        P = self.probabilities(msgs)
        keep = rng.random(msgs.shape) < P
        out = np.zeros_like(msgs)
        out[keep] = msgs[keep] / P[keep]
        return out, int(keep.sum())


@dataclass(frozen=True)
class Wangni(Sparsifier):
    eps: float = 1.0

    @property
    def label(self) -> str:
        return f"wangni:eps={self.eps:g}"

    def probabilities(self, msgs: np.ndarray) -> np.ndarray:
        return np.vstack([wangni_probabilities(row, self.eps) for row in msgs])

    @classmethod
    def parse(cls, values: dict[str, float]) -> Wangni:
        eps = values.get("eps", 1.0)
        if not (eps > 0 and math.isfinite(eps)):
            raise InvalidInput("sparsifier wangni: eps must be a finite number > 0")
        return cls(eps)


@dataclass(frozen=True)
class RandomK(Sparsifier):
    k: int = 0  # 0 = ceil(d/4)

    @property
    def label(self) -> str:
        return "random-k" + (f":k={self.k}" if self.k else "")

    def kept(self, d: int) -> int:
        return min(d, self.k or math.ceil(d / 4))

    def probabilities(self, msgs: np.ndarray) -> np.ndarray:
        d = msgs.shape[1]
        return np.full(msgs.shape, self.kept(d) / d)

    def apply(self, msgs: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, int]:
        msgs = np.asarray(msgs)
        kk = self.kept(msgs.shape[1])
        keep = np.zeros(msgs.shape, dtype=bool)
        idx = np.argsort(rng.random(msgs.shape), axis=1)[:, :kk]
        np.put_along_axis(keep, idx, True, axis=1)
        return np.where(keep, msgs / self.probabilities(msgs), 0.0), int(keep.sum())

    @classmethod
    def parse(cls, values: dict[str, float]) -> RandomK:
        k = values.get("k", 0.0)
        if k and (k != int(k) or k < 1):
            raise InvalidInput("sparsifier random-k: k must be a positive integer")
        return cls(int(k))


#: the sparsifiers by name, with their parameters' defaults
METHODS: dict[str, tuple[type[Wangni] | type[RandomK], dict[str, float]]] = {
    "wangni": (Wangni, {"eps": 1.0}), "random-k": (RandomK, {"k": 0.0})}


def parse_sparsify(spec: str) -> Sparsifier:
    """``wangni[:eps=E]`` or ``random-k[:k=K]``."""
    name, _, rest = spec.strip().partition(":")
    if name not in METHODS:
        raise InvalidInput(f"unknown sparsifier {name!r}{did_you_mean(name, list(METHODS))}; "
                           "use wangni[:eps=E] or random-k[:k=K]")
    from gctool.sim.specs import parse_pairs

    made, keys = METHODS[name]
    usage = ",".join(f"{k}=..." for k in keys)
    return made.parse(parse_pairs(rest, f"sparsifier {name}", keys, usage))


def wangni_probabilities(g: np.ndarray, eps: float) -> np.ndarray:
    """The solution of the convex program in the module docstring for one vector g."""
    g = np.asarray(g)
    a = np.abs(g).astype(np.float64)
    total = float(np.sum(a * a))
    p = np.zeros(a.shape)
    if total == 0.0:
        return p
    desc = np.sort(a)[::-1]
    desc = desc[desc > 0]
    d = desc.size
    head = np.concatenate([[0.0], np.cumsum(desc * desc)])  # sum of the t largest squares
    tail = np.concatenate([np.cumsum(desc[::-1])[::-1], [0.0]])  # sum_{i > t} |g_i|
    budget = (1.0 + eps) * total - head  # R_t, positive for t < d since eps > 0
    cand = tail[:d] / budget[:d]  # lambda if the t largest are kept surely, t = 0..d-1
    t = int(np.argmax(cand * desc <= 1.0))  # the smallest consistent t (t = d-1 always is)
    return np.minimum(1.0, cand[t] * a)
