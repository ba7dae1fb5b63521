"""The numerical policy of gctool for real and complex codes, in one place.

Every floating-point decision over R and C goes through this module:

* **Tolerance rule.**  Survivors F *decode* when the squared least-squares error
  ``err(F) = min_a ||a^T B_F - t||^2`` (summed over the m targets), exactly, is at most
  ``tol * k`` exactly, with tol the decimal the user typed (:func:`exact_limit`: a float
  0.3 is 3/10; ``tol`` defaults to :data:`DEFAULT_TOL`).  Float computations compare with
  :func:`decode_limit` (its nearest float) and prove verdicts against :func:`limit_bracket`;
  what they cannot settle is decided in exact arithmetic.  ``||t||^2 = m k``, so the
  rule is relative to the size of the targets; the error itself does not change when a row of B
  is multiplied by a non-zero number, when B is scaled, or when rows are permuted.
* **Row normalisation.**  Numerical work is done on ``D B`` where D scales every non-zero row by
  a power of two so that its 2-norm lies in [1/2, 1) (:func:`normalise_rows`; zero rows stay
  zero).  Multiplying by a power of two is exact in binary floating point, so ``D B`` has the
  same row spaces, the same errors and the same decodability as B, exactly, while its condition
  number no longer depends on how the rows were scaled.  A decoding vector ``a_n`` of ``D B``
  gives ``a = D a_n`` for B.
* **One rank cut-off.**  A singular value counts when it exceeds ``sigma_max * max(shape) *
  eps`` of the (normalised) matrix (:func:`rank_cutoff`, :func:`numerical_rank`).
* **Round-off of a residual.**  A computed entry of ``B_F^T a - t`` is within
  ``residual_gamma(f, complex) (|B_F^T| |a| + |t|)`` of the exact one for any summation order
  (:func:`residual_gamma`), so no proof depends on the BLAS numpy uses.
* **Tie rule for thresholds.**  An error *exceeds* epsilon when it is above ``epsilon + tol * k``
  (and above the decoding limit), exactly; errors within the tolerance of epsilon are ties
  (:func:`level_tol`: the threshold is searched under the tolerance whose limit is that level).
* **Ties.**  Errors within a relative 1e-12 of each other are ties (:func:`beats`,
  :func:`first_max`): the worst set reported is the lexicographically first of the tied ones.
* **Exact symmetry.**  Symmetry reductions compare entries exactly (:func:`exactly_proportional`
  is exact for binary floating-point numbers), never within a tolerance.

Sets that float64 cannot decide (a near-singular system whose verdict hinges on round-off) are
escalated to exact rational arithmetic by :mod:`gctool.audit.exactls`.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, overload

import numpy as np

from gctool.errors import InvalidInput
from gctool.limits import DECIDE_RTOL as DECIDE_RTOL  # the constants live in limits
from gctool.limits import DEFAULT_TOL as DEFAULT_TOL
from gctool.limits import RANK_BAND as RANK_BAND
from gctool.limits import REL_SLACK as REL_SLACK
from gctool.limits import TIE_RTOL as TIE_RTOL

EPS = float(np.finfo(np.float64).eps)


#: a tolerance as the library takes it: a float (read as the decimal it prints as), a decimal
#: string, or an exact Fraction
Tol = float | str | Fraction


@overload
def check_tol(tol: float, param: str = "tol") -> float: ...
@overload
def check_tol(tol: Fraction | str, param: str = "tol") -> Fraction: ...
def check_tol(tol: Tol, param: str = "tol") -> float | Fraction:
    """A valid tolerance (or an epsilon, typed like it: ``param`` names it): a float (as a
    float), or an exact Fraction or decimal string (as a Fraction, kept exact:
    :func:`exact_limit` and :func:`level_tol` read it)."""
    bad = f"`{param}` must be a finite number >= 0, got {tol!r}"
    if isinstance(tol, Fraction | str):
        try:
            exact = typed(tol)
        except (TypeError, ValueError, ZeroDivisionError):
            raise InvalidInput(bad, param=param) from None
        if exact < 0:
            raise InvalidInput(bad, param=param)
        return exact
    if isinstance(tol, bool) or not (float(tol) >= 0 and np.isfinite(float(tol))):
        raise InvalidInput(bad, param=param)
    return float(tol)


def check_tol_applies(field: Any, tol: Tol | None) -> None:
    """Refuse a ``tol`` the caller gave (None: not given) for a code over a finite field
    ``field``, whose decoding is exact and reads no tolerance."""
    if tol is not None and getattr(field, "is_finite", False):
        raise InvalidInput(f"`tol` applies to real and complex codes; over {field} decoding is "
                           "exact", param="tol")


def typed(x: Tol) -> Fraction:
    """The exact value of a tolerance or epsilon: the decimal the user typed.  A float is read
    as its shortest round-tripping decimal (``Fraction(repr(x))``: 0.3 is 3/10, not the
    binary float 0.299999999999999988898), a string as the decimal it spells, a Fraction as
    itself."""
    if isinstance(x, Fraction):
        return x
    if isinstance(x, str):
        return Fraction(x)
    return Fraction(repr(float(x)))


def exact_limit(k: int, tol: Tol = DEFAULT_TOL) -> Fraction:
    """The decoding limit, exactly: ``typed(tol) * k``.  The rule is ``err(F) <= exact_limit``
    with ``err(F)`` the exact least-squares error; every verdict float64 cannot settle
    against this value is decided in exact arithmetic (:mod:`gctool.exactls`)."""
    return typed(tol) * int(k)


def decode_limit(k: int, tol: Tol = DEFAULT_TOL) -> float:
    """The decoding limit as a float: :func:`exact_limit` rounded to the nearest float.  A
    computed error strictly below (above) it is below (above) the exact limit when it is
    exact; equal to it, only :func:`limit_bracket` or exact arithmetic can tell."""
    return float(exact_limit(k, tol))


def limit_bracket(limit: Fraction) -> tuple[float, float]:
    """``(lo, hi)``: the largest float at most ``limit`` and the smallest at least it (equal
    when the limit is a float).  An upper bound on an error at most ``lo`` proves the set
    decodes; a lower bound above ``hi`` proves it fails."""
    near = float(limit)
    got = Fraction(near)
    if got == limit:
        return near, near
    if got < limit:
        return near, float(np.nextafter(near, np.inf))
    return float(np.nextafter(near, -np.inf)), near


def on_side(value: Fraction, limit: Fraction) -> float:
    """``value`` (an exact error) as a float on the same side of ``float(limit)`` as it is of
    ``limit`` (``<=`` or ``>``): the nearest float, or its neighbour one unit away when
    rounding would carry a value above the limit onto ``float(limit)`` or below it.  Every
    comparison of the float with :func:`decode_limit` then gives the exact rule's answer."""
    out = float(value)
    near = float(limit)
    if value > limit and out <= near:  # (value <= limit gives out <= near: rounding is monotone)
        return float(np.nextafter(near, np.inf))
    return out


