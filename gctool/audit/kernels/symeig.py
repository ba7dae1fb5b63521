"""Eigenvalues of small real symmetric matrices in compiled code, without BLAS or LAPACK: the
spectra walk's (:mod:`gctool.audit.kernels.spectra`) route for its s x s and k x k matrices up
to :data:`MAX_SIDE`.

Why not LAPACK: numba's ``np.linalg.eigvalsh`` calls LAPACK's ``syevd`` (and numpy's the same),
and OpenBLAS's small-call path contends between threads: on a 7 x 7 matrix (scipy-openblas
0.3.30, a quiet 2-core machine) two threads each making the same calls took 1.3x the wall time
of one and 2.4x its CPU, whatever ``OPENBLAS_NUM_THREADS``; ``dsyev`` through
``scipy.linalg.cython_lapack`` with its workspace passed in contended too.  numpy and scipy
offer no eigenvalue routine that avoids LAPACK, so the loops are written here: the textbook
ones (LAPACK's ``dsytd2`` reduction, then an implicit QL iteration as in ``dsterf``), in plain
floating point on the caller's scratch, so threads scale as far as the cores do; below about
20 x 20 they are also faster than LAPACK on one thread (benchmarks/bench_spectrum.py).

Method (Golub & Van Loan, *Matrix Computations*, 8.3): the lower triangle of A is scaled by a
power of 2 (exact) so that its largest entry lies in [1/2, 1), reduced to a tridiagonal T by
Householder reflections (``dsytd2``'s, lower), and T's eigenvalues found by the implicit QL
iteration with Wilkinson's shift (EISPACK's ``tql1``), each Givens rotation formed without
overflow or harmful underflow; the eigenvalues are sorted ascending and scaled back.  Every
step is an orthogonal transformation in floating point, so the eigenvalues returned are those
of a symmetric A + E with ||E||_2 a small multiple of n eps ||A||_2 (backward stable, as
LAPACK's): each is within that of the true one (Weyl).  tests/audit/test_symeig.py checks
|lambda - lambda_exact| <= :data:`BACKWARD` n eps ||A||_2 against rational Sturm counts, and
twice that against ``numpy.linalg.eigvalsh`` on random, graded, clustered, rank-deficient and
tiny- or huge-scaled matrices.  There is no claim of high relative accuracy for the small
eigenvalues of graded matrices (LAPACK's ``syevd`` makes none either).

A matrix with a non-finite entry, or whose QL iteration has not converged after
:data:`MAX_SWEEPS` n iterations (not seen in the tests; Wilkinson's shift converges globally),
is reported so (False) and the caller takes LAPACK's route for it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from gctool.compiled._jit import njit

#: the largest side taken by :func:`eigvalsh_into` in the spectra walk; larger matrices take
#: LAPACK's blocked routines (measured: benchmarks/bench_spectrum.py's cut-off table)
MAX_SIDE = 20
#: QL iterations allowed per eigenvalue, on average, before giving up
MAX_SWEEPS = 30
#: the backward error the tests check: each eigenvalue within BACKWARD n eps ||A||_2 of exact
BACKWARD = 2

_EPS = float(np.finfo(np.float64).eps)
#: below this, a Givens rotation's sqrt(f^2 + g^2) is taken by hypot (squares would underflow)
_SMALL = 2.0**-500
#: above this, sqrt(g^2 + 1) is |g| (the square would overflow)
_LARGE = 2.0**500


@njit
def _givens_r(f: float, g: float) -> float:
    """sqrt(f^2 + g^2), |f| and |g| at most a few units: hypot's where the squares underflow."""
    r = math.sqrt(f * f + g * g)
    if r < _SMALL:
        return math.hypot(f, g)
    return r


@njit
def _two(a: float, b: float, c: float) -> tuple[float, float]:
    """The eigenvalues of [[a, b], [b, c]] (LAPACK ``dlae2``: the larger in magnitude from
    their sum and the root of the discriminant, the other from the determinant)."""
    sm, df, tb = a + c, a - c, b + b
    adf, ab = abs(df), abs(tb)
    acmx, acmn = (a, c) if abs(a) > abs(c) else (c, a)
    if adf > ab:
        rt = adf * math.sqrt(1.0 + (ab / adf) ** 2)
    elif adf < ab:
        rt = ab * math.sqrt(1.0 + (adf / ab) ** 2)
    else:
        rt = ab * math.sqrt(2.0)
    if sm == 0.0:
        return 0.5 * rt, -0.5 * rt
    rt1 = 0.5 * (sm - rt) if sm < 0.0 else 0.5 * (sm + rt)
    return rt1, (acmx / rt1) * acmn - (b / rt1) * b


