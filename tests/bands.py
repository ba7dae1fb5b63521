"""attack's stated float64 error model as intervals, for tests that compare its errors with
exact rational ones (tests/oracles.exact_lstsq_error): float64 cannot decide closer than this
on an ill-conditioned B, and a fixed absolute tolerance either flakes there or hides errors on
a well-conditioned one."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from gctool.algebra.spectral import Spectral
from gctool.audit.oracles.fixed import FixedOracle
from gctool.audit.oracles.optimal import FAST_ERR, OptimalOracle
from gctool.model import GradientCode
from gctool.numerics import EPS, TIE_RTOL

#: the oracle of the last code asked about (its set-up is most of an interval's cost when every
#: set of one code is asked in turn)
_LAST: list[tuple[GradientCode, np.ndarray | None, OptimalOracle | FixedOracle]] = []


def _oracle(code: GradientCode, weights: np.ndarray | None = None) -> Any:
    """attack's oracle of ``code``: the optimal decoder's, or the fixed decoder's with
    ``weights``; built once for consecutive calls on the same code and weights."""
    if _LAST and _LAST[0][0] is code and _LAST[0][1] is weights:
        return _LAST[0][2]
    oracle = OptimalOracle(code) if weights is None else FixedOracle(code, weights)
    _LAST[:] = [(code, weights, oracle)]
    return oracle


def attack_interval(code: GradientCode, S: tuple[int, ...], exact: Fraction
                    ) -> tuple[float, float]:
    """Where attack's float64 error of straggler set S may lie, given its exact error: the
    error model attack states for both routes it may take (gctool.audit.oracles.optimal).
    sqrt(err) is off by at most ``off``: the fast path's band (``OptimalOracle.band``, grow
    ~ FAST_ERR max(n, K) eps kappa^2, kappa = cond(B) row-normalised) when it is used, and the
    SVD decoder's (the no-loss part of the same derivation applied to B_F: FAST_ERR max(f, K)
    eps kappa_F ||t||, kappa_F = cond(B_F) row-normalised on its rank).  The widest of the
    two, widened by the tie tolerance."""
    n, K = code.B.shape
    F = [i for i in range(n) if i not in S]
    rho = np.sqrt(float(exact))
    t = float(np.sqrt(np.sum(np.abs(code.targets()) ** 2)))
    off = 0.0  # no survivor, or none with a nonzero row: the error is ||t||^2 exactly
    sp = Spectral.of(np.asarray(code.B)[F]) if F else None
    if sp is not None and sp.rank:
        off = FAST_ERR * max(len(F), K) * EPS * sp.kappa * t
    oracle = _oracle(code)
    if oracle.fast and S:
        drho, grow = oracle.band(float(oracle.kept_floor(np.array([S]))[0]), len(S))
        off = max(off, float(drho + grow * rho))
    lo, hi = max(rho - off, 0.0) ** 2, (rho + off) ** 2
    return lo - TIE_RTOL * max(1.0, lo), hi + TIE_RTOL * max(1.0, hi)


def fixed_interval(code: GradientCode, weights: np.ndarray, S: tuple[int, ...], exact: Fraction
                   ) -> tuple[float, float]:
    """Where attack's float64 error of S under the fixed decoder with ``weights`` may lie,
    given its exact error: the fixed oracle's stated round-off bound (``FixedOracle.band``,
    4 (s+1)^2 (n+K+4) eps times the square of the largest possible residual entry sum;
    errors nearer the limit than that are recomputed exactly), widened by the tie tolerance."""
    off = _oracle(code, weights).band(len(S))
    lo, hi = float(exact) - off, float(exact) + off
    return lo - TIE_RTOL * max(1.0, abs(lo)), hi + TIE_RTOL * max(1.0, abs(hi))
