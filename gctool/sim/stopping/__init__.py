"""When the master of a gradient code can stop waiting: fast, per-scheme decodability oracles.

The waiting rule of a code file (:mod:`gctool.sim.contenders`) is: stop at the earliest arrival
after which the arrived rows decode exactly, or at the (n - s)-th arrival (cap) with the
optimal approximate decoder.  Decodability is monotone in the set, so the rule is the smallest
decodable prefix of the arrival order.  The naive path binary-searches that prefix with one SVD
of B_F per probe: log2(n) SVDs of an (n-s) x k matrix per round.  This package answers the same
question at the cost of sorting the arrival times plus a check that is precomputed once per
scheme, and :class:`StopRule` (:mod:`~gctool.sim.stopping.rule`) picks the oracle of a code:

* :mod:`~gctool.sim.stopping.groups` – FRC, BCC and any code of the same shape: no linear
  algebra at all;
* :mod:`~gctool.sim.stopping.qr` – every other code over R or C whose B has at least cap
  columns: one batched Householder QR gives the residual of every prefix at once;
* :mod:`~gctool.sim.stopping.dual` – real codes with a large cap that all n workers decode: the
  residual of a prefix from its few stragglers, by data of B computed once (one SVD of B),
  walking down from the cap;
* :mod:`~gctool.sim.stopping.sparse` – the same data by sparse LU for large sparse square codes
  (SR-SGC's and M-SGC's per-round cyclic codes), and the choice between the two;
* :mod:`~gctool.sim.stopping.naive` – codes over GF(q) without the group shape, and every round
  a fast path cannot decide clearly: the generic decoder.

Work is charged as it is spent to the run's :class:`gctool.budget.Meter`;
:func:`~gctool.sim.stopping.rule.rule_cost` estimates it before a run starts.

A fast path decides a round only when its verdict clears the tolerance by a factor 100; any
other round goes to the naive path, so the result is always the naive path's.

Cost per round: groups O(n) after the sort; QR O(k cap^2) flops in LAPACK instead of
log2(n) SVDs of the same size; the dual walk O(s^3) per probe after one SVD of B per scheme
(sparse codes: one sparse LU per scheme and O(|S|) sparse solves per probe).

The same oracles answer "does this set of workers decode" for the per-round codes of SR-SGC and
M-SGC (:meth:`StopRule.decodes_mask`): groups by counting; real codes by the dual residual
of the set's stragglers, then QR, then the naive decoder when the verdict is not clear.
"""

from gctool.sim.stopping.groups import group_labels
from gctool.sim.stopping.naive import PrefixDecoder
from gctool.sim.stopping.rule import StopRule

__all__ = ["PrefixDecoder", "StopRule", "group_labels"]
