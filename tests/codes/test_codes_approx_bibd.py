"""bibd: the difference-set catalogue against the definition, and the closed-form error
against exhaustive search (gctool.audit.attack / threshold) on small designs."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from gctool.audit.attack import attack, threshold
from gctool.bounds.closed_forms import closed_form_worst_error, uniform_gram
from gctool.codes import design
from gctool.codes import difference_sets as ds
from gctool.decode import Decoder
from gctool.errors import DesignError

from oracles import bibd_error

SMALL = ["fano", "biplane-4", "biplane-7", "biplane-11", "biplane-16", "biplane-37", "pg2-2",
         "pg2-3", "pg2-4", "pg2-5", "pg2-7", "pg2-8", "pg2-9", "pg3-2", "pg3-3", "pg4-2",
         "paley-7", "paley-11", "paley-19", "paley-23", "paley-27", "twin-3", "twin-5",
         "bent-16", "bent-64", "biquadratic-37", "identity-5"]


def is_symmetric_design(B: np.ndarray, kappa: int, lam: int) -> bool:
    """The definition on the incidence matrix: blocks of size κ, points in κ blocks, every pair
    of points in exactly λ blocks (and then every two blocks meet in λ points)."""
    v = B.shape[0]
    J = np.ones((v, v), dtype=np.int64)
    N = B.T  # points x blocks
    return bool(set(np.unique(B)) <= {0, 1} and np.all(B.sum(axis=1) == kappa)
                and np.all(N @ N.T == (kappa - lam) * np.eye(v, dtype=np.int64) + lam * J)
                and np.all(B @ B.T == (kappa - lam) * np.eye(v, dtype=np.int64) + lam * J))


@pytest.mark.parametrize("name", SMALL)
def test_catalogue_designs_satisfy_the_definition(name: str) -> None:
    d = ds.by_name(name)
    assert d.lam * (d.v - 1) == d.kappa * (d.kappa - 1)
    assert is_symmetric_design(ds.incidence(d), d.kappa, d.lam)


@pytest.mark.parametrize("q", [2, 3, 4, 5, 7, 8, 9, 11, 13, 16])
def test_singer_planes_have_the_projective_parameters(q: int) -> None:
    d = ds.by_name(f"pg2-{q}")
    assert (d.v, d.kappa, d.lam) == (q * q + q + 1, q + 1, 1) and d.moduli == (d.v,)
    # cyclic: every non-zero residue is a difference exactly once (plain modular arithmetic)
    diffs = sorted((a - b) % d.v for a in d.D for b in d.D if a != b)
    assert diffs == list(range(1, d.v))


def test_fano_is_the_reference_difference_set() -> None:
    d = ds.by_name("fano")
    assert d.D == (0, 1, 3) and (d.v, d.kappa, d.lam) == (7, 3, 1)
    assert ds.by_name("biplane-7").D == (2, 4, 5, 6)  # the complement of {0, 1, 3}


def test_reference_difference_sets_are_found_by_parameters() -> None:
    for v, k, lam in [(21, 5, 1), (31, 6, 1), (15, 7, 3), (19, 9, 4), (23, 11, 5), (13, 9, 6),
                      (16, 10, 6), (7, 4, 2), (40, 13, 4), (37, 28, 21)]:
        d = ds.by_params(v, k, lam)
        assert (d.v, d.kappa, d.lam) == (v, k, lam)
        assert is_symmetric_design(ds.incidence(d), k, lam)


@pytest.mark.parametrize("params, message", [
    ((22, 7, 2), "Bruck-Ryser-Chowla"),
    ((43, 7, 1), "no such difference set is in gctool's catalogue"),
    ((10, 4, 1), "is not a symmetric design"),
    ((7, 7, 7), "smaller than v"),
])
def test_unknown_parameters_get_a_clear_error(params: tuple[int, int, int], message: str) -> None:
    with pytest.raises(DesignError, match=message):
        ds.by_params(*params)


@pytest.mark.parametrize("name", ["paley-13", "pg2-6", "twin-7", "bent-32", "biplane-5",
                                  "nonsense", "pg1-3", "biquadratic-41"])
def test_unknown_names_are_rejected(name: str) -> None:
    with pytest.raises(DesignError):
        ds.by_name(name)


def test_selection_needs_exactly_one_way() -> None:
    with pytest.raises(DesignError, match="not both"):
        design("bibd", design="fano", v=7, kappa=3, lam=1)
    with pytest.raises(DesignError, match="go together"):
        design("bibd", v=7, kappa=3)
    with pytest.raises(DesignError, match="needs `design`"):
        design("bibd")
    with pytest.raises(DesignError, match="smaller than n"):
        design("bibd", design="fano", s=7)


def test_code_orientation_workers_are_blocks() -> None:
    code = design("bibd", design="fano", s=2)
    assert (code.n, code.k, code.s) == (7, 7, 2)
    assert code.assignment()[0] == [0, 1, 3] and code.assignment()[2] == [2, 3, 5]
    assert code.params["difference_set"] == [0, 1, 3] and code.params["lambda"] == 1
    assert design("bibd", design="fano", complement=True).params["kappa"] == 4


def test_fano_errors_match_the_reference_table() -> None:
    code = design("bibd", design="fano")
    expected = [0, Fraction(1, 4), Fraction(4, 7), 1, Fraction(8, 5), Fraction(5, 2), 4, 7]
    for s, value in enumerate(expected):
        assert attack(code, s).raw_error == pytest.approx(float(value), abs=1e-9)
        assert bibd_error(7, 3, 1, s) == pytest.approx(float(value))
        found = closed_form_worst_error(code, s)
        assert found is not None and found[0] == pytest.approx(float(value), abs=1e-12)


# reference: eps = 0.25 -> 2 and eps = 1 -> 4 are ties (err(1) = 1/4, err(3) = 1 exactly) that
# float64 cannot decide, so attack is checked just above the ties; the exact values come from
# the closed form below and from gctool's tie-aware exact_threshold.
@pytest.mark.parametrize("eps, expected",
                         [(0.0, 1), (0.25 + 1e-9, 2), (0.5, 2), (1.0 + 1e-9, 4), (1.5, 4)])
def test_fano_eps_thresholds(eps: float, expected: int) -> None:
    assert threshold(design("bibd", design="fano"), eps).threshold == expected


@pytest.mark.parametrize("eps, expected", [(0.0, 1), (0.25, 2), (0.5, 2), (1.0, 4), (1.5, 4)])
def test_fano_eps_thresholds_with_ties(eps: float, expected: int) -> None:
    from gctool.bounds.approx import exact_threshold

    assert exact_threshold(design("bibd", design="fano"), eps) == (expected, True)


def test_fano_eps_thresholds_exactly_from_the_closed_form() -> None:
    def t_eps(eps: Fraction) -> int:
        return min(s for s in range(8) if Fraction(s * 2, 2 + 7 - s) > eps)

    assert [t_eps(Fraction(e)) for e in ("0", "1/4", "1/2", "1", "3/2")] == [1, 2, 2, 4, 4]


def test_fano_uniform_decoder() -> None:
    code = design("bibd", design="fano")
    d = Decoder(code).decode([0, 1, 2, 3, 4])
    assert np.allclose(d.a, 3 / 7)  # κ / (κ - λ + λ f) with f = 5


@pytest.mark.parametrize("name", ["biplane-7", "pg2-3", "biplane-11", "pg3-2", "paley-11"])
def test_closed_form_matches_exhaustive_attack(name: str) -> None:
    code = design("bibd", design=name)
    kappa, lam = code.params["kappa"], code.params["lambda"]
    for s in range(0, min(code.n, 5) + 1):
        worst = attack(code, s).raw_error
        assert worst == pytest.approx(bibd_error(code.n, kappa, lam, s), abs=1e-8)
        found = closed_form_worst_error(code, s)
        assert found is not None and found[0] == pytest.approx(worst, abs=1e-8)


def test_error_does_not_depend_on_which_workers_straggle() -> None:
    code = design("bibd", design="pg2-3")
    dec = Decoder(code)
    errs = {round(dec.decode([i for i in range(13) if i not in S]).error, 9)
            for S in [(0, 1), (0, 5), (3, 9), (11, 12)]}
    assert len(errs) == 1


def test_non_symmetric_design_gets_no_closed_form() -> None:
    """The (4, 6, 3, 2, 1) design (K4 edges, reference §3.5) has S-dependent errors."""
    from gctool.algebra.fields import parse_field
    from gctool.model import GradientCode

    B = np.array([[1 if j in e else 0 for j in range(4)]
                  for e in [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]])
    code = GradientCode(B, parse_field("real"), 0, "bibd")
    assert uniform_gram(code) is None and closed_form_worst_error(code, 3) is None


def test_gf2_design_is_zero_one_and_has_no_real_closed_form() -> None:
    code = design("bibd", design="pg2-4", field="GF(2)")
    assert str(code.field) == "GF(2)" and set(np.unique(code.B)) == {0, 1}
    assert closed_form_worst_error(code, 1) is None


def test_translates_are_distinct_blocks_in_a_non_cyclic_group() -> None:
    d = ds.by_name("biplane-16")  # Z_2^4
    assert d.moduli == (2, 2, 2, 2)
    B = ds.incidence(d)
    assert len({tuple(row) for row in B}) == 16
    # block g is D + g with + the XOR of 4-bit labels
    for g in range(16):
        assert set(np.flatnonzero(B[g]).tolist()) == {x ^ g for x in d.D}


@pytest.mark.parametrize("name", ["bent-256", "paley-43", "pg3-3", "twin-5", "fano"])
def test_difference_counts_in_blocks_are_the_whole_count(name: str,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The differences are counted a block of rows at a time (bounded memory): blocks of 1
    and 7 rows give the counts of the whole κ x κ table, each non-zero element λ times."""
    d = ds.by_name(name)
    D = ds.digits(np.array(d.D, dtype=np.int64), d.moduli)
    whole = ds.encode(D[:, None, :] - D[None, :, :], d.moduli)
    off = ~np.eye(len(d.D), dtype=bool)
    expect = np.bincount(whole[off].ravel(), minlength=d.v)
    for rows in (1, 7):
        monkeypatch.setattr(ds, "PAIRS_CHUNK", rows * len(d.D))
        got = ds.difference_counts(d)
        assert np.array_equal(got, expect) and (got[1:] == d.lam).all() and got[0] == 0
