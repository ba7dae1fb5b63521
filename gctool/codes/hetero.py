"""Codes for heterogeneous stragglers: worker i straggles independently with probability p_i
(reference §4).

Decoding is one-step: the master adds up the messages that arrive.  With ``W[i, j]`` the weight
of g_j in worker i's message, the decoded coefficient of g_j is ``c_j = Σ_i I_i W[i, j]`` with
``I_i ~ Bernoulli(1 - p_i)``.  For a given support (S_j = holders of partition j) and the odds
``q_i = (1 - p_i) / p_i``, ``Q_j = Σ_{i in S_j} q_i``:

* the unbiased weights of least variance are ``W[i, j] = 1 / (p_i Q_j)`` (Lagrange conditions
  give ``W[i, j] ∝ 1/p_i``), with ``Var c_j = 1/Q_j`` and expected error
  ``E ||c - 1||^2 = Σ_j 1/Q_j``;
* edge cases: a worker with p_i = 0 never straggles: the partitions it holds get weight
  ``1/r_j`` on their r_j such workers and 0 on the others (zero variance); a worker with
  p_i = 1 never answers and gets no weight.

The support is chosen greedily under a per-worker load budget D: first every partition goes to
the most reliable worker with spare budget, then the pair (i, j) with the largest drop
``1/Q_j - 1/(Q_j + q_i)`` is added while one helps.  ``Σ_j -1/Q_j`` is monotone submodular in
the set of pairs and the budgets form a partition matroid, so greedy carries the classical 1/2
guarantee.  The file stores ``B = W`` (decode by summing the survivors), ``p``, the load budget
and the expected error, next to the expected error of the same weights on a cyclic support with
the same budget (``expected_error_cyclic``) for comparison.
"""

from __future__ import annotations

from typing import Any

from gctool._lazy import numpy as np
from gctool.algebra.fields import Field
from gctool.errors import DesignError, InvalidInput, printable
from gctool.limits import MAX_N
from gctool.params import LABEL, Int, List, Num
from gctool.registry.info import Param, SchemeInfo, SimulationTraits


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
        raise InvalidInput("give the straggler probabilities with --probabilities 0.1,0.2,... "
                           "or --p-file")
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


def greedy_support(p: np.ndarray, k: int, load: int) -> np.ndarray:
    """Greedy allocation of partitions to workers under the load budget (see module doc)."""
    n = p.size
    q = odds(p)
    useful = q > 0
    support = np.zeros((n, k), dtype=bool)
    budget = np.full(n, load)
    order = np.argsort(-q, kind="stable")
    for j in range(k):  # seed: every partition to the most reliable worker with budget left
        i = next((int(i) for i in order if budget[i] > 0 and useful[i]), None)
        if i is None:
            raise DesignError(f"the load budget {load} cannot give all {k} partitions a worker "
                              f"with p_i < 1; raise --load")
        support[i, j] = True
        budget[i] -= 1
    Q = column_odds(support, p)
    while True:
        free = (budget > 0)[:, None] & ~support & useful[:, None]
        if not free.any():
            return support
        with np.errstate(invalid="ignore"):
            gain = np.where(np.isinf(Q), 0.0, 1.0 / Q)[None, :] - 1.0 / (Q[None, :] + q[:, None])
        gain = np.where(free, np.nan_to_num(gain, nan=0.0), -np.inf)
        wi, pj = (int(x) for x in np.unravel_index(int(np.argmax(gain)), gain.shape))
        if gain[wi, pj] <= 0:
            return support
        support[wi, pj] = True
        budget[wi] -= 1
        Q[pj] += q[wi]


