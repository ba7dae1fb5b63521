"""The attack oracle's error band (optimal.FAST_ERR, numerics.lost_terms) on exactly low-rank codes.

tests/audit/test_crosscheck_oracles measures the band on codes that are low rank plus noise,
whose exact error can differ from the rule's (singular values below the cut-off count there
and not here).  These codes are exactly of rank r (integer G times integer M, near-dependent
rows 2^a times another, graded columns 2^-j: every product exact in float64), so the exact
rational error of every set is the rule's error, for sets that lose no direction (the part
of the band the comment at FAST_ERR proves to first order) and for sets that lose directions
(numerics.lost_terms, the Cholesky route's band).  Seeds of a search over 360: the largest
cancellation relative to the model (seed 47), cond(B) 1.2e3 and 2.8e3 (complex), lam 1.8e-9
(seed 63)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from gctool.algebra.fields import parse_field
from gctool.audit.oracles.optimal import FAST_KAPPA, OptimalOracle
from gctool.model import GradientCode

from oracles import exact_lstsq_error, exact_rank_code


@pytest.mark.parametrize("compiled", ["0", "1"])
@pytest.mark.parametrize("seed", [41, 47, 50, 63, 92])
def test_every_sets_exact_error_is_inside_the_band(seed: int, compiled: str,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GCTOOL_COMPILED", compiled)
    B = exact_rank_code(seed)
    n = B.shape[0]
    code = GradientCode(B, parse_field("complex" if np.iscomplexobj(B) else "real"), 0)
    oracle = OptimalOracle(code, tol=1e30)  # a limit no error is near: the raw fast path
    assert oracle.kappa <= FAST_KAPPA and oracle.fast
    d = oracle.Qperp.shape[1]
    lost_sets = 0
    for s in range(1, n):
        if not oracle._uses_hat(s):
            continue
        S = np.array(list(itertools.combinations(range(n), s)))
        if compiled == "1":
            oracle.plan_compiled(s)
        raw = oracle._hat_chunk(S)
        lam = oracle.kept_floor(S) if s > d else np.full(len(S), np.inf)
        drho, grow = oracle.band(lam, s)
        drho, grow = np.broadcast_to(drho, len(S)), np.broadcast_to(grow, len(S))
        for row, e, lm, dr, gr in zip(S, raw, lam, drho, grow, strict=True):
            F = tuple(i for i in range(n) if i not in row)
            exact = float(exact_lstsq_error(B, F, code.targets()))
            rho = np.sqrt(e)
            off = dr + gr * rho
            assert max(rho - off, 0.0) ** 2 <= exact <= (rho + off) ** 2, (
                s, row.tolist(), e, exact, lm)
            lost_sets += s > d
    assert lost_sets > 0
