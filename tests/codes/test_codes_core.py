"""The core schemes (frc, cyclic, uncoded): structure, tolerance and parameter errors."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from gctool.audit.attack import threshold
from gctool.audit.verify import verify
from gctool.codes import design
from gctool.errors import DesignError, InvalidInput

from oracles import decodes_rational


@pytest.mark.parametrize(("n", "s", "k"), [(6, 2, None), (6, 1, 12), (4, 3, None), (5, 0, 10)])
def test_frc_structure_and_threshold(n: int, s: int, k: int | None) -> None:
    code = design("frc", n, s, k)
    kk = n if k is None else k
    assert code.B.shape == (n, kk) and set(np.unique(code.B)) <= {0.0, 1.0}
    assert (code.loads == kk * (s + 1) // n).all()  # meets the load bound exactly
    assert (code.replication == s + 1).all()
    for S in itertools.combinations(range(n), s):  # exact rational oracle
        assert decodes_rational(np.asarray(code.B), tuple(i for i in range(n) if i not in S))
    assert threshold(code).threshold == s + 1


def test_frc_over_gf2() -> None:
    code = design("frc", 6, 2, field="GF(2)")
    assert verify(code).ok and verify(code).arithmetic == "exact"


@pytest.mark.parametrize("field", ["real", "complex", "GF(31)", "GF(2^5)"])
def test_cyclic_tolerates_exactly_s(field: str) -> None:
    code = design("cyclic", 7, 3, field=field, seed=2)
    assert code.seed == 2 and (code.loads == 4).all()
    support = np.asarray(code.B) != 0
    for i in range(7):  # row i supported on the cyclic window {i..i+3}
        assert set(np.flatnonzero(support[i])) <= {(i + t) % 7 for t in range(4)}
    assert verify(code).ok
    assert threshold(code).threshold == 4


def test_cyclic_rows_annihilate_h_and_ones_in_span() -> None:
    code = design("cyclic", 6, 2, seed=5)
    B = np.asarray(code.B)
    assert np.linalg.matrix_rank(B) == 6 - 2
    a = np.linalg.lstsq(B.T, np.ones(6), rcond=None)[0]
    assert np.allclose(B.T @ a, 1)


def test_cyclic_is_reproducible_and_seed_matters() -> None:
    a, b = design("cyclic", 6, 2, seed=11), design("cyclic", 6, 2, seed=11)
    c = design("cyclic", 6, 2, seed=12)
    assert np.array_equal(a.B, b.B) and not np.array_equal(a.B, c.B)


def test_unseeded_random_scheme_records_its_seed() -> None:
    code = design("cyclic", 5, 1)
    assert isinstance(code.seed, int)
    assert np.array_equal(design("cyclic", 5, 1, seed=code.seed).B, code.B)


def test_cyclic_gf_redraws_until_valid() -> None:
    code = design("cyclic", 6, 2, field="GF(7)", seed=0)
    assert verify(code).ok and code.params["attempts"] >= 1


def test_uncoded() -> None:
    code = design("uncoded", 4, k=6)
    assert code.s == 0 and code.replication.tolist() == [1] * 6
    assert code.loads.tolist() == [2, 2, 1, 1] and verify(code).ok
    assert not verify(code, 1).ok


@pytest.mark.parametrize(
    ("args", "message"),
    [(("frc", 7, 2), r"s in \{0, 6\}"), (("frc", 6, 1, 5), "multiple of n/\\(s\\+1\\) = 3"),
     (("cyclic", 5, 5), "smaller than n"), (("cyclic", 5, 1, 6), "k = n"),
     (("uncoded", 3, 1), "use -s 0"), (("frc", 0, 0), "`n` must be"),
     (("nope", 3, 1), "unknown scheme"), (("frc", 6, -1), "`s` must be")],
)
def test_invalid_designs_say_what_would_work(args: tuple, message: str) -> None:  # type: ignore[type-arg]
    with pytest.raises(InvalidInput, match=message):
        design(*args)


def test_tiny_field_fails_with_hint() -> None:
    with pytest.raises(DesignError, match="larger field"):
        design("cyclic", 7, 3, field="GF(2)", seed=0)
