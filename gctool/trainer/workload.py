"""What ``gctool train`` trains: a *model* (what the workers compute, :class:`Linear` or
:class:`TwoLayer`) on data, as a :class:`Problem` of the master.

* ``lsq`` and ``logistic``: the problems of ``gctool simulate`` (``train``)
  (:mod:`gctool.sim.problem`: same data for the same seed, same step, loss* from the closed
  form or L-BFGS);
* ``mlp``: a two-layer network in numpy, ``sigma(v . tanh(W x + b) + c)`` with 8 hidden units and
  the logistic loss, on the data of ``logistic``.  Its loss has no known minimum; loss* is the
  optimal loss of logistic regression on the same data (the best linear model), so the target
  ``loss* + gap (loss0 - loss*)`` asks the network to do about as well as the best linear
  model.  Step 2/L with L the largest eigenvalue of X^T X / N (half of logistic regression's).

The data is synthetic or the user's ``data FILE.npz`` (arrays ``X``, samples x features, and
``y``, one value per sample; 0/1 labels for ``logistic`` and ``mlp``).  A model is a small
picklable value: it travels to the workers with their data, and its :meth:`gradient` is what a
worker computes for one partition."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from gctool.errors import InvalidInput
from gctool.request import TRAIN_PROBLEMS
from gctool.sim import problem as sim_problem

#: ``problem`` choices
PROBLEMS = TRAIN_PROBLEMS
#: hidden units of the two-layer network
HIDDEN = 8


@dataclass(frozen=True)
class Linear:
    """A linear model with the loss of ``simulate train``'s problem ``kind``."""

    kind: str  # lsq | logistic

    def size(self, features: int) -> int:
        return features

    def gradient(self, X: np.ndarray, y: np.ndarray, w: np.ndarray, samples: int
                 ) -> np.ndarray:
        """Gradient of the partition's part of the mean loss over ``samples`` samples."""
        from gctool.sim.problem import PROBLEMS

        return np.asarray(X.T @ PROBLEMS[self.kind](X, y, 0.0).residual(w) / samples)

    def loss(self, X: np.ndarray, y: np.ndarray, w: np.ndarray) -> float:
        from gctool.sim.problem import PROBLEMS

        return PROBLEMS[self.kind](X, y, 0.0).loss(w)


