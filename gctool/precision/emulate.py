"""The rounded computation itself, on real numbers: what the bound of
:mod:`gctool.precision.bound` bounds, and what ``simulate train precision`` runs.

* :func:`messages`: every worker's message ``fl_P(sum_j b^_ij g_j)``, the sum accumulated in
  float32 over the worker's partitions in increasing order (products rounded to float32);
* :func:`decode`: the master's ``sum_i a^_i m^_i`` accumulated in float32 over the survivors in
  increasing order;
* :func:`empirical_errors`: the relative error of that decoded gradient against the exact
  ``t^T g`` (computed in float64 from the float32 partial gradients: a relative error of
  about k 1e-16, far below every format's unit roundoff), for a batch of survivor sets and a
  few gradient draws, in the 2-norm and (one piece) the max-norm, relative to
  ``sum_j ||g_j||`` of the same norm.

The sequential float32 order is one of the orders the bound covers (it holds for any order,
including BLAS's blocked sums and fused multiply-adds).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gctool.limits import REL_SLACK
from gctool.precision.formats import Format, cast

#: coordinates of every gradient draw of the empirical check
WIDTH = 256


def acc_dtype(complex_: bool) -> type[np.generic]:
    return np.complex64 if complex_ else np.float32


def coefficients(x: Any, fmt: Format) -> np.ndarray:
    """Coefficients stored in ``fmt`` and held in the float32 accumulator (exactly)."""
    x = np.asarray(x)
    stored = cast(x, fmt) if not np.iscomplexobj(x) else _complex_in(x, fmt)
    return np.asarray(stored).astype(acc_dtype(np.iscomplexobj(x)))


def _complex_in(x: np.ndarray, fmt: Format) -> np.ndarray:
    """Complex values with both parts rounded to ``fmt``, held as complex64 (exact)."""
    out = np.empty(x.shape, dtype=np.complex64)
    out.real = cast(x.real, fmt).astype(np.float32)
    out.imag = cast(x.imag, fmt).astype(np.float32)
    return out


def send(x: np.ndarray, fmt: Format) -> np.ndarray:
    """Float32 messages as sent in ``fmt`` (rounded, then held in float32 again)."""
    if fmt.accumulates_in_itself:
        return x
    if np.iscomplexobj(x):
        return _complex_in(x, fmt)
    return np.asarray(cast(x, fmt)).astype(np.float32)


def underflow(x: np.ndarray, fmt: Format) -> np.ndarray:
    """The absolute error that sending the float32 messages ``x`` in ``fmt`` may add beyond
    the bound's relative model (``fl(x) = x (1 + d)`` holds in the normal range only): the
    half-spacing of the subnormals, ``u tiny``, at every non-zero entry below ``tiny``
    (0 elsewhere; complex entries part by part)."""
    x = np.asarray(x)
    if fmt.accumulates_in_itself:
        return np.zeros(x.shape)
    half = fmt.u * fmt.tiny
    parts = (x.real, x.imag) if np.iscomplexobj(x) else (x,)
    out = np.zeros(x.shape)
    for part in parts:
        mag = np.abs(part.astype(np.float64))
        out += np.where((mag > 0) & (mag < fmt.tiny), half, 0.0) ** 2
    return np.sqrt(out)


def messages(B: np.ndarray, G: np.ndarray, fmt: Format, sent: bool = True) -> np.ndarray:
    """Messages (n, ...) of every worker for partial gradients G (K, ...): worker i sums
    ``fl32(b^_ij g_j)`` over its non-zero ``b^_ij`` in increasing j in float32, then rounds the
    sum to ``fmt`` (``sent=False``: the float32 sums before that rounding)."""
    Bh = coefficients(B, fmt)
    dt = acc_dtype(np.iscomplexobj(Bh) or np.iscomplexobj(G))
    G32 = np.asarray(G).astype(dt)
    out = np.zeros((Bh.shape[0],) + G32.shape[1:], dtype=dt)
    with np.errstate(over="ignore", invalid="ignore"):
        for i in range(Bh.shape[0]):
            acc = np.zeros(G32.shape[1:], dtype=dt)
            for j in np.flatnonzero(Bh[i]):
                acc = acc + Bh[i, j].astype(dt) * G32[j]
            out[i] = acc
        return send(out, fmt) if sent else out


def decode(F: np.ndarray, a: np.ndarray, msgs: np.ndarray, fmt: Format) -> np.ndarray:
    """Decoded targets (b, m, ...) for survivor sets F (b, f) with float64 decoders a (b, m, f)
    and messages (n, ...) shared by every set, or (b, n, ...) per set: ``sum_i fl32(a^_i m^_i)``
    in float32, survivors in increasing order."""
    ah = coefficients(a, fmt)
    dt = acc_dtype(np.iscomplexobj(ah) or np.iscomplexobj(msgs))
    b, m, f = ah.shape
    per_set = msgs.ndim == 3
    width = msgs.shape[2:] if per_set else msgs.shape[1:]
    acc = np.zeros((b, m) + width, dtype=dt)
    rows = np.arange(b)
    with np.errstate(over="ignore", invalid="ignore"):
        for p in range(f):
            coef = ah[:, :, p].astype(dt)[:, :, None]
            got = msgs[rows, F[:, p]] if per_set else msgs[F[:, p]]
            acc = acc + coef * got[:, None]
    return acc


def draws(K: int, count: int, seed: int, width: int = WIDTH) -> list[np.ndarray]:
    """``count`` float32 gradient draws (K, width): alternately independent Gaussians and
    'aligned' gradients (one positive direction plus 10% noise, as the partial gradients of a
    model far from its optimum), where rounding errors add up most."""
    rng = np.random.default_rng(seed)
    out = []
    for t in range(count):
        if t % 2 == 0:
            G = rng.standard_normal((K, width))
        else:
            v = np.exp(rng.standard_normal(width))
            G = v * (1 + 0.1 * rng.standard_normal((K, width)))
        out.append(G.astype(np.float32))
    return out


def column_values(seed: int, width: int = WIDTH) -> np.ndarray:
    """The values of the single-partition draw: uniform in [1, 2) (every float32 mantissa
    equally likely), the draw that meets the bound's worst partition head on."""
    return np.random.default_rng(seed).uniform(1.0, 2.0, width).astype(np.float32)


