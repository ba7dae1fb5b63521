"""The proved bound on the decoded gradient's error in a message format (docs/precision.md).

Model (one coordinate of the gradient vectors at a time; every coordinate is the same scalar
computation):

* the coefficients are stored in the format P: ``b^_ij = fl_P(b_ij)`` and ``a^_i = fl_P(a_i)``
  (what ``gctool export dtype P`` writes); their rounding is *not* estimated, the bound uses
  the rounded values themselves;
* worker i computes ``m~_i = sum_j b^_ij g_j`` in float32 (products and sums rounded, any
  order): ``|m~_i - sum_j b^_ij g_j| <= gW_i sum_j |b^_ij| |g_j|`` with ``gW_i = gamma_{d_i}``
  (complex: ``sqrt(2) gamma_{2 d_i}``, :func:`gctool.precision.formats.dot_gamma`), ``d_i``
  the non-zeros of row i;
* it sends ``m^_i = fl_P(m~_i)``, ``|m^_i - m~_i| <= uS |m~_i|`` (uS = u of P; 0 for float32,
  whose accumulator is the message);
* the master computes ``sum_i a^_i m^_i`` in float32, any order: error at most
  ``gM sum_i |a^_i| |m^_i|``, ``gM = gamma_f`` (complex: ``sqrt(2) gamma_{2f}``), f the
  non-zeros of a^.

Adding up (``c^ = B^_F^T a^``, the combination the rounded coefficients decode exactly):

    |g^ - t^T g| <= sum_j ( |c^_j - t_j| + sum_i |a^_i| |b^_ij| eps_i ) |g_j|,
    eps_i = (1 + gM)(1 + uS)(1 + gW_i) - 1,

so in any absolute norm (2-norm, max-norm) ``||g^ - g|| <= bound(F) * sum_j ||g_j||`` with
``bound(F) = max_j (...)``.  For m pieces the target u's errors add up over the pieces:
``bound(F) = sqrt(m) max_c sum_u (...)`` (2-norm, relative to ``sum_j ||g_j||_2``).

Rigour of the float64 evaluation: the products ``a^_i b^_ij`` of two P numbers are exact in
float64 (real case), ``c^ - t`` is computed with an error of at most
``gamma_{n+3}(2^-53) (sum_i |a^_i b^_ij| + |t_j|)`` (the zero coefficients of the other
workers add exactly nothing; complex: :func:`gctool.numerics.residual_gamma`, any summation
order), which is added, and the final value is multiplied by
``1 + 4 (n + 32) 2^-52``, more than the relative error of the float64 evaluation of the sums
of non-negative terms, and by ``1 + ROOM``, the room that holds the decoding products'
underflow at and above the floor (:func:`master_floor`).  So the bound is an upper bound on
the true error of the model; nothing is estimated.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gctool.numerics import residual_gamma
from gctool.precision.formats import Format, dot_gamma, gamma, rounded, smallest_part

#: unit roundoff of float64 (the evaluation of the bound)
U64 = 2.0**-53
#: the room every bound leaves for the decoding products' underflow (docs/precision.md): each
#: set's bound is the relative model's times ``1 + ROOM``, and the underflow floor's master
#: part is where the absolute error of float32 products that underflow fits in that room
ROOM = 2.0**-24


@dataclass(frozen=True)
class SetBounds:
    """Bounds of a chunk of survivor sets (arrays indexed by set)."""

    bound: np.ndarray  # the proved relative error bound (inf: a coefficient overflows P)
    residual: np.ndarray  # its part from the rounded coefficients' mismatch |c^ - t|
    rounding: np.ndarray  # its part from the arithmetic's rounding (worker, send, master)
    column: np.ndarray  # the partition (column of B) where the maximum is attained
    overflow: np.ndarray  # bool: a decoder entry is beyond P's range
    #: the smallest non-zero magnitude of a part of the rounded decoder (inf: none), which
    #: with B's sets the float32 accumulator's share of the underflow floor (:func:`floor`)
    amin: np.ndarray
    #: the master products' part of the underflow floor (:func:`master_floor`; 0: none)
    master: np.ndarray

    def replace(self, idx: np.ndarray, other: SetBounds) -> SetBounds:
        """These bounds with the sets ``idx`` taken from ``other`` (bounds of those sets)."""
        out = {}
        for name in ("bound", "residual", "rounding", "column", "overflow", "amin", "master"):
            arr = getattr(self, name).copy()
            arr[idx] = getattr(other, name)
            out[name] = arr
        return SetBounds(**out)


class BoundKernel:
    """The bound of :mod:`gctool.precision.bound` for chunks of survivor sets of one code."""

    def __init__(self, B: np.ndarray, T: np.ndarray, fmt: Format) -> None:
        self.fmt = fmt
        self.complex = bool(np.iscomplexobj(B))
        self.Bh = rounded(B, fmt)  # (n, K) the coefficients the workers use
        self.absB = np.abs(self.Bh)
        d = np.count_nonzero(self.Bh, axis=1)
        self.gW = dot_gamma(d, fmt.accumulator_u, self.complex)  # (n,)
        with np.errstate(invalid="ignore", over="ignore"):
            self.absBw = self.absB * self.gW[:, None]
        self.T = np.asarray(T, dtype=self.Bh.dtype)  # (m, K)
        self.absT = np.abs(self.T)
        n, K = self.Bh.shape
        self.margin = 1 + 4 * (n + 32) * 2 * U64
        self.b_finite = bool(np.isfinite(self.Bh).all())
        self.bmin = smallest_part(self.Bh)  # B^'s smallest non-zero part (inf: B = 0)

    def evaluate(self, F: np.ndarray, a: np.ndarray) -> SetBounds:
        """Bounds for survivor sets F (b, f) decoded by a (b, m, f) (float64 vectors)."""
        b, m, f = a.shape
        n = self.Bh.shape[0]
        full = np.zeros((b, m, n), dtype=np.result_type(a.dtype, self.Bh.dtype))
        full[np.arange(b)[:, None], :, F] = np.swapaxes(a, 1, 2)
        return self.evaluate_padded(full)

    def evaluate_padded(self, a: np.ndarray) -> SetBounds:
        """Bounds for decoders zero-padded to all n workers, a (b, m, n): a zero coefficient
        adds exactly nothing, so three matrix products with B^ give every sum at once."""
        fmt = self.fmt
        b, m, n = a.shape
        ah = rounded(a, fmt)
        finite = np.isfinite(ah).all(axis=(1, 2))
        overflow = ~finite
        if overflow.any():  # the overflowing sets get inf below
            ah = np.where(finite[:, None, None], ah, 0.0)
        flat = ah.reshape(b * m, n)
        abs_a = np.abs(flat)
        amin = _smallest_parts(ah.reshape(b, m * n))
        K = self.Bh.shape[1]
        with np.errstate(invalid="ignore", over="ignore"):  # inf entries: unbounded sets
            S = (abs_a @ self.absB).reshape(b, m, K)  # sum_i |a^_i| |b^_ij|
            Sw = (abs_a @ self.absBw).reshape(b, m, K)  # sum_i |a^_i| |b^_ij| gW_i
            C = (flat @ self.Bh).reshape(b, m, K)
            C -= self.T[None]  # c^ - t
        nnz = np.count_nonzero(flat, axis=1).reshape(b, m)
        gM = dot_gamma(nnz, fmt.accumulator_u, self.complex)
        uS = fmt.send_u
        k1 = (uS + gM + uS * gM)[:, :, None]  # (1 + gM)(1 + uS) - 1
        # float64's own rounding of c^ - t, any BLAS order (complex: 2n real products a
        # component, gctool.numerics.residual_gamma; real: n exact products, gamma_{n+3})
        g64 = residual_gamma(n, True) if self.complex else float(gamma(n + 3, U64))
        with np.errstate(invalid="ignore", over="ignore"):
            resid = np.abs(C)
            resid += g64 * (S + self.absT[None])
            roundoff = k1 * S
            roundoff += (1 + k1) * Sw
            if m > 1:  # the pieces' errors add up
                resid, roundoff = resid.sum(axis=1), roundoff.sum(axis=1)
            else:
                resid, roundoff = resid[:, 0], roundoff[:, 0]
            total = resid + roundoff  # (b, K)
        total[np.isnan(total)] = np.inf
        col = np.argmax(total, axis=1)
        rows = np.arange(b)
        scale = np.sqrt(m) * self.margin * (1 + ROOM)
        bad = overflow | (not self.b_finite)
        with np.errstate(invalid="ignore", over="ignore"):
            bound = np.where(bad, np.inf, total[rows, col] * scale)
            res = np.where(bad, np.inf, resid[rows, col] * scale)
            rnd = np.where(bad, np.inf, roundoff[rows, col] * scale)
        master = master_floor(fmt, self.bmin, amin, nnz.max(axis=1, initial=0), bound, m,
                              self.complex)
        return SetBounds(bound, res, rnd, col, overflow, amin, master)


def _smallest_parts(a: np.ndarray) -> np.ndarray:
    """Per row of ``a`` (b, N): the smallest non-zero magnitude of a real or imaginary part
    (inf: the row is zero)."""
    parts = np.abs(np.concatenate([a.real, a.imag], axis=1) if np.iscomplexobj(a) else a)
    with np.errstate(invalid="ignore"):
        return np.where(parts > 0, parts, np.inf).min(axis=1, initial=np.inf)


def master_floor(fmt: Format, bmin: float, amin: np.ndarray, count: np.ndarray,  # noqa: PLR0913 (the set's numbers)
                 bound: np.ndarray, m: int, complex_: bool) -> np.ndarray:
    """Per set, the smallest partial-gradient entry ``x`` for which the master's products
    keep the set's ``bound`` (0 for an unbounded or empty set): the smaller of two sufficient
    conditions, each holding whatever the signs of the gradients (messages that cancel to
    zero or into the subnormals included), real and complex codes alike.

    * ``tiny32 / (bmin amin)``: a master product that underflows errs by at most
      ``u32 tiny32 <= u32 |a^_i| S_i``, inside the master's own term (the proof for complex
      codes, whose message parts cancel apart, is in the comment below);
    * the room: a product that underflows errs by at most ``u32 tiny32`` (and has no relative
      error), carried through at most p further additions (p = N - 1, complex 2N - 1), so each
      coordinate of a piece errs by at most ``E = c N u32 tiny32 (1 + gamma_p)`` beyond the
      relative model (N = ``count``, the decoder's non-zeros in a piece; c = 1, complex
      ``2 sqrt 2``: 2N real products a component, and the 2-norm of the two components),
      whatever the signs.  Every non-zero coordinate has an entry of at least x, so in the
      2-norm (max-norm) that is at most ``sqrt(m) E / x`` of ``sum_j ||g_j||``, inside the
      room when ``x >= sqrt(m) E (1 + ROOM) / (ROOM bound)``.  The room is the whole
      ``bound ROOM / (1 + ROOM)``: ``bound`` is at least ``1 + ROOM`` times the model's value,
      as the margin of :class:`BoundKernel` (``8 (n + 32) 2^-53``) is several times the
      float64 evaluation's relative error; the room's own float64 evaluation (a few
      roundings, below 2^-49) is covered by the factor ``1 + 2^-20``.  No smaller value
      holds: a set whose bound is its residual, attained, has only the room to spare, and
      its master products can use it up (tests/precision/test_floor.py, the room is sharp)."""
    # Why ``tiny32 / (bmin amin)`` needs no assumption on signs (the partial gradients are
    # real float32 numbers, docs/precision.md; x at least this and at least tiny_P / bmin,
    # :func:`floor`).  Write u = u32, T = tiny32, and for worker i, R_i = sum_j |Re b^_ij| |g_j|,
    # I_i = sum_j |Im b^_ij| |g_j| (real codes: I_i = 0), S_i = sum_j |b^_ij| |g_j| >=
    # ||(R_i, I_i)||_2 (the triangle inequality on the 2-vectors (|Re b^_ij|, |Im b^_ij|)|g_j|).
    # * Worker: each component of m~_i is a real float32 sum of the d_i products
    #   Re b^_ij g_j (Im b^_ij g_j), each 0 or at least bmin x >= T in magnitude (normal; a
    #   fused multiply-add whose result underflows errs by at most u T <= u |b^_ij g_j|), so
    #   within gamma_d R_i (gamma_d I_i); a part is exactly 0 when R_i = 0 (I_i = 0), and
    #   otherwise R_i >= bmin x.
    # * Send: a part r~ of m~_i (R_i > 0) is rounded to P with an error of at most
    #   uS max(|r~|, tiny_P) <= uS (1 + gamma_d) R_i (tiny_P <= bmin x <= R_i), so the complex
    #   error is at most uS (1 + gamma_d) ||(R_i, I_i)|| <= uS (1 + gW_i) S_i, the send term
    #   of the bound; and |Re m^_i| <= k R_i, |Im m^_i| <= k I_i, k = (1 + uS)(1 + gamma_d).
    # * Master: the 2f real products ar mr, ai mi (real component), ar mi, ai mr (imaginary)
    #   of a^_i m^_i = (ar + i ai)(mr + i mi) are exactly 0 when a factor is, and otherwise
    #   are rounded (alone or in a fused multiply-add) with an error of at most
    #   u max(|p|, T): u |p| when normal, u T when the result underflows.  With |ar| >= amin
    #   and mr != 0 => R_i >= bmin x >= T / amin: max(|ar mr|, T) <= |ar| max(|mr|, T / amin)
    #   <= k |ar| R_i, and so on.  The products' own errors of term i are therefore at most
    #   u k (|ar| R_i + |ai| I_i, |ar| I_i + |ai| R_i) per component, of 2-norm at most
    #   sqrt(2) u k |a^_i| ||(R_i, I_i)|| <= sqrt(2) u |a^_i| M_i, M_i = (1 + uS)(1 + gW_i) S_i
    #   (as (ac + bd)^2 + (ad + bc)^2 <= 2 (a^2 + b^2)(c^2 + d^2)).  Carried through at most
    #   2f - 1 additions (exact when their result is subnormal), the master's error is at
    #   most gamma_{2f-1} sqrt(2) sum_i |a^_i| |m^_i| + (1 + gamma_{2f-1}) sqrt(2) u
    #   sum_i |a^_i| M_i <= sqrt(2) gamma_{2f} sum_i |a^_i| M_i = gM sum_i |a^_i| M_i, the
    #   master's term of the bound (real codes: f products, gamma_f, the same steps).
    # No step used |Re m^_i| or |Im m^_i| from below: a part that cancels to any size, zero
    # or subnormal, is covered.  tests/precision/test_floor.py checks it on complex decoders
    # whose message parts cancel at the floor, every coordinate as Fractions.
    count = np.asarray(count, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        normal = np.where(np.isfinite(amin) & (amin > 0), fmt.accumulator_tiny / bmin / amin,
                          0.0)
        c = 2 * np.sqrt(2.0) if complex_ else 1.0
        carried = 1 + gamma(np.maximum(2 * count - 1 if complex_ else count - 1, 0),
                            fmt.accumulator_u)
        err = c * count * fmt.accumulator_u * fmt.accumulator_tiny * carried
        room = np.sqrt(m) * err * (1 + ROOM) / (ROOM * bound) * (1 + 2.0**-20)
        room = np.where(count > 0, room, 0.0)
        out = np.minimum(normal, room)
    ok = np.isfinite(bound) & (bound > 0) & np.isfinite(bmin) & (bmin > 0)
    return np.where(ok, out, 0.0)


def floor(fmt: Format, bmin: float, master: float) -> float:
    """The underflow floor of docs/precision.md: the smallest magnitude ``x`` of the non-zero
    partial-gradient entries (real numbers) at and above which the bound
    holds, underflow included (``bmin`` and ``amin``: the smallest non-zero parts of B^ and of
    the decoders a^).  With ``S_i = sum_j |b^_ij| |g_j| >= bmin x`` (or a message exactly 0):
    a worker's products ``|b^_ij g_j| >= bmin x >= tiny`` (P's smallest normal, at least
    float32's) are normal; a float32 sum that falls below float32's smallest normal is exact
    (IEEE gradual underflow); a message that cancels into P's subnormals errs by at most
    ``u_P tiny <= u_P S_i``, and a master product that underflows by at most ``u_32 tiny32 <=
    u_32 |a^_i| S_i``: both inside the bound's own terms, so the floor needs no assumption on
    signs (complex codes, whose message parts are rounded apart, too: the comment in
    :func:`master_floor`).  The master's products: ``master``, the largest of the sets'
    :func:`master_floor`.  ``max(tiny / bmin, master)``, rounded up; 0 for B = 0."""
    if not np.isfinite(bmin) or bmin <= 0:
        return 0.0
    low = max(fmt.tiny / bmin, master if np.isfinite(master) else 0.0)
    return float(low * (1 + 8 * U64))
