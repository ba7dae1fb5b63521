"""Adversarial real and complex codes: badly scaled, near-proportional, near-cyclic, huge and tiny.

Every expectation comes from exact rational brute force (tests/oracles.py: the exact
least-squares error on the binary floating-point entries, one straggler set at a time) under
the documented rule "F decodes iff err(F) <= tol * k".  The first cases are the examples of the
audit that found wrong verdicts and exit 3s; gctool must now give the truth on every path.
"""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from gctool.algebra.fields import parse_field
from gctool.audit.attack import attack, threshold
from gctool.audit.attack import curve as attack_curve
from gctool.audit.verify import verify
from gctool.bounds import bounds
from gctool.budget import Budget
from gctool.codes import design
from gctool.model import GradientCode

from corpus import (
    adversarial_corpus,
    code_of,
    exact_ok,
    exact_threshold,
    exact_worst,
    tandon7,
)
from helpers import run
from jsondoc import loads

CORPUS = adversarial_corpus()


# -- the examples of the audit ----------------------------------------------------------------
@pytest.mark.parametrize("spread,draw", [(12, 0), (12, 1), (8, 0), (8, 1), (8, 2)])
def test_row_scaled_cyclic_code_keeps_its_threshold(spread: int, draw: int) -> None:
    rng = np.random.default_rng(100 * spread + draw)
    B = tandon7() * 10.0 ** rng.uniform(-spread, spread, 7)[:, None]
    truth = exact_threshold(B)
    assert truth == 3
    r = threshold(code_of(B, 2))
    assert r.threshold == truth and r.exact


@pytest.mark.parametrize("scale", [1e-200, 1e200, 1e-300, 1e300])
def test_uniformly_scaled_cyclic_code_keeps_its_threshold(scale: float) -> None:
    B = tandon7() * scale
    r = threshold(code_of(B, 2))
    assert r.threshold == 3 and r.exact
    assert verify(code_of(B, 2)).ok
    assert not verify(code_of(B, 2), 3).ok


def test_huge_row_does_not_hide_the_all_ones_row() -> None:
    B = np.array([[1.0, 1.0], [1e12, 0.0]])
    assert exact_ok(B, 0)
    r = verify(code_of(B, 0))
    assert r.ok
    assert verify(code_of(B, 0), exact=True).ok


def test_one_large_row_does_not_fake_a_rotation() -> None:
    B = np.array([[1, 0, 0, 1, 0, 0], [0, 1, 0, 0, 1, 0], [0, 0, 1e12, 0, 0, 1e12],
                  [1, 0, 0, 1, 0, 0], [0, 1, 0, 0, 1.5, 0], [0, 0, 1, 0, 0, 1]])
    assert not exact_ok(B, 1)
    worst, tied = exact_worst(B, 1)
    assert worst == pytest.approx(1 / 13) and tied == [(1,)]
    r = verify(code_of(B, 1))
    assert not r.ok and r.counterexample == [1]
    assert r.reduction is None or r.reduction["kind"] != "rotation"
    a = attack(code_of(B, 1), 1)
    assert a.stragglers == [1] and a.raw_error == pytest.approx(1 / 13, rel=1e-9) and a.exact


def test_near_proportional_rows_are_not_merged() -> None:
    B = np.array([[2, 2, 0, 0], [0.3000000000009, 0.3, 0, 0], [0, 0, 2, 2], [0, 0, 0.3, 0.3]])
    worst, tied = exact_worst(B, 2)
    assert worst == 2.0 and tied[0] == (0, 1)
    for symmetry in (True, False):
        r = attack(code_of(B, 2), 2, symmetry=symmetry)
        assert r.raw_error == pytest.approx(2.0) and r.stragglers == [0, 1] and r.exact