def decodes(err: Any, k: int, tol: Tol = DEFAULT_TOL) -> np.ndarray:
    """The tolerance rule on reported errors (elementwise): ``err <= decode_limit``.  Errors
    the decoder settled near the limit are on their verdict's side of that float
    (:func:`on_side`), so this is the exact rule's answer for them."""
    return np.asarray(err) <= decode_limit(k, tol)


def residual_bracket(err: Any, slack: Any, terms: int) -> tuple[np.ndarray, np.ndarray]:
    """``(lo, hi)``: rigorous bounds on an exact squared residual whose computed value ``err`` is
    a sum of ``terms`` squares of entries each within round-off of the exact ones (``slack``: the
    2-norm of those entries' round-off bounds).  Rounded outward: the squares' sum, the square
    roots and the final square each lose a few ulps, and an error on the limit's float must not
    come out on the wrong side of it (elementwise; call under ``np.errstate`` for inf/nan)."""
    up = 1 + (2 * terms + 8) * EPS
    root = np.sqrt(err)
    return (np.maximum(root - slack, 0) / up) ** 2, ((root + slack) * up) ** 2


#: an upper bound on sqrt(2) (the float 1.4142135623730951 is below it)
SQRT2_UP = 1.4142135623730954


def residual_gamma(terms: int, complex_: bool) -> float:
    """The round-off constant ``g`` of a computed residual entry ``r = sum_j x_j y_j - t`` of
    ``terms`` products (a decoder's ``B_F^T a - t``): ``|fl(r) - r| <= g (sum_j |x_j| |y_j| +
    |t|)`` for float64 summed in *any* order (any tree, any number of partial sums, with or
    without FMA), so a proof does not depend on the BLAS numpy uses nor on a compiled kernel's
    order.  Plain arithmetic: the compiled kernels call it too.

    With u = EPS / 2 and ``gamma_N = N u / (1 - N u)`` (Higham, *Accuracy and Stability of
    Numerical Algorithms*, 2nd ed., Lemma 3.1 and (3.5)):

    * real: an inner product of f terms in any order is within ``gamma_f sum |x_j y_j|``
      (Higham (3.5), any order, FMA included), and the subtraction of t adds one rounding:
      ``gamma_{f+1}``; returned: ``gamma_{2f+4} = (f + 2) EPS / (1 - (f + 2) EPS)``, the
      constant the verdicts have always used (above gamma_{f+1} for every f).
    * complex: each component of ``x_j y_j`` is a difference or sum of two real products
      (``Re = Re x Re y - Im x Im y``), so a component of r is a real inner product of 2f
      terms minus a component of t, *however* a BLAS groups them (OpenBLAS' zgemm keeps the
      four real product sums apart; a kernel may chain all 2f in one sum; complex
      arithmetic, Higham section 3.6, is one more order).  By the real case each component
      is within ``gamma_{2f+1} (P + |t_c|)``, P the sum of its 2f product magnitudes; the
      vector (P_re + |Re t|, P_im + |Im t|) has 2-norm at most ``sqrt(2) (sum |x_j| |y_j| +
      |t|)`` (per term ``(|ac| + |bd|)^2 + (|ad| + |bc|)^2 <= 2 (a^2 + b^2)(c^2 + d^2)`` by
      Cauchy-Schwarz, then the triangle inequality), so ``|fl(r) - r| <= sqrt(2)
      gamma_{2f+1} (sum |x_j| |y_j| + |t|)``: Higham's bound for a complex inner product,
      ``sqrt(2) gamma_{n+2}`` (section 3.6, after Lemma 3.5; ``sqrt(2) gamma_{f+3}`` with t),
      holds for complex arithmetic's order only and is below this one from f = 3 on.
      Returned: ``sqrt(2) gamma_{2f+4}`` (rounded up), the real constant times sqrt(2): at
      least both (a set decided over C before is decided now or goes to the exact route,
      never the other way).

    Not covered: a complex product by Gauss's three-multiplication method (zgemm3m), which
    BLAS libraries call only on request (numpy never does)."""
    g = (terms + 2) * EPS / (1 - (terms + 2) * EPS)
    return g * SQRT2_UP * (1 + EPS) if complex_ else g


