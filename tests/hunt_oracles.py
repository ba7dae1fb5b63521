"""Brute-force oracles of the hunt tests (tests/*/test_hunt_*.py), written without gctool's
arithmetic: finite fields by tables built here from the field's irreducible polynomial (galois
only names the polynomial), the reals and complex numbers by exact rational arithmetic
(:func:`oracles.exact_lstsq_error`).  Also the small codes the hunts draw: random ones with
zero, repeated and scaled rows, and designed ones with structured decoders."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from fractions import Fraction
from functools import cache
from typing import Any

import numpy as np

from gctool.algebra.fields import Field, parse_field
from gctool.codes import design
from gctool.errors import GctoolError
from gctool.model import GradientCode

from oracles import exact_lstsq_error

#: the default decoding tolerance as typed (1e-9): a set decodes when its error is <= TOL k
TOL = Fraction(1, 10**9)


@cache
def _tables(p: int, m: int, poly: int) -> tuple[np.ndarray, np.ndarray]:
    """(add, mul) tables of GF(p^m) on the integer representation (base-p digits, highest
    power first, as gctool's files and galois write elements), reduced by ``poly``."""
    q = p**m

    def digits(x: int) -> list[int]:
        return [(x // p**e) % p for e in range(m)]  # lowest power first

    def number(d: list[int]) -> int:
        return sum(c * p**e for e, c in enumerate(d))

    red = [(poly // p**e) % p for e in range(m + 1)]  # monic, lowest power first
    add = np.array([[number([(a + b) % p for a, b in zip(digits(x), digits(y), strict=True)])
                     for y in range(q)] for x in range(q)], dtype=np.int64)
    mul = np.zeros((q, q), dtype=np.int64)
    for x in range(q):
        for y in range(q):
            prod = [0] * (2 * m)
            for i, a in enumerate(digits(x)):
                for j, b in enumerate(digits(y)):
                    prod[i + j] = (prod[i + j] + a * b) % p
            for e in range(2 * m - 1, m - 1, -1):  # x^e = x^(e-m) * (x^m - poly)
                c, prod[e] = prod[e], 0
                for t in range(m):
                    prod[e - m + t] = (prod[e - m + t] - c * red[t]) % p
            mul[x, y] = number(prod[:m])
    return add, mul


def field_tables(field: Field) -> tuple[np.ndarray, np.ndarray]:
    """(add, mul) tables of a finite field of gctool (small orders only)."""
    poly = field.poly
    if field.m > 1 and poly is None:
        poly = int(field.galois().irreducible_poly)
    return _tables(field.p, field.m, poly if field.m > 1 else field.p)


def _gauss_rank(R: list[list[int]], inv: Callable[[int], int], mul: Callable[[int, int], int],
                sub: Callable[[int, int], int]) -> int:
    """Rank of the rows R (lists of field elements as ints) by Gauss-Jordan elimination in the
    arithmetic given by inv, mul and sub."""
    rank = 0
    for c in range(len(R[0]) if R else 0):
        piv = next((i for i in range(rank, len(R)) if R[i][c]), None)
        if piv is None:
            continue
        R[rank], R[piv] = R[piv], R[rank]
        iv = inv(R[rank][c])
        R[rank] = [mul(iv, x) for x in R[rank]]
        for i in range(len(R)):
            if i != rank and R[i][c]:
                f = R[i][c]
                R[i] = [sub(x, mul(f, y)) for x, y in zip(R[i], R[rank], strict=True)]
        rank += 1
    return rank


def _rank_mod(p: int, M: np.ndarray) -> int:
    """Rank of M modulo a prime p on Python integers."""
    R = [[int(x) % p for x in row] for row in np.asarray(M, dtype=np.int64)]
    return _gauss_rank(R, lambda x: pow(x, p - 2, p), lambda x, y: x * y % p,
                       lambda x, y: (x - y) % p)


def rank_gf(field: Field, M: np.ndarray) -> int:
    """Rank of M over the finite field by Gauss-Jordan elimination on the tables (prime
    fields above GF(256): on Python integers modulo p)."""
    if field.m == 1 and field.p > 256:
        return _rank_mod(field.p, M)
    add, mul = field_tables(field)
    q = field.order
    neg = np.array([int(np.flatnonzero(add[x] == 0)[0]) for x in range(q)])
    inv = np.array([0] + [int(np.flatnonzero(mul[x] == 1)[0]) for x in range(1, q)])
    R = [list(map(int, row)) for row in np.asarray(M, dtype=np.int64)]
    return _gauss_rank(R, lambda x: int(inv[x]), lambda x, y: int(mul[x, y]),
                       lambda x, y: int(add[x, neg[y]]))


def gf_product(field: Field, a: np.ndarray, M: np.ndarray) -> np.ndarray:
    """a @ M over the finite field (a: (m, f), M: (f, K)), on the tables."""
    add, mul = field_tables(field)
    a, M = np.asarray(a, dtype=np.int64), np.asarray(M, dtype=np.int64)
    out = np.zeros((a.shape[0], M.shape[1]), dtype=np.int64)
    for i in range(a.shape[1]):
        out = add[out, mul[a[:, i][:, None], M[i][None, :]]]
    return out


def exact_error(code: GradientCode, F: tuple[int, ...]) -> Fraction:
    """The survivors' error: over R/C ``min_a ||a^T B_F - T||^2`` in exact rationals (||T||^2
    for no survivor); over GF(q) 0 when the targets lie in the row space of B_F, else 1."""
    B, T = np.asarray(code.B), code.targets()
    if code.field.is_finite:
        if not F:
            return Fraction(1)
        rows = B[list(F)]
        same = rank_gf(code.field, np.vstack([rows, T])) == rank_gf(code.field, rows)
        return Fraction(0 if same else 1)
    if not F:
        return Fraction(int(np.sum(np.abs(T) ** 2)))
    return exact_lstsq_error(B, F, T)


def decodes(code: GradientCode, F: tuple[int, ...], tol: Fraction = TOL) -> bool:
    """The documented rule, exactly: exact recovery over GF(q), error <= tol k over R/C."""
    return exact_error(code, F) <= (0 if code.field.is_finite else tol * code.k)


def vector_error(a: np.ndarray, BF: np.ndarray, T: np.ndarray) -> Fraction:
    """``||a B_F - T||^2`` of the given float vectors, exactly (complex entries realified)."""
    def fr(x: Any) -> tuple[Fraction, Fraction]:
        return Fraction(float(np.real(x))), Fraction(float(np.imag(x)))

    total = Fraction(0)
    for u, j in itertools.product(range(T.shape[0]), range(BF.shape[1])):
        re, im = -fr(T[u, j])[0], -fr(T[u, j])[1]
        for i in range(BF.shape[0]):
            (ar, ai), (br, bi) = fr(a[u, i]), fr(BF[i, j])
            re += ar * br - ai * bi
            im += ar * bi + ai * br
        total += re * re + im * im
    return total


def errors_by_set(code: GradientCode) -> dict[tuple[int, ...], Fraction]:
    """:func:`exact_error` of the survivors of every straggler set S (keys: sorted S), with
    errors within the tolerance (``TOL k``) counted as 0, as gctool's audits count them."""
    n, out = code.n, {}
    for t in range(n + 1):
        for S in itertools.combinations(range(n), t):
            e = exact_error(code, tuple(i for i in range(n) if i not in S))
            out[S] = Fraction(0) if not code.field.is_finite and e <= TOL * code.k else e
    return out


def threshold(errors: dict[tuple[int, ...], Fraction], n: int,
              eps: Fraction = Fraction(0)) -> int | None:
    """T_eps: the fewest stragglers whose error exceeds eps (None: no set does)."""
    return next((t for t in range(n + 1)
                 if any(e > eps for S, e in errors.items() if len(S) == t)), None)


def random_code(rng: np.random.Generator, fields: tuple[str, ...]) -> GradientCode:
    """A small code of no scheme: integer (or 0/1) entries, a repeated row (scaled by 2 over
    R/C), sometimes a zero row or a zero column; n in 2..6, k in 1..7 (wide codes too)."""
    f = parse_field(str(rng.choice(fields)))
    n, k = int(rng.integers(2, 7)), int(rng.integers(1, 8))
    if f.is_finite:
        B = rng.integers(0, f.order, (n, k))
        B[rng.random((n, k)) < 0.4] = 0
    else:
        B = rng.integers(-2, 3, (n, k)).astype(float)
        if rng.random() < 0.4:
            B = (rng.random((n, k)) < 0.5).astype(float)
        if f.kind == "complex":
            B = B + 1j * rng.integers(-1, 2, (n, k)) * (B != 0)
    if n > 2 and rng.random() < 0.5:
        B[1] = B[0] * (1 if f.is_finite else 2)
    if rng.random() < 0.2:
        B[-1] = 0
    if k > 1 and rng.random() < 0.2:
        B[:, -1] = 0
    if not B.any():
        B[0, 0] = 1
    return GradientCode(B, f, int(rng.integers(0, n)))


def structured_code(rng: np.random.Generator) -> GradientCode | None:
    """A designed rs, cyclic-mds, comm or cyclic code of a few workers over a random field
    (None when the parameters do not fit the scheme)."""
    field = str(rng.choice(["real", "complex", "GF(7)", "GF(11)", "GF(13)", "GF(2^3)"]))
    scheme = str(rng.choice(["rs", "cyclic-mds", "comm", "cyclic"]))
    n = int(rng.integers(3, 8))
    s = int(rng.integers(0, n - 1))
    kw: dict[str, Any] = {}
    if scheme in ("rs", "comm"):
        kw["k"] = int(rng.integers(1, 9))
    if scheme == "comm":
        kw["m"] = int(rng.integers(1, n - s + 1))
    if scheme == "cyclic-mds" and field.startswith("GF"):
        field = "auto"  # a field with n | q - 1
    try:
        return design(scheme, n=n, s=s, field=None if field == "auto" else field, seed=1, **kw)
    except GctoolError:
        return None
