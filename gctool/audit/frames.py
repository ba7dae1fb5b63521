"""``verify`` and ``bound`` of encoded-optimization frames (scheme ``encoded``, whose family
:class:`gctool.codes.encoded.EncodedFamily` calls them): the frame verifier (epsilon < 1 for
every set of s stragglers) and the bounds of Karakus et al., all on the spectra of
:mod:`gctool.audit.spectrum`."""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field as dc_field
from typing import TYPE_CHECKING, Any

import numpy as np

from gctool.audit.checks import check_s
from gctool.audit.spectrum import (
    Frame,
    Progress,
    SpectrumReport,
    frame_matrix,
    kappa,
    worst_spectrum,
)
from gctool.budget import VALUES_ONLY, Budget, solve_cost
from gctool.engine.enumeration import count_sets
from gctool.limits import SPECTRUM_MAX_SETS
from gctool.model import GradientCode
from gctool.numerics import EPS
from gctool.reports import Report

if TYPE_CHECKING:
    from gctool.engine.sweep import Runner


#: straggler sets the bound report enumerates for its exact epsilon before falling back to the
#: proved upper bound
BOUND_MAX_SETS = 200_000


@dataclass
class EncodedBoundReport(Report):
    """The encoded-optimization bounds for a frame and s stragglers."""

    scheme: str
    frame: str | None
    n: int
    k: int
    s: int
    beta: float
    eta: float
    coherence: float
    welch_bound: float
    tightness: float
    epsilon: float  # exact worst case when epsilon_exact, else the proved upper bound
    epsilon_exact: bool
    epsilon_upper_bound: float
    epsilon_lower_bound: float
    kappa: float | None
    fixed_set_factor: float | None  # f(w_F) <= factor * f(w*) for a fixed survivor set F
    neighbourhood_factor: float | None  # paper: encoded GD ends within factor * f(w*)
    rows: list[dict[str, Any]] = dc_field(default_factory=list)
    ok: bool = True

    @property
    def reason(self) -> str:
        how = "exact" if self.epsilon_exact else "proved upper bound"
        return (f"epsilon {self.epsilon:.6g} ({how}), kappa "
                f"{'none (epsilon >= 1)' if self.kappa is None else f'{self.kappa:.6g}'}")


def encoded_bound(code: GradientCode, s: int | None = None, *,
                  max_sets: int = BOUND_MAX_SETS, budget: Budget | None = None
                  ) -> EncodedBoundReport:
    """Bounds of Karakus et al. for an encoded frame (module docstring of
    :mod:`gctool.codes.encoded`): epsilon, kappa and the error neighbourhood."""

    from gctool.errors import BudgetExceeded

    S = frame_matrix(code)
    n, k = S.shape
    s = code.s if s is None else s
    check_s(s, n)
    fr = Frame.of(S, budget, rows=True)
    st = fr.analysis.stats()
    upper = fr.analysis.upper_bound(s)
    exact = count_sets(n, s) <= max_sets
    if exact:  # the exact worst case when its sets fit the work budget, else the bound
        try:
            eps = worst_spectrum(code, s, max_sets=max_sets, frame=fr).epsilon
        except BudgetExceeded:
            exact, eps = False, upper
    else:
        eps = upper
    f = n - s
    # tight frames with s < k keep k - s eigenvalues of S_F^T S_F at beta: lambda_max >= n/f
    tight = fr.tight
    lower = (s / f) if (tight and s < k) else 0.0
    kap = kappa(eps)
    rows = [
        {"name": "redundancy beta = n/k", "value": st["beta"], "source": "definition"},
        {"name": "fraction waited for eta = (n-s)/n", "value": f / n, "source": "definition"},
        {"name": "coherence max |<s_i,s_j>|", "value": st["coherence"],
         "bound": st["welch_bound"], "kind": "lower (Welch)",
         "source": "Welch 1974; met with equality by ETFs"},
        {"name": "epsilon: (1-eps) I <= M_F <= (1+eps) I", "value": eps,
         "kind": "exact worst case" if exact else "proved upper bound",
         "source": "exhaustive" if exact else "Weyl + Gershgorin"},
        {"name": "epsilon upper bound", "value": upper, "kind": "upper",
         "source": "Weyl + Gershgorin (derived)"},
        {"name": "epsilon lower bound", "value": lower, "kind": "lower",
         "source": "tight frame, s < k: lambda_max(M_F) = n/(n-s) (derived)"},
        {"name": "kappa = (1+eps)/(1-eps)", "value": kap, "source": "Karakus et al."},
        {"name": "fixed survivors F: f(w_F) <= kappa f(w*)", "value": kap,
         "source": "derived (least squares)"},
        {"name": "encoded GD neighbourhood: f(w_t) -> <= kappa^2 f(w*)",
         "value": None if kap is None else kap * kap,
         "source": "Karakus et al. 2017, recalled (re-check)"},
    ]
    return EncodedBoundReport(
        scheme=code.scheme, frame=code.params.get("frame"), n=n, k=k, s=s, beta=st["beta"],
        eta=f / n, coherence=st["coherence"], welch_bound=st["welch_bound"],
        tightness=st["tightness"], epsilon=eps, epsilon_exact=exact,
        epsilon_upper_bound=upper, epsilon_lower_bound=lower, kappa=kap,
        fixed_set_factor=kap, neighbourhood_factor=None if kap is None else kap * kap,
        rows=rows, ok=kap is not None)


