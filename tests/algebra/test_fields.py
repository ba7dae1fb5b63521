"""Field specs: parsing, canonical strings, membership checks."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gctool.algebra.fields import Field, parse_field
from gctool.algebra.polynomials import poly_to_str
from gctool.errors import FieldError

from helpers import traced


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


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("order", ["C", "F"])
def test_finiteness_in_blocks_finds_each_entry(monkeypatch: pytest.MonkeyPatch, dtype: Any,
                                               order: Any) -> None:
    """The blocked finiteness check agrees with ``np.isfinite(...).all()`` for a NaN, +inf or
    -inf in any entry (either part of a complex one), at and beside block edges, in C and
    Fortran order and on a strided view (blocks of 4 float64 values)."""
    import gctool.algebra.fields as fields

    monkeypatch.setattr(fields, "FINITE_BLOCK", 4)
    base = np.arange(1, 5 * 7 + 1, dtype=np.float64).reshape(5, 7).astype(dtype, order=order)
    assert fields._all_finite(base) and fields._all_finite(base[:, ::2])
    assert fields._all_finite(np.empty((0, 3), dtype=dtype))
    parts = ["real", "imag"] if dtype == np.complex128 else ["real"]
    for i in range(base.size):
        for bad in (np.nan, np.inf, -np.inf):
            for part in parts:
                a = base.copy(order=order)
                x = complex(a.flat[i])
                a.flat[i] = (complex(bad, x.imag) if part == "real" else complex(x.real, bad)
                             ) if dtype == np.complex128 else bad
                assert np.isfinite(a).sum() == a.size - 1
                assert not fields._all_finite(a), (i, bad, part)
                assert fields._all_finite(a[:, ::2]) == np.isfinite(a[:, ::2]).all()


def test_coerce_of_a_read_only_real_view_allocates_no_mask() -> None:
    """A real B that coerce keeps uncopied (a read-only view of immutable bytes) is checked
    without a mask of its size (np.isfinite's was 1/8 of B), and kept as it is; a NaN anywhere
    is still refused."""
    B = np.random.default_rng(2).standard_normal((1000, 800))
    raw = B.tobytes()
    view = np.frombuffer(raw, dtype=np.float64).reshape(B.shape)
    real = parse_field("real")
    real.coerce(view)  # imports outside the measurement
    out, peak = traced(lambda: real.coerce(view))
    assert np.shares_memory(out, view) and np.array_equal(out, B)
    assert peak < 0.05 * B.nbytes, peak / B.nbytes
    spoiled = bytearray(raw)
    spoiled[8 * 654321 + 7] = 0x7F  # an entry's exponent all ones: an inf or NaN
    spoiled[8 * 654321 + 6] |= 0xF0
    with pytest.raises(FieldError, match="NaN or infinite"):
        real.coerce(np.frombuffer(bytes(spoiled), dtype=np.float64).reshape(B.shape))


def test_coerce_refuses_a_complex_entry_in_a_real_field_by_its_imaginary_part() -> None:
    """Any non-zero (or NaN) imaginary part is refused in a real field; zeros (also -0.0)
    pass, and the real parts are kept."""
    real = parse_field("real")
    ok = np.array([[1 + 0j, 2 - 0j], [complex(3, -0.0), 4]])
    assert np.array_equal(real.coerce(ok), [[1, 2], [3, 4]])
    for bad in (1e-300j, -2j, complex(0, np.nan), complex(0, np.inf)):
        a = ok.copy()
        a[1, 1] += bad
        with pytest.raises(FieldError, match="complex entries"):
            real.coerce(a)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
def test_integral_entries_in_blocks_agree_with_whole_array_checks(
        monkeypatch: pytest.MonkeyPatch, dtype: Any) -> None:
    """GF(q)'s check of float or complex entries, in blocks of 4: a non-integer, a NaN, an
    inf or a non-zero imaginary part in any entry is refused, exactly as the whole-array
    test refuses it; integral entries (also -0.0 and 0j parts) convert to the same int64."""
    import gctool.algebra.fields as fields

    monkeypatch.setattr(fields, "FINITE_BLOCK", 4)
    gf = parse_field("GF(31)")
    base = (np.arange(5 * 7) % 31).reshape(5, 7).astype(dtype)
    assert np.array_equal(gf.coerce(base), np.arange(5 * 7).reshape(5, 7) % 31)
    assert np.array_equal(gf.coerce(np.asfortranarray(base) * -0.0 + base), base.real)
    spoilers: list[Any] = [0.5, np.nan, np.inf, -np.inf, 1e-9]
    if dtype == np.complex128:
        spoilers += [1j, complex(0, np.nan), -1e-300j]
    for i in range(base.size):
        for bad in spoilers:
            a = base.copy()
            a.flat[i] = a.flat[i] + bad
            whole = bool(np.all(np.isfinite(a)) and not np.any(a != np.round(a.real)))
            assert fields._all_integral(a) == whole
            if not whole:
                with pytest.raises(FieldError, match="non-integer entries"):
                    gf.coerce(a)


def test_gf_coerce_of_float_entries_holds_no_whole_array_temporaries() -> None:
    """A float64 B over GF(q) is converted with the int64 result as its one B-sized
    allocation (np.round(B) and a mask of its entries before it: a peak of 1.125 B)."""
    B = (np.random.default_rng(3).integers(0, 31, (1000, 800))).astype(np.float64)
    gf = parse_field("GF(31)")
    gf.coerce(B[:2])  # imports outside the measurement
    out, peak = traced(lambda: gf.coerce(B))
    assert out.dtype == np.int64 and np.array_equal(out, B)
    assert peak < 1.06 * B.nbytes, peak / B.nbytes
