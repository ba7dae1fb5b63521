"""BLAS thread pinning for the command line.

gctool's dense linear algebra is many small factorisations (straggler sets, batched SVDs), and
its parallelism is processes or threads (``jobs``).  Multi-threaded OpenBLAS/MKL on top of
that, on a loaded machine, makes small SVDs many times slower, so the CLI starts BLAS with
``GCTOOL_BLAS_THREADS`` threads (default 1) unless ``OPENBLAS_NUM_THREADS``,
``OMP_NUM_THREADS``, ``MKL_NUM_THREADS`` or ``BLIS_NUM_THREADS`` is already set (then that
setting wins).  The variables must be set before numpy loads BLAS, which is why this happens at
CLI start; library users set them in their own environment."""

from __future__ import annotations

import os
from collections.abc import MutableMapping

ENV = "GCTOOL_BLAS_THREADS"
BLAS_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS")


def pin_blas_threads(environ: MutableMapping[str, str] | None = None) -> None:
    """Set every BLAS thread variable that is not set already to ``GCTOOL_BLAS_THREADS``
    (default 1; a value that is not a positive integer counts as 1)."""
    env = os.environ if environ is None else environ
    value = env.get(ENV, "1").strip()
    if not (value.isascii() and value.isdigit() and int(value) >= 1):  # not "٣"
        value = "1"
    for name in BLAS_VARS:
        env.setdefault(name, value)