def cyclic_support(n: int, k: int, load: int) -> np.ndarray:
    """The baseline support: worker i holds {(i k // n + t) mod k : t < load}."""
    support = np.zeros((n, k), dtype=bool)
    for i in range(n):
        support[i, [(i * k // n + t) % k for t in range(load)]] = True
    return support


def _finite(x: float) -> float | None:
    return x if np.isfinite(x) else None  # JSON has no infinity: null = unbounded


def build(n: int | None, s: int | None, k: int | None, field: Field, rng: Any,
          p: list[float] | None = None, p_file: str | None = None, load: int = 2
          ) -> tuple[np.ndarray, dict[str, Any]]:
    if p is not None and p_file is not None:
        raise DesignError("give either --probabilities or --p-file, not both")
    probs = check_probabilities(read_probabilities(p_file) if p_file is not None else p)
    n = probs.size
    k = n if k is None else k
    s = 0 if s is None else s
    if field.kind != "real":
        raise DesignError("hetero weights are real numbers: use --field real")
    if not 1 <= load <= k:
        raise DesignError(f"--load must be between 1 and k = {k}, got {load}")
    if n * load < k:
        raise DesignError(f"{n} workers with load {load} cannot hold k = {k} partitions")
    if not 0 <= s < n:
        raise DesignError(f"s = {s} must be smaller than n = {n}")
    from gctool.limits import check_work

    steps = max(0, n * load - k)  # greedy additions after the seeding, one n x k scan each
    check_work(f"hetero (n={n}, k={k}, --load {load}): {steps:,} greedy steps over an "
               f"{n} x {k} gain matrix", 4 * steps * n * k + k * n,
               "use a smaller --load or fewer workers, or raise --max-work")
    support = greedy_support(probs, k, load)
    W = optimal_weights(support, probs)
    recorded: dict[str, Any] = {
        "p": probs.tolist(), "load": load, "decoder": "one-step: sum of the received messages",
        "expected_error": expected_error_of_support(support, probs),
        "expected_error_cyclic": _finite(expected_error_of_support(cyclic_support(n, k, load),
                                                                   probs)),
        "s": s,
    }
    return W, recorded


def closed_forms(code: Any) -> list[Any]:
    """``bound``'s row for a heterogeneous code (real, one message): the recorded expected
    one-step error sum_j 1/Q_j against the code's own."""
    from gctool.bounds.approx import bound_entry

    p, value = code.params.get("p"), code.params.get("expected_error")
    if code.field.is_finite or code.m != 1 or p is None or value is None or len(p) != code.n:
        return []
    return [bound_entry("hetero_expected_error", float(value),
                        f"expected one-step error (sum of received messages) = sum_j 1/Q_j = "
                        f"{value:.6g}", "[D] reference §4 (optimal unbiased weights)",
                        "expected one-step error under p_i", "exact",
                        expected_error(np.asarray(code.B), p))]


SCHEME = SchemeInfo(
    name="hetero",
    build=build,
    summary="Heterogeneous stragglers: greedy allocation and optimal one-step weights.",
    description=(
        "Worker i straggles with probability p_i (--probabilities list or --p-file). Under "
        "the load budget -d/--load each partition is given greedily to the workers that "
        "lower sum_j 1/Q_j most (Q_j = sum of the odds (1-p_i)/p_i of its holders), with "
        "the unbiased weights of least variance W[i,j] = 1/(p_i Q_j); decode by summing the"
        " received messages. The file records p, the expected error sum_j 1/Q_j and, for "
        "comparison, that of a cyclic allocation. Real field."
    ),
    reference="reference §4 (derived; structure as in Song & Choi 2025, Bitar et al.)",
    fields="real",
    uses=frozenset({"s", "k"}),
    s_default=0,
    params=(
        Param("p", "floats", "Straggler probabilities p_1,...,p_n (n = their number).",
              flag="--probabilities", aliases=("--p",)),
        Param("p_file", "path", "File of probabilities (JSON list or numbers)."),
        Param("load", "int", "Load budget: partitions per worker.", default=2,
              short="-d"),
    ),
    report_keys=("expected_error", "expected_error_cyclic"),
    examples=("gctool design hetero --probabilities 0.1,0.2,0.5,0.3 --load 2",
              "gctool design hetero --p-file p.txt --load 3 -k 12"),
    probabilities_param="p",
    closed_forms=closed_forms,
    simulation=SimulationTraits(kind="hetero"),
    file_params={"p": List(Num(0, 1), "n", "n"), "load": Int(0, "k"), "expected_error": Num(0),
                 "expected_error_cyclic": Num(0), "decoder": LABEL},
)