def proves_decodes(bound: Any, k: int, tol: Tol = DEFAULT_TOL) -> np.ndarray:
    """Does a rigorous upper bound on the error prove ``err(F) <= typed(tol) * k``: is it at
    most the largest float at or below the exact limit (elementwise)?"""
    return np.asarray(bound) <= limit_bracket(exact_limit(k, tol))[0]


def band_tail(smax: float, n: int, K: int) -> float:
    """An upper bound on ``sigma_{r+1}(B_F)`` for every survivor set F of the row-normalised B
    (``smax`` its computed largest singular value, n x K), r the number of B_F's singular values
    that the direct decoder (:meth:`gctool.decode.generic.Decoder._doubtful`) counts above its
    rank band, ``cut * RANK_BAND`` with ``cut = S_1 max(f, K) eps``.  Under LAPACK's SVD backward
    error (at most ``10 max(f, K) eps ||B_F||``, the decoder's and the attack oracle's
    assumption), the exact ``sigma_{r+1}`` is at most ``||B_F|| max(f, K) eps (RANK_BAND +
    10)``, and ``||B_F|| <= ||B||``; the factor ``1 + 1e-4`` covers the (1 + 10 max eps) of both
    SVDs and this product's rounding (for max(n, K) below 1e9).

    A decoder ``a`` of B_F then bounds the error that the decoder's rule gives B_F, whatever its
    singular values in or below the band: ``sqrt(err_r) <= ||B_F^T a - t|| + band_tail ||a||``
    (the rank-r truncation is within ``sigma_{r+1}`` of B_F), the hinge of
    :meth:`~gctool.decode.generic.Decoder._decodes_truncated` with every F's bound at once."""
    return float(smax) * max(n, K) * EPS * (RANK_BAND + 10.0) * (1 + 1e-4)


def level_tol(tol: Tol, epsilon: Tol, k: int) -> Tol:
    """The tolerance whose decoding limit is the ε-threshold level ``epsilon + typed(tol) * k``
    (``epsilon``: a raw error, typed like tol), exactly: ``typed(tol) + typed(epsilon) / k``;
    ``tol`` itself for epsilon = 0.  An error *exceeds* epsilon when it fails to decode under
    this tolerance, so a threshold search decides each set against the exact level as verify
    decides against the exact limit (sets float64 cannot place are decided exactly)."""
    eps = typed(epsilon)
    return tol if eps == 0 else typed(tol) + eps / int(k)