@dataclass(frozen=True)
class TwoLayer:
    """``sigma(v . tanh(W x + b) + c)`` with the logistic loss; parameters flattened as
    (W row by row, b, v, c)."""

    hidden: int = HIDDEN

    def size(self, features: int) -> int:
        return self.hidden * (features + 2) + 1

    def _unpack(self, w: np.ndarray, d: int) -> tuple[np.ndarray, ...]:
        h = self.hidden
        return w[: h * d].reshape(h, d), w[h * d: h * d + h], w[h * d + h: h * d + 2 * h], w[-1:]

    def _forward(self, X: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        W, b, v, c = self._unpack(w, X.shape[1])
        Z = np.tanh(X @ W.T + b)
        return Z, Z @ v + c[0]

    def gradient(self, X: np.ndarray, y: np.ndarray, w: np.ndarray, samples: int
                 ) -> np.ndarray:
        W, b, v, c = self._unpack(w, X.shape[1])
        Z, z = self._forward(X, w)
        r = (1.0 / (1.0 + np.exp(-z)) - y) / samples  # d loss / d z
        dZ = np.outer(r, v) * (1.0 - Z**2)
        return np.concatenate([(dZ.T @ X).ravel(), dZ.sum(axis=0), Z.T @ r, [r.sum()]])

    def loss(self, X: np.ndarray, y: np.ndarray, w: np.ndarray) -> float:
        _, z = self._forward(X, w)
        return float(np.mean(np.logaddexp(0.0, z) - y * z))

    def init(self, rng: np.random.Generator, features: int) -> np.ndarray:
        """Random first-layer and output weights scaled by 1/sqrt(fan-in), zero biases."""
        h = self.hidden
        return np.concatenate([rng.standard_normal(h * features) / np.sqrt(features),
                               np.zeros(h), rng.standard_normal(h) / np.sqrt(h), [0.0]])


@dataclass
class Problem(sim_problem.Problem):
    """The master's problem: ``simulate`` (``train``)'s (data, step, loss*) with the ``model``
    that computes the loss and the gradients (only ``loss`` and ``partial_gradients`` are used)."""

    model: Linear | TwoLayer = field(default_factory=lambda: Linear("lsq"))
    kind: ClassVar[str] = "train"

    def residual(self, w: np.ndarray) -> np.ndarray:
        raise TypeError("gctool train's problems give their gradients by model.gradient")

    def loss(self, w: np.ndarray) -> float:
        return self.model.loss(self.X, self.y, w)

    def partial_gradients(self, w: np.ndarray, bounds: np.ndarray) -> np.ndarray:
        """(partitions, parameters): each contiguous partition's part of the gradient."""
        return np.array([self.model.gradient(self.X[a:b], self.y[a:b], w, self.N)
                         for a, b in zip(bounds[:-1], bounds[1:], strict=True)])

#: the most samples x features a ``data`` file may hold (every worker's rows are pickled once)
MAX_DATA_ENTRIES = 50_000_000


def load_data(path: str | os.PathLike[str]) -> tuple[np.ndarray, np.ndarray]:
    """(X, y) of an NPZ file (``-``: stdin), validated (one-line errors naming the file).  It is
    read as a code file is (:func:`gctool._files.open_input`: a regular file member by member,
    never held whole beside its arrays; the same checks and the same errors)."""
    from gctool._files import npz_members, open_input
    from gctool.errors import CodeFileError

    label = os.fspath(path)
    with open_input(label, "an NPZ data file", "X") as (source, label):
        try:
            arrays = npz_members(source, ("X", "y"),
                                 {"X": MAX_DATA_ENTRIES, "y": MAX_DATA_ENTRIES})
        except CodeFileError as exc:
            raise InvalidInput(f"{label}: {exc}") from None
    X, y = arrays["X"], arrays["y"]
    if X.ndim != 2 or X.shape[0] < 1 or X.shape[1] < 1:
        raise InvalidInput(f"{label}: X must be a 2-d array (samples x features), got shape "
                           f"{X.shape}")
    if y.shape not in ((X.shape[0],), (X.shape[0], 1)):
        raise InvalidInput(f"{label}: y must hold one value per sample ({X.shape[0]}), got "
                           f"shape {y.shape}")
    for name, a in (("X", X), ("y", y)):
        if a.dtype.kind not in "biuf":
            raise InvalidInput(f"{label}: {name} must hold real numbers, not {a.dtype}")
    X, y = X.astype(np.float64), y.reshape(-1).astype(np.float64)
    if not (np.isfinite(X).all() and np.isfinite(y).all()):
        raise InvalidInput(f"{label}: X and y must be finite")
    return X, y


def make(kind: str, data: str | os.PathLike[str] | None, rng: np.random.Generator,
         parts: int) -> tuple[Problem, np.ndarray]:
    """The problem and its starting point: synthetic from ``rng`` (the data and start of
    ``simulate train`` with the same seed) or the data of the file ``data``; ``parts`` is the
    most partitions a scheme cuts it into (each needs at least one sample)."""
    from gctool.sim.problem import make_problem, problem_for

    if kind not in PROBLEMS:
        raise InvalidInput(f"`problem` must be one of {', '.join(PROBLEMS)}")
    linear = "lsq" if kind == "lsq" else "logistic"
    if data is None:
        base = make_problem(linear, rng)
    else:
        X, y = load_data(data)
        if linear == "logistic" and not np.isin(y, (0.0, 1.0)).all():
            raise InvalidInput(f"{os.fspath(data)}: {kind} needs labels y in {{0, 1}}")
        base = problem_for(linear, X, y)
    if base.N < parts:
        raise InvalidInput(f"the data has {base.N} samples, fewer than the {parts} "
                           "partitions a scheme needs")
    d = base.X.shape[1]
    if kind == "mlp":
        net = TwoLayer()
        step = 2.0 / float(np.linalg.eigvalsh(base.X.T @ base.X / base.N).max())
        return Problem(base.X, base.y, step, base.loss_star, net), net.init(rng, d)
    return (Problem(base.X, base.y, base.eta, base.loss_star, Linear(linear)),
            np.asarray(rng.standard_normal(d)))
