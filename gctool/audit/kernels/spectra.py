"""Compiled spectra of an encoded frame's straggler sets (:mod:`gctool.audit.spectrum`), set by
set, without the GIL.

For a set of s stragglers the kernel forms what :meth:`gctool.audit.spectrum.Frame.spectra`
forms: the s x s Gram matrix of the straggling rows (tight frames, 0 < s < k: gathered from the
row Gram ``P = S S^T``, or from the rows), or the k x k matrix ``G - S_S^T S_S``; takes its
eigenvalues with :func:`gctool.audit.kernels.symeig.eigvalsh_into` (Householder and QL in plain
floating point, no BLAS or LAPACK: OpenBLAS's small calls contend between threads) up to
:data:`~gctool.audit.kernels.symeig.MAX_SIDE`, with numba's ``np.linalg.eigvalsh`` (LAPACK's
``syevd``, as numpy's) above; and keeps, for a whole rank range or batch of sets, only the
three picks of the audit's summary: the first set reaching the largest epsilon (with its
lambda_min and lambda_max), the first reaching the smallest lambda_min and the first reaching
the largest lambda_max (strict comparisons, in the order walked).  A worker thread thus
returns three sets and a few numbers per chunk and holds the GIL for a few microseconds per
chunk.

The eigenvalues are backward stable (those of a matrix within a small multiple of k eps ||G|| of
the one formed), like numpy's; they may differ from numpy's in the last bits (another
algorithm's rounding; the k x k matrix is summed in another order).  The audit states
numpy's values of the sets the walk picks (module docstring of :mod:`gctool.audit.spectrum`).
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import Any

import numpy as np

from gctool.audit.kernels import private
from gctool.audit.kernels.shared import WARM
from gctool.audit.kernels.symeig import MAX_SIDE, eigvalsh_into
from gctool.compiled import compile_notice
from gctool.compiled._jit import njit
from gctool.compiled.walk import successor

#: positions of the picks in a walk's ``vals`` and ``at``
EPS_PICK, LMIN_PICK, LMAX_PICK = 0, 1, 2


@njit
def _form(St: Any, S: Any, G: Any, P: Any, small: bool, rows: bool, M: Any) -> int:
    """Form the matrix whose eigenvalues :func:`_extremes` takes for the stragglers St in M
    (both triangles), and return its side: with ``small``, the stragglers' s x s Gram matrix
    (from P with ``rows``, else from the rows of S); otherwise ``G - S_S^T S_S``."""
    s, k = St.shape[0], S.shape[1]
    if small:
        for i in range(s):
            for j in range(i + 1):
                if rows:
                    v = P[St[i], St[j]]
                else:
                    v = 0.0
                    for t in range(k):
                        v += S[St[i], t] * S[St[j], t]
                M[i, j] = v
                M[j, i] = v
        return s
    for i in range(k):
        for j in range(i + 1):
            v = 0.0
            for t in range(s):
                v += S[St[t], i] * S[St[t], j]
            v = G[i, j] - v
            M[i, j] = v
            M[j, i] = v
    return k


@njit
def _extremes(St: Any, S: Any, G: Any, P: Any, c: float, small: bool, rows: bool,
              M: Any, w: Any, e: Any) -> tuple[float, float]:
    """(lambda_min, lambda_max) of S_F^T S_F (not normalised) for the stragglers St, as
    :meth:`gctool.audit.spectrum.Frame.spectra` takes them: with ``small``, c minus the
    largest eigenvalue of the stragglers' s x s Gram matrix (from P with ``rows``), and c;
    otherwise the extreme eigenvalues of ``G - S_S^T S_S``.  M is scratch of that size, w
    and e of its side.  The eigenvalues: :func:`.symeig.eigvalsh_into` up to
    :data:`.symeig.MAX_SIDE`, else (or when it declines) LAPACK's."""
    side = _form(St, S, G, P, small, rows, M)
    if side <= MAX_SIDE and eigvalsh_into(M, side, w, e):
        lo, hi = w[0], w[side - 1]
    else:
        _form(St, S, G, P, small, rows, M)  # eigvalsh_into overwrote it
        ev = np.linalg.eigvalsh(M)
        lo, hi = ev[0], ev[side - 1]
    if small:
        return c - hi, c
    return lo, hi


