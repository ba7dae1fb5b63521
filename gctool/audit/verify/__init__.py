"""``verify``: does every set of s stragglers leave survivors that decode exactly?

Order of work (``method="auto"``):

1. cheap checks: column support, all n workers, rank bound (each counterexample is confirmed
   by the direct decoder);
2. structural certificate (BCH bound for cyclic codes over GF(q));
3. a reduced enumeration: row classes (FRC groups), rotation orbits, or every set;
4. each enumerated set is decided by the left-null-space kernel (s x d systems) or the direct
   decoder, whichever is cheaper, in chunks over ``jobs`` processes.

``method="exhaustive"`` skips 1-3 and checks every set in lexicographic order (the
counterexample is then the lexicographically first failing set); ``method="structural"``
only accepts a certificate.  ``sample=N`` checks N random sets: a failure is a real
counterexample, but no failure is only "inconclusive" (never ok).

Modules, one per stage: :mod:`~gctool.audit.verify.pipeline` (:func:`verify` and the order of
the stages), :mod:`~gctool.audit.verify.run` (the run's state, reduction of B, kernel choice
and report), :mod:`~gctool.audit.verify.shortcuts` (steps 1-2), :mod:`~gctool.audit.verify.classes`
and :mod:`~gctool.audit.verify.enumeration` (steps 3-4), :mod:`~gctool.audit.verify.diagnostics`
(the numerical diagnostics of an enumeration over R/C).
"""

from gctool.audit.verify.pipeline import verify, verify_with

__all__ = ["verify", "verify_with"]