@njit
def _tridiagonalise(A: Any, n: int, d: Any, e: Any) -> None:
    """Householder reduction of the lower triangle of A (n x n, overwritten) to the tridiagonal
    (d, e[0 : n-1]) (LAPACK ``dsytd2``, lower; the upper triangle is not read)."""
    for j in range(n - 2):
        # the reflection H = I - tau v v^T with v[0] = 1 maps x = A[j+1:, j] to beta e_1
        alpha = A[j + 1, j]
        xnorm = 0.0
        for i in range(j + 2, n):
            xnorm += A[i, j] * A[i, j]
        if xnorm == 0.0:
            e[j] = alpha
            d[j] = A[j, j]
            continue
        beta = -math.copysign(math.sqrt(alpha * alpha + xnorm), alpha)
        tau = (beta - alpha) / beta
        scale = 1.0 / (alpha - beta)
        A[j + 1, j] = 1.0
        for i in range(j + 2, n):
            A[i, j] *= scale
        # p = tau A22 v (A22 = A[j+1:, j+1:], from its lower triangle), kept in d[j+1:]
        for i in range(j + 1, n):
            acc = 0.0
            for t in range(j + 1, i + 1):
                acc += A[i, t] * A[t, j]
            for t in range(i + 1, n):
                acc += A[t, i] * A[t, j]
            d[i] = tau * acc
        # w = p - (tau / 2) (p^T v) v, then A22 -= v w^T + w v^T (lower triangle)
        pv = 0.0
        for i in range(j + 1, n):
            pv += d[i] * A[i, j]
        half = -0.5 * tau * pv
        for i in range(j + 1, n):
            d[i] += half * A[i, j]
        for i in range(j + 1, n):
            vi, wi = A[i, j], d[i]
            for t in range(j + 1, i + 1):
                A[i, t] -= vi * d[t] + wi * A[t, j]
        e[j] = beta
        d[j] = A[j, j]
    if n >= 2:
        e[n - 2] = A[n - 1, n - 2]
        d[n - 2] = A[n - 2, n - 2]
    d[n - 1] = A[n - 1, n - 1]


@njit
def _ql(d: Any, e: Any, n: int, sweeps: int) -> bool:
    """Eigenvalues of the symmetric tridiagonal (d, e[0 : n-1]) into d, unordered (implicit QL
    with Wilkinson's shift, EISPACK ``tql1``); e is destroyed.  False if the eigenvalues took
    more than ``sweeps`` n iterations together (about 2 per eigenvalue is usual)."""
    e[n - 1] = 0.0
    budget = sweeps * n
    for lo in range(n):
        while True:
            m = lo
            while m < n - 1:
                dd = abs(d[m]) + abs(d[m + 1])
                if abs(e[m]) <= _EPS * dd:
                    break
                m += 1
            if m == lo:
                break
            if m == lo + 1:  # a 2 x 2 block: its eigenvalues directly
                d[lo], d[m] = _two(d[lo], e[lo], d[m])
                e[lo] = 0.0
                break
            budget -= 1
            if budget < 0:
                return False
            g = (d[lo + 1] - d[lo]) / (2.0 * e[lo])
            r = abs(g) if abs(g) > _LARGE else math.sqrt(g * g + 1.0)
            g = d[m] - d[lo] + e[lo] / (g + math.copysign(r, g))
            s, c, p = 1.0, 1.0, 0.0
            underflow = False
            i = m - 1
            while i >= lo:
                f = s * e[i]
                b = c * e[i]
                r = _givens_r(f, g)
                e[i + 1] = r
                if r == 0.0:  # recover from underflow: deflate here
                    d[i + 1] -= p
                    e[m] = 0.0
                    underflow = True
                    break
                s = f / r
                c = g / r
                g = d[i + 1] - p
                r = (d[i] - g) * s + 2.0 * c * b
                p = s * r
                d[i + 1] = g + p
                g = c * r - b
                i -= 1
            if underflow:
                continue
            d[lo] -= p
            e[lo] = g
            e[m] = 0.0
    return True


@njit
def eigvalsh_into(A: Any, n: int, w: Any, e: Any) -> bool:
    """The eigenvalues of the symmetric n x n A[:n, :n] (its lower triangle read; A is
    overwritten), ascending, into w[:n] (e: scratch of n floats).  False when A has a
    non-finite entry or the iteration did not converge (w is then meaningless: take LAPACK's
    route)."""
    if n == 0:
        return True
    big = 0.0
    for i in range(n):
        for j in range(i + 1):
            a = abs(A[i, j])
            if not a <= 1.7976931348623157e308:  # inf or NaN
                return False
            big = max(big, a)
    if big == 0.0:
        for i in range(n):
            w[i] = 0.0
        return True
    # scale by 2^-x (exact) so that the largest entry is in [1/2, 1)
    x = math.frexp(big)[1]
    for i in range(n):
        for j in range(i + 1):
            A[i, j] = math.ldexp(A[i, j], -x)
    _tridiagonalise(A, n, w, e)
    if not _ql(w, e, n, MAX_SWEEPS):
        return False
    for i in range(1, n):  # insertion sort, ascending
        v = w[i]
        t = i - 1
        while t >= 0 and w[t] > v:
            w[t + 1] = w[t]
            t -= 1
        w[t + 1] = v
    for i in range(n):
        w[i] = math.ldexp(w[i], x)
    return True
