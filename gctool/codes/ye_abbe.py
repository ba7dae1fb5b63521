"""Ye & Abbe's communication-efficient gradient code, as their paper builds it (ICML 2018).

Setting (the paper's): k = n partitions, every partial gradient g_j split into m pieces
g_j^(1..m); worker i holds the d = s + m partitions ``i, i+1, ..., i+d-1 (mod n)`` (the cyclic
placement) and sends one vector of length l/m; any n - s workers recover every piece sum.

Construction (the paper's polynomials): distinct evaluation points theta_0..theta_{n-1}
(``nodes``: Chebyshev by default, for conditioning; ``integers`` gives integer matrices).
For partition j,

* ``p_j^(1)(x) = prod_{t=1}^{n-d} (x - theta_{j+t})``: it vanishes at the n - d workers
  j+1, ..., j+n-d (mod n) that do not hold j;
* ``p_j^(u)(x) = x p_j^(u-1)(x) - c_{u-1} p_j^(1)(x)`` for u = 2..m, with ``c_{u-1}`` the
  coefficient of x^(n-d-1) in p_j^(u-1) (the paper's recursion): the coefficients of
  x^(n-d), ..., x^(n-s-1) of p_j^(u) form the unit vector e_u, and p_j^(u) still vanishes at
  the non-holders.

``B[i, (u-1) n + j] = p_j^(u)(theta_i)`` (piece-major columns, as ``comm``): worker i sends
``P(theta_i)`` with ``P = sum_{j,u} p_j^(u) g_j^(u)`` of degree <= n - s - 1, whose coefficient
of x^(n-d+u-1) is ``sum_j g_j^(u)``; any n - s workers interpolate P (the last m rows of the
inverse Vandermonde, the structured decoder of ``comm``).

Relation to gctool's ``comm``: a polynomial with those roots and those top coefficients is
unique (an upper triangular system with unit diagonal), so this is ``comm``'s construction with
the paper's cyclic placement (``comm`` spreads partitions round-robin for any k) and the paper's
recursion to compute it; tests check both against brute force.
"""

from __future__ import annotations

from typing import Any

from gctool._lazy import numpy as np
from gctool.algebra.fields import Field
from gctool.budget import Budget
from gctool.codes.vandermonde import COLUMN_ORDER, NODES_PARAM, decode_batch
from gctool.errors import DesignError
from gctool.family import Family
from gctool.params import LABEL
from gctool.registry.info import CONDITION_KEYS, Param, StructuredDecoder

PLACEMENT = "cyclic: worker i holds partitions i, i+1, ..., i+d-1 (mod n)"


def polynomials(theta: np.ndarray, s: int, m: int) -> np.ndarray:
    """Coefficients (ascending powers) of p_j^(u): array (m, n, n - s), by the recursion."""
    n = len(theta)
    d, L = s + m, n - s
    P = np.zeros((m, n, L), dtype=theta.dtype)
    for j in range(n):
        first = np.ones(1, dtype=theta.dtype)
        for t in range(1, n - d + 1):  # multiply by (x - theta_{j+t})
            first = np.concatenate([[0], first]) - theta[(j + t) % n] * np.concatenate(
                [first, [0]])
        P[0, j, : len(first)] = first
        for u in range(1, m):
            prev = P[u - 1, j]
            c = prev[n - d - 1] if n - d >= 1 else 0
            shifted = np.concatenate([[0], prev[:-1]])
            P[u, j] = shifted - c * P[0, j]
    return P


def build(n: int, s: int, k: int | None, field: Field, rng: Any, m: int = 2,  # noqa: PLR0913 (the scheme's options)
          nodes: str = "auto", *, budget: Budget) -> tuple[np.ndarray, dict[str, Any]]:
    from gctool.codes._algebra import nodes as make_nodes
    from gctool.codes.conditioning import record

    if isinstance(m, bool) or not isinstance(m, int) or m < 1:
        raise DesignError(f"`m` must be an integer >= 1, got {m!r}", param="m")
    if field.is_finite:
        raise DesignError(f"ye-abbe is built over the reals or the complex numbers, not "
                          f"{field}; 'comm' is the same construction over GF(q)")
    if k is not None and k != n:
        raise DesignError(f"ye-abbe is the paper's k = n construction (got k = {k}); use "
                          "'comm' for any k")
    d = s + m
    if d > n:
        raise DesignError(f"ye-abbe needs d = s + m <= n, but s + m = {d} > n = {n}; the "
                          f"largest m for n = {n}, s = {s} is {n - s}")
    theta, kind = make_nodes(n, field, nodes)
    theta = np.asarray(theta, dtype=field.dtype)
    P = polynomials(theta, s, m)
    powers = theta[:, None] ** np.arange(n - s)[None, :]  # (n, L)
    B = np.zeros((n, n * m), dtype=field.dtype)
    for u in range(m):
        values = powers @ P[u].T  # values[i, j] = p_j^(u)(theta_i)
        for i in range(n):
            held = [(i + t) % n for t in range(d)]
            B[i, u * n + np.array(held)] = values[i, held]
    return B, {"m": m, "column_order": COLUMN_ORDER, "placement": PLACEMENT, "nodes": kind,
               "load": d, **record(B, field, s, budget=budget, m=m)}


class YeAbbeFamily(Family):
    name = "ye-abbe"
    build = staticmethod(build)
    summary = (
        "Ye & Abbe's communication-efficient code as the paper builds it (k = n, cyclic "
        "placement, the paper's polynomial recursion)."
    )
    description = (
        "Every partial gradient is split into m pieces; worker i holds partitions i..i+d-1 "
        "(mod n), d = s+m, and sends one vector of length l/m: the value at theta_i of "
        "P(x) = sum_{j,u} p_j^(u)(x) g_j^(u), where p_j^(1) vanishes at the workers without "
        "partition j and p_j^(u) = x p_j^(u-1) - c p_j^(1) puts the unit vector e_u in the "
        "top m coefficients. Any n-s workers interpolate P and read the piece sums. k = n; "
        "the same polynomials as 'comm' on the paper's cyclic placement."
    )
    reference = "Ye & Abbe, ICML 2018 (YA18), the polynomial construction of Sec. 3-4"
    fields = "real, complex"
    params = (Param("m", "int", "Pieces per gradient (communication reduction factor).",
                    default=2, short="-m", flag="pieces"), NODES_PARAM)
    report_keys = ("m", "load", *CONDITION_KEYS)
    examples = ("gctool design ye-abbe -n 6 -s 2 -m 2",
                "gctool design ye-abbe -n 8 -s 1 -m 3 `nodes` integers")
    records_conditioning = True
    self_checked = True
    structured_decoder = StructuredDecoder(
          decode_batch, "ye-abbe: last m rows of the inverse Vandermonde")
    file_params = {"nodes": LABEL, "column_order": LABEL, "placement": LABEL}
