"""No survivors: the decoder's verdict on the empty set follows the rule (error ||T||^2 = m k
exactly, decodes when that is at most tol * k).  It said 'fails' whatever the limit, so
``show --stragglers <all> --tol 1`` reported decodes: false with error 5 = tol * k, while
attack and threshold (which compare the error with the limit) said it decodes."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import gctool
from gctool.decode import Decoder
from gctool.io import write_code

from corpus import code_of
from helpers import run

#: cyclic-like 5 x 5 real code, k = 5: the empty set's error is 5
B5 = np.array(gctool.design("cyclic", n=5, s=2, seed=1).B)


@pytest.mark.parametrize("tol, decodes", [
    (1.0, True), ("1", True), (Fraction(1), True), (1.5, True), (0.999, False),
    (0.9999999999999999, False),  # exact limit below 5 though its float is 5.0
    (Fraction(1) - Fraction(1, 10**30), False)])
def test_the_empty_set_decodes_by_the_rule(tol: object, decodes: bool) -> None:
    code = code_of(B5, 2)
    d = Decoder(code, tol)  # type: ignore[arg-type]
    r = d.evaluate(np.zeros((3, 0), dtype=np.intp))
    assert r.ok.tolist() == [decodes] * 3 and bool(r.error[0] <= d.limit) is decodes
    assert (Fraction(5) <= d.exact_limit) is decodes  # the rule, exactly
    one = d.decode([])
    assert one.ok is decodes and (one.error <= d.limit) is decodes
    t = gctool.threshold(code, tol=tol, method="exhaustive")  # type: ignore[arg-type]
    assert t.exact and (t.threshold is None) == decodes
    a = gctool.attack(code, 5, tol=tol)  # type: ignore[arg-type]
    assert (a.reason == "every straggler set of this size still decodes") == decodes


def test_gf_empty_set_never_decodes() -> None:
    code = code_of(np.array([[1, 0], [0, 1], [1, 1]]), 1, "GF(5)")
    r = Decoder(code).evaluate(np.zeros((1, 0), dtype=np.intp))
    assert not r.ok[0] and r.error[0] == 1.0


def test_show_of_no_survivors_agrees(tmp_path: Path) -> None:
    f = tmp_path / "c5.json"
    write_code(code_of(B5, 2), f)
    for tol, decodes in (("1", True), ("0.999", False)):
        res = run("show", str(f), "--stragglers", "0,1,2,3,4", "--tol", tol, "--json")
        shown = json.loads(res.stdout)["decoding"]
        lib = gctool.show(code_of(B5, 2), stragglers=range(5), tol=float(tol)).to_dict()
        assert shown["decodes"] is decodes and shown["error"] == 5.0, tol
        assert lib["decoding"]["decodes"] is decodes, tol
