"""verify's reduction of B over GF(q) (:func:`gctool.algebra.linalg.left_null_reduction`) is
one Gauss-Jordan elimination of [B^T | T^T]: its null space N and particular W equal those of
the two eliminations it replaced (:func:`null_space` of B^T, :func:`solve` of [B^T | T^T]),
entry for entry, on dense, low-rank, repeated-row and inconsistent codes over prime,
binary-table and odd-characteristic extension fields, and its work estimate counts the one
elimination."""

from __future__ import annotations

import numpy as np
import pytest

from gctool.algebra import linalg
from gctool.algebra.fields import parse_field
from gctool.algebra.gf import GFArith
from gctool.algebra.linalg import elimination_cost, left_null_reduction, null_space, solve


def _codes(q: int, rng: np.random.Generator) -> list[tuple[np.ndarray, np.ndarray]]:
    out = []
    for n, K in ((12, 7), (7, 12), (20, 20), (33, 9)):
        out.append(rng.integers(0, q, (n, K)))  # dense
        low = rng.integers(0, q, (n, 3)) @ rng.integers(0, q, (3, K)) % q if q in (7, 13) \
            else rng.integers(0, q, (n, 1)) * (rng.integers(0, 2, (1, K)))  # low rank
        out.append(low)
        rep = rng.integers(0, q, (max(1, n // 3), K))
        out.append(rep[rng.integers(0, rep.shape[0], n)])  # repeated rows (frc-like)
        out.append(np.zeros((n, K), dtype=np.int64))  # nothing decodes
    B = rng.integers(0, q, (10, 6))
    targets = [np.ones((1, 6), dtype=np.int64), np.kron(np.eye(2, dtype=np.int64),
                                                         np.ones((1, 3), dtype=np.int64))]
    return [(b.astype(np.int64), np.ones((1, b.shape[1]), dtype=np.int64)) for b in out] + \
        [(B.astype(np.int64), T) for T in targets]


@pytest.mark.parametrize("field", ["GF(7)", "GF(13)", "GF(2^8)", "GF(3^2)"])
def test_one_elimination_gives_the_two_eliminations_answers(field: str) -> None:
    fld = parse_field(field)
    arith = GFArith(fld)
    q = fld.resolved().order
    rng = np.random.default_rng(q)
    seen = set()
    for B, T in _codes(q, rng):
        N, W, consistent = left_null_reduction(arith, B, T)
        N0 = null_space(arith, B.T).reshape(-1, B.shape[0])
        ok0, W0 = solve(arith, B.T, T.T)
        assert consistent == ok0
        np.testing.assert_array_equal(N, N0)
        np.testing.assert_array_equal(W, W0)
        # what they mean: N spans the left null space, W decodes when consistent
        prod = arith.sum(np.swapaxes(arith.mul(N[:, :, None], B[None, :, :]), 1, 2))
        assert not prod.any()
        if consistent:
            got = arith.sum(np.swapaxes(arith.mul(W.T[:, :, None], B[None, :, :]), 1, 2))
            np.testing.assert_array_equal(got, T % q)
        seen.add(consistent)
    assert seen == {True, False}


def test_the_reduction_eliminates_once_and_is_estimated_so(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from gctool.audit.nullspace import reduce_gf
    from gctool.audit.verify.run import Run
    from gctool.model import GradientCode
    from gctool.request import VerifyRequest

    calls = []
    real = linalg.gauss_jordan

    def counted(*args: object) -> object:
        calls.append(args[1].shape)  # type: ignore[attr-defined]
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(linalg, "gauss_jordan", counted)
    fld = parse_field("GF(7)")
    B = np.random.default_rng(5).integers(0, 7, (40, 16))
    code = GradientCode(B, fld, s=2)
    red = reduce_gf(code)
    assert calls == [(1, 16, 41)] and red.N.shape == (24, 40) and red.consistent
    n, K = B.shape
    assert Run(code, VerifyRequest(s=2), 2, 1).reduction_work() == int(
        elimination_cost(K, n + 1, fld, 16))


def test_the_real_reduction_is_estimated_with_its_square_u() -> None:
    """Over R/C the reduction of B is Spectral's SVD with its square U (n x n): a tall B pays
    SQUARE_U_NS per n^2 (n - K) besides solve_cost (real 2048 x 256 took 0.75 s of CPU where
    solve_cost said 0.066), complex B SVD_COMPLEX times that; a square or wide B none."""
    from gctool.audit.verify.run import Run
    from gctool.budget import solve_cost
    from gctool.decode.cost import SQUARE_U_NS, SVD_COMPLEX, spectral_cost
    from gctool.model import GradientCode
    from gctool.request import VerifyRequest

    rng = np.random.default_rng(9)
    for n, K in ((200, 50), (60, 60), (40, 90)):
        real = rng.standard_normal((n, K))
        for fld, B, per in (("real", real, 1.0), ("complex", real + 1j, SVD_COMPLEX)):
            code = GradientCode(B, parse_field(fld), s=1)
            want = per * (solve_cost(n, K) + SQUARE_U_NS * n * n * max(0, n - K))
            assert spectral_cost(n, K, fld == "complex") == pytest.approx(want)
            assert Run(code, VerifyRequest(s=1), 1, 1).reduction_work() == int(want)
    assert spectral_cost(2048, 256) > 9 * solve_cost(2048, 256)
    assert spectral_cost(512, 512) == solve_cost(512, 512)


@pytest.mark.parametrize("field", ["GF(7)", "GF(2^8)", "GF(2147483647)"])
def test_the_elimination_works_on_a_row_major_copy_whatever_the_input_layout(field: str
                                                                            ) -> None:
    """verify's [B^T | T^T] is concatenated from transposes: column-major.  gauss_jordan's
    working copy (the E it returns) is row-major whatever the input's layout, since its
    updates take blocks of rows (strided blocks of a column-major copy ran each update at
    twice the time per multiply-add: rs GF(401) n=300 and frc GF(7) n=512 read 2-3x their
    estimate), and the answer is that of the row-major input."""
    fld = parse_field(field)
    arith = GFArith(fld)
    rng = np.random.default_rng(11)
    B = rng.integers(0, fld.resolved().order, (60, 50))
    T = np.ones((1, 50), dtype=np.int64)
    M = np.concatenate([B.T, T.T], axis=1)[None]
    assert not M.flags.c_contiguous  # what verify hands it
    E, row, piv = linalg.gauss_jordan(arith, M, 60)
    E0, row0, piv0 = linalg.gauss_jordan(arith, np.ascontiguousarray(M), 60)
    assert E.flags.c_contiguous
    np.testing.assert_array_equal(E, E0)
    np.testing.assert_array_equal(row, row0)
    np.testing.assert_array_equal(piv, piv0)
    batch = np.asfortranarray(rng.integers(0, fld.resolved().order, (3, 20, 25)))
    Eb = linalg.gauss_jordan(arith, batch, 20)[0]
    assert Eb.flags.c_contiguous
    np.testing.assert_array_equal(Eb, linalg.gauss_jordan(arith, batch.copy(order="C"), 20)[0])
