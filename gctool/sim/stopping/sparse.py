"""The dual data of large sparse square real codes by sparse LU, and the choice of the path.

For a large sparse square code (n >= :data:`SPARSE_FROM`, Tandon's cyclic codes: SR-SGC's and
M-SGC's per-round codes) the SVD of B (minutes at n = 4096) is replaced by two sparse LU
factorisations of bordered matrices (:func:`sparse_dual_of`, under a second at n = 4096): any
solution a0 and any ``G = (B B^T)^+ + N C N^T`` give the same residual, and ``G_SS`` comes
from |S| sparse solves.  Its own checks (N at round-off level, a well-conditioned bordered
matrix, a0 within the tolerance) make its rank that of the SVD path; when they fail the SVD is
taken (:func:`dual_for`).
"""

from __future__ import annotations

import numpy as np

from gctool.budget import Meter
from gctool.sim.stopping.dual import Dual, dual_of

#: from this n on, square sparse real codes get their dual data by sparse LU ...
SPARSE_FROM = 512
#: ... when at most this fraction of B is non-zero
SPARSE_DENSITY = 0.05
#: the sparse-LU dual set-up of a large sparse square code of rank n - d (two bordered LUs,
#: block power steps of 8 vectors, QRs of n x d) costs this many ns times n (d + 8)^2
SPARSE_SETUP_FACTOR = 200
#: the sparse path's rank must clear the SVD's cut-off by this factor
_SPARSE_MARGIN = 100.0
#: columns of (B + N Q^T)^-1 kept for G_SS
_SPARSE_COLUMNS = 1024


def dual_for(B: np.ndarray, Tt: np.ndarray, certain: float, s: int, how: str = "auto",
             meter: Meter | None = None) -> Dual | None:
    """The dual data of a real code: by one sparse LU (:func:`sparse_dual_of`) for large
    sparse square codes (or when ``how == "sparse"``), else (or when that one's own checks
    fail) by one SVD of B (:func:`gctool.sim.stopping.dual.dual_of`)."""
    n, k = B.shape
    if how not in ("auto", "svd", "sparse"):
        raise ValueError(f"dual must be auto, svd or sparse, not {how!r}")
    square = n == k and 0 < s < n
    sparse = np.count_nonzero(B) <= SPARSE_DENSITY * B.size
    if square and (how == "sparse" or (how == "auto" and n >= SPARSE_FROM and sparse)):
        if meter is not None:  # the two sparse LUs and the power steps
            meter.charge(SPARSE_SETUP_FACTOR * n * (s + 8) ** 2, "the sparse LU of B")
        found = sparse_dual_of(B, Tt, certain, s)
        if found is not None:
            return found
    if meter is not None:  # the SVD of B with its vectors, held to the work budget
        from gctool.budget import solve_cost

        meter.charge(solve_cost(n, k), "the SVD of B")
    return dual_of(B, Tt, certain)