def lost_terms(s: int, d: int, n: int, K: int, m: int) -> tuple[float, float, float, float]:
    """The lost-direction part of the attack oracle's error model (derived at
    :data:`gctool.audit.oracles.optimal.FAST_ERR`): sqrt(err) of a set of s stragglers that
    loses directions is off by ``(dl h + dc) eps kappa ||t|| + (gl h + gc) eps kappa^2 rho``
    beyond the full set's band, h = 1 / sqrt(min(lam, 1)); returns (dl, gl, dc, gc).  Plain
    arithmetic: the compiled walk calls it too."""
    big = max(n, K)
    p = 10.0 * big
    c_e = p + 4.0 * s * d * np.sqrt(d)
    return (2.0 * (p + big) + 2.0 * c_e, 2.0 * c_e, 2.0 * (p + s * np.sqrt(s)),
            2.0 * s * s * np.sqrt(n) + 3.0 * s * s + 2.0 * p + 2.0 * s * m)


def kkt_muladds(s: int, d: int, m: int = 1) -> float:
    """The multiply-adds of one set's lost error with s > d in the attack oracle's fast path
    (``kernels.optimal._hat_one``, and its numpy route; q = s - d): two Gram matrices of
    A = Qperp[S] (s x d) and their Cholesky factors, A's Householder QR, the basis E (s x q),
    R = E^H N_SS E, b = E^H alpha_S (m columns), R's Cholesky.  Plain arithmetic: both routes'
    time estimates count it."""
    q = s - d
    return (3 * s * d * d + d**3 / 3 + 2 * q * d * s + q * s * s + q * q * s + q**3 / 6
            + 2 * s * d + q * m * s)


def beats(err: float, best: float) -> bool:
    """Is ``err`` a strictly larger error than ``best`` (beyond the tie tolerance)?"""
    return bool(np.isneginf(best) and err > best) or err > best + TIE_RTOL * max(1.0, abs(best))


def first_max(err: np.ndarray) -> int:
    """Index of the first error tied with the maximum (the lexicographically first worst set
    when the rows are in lexicographic order)."""
    err = np.asarray(err, dtype=np.float64)
    if not np.isfinite(err).all():  # inf (an error beyond float64) wins; nan never does
        if np.isposinf(err).any():
            return int(np.flatnonzero(np.isposinf(err))[0])
        if np.isnan(err).all():
            return 0
        err = np.where(np.isnan(err), -np.inf, err)
    top = float(np.max(err))
    return int(np.flatnonzero(err >= top - TIE_RTOL * max(1.0, abs(top)))[0])


def tied_records(err: np.ndarray, first: int | None = None) -> list[int]:
    """The indices a fold needs to find :func:`first_max` of any sequence that holds ``err``
    as one run (:class:`gctool.engine.sweep.FirstMaxFold`): ``first = first_max(err)`` and
    each later value larger than every value before it (all within the tie tolerance of the
    maximum: the first max of the whole sequence is one of them)."""
    err = np.asarray(err, dtype=np.float64)
    i = first_max(err) if first is None else first
    if not err.size or not np.isfinite(err[i]):
        return [i]
    after = err[i:]  # a record beats the running maximum before it (fmax: nan never counts)
    records = np.flatnonzero(after[1:] > np.fmax.accumulate(after)[:-1]) + i + 1
    return [i, *records.tolist()]


def sorted_distinct(a: np.ndarray) -> np.ndarray:
    """The distinct values of the 1-d integer array ``a``, sorted: ``np.unique(a)``, without
    its masked-array check, which imports ``numpy.ma`` on first use (6-10 ms of a command's
    start, before a verify's first straggler set)."""
    a = np.sort(np.asarray(a).ravel())
    if a.size < 2:
        return a
    keep = np.empty(a.size, dtype=bool)
    keep[0] = True
    np.not_equal(a[1:], a[:-1], out=keep[1:])
    return a[keep]


def complement(n: int, members: np.ndarray) -> np.ndarray:
    """``0..n-1`` without ``members`` (indices in range), increasing: ``np.setdiff1d(
    np.arange(n), members)`` without its import of ``numpy.ma`` (:func:`sorted_distinct`);
    one set's, in the layers below the engine, whose
    :func:`~gctool.engine.enumeration.survivors_of` takes a batch of straggler sets."""
    keep = np.ones(n, dtype=bool)
    keep[np.asarray(members, dtype=np.intp)] = False
    return np.flatnonzero(keep)


# -- row normalisation ------------------------------------------------------------------------
def row_exponents(B: np.ndarray) -> np.ndarray:
    """Per row, the power of two e with ``2^e * ||row||`` in [1/2, 1) (0 for zero rows).

    Computed without overflow or underflow: the row is first brought to a maximum in
    [1/2, 1) by ``frexp`` of its largest magnitude."""
    A = np.abs(np.asarray(B))
    top = A.max(axis=1) if A.shape[1] else np.zeros(A.shape[0])
    _, e1 = np.frexp(top)
    scaled = np.ldexp(A, -e1[:, None])
    _, e2 = np.frexp(np.sqrt(np.sum(scaled**2, axis=1)))
    e = -(e1 + e2)
    return np.where(top > 0, e, 0).astype(np.int64)


