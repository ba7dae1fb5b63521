"""Closed-form results known for particular schemes (errors, bounds), used by ``bound`` and
``attack`` to show what theory predicts next to what the audit found.

Each function returns ``None`` when no closed form applies to the given code.  A closed form is
applied only after the code's *structure* has been checked (files can be edited, so the scheme
name alone proves nothing), and only over the reals or the complex numbers (over GF(q) the
error is a 0/1 indicator).

Closed forms of the worst-case optimal-decoding error ``max_{|S|=s} err([n] \\ S)``:

* **Uniform Gram** (symmetric BIBDs, reference §3.5): if ``B B^H = a I + b J`` and
  ``B 1 = c 1`` then every survivor set of size f has ``err = k - |c|^2 f / (a + b f)``; for a
  symmetric (v, κ, λ) design this is ``s(κ-λ) / (κ-λ+λ(n-s))``.  Derivation:
  ``err(F) = k - c_F^H Gm_F^+ c_F`` with ``Gm_F^+ 1 = 1/(a + b f)``.
* **Rank-one blocks** (FRC, uncoded; reference §3.2): workers fall into groups with
  disjoint supports, every row of a group a multiple of one vector u_G.  Then err depends only on
  which groups are fully straggled: a dead group loses ``|P_G|``, a live one leaves
  ``|P_G| - |Σ u_G|^2/||u_G||^2``; the worst case is a knapsack over groups (dynamic programming),
  ``(k/g)·floor(s/(s_0+1))`` for an FRC with g groups of s_0 + 1 workers.
* **Cycle graph schemes** (Glasgow–Wootters, reference §3.3b): the edge–vertex code of C_N
  has worst error ``s - 1 + [N-s+1 odd]/(N-s+1)`` for 1 <= s <= N (isolate s-1 consecutive
  vertices; the remaining path of N-s+1 vertices leaves 1/(N-s+1) when its length is odd).
"""

from __future__ import annotations

import numpy as np

from gctool.limits import REL_SLACK
from gctool.model import GradientCode

RTOL = REL_SLACK


def _numeric(code: GradientCode) -> np.ndarray | None:
    return None if code.field.is_finite or code.m != 1 else np.asarray(code.B)


def uniform_gram(code: GradientCode) -> tuple[float, float, complex] | None:
    """(a, b, c) with ``B B^H = a I + b J`` and ``B 1 = c 1``, or None (a, b overflow to inf
    for entries near 1e308: :func:`closed_form_worst_error` uses the scaled values)."""
    got = _uniform_gram_scaled(code)
    if got is None:
        return None
    (a, b, c), e = got
    return float(np.ldexp(a, 2 * e)), float(np.ldexp(b, 2 * e)), c * float(np.ldexp(1.0, e))


def _uniform_gram_scaled(code: GradientCode
                         ) -> tuple[tuple[float, float, complex], int] | None:
    """((a, b, c), e) of :func:`uniform_gram` for B scaled by 2^-e, the power of two that
    brings its largest entry into [1/2, 1) (exact; the worst error ``k - |c|^2 f / (a + b f)``
    does not depend on the scale, and entries near 1e308 do not overflow the Gram matrix)."""
    B = _numeric(code)
    if B is None:
        return None
    top = float(np.abs(B).max())
    if top == 0:
        return None
    e = int(np.frexp(top)[1])
    B = np.ldexp(B.real, -e) + (1j * np.ldexp(B.imag, -e) if np.iscomplexobj(B) else 0)
    n = code.n
    rows = B.sum(axis=1)
    if not np.allclose(rows, rows[0], rtol=0, atol=RTOL * max(1.0, float(np.abs(rows).max()))):
        return None  # cheap test first: B 1 = c 1 is needed
    G = B @ B.conj().T
    scale = max(1.0, float(np.abs(G).max()))
    b = complex(G[0, 1]) if n > 1 else 0.0
    a = complex(G[0, 0]) - b
    target = a * np.eye(n) + b * np.ones((n, n))
    if not np.allclose(G, target, rtol=0, atol=RTOL * scale):
        return None
    return (a.real, b.real, complex(rows[0])), e


def uniform_gram_error(k: int, a: float, b: float, c: complex, f: int) -> float:
    """``k - |c|^2 f / (a + b f)`` (0 survivors: k)."""
    denom = a + b * f
    if f == 0 or abs(denom) <= RTOL * max(1.0, abs(a), abs(b)):
        return float(k)
    return max(0.0, float(k - abs(c) ** 2 * f / denom))


