"""The Vandermonde and Lagrange algebra shared by the evaluation-node schemes: ``rs`` and
``comm`` (their ``nodes`` and ``field`` auto, B's masked values, the decoding rows);
``cyclic-mds`` uses the Lagrange rows and the batched node polynomials."""

from __future__ import annotations

from typing import Any

from gctool._lazy import numpy as np
from gctool.algebra.fields import Field
from gctool.errors import DesignError, InvalidInput
from gctool.registry.info import Param

#: ``nodes`` (shared with ``comm``)
NODES_PARAM = Param(
    "nodes", "choice",
    "Evaluation nodes: chebyshev (reals), unity (roots of unity: complex, or GF(q) with "
    "n | q-1), integers (0..n-1: GF(q) with q >= n, or the reals); auto picks the first "
    "that fits the field.",
    default="auto", choices=("auto", "chebyshev", "unity", "integers"),
)


def choose_node_field(n: int | None, s: int | None = None, k: int | None = None,
                 **params: Any) -> Field:
    """``field`` auto: the smallest prime field with at least n elements (distinct nodes);
    with ``nodes`` unity the smallest field with n | q - 1."""
    from gctool.algebra.primes import smallest_prime_at_least
    from gctool.codes._algebra import root_of_unity_fields

    if n is None:
        raise DesignError("`field` auto needs `n`")
    if params.get("nodes") == "unity":
        return root_of_unity_fields(n)[1]
    return Field("gf", smallest_prime_at_least(n), 1)


def masked_matrix(n: int, k: int, r: int, field: Field, node_kind: str, scheme: str = "rs"
                  ) -> tuple[Any, np.ndarray, Any, str]:
    """(B restricted to the mask as values, holders (k, r), nodes, node kind); values outside
    float64's range are refused (:func:`gctool.codes._algebra.check_range`)."""
    from gctool.algebra.gf import plain_arith
    from gctool.codes._algebra import (
        balanced_mask,
        check_range,
        holders,
        node_products,
        nodes,
        window_products,
    )

    alpha, kind = nodes(n, field, node_kind)
    hold = holders(balanced_mask(n, k, r))
    products = window_products if field.is_finite else node_products
    values = products(alpha, hold, plain_arith(field))
    check_range(values, alpha, field, kind, scheme)
    return values, hold, alpha, kind


def scatter(values: Any, hold: np.ndarray, n: int, k: int, field: Field) -> np.ndarray:
    """Place (k, r) values at B[hold[j, t], j]."""
    from gctool.codes._algebra import to_plain

    plain = to_plain(values, field)
    B = np.zeros((n, k), dtype=plain.dtype)
    B[hold, np.arange(k)[:, None]] = plain
    return B


def lagrange_top(x: Any, rows: int, lowest_only: bool = False, ar: Any = None) -> np.ndarray:
    """The top ``rows`` rows of V^{-1} for the Vandermonde V[i, l] = x_i^l (L x L).

    Row l of V^{-1} holds the coefficients of x^l of the Lagrange basis polynomials
    ``ell_i(x) = W(x) / ((x - x_i) W'(x_i))``, ``W = prod (x - x_l)``.  ``x`` has shape (L,) or
    (b, L) (one node set per survivor set); the result has shape (rows, L) or (b, rows, L):
    entry [u, i] is the coefficient of x^(L - rows + u) in ell_i.  With ``lowest_only`` only
    the coefficient of x^(L - rows) is kept (one row).  O(L^2) per set, in O(L) array
    operations per batch.  ``ar`` is the field's plain arithmetic
    (:func:`gctool.algebra.gf.plain_arith`; default: numpy).  A set with repeated nodes
    (only in a tampered file) gets a zero vector, which the caller's check rejects.
    """
    from gctool.algebra.gf import NumericArith, prod_last

    ar = NumericArith() if ar is None else ar
    if x.ndim == 1:
        return lagrange_top(x[None, :], rows, lowest_only, ar)[0]
    L = x.shape[1]
    diff = ar.sub(x[:, :, None], x[:, None, :])
    diff[:, np.arange(L), np.arange(L)] = 1
    dW = prod_last(ar, diff)  # (b, L): W'(x_i)
    W = poly_from_roots_batch(x, ar)  # (b, L + 1), ascending
    out = [np.ones_like(x)]  # coefficient of x^(L-1) of W/(x - x_i) is 1
    for t in range(L - 1, L - rows, -1):  # q_{t-1} = w_t + x_i q_t
        nxt = ar.add(W[:, t:t + 1], ar.mul(x, out[-1]))
        out = [nxt] if lowest_only else [*out, nxt]
    Q = np.stack(out[::-1], axis=1)  # (b, rows or 1, L)
    bad = (dW == 0).any(axis=1)
    if bad.any():
        dW[bad] = 1
        Q[bad] = 0
    return ar.mul(Q, ar.inv(dW)[:, None, :])


def poly_from_roots_batch(x: Any, ar: Any) -> np.ndarray:
    """Ascending coefficients of prod_l (y - x[:, l]) for each row of x: shape (b, L + 1)."""
    b, L = x.shape
    g = np.zeros_like(x, shape=(b, L + 1))
    g[:, 0] = 1
    zero = np.zeros_like(x[:, :1])
    for t in range(L):  # g <- (y - x_t) g: degree t -> t + 1
        old = g[:, :t + 2].copy()
        g[:, 1:t + 2] = ar.sub(old[:, :t + 1], ar.mul(x[:, t:t + 1], old[:, 1:t + 2]))
        g[:, :1] = ar.sub(zero, ar.mul(x[:, t:t + 1], old[:, :1]))
    return g


def plain_nodes(code: Any) -> np.ndarray:
    """The code's evaluation nodes as a plain array (int64 representations over GF(q)), as
    :func:`gctool.codes._algebra.nodes` builds them; a file whose nodes cannot exist is
    invalid input."""
    from gctool.codes._algebra import nodes

    try:
        return nodes(code.n, code.field, code.params.get("nodes", "auto"))[0]
    except DesignError as exc:
        raise InvalidInput(f"nodes of this {code.field} code: {exc}") from None


#: the column order of the m-piece codes (comm, ye-abbe)
COLUMN_ORDER = "piece-major: column u*k + j is piece u of partition j"


def decode_batch(code: Any, U: np.ndarray) -> np.ndarray:
    """The structured decoder of the m-piece codes (comm, ye-abbe): decoding matrices for
    survivor sets U of shape (b, n - s), the last m rows of the inverse Vandermonde, shape
    (b, m, n - s).  Row u recovers sum_j g_j^(u)."""
    from gctool.algebra.gf import plain_arith

    alpha = plain_nodes(code)
    return np.asarray(lagrange_top(alpha[U], code.m, ar=plain_arith(code.field)),
                      dtype=code.field.dtype)
