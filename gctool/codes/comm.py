"""Communication-efficient gradient codes (Ye & Abbe 2018; reference §2.3).

Every partial gradient g_j is split into m equal pieces g_j^(0..m-1); each worker holds
d = s + m partitions (the Ye–Abbe trade-off d >= s + m, met with equality) and sends one vector
of length l/m.  gctool's construction (reference §2.3, "equivalent in spirit to Ye–Abbe, not
guaranteed identical to their recursion"):

* Mask: partition j is held by the d workers ``(j d + t) mod n`` (round-robin, as in ``rs``),
  so loads are floor/ceil of k(s+m)/n (= s + m when k = n).  Needs s + m <= n.
* Distinct nodes alpha_i (as in ``rs``), L = n - s.  For each (j, u):
  ``p_{j,u}(x) = Z_j(x) q_{j,u}(x)`` with ``Z_j = prod_{i not holding j} (x - alpha_i)``
  (degree L - m) and deg q <= m - 1 chosen so that the top m coefficients of p_{j,u}
  (positions L-m..L-1) are the unit vector e_u.
* ``B[i, u k + j] = p_{j,u}(alpha_i)`` (piece-major column order): worker i sends the value at
  alpha_i of ``P(x) = sum p_{j,u}(x) g_j^(u)`` (degree <= L - 1), and the coefficient of
  x^(L-m+u) of P is ``sum_j g_j^(u)``.  Any L survivors interpolate P:
  ``A_F = last m rows of V_F^{-1}`` (:func:`decode_batch`).

Computing q_{j,u}: with ``z~(y) = prod_{i not holding j} (1 - alpha_i y)`` (the reversed Z_j),
the top-coefficient conditions are an upper triangular Toeplitz system with symbol z~, so
``q_{j,u}(x) = sum_{w <= u} h_{u-w} x^w`` where ``h = 1/z~ mod y^m =
prod_{i holding j} (1 - alpha_i y) / prod_{all i} (1 - alpha_i y) mod y^m``.  Cost O(n^2 + k d m).

Recorded params: ``m``, ``column_order`` (``"piece-major: column u*k + j is piece u of
partition j"``), ``nodes``, ``replication`` (d = s + m, the workers holding each partition) and
``load`` (the most partitions a worker holds: ceil(k d / n), d when k = n).
"""

from __future__ import annotations

from typing import Any

from gctool._lazy import numpy as np
from gctool.algebra.fields import Field
from gctool.budget import Budget
from gctool.codes.vandermonde import (
    COLUMN_ORDER,
    NODES_PARAM,
    choose_node_field,
    decode_batch,
    masked_matrix,
)
from gctool.errors import DesignError
from gctool.family import Family
from gctool.params import LABEL
from gctool.registry.info import CONDITION_KEYS, Param, StructuredDecoder

__all__ = ["build"]



def _series_one_minus(roots: Any, m: int, ar: Any) -> np.ndarray:
    """prod_t (1 - r_t y) mod y^m for each row of ``roots`` (shape (b, d)) -> (b, m)."""
    c = np.zeros_like(roots, shape=(roots.shape[0], m))
    c[:, 0] = 1
    for t in range(roots.shape[1]):
        c[:, 1:] = ar.sub(c[:, 1:], ar.mul(roots[:, t:t + 1], c[:, :-1]))
    return c


def _series_inverse(e: Any, ar: Any) -> np.ndarray:
    """1 / e(y) mod y^m for a series with constant term 1 (shape (m,))."""
    inv = np.zeros_like(e)
    inv[0] = 1
    for t in range(1, e.shape[0]):
        inv[t] = ar.neg(ar.sum(ar.mul(e[1:t + 1], inv[t - 1::-1])))
    return inv


