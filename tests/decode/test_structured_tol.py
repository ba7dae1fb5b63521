"""The structured decoders' check applies the one tolerance rule of :mod:`gctool.numerics`:
a vector passes when its exact error is at most the typed tol times k, also when its computed
error lies within round-off of that limit (a near tie, constructed here on either side)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from gctool.codes import design
from gctool.decode.structured import check, decode_batch
from gctool.numerics import decode_limit


def exact_residual(a: np.ndarray, rows: np.ndarray, targets: np.ndarray) -> Fraction:
    """||a rows - targets||^2 with Python rationals (real codes), no gctool code."""
    out = Fraction(0)
    for u, t in enumerate(targets.tolist()):
        for j, tj in enumerate(t):
            r = sum(Fraction(float(a[u, i])) * Fraction(float(rows[i, j]))
                    for i in range(rows.shape[0])) - Fraction(tj)
            out += r * r
    return out


@pytest.mark.parametrize("scheme, n, s", [("rs", 8, 2), ("rs", 9, 3), ("cyclic-mds", 8, 3)])
def test_structured_check_decides_near_ties_on_the_exact_error(scheme: str, n: int,
                                                                s: int) -> None:
    code = design(scheme, n, s, field="real")
    F = np.arange(s, n, dtype=np.intp)[None, :]
    A = decode_batch(code, F)
    BF = np.asarray(code.B)[F[0]]
    exact = exact_residual(A[0], BF, code.targets())
    got = float(np.sum(np.abs(A[0] @ BF - code.targets()) ** 2))
    assert Fraction(got) != exact  # round-off: the computed error is not the exact one
    limit = (Fraction(got) + exact) / 2  # strictly between: float and exact verdicts differ
    tol = limit / code.k
    err, ok = check(code, F, A, tol)
    assert bool(ok[0]) == (exact <= limit)  # the rule, exactly
    assert bool(err[0] <= decode_limit(code.k, tol)) == bool(ok[0])  # err on its side


def test_direct_decoder_doubts_a_band_value_whose_error_without_it_ties_the_limit() -> None:
    """A singular value just above the rank cut-off (in the band where it might be an exact
    zero) and the error without it on the limit's float: whether the value counts may decide
    the verdict, so the set is doubtful (decided exactly), though both float errors are at or
    below the limit (main compared them with the limit only and trusted 'decodes')."""
    from gctool.decode.generic import Decoder
    from gctool.numerics import EPS, RANK_BAND

    code = design("rs", 8, 2, field="real")
    dec = Decoder(code)
    F = np.array([[0, 1, 2]], dtype=np.intp)
    BF = dec.Bn[F]
    K = BF.shape[2]
    cut = max(3, K) * EPS  # sigma_max = 1
    S = np.array([[1.0, cut * RANK_BAND / 2, 0.0]])  # the second value: in the band
    tt = float(np.sum(code.targets() ** 2))
    c0 = np.sqrt(tt - dec.limit)
    while tt - c0 * c0 > dec.limit:  # the error without the band value: at the limit's float
        c0 = np.nextafter(c0, np.inf)
    assert abs((tt - c0 * c0) - dec.limit) <= 4 * EPS * tt
    c1 = np.sqrt(tt - c0 * c0 - dec.limit / 4)  # with it: a quarter of the limit
    coeff = np.array([[[c0], [c1], [0.0]]])
    error = np.array([tt - c0 * c0 - c1 * c1])
    a = np.zeros((1, 3, 1))
    doubt = dec._doubtful(F, BF, S, coeff, np.array([2]), error, a)
    assert doubt[0]
    half = np.sqrt(tt - dec.limit / 2)  # without the band value: half the limit
    far = np.array([[[half], [np.sqrt(tt - half * half - dec.limit / 4)], [0.0]]])
    assert not dec._doubtful(F, BF, S, far, np.array([2]), error, a)[0]  # not every band set