def rank_one_blocks(code: GradientCode) -> list[tuple[int, int, float]] | None:
    """(workers, partitions, residual while alive) per group of a block-diagonal rank-one code,
    plus a last entry (0, u, u) for the u partitions nobody holds; None for other codes."""
    B = _numeric(code)
    if B is None:
        return None
    support = B != 0
    groups: dict[bytes, list[int]] = {}
    for i, row in enumerate(support):
        if row.any():
            groups.setdefault(row.tobytes(), []).append(i)
    seen = np.zeros(code.k, dtype=bool)
    blocks = []
    for rows in groups.values():  # supports first: most codes fail here, with no SVD
        cols = np.flatnonzero(support[rows[0]])
        if seen[cols].any():
            return None  # overlapping supports: not block diagonal
        seen[cols] = True
        blocks.append((rows, cols))
    out = []
    for rows, cols in blocks:
        U = B[np.ix_(np.array(rows), cols)]
        u = U[0] / np.abs(U[0]).max()  # scale-free: the residual below needs |u|^2 finite
        if np.linalg.matrix_rank(U / np.abs(U).max(), tol=RTOL) != 1:  # relative: scale-free
            return None
        residual = len(cols) - abs(u.sum()) ** 2 / float(np.vdot(u, u).real)
        out.append((len(rows), len(cols), max(0.0, float(residual))))
    out.append((0, int((~seen).sum()), float((~seen).sum())))
    return out


def rank_one_worst(groups: list[tuple[int, int, float]], s: int) -> float:
    """Knapsack over fully straggled groups (cost = workers, gain = partitions - residual)."""
    base = sum(res for _, _, res in groups)
    best = np.zeros(s + 1)
    for size, cols, res in groups:
        if size == 0:
            continue
        gain = cols - res
        if size <= s:
            best[size:] = np.maximum(best[size:], best[: s + 1 - size] + gain)
    return float(base + best[s])


def graph_cycle_length(code: GradientCode) -> int | None:
    """N when the code is the edge–vertex code of the cycle C_N (rows scaled freely)."""
    B = _numeric(code)
    if B is None or code.k < 3 or code.n != code.k:
        return None
    support = B != 0
    if not (np.all(support.sum(axis=1) == 2) and np.all(support.sum(axis=0) == 2)):
        return None
    edges = [np.flatnonzero(sup) for sup in support]
    if any(not np.isclose(B[i, u], B[i, v], rtol=RTOL, atol=0) for i, (u, v) in enumerate(edges)):
        return None
    neighbours: list[list[int]] = [[] for _ in range(code.k)]
    for u, v in edges:
        neighbours[u].append(int(v))
        neighbours[v].append(int(u))
    seen, stack = {0}, [0]  # 2-regular and connected <=> a single cycle through every vertex
    while stack:
        for w in neighbours[stack.pop()]:
            if w not in seen:
                seen.add(w)
                stack.append(w)
    return code.k if len(seen) == code.k else None


def cycle_worst_error(N: int, s: int) -> float:
    if s == 0:
        return 0.0
    rest = N - s + 1
    return (s - 1) + (1.0 / rest if rest % 2 else 0.0)


def closed_form_worst_error(code: GradientCode, s: int) -> tuple[float, str] | None:
    """Exact worst-case raw squared optimal-decoding error for s stragglers, with its source,
    when a closed form is known for the code's structure (see the module doc)."""
    if not 0 <= s <= code.n:
        return None
    scaled = _uniform_gram_scaled(code)
    gram = None if scaled is None else scaled[0]
    if gram is not None:
        src = ("uniform Gram B B^H = aI + bJ (symmetric BIBD: Kadhe-Koyluoglu-Ramchandran 2019); "
               "err = k - |c|^2 f/(a + b f), reference §3.5")
        return uniform_gram_error(code.k, *gram, code.n - s), src
    groups = rank_one_blocks(code)
    if groups is not None:
        return rank_one_worst(groups, s), ("block-diagonal rank-one code (FRC, Tandon et al. "
                                           "2017): knapsack over dead groups, reference §3.2")
    N = graph_cycle_length(code)
    if N is not None:
        return cycle_worst_error(N, s), ("cycle graph scheme (Glasgow-Wootters 2021): "
                                         "s-1 + [N-s+1 odd]/(N-s+1), reference §3.3b")
    return None
