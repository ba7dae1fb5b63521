"""verify's BCH certificate in a splitting field GF(q^e) is tried only when it pays.

galois' splitting field costs seconds of CPU per process (its class, then its arithmetic
compiled on first use): a 6-worker cyclic code over GF(46337), whose 6th roots of unity lie in
GF(46337^2), took 8.7-10 s to verify where enumerating its straggler sets takes milliseconds.
The certificate is now weighed against the enumeration before B is reduced
(:func:`gctool.audit.verify.shortcuts.tried`); verdicts do not change, and the certificate
asked for (``method=structural``) above the budget is refused in one line.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from gctool.algebra.fields import parse_field
from gctool.audit import certificates as cert
from gctool.audit.symmetry import Rotation, find_rotation
from gctool.audit.verify import shortcuts, verify
from gctool.audit.verify.run import Run
from gctool.audit.verify.shortcuts import enumeration_work, tried
from gctool.budget import Budget
from gctool.errors import BudgetExceeded
from gctool.model import GradientCode
from gctool.request import VerifyRequest


def _cyclic(field: str, n: int, g: list[int]) -> GradientCode:
    """Rows x^i g(x) mod x^n - 1 (g lowest power first)."""
    f = parse_field(field).resolved()
    B = np.zeros((n, n), dtype=np.int64)
    for i in range(n):
        for lam, c in enumerate(g):
            B[i, (i + lam) % n] = c
    return GradientCode(B, f, 0)


#: x^2 + x + 1 divides x^6 - 1; 6 does not divide 46336, so its roots lie in GF(46337^2)
SLOW = ("GF(46337)", 6, [1, 1, 1])


def bch_pays(run: Run, rot: Rotation | None) -> bool:
    """Is the BCH certificate tried on ``run``?"""
    return tried(run, "the BCH certificate", cert.bch_cost(run.code, run.s, rot), rot)


def _run(code: GradientCode, s: int, **options: Any) -> tuple[Run, Rotation | None]:
    rot, _ = find_rotation(code)
    return Run(code, VerifyRequest(s=s, **options), s, 1), rot


def test_a_cheap_enumeration_skips_galois_splitting_field(
        monkeypatch: pytest.MonkeyPatch) -> None:
    code = _cyclic(*SLOW)
    run, rot = _run(code, 1)
    cost = cert.bch_cost(code, 1, rot)
    assert cost > Budget().work_ns  # above the default budget of 5 s (measured 9 s)
    assert enumeration_work(run, rot) < 0.01 * cost
    assert not bch_pays(run, rot)

    def splitting_field(*args: object, **kwargs: object) -> None:
        raise AssertionError("the BCH certificate built its splitting field")

    monkeypatch.setattr(cert, "_zeros_in_extension", splitting_field)
    verdicts = []
    for s in range(1, 6):
        auto, brute = verify(code, s), verify(code, s, method="exhaustive")
        assert auto.ok == brute.ok and not auto.method.startswith("certificate")
        verdicts.append(auto.ok)
    assert verdicts == [True, True, False, False, False]


def test_the_certificate_asked_for_above_the_budget_is_refused_in_one_line(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def splitting_field(*args: object, **kwargs: object) -> None:
        raise AssertionError("the BCH certificate built its splitting field")

    monkeypatch.setattr(cert, "_zeros_in_extension", splitting_field)
    with pytest.raises(BudgetExceeded) as info:
        verify(_cyclic(*SLOW), 1, method="structural")
    msg = str(info.value)
    assert info.value.param == "max_work" and "\n" not in msg
    assert "the BCH certificate needs about 12 s" in msg


def test_the_certificate_is_tried_when_the_enumeration_costs_more(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """GF(2^2) in GF(2^6) (n = 7): about 3 s of galois against the enumeration; a budget
    that affords both picks the cheaper, and one that affords neither tries neither."""
    code = _cyclic("GF(2^2)", 7, [1, 1, 0, 1])
    run, rot = _run(code, 1)
    cost = cert.bch_cost(code, 1, rot)
    assert cost == pytest.approx(3e9, rel=0.01)  # (the zeros themselves: 0.4 ms)
    assert cost > enumeration_work(run, rot) and not bch_pays(run, rot)
    # an enumeration estimated above the certificate (its sets made to cost 10 s each)
    monkeypatch.setattr(shortcuts, "decoder_set_time", lambda code, s: 1e10)
    big, _ = _run(code, 1, budget=Budget(max_work=10))
    assert enumeration_work(big, rot) > cost and bch_pays(big, rot)
    tight, _ = _run(code, 1, budget=Budget(max_work=1))
    assert not bch_pays(tight, rot)  # neither fits: the enumeration's admission decides


def test_certificates_in_gf_q_itself_cost_milliseconds_and_are_held_to_the_budget() -> None:
    """n | q - 1: the zeros are found with GF(q)'s own arithmetic, a fraction of a
    millisecond for n = 6: tried under any budget above that, skipped below it by auto (the
    enumeration is then refused) and refused in one line by ``method=structural``."""
    code = _cyclic("GF(7)", 6, [1, 1])  # x + 1: -1 = alpha^3
    run, rot = _run(code, 1)
    cost = cert.bch_cost(code, 1, rot)
    assert 0 < cost < 1e6 and bch_pays(run, rot)
    below = Budget(max_work=cost / 2e9)
    assert not bch_pays(_run(code, 1, budget=below)[0], rot)
    assert verify(code, 1, budget=Budget(max_work=2 * cost / 1e9)).method == "certificate:bch"
    with pytest.raises(BudgetExceeded) as info:
        verify(code, 1, budget=below)
    # the first stage after the skipped certificate above the budget refuses: the reduction of
    # B (one elimination of 7 columns) or else the enumeration
    reduced = run.reduction_work() <= below.work_ns
    assert ("straggler sets" if reduced else "reducing B") in str(info.value)
    assert info.value.param == "max_work" and "\n" not in str(info.value)
    with pytest.raises(BudgetExceeded) as info:
        verify(code, 1, method="structural", budget=below)
    assert "the BCH certificate needs about" in str(info.value) and "\n" not in str(info.value)
