"""Independent brute-force oracles for tests: one straggler set at a time, no gctool code."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np


def random_sparse_b(seed: int, n: int, k: int, load: int) -> np.ndarray:
    """A random real n x k matrix with ``min(load, k)`` Gaussian entries per row (test input)."""
    rng = np.random.default_rng(seed)
    B = np.zeros((n, k))
    for i in range(n):
        cols = rng.choice(k, size=min(load, k), replace=False)
        B[i, cols] = rng.standard_normal(cols.size)
    return B


def rational_rank(rows: list[list[Fraction]]) -> int:
    """Rank by exact Gaussian elimination over the rationals."""
    M = [list(r) for r in rows]
    rank, cols = 0, len(M[0]) if M else 0
    for c in range(cols):
        piv = next((i for i in range(rank, len(M)) if M[i][c] != 0), None)
        if piv is None:
            continue
        M[rank], M[piv] = M[piv], M[rank]
        for i in range(len(M)):
            if i != rank and M[i][c] != 0:
                f = M[i][c] / M[rank][c]
                M[i] = [a - f * b for a, b in zip(M[i], M[rank], strict=True)]
        rank += 1
    return rank


def decodes_rational(B: np.ndarray, F: tuple[int, ...]) -> bool:
    """Exact: is the all-ones vector in the row space of B_F (B with rational entries)?"""
    rows = [[Fraction(x).limit_denominator(10**12) for x in B[i]] for i in F]
    ones = [Fraction(1)] * B.shape[1]
    if not rows:
        return False
    return rational_rank(rows + [ones]) == rational_rank(rows)


def lstsq_error(B: np.ndarray, F: tuple[int, ...]) -> float:
    """Least-squares squared error min_a ||B_F^T a - 1||^2 by numpy.linalg.lstsq."""
    k = B.shape[1]
    if not F:
        return float(k)
    A = B[list(F)].T
    a = np.linalg.lstsq(A, np.ones(k), rcond=None)[0]
    return float(np.sum(np.abs(A @ a - 1) ** 2))


def decodes_gf(GF: type, B: np.ndarray, F: tuple[int, ...]) -> bool:
    """Exact over GF(q) with galois' matrix_rank."""
    if not F:
        return False
    BF = GF(B[list(F)])
    aug = GF(np.vstack([B[list(F)], np.ones((1, B.shape[1]), dtype=np.int64)]))
    return bool(np.linalg.matrix_rank(aug) == np.linalg.matrix_rank(BF))


def threshold_by(decodes, n: int) -> int | None:  # type: ignore[no-untyped-def]
    """Smallest |S| such that the survivors [n] minus S do not decode."""
    for t in range(n + 1):
        for S in itertools.combinations(range(n), t):
            F = tuple(i for i in range(n) if i not in S)
            if not decodes(F):
                return t
    return None


def brute_worst(code, s: int, error) -> float:  # type: ignore[no-untyped-def]
    """The largest error over the survivors F of every set of s stragglers of ``code`` (a
    GradientCode; at least 0): over GF(q) the 0/1 indicator of :func:`decodes_gf`, over R/C
    ``error(B, F)``."""
    B, n = np.asarray(code.B), code.n
    GF = code.field.galois() if code.field.is_finite else None
    worst = 0.0
    for S in itertools.combinations(range(n), s):
        F = tuple(i for i in range(n) if i not in S)
        err = float(error(B, F)) if GF is None else 0.0 if decodes_gf(GF, B, F) else 1.0
        worst = max(worst, err)
    return worst


def frame_worst_epsilon(S: np.ndarray, s: int) -> tuple[float, float, float]:
    """(worst eps, smallest lambda_min, largest lambda_max) of (k/|F|) S_F^T S_F over every set
    of s stragglers, one numpy.linalg.eigvalsh per set."""
    n, k = S.shape
    worst, lo, hi = -np.inf, np.inf, -np.inf
    for St in itertools.combinations(range(n), s):
        F = [i for i in range(n) if i not in St]
        ev = np.linalg.eigvalsh(S[F].T @ S[F]) * k / len(F)
        worst = max(worst, 1 - ev[0], ev[-1] - 1)
        lo, hi = min(lo, ev[0]), max(hi, ev[-1])
    return float(worst), float(lo), float(hi)


def partial_counterexample(B: np.ndarray, order: list[list[list[int]]], W: int,
                           decodes) -> list[int] | None:  # type: ignore[no-untyped-def]
    """First profile c (worker i finished its first c_i partitions) with missing work <= W
    whose finished messages do not decode; every profile is tried.  ``decodes(M)`` decides
    whether the all-ones vector is in the row space of the message matrix M."""
    loads = [sum(len(g) for g in groups) for groups in order]
    for c in itertools.product(*[range(d + 1) for d in loads]):
        if sum(d - ci for d, ci in zip(loads, c, strict=True)) > W:
            continue
        rows = []
        for i, groups in enumerate(order):
            end = 0
            for g in groups:
                end += len(g)
                if end <= c[i]:
                    r = np.zeros_like(B[i])
                    r[g] = B[i, g]
                    rows.append(r)
        if not rows or not decodes(np.array(rows)):
            return list(c)
    return None


