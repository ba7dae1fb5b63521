"""Codes for the compiled kernels' tests (tests/audit/test_compiled_kernels.py, which compares
them with the numpy kernels, and tests/audit/test_compiled_threads.py, which runs them in
threads): every route of the real screen's walk, finite fields, the optimal decoder's walk."""

from __future__ import annotations

import numpy as np

from gctool.algebra.fields import parse_field
from gctool.codes import design
from gctool.model import GradientCode

from corpus import adversarial_corpus, code_of


def random_codes() -> list[tuple[str, GradientCode, int]]:
    rng = np.random.default_rng(11)
    out = [("cyclic-12-3", design("cyclic", n=12, s=3, seed=2), 3),
           ("cyclic-13-4", design("cyclic", n=13, s=4, seed=3), 4)]
    # rank n - s - 2 (d = s + 2: the QR route), wide and scaled rows
    B = rng.standard_normal((11, 7)) @ rng.standard_normal((7, 9))
    B *= 2.0 ** rng.integers(-30, 30, 11)[:, None]
    out.append(("low-rank", code_of(np.hstack([B, np.ones((11, 1))]), 2), 2))
    # complex cyclic-like code with d = s
    c = design("cyclic", n=10, s=3, seed=5)
    out.append(("complex", code_of(np.asarray(c.B) * np.exp(1j * rng.uniform(0, 6, 10))[:, None],
                                   3, "complex"), 3))
    # a failing set in the middle of the enumeration: the left null space N (d = s = 3) has
    # N[:, 9] = N[:, 2] + N[:, 6], so straggling {2, 6, 9} fails (B spans null(N))
    from scipy.linalg import null_space

    N = rng.standard_normal((3, 12))
    N[:, 9] = N[:, 2] + N[:, 6]
    out.append(("fails-mid", code_of(null_space(N), 3), 3))
    return out


def _null_code(N: np.ndarray, field: str = "real") -> GradientCode:
    """A code whose left null space is spanned by the rows of N (d = N.shape[0] = s)."""
    from scipy.linalg import null_space

    return code_of(null_space(N), N.shape[0], field)


def walk_codes() -> list[tuple[str, GradientCode, int]]:
    """Codes for every route of the level-by-level walk: square (d = s), d > s (scaled rows),
    complex, s = 1, and a prefix of rank-deficient rows (vol = 0 for every set holding it)."""
    rng = np.random.default_rng(21)
    low = random_codes()[2][1]  # d = s + 2, rows scaled over 2^-30 .. 2^30
    N = rng.standard_normal((4, 13))
    N[:, 5] = 3.0 * N[:, 2]  # stragglers 2 and 5 together: N[:, S] is singular
    Nc = rng.standard_normal((3, 11)) + 1j * rng.standard_normal((3, 11))
    B1 = rng.standard_normal((9, 5)) @ rng.standard_normal((5, 8))
    return [("square", design("cyclic", n=14, s=4, seed=3), 4),
            ("wide-d", low, 2), ("wide-d-s1", low, 1),
            ("complex", _null_code(Nc, "complex"), 3),
            ("complex-cyclic", random_codes()[3][1], 3),
            ("degenerate-prefix", _null_code(N), 4),
            ("s1", code_of(np.hstack([B1, np.ones((9, 1))]), 1), 1)]


def gf_codes() -> list[tuple[str, GradientCode, int]]:
    rng = np.random.default_rng(5)
    out = []
    for field, n, k, s in [("GF(3)", 10, 6, 3), ("GF(5)", 11, 7, 3), ("GF(2^2)", 9, 5, 3),
                           ("GF(2^3)", 10, 6, 4), ("GF(9)", 8, 5, 2), ("GF(65537)", 9, 5, 3)]:
        f = parse_field(field)
        q = f.order
        B = rng.integers(0, min(q, 2**20), (n, k))
        B[:, 0] = 0
        B[1, 0] = 1  # partition 0 held by worker 1 only: every set holding 1 fails
        out.append((field, GradientCode(B, f, s), s))
    out.append(("cyclic-mds", design("cyclic-mds", n=15, s=4, field="GF(2^4)"), 4))
    return out


def attack_codes() -> list[tuple[str, GradientCode]]:
    rng = np.random.default_rng(3)
    c = design("cyclic", n=11, s=2, seed=4)
    cplx = code_of(np.asarray(c.B) * np.exp(1j * rng.uniform(0, 6, 11))[:, None], 2, "complex")
    return [("cyclic", design("cyclic", n=12, s=3, seed=2)), ("complex", cplx),
            ("fails-mid", random_codes()[4][1]),
            ("is-cr", design("is-cr", n=12, s=2))] + \
        [(name, code_of(B, s, field)) for name, B, s, field in adversarial_corpus()]
