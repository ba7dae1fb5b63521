"""Expander-graph gradient codes (Raviv, Tamo, Tandon, Dimakis 2018; reference §3.3a).

``B = A / d`` for the adjacency matrix A of a d-regular graph on n vertices: worker i computes
the partitions adjacent to i (k = n) and sends their average.  With λ = max(|λ_2|, |λ_n|) and
scaled-uniform decoding ``a = (n/(n-s)) 1_F``, every set of s stragglers leaves an error of at
most ``(λ/d)^2 · n s/(n-s)`` (write ``1_F = ((n-s)/n) 1 + z`` with z ⊥ 1, ``||z||^2 = s(n-s)/n``
and ``||A z|| <= λ ||z||``); optimal decoding can only do better.  Ramanujan graphs
(λ <= 2√(d-1)) give about ``(4/d) n s/(n-s)``.

The file records λ_2, λ_min, λ, the spectral gap, whether the graph is Ramanujan, and the
bound at the file's s (``spectral_bound``); ``gctool bound`` shows it for any s.
Graphs: see :mod:`gctool.codes.regular_graphs` (Petersen, Paley, Margulis–Gabber–Galil, random
regular, cycles and complete graphs).  Over GF(q) the entries 1/d have no natural meaning, so the
scheme is real or complex only.
"""

from __future__ import annotations

from typing import Any

from gctool._lazy import numpy as np
from gctool.algebra.fields import Field
from gctool.budget import Budget
from gctool.errors import DesignError
from gctool.family import Family
from gctool.limits import MAX_COLUMNS
from gctool.params import LABEL, Int, Num
from gctool.registry.info import Param


def spectral_bound(lam: float, d: int, n: int, s: int) -> float:
    """Raviv et al.'s worst-case error bound (λ/d)^2 · n s/(n-s) for B = A/d."""
    return (lam / d) ** 2 * n * s / (n - s)


def build(n: int | None, s: int | None, k: int | None, field: Field, rng: np.random.Generator,  # noqa: PLR0913 (the scheme's options)
          graph: str = "random-regular", d: int | None = None, vertices: int | None = None,
          *, budget: Budget
          ) -> tuple[np.ndarray, dict[str, Any]]:
    from gctool.codes import regular_graphs

    if field.is_finite:
        raise DesignError("expander codes have entries 1/d: use `field`=real or complex "
                          "(for 0/1 graph codes over GF(q) use the 'graph' scheme)")
    A, degree = regular_graphs.make(graph, vertices, d, rng)
    N = A.shape[0]
    s = 0 if s is None else s
    if k is not None and k != N:
        raise DesignError(f"expander codes have k = n = {N} partitions (got -k {k})")
    if not 0 <= s < N:
        raise DesignError(f"s = {s} must be smaller than n = {N} (the number of vertices)")
    regular_graphs.check_work(budget, "expander", N, N,
                              "use fewer `vertices`, or raise `max_work`")
    summary = regular_graphs.spectral_summary(A, degree)
    recorded: dict[str, Any] = {"graph": graph, "vertices": N, "degree": degree, **summary,
                                "spectral_bound": spectral_bound(summary["lambda"], degree, N, s),
                                "s": s}
    return (A / degree).astype(field.dtype), recorded


class ExpanderFamily(Family):
    name = "expander"
    build = staticmethod(build)
    summary = "B = A/d for a d-regular expander graph (Raviv et al.); reports lambda_2."
    description = (
        "Worker i averages the partitions adjacent to vertex i (n = k = vertices). Graphs: "
        "petersen (10 vertices, 3-regular), paley (Q = 1 mod 4 vertices), margulis "
        "(Margulis-Gabber-Galil on Z_m x Z_m, 8-regular, -n m^2) and random-regular "
        "(seeded, needs -d and -n). The file records lambda_2, lambda_min, "
        "lambda = max(|lambda_2|, |lambda_min|), the spectral gap, whether the graph is "
        "Ramanujan, and the worst-case error bound (lambda/d)^2 ns/(n-s) at -s. Real or "
        "complex."
    )
    reference = "Raviv, Tamo, Tandon, Dimakis, ICML 2018 (RTTD18); reference §3.3a"
    fields = "real, complex"
    randomized = True
    uses = frozenset({"s", "field", "seed"})
    s_default = 0
    params = (
        Param("graph", "choice", "Which graph.", default="random-regular",
              choices=("petersen", "paley", "margulis", "random-regular", "cycle",
                       "complete")),
        Param("d", "int", "Degree (random-regular; checked for the others).", short="-d",
              flag="degree"),
        Param("vertices", "int", "Number of workers (= vertices = partitions).",
              flag="-n", aliases=("vertices",)),
    )
    report_keys = ("degree", "lambda2", "lambda", "ramanujan", "spectral_bound")
    examples = ("gctool design expander `graph` petersen -s 2",
                "gctool design expander `graph` random-regular -d 4 -n 20 `seed` 1",
                "gctool design expander `graph` margulis -n 49")
    symmetric_spectral_bound = ("Raviv spectral bound (λ/d)^2 ns/(n-s)",
                                "Raviv et al. 2018; reference §3.3a")
    file_params = {"degree": Int(0, "n"), "vertices": Int(0, MAX_COLUMNS), "graph": LABEL,
                   "lambda2": Num(), "lambda": Num(), "spectral_bound": Num()}