def normalise_rows(B: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(D B, d)``: every non-zero row scaled by the power of two ``d_i`` so that its 2-norm
    lies in [1/2, 1); exact (entries below 2^-1022 of their row's norm aside)."""
    B = np.asarray(B)
    e = row_exponents(B)
    if np.iscomplexobj(B):
        Bn = np.ldexp(B.real, e[:, None]) + 1j * np.ldexp(B.imag, e[:, None])
    else:
        Bn = np.ldexp(B.astype(np.float64), e[:, None])
    _check_exact_scaling(B, Bn)
    return Bn, np.ldexp(1.0, e)


#: smallest normal float64: a scaled entry below it has lost bits (the scaling is not exact)
_TINY = float(np.finfo(np.float64).tiny)


def _check_exact_scaling(B: np.ndarray, Bn: np.ndarray) -> None:
    """Refuse (out of range) a row whose non-zero entries span so many binades that the
    power-of-two scaling pushes its smallest ones below the normal range: float64 would then
    decide a different matrix.  Entries within 2^1021 of their row's largest never do."""
    parts = (Bn.real, Bn.imag) if np.iscomplexobj(Bn) else (Bn,)
    orig = (B.real, B.imag) if np.iscomplexobj(B) else (B,)
    for scaled, raw in zip(parts, orig, strict=True):
        lost = (raw != 0) & (np.abs(scaled) < _TINY)
        if lost.any():
            i = int(np.flatnonzero(lost.any(axis=1))[0])
            row = np.abs(raw[i][raw[i] != 0])
            raise InvalidInput(
                f"row {i} of B has non-zero entries from {float(row.min()):.3g} to "
                f"{float(row.max()):.3g}, a range float64 cannot scale exactly (more than "
                "2^1021): out of range; rescale that row's entries or drop the tiny ones")


# -- numerical rank ---------------------------------------------------------------------------
def rank_cutoff(smax: Any, shape: tuple[int, ...]) -> np.ndarray:
    """Singular values at or below this count as zero: ``sigma_max * max(shape) * eps``."""
    return np.asarray(smax) * max(shape[-2:]) * EPS


def numerical_rank(sv: np.ndarray, shape: tuple[int, ...]) -> int | np.ndarray:
    """Numerical rank from singular values (descending, last axis; batched)."""
    sv = np.asarray(sv)
    if sv.shape[-1] == 0:
        return np.zeros(sv.shape[:-1], dtype=np.int64) if sv.ndim > 1 else 0
    cut = rank_cutoff(sv[..., :1], shape)
    r = np.sum(sv > cut, axis=-1)
    return int(r) if sv.ndim == 1 else r


def condition(sv: np.ndarray, rank: Any) -> np.ndarray:
    """cond on the numerical rank: ``sv[0] / sv[rank - 1]`` (descending singular values, last
    axis; batched: a 0-d array for one set), inf where the rank is 0.  The condition number every
    report shows."""
    sv = np.asarray(sv, dtype=np.float64)
    r = np.asarray(rank)
    smin = np.take_along_axis(sv, np.maximum(r - 1, 0)[..., None], axis=-1)[..., 0]
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where((r > 0) & (smin > 0), sv[..., 0] / np.where(smin > 0, smin, 1.0), np.inf)
    return np.asarray(out)  # 0-d for one set


# -- exact comparisons (symmetry) -------------------------------------------------------------
def exactly_proportional(x: np.ndarray, y: np.ndarray) -> bool:
    """Is ``y = c x`` for some non-zero c, exactly (binary floating-point entries)?

    Uses ``x_i y_j == x_j y_i`` with products computed exactly (:func:`proportional_rows`)."""
    return bool(proportional_rows(np.asarray(y).ravel()[None, :], x)[0])


def proportional_rows(Y: np.ndarray, x: np.ndarray) -> np.ndarray:
    """:func:`exactly_proportional` of ``x`` and each row of ``Y``, one bool per row
    (:func:`proportional_pairs` with x for every row)."""
    Y, x = np.asarray(Y), np.asarray(x).ravel()
    return proportional_pairs(Y, np.broadcast_to(x, Y.shape))


def proportional_pairs(Y: np.ndarray, X: np.ndarray) -> np.ndarray:
    """Is ``Y[r] = c_r X[r]`` for some non-zero c_r, exactly, for each row r of the
    equal-shaped Y and X?  All rows at once, with no rational arithmetic.  A row needs X's
    support (a signed zero is a zero); a row equal to X's or to its negative is proportional
    with no product, and the others are tested by ``y_i x_j == y_j x_i`` for all i (j: the
    row of X's first non-zero), exactly: for real float64 rows with entries in
    :data:`PRODUCT_RANGE`, as float64 pairs (:func:`two_product`: equal reals round alike, so
    their pairs are equal); for complex rows, and real ones with entries beyond that range
    (subnormals included), by :func:`_cross_vanishes`.  Entries must be finite (B never holds
    inf or nan: :meth:`gctool.algebra.fields.Field.coerce` refuses them); a non-finite entry
    on a tested row raises ValueError."""
    Y, X = np.asarray(Y), np.asarray(X)
    held = X != 0
    out = np.all((Y != 0) == held, axis=1)
    rows = np.flatnonzero(out)
    if rows.size == 0 or Y.shape[1] == 0:
        return out
    Y, X = Y[rows], X[rows]
    if not (np.isfinite(Y).all() and np.isfinite(X).all()):
        raise ValueError("proportional_pairs: entries must be finite")
    kind = np.complex128 if np.iscomplexobj(Y) or np.iscomplexobj(X) else np.float64
    Y, X = Y.astype(kind, copy=False), X.astype(kind, copy=False)
    ok = np.all(Y == X, axis=1) | np.all(Y == -X, axis=1)  # c = 1 or -1 (or zero rows)
    rest = np.flatnonzero(~ok)
    if rest.size:
        Y, X = Y[rest], X[rest]
        j = np.argmax(X != 0, axis=1)[:, None]  # (each row here has a non-zero)
        Yj, Xj = np.take_along_axis(Y, j, 1), np.take_along_axis(X, j, 1)
        if kind == np.float64 and _in_product_range(Y, X):
            left, right = two_product(Y, Xj), two_product(Yj, X)
            ok[rest] = np.all(left[0] == right[0], axis=1) & np.all(left[1] == right[1], axis=1)
        else:  # in blocks of about CROSS_BLOCK entries: temporaries that stay in cache
            step = max(1, CROSS_BLOCK // Y.shape[1])
            ok[rest] = np.concatenate([np.all(_cross_vanishes(
                Y[a:a + step], X[a:a + step], Yj[a:a + step], Xj[a:a + step]), axis=(0, 2))
                for a in range(0, rest.size, step)])
    out[rows] = ok
    return out


#: magnitudes of float64 factors whose :func:`two_product` is exact: no overflow (the split
#: of a factor overflows above 2^996) and no underflow (the error of a product of factors of
#: binary exponents e, f is a multiple of 2^(e + f - 104), a normal number down here)
PRODUCT_RANGE = (2.0**-400, 2.0**400)


def two_product(a: Any, b: Any) -> tuple[Any, Any]:
    """``(p, e)`` with ``p = fl(a b)`` and ``a b = p + e`` exactly (Dekker's product by
    Veltkamp's splitting) for float64 factors in :data:`PRODUCT_RANGE`; beyond it, while no
    split overflows (factors below 2^996), exact but for underflow in e, which callers bound
    (:func:`gctool.exactls.refined_error`).  Elementwise on arrays, and compiled for scalars
    (:mod:`gctool.audit.kernels.optimal`)."""
    p = a * b
    t = 134217729.0 * a  # 2^27 + 1: a = ah + al, halves of at most 26 bits
    ah = t - (t - a)
    al = a - ah
    t = 134217729.0 * b
    bh = t - (t - b)
    bl = b - bh
    return p, al * bl - (((p - ah * bh) - al * bh) - ah * bl)


def _in_product_range(*arrays: np.ndarray) -> bool:
    """Do the non-zero parts (real and imaginary) of every entry lie in :data:`PRODUCT_RANGE`?"""
    lo, hi = PRODUCT_RANGE
    for a in arrays:
        for part in ((a.real, a.imag) if np.iscomplexobj(a) else (a,)):
            mag = np.abs(part)
            if mag.size and (mag.max() > hi or np.where(mag == 0, lo, mag).min() < lo):
                return False
    return True


def two_sum(a: Any, b: Any) -> tuple[Any, Any]:
    """``(s, e)`` with ``s = fl(a + b)`` and ``a + b = s + e`` exactly (Knuth's TwoSum, any
    order of magnitudes): exact for all finite float64 a, b whose sum does not overflow,
    subnormals included (the error of a rounded sum is always representable).  Elementwise."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def sum_vanishes(terms: list[np.ndarray]) -> np.ndarray:
    """Is the exact sum of the float64 arrays ``terms`` zero, elementwise?  Exact, with no
    rational arithmetic, for finite terms whose partial sums cannot overflow (the callers'
    terms are below 2^802 in magnitude, and there are 8 of them: no sum comes near 2^1024).

    Shewchuk's Grow-Expansion (J. R. Shewchuk, *Adaptive Precision Floating-Point Arithmetic
    and Fast Robust Geometric Predicates*, Discrete Comput. Geom. 18, 1997, Theorem 10) adds
    one term b at a time to an expansion ``h_1 + ... + h_m`` (increasing magnitudes, zeros
    anywhere) by a chain ``(Q, h_i) = two_sum(Q, h_i)`` from ``Q = b``, Q appended last: each
    step is error-free (:func:`two_sum`), so the final expansion sums to exactly the terms'
    sum, and by the theorem (p = 53 >= 3 bits, round-to-nearest: numpy's float64) it is
    *nonoverlapping* (a component counts from its lowest non-zero bit to its highest): the
    non-zero components, ordered by magnitude, each lie below the lowest non-zero bit of the
    next.  So the components below
    the largest non-zero one sum to less than that bit, which is at most the largest's
    magnitude: the sum is non-zero unless every component is zero (Shewchuk's remark that a
    nonoverlapping expansion has the sign of its largest component).  ``len(terms) - 1`` grow
    steps of 1 to ``len(terms) - 1`` two_sums each."""
    h = [terms[0]]
    for b in terms[1:]:
        grown = []
        q = b
        for comp in h:
            q, err = two_sum(q, comp)
            grown.append(err)
        grown.append(q)
        h = grown
    zero = h[0] == 0
    for comp in h[1:]:
        zero &= comp == 0
    return zero


#: entries of the rows that :func:`proportional_pairs` tests by :func:`_cross_vanishes` at once:
#: its temporaries of 8 products per entry (64 KB) stay in a core's cache (complex rows of 6
#: and 64 entries, thread CPU on the loaded 2-core machine: 2^10 entries 390-460 ns per entry,
#: 2^12 590-750, 2^14 700-810)
CROSS_BLOCK = 1 << 10

#: the largest difference of binary exponents of :func:`_cross_vanishes`'s terms kept as it is:
#: terms further apart cannot cancel each other (see there)
_GAP = 110


def _cross_vanishes(Y: np.ndarray, X: np.ndarray, Yj: np.ndarray, Xj: np.ndarray
                    ) -> np.ndarray:
    """``Y[r, i] Xj[r] - Yj[r] X[r, i] == 0`` exactly, as boolean arrays of the real and the
    imaginary part (shape (2, rows, K)), for finite real or complex Y, X (rows x K) and Yj, Xj
    (rows x 1): the cross products of :func:`proportional_pairs`, with no rational arithmetic.

    Write ``y = Y[r, i] = a + ib``, ``Xj[r] = c + id``, ``Yj[r] = a' + ib'``, ``X[r, i] = c' +
    id'``.  The real part is ``ac - bd - a'c' + b'd'`` and the imaginary part ``ad + bc - a'd'
    - b'c'``: each a sum of four real products, each product split by :func:`two_product`
    into ``p + e`` exactly, so each part is the exact sum of 8 floats, which
    :func:`sum_vanishes` tests for zero.  The products must be exact and the 8 floats must
    not overflow while they are summed:

    * every non-zero part in :data:`PRODUCT_RANGE` (the common case): the raw parts are
      multiplied; p and e lie within 2^-906 .. 2^801 (normal), and sums of 8 stay finite.
    * otherwise (huge, tiny or subnormal parts, or parts far apart): each factor is written
      ``m 2^k`` with m in [1/2, 1) (``frexp``, exact, subnormals included) and the mantissas
      multiplied (in range: exact), so each term is ``v 2^f`` with an integer f (the sum of
      the factors' k) and v (p or e) a multiple of 2^-106 of magnitude below 1.  Sorted by f
      (descending; a zero term is given the largest f, where it adds no gap), consecutive
      terms whose f differ by more than ``_GAP = 110`` split the terms into clusters.
      *Lemma*: the sum is zero exactly when both sides of such a split sum to zero.  The
      terms above it are multiples of ``2^(g - 106)``, g their least f, so a non-zero sum of
      them is at least that in magnitude, while the at most 7 terms below sum to less than
      ``7 * 2^(g - 111) < 2^(g - 108)``.  So the sum vanishes exactly when every cluster's
      does.  Each gap above 110 is then shortened to 111 and every term scaled by
      ``2^(f' - f)``, f' its shortened exponent: one power of two per cluster, exact (the
      scaled terms lie within 2^(-7*111 - 106) = 2^-883 .. 1: normal, and sums of 8 stay
      finite), and the clusters stay more than 110 apart, so by the lemma the scaled sum
      vanishes exactly when every cluster's does, that is when the true sum does."""
    shape = (2, *Y.shape)
    # the 8 products (4 per part) and their signs: y x_j and y_j x_i, real then imaginary
    us = (Y.real, Y.imag, Yj.real, Yj.imag, Y.real, Y.imag, Yj.real, Yj.imag)
    vs = (Xj.real, Xj.imag, X.real, X.imag, Xj.imag, Xj.real, X.imag, X.real)
    sign = np.array([1.0, -1.0, -1.0, 1.0, 1.0, 1.0, -1.0, -1.0])
    U = np.stack([np.broadcast_to(u, Y.shape) for u in us])
    V = np.stack([np.broadcast_to(v, Y.shape) for v in vs])
    if _in_product_range(U, V):
        p, e = two_product(U, V)
        p, e = p * sign[:, None, None], e * sign[:, None, None]  # (8, rows, K)
        return sum_vanishes([t for k in range(4) for t in (p[k::4], e[k::4])])
    mu, ku = np.frexp(U)
    mv, kv = np.frexp(V)
    p, e = two_product(mu, mv)
    p, e, f = p * sign[:, None, None], e * sign[:, None, None], ku + kv
    T = np.moveaxis(np.stack([t for k in range(4) for t in (p[k::4], e[k::4])]), 0, -1)
    F = np.moveaxis(np.stack([f[k::4] for k in range(4) for _ in (0, 1)]), 0, -1)
    top = np.where(T == 0, np.iinfo(np.int64).min, F).max(axis=-1, keepdims=True)
    F = np.where(T == 0, top, F)  # (T, F: (2 parts, rows, K, 8 terms))
    order = np.argsort(-F, axis=-1, kind="stable")
    F, T = np.take_along_axis(F, order, -1), np.take_along_axis(T, order, -1)
    step = np.minimum(F[..., :-1] - F[..., 1:], _GAP + 1)  # the shortened gaps
    short = np.concatenate([np.zeros((*shape, 1), dtype=np.int64), -np.cumsum(step, axis=-1)],
                           axis=-1)  # f' - (the largest f): 0 down to -777
    return sum_vanishes(list(np.moveaxis(np.ldexp(T, short.astype(np.int32)), -1, 0)))


def integer_code(B: np.ndarray) -> bool:
    """Are all entries real integers of magnitude at most 2^26 (exact products in float64)?"""
    B = np.asarray(B)
    if np.iscomplexobj(B):
        return False
    return bool(np.all(B == np.round(B)) and np.all(np.abs(B) <= 2.0**26))


def _matching(S: Any) -> int:
    """Size of a maximum matching of the rows and columns of a sparse support: a greedy start
    (rows with the fewest entries first), then one breadth-first augmenting path per
    unmatched row.  scipy's maximum_bipartite_matching takes ~20 s on the banded 1000 x 1000
    support of a real rs code; this takes milliseconds there."""
    indptr, indices = S.indptr, S.indices
    col_of = np.full(S.shape[0], -1, dtype=np.int64)
    row_of = np.full(S.shape[1], -1, dtype=np.int64)
    for i in np.argsort(np.diff(indptr), kind="stable"):
        cols = indices[indptr[i]:indptr[i + 1]]
        free = cols[row_of[cols] < 0]
        if free.size:
            col_of[i], row_of[free[0]] = free[0], i
    adj = [indices[indptr[i]:indptr[i + 1]].tolist() for i in range(S.shape[0])]
    rows, cols = col_of.tolist(), row_of.tolist()
    for root in range(S.shape[0]):
        if rows[root] >= 0 or not adj[root]:
            continue
        parent = {}  # column -> the row it was reached from
        frontier, end = [root], -1
        while frontier and end < 0:
            nxt = []
            for i in frontier:
                for j in adj[i]:
                    if j in parent:
                        continue
                    parent[j] = i
                    if cols[j] < 0:
                        end = j
                        break
                    nxt.append(cols[j])
                if end >= 0:
                    break
            frontier = nxt
        while end >= 0:  # flip the path
            i = parent[end]
            prev = rows[i]
            rows[i], cols[end] = end, i
            end = prev
    return sum(1 for j in rows if j >= 0)


def structural_rank(M: np.ndarray) -> int:
    """Largest rank any matrix with the support of M can have (a maximum bipartite matching
    of rows and columns); an upper bound on the exact rank of M."""
    from scipy.sparse import csr_matrix

    support = np.asarray(M) != 0
    nonzero_rows, nonzero_cols = int(support.any(axis=1).sum()), int(support.any(axis=0).sum())
    if support.all(axis=1).sum() >= min(nonzero_rows, nonzero_cols) or support.all(
            axis=0).sum() >= min(nonzero_rows, nonzero_cols):  # enough full rows or columns:
        return min(nonzero_rows, nonzero_cols)  # a matching of that size exists
    S = csr_matrix(support.astype(np.int8))
    if S.nnz == 0:
        return 0
    return _matching(S)
