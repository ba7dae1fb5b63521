"""Numerical diagnostics of a real/complex ``verify`` run, reported honestly.

What is exact and what is a bound:

* Sets decided by the direct decoder (every failing set, and every set the nullspace screen
  did not accept) have their residual, condition number and decoder norm computed exactly.
* Sets accepted by the nullspace screen have their decoder norm computed exactly
  (``||a||^2 = ||W||^2 + ||Z||^2``, the minimum-norm decoder); their condition numbers are
  bounded by ``cond(B) / sigma_lb`` (CS decomposition, see :mod:`gctool.audit.nullspace`),
  where ``sigma_lb`` is a proved lower bound on ``sigma_min(N[:, S])``.  Sets accepted through
  the constructive residual test (ill-conditioned ones) have no norm of their own; being the
  weakest, they are the ones re-evaluated directly.
* The weakest screened sets (smallest ``sigma_lb``) and the set with the largest decoder norm
  are re-evaluated with the direct decoder, so the worst condition number and worst residual
  are exact values taken on the sets most likely to be worst, each with its straggler set: a
  lower bound on the worst case unless every set was evaluated directly
  (``max_condition_kind``/``max_residual_kind`` say which; the gates of :mod:`gctool.gates`
  compute the exact worst when their verdict hinges on it).
* ``condition_bound`` is a proved upper bound on cond(B_F) over every set examined (None when
  some screened set has no positive sigma_lb).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from gctool.audit.chunks import WEAKEST, Accumulator, _better
from gctool.audit.nullspace import Reduction
from gctool.audit.symmetry import Rotation
from gctool.decode import Decoder
from gctool.decode.generic import BatchResult
from gctool.engine.enumeration import survivors_of
from gctool.engine.sweep import Best
from gctool.reports import LOWER_BOUND, Diagnostics
from gctool.wording import counted

if TYPE_CHECKING:  # pragma: no cover
    from gctool.audit.verify.run import Run

ILL_CONDITIONED = 1e8


def _reevaluate(run: Run, sets: list[list[int]]) -> tuple[Best | None, Best | None, Best | None]:
    """Exact (cond, residual, norm) maxima over ``sets`` with the direct decoder (the run's
    threads share them: :func:`direct_parts`)."""
    if not sets:
        return None, None, None
    S = np.array(sets, dtype=np.intp).reshape(len(sets), run.s)
    best: list[Best | None] = [None, None, None]
    at = 0
    for r in direct_parts(run.decoder, survivors_of(S, run.code.n), run.used_jobs):
        for i in np.flatnonzero(r.ok):
            vals = (float(r.cond[i]), float(np.sqrt(r.error[i])), float(r.norm[i]))
            for j, v in enumerate(vals):
                best[j] = _better((v, sets[at + i]), best[j])
        at += len(r.ok)
    return best[0], best[1], best[2]


@dataclass
class _Direct:
    """A worker of :func:`gctool.engine.threads.run_threads`: the decoder on survivor sets."""

    decoder: Decoder

    def run(self, F: np.ndarray) -> BatchResult:
        return self.decoder.evaluate(F)


def direct_parts(decoder: Decoder, F: np.ndarray, jobs: int) -> list[BatchResult]:
    """The direct decoder on the survivor sets ``F``, in consecutive parts shared by up to
    ``jobs`` threads (numpy's SVDs release the GIL): each set's result does not depend on the
    sets decided with it, and the exact work of doubtful sets is charged in the order of the
    parts (:func:`gctool.engine.threads.in_task_order`), so the results, and the set at which
    the exact budget would run out, are those of one call on every set."""
    parts = min(jobs, F.shape[0] // DIRECT_PART)
    if parts < 2:
        return [decoder.evaluate(F)]
    from gctool.engine.threads import run_threads

    out: list[BatchResult] = []

    def keep(i: int, r: BatchResult) -> bool:
        out.append(r)
        return False

    run_threads(_Direct(decoder), np.array_split(F, parts), parts, keep)
    return out


#: sets per thread at least when the re-evaluation is shared (one SVD of B_F each: about
#: 0.2 ms for n = 48)
DIRECT_PART = 4


def finish_diagnostics(run: Run, acc: Accumulator, red: Reduction, rot: Rotation | None
                       ) -> tuple[Diagnostics, list[str]]:
    extra = [b[1] for b in acc.weakest]
    if acc.max_norm is not None and acc.max_norm[1] not in extra:
        extra.append(acc.max_norm[1])
    cond, resid, norm = _reevaluate(run, extra)
    cond, resid = _better(cond, acc.max_cond), _better(resid, acc.max_resid)
    norm = _better(norm, acc.max_norm)
    d = Diagnostics()
    if cond is not None:
        d.max_condition, d.max_condition_stragglers = cond
    if resid is not None:
        d.max_residual, d.max_residual_stragglers = resid
    if norm is not None:
        d.max_decoder_norm, d.max_decoder_norm_stragglers = norm
    d.min_failing_error = acc.min_fail_err
    screened = acc.evaluated - acc.direct
    # every screened set re-evaluated (the weakest are all of them): the maxima are exact
    every = screened == 0 or (screened <= WEAKEST and len(acc.weakest) == screened)
    whole = every and run.sample is None
    d.max_condition_kind = "exact" if whole else LOWER_BOUND
    d.max_residual_kind = ("exact" if whole and (rot is None or rot.unimodular)
                           else LOWER_BOUND)
    d.condition_bound = _bound(acc, red, d.max_condition if every else None)
    d.exact_evaluations = acc.direct + len(extra)
    d.note = _note(run, acc, rot, len(extra))
    warning = ill_conditioned(d)
    return d, [] if warning is None else [warning]


def _bound(acc: Accumulator, red: Reduction, exact: float | None) -> float | None:
    """A proved upper bound on cond(B_F) over the sets examined: ``exact``, the maximum when
    every set was evaluated directly (None: not all were); else the larger of the direct sets'
    maximum and the nullspace bound kappa(B) / sigma_lb (None when some screened set has no
    positive sigma_lb, e.g. one accepted by the constructive residual test: nothing bounds
    it)."""
    if exact is not None:
        return exact
    if not acc.min_screen or not np.isfinite(acc.min_screen):
        return None
    direct = acc.max_cond[0] if acc.max_cond else 0.0
    return max(red.kappa / acc.min_screen, direct)


def ill_conditioned(d: Diagnostics) -> str | None:
    """The warning of a worst condition number above :data:`ILL_CONDITIONED` (None: none)."""
    if d.max_condition is None or d.max_condition <= ILL_CONDITIONED:
        return None
    return (f"decodes, but ill-conditioned: cond(B_F) = {d.max_condition:.3g} at stragglers "
            f"{d.max_condition_stragglers}; decoded gradients may lose about "
            f"{int(np.log10(d.max_condition))} digits")


def _note(run: Run, acc: Accumulator, rot: Rotation | None, extra: int) -> str:
    parts = [
        "residual = ||a^T B_F - T||_F, condition = sigma_max/sigma_min of B_F on its numerical "
        "rank, decoder norm = ||a||_F",
        f"{counted(acc.direct, 'set')} decided by the direct decoder (exact diagnostics)",
    ]
    screened = acc.evaluated - acc.direct
    if screened > 0:
        parts.append(
            f"{counted(screened, 'set')} accepted by the nullspace kernel (conditioning screen, "
            "decoder norm exact; or constructive residual test, norm not computed), condition "
            f"bounded by condition_bound; the {extra} weakest of them re-evaluated directly "
            "for the worst condition/residual/norm")
    if rot is not None and not rot.unimodular:
        parts.append("rotation symmetry with |gamma| != 1: values are those of the orbit "
                     "representatives (rotations rescale rows, which changes cond and ||a||)")
    parts.extend(run.notes)
    return "; ".join(parts)
