"""``verify``'s stages share one work budget in order: each is held to what the stages before
it left (:meth:`gctool.budget.Budget.rest` of their admitted estimates), and a refusal names
what they used.  The enumeration used to get the whole budget after a reduction of B that had
spent most of it, and a certificate admitted on its estimate that did not prove charged
nothing to the stages after it.  Verdicts do not depend on the budget: only whether a run is
refused, and what its refusal says."""

from __future__ import annotations

from pathlib import Path

import pytest

from gctool.audit import certificates as cert
from gctool.audit import symmetry
from gctool.audit.verify import verify
from gctool.audit.verify.enumeration import calibrated
from gctool.audit.verify.run import Run
from gctool.audit.verify.shortcuts import checks_work, enumeration_work
from gctool.budget import NS_PER_S, Budget, format_seconds, start_ns
from gctool.codes import design
from gctool.errors import BudgetExceeded
from gctool.io import code_bytes
from gctool.request import VerifyRequest

from helpers import run
from refusals import refused


def _seconds(work: float) -> float:
    return work / NS_PER_S


def test_the_enumeration_gets_what_the_reduction_left() -> None:
    """Real cyclic n=300 at s = 1: the reduction of B with the decoding with all n workers
    (27 ms) is most of a budget whose rest is half of what the enumeration of its 300 sets is
    estimated at (with the run's start).  The enumeration alone fits that budget, and used to
    run under it; it is now refused in one line naming what the reduction used.  A budget
    that affords both gives the same verdict as before."""
    code = design("cyclic", n=300, s=2, seed=1)
    run_ = Run(code, VerifyRequest(s=1), 1, 1)
    kernel = run_.make_kernel(run_.reduction())
    work, jobs = calibrated(run_, kernel, run_.total)
    enum = work / jobs + start_ns(kernel.will_compile(1))
    checks = checks_work(run_)
    assert symmetry.rotation_work(code) == 0  # no detection spends: only the reduction
    whole = checks + enum / 2
    assert checks > whole / 2 and enum <= whole  # most of it; the enumeration alone fits
    with pytest.raises(BudgetExceeded) as info:
        verify(code, 1, budget=Budget(max_work=_seconds(whole)))
    text = str(info.value)
    assert "\n" not in text and info.value.param == "max_work"
    assert "verify (n=300, s=1) of 300 straggler sets" in text, text
    assert (f"the earlier parts of the run (about {format_seconds(_seconds(checks))}) left of "
            f"the work budget of {format_seconds(_seconds(whole))}") in text, text
    assert info.value.budget == pytest.approx(_seconds(whole - checks))
    report = verify(code, 1, budget=Budget(max_work=_seconds(checks + enum) * 1.05))
    assert report.ok and report.method == "enumeration" and report.checked == 300


def test_the_enumeration_refusal_on_the_command_line(tmp_path: Path) -> None:
    """The same run from a file: one line on stderr naming ``--max-work`` and the earlier
    parts (the file itself is below the size read under any budget)."""
    code = design("cyclic", n=300, s=2, seed=1)
    path = tmp_path / "c.json"
    path.write_bytes(code_bytes(code, path))
    run_ = Run(code, VerifyRequest(s=1), 1, 1)
    kernel = run_.make_kernel(run_.reduction())
    work, jobs = calibrated(run_, kernel, run_.total)
    whole = checks_work(run_) + (work / jobs + start_ns(kernel.will_compile(1))) / 2
    refused(run("verify", str(path), "-s", "1", "--max-work", f"{_seconds(whole):.9f}s"),
            "300 straggler sets", "the earlier parts of the run", "--max-work")


def test_an_admitted_certificate_that_does_not_prove_charges_the_reduction() -> None:
    """GF(7) sbc n=60 at s = 2: the row-class certificate is tried (its estimate, about 1 ms,
    fits) and does not apply; the reduction of B after it (4 ms) used to get the whole budget
    and answer (the rank bound's counterexample).  Under a budget of the reduction and half
    the certificate, the reduction is now refused, naming what the certificate used; with
    both afforded the verdict is the same."""
    code = design("sbc", n=60, s=3, field="GF(7)", seed=1)
    run_ = Run(code, VerifyRequest(s=2), 2, 1)
    classes, checks = cert.class_cost(code), checks_work(run_)
    assert cert.class_certificate(code, 2) is None  # tried, and no proof
    assert classes < enumeration_work(run_, None)  # (auto tries it)
    whole = checks + classes / 2
    assert classes >= 0.1 * whole  # (a refusal names earlier parts from a tenth of the whole)
    with pytest.raises(BudgetExceeded) as info:
        verify(code, 2, budget=Budget(max_work=_seconds(whole)))
    text = str(info.value)
    assert "\n" not in text and "reducing B" in text, text
    assert (f"the earlier parts of the run (about {format_seconds(_seconds(classes))}) left "
            f"of the work budget of {format_seconds(_seconds(whole))}") in text, text
    assert "no structural certificate (BCH bound, disjoint row classes) applies" in text
    report = verify(code, 2, budget=Budget(max_work=_seconds(checks + classes) * 1.05))
    assert not report.ok and report.method == "rank-bound"
    assert report.verdict == verify(code, 2, budget=Budget(max_work=30.0)).verdict


def test_a_refused_reduction_names_the_certificate_tried_before_it() -> None:
    """Real cyclic n=300 at s = 1 under twice the row-class certificate's estimate: the
    reduction with the full set is over the budget (refused either way), so the certificate
    is tried first and does not apply; the refusal now states what is left after it, not
    the whole budget as if nothing had run."""
    code = design("cyclic", n=300, s=2, seed=1)
    run_ = Run(code, VerifyRequest(s=1), 1, 1)
    classes = cert.class_cost(code)
    whole = 2 * classes
    assert checks_work(run_) > whole
    with pytest.raises(BudgetExceeded) as info:
        verify(code, 1, budget=Budget(max_work=_seconds(whole)))
    text = str(info.value)
    assert "reducing B and decoding with all n workers" in text, text
    assert (f"above the {format_seconds(_seconds(whole - classes))} that the earlier parts of "
            f"the run (about {format_seconds(_seconds(classes))})") in text, text
    assert info.value.budget == pytest.approx(_seconds(whole - classes))
