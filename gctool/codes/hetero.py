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

from typing import TYPE_CHECKING, Any

from gctool._lazy import numpy as np
from gctool.algebra.fields import Field
from gctool.budget import Budget
from gctool.codes.straggling import (
    check_probabilities,
    column_odds,
    expected_error,
    expected_error_of_support,
    odds,
    optimal_weights,
    read_probabilities,
)
from gctool.errors import DesignError
from gctool.family import Family
from gctool.params import LABEL, Int, List, Num
from gctool.registry.info import Param

if TYPE_CHECKING:
    from gctool.bounds.approx import ApproxBound, ThresholdFinder
    from gctool.model import GradientCode
    from gctool.sim.contenders.base import Contender


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
                              f"with p_i < 1; raise `load`")
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


def build(n: int | None, s: int | None, k: int | None, field: Field, rng: Any,  # noqa: PLR0913 (the scheme's options)
          p: list[float] | None = None, p_file: str | None = None, load: int = 2, *, budget: Budget
          ) -> tuple[np.ndarray, dict[str, Any]]:
    if p is not None and p_file is not None:
        raise DesignError("give either `probabilities` or `p_file`, not both")
    probs = check_probabilities(read_probabilities(p_file) if p_file is not None else p)
    n = probs.size
    k = n if k is None else k
    s = 0 if s is None else s
    if field.kind != "real":
        raise DesignError("hetero weights are real numbers: use `field`=real")
    if not 1 <= load <= k:
        raise DesignError(f"`load` must be between 1 and k = {k}, got {load}")
    if n * load < k:
        raise DesignError(f"{n} workers with load {load} cannot hold k = {k} partitions")
    if not 0 <= s < n:
        raise DesignError(f"s = {s} must be smaller than n = {n}")
    steps = max(0, n * load - k)  # greedy additions after the seeding, one n x k scan each
    budget.check_work(f"hetero (n={n}, k={k}, load {load}): {steps:,} greedy steps over an "
                      f"{n} x {k} gain matrix", 4 * steps * n * k + k * n,
                      "use a smaller `load` or fewer workers, or raise `max_work`")
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


def closed_forms(code: GradientCode) -> list[ApproxBound]:
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


class HeteroFamily(Family):
    name = "hetero"
    build = staticmethod(build)
    summary = "Heterogeneous stragglers: greedy allocation and optimal one-step weights."
    description = (
        "Worker i straggles with probability p_i (`probabilities` list or `p_file`). Under "
        "the load budget -d/`load` each partition is given greedily to the workers that "
        "lower sum_j 1/Q_j most (Q_j = sum of the odds (1-p_i)/p_i of its holders), with "
        "the unbiased weights of least variance W[i,j] = 1/(p_i Q_j); decode by summing the"
        " received messages. The file records p, the expected error sum_j 1/Q_j and, for "
        "comparison, that of a cyclic allocation. Real field."
    )
    reference = "reference §4 (derived; structure as in Song & Choi 2025, Bitar et al.)"
    fields = "real"
    uses = frozenset({"s", "k"})
    s_default = 0
    params = (
        Param("p", "floats", "Straggler probabilities p_1,...,p_n (n = their number).",
              flag="probabilities", aliases=("--p",)),
        Param("p_file", "path", "File of probabilities (JSON list or numbers)."),
        Param("load", "int", "Load budget: partitions per worker.", default=2,
              short="-d"),
    )
    report_keys = ("expected_error", "expected_error_cyclic")
    examples = ("gctool design hetero `probabilities` 0.1,0.2,0.5,0.3 `load` 2",
                "gctool design hetero `p_file` p.txt `load` 3 -k 12")
    file_params = {"p": List(Num(0, 1), "n", "n"), "load": Int(0, "k"), "expected_error": Num(0),
                   "expected_error_cyclic": Num(0), "decoder": LABEL}

    def contender(self, code: GradientCode, label: str) -> Contender:
        """In ``gctool simulate`` one step: the master sums what arrived."""
        from gctool.sim.contenders.hetero import HeteroCode

        return HeteroCode(code, label)

    def worker_probabilities(self, code: GradientCode) -> list[float] | None:
        """The straggling probabilities ``p`` the design recorded."""
        p = code.params.get("p")
        return None if p is None else [float(x) for x in p]

    def closed_forms(self, code: GradientCode, threshold: ThresholdFinder | None = None
                     ) -> list[ApproxBound]:
        return closed_forms(code)