def floor_draws(K: int, floor: float, seed: int, width: int = WIDTH) -> list[np.ndarray]:
    """Float32 draws (K, width) whose non-zero entries lie in ``[2^e, 2^(e+1))``, ``2^e`` the
    first power of two at or above the underflow ``floor`` (values uniform in [1, 2) times
    ``2^e``: every entry as small as the floor allows, within a factor 2): one partition per
    coordinate (partitions in turn; no message cancels) and every partition at once with
    random signs (messages, or a complex message's parts, cancel: the floor covers that for
    real and complex codes alike).  Empty when the floor is 0 or not finite."""
    if not (np.isfinite(floor) and floor > 0):
        return []
    top = 2.0 ** np.ceil(np.log2(floor))
    top = top if top >= floor else 2 * top
    rng = np.random.default_rng(seed)
    one = np.zeros((K, width))
    one[np.arange(width) % K, np.arange(width)] = rng.uniform(1.0, 2.0, width)
    signed = rng.uniform(1.0, 2.0, (K, width)) * rng.choice([-1.0, 1.0], (K, width))
    return [(G * top).astype(np.float32) for G in (one, signed)]


def errors_at_scale(B: np.ndarray, T: np.ndarray, F: np.ndarray, a: np.ndarray,
                    fmt: Format, gradients: list[np.ndarray]) -> np.ndarray:
    """Largest relative error (b,) of the decoded gradient over draws taken as they are (not
    scaled, nothing excluded as out of range: the draws of :func:`floor_draws`, where the
    bound must hold); the norms of :func:`empirical_errors`."""
    m, K = T.shape
    k = K // m
    Tr = np.real(np.asarray(T)).astype(np.float64)
    worst = np.zeros(F.shape[0])
    for G in gradients:
        got = decode(F, a, messages(B, G, fmt), fmt)
        G64 = G.astype(np.float64)
        norms = np.sqrt(np.sum(G64.reshape(m, k, -1) ** 2, axis=(0, 2)))
        maxes = np.max(np.abs(G64), axis=1)
        worst = _worse(worst, got, (Tr @ G64)[None], float(np.sum(norms)),
                       float(np.sum(maxes)) if m == 1 else None)
    return worst