def verify_frame(code: GradientCode, s: int | None = None, *,  # noqa: PLR0913 (verify's options)
                 max_sets: int = SPECTRUM_MAX_SETS, sample: int | None = None, seed: int = 0,
                 progress: Progress | None = None, jobs: int | None = 1,
                 runner: Runner | None = None, budget: Budget | None = None
                 ) -> SpectrumReport:
    """``verify`` of an encoded frame: does every set of s stragglers keep epsilon < 1, i.e.
    0 < lambda(M_F) < 2 and a finite kappa (the papers' guarantee exists)?

    The eigenvalues carry float64 round-off of about ``k eps lambda_max``; with the margin
    ``m = 64 k eps max(lambda_max, 1)``: ``ok`` needs an exhaustive run with worst epsilon
    < 1 - m; a failure is a set with epsilon >= 1 + m, or one whose S_F has numerical rank < k
    (:func:`gctool.numerics.numerical_rank` on its singular values), reported as the
    counterexample.  Anything in between, and any sampled run, is not certified (not ok).
    The enumeration runs in ``jobs`` local threads or with ``runner``
    (:func:`~gctool.audit.spectrum.worst_spectrum`).
    """
    from gctool.numerics import numerical_rank

    s = code.s if s is None else s
    S = frame_matrix(code)
    k = code.k
    check_s(s, code.n)
    rep = worst_spectrum(code, s, max_sets=max_sets, sample=sample, seed=seed,
                         progress=progress, jobs=jobs, runner=runner, budget=budget,
                         extra_work=solve_cost(code.n - s, k) // VALUES_ONLY)  # S_F's rank below
    rep.mode = "verify"
    margin = 64 * k * EPS * max(rep.lambda_max, 1.0)
    low = set(rep.lambda_min_stragglers or [])
    F = [i for i in range(code.n) if i not in low]
    rank = numerical_rank(np.linalg.svd(S[F], compute_uv=False), S[F].shape)
    if rank < k:
        rep.ok = False
        rep.stragglers = rep.lambda_min_stragglers
        rep.notes.append(f"stragglers {rep.stragglers} leave S_F of rank {int(rank)} < k = {k}"
                         ": lambda_min = 0, no convergence guarantee")
    elif rep.epsilon >= 1 + margin:
        rep.ok = False
        rep.notes.append(f"stragglers {rep.stragglers} give epsilon = {rep.epsilon:.6g} >= 1: "
                         "no convergence guarantee")
    elif rep.exact and rep.epsilon < 1 - margin:
        rep.ok = True
    else:
        rep.ok = False
        rep.notes.append("not certified: " + ("only sampled sets were checked" if not rep.exact
                                               else "the worst epsilon is within float64 "
                                               "round-off of 1"))
    return rep
