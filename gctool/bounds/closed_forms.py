"""Closed-form results known for particular schemes (errors, bounds), used by ``bound`` and
``attack`` to show what theory predicts next to what the audit found.

Each function returns ``None`` when no closed form applies to the given code.  A closed form is
applied only after the code's *structure* has been checked, exactly (files can be edited, so the
scheme name alone proves nothing; a structure that holds only to round-off, as a Gram matrix
uniform to 1e-16, gives errors that differ from set to set: rows [1, 2] and [1, 2 + 1e-10]
decode exactly, where aI + bJ would say 0.2), and only over the reals or the complex numbers
(over GF(q) the error is a 0/1 indicator).

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

from typing import Any

import numpy as np

from gctool.limits import REL_SLACK
from gctool.model import GradientCode
from gctool.numerics import PRODUCT_RANGE, proportional_rows, two_product

RTOL = REL_SLACK

#: multiply-adds of :func:`_exactly_uniform`'s integer Gram matrix when B's entries are not
#: small multiples of one value (its float64 path); above, no uniform-Gram closed form is
#: claimed (about 0.3 s of Python integers)
EXACT_GRAM_OPS = 10**6


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
    raw, B = B, np.ldexp(B.real, -e) + (1j * np.ldexp(B.imag, -e) if np.iscomplexobj(B) else 0)
    n = code.n
    rows = B.sum(axis=1)
    if not np.allclose(rows, rows[0], rtol=0, atol=RTOL * max(1.0, float(np.abs(rows).max()))):
        return None  # cheap test first: B 1 = c 1 is needed
    G = B @ B.conj().T
    scale = max(1.0, float(np.abs(G).max()))
    b = complex(G[0, 1]) if n > 1 else 0.0
    a = complex(G[0, 0]) - b
    target = a * np.eye(n) + b * np.ones((n, n))
    if not np.allclose(G, target, rtol=0, atol=RTOL * scale) or not _exactly_uniform(raw):
        return None  # uniform only to round-off: the errors differ from set to set
    return (a.real, b.real, complex(rows[0])), e


def _exactly_uniform(B: np.ndarray) -> bool:
    """Are ``B 1 = c 1`` and ``B B^H = a I + b J`` exactly, for the float64 entries of B?

    Entries that are all integer multiples ``q v`` of their smallest magnitude v, with
    ``|q| <= 2^26`` and ``2 k max|q|^2 < 2^53``, are tested on Q in float64 (its sums and
    Gram matrix are then exact integers; B's are v and v^2 times them); others in Python
    integers (each entry times the common power of two), at most :data:`EXACT_GRAM_OPS`
    multiply-adds, else not claimed."""
    parts = [B.real, B.imag] if np.iscomplexobj(B) else [np.asarray(B, dtype=np.float64)]
    nz = np.concatenate([np.abs(p[p != 0]) for p in parts])
    v = float(nz.min())
    Q = [np.round(p / v) for p in parts]
    top = max(float(np.abs(q).max()) for q in Q)
    n, k = B.shape
    if (PRODUCT_RANGE[0] <= v <= PRODUCT_RANGE[1] and top <= 2.0**26 and 2 * k * top * top < 2.0**53
            and all(_is_product(q, v, p) for q, p in zip(Q, parts, strict=True))):
        M = Q[0] + 1j * Q[1] if len(Q) == 2 else Q[0]
        return _uniform(M.sum(axis=1).tolist(), M @ M.conj().T)
    if n * n * k * len(parts) > EXACT_GRAM_OPS:
        return False
    ratios = [[[x.as_integer_ratio() for x in row] for row in p.tolist()] for p in parts]
    den = max(d for p in ratios for row in p for _, d in row)  # powers of two
    ints = [np.array([[a * (den // d) for a, d in row] for row in p], dtype=object)
            for p in ratios]
    if len(ints) == 1:
        R = ints[0]
        return _uniform(R.sum(axis=1).tolist(), R @ R.T)
    R, M = ints  # rows r + i m: sums and Gram matrix as pairs of integers
    sums = list(zip(R.sum(axis=1).tolist(), M.sum(axis=1).tolist(), strict=True))
    return _uniform(sums, R @ R.T + M @ M.T) and _uniform([], M @ R.T - R @ M.T)


def _is_product(q: np.ndarray, v: float, p: np.ndarray) -> bool:
    """Is ``p`` exactly ``q v`` (its float64 product, with no rounding error)?"""
    product, error = two_product(q, v)
    return bool(np.array_equal(product, p) and not error.any())


def _uniform(sums: list[Any], G: np.ndarray) -> bool:
    """All ``sums`` equal, and G constant on its diagonal and off it (exact comparisons)."""
    n = G.shape[0]
    if not all(x == sums[0] for x in sums):
        return False
    diag = G[np.arange(n), np.arange(n)]
    off = G[~np.eye(n, dtype=bool)]
    return all(x == diag[0] for x in diag.tolist()) and all(x == off[0] for x in off.tolist())


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
        if not proportional_rows(U, U[0]).all():  # exactly: rows proportional only to
            return None  # round-off have set-dependent errors of their own
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
    if any(B[i, u] != B[i, v] for i, (u, v) in enumerate(edges)):  # exactly (see rank one)
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
