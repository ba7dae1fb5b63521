"""The stopping rule of codes over R or C by one batched QR per chunk of rounds.

**QR** (every code over R or C without the group shape): one Householder QR (LAPACK, batched
over rounds) of ``[B_F^T | T^T]`` with the first ``cap`` arrivals as columns, in arrival order,
gives the least-squares residual of *every* prefix at once: the prefix of length j leaves
``sum_{i >= j} |R_i,targets|^2`` (an incremental rank update in arrival order, without
cancellation).  A round is decided here only when the verdict is clear: the prefix has full
numerical rank (``|R_jj|`` far above ``eps``) and the residuals where it first decodes and just
before lie a factor :data:`MARGIN` below and above ``tol k``.  Any other round (a
rank-deficient prefix, a verdict near the tolerance) goes to the naive path, so the result is
the naive path's.
"""

from __future__ import annotations

import numpy as np

from gctool.budget import Meter

#: a fast path's verdict must clear the tolerance ``tol k`` by this factor, else the naive
#: path decides
MARGIN = 100.0
#: entries of the stacked [B_F^T | T^T] per batched QR
_CHUNK_ENTRIES = 4_000_000
#: a round of the batched QR of arrival prefixes (:meth:`PrefixQR.decide`: the QR of its K x
#: (cap + m) matrix and the residuals of its prefixes) takes QR_ROUND_NS * u^QR_POWER ns for
#: u = K (cap + m)^2 (complex: QR_COMPLEX_ROUND_NS * u^QR_COMPLEX_POWER) ...
QR_ROUND_NS = 45.0
QR_POWER = 0.62
QR_COMPLEX_ROUND_NS = 35.0
QR_COMPLEX_POWER = 0.68
#: ... and every call (a chunk of rounds, or one set of :meth:`StopRule.decodes_mask`) this
#: much more: numpy's checks of the batch and the verdicts' arithmetic.  Fitted to the CPU time
#: of batches of 300 rounds and of single sets, random dense real and complex K x cap = 12 x 8
#: to 150 x 140 (one core of the 2-core development machine, minimum of 5 under load): the
#: rounds read 0.65-1.66 of the fit, single sets 150-170 us at u below 10^4 (u^1 ns, the charge
#: before, read 0.24-1.5 of batches and 15-250 of single sets)
QR_CALL_NS = 150_000


def qr_cost(rounds: int, K: int, cap: int, m: int, complex_: bool) -> float:
    """Estimated work of :meth:`PrefixQR.decide` on ``rounds`` rounds of ``cap`` arrivals (one
    call of ``rounds`` rows: chunks of :data:`_CHUNK_ENTRIES`), in ns."""
    if rounds <= 0:
        return 0.0
    cap = max(cap, 1)
    u = float(K * (cap + m) ** 2)
    per = (QR_COMPLEX_ROUND_NS * u ** QR_COMPLEX_POWER if complex_
           else QR_ROUND_NS * u ** QR_POWER)
    chunk = max(1, _CHUNK_ENTRIES // (K * (cap + m)))
    return -(-rounds // chunk) * QR_CALL_NS + rounds * per


def qr_decides(K: int, cap: int) -> bool:
    """Whether :meth:`PrefixQR.decide` can decide any round of ``cap`` arrivals of a code with
    ``K`` columns (the QR's rows): with more arrivals than that some prefix is rank-deficient,
    and every round goes to the naive path."""
    return K >= cap


class PrefixQR:
    """Residuals of every arrival prefix of a real or complex code by batched QR."""

    def __init__(self, Bt: np.ndarray, Tt: np.ndarray, limit: float, meter: Meter) -> None:
        self.Bt, self.Tt = Bt, Tt  # (K, n) and (K, m)
        self.limit, self.meter = limit, meter

    def decide(self, order: np.ndarray, cap: int, p: np.ndarray, exact: np.ndarray
               ) -> np.ndarray:
        """Fill p/exact for the rounds the QR path can decide; return the others."""
        K, m = self.Tt.shape
        limit = self.limit
        eps = np.finfo(np.float64).eps
        if not qr_decides(K, cap):
            return np.arange(len(order))
        chunk = max(1, _CHUNK_ENTRIES // (K * (cap + m)))
        left: list[int] = []
        for start in range(0, len(order), chunk):
            rows = np.arange(start, min(start + chunk, len(order)))
            self.meter.charge(qr_cost(len(rows), K, cap, m, np.iscomplexobj(self.Bt)),
                              "QR of arrival prefixes")
            M = np.concatenate([self.Bt[:, order[rows, :cap]].transpose(1, 0, 2),
                                np.broadcast_to(self.Tt, (len(rows), K, m))], axis=2)
            Rf: np.ndarray = np.asarray(np.linalg.qr(M, mode="r"))  # (rows, min(K,cap+m), cap+m)
            diag = np.abs(np.diagonal(Rf[:, :cap, :cap], axis1=1, axis2=2))
            full = diag.min(axis=1) > diag.max(axis=1) * max(cap, K) * eps * 1e4
            tail = np.sum(np.abs(Rf[:, :, cap:]) ** 2, axis=2)  # (rows, min(K, cap+m))
            resid = np.cumsum(tail[:, ::-1], axis=1)[:, ::-1][:, 1: cap + 1]  # after j+1 cols
            if resid.shape[1] < cap:
                resid = np.pad(resid, ((0, 0), (0, cap - resid.shape[1])))
            below = resid <= limit
            has = np.asarray(below.any(axis=1), dtype=bool)
            q = np.where(has, np.argmax(below, axis=1), cap - 1)  # 0-based prefix end
            at = resid[np.arange(len(rows)), q]
            before = np.where(q > 0, resid[np.arange(len(rows)), np.maximum(q - 1, 0)], np.inf)
            clear = np.where(has, (at <= limit / MARGIN) & (before >= limit * MARGIN),
                             at >= limit * MARGIN)
            good = np.asarray(full & clear, dtype=bool)
            p[rows[good]] = np.where(has, q + 1, cap)[good]
            exact[rows[good]] = has[good]
            left.extend(rows[~good].tolist())
        return np.array(left, dtype=np.int64)
