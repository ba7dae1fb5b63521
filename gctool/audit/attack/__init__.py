"""``attack``: worst-case straggler sets, adversarial thresholds and error curves.

Errors are raw squared decoding errors ``||a^T B_F - t||^2`` (reference §0.1) under the chosen
decoder (:mod:`gctool.audit.oracles`: optimal, fixed, natural); ``normalize="k"`` divides them
by k.  Over GF(q) the error is an indicator (0 decodes, 1 fails).

Methods: ``exhaustive`` (:mod:`~gctool.audit.exhaustive`), ``bnb`` (:mod:`~gctool.audit.bnb`),
``greedy`` (:mod:`~gctool.audit.greedy`), ``milp`` (:mod:`~gctool.audit.milp`), ``elementary``
(:mod:`~gctool.audit.elementary`, thresholds only) and ``auto``: exhaustive when it fits the
budget, then the exact solvers, then the heuristics.  Every result says whether it is exact and
carries the sandwich it proved: ``found <= true worst <= upper_bound`` in worst mode and
``threshold_lower <= T <= threshold_upper`` in threshold mode.

One module per concern: :mod:`~gctool.audit.attack.options` (:class:`AttackOptions`, the
decoder's set-up and oracle), :mod:`~gctool.audit.attack.worst` (worst mode, :func:`attack`),
:mod:`~gctool.audit.attack.thresholds` (threshold mode, :func:`threshold`),
:mod:`~gctool.audit.attack.curves` (curve mode, :func:`curve`) and
:mod:`~gctool.audit.attack.figures` (what a report adds: diagnostics, closed form, random
means).
"""

from gctool.audit.attack.curves import curve
from gctool.audit.attack.options import AttackOptions
from gctool.audit.attack.thresholds import threshold, threshold_outcome
from gctool.audit.attack.worst import attack, worst_outcome

__all__ = ["AttackOptions", "attack", "curve", "threshold", "threshold_outcome",
           "worst_outcome"]