@njit
def _pick(b: int, lo: float, hi: float, norm: float, vals: Any, at: Any, pair: Any) -> None:
    """Join set b (its lambda_min and lambda_max, not normalised) to the picks so far (each
    pick's value, offset and (lambda_min, lambda_max))."""
    lo, hi = lo * norm, hi * norm
    e = max(1.0 - lo, hi - 1.0)
    for p, better in ((EPS_PICK, e > vals[EPS_PICK]), (LMIN_PICK, lo < vals[LMIN_PICK]),
                      (LMAX_PICK, hi > vals[LMAX_PICK])):
        if better:
            vals[p] = e if p == EPS_PICK else (lo if p == LMIN_PICK else hi)
            at[p] = b
            pair[p, 0], pair[p, 1] = lo, hi


@njit
def spectra_range(St: Any, n: int, count: int, S: Any, G: Any, P: Any, c: float, small: bool,
                  rows: bool, norm: float, M: Any, w: Any, e: Any, vals: Any, at: Any,
                  pair: Any, halt: Any) -> None:
    """Walk ``count`` sets in lexicographic order from St (updated in place): the picks, by
    offset from the first set, in ``vals``/``at``/``pair`` (``vals`` set to -inf, inf, -inf by
    the caller).  Ends, its picks not to be read, once ``halt[0]`` is set (read before each
    set, which costs 150 ns or more: :func:`gctool.engine.threads.halt_flag`)."""
    for b in range(count):
        if halt[0]:
            return
        lo, hi = _extremes(St, S, G, P, c, small, rows, M, w, e)
        _pick(b, lo, hi, norm, vals, at, pair)
        if b + 1 < count:
            successor(St, n)


@njit
def spectra_sets(Sets: Any, S: Any, G: Any, P: Any, c: float, small: bool, rows: bool,
                 norm: float, M: Any, w: Any, e: Any, vals: Any, at: Any, pair: Any,
                 halt: Any) -> None:
    """The picks of the rows of Sets (any order), by row index; ends as
    :func:`spectra_range` does once ``halt[0]`` is set."""
    for b in range(Sets.shape[0]):
        if halt[0]:
            return
        lo, hi = _extremes(Sets[b], S, G, P, c, small, rows, M, w, e)
        _pick(b, lo, hi, norm, vals, at, pair)


@njit
def spectra_each(Sets: Any, S: Any, G: Any, P: Any, c: float, small: bool, rows: bool,
                 M: Any, w: Any, e: Any, lo: Any, hi: Any) -> None:
    """(lambda_min, lambda_max), not normalised, of every row of Sets (the tests' reference
    for the walks: the same per-set route)."""
    for b in range(Sets.shape[0]):
        lo[b], hi[b] = _extremes(Sets[b], S, G, P, c, small, rows, M, w, e)


#: the time of the walk per straggler set, in ns: a fixed part (the eigenvalue routine's
#: scaling and sort, the picks, the next set) ...
SPECTRA_SET_NS = 150
#: ... plus, up to :data:`~.symeig.MAX_SIDE`, this much per square and per cube of the side of
#: the eigenproblem (s, or k; above it LAPACK's time, :func:`gctool.budget.eigvalsh_cost`, as
#: numpy's route) ...
SPECTRA_SQUARE_NS = 35
SPECTRA_CUBE_NS = 0.2
#: ... plus this much per multiply-add forming the matrix (s^2 k / 2 from the rows, k^2 s / 2
#: for the k x k matrix, twice above MAX_SIDE; nothing when the s x s Gram is gathered from
#: S S^T).  Fitted to the CPU time per set of the walk (one core of the 2-core development
#: machine, a loaded host): tight subsampled orthogonal 40x20 s=3-6 (0.5-1.7 us), Gaussian
#: 28 x 4, 28 x 7, 30 x 12, 40 x 20, 60 x 30 (0.8, 2.0, 5.8, 16, 37 us): measured / estimated
#: 0.9-1.1; the ETF pg-2's sets (s=2-6: 0.3-1.2 us), whose Gram matrices are sparse, 0.65-1.0.
#: Gaussian k = 30-400 (LAPACK's sides; s = 1, 2: 41 us-11 ms): 0.78-1.22, where these
#: constants above MAX_SIDE read 0.6 from k = 200 on
SPECTRA_MULADD_NS = 0.5


def walk_cost(s: int, k: int, small: bool, rows: bool) -> float:
    """Estimated time of the compiled walk per set of size s (k columns; ``small``: the s x s
    route, ``rows``: its Gram from S S^T), in ns."""
    from gctool.budget import eigvalsh_cost

    side = s if small else k
    form = (0 if rows else s * s * k / 2) if small else k * k * s / 2
    if side > MAX_SIDE:  # LAPACK's, the matrix formed again for it (_extremes)
        return SPECTRA_SET_NS + eigvalsh_cost(side) + 2 * SPECTRA_MULADD_NS * form
    return (SPECTRA_SET_NS + SPECTRA_SQUARE_NS * side**2 + SPECTRA_CUBE_NS * side**3
            + SPECTRA_MULADD_NS * form)


