"""The enumeration engine (below codes and audit): ranked enumeration of straggler sets
(:mod:`~gctool.engine.enumeration`), sources x kernels -> summaries folded in order
(:mod:`~gctool.engine.sweep`) and the local process runner (:mod:`~gctool.engine.parallel`)."""
