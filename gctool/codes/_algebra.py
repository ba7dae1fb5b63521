"""Shared algebra of the algebraic schemes (cyclic-mds, rs, comm): evaluation nodes, balanced
support masks, polynomial helpers and the field suggestions used in error messages.

Arithmetic is written once for every field through the plain arithmetic of
:func:`gctool.algebra.gf.plain_arith`: numpy numbers over the reals and complex numbers, int64
representations over GF(q) (exp/log tables, no galois field class: constructing one compiles
its arithmetic, seconds per process).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gctool.algebra.fields import Field
from gctool.algebra.primes import binary_degree, primes_1_mod, smallest_prime_at_least
from gctool.errors import DesignError

NODE_KINDS = ("auto", "chebyshev", "unity", "integers")


# -- primes and fields -------------------------------------------------------------------------
def root_of_unity_fields(n: int) -> tuple[list[str], Field]:
    """Fields GF(q) with n | q - 1 to suggest, and the smallest of them (prime or GF(2^m))."""
    primes = primes_1_mod(n, 3)
    m = binary_degree(n)
    names = [f"GF({p})" for p in primes]
    candidates = [Field("gf", p, 1) for p in primes[:1]]
    if m is not None and m > 1:
        names.append(f"GF(2^{m})")
        candidates.append(Field("gf", 2, m))
    elif m == 1:  # n = 1
        candidates.append(Field("gf", 2, 1))
    if not candidates:
        raise DesignError(f"no field GF(q) with q < 2^31 has a primitive {n}-th root of unity")
    return names, min(candidates, key=lambda f: f.order)


# -- masks -------------------------------------------------------------------------------------
def balanced_mask(n: int, k: int, r: int) -> np.ndarray:
    """Support mask with exactly r holders per column and row loads within one of each other.

    Column j is held by workers ``(j*r + t) mod n`` for t = 0..r-1: the pairs (j, t) walk
    through the workers round-robin, so every worker gets floor(kr/n) or ceil(kr/n) partitions
    (reference §2.2).  Needs r <= n.
    """
    j = np.arange(k)[:, None]
    t = np.arange(r)[None, :]
    mask = np.zeros((n, k), dtype=bool)
    mask[(j * r + t) % n, np.broadcast_to(j, (k, r))] = True
    return mask


def holders(mask: np.ndarray) -> np.ndarray:
    """(k, r) array: the holders of each column (every column has the same weight r)."""
    cols = mask.T
    r = int(cols[0].sum())
    return np.nonzero(cols)[1].reshape(cols.shape[0], r)


# -- nodes -------------------------------------------------------------------------------------
def nodes(n: int, field: Field, kind: str) -> tuple[Any, str]:
    """n distinct evaluation nodes in ``field`` and the kind actually used.

    * ``chebyshev`` (reals, default): ``2 cos(pi (2i+1) / (2n))``, Chebyshev nodes scaled to
      [-2, 2].  The reference writes them on [-1, 1]; scaling all nodes by c multiplies B by the
      constant c^(deg) and changes nothing else, and on [-2, 2] (capacity 1) the products in B
      stay of moderate size instead of underflowing for large n.
    * ``unity`` (complex default; GF(q) when n | q - 1): ``w^i`` with w a primitive n-th root.
    * ``integers`` (GF(q) default; also reals): ``0, 1, ..., n-1`` (field elements by their
      integer representation over GF(q)).
    """
    if kind not in NODE_KINDS:
        raise DesignError(f"unknown node kind {kind!r}; use one of {', '.join(NODE_KINDS)}")
    if kind == "auto":
        kind = {"real": "chebyshev", "complex": "unity", "gf": "integers"}[field.kind]
    i = np.arange(n)
    if field.is_finite:
        if kind == "chebyshev":
            raise DesignError("Chebyshev nodes exist only over the reals; over GF(q) use "
                              "`nodes`=integers or unity")
        if kind == "unity":
            from gctool.algebra.gf import plain_arith, powers_of

            w = np.int64(root_of_unity(n, field))
            return powers_of(plain_arith(field), w, n, np.int64), kind
        if field.order < n:
            raise DesignError(
                f"{field} has only {field.order} elements but n = {n} workers need distinct "
                f"nodes; use GF(q) with q >= n, e.g. GF({smallest_prime_at_least(n)})"
            )
        return i.astype(np.int64), kind
    if kind == "chebyshev":
        if field.kind == "complex":
            return (2 * np.cos(np.pi * (2 * i + 1) / (2 * n))).astype(complex), kind
        return 2 * np.cos(np.pi * (2 * i + 1) / (2 * n)), kind
    if kind == "unity":
        if field.kind == "real":
            raise DesignError("roots of unity are complex: use `field`=complex, or "
                              "`nodes`=chebyshev over the reals")
        return np.exp(2j * np.pi * i / n), kind
    return i.astype(field.dtype), kind


def root_of_unity(n: int, field: Field) -> int:
    """A primitive n-th root of unity of GF(q) (needs n | q - 1): the primitive element to the
    power (q-1)/n, as an integer representation."""
    from gctool.algebra.gf import plain_arith

    q = field.order
    if (q - 1) % n:
        names, _ = root_of_unity_fields(n)
        raise DesignError(
            f"{field} has no primitive {n}-th root of unity: n = {n} must divide q - 1 = {q - 1}; "
            f"suitable fields: {', '.join(names)} (or use `field`=auto)"
        )
    return gf_root_of_unity(plain_arith(field), field, n)


# -- polynomials -------------------------------------------------------------------------------
def poly_from_roots(roots: Any, one: Any) -> np.ndarray:
    """Coefficients (ascending) of prod (x - r) over the reals or complex numbers; ``one`` is
    the 1-element array of the field."""
    g = one.copy()
    for r in roots:
        nxt = np.concatenate([np.zeros_like(g[:1]), g])  # x * g
        nxt[:-1] = nxt[:-1] - r * g
        g = nxt
    return g


def node_products(alpha: Any, hold: np.ndarray, ar: Any) -> np.ndarray:
    """Z_j(alpha_i) for every column j and each of its holders i, as a (k, r) array.

    ``Z_j(x) = prod_{l not holding j} (x - alpha_l)``.  With ``D_i = prod_{l != i}
    (alpha_i - alpha_l)`` this is ``D_i / prod_{l holds j, l != i} (alpha_i - alpha_l)``, so
    the cost is O(n^2 + k r^2) instead of O(k n r).  ``ar`` is the field's plain arithmetic
    (:func:`gctool.algebra.gf.plain_arith`).
    """
    from gctool.algebra.gf import prod_last

    n = alpha.shape[0]
    diff = ar.sub(alpha[:, None], alpha[None, :])
    diff[np.arange(n), np.arange(n)] = 1
    with np.errstate(all="ignore"):  # over R and C: out of range is refused (check_range)
        D = prod_last(ar, diff)  # (n,)
        sub = ar.sub(alpha[hold][:, :, None], alpha[hold][:, None, :])  # (k, r, r)
        r = hold.shape[1]
        sub[:, np.arange(r), np.arange(r)] = 1
        return ar.div(D[hold], prod_last(ar, sub))


def check_range(values: Any, alpha: Any, field: Field, kind: str, scheme: str,
                nonzero: bool = True) -> None:
    """Refuse a real or complex algebraic design whose entries (``values``, computed from the
    nodes ``alpha``; ``nonzero``: exactly nonzero) fall outside float64's range (overflow to
    inf or NaN, underflow to 0), naming the cause: the number of nodes, their kind and the
    size of their products."""
    if field.is_finite:
        return
    vals = np.asarray(values)
    if np.all(np.isfinite(vals) & ((vals != 0) if nonzero else True)):
        return
    n = alpha.shape[0]
    diff = np.abs(alpha[:, None] - alpha[None, :])
    diff[np.arange(n), np.arange(n)] = 1
    logs = np.log10(diff).sum(axis=1)  # log10 |prod_{l != i} (alpha_i - alpha_l)|
    lo, hi = float(logs.min()), float(logs.max())
    size = f"about 1e{hi:.0f}" if hi > -lo else f"about 1e{lo:.0f}"
    raise DesignError(
        f"the {field} {scheme} design with n = {n} and `nodes` {kind} has entries outside "
        f"float64's range (the products of node differences reach {size}); use fewer workers, "
        "`nodes`=chebyshev over the reals, or a finite field (`field`=auto)")


#: entries of one block of running products in :func:`window_products`
WINDOW_BLOCK = 2**22


def window_products(alpha: Any, hold: np.ndarray, ar: Any) -> np.ndarray:
    """:func:`node_products` for the round-robin mask of :func:`balanced_mask` (``hold`` =
    its :func:`holders`) over GF(q), in O(n^2 + k r) steps and bounded memory instead of
    O(n^2 + k r^2).

    The n - r workers not holding column j are consecutive (cyclically) from
    ``b_j = (j r + r) mod n``, so ``Z_j(alpha_i)`` is the product of a window of
    ``alpha_i - alpha_l`` over l = 0, 1, ..., n-1, 0, 1, ... (:meth:`GFArith.window_prod`).
    The term l = i is replaced by 1: worker i is never a non-holder of a column it holds.
    Exact, so the values are those of :func:`node_products`.
    """
    n, (k, r) = alpha.shape[0], hold.shape
    start = (np.arange(k) * r + r) % n
    span = int(start.max()) + n - r
    seq = np.arange(span) % n
    out = np.zeros((k, r), dtype=np.int64)
    width = max(1, WINDOW_BLOCK // max(span, 1))
    for lo in range(0, n, width):  # a block of workers i at a time (bounded memory)
        hi = min(n, lo + width)
        T = ar.sub(alpha[None, lo:hi], alpha[seq][:, None])  # T[u, i] = alpha_i - alpha_seq[u]
        own = (seq >= lo) & (seq < hi)
        T[np.nonzero(own)[0], seq[own] - lo] = 1
        j, t = np.nonzero((hold >= lo) & (hold < hi))
        out[j, t] = ar.window_prod(T, start[j], start[j] + n - r, hold[j, t] - lo)
    return out


# -- plain arithmetic (structured decoders) ----------------------------------------------------
def gf_root_of_unity(ar: Any, field: Field, n: int) -> int:
    """The primitive n-th root of unity of :func:`root_of_unity` (the primitive element to the
    power (q-1)/n), computed without galois."""
    q = field.order
    if (q - 1) % n:
        raise DesignError(f"{field} has no primitive {n}-th root of unity")
    return int(ar.power(ar.primitive(), (q - 1) // n))


def to_plain(M: Any, field: Field) -> np.ndarray:
    """Values in the field's dtype (int64 representations over GF(q))."""
    return np.asarray(M, dtype=field.dtype)
