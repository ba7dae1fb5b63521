"""verify over GF(q) on cyclic codes (the BCH certificate's codes) against brute force.

The codes are cyclic up to row scaling, with their columns relabelled by a unit u of Z_n:
row i of B is ``gamma_i x^i g(x)`` with coefficient l at column ``l u mod n``.  The
generators g are products of factors of x^n - 1 (so that g vanishes on runs of n-th roots of
unity and the certificate applies), sometimes times a random polynomial.  Every verdict, at
every s, and every counterexample is checked by elimination over the field on tables built in
tests/hunt_oracles.py (Python integers modulo p for large primes), independent of galois and
gctool.  Fields where the roots of unity lie in GF(q) itself and fields where the certificate
works in a splitting field GF(q^e), e > 1: prime fields, GF(2^2) and GF(3^2) embedded in
GF(q^e), and GF(65537)^2, which galois' table of Conway polynomials does not hold.

Found: the splitting field's embedding searched every element of GF(q^e) for a root of
GF(q)'s polynomial (galois' ``Poly.roots``: a 3-worker code over GF(2^17) did not finish
``verify`` in minutes, over a budget of 5 s), and GF(65537)^2 stopped verify with an internal
error (galois' LookupError, exit 3).  A hunt over 450 random codes (these cyclic ones, dense and
sparse ones with repeated rows, classes of proportional rows with disjoint or overlapping
supports; GF(2) .. GF(2^31 - 1), GF(2^4) with a non-primitive polynomial; every s, --method
auto and exhaustive, --jobs 1 and 2) found no wrong verdict.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hunt_oracles import field_tables, rank_gf

from gctool.algebra.fields import Field, parse_field
from gctool.audit.verify import verify
from gctool.budget import Budget
from gctool.errors import InvalidInput
from gctool.model import GradientCode


class _Ops:
    """Addition and multiplication of one small field or of a large prime field."""

    def __init__(self, field: Field) -> None:
        self.field, self.q = field, field.order
        self.big = field.m == 1 and field.p > 256
        if not self.big:
            self.add_t, self.mul_t = field_tables(field)

    def add(self, a: int, b: int) -> int:
        return (a + b) % self.q if self.big else int(self.add_t[a, b])

    def mul(self, a: int, b: int) -> int:
        return a * b % self.q if self.big else int(self.mul_t[a, b])

    def poly_mul(self, a: list[int], b: list[int]) -> list[int]:
        out = [0] * (len(a) + len(b) - 1)
        for i, x in enumerate(a):
            for j, y in enumerate(b):
                out[i + j] = self.add(out[i + j], self.mul(x, y))
        return out

    def power(self, a: int, e: int) -> int:
        out = 1
        for _ in range(e):
            out = self.mul(out, a)
        return out


def _cyclic(field: Field, n: int, g: list[int], rng: np.random.Generator) -> np.ndarray:
    """Rows ``gamma_i x^i g(x) mod x^n - 1`` (g lowest power first), columns relabelled by a
    random unit of Z_n."""
    ops = _Ops(field)
    g = [0] * n if not any(g) else g
    base = [0] * n
    for lam, c in enumerate(g):
        base[lam % n] = ops.add(base[lam % n], c)
    units = [u for u in range(1, n) if np.gcd(u, n) == 1] or [1]
    u = int(rng.choice(units))
    B = np.zeros((n, n), dtype=np.int64)
    for i in range(n):
        gamma = int(rng.integers(1, field.order))
        for lam in range(n):
            B[i, ((i + lam) % n) * u % n] = ops.mul(gamma, base[lam])
    return B


def _failing(code: GradientCode, s: int) -> list[tuple[int, ...]]:
    n, B, T = code.n, np.asarray(code.B), code.targets()
    out = []
    for S in itertools.combinations(range(n), s):
        rows = B[[i for i in range(n) if i not in S]]
        if rank_gf(code.field, np.vstack([rows, T])) != rank_gf(code.field, rows):
            out.append(S)
    return out


def _check_every_s(code: GradientCode) -> list[str]:
    """verify's verdict and counterexample at every s against the brute force: the methods
    of the wrong ones (empty: all right); also the certificates used."""
    wrong, used = [], []
    for s in range(1, code.n):
        fails = _failing(code, s)
        r = verify(code, s)
        used.append(r.method)
        ce = None if r.counterexample is None else tuple(sorted(r.counterexample))
        if r.ok != (not fails) or (ce is not None and ce not in fails):
            wrong.append(f"s={s}: {r.method} ok={r.ok} counterexample={ce}, brute force "
                         f"{fails[:3]}")
    return wrong + [m for m in used if m == "certificate:bch"]


#: (field, n, factors of x^n - 1 over the field, lowest power first): n | q^e - 1 with e > 1
SPLITTING = [
    ("GF(2^2)", 5, [[1, 2, 1], [1, 3, 1]]),  # embedded in GF(2^4)
    ("GF(2^2)", 7, [[1, 1, 0, 1], [1, 0, 1, 1]]),  # in GF(2^6)
    ("GF(3^2)", 5, [[1, 3, 1], [1, 7, 1]]),  # in GF(3^4)
    ("GF(2)", 7, [[1, 1, 0, 1], [1, 0, 1, 1]]),  # in GF(2^3)
    ("GF(3)", 4, [[1, 0, 1]]),  # in GF(3^2)
    ("GF(65537)", 6, [[1, 65536, 1], [1, 1, 1]]),  # in GF(65537^2): no Conway polynomial
]


@pytest.mark.parametrize("field,n,factors", SPLITTING, ids=[f"{c[0]}-n{c[1]}" for c in SPLITTING])
def test_bch_in_a_splitting_field_against_brute_force(field: str, n: int,
                                                      factors: list[list[int]],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    import galois

    def every_element(*args: object, **kwargs: object) -> None:
        raise AssertionError("Poly.roots tries every element of GF(q^e)")

    monkeypatch.setattr(galois.Poly, "roots", every_element)
    f = parse_field(field).resolved()
    rng = np.random.default_rng(n)
    certified = 0
    for g in factors:
        code = GradientCode(_cyclic(f, n, g, rng), f, 0)
        found = _check_every_s(code)
        assert [w for w in found if not w.startswith("certificate")] == []
        # auto enumerates these small codes (cheaper than galois' splitting field): the
        # certificate is asked for, with a budget that affords its field
        for s in range(1, n):
            try:
                r = verify(code, s, method="structural", budget=Budget(max_work=60))
            except InvalidInput:  # no certificate applies at this s
                continue
            assert r.ok == (_failing(code, s) == [])  # a certificate, or a cheap finding
            certified += r.method == "certificate:bch"
    assert certified >= (0 if field == "GF(65537)" else 1)  # the certificate is exercised


#: (field, n) with n | q - 1: every n-th root of unity lies in GF(q)
IN_FIELD = [("GF(7)", 6), ("GF(13)", 4), ("GF(2^4)", 5), ("GF(2^3)", 7), ("GF(3^2)", 8),
            ("GF(11)", 5), ("GF(65537)", 8), ("GF(2147483647)", 7)]


def _root_of_unity(ops: _Ops, n: int) -> int:
    """An element of multiplicative order exactly n."""
    for x in range(2, ops.q):
        y = pow(x, (ops.q - 1) // n, ops.q) if ops.big else ops.power(x, (ops.q - 1) // n)
        if all((pow(y, d, ops.q) if ops.big else ops.power(y, d)) != 1
               for d in range(1, n) if n % d == 0):
            return y
    raise AssertionError("no root of unity")


@pytest.mark.parametrize("field,n", IN_FIELD, ids=[f"{c[0]}-n{c[1]}" for c in IN_FIELD])
def test_cyclic_codes_with_roots_in_the_field_against_brute_force(field: str, n: int) -> None:
    """g = prod (x - alpha^j) over a random set of exponents (a run of them, or any), at
    times times a random polynomial: six codes per field."""
    f = parse_field(field).resolved()
    ops = _Ops(f)
    alpha = _root_of_unity(ops, n)
    rng = np.random.default_rng(f.order % 1000 + n)
    wrong, certified = [], 0
    for trial in range(6):
        if trial % 2:
            start, length = int(rng.integers(0, n)), int(rng.integers(1, n))
            zeros = [(start + i) % n for i in range(length)]
        else:
            zeros = [j for j in range(n) if rng.random() < 0.4]
        g = [1]
        for j in zeros:
            root = pow(alpha, j, f.order) if ops.big else ops.power(alpha, j)
            g = ops.poly_mul(g, [(-root) % f.order if ops.big else
                                 int(np.flatnonzero(ops.add_t[root] == 0)[0]), 1])
        if trial == 5:
            g = ops.poly_mul(g, [int(x) for x in rng.integers(0, f.order, 2)])
        found = _check_every_s(GradientCode(_cyclic(f, n, g, rng), f, 0))
        wrong += [w for w in found if not w.startswith("certificate")]
        certified += len(found) - len(wrong)
    assert wrong == []
    assert certified >= 1
