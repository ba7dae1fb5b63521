"""The audits' shortcut paths are held to the work budget on their own estimates.

``verify``'s BCH certificate (:func:`gctool.audit.certificates.bch_cost`), its row-class
certificate (:func:`~gctool.audit.certificates.class_cost`) and its class patterns
(:func:`gctool.audit.verify.classes.patterns_work`), and the witness of a lost partition that
``attack --threshold``'s auto looks for when the budget stopped it, used to run under any
budget (``--max-work 1us`` certified frc and cyclic-MDS codes).  Each is now refused, or
skipped by ``auto``, under a budget below its estimate, and runs under one above it, with the
same verdict.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gctool.audit import certificates as cert
from gctool.audit.attack import threshold
from gctool.audit.symmetry import find_rotation
from gctool.audit.verify import verify
from gctool.budget import NS_PER_S, Budget
from gctool.codes import design
from gctool.errors import BudgetExceeded

from helpers import run
from refusals import design_file, refused


def _seconds(work: float) -> str:
    """A --max-work time for ``work`` ns."""
    return f"{work / NS_PER_S:.9g}s"


def test_bch_certificate_below_and_above_its_estimate(tmp_path: Path) -> None:
    path = design_file(tmp_path, "g.json", "cyclic-mds", n=31, s=6, field="GF(2^5)")
    code = design("cyclic-mds", n=31, s=6, field="GF(2^5)")
    cost = cert.bch_cost(code, 6, find_rotation(code)[0])
    assert 1e5 < cost < 5e6  # a fraction of a millisecond to a few (n = 31, s = 6)
    line = refused(run("verify", path, "--method", "structural", "--max-work",
                       _seconds(cost / 2)), "the BCH certificate needs about", "--max-work")
    assert "`" not in line
    # auto skips it: the reduction of B (0.6 ms) or the enumeration is then refused
    refused(run("verify", path, "--max-work", _seconds(cost / 2)), "--max-work")
    for method in ("auto", "structural"):
        r = run("verify", path, "--method", method, "--max-work", _seconds(cost * 1.01))
        assert r.exit_code == 0 and "certificate:bch" in r.stdout, r.output


def test_class_certificate_below_and_above_its_estimate(tmp_path: Path) -> None:
    path = design_file(tmp_path, "f.json", "frc", n=30, s=4)
    cost = cert.class_cost(design("frc", n=30, s=4))
    assert 3e5 < cost < 3e6
    refused(run("verify", path, "--method", "structural", "--max-work", _seconds(cost / 2)),
            "the row-class certificate needs about", "--max-work")
    refused(run("verify", path, "--max-work", "1us"), "reducing B", "--max-work")
    r = run("verify", path, "--method", "structural", "--max-work", _seconds(cost * 1.01))
    assert r.exit_code == 0 and "certificate:classes" in r.stdout, r.output
    # over GF(q) auto tries it first, whatever the reduction costs
    gf = design("frc", n=30, s=4, field="GF(7)")
    cost = cert.class_cost(gf)
    assert verify(gf, 4, budget=Budget(max_work=cost * 1.01 / NS_PER_S)).method == \
        "certificate:classes"
    with pytest.raises(BudgetExceeded) as info:
        verify(gf, 4, method="structural", budget=Budget(max_work=cost / 2 / NS_PER_S))
    assert info.value.param == "max_work" and "row-class certificate" in str(info.value)


def test_class_patterns_are_refused_on_their_estimate() -> None:
    """frc n=300 s=5 over R under auto: the reduction of B fits, one set per class pattern
    (with the report's direct decoding of it), after the reduction, the decoding with all
    n workers and finding the row classes, does not; a budget between the two refuses in one
    line naming the patterns, one above runs them."""
    from gctool.audit.verify import classes
    from gctool.audit.verify.run import Run
    from gctool.audit.verify.shortcuts import checks_work
    from gctool.request import VerifyRequest

    code = design("frc", n=300, s=5)
    run_ = Run(code, VerifyRequest(s=5), 5, 1)
    before = checks_work(run_) + cert.class_cost(code)
    assert before > run_.reduction_work()  # (over R: the full set's decoding too)
    work = classes.patterns_work(run_, run_.make_kernel(run_.reduction()), 1)
    with pytest.raises(BudgetExceeded) as info:
        verify(code, 5, budget=Budget(max_work=(before + work / 2) / NS_PER_S))
    text = str(info.value)
    assert "one per row-class pattern" in text and "\n" not in text
    assert info.value.param == "max_work"
    r = verify(code, 5, budget=Budget(max_work=(before + work) * 1.01 / NS_PER_S))
    assert r.ok and r.method == "row-classes"


def test_threshold_witness_of_a_lost_partition_is_held_to_the_budget(tmp_path: Path) -> None:
    """GF(7) frc n=30: auto's exhaustive search, elementary and branch and bound are all over
    a budget of 1 us; the holders of the least replicated partition (their own estimate, a few
    ms) no longer run under it: the budget's refusal is the answer.  Under a budget that
    affords them, the result is their witness, labelled heuristic as before."""
    code = design("frc", n=30, s=4, field="GF(7)")
    with pytest.raises(BudgetExceeded) as info:
        threshold(code, budget=Budget(max_work=1e-6))
    assert info.value.param == "max_work"
    path = design_file(tmp_path, "f.json", "frc", n=30, s=4, field="GF(7)")
    line = refused(run("attack", path, "--threshold", "--max-work", "1us"), "--max-work")
    assert "would take about" in line and "has spent" not in line  # nothing ran
    out = threshold(code, budget=Budget(max_work=0.02))
    assert out.threshold == 5 and not out.exact and out.threshold_lower <= 5
    assert len(out.stragglers or []) == 5


def test_the_reduction_is_checked_with_the_full_set_after_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Over R/C every enumeration follows the reduction of B and a decoding with all n workers
    (one SVD of B, as costly as the reduction at n = 2048, where it was left out of the check):
    a budget between the reduction alone and both refuses before either starts."""
    from gctool.audit import nullspace
    from gctool.audit.verify.run import Run
    from gctool.audit.verify.shortcuts import checks_work
    from gctool.request import VerifyRequest

    from refusals import forbid

    code = design("cyclic", n=30, s=4, seed=1)
    run_ = Run(code, VerifyRequest(s=4), 4, 1)
    alone, both = run_.reduction_work(), checks_work(run_)
    assert both > 2 * alone
    monkeypatch.setattr(nullspace, "reduce_float", forbid)
    with pytest.raises(BudgetExceeded) as info:
        verify(code, 4, budget=Budget(max_work=(alone + both) / 2 / NS_PER_S))
    assert "reducing B and decoding with all n workers" in str(info.value)


def test_auto_tries_the_class_certificate_when_the_reduction_and_full_set_are_over() -> None:
    """Over R/C auto tries the row-class certificate when what every enumeration starts with
    (the reduction of B and the decoding with all n workers, ``checks_work``) is over the
    budget.  It used to ask only whether the reduction alone fitted, so under a budget between
    the two (real frc n=2048 s=15 after reading its file: reduction 3.8 s, with the full set
    7.7 s, 3.9 s left) it refused, saying no certificate applied, while ``--method structural``
    certified the code."""
    from gctool.audit.verify.run import Run
    from gctool.audit.verify.shortcuts import checks_work
    from gctool.request import VerifyRequest

    code = design("frc", n=240, s=5)
    run_ = Run(code, VerifyRequest(s=5), 5, 1)
    reduction, checks = run_.reduction_work(), checks_work(run_)
    budget = Budget(max_work=(reduction + checks) / 2 / NS_PER_S)
    assert cert.class_cost(code) < reduction < budget.work_ns < checks
    r = verify(code, 5, budget=budget)
    assert r.ok and r.method == "certificate:classes", r.reason
    # the same budget with the certificate out of the way: the refusal says why it was not used
    with pytest.raises(BudgetExceeded) as info:
        verify(code, 5, method="exhaustive", budget=budget)
    text = str(info.value)
    assert "reducing B" in text and "applies or fits" not in text
    assert "exhaustive tries no structural certificate" in text
    # tried and over the budget: the refusal says none fits
    with pytest.raises(BudgetExceeded) as info:
        verify(code, 5, budget=Budget(max_work=cert.class_cost(code) / 2 / NS_PER_S))
    assert "no structural certificate (BCH bound, disjoint row classes) applies or fits" in \
        str(info.value)
