"""What ``gctool train`` trains: the problems of ``gctool simulate --train`` (least squares or
logistic regression, :mod:`gctool.sim.training`), on their synthetic data or on the user's
``--data FILE.npz`` (arrays ``X``, samples x features, and ``y``, one value per sample; 0/1
labels for logistic regression)."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from gctool.errors import InvalidInput

#: the most samples x features a --data file may hold (every worker's rows are pickled once)
MAX_DATA_ENTRIES = 50_000_000


def load_data(path: str | os.PathLike[str]) -> tuple[np.ndarray, np.ndarray]:
    """(X, y) of an NPZ file, validated (one-line errors naming the file)."""
    from gctool._files import npz_members, read_bytes
    from gctool.errors import CodeFileError

    label = os.fspath(path)
    raw, _ = read_bytes(label, "an NPZ data file")
    try:
        arrays = npz_members(raw, ("X", "y"), {"X": MAX_DATA_ENTRIES, "y": MAX_DATA_ENTRIES})
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
         parts: int) -> Any:
    """The problem (:class:`gctool.sim.training.Problem`): synthetic from ``rng`` (the draws
    of ``simulate --train`` with the same seed) or the data of the file ``data``; ``parts`` is
    the most partitions a scheme cuts it into (each needs at least one sample)."""
    from gctool.sim.training import make_problem, problem_for

    if data is None:
        problem = make_problem(kind, rng)
    else:
        X, y = load_data(data)
        if kind == "logistic" and not np.isin(y, (0.0, 1.0)).all():
            raise InvalidInput(f"{os.fspath(data)}: logistic regression needs labels y in "
                               "{0, 1}")
        problem = problem_for(kind, X, y)
    if problem.N < parts:
        raise InvalidInput(f"the data has {problem.N} samples, fewer than the {parts} "
                           "partitions a scheme needs")
    return problem