def headroom(B: np.ndarray, fmt: Format) -> float:
    """The largest partial-gradient entry for which no message can overflow ``fmt``:
    ``max / max_i sum_j |b^_ij|`` (inf for a zero B)."""
    with np.errstate(over="ignore", invalid="ignore"):
        growth = float(np.max(np.sum(np.abs(coefficients(B, fmt).astype(np.complex128)),
                                     axis=1)))
    return float(fmt.max / growth) if growth > 0 else float("inf")


def _scale(B: np.ndarray, fmt: Format, largest: float) -> float:
    """A power of two that keeps every message of gradients up to ``largest`` below an
    eighth of the format's largest value (1 when they are already)."""
    room = headroom(B, fmt) / 8
    if not np.isfinite(room) or largest <= room or room <= 0:
        return 1.0
    return float(2.0 ** np.floor(np.log2(room / largest)))


def empirical_errors(B: np.ndarray, T: np.ndarray, F: np.ndarray, a: np.ndarray,  # noqa: PLR0913 (the draws and the bounds)
                     fmt: Format, gradients: list[np.ndarray],
                     columns: np.ndarray | None = None,
                     values: np.ndarray | None = None,
                     bounds: np.ndarray | None = None) -> np.ndarray:
    """Largest relative error (b,) of the decoded gradient over the draws, in the 2-norm and
    (m = 1) the max-norm, each relative to ``sum_j ||g_j||`` in its norm (for m pieces the
    rows of a draw are the K = k m pieces, piece-major, and ``||g_j||^2 = sum_u
    ||g_(u k + j)||^2``).  ``columns`` (b,) adds, per set, the draw that holds ``values`` on that
    column of B alone.  Draws are scaled by a power of two so that no message overflows; a set
    whose decoded gradient is still not finite gets nan (out of the model's range).  With the
    sets' proved ``bounds`` (b,), a set also gets nan where a draw exceeds its bound by no more
    than what its messages' underflow (:func:`underflow`, decoded by ``|a^|``) can add: that
    draw left the model's range (underflow) too."""
    m, K = T.shape
    k = K // m
    Tr = np.real(np.asarray(T)).astype(np.float64)
    ah = np.abs(coefficients(a, fmt).astype(np.complex128))  # (b, m, f)
    a2, amax = np.sqrt(np.sum(ah**2, axis=1)), np.max(ah, axis=1)  # (b, f)
    rows = np.arange(F.shape[0])[:, None]
    worst = np.zeros(F.shape[0])
    for G in gradients:
        G = G * np.float32(_scale(B, fmt, float(np.max(np.abs(G)))))
        pre = messages(B, G, fmt, sent=False)
        got = decode(F, a, send(pre, fmt), fmt)  # (b, m, W)
        eta = underflow(pre, fmt)  # (n, W)
        G64 = G.astype(np.float64)
        norms = np.sqrt(np.sum(G64.reshape(m, k, -1) ** 2, axis=(0, 2)))
        maxes = np.max(np.abs(G64), axis=1)
        lost = _lost(a2, amax, np.linalg.norm(eta, axis=-1)[F], np.max(eta, axis=-1)[F],
                     float(np.sum(norms)), float(np.sum(maxes)) if m == 1 else None)
        worst = _worse(worst, got, (Tr @ G64)[None], float(np.sum(norms)),
                       float(np.sum(maxes)) if m == 1 else None, bounds, lost)
    if columns is not None and values is not None:
        v = values * np.float32(_scale(B, fmt, float(np.max(values))))
        Bh = coefficients(B, fmt)
        with np.errstate(over="ignore", invalid="ignore"):
            prods = Bh[:, columns].T[:, :, None].astype(acc_dtype(np.iscomplexobj(Bh))) * v
            got = decode(F, a, send(prods, fmt), fmt)  # (b, m, W)
        eta = underflow(prods, fmt)  # (b, n, W)
        v64 = v.astype(np.float64)
        exact = Tr[:, columns].T[:, :, None] * v64  # (b, m, W)
        norm_max = float(np.max(v64)) if m == 1 else None
        lost = _lost(a2, amax, np.linalg.norm(eta, axis=-1)[rows, F],
                     np.max(eta, axis=-1)[rows, F], float(np.linalg.norm(v64)), norm_max)
        worst = _worse(worst, got, exact, float(np.linalg.norm(v64)), norm_max, bounds, lost)
    return worst