class FrameWalk:
    """The compiled spectra of one frame: contiguous float64 copies of S (n x k), G = S^T S and,
    when it was computed, the row Gram P = S S^T; c = trace(G) / k (tight frames' s x s
    route).  A Frame plans one for large enumerations; its copies on Dask workers carry it."""

    def __init__(self, S: np.ndarray, G: np.ndarray, P: np.ndarray | None, c: float) -> None:
        self.S = np.ascontiguousarray(S, dtype=np.float64)
        self.G = np.ascontiguousarray(G, dtype=np.float64)
        self.rows = P is not None
        self.P = np.ascontiguousarray(P if P is not None else np.zeros((1, 1)),
                                      dtype=np.float64)
        self.c = float(c)

    def warm(self, s: int, small: bool) -> None:
        """Compile (or load from the cache) the walk and the sets' entry point."""
        key = ("spectra",)
        if key in WARM:
            return
        WARM.update((key, ("spectra-sets",)))  # both entry points are compiled here
        with compile_notice("frame spectra"):
            self.walk(s, small, 1.0, np.arange(s, dtype=np.int64), 1)
            self.sets(np.arange(s, dtype=np.int64)[None], small, 1.0)

    def _work(self, s: int, small: bool) -> tuple[np.ndarray, ...]:
        """Scratch of the walking thread (:func:`.private.scratch`): the s x s or k x k
        matrix, two vectors of its side (its eigenvalues, :func:`.symeig.eigvalsh_into`'s
        scratch), and the picks (-inf, inf, -inf; offsets -1; their (lambda_min,
        lambda_max))."""
        side = max(1, s if small else self.S.shape[1])
        M, w, e, vals, at, pair = private.scratch(
            ((side, side), np.float64), (side, np.float64), (side, np.float64),
            (3, np.float64), (3, np.int64), ((3, 2), np.float64))
        vals[:] = (-np.inf, np.inf, -np.inf)
        at[:] = -1
        return M, w, e, vals, at, pair

    def walk(self, s: int, small: bool, norm: float, St: np.ndarray, count: int
             ) -> tuple[list[float], list[int], list[tuple[float, float]]]:
        """The picks (eps, lambda_min, lambda_max: :data:`EPS_PICK`...) of ``count`` sets in
        lexicographic order from St (updated in place), as (values, offsets, each pick's
        (lambda_min, lambda_max)), normalised by ``norm``.  In a pool thread whose run has
        stopped it raises :class:`~gctool.engine.threads.Cancelled`
        (:func:`~gctool.engine.threads.halt_flag`), as the other compiled walks do."""
        from gctool.engine.threads import halt_flag, raise_if_halted

        M, w, e, vals, at, pair = self._work(s, small)
        halt = halt_flag()
        spectra_range(St, self.S.shape[0], count, self.S, self.G, self.P, self.c, small,
                      self.rows, norm, M, w, e, vals, at, pair, halt)
        raise_if_halted(halt)
        return vals.tolist(), at.tolist(), [(float(a), float(b)) for a, b in pair.tolist()]

    def sets(self, Sets: np.ndarray, small: bool, norm: float
             ) -> tuple[list[float], list[int], list[tuple[float, float]]]:
        """:meth:`walk`'s picks of the rows of Sets, by row index (stopped as it is)."""
        from gctool.engine.threads import halt_flag, raise_if_halted

        M, w, e, vals, at, pair = self._work(Sets.shape[1], small)
        key, halt = ("spectra-sets",), halt_flag()
        with compile_notice("frame spectra") if key not in WARM else nullcontext():
            WARM.add(key)
            spectra_sets(np.ascontiguousarray(Sets, dtype=np.int64), self.S, self.G, self.P,
                         self.c, small, self.rows, norm, M, w, e, vals, at, pair, halt)
        raise_if_halted(halt)
        return vals.tolist(), at.tolist(), [(float(a), float(b)) for a, b in pair.tolist()]

    def each(self, Sets: np.ndarray, small: bool) -> tuple[np.ndarray, np.ndarray]:
        """(lambda_min, lambda_max), not normalised, of every row of Sets (one set at a time,
        the walks' route)."""
        b, s = Sets.shape
        lo, hi = np.empty(b), np.empty(b)
        M, w, e = self._work(s, small)[:3]
        spectra_each(np.ascontiguousarray(Sets, dtype=np.int64), self.S, self.G, self.P,
                     self.c, small, self.rows, M, w, e, lo, hi)
        return lo, hi
