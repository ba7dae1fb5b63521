"""Error oracles for ``attack``: the squared error of a straggler set under one decoder.

Three decoders (reference §0.1):

* ``optimal`` -- least squares, ``err(F) = min_a ||a^T B_F - t||^2`` summed over the targets.
  Over GF(q) the error is an indicator (0 decodes exactly, 1 fails).  Monotone: removing
  survivors never lowers it.
* ``fixed`` -- one pre-chosen weight per worker, used on the survivors only:
  ``err_w(F) = ||w_F^T B_F - t||^2``.  Either the user's weights or the *scaled uniform* weights
  ``w_i = n / (r (n - s))`` with r the column weight (the mean column weight when the code is not
  column-regular) and s = |S| the number of stragglers of the set being evaluated (so in worst
  mode, s is the attacked s).  Not monotone in general.
* ``natural`` -- the decoder a scheme ships with, where one exists: for replication schemes
  (``frc``, ``uncoded``) the master keeps the first message to arrive from each group of
  identical workers, with coefficient 1.  Which member arrives first does not change the error.

One module per decoder: :mod:`~gctool.audit.oracles.base` (the :class:`Oracle` protocol:
batches, work budget, diagnostics), :mod:`~gctool.audit.oracles.optimal`,
:mod:`~gctool.audit.oracles.fixed`, :mod:`~gctool.audit.oracles.natural`; :func:`make_oracle`
builds the one a search asks for.  :mod:`~gctool.audit.oracles.kernel` makes an oracle a kernel
of the enumeration engine's workers (it imports this package, not the other way round).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from gctool.audit.oracles.base import Oracle
from gctool.audit.oracles.fixed import FixedOracle
from gctool.audit.oracles.natural import GroupOracle, group_schemes, natural_available
from gctool.audit.oracles.optimal import OptimalOracle
from gctool.budget import Budget
from gctool.decode import DEFAULT_TOL
from gctool.errors import InvalidInput
from gctool.model import GradientCode
from gctool.numerics import Tol
from gctool.request import ATTACK_DECODERS

DECODERS = ATTACK_DECODERS

__all__ = ["DECODERS", "FixedOracle", "GroupOracle", "OptimalOracle", "Oracle", "make_oracle"]


def make_oracle(code: GradientCode, decoder: str = "optimal",
                weights: Sequence[float] | np.ndarray | None = None,
                tol: Tol = DEFAULT_TOL, budget: Budget | None = None) -> Oracle:
    """Build the error oracle for ``decoder`` (one of :data:`DECODERS`), held to ``budget``
    (default :meth:`Budget.default`)."""
    if decoder not in DECODERS:
        raise InvalidInput(f"`decoder` must be one of {', '.join(DECODERS)}, got {decoder!r}")
    if weights is not None and decoder != "fixed":
        raise InvalidInput(f"`weights` does not apply with `decoder` {decoder}: only the fixed "
                           "decoder (`decoder` fixed) has weights", param="weights")
    if decoder == "optimal":
        return OptimalOracle(code, tol, budget)
    if decoder == "fixed":
        return FixedOracle(code, weights, tol, budget)
    if not natural_available(code):
        raise InvalidInput(f"scheme {code.scheme!r} has no natural decoder in gctool (natural "
                           f"decoders: {', '.join(group_schemes())}); use `decoder`=optimal or "
                           "fixed")
    return GroupOracle(code, tol, budget)
