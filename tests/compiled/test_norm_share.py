"""The real walk's norm share (:func:`gctool.audit.kernels.real.norm_share`, the estimate's
share of decoder norms computed in full) solves its sample's square systems by LU where they
are far from singular and by pinv elsewhere (:func:`~gctool.audit.kernels.real._min_norm_solve`):
the minimum-norm solutions of pinv, up to round-off, and the same share."""

from __future__ import annotations

import numpy as np
import pytest

from gctool.audit.kernels import real
from gctool.audit.nullspace import reduce_float

from helpers import built


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
    code = built(scheme, n, s, **kw)
    red = reduce_float(code, 1e-9)
    args = (red.N.T, red.W, code.row_normalised()[1], s)
    got = real.norm_share(*args)
    monkeypatch.setattr(real, "_min_norm_solve", lambda A, Y: np.linalg.pinv(A) @ Y)
    assert got == real.norm_share(*args)


@pytest.mark.parametrize("complex_", [False, True])
def test_the_climbs_rank_one_norms_are_the_solves(monkeypatch: pytest.MonkeyPatch,
                                                  complex_: bool) -> None:
    """The climb's neighbours (one straggler of S swapped) by rank-one updates of S's inverse
    (:func:`~gctool.audit.kernels.real._swap_norms`): the norms of the solve per set
    (:func:`~gctool.audit.kernels.real._sample_norms`) to 1e-8 relative where S's system and
    the neighbour's are far from singular; a neighbour made singular (two proportional rows),
    and every neighbour of a singular S, is that route's own (pinv), exactly."""
    from gctool.numerics import complement

    rng = np.random.default_rng(7)
    n, d, m = 20, 4, 2
    NT = rng.standard_normal((n, d)) + (1j * rng.standard_normal((n, d)) if complex_ else 0)
    W = rng.standard_normal((n, m)) + (1j * rng.standard_normal((n, m)) if complex_ else 0)
    scale = 2.0 ** rng.integers(-2, 3, size=n)
    S = np.array([1, 5, 9, 14])
    NT[17] = 2 * NT[1]  # swapping 5 for 17 makes A' singular (rows 1 and 17)
    out = complement(n, S)
    pairs = np.stack(np.meshgrid(np.arange(d), out, indexing="ij"), -1).reshape(-1, 2)
    cand = np.repeat(S[None], pairs.shape[0], axis=0)
    cand[np.arange(pairs.shape[0]), pairs[:, 0]] = pairs[:, 1]
    cand.sort(axis=1)
    want = real._sample_norms(NT, W, scale, cand)[0]
    calls: list[int] = []
    sample = real._sample_norms

    def counted(*args: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        calls.append(args[3].shape[0])
        return sample(*args)

    monkeypatch.setattr(real, "_sample_norms", counted)
    got = real._swap_norms(NT, W, scale, S, pairs, cand)
    singular = np.flatnonzero((pairs[:, 0] == 1) & (pairs[:, 1] == 17))
    assert calls and sum(calls) < pairs.shape[0] // 4  # the others by the update
    assert np.array_equal(got[singular], want[singular])
    assert np.allclose(got, want, rtol=1e-8, atol=0)
    calls.clear()
    T = np.array([1, 5, 9, 17])  # itself singular: every neighbour by the solves
    out = complement(n, T)
    pairs = np.stack(np.meshgrid(np.arange(d), out, indexing="ij"), -1).reshape(-1, 2)
    cand = np.repeat(T[None], pairs.shape[0], axis=0)
    cand[np.arange(pairs.shape[0]), pairs[:, 0]] = pairs[:, 1]
    cand.sort(axis=1)
    got = real._swap_norms(NT, W, scale, T, pairs, cand)
    assert calls == [pairs.shape[0]]
    assert np.array_equal(got, sample(NT, W, scale, cand)[0], equal_nan=True)
