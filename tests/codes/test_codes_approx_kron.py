"""kron: the product's exact threshold is the product of the factors' thresholds, checked
against verify and attack; both factors are recorded in the provenance."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gctool.algebra.fields import parse_field
from gctool.audit.attack import threshold
from gctool.audit.verify import verify
from gctool.codes import design
from gctool.codes.kron import product
from gctool.errors import DesignError
from gctool.io import write_code
from gctool.model import GradientCode


def t0(code: GradientCode) -> int:
    t = threshold(code).threshold
    assert t is not None
    return t


def check_product(c1: GradientCode, c2: GradientCode) -> GradientCode:
    prod = design("kron", file1=c1, file2=c2)
    T1, T2, T = t0(c1), t0(c2), t0(prod)
    assert T == T1 * T2
    assert prod.params["factor_thresholds"] == [T1, T2]
    if T >= 1:
        assert verify(prod, T - 1).ok and not verify(prod, T).ok
    return prod


@pytest.mark.parametrize("f1, f2", [
    ({"scheme": "frc", "n": 4, "s": 1}, {"scheme": "frc", "n": 3, "s": 2}),
    ({"scheme": "cyclic", "n": 4, "s": 1, "seed": 1}, {"scheme": "cyclic", "n": 3, "s": 1,
                                                      "seed": 2}),
    ({"scheme": "bibd", "design": "fano"}, {"scheme": "frc", "n": 2, "s": 1}),
    ({"scheme": "graph", "graph": "cycle", "vertices": 4, "seed": 0},
     {"scheme": "frc", "n": 3, "s": 2}),
])
def test_threshold_of_products(f1: dict[str, object], f2: dict[str, object]) -> None:
    c1 = design(**f1)  # type: ignore[arg-type]
    c2 = design(**f2)  # type: ignore[arg-type]
    prod = check_product(c1, c2)
    assert (prod.n, prod.k) == (c1.n * c2.n, c1.k * c2.k)
    assert prod.s == min((c1.s + 1) * (c2.s + 1), t0(c1) * t0(c2)) - 1
    assert np.allclose(prod.B, np.kron(c1.B, c2.B))
    loads = np.kron(c1.loads, c2.loads)
    assert np.array_equal(prod.loads, loads)


def test_product_over_gf7_uses_field_products(gf7: GradientCode) -> None:
    c1 = gf7  # cyclic-MDS over GF(7), n = 6, s = 2 (reference §2.1)
    c2 = GradientCode(np.array([[1, 2], [3, 1], [1, 1]]), parse_field("GF(7)"), 1)
    prod = check_product(c2, c1)
    assert str(prod.field) == "GF(7)" and t0(prod) == 2 * 3
    expected = np.kron(np.asarray(c2.B), np.asarray(c1.B)) % 7
    assert np.array_equal(np.asarray(prod.B), expected)


def test_product_over_gf4_multiplies_in_the_field() -> None:
    gf = parse_field("GF(2^2)")
    B1, B2 = np.array([[2, 3], [1, 2]]), np.array([[3, 1]])
    P = product(B1, B2, gf.resolved())
    # GF(4) = GF(2)[x]/(x^2 + x + 1), elements 0, 1, x = 2, x + 1 = 3: x(x + 1) = 1, (x + 1)^2 = x
    assert P.tolist() == [[1, 2, 2, 3], [3, 1, 1, 2]]


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from(["GF(3)", "real"]))
def test_threshold_multiplies_on_random_small_codes(seed: int, field: str) -> None:
    rng = np.random.default_rng(seed)
    fld = parse_field(field)
    n1, n2 = int(rng.integers(2, 5)), int(rng.integers(2, 4))
    k1, k2 = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    high = 2 if field == "real" else fld.order
    B1 = rng.integers(0, high, size=(n1, k1))
    B2 = rng.integers(0, high, size=(n2, k2))
    c1, c2 = (GradientCode(B, fld, 0) for B in (B1, B2))
    if 0 in (t0(c1), t0(c2)):  # a factor that does not decode: the product declares nothing
        with pytest.raises(DesignError, match="does not decode even with no straggler"):
            design("kron", file1=c1, file2=c2)
        return
    prod = design("kron", file1=c1, file2=c2)
    assert t0(prod) == t0(c1) * t0(c2) and verify(prod, prod.s).ok


def test_factors_are_recorded_in_the_provenance(tmp_path: Path) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    write_code(design("frc", n=4, s=1), a)
    write_code(design("bibd", design="fano"), b)
    prod = design("kron", file1=str(a), file2=str(b))
    factors = prod.provenance["factors"]
    assert [f["scheme"] for f in factors] == ["frc", "bibd"]
    assert [f["path"] for f in factors] == [str(a), str(b)]
    import hashlib

    assert factors[0]["sha256"] == hashlib.sha256(a.read_bytes()).hexdigest()
    assert factors[1]["params"]["design"] == "fano" and factors[0]["s"] == 1
    json.dumps(prod.provenance)  # JSON-ready


def test_mismatched_fields_are_rejected() -> None:
    with pytest.raises(DesignError, match="same field"):
        design("kron", file1=design("frc", n=2, s=1), file2=design("frc", n=2, s=1,
                                                                     field="GF(2)"))
    with pytest.raises(DesignError, match="two code files"):
        design("kron", file1=design("frc", n=2, s=1))


def test_a_factor_threshold_not_computed_reads_back(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A factor too large for an exhaustive threshold search records null in
    factor_thresholds (the product of cyclic n=40 s=6 and an FRC code): the file it wrote must
    read back (the schema refused null: 'params.factor_thresholds[0] must be an integer')."""
    from gctool.codes import kron
    from gctool.io import read_code

    monkeypatch.setattr(kron, "_threshold", lambda code: None if code.n == 4 else 3)
    prod = design("kron", file1=design("frc", n=4, s=1), file2=design("frc", n=6, s=2))
    assert prod.params["factor_thresholds"] == [None, 3]
    write_code(prod, tmp_path / "ab.json")
    back = read_code(tmp_path / "ab.json")
    assert back.params["factor_thresholds"] == [None, 3] and np.array_equal(back.B, prod.B)
    assert kron.closed_forms(back) == []  # no product of thresholds to show