def _lost(a2: np.ndarray, amax: np.ndarray, eta2: np.ndarray, etamax: np.ndarray,
          norm2: float, norm_max: float | None) -> np.ndarray:
    """The relative error (b,) the survivors' underflow can add to a decoded draw: ``sum_i
    ||a^_i|| ||eta_i||`` in each norm (a^_i: survivor i's decoder entries over the pieces),
    with 1% for the float32 decoding of it."""
    with np.errstate(over="ignore", invalid="ignore"):
        rel = np.sum(a2 * eta2, axis=1) / norm2
        if norm_max is not None:
            rel = np.maximum(rel, np.sum(amax * etamax, axis=1) / norm_max)
    return 1.01 * rel


def _worse(worst: np.ndarray, got: np.ndarray, exact: np.ndarray, norm2: float,
           norm_max: float | None, bounds: np.ndarray | None = None,
           lost: np.ndarray | None = None) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):
        err = got.astype(np.complex128 if np.iscomplexobj(got) else np.float64) - exact
        rel = np.sqrt(np.sum(np.abs(err) ** 2, axis=(1, 2))) / norm2
        if norm_max is not None:
            rel = np.maximum(rel, np.max(np.abs(err), axis=(1, 2)) / norm_max)
        if bounds is not None and lost is not None:
            top = bounds * (1 + REL_SLACK)
            rel = np.where((lost > 0) & (rel > top) & (rel <= top + lost), np.nan, rel)
    return np.where(np.isfinite(rel) & ~np.isnan(worst), np.maximum(worst, rel), np.nan)


class Rounding:
    """The model's rounding for a simulation of training (``simulate``, ``train``, ``precision``):
    workers multiply their float32 partial gradients by B's rows stored in ``fmt`` with float32
    accumulation and send the result in ``fmt``; the master decodes with its decoder stored in
    ``fmt``, accumulating in float32.  Products run as float32 matrix products (any order: what
    the bound covers); results come back as float64 (complex128) arrays."""

    def __init__(self, fmt: Format) -> None:
        self.fmt = fmt

    def messages(self, B: np.ndarray, G: np.ndarray) -> np.ndarray:
        """``fl_P(fl32(B^ @ G))`` for worker rows B (r, K) and partial gradients G (K, d)."""
        Bh = coefficients(B, self.fmt)
        dt = acc_dtype(np.iscomplexobj(Bh) or np.iscomplexobj(G))
        with np.errstate(over="ignore", invalid="ignore"):
            out = send(Bh.astype(dt) @ np.asarray(G).astype(dt), self.fmt)
        return np.asarray(out).astype(np.complex128 if np.iscomplexobj(out) else np.float64)

    def decode(self, a: np.ndarray, msgs: np.ndarray) -> np.ndarray:
        """``fl32(a^ @ m^)`` for decoders a (m, r) and received messages (r, d)."""
        ah = coefficients(a, self.fmt)
        dt = acc_dtype(np.iscomplexobj(ah) or np.iscomplexobj(msgs))
        with np.errstate(over="ignore", invalid="ignore"):
            out = ah.astype(dt) @ np.asarray(msgs).astype(dt)
        return np.asarray(out).astype(np.complex128 if np.iscomplexobj(out) else np.float64)