def _integer_vector(v: np.ndarray) -> tuple[list[int], int]:
    """(w, D): the binary floating-point entries of ``v`` are exactly w / D, D a power of 2."""
    ratios = [float(x).as_integer_ratio() for x in v]
    D = max((d for _, d in ratios), default=1)
    return [p * (D // d) for p, d in ratios], D


def exact_fixed_error(B: np.ndarray, w: np.ndarray, F: tuple[int, ...]) -> Fraction:
    """One-step decoding of real B with weights w, exactly: ||sum_{i in F} w_i b_i - 1||^2 on
    the binary floating-point entries (every product scaled to an integer by one power of 2)."""
    wi, Dw = _integer_vector(np.asarray(w, dtype=float)[list(F)])
    total = 0
    for j in range(B.shape[1]):
        bj, Db = _integer_vector(np.asarray(B, dtype=float)[list(F), j])
        r = sum(a * b for a, b in zip(wi, bj, strict=True)) - Dw * Db
        total += Fraction(r * r, (Dw * Db) ** 2)
    return total if F else Fraction(B.shape[1])


#: exact errors already computed, by (B, F, targets) as bytes: the tests of a code under the
#: compiled and the numpy kernels (and tests that share a corpus) ask for the same sets, and
#: the exact arithmetic is most of their time
_EXACT_SEEN: dict[tuple[object, ...], Fraction] = {}
_EXACT_SEEN_MAX = 1 << 18


def _key(a: np.ndarray | None) -> tuple[object, ...] | None:
    return None if a is None else (a.dtype.str, a.shape, np.ascontiguousarray(a).tobytes())


def exact_lstsq_error(B: np.ndarray, F: tuple[int, ...], targets: np.ndarray | None = None
                      ) -> Fraction:
    """min_a ||a^T B_F - t||^2 summed over the targets, in exact rational arithmetic on the
    binary floating-point entries of B (complex codes realified).  Targets default to ones.
    Remembered for the process (:data:`_EXACT_SEEN`)."""
    B = np.asarray(B)
    key = (_key(B), tuple(int(i) for i in F),
           _key(None if targets is None else np.asarray(targets)))
    if key not in _EXACT_SEEN:
        if len(_EXACT_SEEN) >= _EXACT_SEEN_MAX:
            _EXACT_SEEN.clear()
        _EXACT_SEEN[key] = _exact_lstsq_error(B, F, targets)
    return _EXACT_SEEN[key]


def _exact_lstsq_error(B: np.ndarray, F: tuple[int, ...], targets: np.ndarray | None
                       ) -> Fraction:
    """The squared distance of each target from the row space of B_F, exactly: each row and
    target scaled to integers by a power of 2 (the row space is the same), then fraction-free
    symmetric elimination (Bareiss) of the Gram matrix G = R R^T bordered by the targets' R t
    and t.t.  After the pivots P, an entry is the minor det([G b; b^T c] on P and its row and
    column), so a target's entry over the last pivot det(G_P) is its Schur complement
    c - b^T G_P^-1 b, the squared residual; a row whose pivot is 0 lies in the span of the
    rows before it (G is a Gram matrix: its whole bordered row is 0 then), and is passed over."""
    K = B.shape[1]
    T = np.ones((1, K)) if targets is None else np.atleast_2d(targets)
    cplx = np.iscomplexobj(B)
    rows: list[list[int]] = []
    for i in F:
        if cplx:
            rows.append(_integer_vector(np.concatenate([B[i].real, B[i].imag]))[0])
            rows.append(_integer_vector(np.concatenate([-B[i].imag, B[i].real]))[0])
        else:
            rows.append(_integer_vector(B[i])[0])
    tvs, scales = [], []
    for t in T:
        tv, D = _integer_vector(np.concatenate([np.real(t), np.imag(t)]) if cplx else np.real(t))
        tvs.append(tv)
        scales.append(D)
    vecs = rows + tvs
    m = len(rows)
    M = [[sum(a * b for a, b in zip(u, v, strict=True)) for v in vecs] for u in vecs]
    prev = 1
    for k in range(m):
        p = M[k][k]
        if p == 0:
            continue
        Mk = M[k]
        for i in range(k + 1, len(vecs)):
            Mi, f = M[i], M[i][k]
            for j in range(k + 1, len(vecs)):
                Mi[j] = (Mi[j] * p - f * Mk[j]) // prev
        prev = p
    return sum((Fraction(M[m + t][m + t], prev * D * D) for t, D in enumerate(scales)),
               Fraction(0))


def lex_rank(n: int, S: list[int]) -> int:
    """Rank of the sorted set ``S`` among the ``len(S)``-subsets of ``range(n)`` in
    lexicographic order (the combinatorial number system, one set at a time)."""
    from math import comb

    s, rank, prev = len(S), 0, -1
    for i, x in enumerate(S):
        rank += sum(comb(n - 1 - y, s - 1 - i) for y in range(prev + 1, x))
        prev = x
    return rank


def bibd_error(n: int, kappa: int, lam: int, s: int) -> float:
    """Kadhe et al.'s error of a symmetric (n, kappa, lam) BIBD code after s stragglers,
    ``s(kappa-lam)/(kappa-lam+lam(n-s))`` (their closed form, for checking the audits)."""
    return s * (kappa - lam) / (kappa - lam + lam * (n - s))


def policy_decodes(B: np.ndarray, F: tuple[int, ...], tol: float = 1e-9
                   ) -> tuple[bool | None, float | None]:
    """(decodes, error) of survivors F under the documented rule over R/C, or (None, None)
    when float64 cannot tell: rows scaled to norm [1/2, 1) by powers of two, singular values
    of B_F at or below ``sigma_max * max(f, k) * eps`` do not count, F decodes when the
    squared error is <= tol * k.  A singular value within a factor 4 below or 30 above that
    cut-off is ambiguous; a clear float64 error (cond < 1e6, a factor 1e3 from tol * k)
    stands; otherwise a set of full numerical rank takes the exact rational error of
    :func:`exact_lstsq_error`, and any other is ambiguous."""
    k = B.shape[1]
    limit = tol * k
    if not F or not np.any(B[list(F)]):
        return False, float(k)
    A = np.asarray(B[list(F)])
    _, e = np.frexp(np.linalg.norm(A, axis=1))
    A = A * np.ldexp(1.0, -e)[:, None]  # exact: powers of two
    _, sv, Vh = np.linalg.svd(A, full_matrices=False)
    cut = sv[0] * max(A.shape) * np.finfo(float).eps
    if np.any((sv > cut / 4) & (sv < cut * 30)):
        return None, None
    r = int(np.sum(sv > cut))
    V = Vh[:r].conj().T
    ones = np.ones(k)
    err = float(np.sum(np.abs(ones - V @ (V.conj().T @ ones)) ** 2))
    if sv[0] / sv[r - 1] < 1e6 and not limit * 1e-3 <= err <= limit * 1e3:
        return err <= limit, err
    if r == len(sv):
        exact = exact_lstsq_error(B, F)  # the rule's exact limit: tol as typed, times k
        return exact <= Fraction(repr(float(tol))) * k, float(exact)
    return None, None


def eigenvalues_below(A: list[list[Fraction]], x: Fraction) -> int:
    """Eigenvalues of the exact symmetric A below x: the negative pivots of A - xI
    (Sylvester's law of inertia; symmetric elimination, exact)."""
    k = len(A)
    M = [[A[i][j] - (x if i == j else 0) for j in range(k)] for i in range(k)]
    neg = 0
    for c in range(k):
        p = next((r for r in range(c, k) if M[r][c] != 0), None)
        if p is None:
            continue  # a zero column: a zero eigenvalue of the rest, not below x
        if p != c:  # a symmetric swap keeps the inertia
            M[c], M[p] = M[p], M[c]
            for row in M:
                row[c], row[p] = row[p], row[c]
        if M[c][c] == 0:
            raise AssertionError("zero pivot: x is too close to an eigenvalue")
        piv = M[c][c]
        neg += piv < 0
        for r in range(c + 1, k):
            f = M[r][c] / piv
            for j in range(c, k):
                M[r][j] -= f * M[c][j]
    return neg


def exact_rank_code(seed: int) -> np.ndarray:
    """B = G M exactly, rank r, cond(B) up to about 1e4; a third complex (the codes of
    tests/audit/test_crosscheck_band and test_crosscheck_lostband)."""
    rng = np.random.default_rng(seed)
    n, K = int(rng.integers(5, 11)), int(rng.integers(2, 9))
    r = int(rng.integers(1, min(n - 1, K) + 1))
    cplx = rng.random() < 0.3

    def g(*shape: int) -> np.ndarray:
        x = rng.integers(-3, 4, shape).astype(float)
        return x + 1j * rng.integers(-3, 4, shape) if cplx else x

    M = g(r, K)
    if rng.random() < 0.6:
        M[0] = 1.0
    G = g(n, r)
    if seed % 3 == 0:  # near-dependent rows
        for i in range(1, n):
            if rng.random() < 0.5:
                G[i] = (2.0 ** int(rng.integers(3, 8)) * G[int(rng.integers(0, i))]
                        + g(r) * (rng.random(r) < 0.3))
    elif seed % 3 == 1:  # graded columns
        G = G * 2.0 ** -rng.integers(0, 11, r)[None, :]
    else:
        G[:, 0] *= 2.0 ** -int(rng.integers(0, 10))
        for i in range(1, n):
            if rng.random() < 0.3:
                G[i] = (G[int(rng.integers(0, i))] * 2.0 ** int(rng.integers(-3, 4))
                        + g(r) * 2.0**-8)
    return G @ M
