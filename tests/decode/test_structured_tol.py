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


def _band_rows(K: int, target: np.ndarray, err_lo: float, err_hi: float) -> np.ndarray:
    """Rows of a 3 x K B_F (row-normalised sizes) with singular values 3/4, one in the rank
    band (half way up it) and 0: t loses about err_lo without the band value and err_hi with
    it (the floats of the construction aside)."""
    from gctool.numerics import EPS, RANK_BAND

    tt = float(target @ target)
    t = target / np.sqrt(tt)
    Q, _ = np.linalg.qr(np.column_stack([t, np.random.default_rng(0).standard_normal((K, 2))]))
    Q[:, 0] = t
    al = np.sqrt(tt - err_lo) / np.sqrt(tt)
    be = np.sqrt(1 - al * al)
    x = np.sqrt(err_lo - err_hi) / np.sqrt(tt)
    y = -x * al / be
    v1 = al * Q[:, 0] + be * Q[:, 1]
    v2 = x * Q[:, 0] + y * Q[:, 1] + np.sqrt(1 - x * x - y * y) * Q[:, 2]
    return np.stack([0.75 * v1, 0.75 * max(3, K) * EPS * RANK_BAND / 2 * v2, np.zeros(K)])


def _doubt(dec, BF: np.ndarray) -> bool:  # noqa: ANN001
    """The direct decoder's _doubtful on one B_F, from its own SVD as evaluate computes it."""
    from gctool.numerics import rank_cutoff

    BF = BF[None]
    U, S, Vh = np.linalg.svd(BF, full_matrices=False)
    keep = S > rank_cutoff(S[:, :1], BF.shape)
    assert keep.sum() == 2  # the band value counts
    coeff = np.conj(Vh) @ dec.T.T
    a = np.conj(U) @ (np.where(keep, 1 / np.where(keep, S, 1), 0)[:, :, None] * coeff)
    error = np.sum(np.abs(np.swapaxes(BF, 1, 2) @ a - dec.T.T) ** 2, axis=(1, 2))
    return bool(dec._doubtful(np.array([[0, 1, 2]]), BF, S, coeff, keep.sum(axis=1), error,
                              a)[0])


def test_direct_decoder_doubts_a_band_value_whose_error_without_it_ties_the_limit() -> None:
    """A singular value just above the rank cut-off (in the band where it might be an exact
    zero) and the error without it at the limit: whether the value counts may decide the
    verdict, so the set is doubtful (decided exactly), though with it the set is proved to
    decode.  Not doubtful is only a proof that the error without it is below the exact
    limit too (a residual bound, the exact limit: a measured margin did it before), checked
    here against the exact error of the rank-1 truncation, with the limit an exact rational a
    relative 1e-12 either side of it."""
    from gctool.decode.generic import Decoder
    from gctool.exactls import Undecided

    code = design("rs", 8, 2, field="real")
    dec = Decoder(code)
    K = code.B.shape[1]
    t = code.targets()[0]
    assert _doubt(dec, _band_rows(K, t, dec.limit, dec.limit / 4))  # the limit's tie
    assert not _doubt(dec, _band_rows(K, t, dec.limit / 2, dec.limit / 4))  # not every set
    BF = _band_rows(K, t, dec.limit * (1 - 1e-5), dec.limit / 4)
    assert not _doubt(dec, BF)  # 1e-5 below: proved (the measured margin doubted it)
    # the exact error without the band value: t's distance to row 0 (the top right singular
    # vector, off it by about 1e-29 relative, far below the 1e-12 here)
    v = [Fraction(float(x)) for x in BF[0]]
    tv = sum(Fraction(float(a)) * b for a, b in zip(t, v, strict=True))
    exact = Fraction(float(t @ t)) - tv * tv / sum(x * x for x in v)
    for rel in (Fraction(-1, 10**12), Fraction(1, 10**12), Fraction(1, 10**6)):
        tie = Decoder(code, exact * (1 + rel) / code.k)  # the limit, exactly
        try:
            doubt = _doubt(tie, BF)
        except Undecided:  # the band value decides, and the rank is not certified
            doubt = True
        assert doubt or exact <= tie.exact_limit
        assert doubt == (rel < Fraction(1, 10**6))  # not beyond the residual's accuracy
