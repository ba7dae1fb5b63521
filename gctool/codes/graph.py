"""Graph assignment schemes (Glasgow & Wootters 2021; reference §3.3b).

Partitions are the N vertices of a graph and workers its m edges: worker ``e = (u, v)`` computes
``g_u + g_v``, so ``B`` is the m x N edge-vertex incidence matrix (0/1, any field), every worker
computes 2 partitions and a d-regular graph replicates each partition d times.

Optimal decoding has a closed form (:func:`component_error`): delete the straggling edges; a
connected component of the surviving graph that contains an odd cycle is recovered exactly, and a
bipartite component with sides L and R contributes ``(|L| - |R|)^2 / (|L| + |R|)`` (an isolated
vertex contributes 1).  Proof: the rows of a connected component span the vectors orthogonal to
its ±1 side indicator if it is bipartite, and everything otherwise.

Spectra: ``B^T B = A + d I``, so σ_2(B)^2 = 2d - γ with γ = d - λ_2(A) the spectral gap; the
file records λ_2, γ and σ_2^2.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from gctool._lazy import numpy as np
from gctool.algebra.fields import Field
from gctool.budget import Budget
from gctool.errors import DesignError
from gctool.family import Family
from gctool.limits import MAX_COLUMNS, MAX_ENTRIES, MAX_N
from gctool.params import LABEL, Int, Num
from gctool.registry.info import Param

GRAPH_CHOICES = ("cycle", "complete", "petersen", "random-regular", "paley")


def incidence(edges: np.ndarray, N: int) -> np.ndarray:
    B = np.zeros((len(edges), N), dtype=np.int64)
    rows = np.arange(len(edges))
    B[rows, edges[:, 0]] = 1
    B[rows, edges[:, 1]] = 1
    return B


def component_error(edges: np.ndarray, N: int, survivors: Iterable[int]) -> float:
    """Optimal-decoding error of the graph scheme when only the edges ``survivors`` report.

    Edges are pairs (u, v); a loop (u, u) makes its component non-bipartite.
    """
    adj: list[list[int]] = [[] for _ in range(N)]
    odd_loop = np.zeros(N, dtype=bool)
    for e in survivors:
        u, v = int(edges[e][0]), int(edges[e][1])
        if u == v:
            odd_loop[u] = True
        else:
            adj[u].append(v)
            adj[v].append(u)
    side = np.full(N, -1)
    total = 0.0
    for root in range(N):
        if side[root] >= 0:
            continue
        side[root], stack, count, bipartite = 0, [root], [0, 0], True
        while stack:
            u = stack.pop()
            count[side[u]] += 1
            bipartite &= not odd_loop[u]
            for w in adj[u]:
                if side[w] < 0:
                    side[w] = 1 - side[u]
                    stack.append(w)
                elif side[w] == side[u]:
                    bipartite = False
        if bipartite:
            total += (count[0] - count[1]) ** 2 / (count[0] + count[1])
    return total


def build(n: int | None, s: int | None, k: int | None, field: Field, rng: np.random.Generator,  # noqa: PLR0913 (the scheme's options)
          graph: str = "cycle", vertices: int | None = None, d: int | None = None, *, budget: Budget
          ) -> tuple[np.ndarray, dict[str, Any]]:
    from gctool.codes import regular_graphs

    A, degree = regular_graphs.make(graph, vertices, d, rng, allowed=GRAPH_CHOICES)
    N = A.shape[0]
    edges = regular_graphs.edges_of(A)
    m = len(edges)
    s = 0 if s is None else s
    if k is not None and k != N:
        raise DesignError(f"graph schemes have k = {N} partitions, one per vertex (got -k {k})")
    if not 0 <= s < m:
        raise DesignError(f"s = {s} must be smaller than n = {m} (the number of edges)")
    if m > MAX_N or m * N > MAX_ENTRIES:  # before the m x N incidence matrix is allocated
        raise DesignError(f"the {graph} graph with {N:,} vertices has {m:,} edges: B would be "
                          f"{m:,} x {N:,}, above gctool's limits (n <= {MAX_N:,}, entries <= "
                          f"{MAX_ENTRIES:,})")
    regular_graphs.check_work(budget, "graph", N, m,
                              "use fewer `vertices`, or raise `max_work`")
    summary = regular_graphs.spectral_summary(A, degree)
    recorded: dict[str, Any] = {
        "graph": graph, "vertices": N, "degree": degree, "edges": m,
        "lambda2": summary["lambda2"], "spectral_gap": summary["spectral_gap"],
        "sigma2_squared": regular_graphs.clean(2 * degree - summary["spectral_gap"]), "s": s,
    }
    return incidence(edges, N).astype(field.dtype), recorded


class GraphFamily(Family):
    name = "graph"
    build = staticmethod(build)
    summary = "Glasgow-Wootters graph scheme: workers = edges, partitions = vertices."
    description = (
        "Worker (u, v) computes g_u + g_v: B is the edge-vertex incidence matrix (n = edges, "
        "k = vertices, 0/1 entries, any field). Optimal decoding has a closed form: each "
        "bipartite component of the surviving graph with sides L, R costs "
        "(|L|-|R|)^2/(|L|+|R|), others cost 0. Graphs: cycle, complete, petersen, paley, "
        "random-regular (seeded). The file records lambda_2 and sigma_2^2 = 2d - gap."
    )
    reference = "Glasgow & Wootters, IEEE JSAIT 2021 (GW20); reference §3.3b"
    randomized = True
    uses = frozenset({"s", "field", "seed"})
    s_default = 0
    params = (
        Param("graph", "choice", "Which graph.", default="cycle",
              choices=("cycle", "complete", "petersen", "random-regular", "paley")),
        Param("vertices", "int", "Number of vertices (= partitions)."),
        Param("d", "int", "Vertex degree (random-regular; checked for the others).",
              flag="degree", aliases=("-d",)),
    )
    report_keys = ("edges", "degree", "lambda2", "sigma2_squared")
    examples = ("gctool design graph `graph` cycle `vertices` 7",
                "gctool design graph `graph` random-regular `vertices` 10 `degree` 3 `seed` 2")
    file_params = {"degree": Int(0, MAX_COLUMNS), "edges": Int(0, "n"), "vertices": Int(0, "k"),
                   "graph": LABEL, "lambda2": Num(), "sigma2_squared": Num()}