def test_unproved_symmetry_is_reported_not_used(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A near-cyclic code (one entry off by 2^-40) gets no rotation reduction, and the report
    and the rendered output say why; so do near-proportional rows and row classes."""
    cyclic = np.array([np.roll([1.0, 1.0, 1.0, 0, 0, 0], i) for i in range(6)])
    exact = verify(code_of(cyclic, 2))
    assert exact.reduction is not None and exact.reduction["kind"] == "rotation"
    assert exact.notes == []
    near = cyclic.copy()
    near[2, 3] = 1 + 2**-40
    first = verify(code_of(near, 2))
    assert first.ok == exact_ok(near, 2) and first.reduction is None and first.checked == 15
    assert len(first.notes) == 1
    assert first.notes[0].startswith("rotation symmetry only up to round-off")
    assert "not used" in first.notes[0]
    for report in (attack(code_of(near, 2), 2), threshold(code_of(near, 2))):
        assert report.exact and first.notes[0] in report.notes
        assert not any(n.startswith("rotation symmetry (i -> i") for n in report.notes)
    assert any(n.startswith("rotation symmetry (i -> i + 1)")
               for n in attack(code_of(cyclic, 2), 2).notes)
    rows = np.array([[1, 1, 0, 0], [1, 1 + 2**-40, 0, 0], [0, 0, 1, 1], [0, 0, 1, 1.0]])
    r = verify(code_of(rows, 1))
    assert r.reduction is not None and r.reduction["class_sizes"] == [1, 1, 2]
    assert any(n.startswith("rows [0, 1] proportional only up to round-off") for n in r.notes)
    path = tmp_path / "near.json"
    path.write_text(json.dumps({"format": "gctool.code", "version": 1, "scheme": "custom",
                                "n": 6, "k": 6, "s": 2, "field": "real", "B": near.tolist()}))
    p = run("verify", str(path))
    assert p.exit_code == 0, p.stderr
    assert "note: rotation symmetry only up to round-off" in p.stdout
    p = run("verify", str(path), "--json")
    assert loads(p.stdout)["notes"] == first.notes


@pytest.mark.parametrize("i,j", [(0, 0), (1, 2), (4, 3), (5, 5)])
def test_frc_with_one_perturbed_entry(i: int, j: int) -> None:
    B = np.asarray(design("frc", 6, 2).B).copy()
    B[i, j] *= 1 + 1e-10
    assert exact_threshold(B) == 3
    r = threshold(code_of(B, 2))
    assert r.threshold == 3 and r.exact


# -- every method on the corpus ---------------------------------------------------------------
@pytest.mark.parametrize("name,B,s,field", CORPUS, ids=[c[0] for c in CORPUS])
def test_every_method_gives_the_exact_answer(name: str, B: np.ndarray, s: int,
                                             field: str) -> None:
    code = code_of(B, s, field)
    truth_ok = exact_ok(B, s)
    assert verify(code, s).ok == truth_ok
    assert verify(code, s, method="exhaustive").ok == truth_ok
    worst, tied = exact_worst(B, s)
    for method in ("auto", "exhaustive", "bnb", "greedy"):
        r = attack(code, s, method=method, time_limit=20)
        if r.exact or method == "greedy":
            assert r.raw_error == pytest.approx(worst, rel=1e-6, abs=1e-9), method
        if r.exact:
            assert tuple(r.stragglers) in tied or r.raw_error == pytest.approx(worst, rel=1e-9)
    t = exact_threshold(B)
    for method in ("auto", "exhaustive", "bnb"):
        r = threshold(code, method=method, time_limit=20)
        assert r.threshold == t and r.exact, method
    b = bounds(code, s=s)  # bound agrees with verify and attack on the same code
    assert b.code is not None
    rank = b.code["rank"]
    if any("rank(B)" in f for f in b.findings):
        assert not truth_ok
    by_rank = next(x for x in b.bounds if x.name == "threshold_by_rank")
    if "not a bound" not in by_rank.statement:
        assert t is None or t <= code.n - rank + 1


@pytest.mark.parametrize("name,B,s,field", CORPUS, ids=[c[0] for c in CORPUS])
def test_elementary_threshold_is_exact_or_a_labelled_bound(name: str, B: np.ndarray, s: int,
                                                           field: str) -> None:
    """The elementary method's float64 support tests prove nothing; its "exact" must be the
    exhaustive exact truth (near-cyclic: float64 rank 5 made the co-rank bound stop at 2 and
    report "no set fails", exact)."""
    code = code_of(B, s, field)
    t = exact_threshold(B)
    r = threshold(code, method="elementary")
    assert r.exact and r.threshold == t


def test_elementary_bound_when_the_check_budget_is_small() -> None:
    B = np.asarray(design("frc", 6, 2).B) * 1e-250
    r = threshold(code_of(B, 2), method="elementary", budget=Budget(max_sets=10))
    assert not r.exact and (r.threshold_lower, r.threshold) == (2, 3) == (2, exact_threshold(B))


# -- no internal error from the command line ---------------------------------------------------
@pytest.mark.parametrize("method", ["auto", "exhaustive", "bnb", "greedy"])
def test_fixed_decoder_errors_beyond_float64(method: str) -> None:
    """With entries of 1e200 the fixed decoder's errors overflow: inf, never nan or a crash."""
    code = code_of(tandon7() * 1e200, 2)
    r = attack(code, 2, decoder="fixed", method=method)
    assert r.raw_error == np.inf and r.stragglers is not None
    c = attack_curve(code, decoder="fixed", method=method, max_s=2)
    assert len(c.curve) == 3


@pytest.mark.parametrize("method", ["auto", "exhaustive", "bnb", "greedy", "milp", "elementary"])
def test_no_exit_3_on_huge_entries(tmp_path, method: str) -> None:  # type: ignore[no-untyped-def]
    B = tandon7() * 1e200
    path = tmp_path / "huge.json"
    path.write_text(json.dumps({"format": "gctool.code", "version": 1, "scheme": "custom",
                                "n": 7, "k": 7, "s": 2, "field": "real", "B": B.tolist()}))
    limit = ("--time-limit", "20") if method in ("auto", "milp") else ()  # refused otherwise
    p = run("attack", str(path), "--threshold", "--method", method, "--json", *limit)
    assert p.exit_code == 0, p.stderr
    assert loads(p.stdout)["threshold"] == 3


def test_non_primitive_polynomial_field_is_fast_and_exact() -> None:
    """GF(3^2) with x^2 + 1 (x has order 4, not 8): gctool finds a primitive element itself
    instead of letting galois compile its search (about a minute); the tables are right."""
    from gctool.algebra.gf import GFArith
    from gctool.algebra.powers import primitive_powers

    powers = primitive_powers(3, 2, 10)  # x^2 + 1 = 1*9 + 0*3 + 1
    assert powers is not None and sorted(powers.tolist()) == list(range(1, 9))
    f = parse_field("GF(3^2, x^2 + 1)")
    ar = GFArith(f)
    GF = f.galois()
    a = np.arange(9)
    assert np.array_equal(ar.mul(a[:, None], a[None, :]),
                          (GF(a)[:, None] * GF(a)[None, :]).view(np.ndarray))
    code = GradientCode(np.array([[1], [2]]), f, 1)
    assert verify(code).ok and threshold(code).threshold == 2


def test_decoder_over_a_non_primitive_polynomial_field_needs_no_galois_class(monkeypatch
                                                                           ) -> None:  # type: ignore[no-untyped-def]
    """attack's decoder over GF(3^2, x^2 + 1) works on gctool's tables: building the galois
    class (run-time compilation, ~10 s) is never needed, and the answers are galois' own."""
    from gctool.algebra.fields import Field
    from gctool.decode import Decoder

    from oracles import decodes_gf, threshold_by

    f = parse_field("GF(3^2, x^2 + 1)")
    rng = np.random.default_rng(3)
    B = rng.integers(0, 9, (6, 4))
    B[:, 0] = [1, 3, 0, 4, 0, 8]  # a sparse column: small sets fail
    code = GradientCode(B, f, 2)

    def refuse(self: Field) -> None:
        raise AssertionError("the galois class was built")

    with monkeypatch.context() as mp:
        mp.setattr(Field, "galois", refuse)
        worst = attack(code, 2)
        t = {m: threshold(code, method=m).threshold for m in ("exhaustive", "bnb", "greedy")}
        d = Decoder(code).decode([0, 1, 2, 3])
    GF = f.galois()
    truth = threshold_by(lambda F: decodes_gf(GF, B, F), 6)
    assert t == {"exhaustive": truth, "bnb": truth, "greedy": t["greedy"]} and truth is not None
    assert t["greedy"] is None or t["greedy"] >= truth
    fails2 = [S for S in itertools.combinations(range(6), 2)
              if not decodes_gf(GF, B, tuple(i for i in range(6) if i not in S))]
    assert worst.raw_error == (1.0 if fails2 else 0.0) and worst.exact
    if fails2:
        assert tuple(worst.stragglers) in fails2
    if d.ok:  # the decoding vector really decodes: a^T B_F = 1
        assert np.array_equal((GF(d.a) @ GF(B[[0, 1, 2, 3]])).view(np.ndarray),
                              np.ones((1, 4), dtype=np.int64))
    assert d.ok == decodes_gf(GF, B, (0, 1, 2, 3))


def test_a_singular_value_at_the_cut_off_is_undecided(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Rows (1, 0) and (1, delta): above the cut-off band the set decodes, far below it the
    tiny direction does not count (no float64 decoder can use it), and inside the band float64
    cannot tell: gctool says so (exit 2, one line) instead of guessing."""
    from gctool.exactls import Undecided

    def code(e: int) -> GradientCode:
        return code_of(np.array([[1.0, 0.0], [1.0, 2.0**-e]]), 0)

    assert verify(code(30)).ok
    assert not verify(code(60)).ok
    with pytest.raises(Undecided, match="float64 cannot decide"):
        verify(code(48))
    path = tmp_path / "band.json"
    path.write_text(json.dumps({"format": "gctool.code", "version": 1, "scheme": "custom",
                                "n": 2, "k": 2, "s": 0, "field": "real",
                                "B": np.asarray(code(48).B).tolist()}))
    p = run("verify", str(path))
    assert p.exit_code == 2 and p.stdout == ""
    assert p.stderr.count("\n") == 1 and "float64 cannot decide" in p.stderr
