"""The real walk's norm share (:func:`gctool.audit.kernels.real.norm_share`, the estimate's
share of decoder norms computed in full) solves its sample's square systems by LU where they
are far from singular and by pinv elsewhere (:func:`~gctool.audit.kernels.real._min_norm_solve`):
the minimum-norm solutions of pinv, up to round-off, and the same share."""

from __future__ import annotations

import numpy as np
import pytest

from gctool.audit.kernels import real
from gctool.audit.nullspace import reduce_float
from gctool.codes import design


def _stack(rng: np.random.Generator, b: int, s: int, d: int) -> np.ndarray:
    A = rng.standard_normal((b, s, d))
    A[1, -1] = A[1, 0]  # singular
    A[2, -1] = A[2, 0] + 1e-14 * A[2, 1]  # singular to round-off
    A[3] = np.diag(np.logspace(0, -12, s)) @ A[3]  # ill-conditioned (cond 1e12)
    A[4] = 0.0
    A[5, 0] *= 1e-17  # a row far below the others: pinv cuts its direction off
    return A


@pytest.mark.parametrize("s,d", [(3, 3), (6, 6), (4, 7)])
def test_min_norm_solve_is_pinv(s: int, d: int) -> None:
    rng = np.random.default_rng(s * 10 + d)
    A, Y = _stack(rng, 40, s, d), rng.standard_normal((40, s, 2))
    want = np.linalg.pinv(A) @ Y
    got = real._min_norm_solve(A, Y)
    scale = np.max(np.abs(want), axis=(1, 2), keepdims=True) + 1.0
    assert np.all(np.abs(got - want) <= 1e-6 * scale)
    # the singular ones are pinv's own (no LU solve of a singular system), and so is the one
    # whose tiny row pinv cuts off (LU would solve it: a decoder 1e17 times larger)
    assert np.array_equal(got[[1, 4, 5]], want[[1, 4, 5]])


@pytest.mark.parametrize("scheme,n,s,kw", [("cyclic", 48, 6, {"seed": 1}),
                                           ("cyclic", 40, 6, {"seed": 1}),
                                           ("frc", 36, 5, {}), ("rs", 44, 5, {}),
                                           ("is-cr", 48, 5, {}),
                                           ("cyclic", 30, 5, {"seed": 1, "field": "complex"})])
def test_the_share_is_the_one_of_pinv(monkeypatch: pytest.MonkeyPatch, scheme: str, n: int,
                                      s: int, kw: dict[str, object]) -> None:
    code = design(scheme, n=n, s=s, **kw)
    red = reduce_float(code, 1e-9)
    args = (red.N.T, red.W, code.row_normalised()[1], s)
    got = real.norm_share(*args)
    monkeypatch.setattr(real, "_min_norm_solve", lambda A, Y: np.linalg.pinv(A) @ Y)
    assert got == real.norm_share(*args)
