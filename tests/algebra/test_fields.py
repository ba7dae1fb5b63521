"""Field specs: parsing, canonical strings, membership checks."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gctool.algebra.fields import Field, parse_field
from gctool.algebra.polynomials import poly_to_str
from gctool.errors import FieldError


@pytest.mark.parametrize(
    ("text", "canonical", "order"),
    [("GF(7)", "GF(7)", 7), ("gf(2^8)", "GF(2^8)", 256), ("GF(8)", "GF(2^3)", 8),
     ("GF(3^2)", "GF(3^2)", 9), ("GF(2)", "GF(2)", 2), ("GF(2^31)", "GF(2^31)", 2**31)],
)
def test_parse_finite_fields(text: str, canonical: str, order: int) -> None:
    f = parse_field(text)
    assert str(f) == canonical and f.order == order and f.is_finite


@pytest.mark.parametrize("text", ["real", "R", " Real ", "reals"])
def test_parse_real(text: str) -> None:
    assert parse_field(text) == Field("real")


def test_parse_complex() -> None:
    assert str(parse_field("complex")) == "complex" and str(parse_field("C")) == "complex"


@pytest.mark.parametrize(
    "text",
    ["GF(6)", "GF(4^2)", "GF(1)", "GF(0)", "GF(2^0)", "GF(2^32)", "GF(7, x+1)", "foo", "",
     "GF(2^4, x^3 + 1)", "GF(2^4, x^4 + 2x + 1)", "GF(2^4, banana)", "GF(2^99999)"],
)
def test_invalid_fields_list_what_is_accepted(text: str) -> None:
    with pytest.raises(FieldError) as info:
        parse_field(text)
    assert "\n" not in str(info.value)


def test_unknown_field_message_lists_accepted() -> None:
    with pytest.raises(FieldError, match=r"real, complex, GF\(p\), GF\(p\^m\)"):
        parse_field("quaternions")


def test_irreducible_polynomial_forms_agree() -> None:
    a = parse_field("GF(2^4, x^4 + x + 1)")
    b = parse_field("GF(2^4, 19)")
    c = parse_field("GF(2^4, 0x13)")
    assert a == b == c and a.poly_str == "x^4 + x + 1" and a.spec == "GF(2^4, x^4 + x + 1)"


def test_polynomial_with_coefficients() -> None:
    f = parse_field("GF(3^2, x^2 + 2x + 2)")
    assert f.poly == 1 * 9 + 2 * 3 + 2 and f.poly_str == "x^2 + 2x + 2"


def test_galois_default_polynomial_is_resolved_and_used() -> None:
    f = parse_field("GF(2^8)").resolved()
    assert f.poly is not None
    GF = f.galois()
    assert int(GF.irreducible_poly) == f.poly and GF.order == 256


@pytest.mark.parametrize("spec", ["GF(2^4, x^4 + 1)", "GF(3^2, x^2 + 2)", "GF(2^4, 17)"])
def test_reducible_polynomial_is_rejected_when_parsed(spec: str) -> None:
    with pytest.raises(FieldError, match="reducible"):  # (x+1)^4; (x-1)(x+1); (x+1)^4
        parse_field(spec)


@pytest.mark.parametrize("spec", ["GF(2^3, x^1000000000 + 1)", "GF(2^3, x^3 + x^1000000 + 1)",
                                  "GF(2^3, " + "9" * 5000 + ")", "GF(" + "9" * 5000 + ")",
                                  "GF(2^" + "9" * 5000 + ")", "GF(2^3, 0x" + "f" * 100000 + ")"])
def test_hostile_field_specs_fail_at_once(spec: str) -> None:
    with pytest.raises(FieldError):  # no p**degree, no quadratic degree loop, no 4300-digit int
        parse_field(spec)


@given(st.integers(min_value=1, max_value=3**6), st.sampled_from([2, 3, 5, 7]))
def test_poly_string_round_trip(value: int, p: int) -> None:
    from gctool.algebra.polynomials import _poly_value

    text = poly_to_str(value, p)
    degree = len(np.base_repr(value, p)) - 1
    assert _poly_value(text, p, degree) == value


def test_coerce_checks_membership() -> None:
    gf = parse_field("GF(5)")
    assert gf.coerce([[0, 4]]).dtype == np.int64
    for bad in ([[5]], [[-1]], [[1.5]], [[np.nan]]):
        with pytest.raises(FieldError):
            gf.coerce(bad)
    real = parse_field("real")
    with pytest.raises(FieldError):
        real.coerce([[np.inf]])
    with pytest.raises(FieldError):
        real.coerce([[1 + 2j]])
    with pytest.raises(FieldError):
        real.coerce([["a"]])
    assert parse_field("complex").coerce([[1, 2j]]).dtype == np.complex128


def test_prime_helpers_match_brute_force() -> None:
    from gctool.algebra.primes import is_prime, prime_power

    for q in range(0, 600):
        brute = q >= 2 and all(q % f for f in range(2, q))
        assert is_prime(q) == brute, q
        pm = [(p, m) for p in range(2, q + 1) if all(p % f for f in range(2, p))
              for m in range(1, 10) if p**m == q]
        assert prime_power(q) == (pm[0] if pm else None), q
