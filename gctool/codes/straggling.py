"""Independent heterogeneous straggling (worker i straggles with probability p_i): the
probabilities' input and checks, the optimal unbiased one-step weights and the expected
one-step error of any code.  The ``hetero`` scheme (:mod:`gctool.codes.hetero`) designs with
them; ``attack``'s random means and ``simulate``'s ``worker_p`` use them for any code."""

from __future__ import annotations

from typing import Any

from gctool._lazy import numpy as np
from gctool.errors import InvalidInput, printable
from gctool.limits import MAX_N


def read_probabilities(path: str) -> list[float]:
    """Straggler probabilities from a file: a JSON list, or numbers separated by commas,
    spaces or newlines (``#`` starts a comment)."""
    from gctool.io import read_list_input

    values, label = read_list_input(path, "a list of probabilities")
    return numbers(values, label, "numbers in [0, 1]")


def numbers(values: list[Any], label: str, what: str) -> list[float]:
    """Items of :func:`gctool.io.parse_list` as floats (JSON numbers or number strings)."""
    out = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, int | float | str):
            raise InvalidInput(f"{label}: expected {what}, got {printable(repr(v), 40)}")
        try:
            out.append(float(v))
        except (ValueError, OverflowError):
            raise InvalidInput(f"{label}: expected {what}, got {printable(repr(v), 40)}"
                               ) from None
    return out


def check_probabilities(p: Any) -> np.ndarray:
    arr = np.asarray(p, dtype=np.float64) if p is not None else np.zeros(0)
    if arr.ndim != 1 or arr.size < 1:
        raise InvalidInput("give the straggler probabilities with `probabilities` 0.1,0.2,... "
                           "or `p_file`")
    if arr.size > MAX_N:
        raise InvalidInput(f"{arr.size} workers is above gctool's limit of {MAX_N}")
    if not np.all(np.isfinite(arr)) or np.any((arr < 0) | (arr > 1)):
        raise InvalidInput("straggler probabilities must lie in [0, 1]")
    if np.all(arr == 1):
        raise InvalidInput("every worker always straggles (p_i = 1): nothing can be decoded")
    return arr


def odds(p: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return np.where(p == 0, np.inf, (1 - p) / np.where(p == 0, 1, p))


def optimal_weights(support: np.ndarray, p: np.ndarray) -> np.ndarray:
    """The unbiased one-step weights of least variance on a 0/1 support (n x k)."""
    q = odds(p)
    held = support.astype(bool) & (p < 1)[:, None]
    W = np.zeros(support.shape)
    for j in range(support.shape[1]):
        S = np.flatnonzero(held[:, j])
        sure = S[p[S] == 0]
        if sure.size:
            W[sure, j] = 1.0 / sure.size
        elif S.size:
            W[S, j] = 1.0 / (p[S] * q[S].sum())
    return W


def column_odds(support: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Q_j = Σ_{i holds j} q_i (inf when a never-straggling worker holds j)."""
    q = odds(p)
    return np.where(support.astype(bool), q[:, None], 0.0).sum(axis=0)


def expected_error_of_support(support: np.ndarray, p: np.ndarray) -> float:
    """Σ_j 1/Q_j: the expected error of the optimal weights on this support."""
    Q = column_odds(support, p)
    with np.errstate(divide="ignore"):
        return float(np.sum(np.where(Q == 0, np.inf, 1.0 / Q)))


def expected_error(B: np.ndarray, p: Any, a: Any = None) -> float:
    """Expected one-step error ``E ||Σ_i I_i a_i b_i - 1||^2`` of any code under independent
    straggling with probabilities p_i (decoding weights ``a``, default all ones):
    ``||μ - 1||^2 + Σ_j Σ_i p_i (1-p_i) |a_i B[i,j]|^2`` with ``μ = Σ_i (1-p_i) a_i b_i``."""
    p = check_probabilities(p)
    B = np.asarray(B)
    if B.shape[0] != p.size:
        raise InvalidInput(f"{p.size} probabilities for a code with n = {B.shape[0]} workers")
    a = np.ones(p.size) if a is None else np.asarray(a)
    W = a[:, None] * B
    mu = ((1 - p)[:, None] * W).sum(axis=0)
    var = ((p * (1 - p))[:, None] * np.abs(W) ** 2).sum()
    return float(np.sum(np.abs(mu - 1) ** 2) + var)
