"""Structured decoders in export and in the single-set API: structured and generic
tables agree on the solution space, every structured vector is checked, failures fall back to
the generic decoder with a note.  Exactness over GF(q) is checked with independent integer /
polynomial arithmetic (no gctool or galois code)."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys

import numpy as np
import pytest

from gctool.codes import design
from gctool.decode import decode
from gctool.errors import InvalidInput
from gctool.exports import build_export
from gctool.model import GradientCode


# -- independent oracles -------------------------------------------------------------------------
def gf_mul(a: int, b: int, p: int, m: int, poly: int | None) -> int:
    """Product in GF(p^m): elements and the monic irreducible polynomial by their base-p
    digits (galois' integer representation); schoolbook product, then reduction."""
    if m == 1:
        return a * b % p
    assert poly is not None
    da = [a // p**i % p for i in range(m)]
    db = [b // p**i % p for i in range(m)]
    dpoly = [poly // p**i % p for i in range(m + 1)]
    prod = [0] * (2 * m - 1)
    for i, x in enumerate(da):
        for j, y in enumerate(db):
            prod[i + j] = (prod[i + j] + x * y) % p
    for d in range(2 * m - 2, m - 1, -1):
        c = prod[d]
        if c:
            for i in range(m + 1):
                prod[d - m + i] = (prod[d - m + i] - c * dpoly[i]) % p
    return sum(prod[i] * p**i for i in range(m))


def gf_add(a: int, b: int, p: int, m: int) -> int:
    return sum(((a // p**i + b // p**i) % p) * p**i for i in range(m))


def gf_matmul(A: np.ndarray, B: np.ndarray, p: int, m: int, poly: int | None) -> np.ndarray:
    """A @ B over GF(p^m), entry by entry with Python integers."""
    out = np.zeros((A.shape[0], B.shape[1]), dtype=np.int64)
    for i, j in itertools.product(range(A.shape[0]), range(B.shape[1])):
        acc = 0
        for x, y in zip(A[i], B[:, j], strict=True):
            acc = gf_add(acc, gf_mul(int(x), int(y), p, m, poly), p, m)
        out[i, j] = acc
    return out


def check_table(code: GradientCode, out) -> None:  # type: ignore[no-untyped-def]
    """Every row of the table is zero on its stragglers and decodes every target."""
    A = out.arrays["A"].reshape(out.patterns, code.m, code.n)
    B, T = np.asarray(code.B), code.targets()
    fld = code.field
    for S, Ap in zip(out.arrays["patterns"], A, strict=True):
        assert not Ap[:, list(S)].any()
        if fld.is_finite:
            assert np.array_equal(gf_matmul(Ap, B, fld.p, fld.m, fld.poly), T)
        else:
            assert np.allclose(Ap @ B, T, atol=1e-8)


CASES = [
    ("cyclic-mds", "GF(7)", 6, 2, None, {}),
    ("cyclic-mds", "GF(2^4)", 5, 2, None, {}),
    ("cyclic-mds", "real", 9, 4, None, {}),
    ("cyclic-mds", "complex", 7, 3, None, {}),
    ("rs", "GF(7)", 7, 2, 10, {}),
    ("rs", "GF(7)", 7, 3, 2, {}),  # k < n - s: solutions are not unique
    ("rs", "GF(2^4)", 5, 2, 7, {"nodes": "unity"}),
    ("rs", "real", 7, 3, 3, {}),
    ("rs", "real", 6, 2, 9, {}),
    ("comm", "GF(7)", 7, 2, None, {"m": 3}),
    ("comm", "GF(2^3)", 6, 1, 4, {"m": 2}),
    ("comm", "real", 6, 2, None, {"m": 2}),
    ("comm", "complex", 5, 1, 7, {"m": 2}),
]


@pytest.mark.parametrize(("scheme", "field", "n", "s", "k", "extra"), CASES)
def test_structured_and_generic_exports_agree(scheme: str, field: str, n: int, s: int,
                                              k: int | None, extra: dict[str, object]) -> None:
    code = design(scheme, n, s, k, field=field, **extra)
    st = build_export(code, decoders=True, decoder="structured")
    gen = build_export(code, decoders=True, decoder="generic")
    auto = build_export(code, decoders=True)
    assert st.meta["decoders"]["method"] == auto.meta["decoders"]["method"] == "structured"
    assert st.meta["decoders"]["decoder"].startswith(f"structured ({scheme}:")
    assert gen.meta["decoders"]["method"] == "generic" and "structured" not in gen.arrays
    assert st.meta["decoders"]["fallbacks"] == 0 and st.arrays["structured"].all()
    assert st.meta["decoders"]["structured_patterns"] == st.patterns
    assert np.array_equal(st.arrays["patterns"], gen.arrays["patterns"])
    assert st.all_decodable and gen.all_decodable
    check_table(code, st)
    check_table(code, gen)
    if code.field.is_finite:
        assert np.array_equal(st.arrays["A"], auto.arrays["A"])
    if scheme == "cyclic-mds":  # B_F has full row rank: the decoding vector is unique
        if code.field.is_finite:
            assert np.array_equal(st.arrays["A"], gen.arrays["A"])
        else:
            assert np.allclose(st.arrays["A"], gen.arrays["A"], atol=1e-8)
    if not code.field.is_finite:
        assert st.arrays["residual"].max() <= np.sqrt(1e-9 * code.k)


def test_structured_export_with_fewer_stragglers_and_json_document() -> None:
    code = design("rs", 7, 3, 5, field="GF(13)")
    out = build_export(code, decoders=True, s=1, decoder="structured")  # 6 survivors, 4 needed
    assert out.patterns == 7 and out.arrays["structured"].all()
    check_table(code, out)
    A = out.arrays["A"]
    S = out.arrays["patterns"][:, 0]
    for p in range(7):  # only the first n - s = 4 survivors carry coefficients
        F = [i for i in range(7) if i != S[p]]
        assert not A[p, F[4:]].any()
    doc = json.loads(out.to_bytes(npz=False))
    assert doc["structured"] == [True] * 7 and doc["decoders"]["method"] == "structured"


def test_tampered_file_falls_back_per_pattern_with_note() -> None:
    code = design("rs", 6, 2, field="GF(7)")
    B = np.asarray(code.B).copy()
    B[4, B[4] != 0] = (B[4, B[4] != 0] * 3) % 7  # worker 4 scaled: structured vectors break
    bad = GradientCode(B, code.field, code.s, "rs", dict(code.params))
    gen = build_export(bad, decoders=True, decoder="generic")
    out = build_export(bad, decoders=True)
    used = out.arrays["structured"]
    S = out.arrays["patterns"]
    for p, row in enumerate(S):
        assert used[p] == (4 in row)  # survivors containing worker 4 fail the check
    assert out.meta["decoders"]["fallbacks"] == int((~used).sum()) > 0
    assert "failed the check" in out.meta["decoders"]["note"]
    assert np.array_equal(out.arrays["decodable"], gen.arrays["decodable"])
    assert np.array_equal(out.arrays["A"][~used], gen.arrays["A"][~used])
    ok = out.arrays["decodable"]
    for p in np.flatnonzero(ok):
        assert np.array_equal(gf_matmul(out.arrays["A"][p][None], B, 7, 1, None),
                              bad.targets())


def test_tampered_params_and_real_fallback() -> None:
    code = design("cyclic-mds", 6, 2, field="GF(7)")
    wrong_root = GradientCode(code.B, code.field, 2, "cyclic-mds", {**code.params, "root": 6})
    out = build_export(wrong_root, decoders=True)  # 6 = -1 has order 2 in GF(7): g(1) = 0
    assert out.meta["decoders"]["method"] == "generic" and out.all_decodable
    assert "not a primitive 6-th root" in out.meta["decoders"]["note"]
    with pytest.raises(InvalidInput, match="`decoder`=structured: .*root"):
        build_export(wrong_root, decoders=True, decoder="structured")
    order3 = GradientCode(code.B, code.field, 2, "cyclic-mds", {**code.params, "root": 2})
    out = build_export(order3, decoders=True)  # g(1) != 0 but the nodes repeat: every check fails
    assert out.meta["decoders"]["fallbacks"] == 15 and not out.arrays["structured"].any()
    assert out.all_decodable
    check_table(order3, out)
    real = design("rs", 6, 2, field="real")
    B = np.asarray(real.B).copy()
    B[0] *= 1.5
    out = build_export(GradientCode(B, real.field, 2, "rs", dict(real.params)), decoders=True)
    assert out.meta["decoders"]["fallbacks"] == 10  # the C(5, 2) sets in which 0 survives
    assert out.all_decodable  # the generic decoder still decodes them


def test_decoder_not_applicable() -> None:
    frc = design("frc", 6, 2)
    assert build_export(frc, decoders=True).meta["decoders"] == {
        **build_export(frc, decoders=True, decoder="generic").meta["decoders"]}
    with pytest.raises(InvalidInput, match="no structured decoder for scheme 'frc'"):
        build_export(frc, decoders=True, decoder="structured")
    searched = design("cyclic-mds", 6, 2, field="real")  # J = {2, 4}: not an interval
    out = build_export(searched, decoders=True)
    assert out.meta["decoders"]["method"] == "generic" and "cyclic interval" in \
        out.meta["decoders"]["note"]
    mds = design("cyclic-mds", 6, 2, field="GF(7)")
    out = build_export(mds, decoders=True, s=3)  # 3 survivors < n - s: structured cannot apply
    assert out.meta["decoders"]["method"] == "generic" and not out.all_decodable
    assert "at least n - s = 4" in out.meta["decoders"]["note"]
    with pytest.raises(InvalidInput, match="`decoder` must be one of"):
        build_export(mds, decoders=True, decoder="fast")


# -- the single-set API ------------------------------------------------------------------------
def test_decode_auto_uses_structured_over_gf_and_generic_over_reals() -> None:
    gf = design("rs", 7, 3, 4, field="GF(7)")
    F = [0, 2, 3, 5]
    d = decode(gf, F)
    assert d.ok and d.method.startswith("structured (rs:") and d.rank is None
    g = decode(gf, F, decoder="generic")
    assert g.method == "generic" and g.rank == 4 and g.ok
    for a in (d.a, g.a):
        assert np.array_equal(gf_matmul(a, np.asarray(gf.B)[F], 7, 1, None), gf.targets())
    real = design("rs", 8, 2, field="real")
    F = [0, 1, 3, 4, 6, 7]
    r = decode(real, F)
    rank = np.linalg.matrix_rank(np.asarray(real.B)[F])
    assert r.method == "generic" and r.cond is not None and r.rank == rank
    s = decode(real, F, decoder="structured")
    assert s.method.startswith("structured") and s.cond is None and s.ok
    assert s.norm == pytest.approx(np.linalg.norm(s.a)) and np.allclose(s.a, r.a, atol=1e-8)


def test_decode_structured_fallbacks_and_errors(gf7: GradientCode) -> None:
    d = decode(gf7, [0, 1, 2, 3])  # fixture without recorded params: generic, with a note
    assert d.method == "generic" and d.a[0].tolist() == [6, 4, 6, 1] and "zero set" in d.note
    with pytest.raises(InvalidInput, match="zero set"):
        decode(gf7, [0, 1, 2, 3], decoder="structured")
    frc = design("frc", 6, 2, field="GF(7)")
    assert decode(frc, [0, 3]).note is None  # no structured decoder: plain generic
    code = design("cyclic-mds", 6, 2, field="GF(7)")
    B = np.asarray(code.B)[[1, 0, 2, 3, 4, 5]]
    swapped = GradientCode(B, code.field, 2, "cyclic-mds", dict(code.params))
    r = decode(swapped, [0, 2, 3, 4])
    assert r.method == "generic" and "failed the check" in r.note and r.ok
    with pytest.raises(InvalidInput, match="survivor indices"):
        decode(code, [0, 9])
    with pytest.raises(InvalidInput, match="`tol` must be"):
        decode(code, [0, 1, 2, 3], tol=float("nan"))
    with pytest.raises(InvalidInput, match="`decoder` must be"):
        decode(code, [0, 1, 2, 3], decoder="nope")


def test_batched_decoders_match_one_set_and_galois_nodes() -> None:
    from gctool.algebra.fields import parse_field
    from gctool.codes._algebra import nodes
    from gctool.codes.vandermonde import plain_nodes
    from gctool.decode import structured

    for field, n in (("GF(7)", 3), ("GF(13)", 4), ("GF(2^4)", 5), ("GF(31)", 6), ("GF(3^2)", 4),
                     ("GF(5^2)", 8)):
        fld = parse_field(field).resolved()  # a stand-in code: only the field and params matter
        code = GradientCode(np.eye(n, dtype=np.int64), fld, 1, "rs", {"nodes": "unity"})
        p, m, q = fld.p, fld.m, fld.order

        def power(a: int, e: int, p: int = p, m: int = m, poly: int | None = fld.poly) -> int:
            out = 1
            for _ in range(e):
                out = gf_mul(out, a, p, m, poly)
            return out

        # galois' primitive element: the smallest primitive root (x for Conway polynomials)
        g = next(a for a in range(2, q) if all(power(a, (q - 1) // f) != 1
                                               for f in range(2, q) if (q - 1) % f == 0
                                               and all(f % d for d in range(2, f))))
        w = power(g, (q - 1) // n)
        assert plain_nodes(code).tolist() == [power(w, i) for i in range(n)]
    assert np.array_equal(plain_nodes(design("rs", 6, 1, field="GF(7)", nodes="unity")),
                          np.asarray(nodes(6, parse_field("GF(7)"), "unity")[0]))
    code = design("comm", 7, 2, field="GF(2^3)", m=2)
    F = np.array([[i for i in range(7) if i not in S] for S in itertools.combinations(range(7), 2)])
    A = structured.decode_batch(code, F)
    for p, row in enumerate(F):
        assert np.array_equal(A[p], structured.structured_decode(code, row).a)


def test_gf_structured_export_needs_no_galois(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from gctool.io import write_code

    path = tmp_path / "rs.json"
    write_code(design("rs", 9, 2, field="GF(2^4)"), str(path))
    script = ("import sys; from gctool.io import read_code; "
              "from gctool.exports import build_export; "
              f"out = build_export(read_code({str(path)!r}), decoders=True); "
              "assert out.all_decodable and out.meta['decoders']['method'] == 'structured'; "
              "print('galois' in sys.modules)")
    res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=120, check=True)
    assert res.stdout.strip() == "False"


# -- CLI -----------------------------------------------------------------------------------------
def test_export_cli_decoder_option(runner, tmp_path, terminal) -> None:  # type: ignore[no-untyped-def]
    from gctool.cli.main import cli

    f = tmp_path / "comm.json"
    assert runner.invoke(cli, ["design", "comm", "-n", "5", "-s", "1", "-m", "2", "--field",
                               "GF(7)", "-o", str(f)]).exit_code == 0
    res = runner.invoke(cli, ["export", str(f), "-o", "-", "--decoders", "--decoder",
                              "structured"])
    assert res.exit_code == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["decoders"]["method"] == "structured" and all(doc["structured"])
    out = tmp_path / "plan.npz"
    res = runner.invoke(cli, ["export", str(f), "-o", str(out), "--decoders", "--json"])
    report = json.loads(res.stdout)
    assert res.exit_code == 0 and report["decoder"] == "structured" and report["fallbacks"] == 0
    with np.load(out) as z:
        assert z["structured"].all() and z["A"].shape == (5, 2, 5)
    res = runner.invoke(cli, ["export", str(f), "-o", str(out), "--decoders", "--decoder",
                              "generic", "--json"])
    assert json.loads(res.stdout)["decoder"] == "generic"
    frc = tmp_path / "frc.json"
    runner.invoke(cli, ["design", "frc", "-n", "4", "-s", "1", "-o", str(frc)])
    res = runner.invoke(cli, ["export", str(frc), "-o", "-", "--decoders", "--decoder",
                              "structured"])
    assert res.exit_code == 2 and res.stdout == "" and "no structured decoder" in res.stderr
    real = tmp_path / "mds.json"
    runner.invoke(cli, ["design", "cyclic-mds", "-n", "6", "-s", "2", "-o", str(real)])
    res = runner.invoke(cli, ["export", str(real), "-o", str(tmp_path / "x.json"), "--decoders"])
    assert res.exit_code == 0 and "generic decoder" in res.stderr and "note:" in res.stderr