def sparse_dual_of(B: np.ndarray, Tt: np.ndarray, certain: float, d: int) -> Dual | None:
    """The dual data of a square sparse code whose B has rank n - d (Tandon's cyclic codes:
    d = s), by sparse LU of two bordered matrices instead of an SVD of B.

    1. ``K = [[B, R], [P^T, 0]]`` with random R, P (n x d) is nonsingular when rank B = n - d;
       the last d columns of ``K^-T`` and ``K^-1`` span the left and right null spaces of B
       (bases N, Q after QR).
    2. ``B^ = B + N Q^T`` is nonsingular and ``B^ B^^T = B B^T + N N^T`` (``B Q = 0``), whose
       inverse is ``(B B^T)^+ + N N^T``: a valid G.  So ``G_SS = X^T X`` with
       ``X = B^^-1 E_S`` (|S| sparse solves), and ``a0 = B^^-T T^T`` solves ``B^T a0 = T^T``.

    Checks that make the result the SVD path's (else None, and the caller takes the SVD):
    ``||B^T N||_2`` below the SVD's rank cut-off ``sigma_1 n eps`` (N is in its numerical
    null space), ``B^`` well conditioned (``sigma_{n-d}(B)``, estimated from
    ``||B^^-1||_2`` by a seeded power iteration, clears the cut-off by the factor
    ``_SPARSE_MARGIN``: no further numerical null direction, so the SVD path finds the same
    rank n - d) and a0 within ``certain``.
    """
    import scipy.sparse as sp
    import scipy.sparse.linalg as spl

    n = B.shape[0]
    Bs = sp.csc_matrix(B)
    rng = np.random.default_rng(0)
    R, P = rng.standard_normal((n, d)), rng.standard_normal((n, d))
    tail = np.zeros((n + d, d))
    tail[n:] = np.eye(d)
    try:
        lu = spl.splu(sp.bmat([[Bs, sp.csc_matrix(R)], [sp.csc_matrix(P.T), None]],
                              format="csc"))
        N, rn = np.linalg.qr(lu.solve(tail, trans="T")[:n])
        Q, rq = np.linalg.qr(lu.solve(tail)[:n])
        if min(np.abs(np.diag(rn)).min(), np.abs(np.diag(rq)).min()) == 0:
            return None
        eps = float(np.finfo(np.float64).eps)
        x = np.ones(n)  # a few power steps: sigma_low <= sigma_1(B)
        for _ in range(8):
            x = Bs.T @ (Bs @ x)
            x /= max(float(np.linalg.norm(x)), np.finfo(np.float64).tiny)
        sigma_low = float(np.linalg.norm(Bs @ x))
        if np.linalg.norm(Bs.T @ N, 2) > sigma_low * n * eps:
            return None  # N is not inside the SVD's numerical null space (cut-off sigma_1 n eps)
        hat = spl.splu(sp.bmat([[Bs, sp.csc_matrix(N)], [sp.csc_matrix(Q.T), -sp.identity(d)]],
                               format="csc"))
    except (RuntimeError, ValueError, np.linalg.LinAlgError):
        return None  # exactly singular: rank B is not n - d

    def solve(rhs: np.ndarray, trans: str = "N") -> np.ndarray:
        rhs = np.asarray(rhs, dtype=np.float64)
        full = np.zeros((n + d,) + rhs.shape[1:])
        full[:n] = rhs
        return np.asarray(hat.solve(full, trans=trans)[:n])

    # sigma_{n-d}(B) >= sigma_min(B^) = 1 / ||B^^-1||_2, estimated by a seeded block power
    # iteration (8 vectors, 6 steps: within a small factor with overwhelming probability,
    # Halko, Martinsson and Tropp 2011; a further factor 10 is allowed for it), and
    # sigma_1(B) <= sqrt(||B||_1 ||B||_inf): the rank n - d clears the SVD's cut-off
    # sigma_1 n eps by the margin
    X = rng.standard_normal((n, 8))
    for _ in range(6):
        X, _r = np.linalg.qr(solve(solve(X), "T"))
    inv_norm = float(np.linalg.norm(solve(X), 2))
    sigma_high = float(np.sqrt(abs(Bs).sum(axis=0).max() * abs(Bs).sum(axis=1).max()))
    if not np.isfinite(inv_norm) or (
            10.0 * inv_norm * sigma_high * n * eps * _SPARSE_MARGIN > 1.0):
        return None
    a0 = solve(Tt, "T")
    if not np.all(np.isfinite(a0)) or np.sum((Bs.T @ a0 - Tt) ** 2) > certain:
        return None
    cols: dict[int, np.ndarray] = {}

    def gss(S: np.ndarray) -> np.ndarray:
        missing = [int(j) for j in S if int(j) not in cols]
        if missing and len(cols) + len(missing) > _SPARSE_COLUMNS:
            cols.clear()
            missing = [int(j) for j in S]
        if missing:
            E = np.zeros((n, len(missing)))
            E[missing, np.arange(len(missing))] = 1.0
            X = solve(E)
            cols.update((j, X[:, t]) for t, j in enumerate(missing))
        X = np.stack([cols[int(j)] for j in S], axis=1)
        return np.asarray(X.T @ X)

    return Dual(a0, np.ascontiguousarray(N), gss, "sparse")
