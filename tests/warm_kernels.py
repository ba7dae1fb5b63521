"""Fill numba's on-disk cache with gctool's compiled kernels (a script, not a test module).

tests/conftest.py runs it in a process of its own beside the suite when the cache is cold (a
fresh clone, as CI's): compiling the kernels takes 20-30 s of CPU, which the suite would
otherwise spend in its own process at the first test that walks compiled code.  Each kernel is
compiled by running it, as a command would (``GCTOOL_COMPILED=1`` on small codes that tolerate
their s, rows and columns shuffled so that no symmetry or certificate skips the enumeration):
the real and complex screens and optimal-decoder walks, the exact walks over GF(p) and
GF(2^m), the encoded frames' spectra.  A test that reaches a kernel first compiles it itself,
as without this script;
numba replaces its cache files atomically, so the two processes never read a partial one."""

from __future__ import annotations

import os

os.environ["GCTOOL_COMPILED"] = "1"

import numpy as np  # noqa: E402

from gctool.audit.attack import attack  # noqa: E402
from gctool.audit.verify import verify  # noqa: E402
from gctool.codes import design  # noqa: E402
from gctool.model import GradientCode  # noqa: E402

#: (scheme, field) of n = 7, s = 2: every kind of compiled walk
KINDS = [("cyclic", "real"), ("cyclic-mds", "complex"), ("cyclic-mds", "GF(29)"),
         ("cyclic-mds", "GF(2^3)")]


def shuffled(code: GradientCode) -> GradientCode:
    rng = np.random.default_rng(0)
    B = np.asarray(code.B)
    B = B[rng.permutation(B.shape[0])][:, rng.permutation(B.shape[1])]
    return GradientCode(B, code.field, code.s, "custom")


def main() -> None:
    for scheme, field in KINDS:
        code = shuffled(design(scheme, n=7, s=2, field=field))
        assert verify(code, 2, method="exhaustive").ok
        if not field.startswith("GF"):
            attack(code, 2, method="exhaustive")
    # the encoded frames' spectra: a walk and given (sampled) sets
    from gctool.audit.spectrum import worst_spectrum

    frame = design("encoded", frame="paley", workers=6, s=1)
    worst_spectrum(frame, 2)
    worst_spectrum(frame, 2, sample=3)


if __name__ == "__main__":
    main()