APPROXIMATE = [  # schemes whose files declare an s they need not tolerate
    {"scheme": "soft-bibd", "n": 6, "s": 1, "seed": 1},
    {"scheme": "expander", "graph": "petersen", "s": 2},
    {"scheme": "graph", "graph": "cycle", "vertices": 5, "s": 1},
]


@pytest.mark.parametrize("approx", APPROXIMATE, ids=lambda f: str(f["scheme"]))
def test_a_product_with_an_approximate_factor_declares_what_verify_proves(
        approx: dict[str, object]) -> None:
    """kron wrote (s1+1)(s2+1)-1 from the factors' declared s: with a soft-bibd, expander or
    graph factor that fails its own s the file declared an s that verify fails (3, 5, 3
    with frc n=4 s=1). Now at most T_0(B1) T_0(B2) - 1, which verify proves (either order)."""
    a = design(**approx)  # type: ignore[arg-type]
    frc = design("frc", n=4, s=1)
    assert not verify(a, a.s).ok  # the factor's own s is not a tolerance
    for c1, c2 in ((a, frc), (frc, a)):
        prod = design("kron", file1=c1, file2=c2)
        assert prod.s == t0(c1) * t0(c2) - 1 < (c1.s + 1) * (c2.s + 1) - 1
        assert verify(prod, prod.s).ok and not verify(prod, prod.s + 1).ok


def test_a_factor_too_large_to_search_is_verified_at_its_s(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a factor's exact threshold its declared s counts only when verify proves it;
    an approximate factor that fails it is refused (no product tolerance can be proved)."""
    from gctool.codes import kron

    monkeypatch.setattr(kron, "_threshold", lambda code: None)
    prod = design("kron", file1=design("frc", n=4, s=1), file2=design("frc", n=3, s=2))
    assert prod.s == 5 and verify(prod, 5).ok
    with pytest.raises(DesignError, match="does not tolerate its declared s = 1"):
        design("kron", file1=design(**APPROXIMATE[0]), file2=design("frc", n=4, s=1))
