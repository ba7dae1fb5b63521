"""Audit engines: :mod:`~gctool.audit.verify` (tolerance certificates) and
:mod:`~gctool.audit.attack` (worst cases, thresholds, error curves), their search methods,
oracles and kernels.  The package imports nothing itself: callers import from the defining
modules (``from gctool.audit.verify import verify``), so a verify run does not load the
attack engine."""
