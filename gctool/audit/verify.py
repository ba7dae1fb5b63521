"""``verify``: does every set of s stragglers leave survivors that decode exactly?"""

from __future__ import annotations

import time

import numpy as np

from gctool.audit.engine import (
    DEFAULT_MAX_SETS,
    DiagnosticsTracker,
    Progress,
    Scan,
    check_budget,
    check_s,
)
from gctool.audit.enumeration import pad_to
from gctool.decode import DEFAULT_TOL, Decoder
from gctool.model import GradientCode
from gctool.reports import VerifyReport

DIAG_NOTE = (
    "computed on every decodable straggler set: residual = ||a^T B_F - 1||_2, condition = "
    "sigma_max/sigma_min of B_F on its numerical rank, decoder norm = ||a_F||_2"
)


def verify(
    code: GradientCode,
    s: int | None = None,
    *,
    tol: float = DEFAULT_TOL,
    max_sets: int = DEFAULT_MAX_SETS,
    progress: Progress | None = None,
) -> VerifyReport:
    """Decide whether ``code`` tolerates any ``s`` stragglers (default: the code's own s).

    Exhaustive over all C(n, s) straggler sets in lexicographic order; stops at the first
    counterexample.  Over GF(q) every decision is exact; over R/C it uses ``tol`` and reports
    diagnostics.
    """
    s = code.s if s is None else s
    check_s(s, code.n)
    start = time.perf_counter()
    decoder = Decoder(code, tol)
    base = _base(code, s, decoder)
    weak = _weak_partition(code, s)
    if weak is not None:
        j, holders = weak
        return VerifyReport(
            ok=False, counterexample=pad_to(holders, s, code.n), checked=0, total=_total(code, s),
            exact=True, method="column-support",
            reason=f"partition {j} is held by only {len(holders)} worker(s) <= s = {s}; "
            "straggling them loses it",
            elapsed_s=time.perf_counter() - start, **base,
        )
    scan = Scan(decoder, s, progress)
    check_budget(scan.total, max_sets, f"exhaustive verify (n={code.n}, s={s})")
    tracker = DiagnosticsTracker(not decoder.exact)
    counterexample = None
    for S, r in scan.batches():
        tracker.update(S, r)
        bad = np.flatnonzero(~r.ok)
        if bad.size:
            counterexample = S[bad[0]].tolist()
            break
    ok = counterexample is None
    reason = (
        f"all {scan.total:,} straggler sets of size {s} leave decodable survivors"
        if ok else f"straggler set {counterexample} leaves survivors that cannot decode"
    )
    return VerifyReport(
        ok=ok, counterexample=counterexample, checked=scan.checked, total=scan.total,
        exact=True, method="exhaustive", reason=reason,
        diagnostics=tracker.result(DIAG_NOTE), elapsed_s=time.perf_counter() - start, **base,
    )


def _base(code: GradientCode, s: int, decoder: Decoder) -> dict[str, object]:
    return dict(
        s=s, n=code.n, k=code.k, field=str(code.field), scheme=code.scheme,
        arithmetic="exact" if decoder.exact else "float64",
        tolerance=None if decoder.exact else decoder.tol,
    )


def _total(code: GradientCode, s: int) -> int:
    from math import comb

    return comb(code.n, s)


def _weak_partition(code: GradientCode, s: int) -> tuple[int, list[int]] | None:
    """A partition held by at most s workers (an immediate counterexample), if any."""
    rep = code.replication
    j = int(np.argmin(rep))
    if rep[j] > s:
        return None
    return j, np.flatnonzero(code.support[:, j]).tolist()
