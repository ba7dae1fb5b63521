"""The schemes ``gctool simulate`` races, and when the master stops waiting in each of them.

Waiting rules (gctool's, documented in docs/sequential.md; they are the same principle
for every scheme: stop at the earliest arrival after which the scheme can do its job):

* ``uncoded``: wait for all n workers (k = n partitions, one each).
* ``ignore-stragglers``: use the fastest n - s workers and rescale their sum by n/(n - s).
* a gradient code file: stop at the earliest arrival after which the arrived rows decode
  exactly, or at the (n - s)-th arrival; if they do not decode exactly then (approximate codes)
  the optimal least-squares decoder is used on them.  BCC files follow this rule too: they
  decode exactly once every batch is covered.
* coded-reduce: every parent stops at the earliest arrival of its children that decodes its
  level code; the master is the root.
* sr-sgc / m-sgc: a round ends at the earliest arrival (at least one) after which declaring every
  worker still running a straggler keeps the straggler pattern inside the (B, W, λ) model; the
  verifier guarantees that such patterns meet every deadline, and the simulator checks it again
  (``deadline_misses``).

The authors' protocol (``mu`` set; ``gctool simulate`` with ``protocol`` authors and ``mu``), as in
Krishnan et al.'s simulator [C: mamaj/Sequential-Gradient-Coding-2,
``gradient_coding.py``/``multiplexed_sgc.py``/``selective_repeat_sgc.py``, ``perform_round``]:
every round the master waits until (1 + μ) x the first arrival and declares the workers still
running stragglers.  If that straggler set stays inside the scheme's model the round lasts
(1 + μ) x the first arrival (or until the last arrival, when everyone arrived before that);
otherwise the master waits for everyone (the last arrival) and nobody straggles.  "Inside the
model" is, for a gradient code file, that the workers that arrived decode exactly (the
authors' GC baseline checks "fewer than s stragglers", one fewer than an s-tolerant code
needs; gctool uses the code's own decodability; the count-based GC model, :mod:`~.count_gc`,
is the authors' baseline at any s), and for SR-SGC / M-SGC that the pattern stays
(B, W, λ)-admissible.  The other contenders under the authors' protocol (each row's ``rule``
says which rule a contender followed):

* ignore-stragglers: inside the model when at most s workers are late; it then uses every
  worker that arrived by the wait (rescaled), else it waits for everyone;
* partial work and nested codes: at the wait the master holds every message sent by then
  (partial messages of late workers too); inside the model when they decode exactly, else it
  waits for everyone (every message).  A nested round's level is the smallest level whose
  messages received by then decode;
* heterogeneous codes (one-step approximate decoding, no model to leave): the master stops
  at the wait and sums what arrived (the per-worker straggler flags of ``bernoulli`` are not
  used: the late workers are the stragglers); the error is reported per round;
* ErasureHead (approximate, no model to leave): the master stops at the wait or at its K-th
  arrival, whichever is first, and decodes the groups that arrived;
* CodedReduce: every parent applies the rule to its children's arrivals (the wait is
  (1 + μ) x its first child's arrival; it waits for all its children when those that arrived
  do not decode its level code);
* not applied, and said so in the report: uncoded and ring all-reduce (they wait for every
  worker under both rules, so the two coincide) and encoded optimization (its estimate uses
  the fastest n - s workers by design; the μ rule would change the frame's guarantee).

Every contender's messages pay the run's network (``link``, :mod:`gctool.sim.network`): the
rules above apply to the arrivals at the master (at each parent, for CodedReduce).

One class per kind of contender, each in its own module: :mod:`~.code` (a code file),
:mod:`~.erasurehead`, :mod:`~.hetero`, :mod:`~.partial`, :mod:`~.nested`, :mod:`~.encoded`,
:mod:`~.schedule` (SR-SGC, M-SGC), :mod:`~.tree` (CodedReduce), :mod:`~.uncoded`,
:mod:`~.ignore`, :mod:`~.count_gc` (the count-based GC model) and :mod:`~.ring`; what they
share is :mod:`~.base`.  Which contenders race is :mod:`gctool.sim.lineup`'s business.
"""

from gctool.sim.contenders.base import Contender, Run, Setting

__all__ = ["Contender", "Run", "Setting"]
