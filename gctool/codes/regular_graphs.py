"""Regular graphs for the ``expander`` and ``graph`` schemes, as integer adjacency matrices.

Everything is plain numpy (no graph library): the graphs here are a few lines each and their
spectra are checked in the tests against the known closed forms.

* ``petersen``: 3-regular on 10 vertices; spectrum 3, 1^5, (-2)^4 (Ramanujan).
* ``cycle``: C_N, 2-regular; spectrum 2 cos(2πj/N).
* ``complete``: K_N, (N-1)-regular; spectrum N-1, (-1)^{N-1}.
* ``paley``: Paley graph on GF(q), q ≡ 1 (mod 4) a prime power: x ~ y iff x - y is a non-zero
  square; (q-1)/2-regular, spectrum (q-1)/2 and (-1 ± √q)/2.
* ``margulis``: Margulis–Gabber–Galil graph on Z_m x Z_m (N = m²): vertex (x, y) is joined to
  (x+2y, y), (x+2y+1, y), (x, y+2x), (x, y+2x+1) mod m and to the preimages under these maps,
  so A = Σ_t (P_t + P_t^T) is 8-regular counting loops twice and parallel edges with
  multiplicity (the same maps as networkx's ``margulis_gabber_galil_graph``); λ_2 ≤ 5√2
  (Gabber–Galil 1981).
* ``random-regular``: a uniform-ish random simple d-regular graph by the pairing model with the
  Steger–Wormald repair (pairs are drawn among the remaining stubs, never a loop or a repeated
  edge; a dead end restarts), seeded.

References: Margulis 1973; Gabber & Galil 1981; Steger & Wormald 1999; Paley 1933.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from gctool.errors import DesignError
from gctool.limits import MAX_N, REL_SLACK

if TYPE_CHECKING:
    from gctool.budget import Budget

MAX_RESTARTS = 200


def petersen() -> np.ndarray:
    outer = [(i, (i + 1) % 5) for i in range(5)]
    spokes = [(i, i + 5) for i in range(5)]
    inner = [(5 + i, 5 + (i + 2) % 5) for i in range(5)]
    return from_edges(10, outer + spokes + inner)


def cycle(N: int) -> np.ndarray:
    if N < 3:
        raise DesignError(f"a cycle needs at least 3 vertices, got {N}")
    return from_edges(N, [(i, (i + 1) % N) for i in range(N)])


def complete(N: int) -> np.ndarray:
    if N < 2:
        raise DesignError(f"a complete graph needs at least 2 vertices, got {N}")
    return np.ones((N, N), dtype=np.int64) - np.eye(N, dtype=np.int64)


def paley(q: int) -> np.ndarray:
    from gctool.codes.difference_sets import (
        additive_moduli,
        digits,
        encode,
        nonzero_squares,
        prime_power,
    )

    if prime_power(q) is None or q % 4 != 1:
        raise DesignError(f"the Paley graph needs a prime power q ≡ 1 (mod 4) vertices "
                          f"(5, 9, 13, 17, 25, 29, ...), got {q}")
    moduli = additive_moduli(q)
    x = digits(np.arange(q), moduli)
    diff = encode(x[:, None, :] - x[None, :, :], moduli)
    squares = np.zeros(q, dtype=bool)
    squares[list(nonzero_squares(q))] = True
    return squares[diff].astype(np.int64)


def margulis(N: int) -> np.ndarray:
    m = int(round(N**0.5))
    if m < 2 or m * m != N:
        raise DesignError(f"the Margulis-Gabber-Galil graph lives on Z_m x Z_m: the number of "
                          f"vertices must be a square m^2 >= 4 (e.g. {max(2, m) ** 2}, "
                          f"{(max(2, m) + 1) ** 2}), got {N}")
    x, y = np.arange(N) % m, np.arange(N) // m
    images = [((x + 2 * y) % m, y), ((x + 2 * y + 1) % m, y), (x, (y + 2 * x) % m),
              (x, (y + 2 * x + 1) % m)]
    A = np.zeros((N, N), dtype=np.int64)
    for xs, ys in images:
        target = xs + m * ys
        np.add.at(A, (np.arange(N), target), 1)
        np.add.at(A, (target, np.arange(N)), 1)
    return A


def random_regular(N: int, d: int, rng: np.random.Generator) -> np.ndarray:
    """A random simple d-regular graph on N vertices (pairing model with repair), seeded."""
    if not 1 <= d < N or (N * d) % 2:
        raise DesignError(f"a simple d-regular graph on N vertices needs 1 <= d < N and N*d even "
                          f"(got N = {N} vertices, `degree` = {d})", param="degree")
    for _ in range(MAX_RESTARTS):
        edges = _try_pairing(N, d, rng)
        if edges is not None:
            return from_edges(N, edges)
    raise DesignError(f"no random {d}-regular graph on {N} vertices found in {MAX_RESTARTS} "
                      "restarts; try another `seed` or a smaller degree")


def _try_pairing(N: int, d: int, rng: np.random.Generator) -> list[tuple[int, int]] | None:
    stubs = np.repeat(np.arange(N), d)
    edges: set[tuple[int, int]] = set()
    while stubs.size:
        rng.shuffle(stubs)
        left: list[int] = []
        for u, v in zip(stubs[0::2].tolist(), stubs[1::2].tolist(), strict=True):
            e = (min(u, v), max(u, v))
            if u == v or e in edges:
                left += [u, v]
            else:
                edges.add(e)
        stubs = np.array(left, dtype=np.int64)
        if stubs.size and not _suitable_pair_exists(stubs, edges):
            return None
    return sorted(edges)


def _suitable_pair_exists(stubs: np.ndarray, edges: set[tuple[int, int]]) -> bool:
    vertices = sorted(set(stubs.tolist()))
    return any((u, v) not in edges for i, u in enumerate(vertices) for v in vertices[i + 1:])


def from_edges(N: int, edges: list[tuple[int, int]]) -> np.ndarray:
    A = np.zeros((N, N), dtype=np.int64)
    for u, v in edges:
        A[u, v] += 1
        A[v, u] += 1
    return A


def edges_of(A: np.ndarray) -> np.ndarray:
    """The edges (u < v) of a simple graph, in lexicographic order, as an (m, 2) array."""
    if np.any(np.diag(A)) or np.any(A > 1) or np.any(A != A.T):
        raise DesignError("the graph must be simple (no loops or parallel edges)")
    u, v = np.nonzero(np.triu(A))
    return np.stack([u, v], axis=1)


def spectrum(A: np.ndarray) -> np.ndarray:
    """Eigenvalues of a symmetric matrix, largest first."""
    return np.linalg.eigvalsh(np.asarray(A, dtype=np.float64))[::-1]


def check_work(budget: Budget, scheme: str, N: int, rows: int, remedy: str) -> None:
    """Refuse, before they start, the eigenvalues of a graph of ``N`` vertices
    (:func:`spectral_summary`) and the ``rows`` x ``N`` matrix B of a ``scheme`` built on it,
    estimated above ``budget``."""
    from gctool.budget import eigvalsh_cost, entries_cost

    budget.check_work(f"{scheme} (n={rows}): the eigenvalues of the {N} x {N} adjacency "
                      f"matrix and the {rows} x {N} matrix B",
                      int(eigvalsh_cost(N)) + entries_cost(rows, N), remedy)


def spectral_summary(A: np.ndarray, d: int) -> dict[str, Any]:
    """λ_2, λ_min, λ = max(|λ_2|, |λ_min|), the spectral gap and whether λ <= 2√(d-1)."""
    ev = spectrum(A)
    lam2, lam_min = float(ev[1]), float(ev[-1])
    lam = max(abs(lam2), abs(lam_min))
    return {"lambda2": clean(lam2), "lambda_min": clean(lam_min), "lambda": clean(lam),
            "spectral_gap": clean(d - lam2),
            "ramanujan": bool(d >= 2 and lam <= 2 * (d - 1) ** 0.5 + REL_SLACK)}


def clean(x: float) -> float:
    """Round eigenvalues that are integers up to round-off (keeps files readable)."""
    r = round(x)
    return float(r) if abs(x - r) < REL_SLACK else float(x)


GRAPHS = ("petersen", "cycle", "complete", "paley", "margulis", "random-regular")


def make(name: str, vertices: int | None, d: int | None, rng: np.random.Generator,
         allowed: tuple[str, ...] = GRAPHS) -> tuple[np.ndarray, int]:
    """Adjacency matrix and degree of the named graph (checks options against the graph)."""
    if name not in allowed:
        raise DesignError(f"unknown graph {name!r}; choose from {', '.join(allowed)}")
    if vertices is not None and vertices > MAX_N:  # before any N x N matrix (found by fuzzing)
        raise DesignError(f"{vertices} vertices is above gctool's limit of {MAX_N} "
                          "(graphs are built as dense adjacency matrices)")
    if name == "random-regular":
        if vertices is None or d is None:
            raise DesignError("`graph`=random-regular needs the number of vertices and the degree")
        A = random_regular(vertices, d, rng)
    else:
        if name != "petersen" and vertices is None:
            raise DesignError(f"`graph` {name} needs the number of vertices")
        if name == "petersen" and vertices not in (None, 10):
            raise DesignError(f"the Petersen graph has 10 vertices (got {vertices})")
        makers = {"petersen": lambda N: petersen(), "cycle": cycle, "complete": complete,
                  "paley": paley, "margulis": margulis}
        A = makers[name](10 if vertices is None else vertices)
    degree = int(A.sum(axis=1)[0])
    if d is not None and d != degree:
        raise DesignError(f"the {name} graph with {A.shape[0]} vertices has degree {degree}, "
                          f"not -d {d} (drop -d, or use `graph`=random-regular)")
    return A, degree