def piece_values(alpha: Any, hold: np.ndarray, Z: Any, m: int, ar: Any) -> list[np.ndarray]:
    """Values p_{j,u}(alpha_i) at the holders: array (m, k, d); ``ar`` is the field's plain
    arithmetic (:func:`gctool.algebra.gf.plain_arith`); one (k, d) array per piece."""
    h_all = _series_inverse(_series_one_minus(alpha[None, :], m, ar)[0], ar)
    e_supp = _series_one_minus(alpha[hold], m, ar)  # (k, m)
    h = np.zeros_like(e_supp)
    for t in range(m):  # h = e_supp * h_all mod y^m
        for r in range(t + 1):
            h[:, t] = ar.add(h[:, t], ar.mul(e_supp[:, r], h_all[t - r]))
    x = alpha[hold]  # (k, d)
    powers = [np.ones_like(x)]
    for _ in range(1, m):
        powers.append(ar.mul(powers[-1], x))
    out = []
    for u in range(m):
        q = np.zeros_like(x)
        for w in range(u + 1):
            q = ar.add(q, ar.mul(h[:, u - w][:, None], powers[w]))
        out.append(ar.mul(Z, q))
    return out


def build(n: int, s: int, k: int | None, field: Field, rng: Any, m: int = 2,
          nodes: str = "auto", *, budget: Budget) -> tuple[np.ndarray, dict[str, Any]]:
    from gctool.algebra.gf import plain_arith
    from gctool.codes._algebra import check_range, to_plain
    from gctool.codes.conditioning import record

    if isinstance(m, bool) or not isinstance(m, int) or m < 1:
        raise DesignError(f"`m` must be an integer >= 1, got {m!r}", param="m")
    d = s + m
    if d > n:
        raise DesignError(
            f"comm needs load d = s + m <= n, but s + m = {d} > n = {n}; the largest m for "
            f"n = {n}, s = {s} is {n - s}")
    k = n if k is None else k
    Z, hold, alpha, kind = masked_matrix(n, k, d, field, nodes, "comm")
    with np.errstate(all="ignore"):
        pieces = piece_values(alpha, hold, Z, m, plain_arith(field))
    check_range(pieces, alpha, field, kind, "comm", nonzero=False)
    B = np.zeros((n, k * m), dtype=field.dtype)
    cols = np.arange(k)[:, None]
    for u, vals in enumerate(pieces):
        B[hold, u * k + cols] = to_plain(vals, field)
    load = int(np.bincount(hold.ravel(), minlength=n).max())  # d only when k = n
    return B, {"m": m, "column_order": COLUMN_ORDER, "nodes": kind, "replication": d,
               "load": load, **record(B, field, s, budget=budget, m=m)}


class CommFamily(Family):
    name = "comm"
    build = staticmethod(build)
    summary = (
        "Communication-efficient code: m pieces per gradient, messages 1/m as long, "
        "load s+m."
    )
    description = (
        "Every partial gradient is split into m pieces; each partition is held by d = s+m "
        "workers ((j d + t) mod n, balanced) and every worker sends one vector of length "
        "l/m. B has k*m columns in piece-major order (column u*k + j is piece u of "
        "partition j); the file records m, the column order, the replication d and the "
        "load (partitions per worker: d when k = n, else ceil(k d/n)). Worker i sends "
        "P(alpha_i) where the coefficient of x^(n-s-m+u) of P is the sum of the u-th "
        "pieces, so any n-s workers recover every piece sum (decoder: last m rows of the "
        "inverse Vandermonde). Needs s+m <= n; k defaults to n. The load meets the "
        "Ye-Abbe bound load >= k(s+m)/n when n | k(s+m) (gctool bound -m M -d D)."
    )
    reference = (
        "Ye & Abbe, ICML 2018 (YA18); construction of reference §2.3 (equivalent in "
        "spirit, not guaranteed identical to their recursion)"
    )
    fields = "real, complex, GF(q) with q >= n (`field` auto: the smallest prime >= n)"
    params = (Param("m", "int", "Pieces per gradient (communication reduction factor).",
                    default=2, short="-m", flag="pieces", aliases=("--m",)), NODES_PARAM)
    report_keys = ("m", "replication", "load", *CONDITION_KEYS)
    examples = (
        "gctool design comm -n 4 -s 1 -m 2",
        "gctool design comm -n 6 -s 2 -m 2 `field` 'GF(7)' -o comm.json",
        "gctool design comm -n 10 -k 20 -s 2 -m 3 `field` complex",
    )
    choose_field = staticmethod(choose_node_field)
    records_conditioning = True
    self_checked = True
    structured_decoder = StructuredDecoder(
          decode_batch, "comm: last m rows of the inverse Vandermonde")
    file_params = {"nodes": LABEL, "column_order": LABEL}
