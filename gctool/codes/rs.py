"""Reed–Solomon gradient codes in the style of Halbawi, Azizan, Salehi, Hassibi 2018
(reference §2.2), for any n, k and s < n.

1. Mask: partition j is held by the s+1 workers ``(j(s+1) + t) mod n``, t = 0..s (round-robin),
   so every column has exactly s+1 holders and row loads are floor or ceil of k(s+1)/n: the
   largest load is ceil(k(s+1)/n), the lower bound, for every n and k.
2. Nodes: distinct alpha_0..alpha_{n-1}; G[i, l] = alpha_i^l is the n x (n-s) Reed–Solomon
   (Vandermonde) generator.
3. Column j of T holds the coefficients of ``t_j(x) = prod_{i not holding j} (x - alpha_i)``
   (monic, degree n-s-1), and ``B = G T``, i.e. ``B[i, j] = t_j(alpha_i)``, zero off the mask.

Any n-s survivors see n-s evaluations of ``P(x) = sum_j t_j(x) g_j`` (degree n-s-1), whose
leading coefficient is the full gradient: ``a_F = G_F^{-T} e_{n-s}``, in closed form
``a_i = 1 / prod_{l in F, l != i} (alpha_i - alpha_l)`` (:func:`decode_batch`).

Nodes (``nodes``): Chebyshev nodes over the reals (default, for conditioning), roots of unity
over the complex numbers, ``0..n-1`` over GF(q) (needs q >= n; ``unity`` needs n | q - 1).
The reference's integer example (n = k = 5, s = 1) is ``nodes integers`` over the reals.
"""

from __future__ import annotations

from typing import Any

from gctool._lazy import numpy as np
from gctool.algebra.fields import Field
from gctool.budget import Budget
from gctool.codes.vandermonde import (
    NODES_PARAM,
    choose_node_field,
    lagrange_top,
    masked_matrix,
    plain_nodes,
    scatter,
)
from gctool.family import Family
from gctool.params import LABEL
from gctool.registry.info import CONDITION_KEYS, StructuredDecoder


def build(n: int, s: int, k: int | None, field: Field, rng: Any, nodes: str = "auto",
          *, budget: Budget
          ) -> tuple[np.ndarray, dict[str, Any]]:
    from gctool.codes.conditioning import record

    k = n if k is None else k
    values, hold, _, kind = masked_matrix(n, k, s + 1, field, nodes)
    B = scatter(values, hold, n, k, field)
    recorded = {"nodes": kind, **record(B, field, s, budget=budget)}
    note = repetition_note(n, s, k)
    if note is not None:  # printed like the design's other warnings, and in its report
        recorded["warnings"] = [note]
    return B, recorded


def repetition_note(n: int, s: int, k: int) -> str | None:
    """What the design says when (s + 1) | n (s >= 1): the round-robin mask then gives
    partition j to the group ``j mod (n/(s+1))`` of s + 1 consecutive workers alone, and its
    column ``t_j(alpha)`` depends only on those holders, so each row is a multiple of its
    group's indicator: a fractional repetition code with scaled rows, of rank the number of
    groups holding a partition, ``min(k, n/(s+1))`` (numerical rank over R/C).  None
    otherwise (the windows of holders then overlap)."""
    if s < 1 or n % (s + 1):
        return None
    groups = n // (s + 1)
    return (f"s + 1 = {s + 1} divides n = {n}: each group of {s + 1} consecutive workers holds "
            f"its own partitions, with equal columns, so the rows of a group are proportional "
            f"and this rs design is a fractional repetition code in disguise (rank "
            f"{min(k, groups)}: one per group holding a partition); 'gctool design frc' "
            "builds that code with rows of ones")


# -- structured decoding -----------------------------------------------------------------------
def decode_batch(code: Any, U: np.ndarray) -> np.ndarray:
    """Structured decoding vectors ``a_F = G_F^{-T} e_{n-s}`` (last row of the inverse
    Vandermonde) for survivor sets U of shape (b, n - s): shape (b, 1, n - s)."""
    from gctool.algebra.gf import plain_arith

    alpha = plain_nodes(code)
    return np.asarray(lagrange_top(alpha[U], 1, ar=plain_arith(code.field)),
                      dtype=code.field.dtype)


class RSFamily(Family):
    name = "rs"
    build = staticmethod(build)
    summary = "Reed-Solomon code for any n, k, s < n, meeting the load bound ceil(k(s+1)/n)."
    description = (
        "Partition j is held by the s+1 workers (j(s+1)+t) mod n (balanced: row loads "
        "differ by at most one). B = G T with G[i, l] = alpha_i^l the Reed-Solomon "
        "generator and column j of T the coefficients of t_j(x) = prod_{i not holding j} "
        "(x - alpha_i), so B[i, j] = t_j(alpha_i). Any n-s survivors interpolate "
        "P(x) = sum_j t_j(x) g_j, whose leading coefficient is the gradient. Nodes: "
        "Chebyshev over the reals (default), roots of unity over the complex numbers, "
        "0..n-1 over GF(q) (q >= n). k defaults to n. Real and complex designs record the "
        "worst-case condition number (estimated, and marked so, when exhaustive is too "
        "expensive): real Vandermonde systems become ill-conditioned as n-s grows."
    )
    reference = (
        "Halbawi, Azizan, Salehi, Hassibi, ISIT 2018 (HASH18); reference §2.2 "
        "(mask and encoding as reconstructed there)"
    )
    fields = "real, complex, GF(q) with q >= n (`field` auto: the smallest prime >= n)"
    params = (NODES_PARAM,)
    report_keys = ("nodes", *CONDITION_KEYS, "warnings")
    examples = (
        "gctool design rs -n 5 -s 1 `nodes` integers",
        "gctool design rs -n 4 -k 6 -s 1 -o rs.json",
        "gctool design rs -n 40 -k 60 -s 5 `field` 'GF(257)' -o rs.npz",
    )
    choose_field = staticmethod(choose_node_field)
    records_conditioning = True
    self_checked = True
    structured_decoder = StructuredDecoder(
          decode_batch, "rs: last row of the inverse Vandermonde")
    file_params = {"nodes": LABEL}
