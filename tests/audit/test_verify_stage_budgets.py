"""``verify``'s stages share one work budget in order: each is held to what the stages before
it left (:meth:`gctool.budget.Budget.rest` of their admitted estimates), and a refusal names
what they used.  The enumeration used to get the whole budget after a reduction of B that had
spent most of it, and a certificate admitted on its estimate that did not prove charged
nothing to the stages after it.  The deferred class certificate (tried once the rotation's
detection leaves too little for the reduction) is reached here too.  Verdicts do not depend on
the budget: only whether a run is refused, and what its refusal says."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gctool import row_classes
from gctool.algebra.fields import parse_field
from gctool.audit import certificates as cert
from gctool.audit import nullspace, symmetry
from gctool.audit.verify import shortcuts, verify
from gctool.audit.verify.enumeration import calibrated
from gctool.audit.verify.run import Run
from gctool.audit.verify.shortcuts import checks_work, enumeration_work
from gctool.budget import NS_PER_S, Budget, format_seconds, start_ns
from gctool.codes import design
from gctool.errors import BudgetExceeded, InvalidInput
from gctool.io import code_bytes
from gctool.model import GradientCode
from gctool.request import VerifyRequest

from helpers import built, run
from refusals import forbid, refused


def _seconds(work: float) -> float:
    return work / NS_PER_S


def _enumerated(code: GradientCode, s: int) -> tuple[Run, float]:
    """A verify run of ``code`` at ``s`` (one job) and its enumeration's estimate, the run's
    start included (ns), as the pipeline prices it."""
    run_ = Run(code, VerifyRequest(s=s), s, 1)
    kernel = run_.make_kernel(run_.reduction())
    work, jobs = calibrated(run_, kernel, run_.total)
    return run_, work / jobs + start_ns(kernel.will_compile(1))


def test_the_enumeration_gets_what_the_reduction_left() -> None:
    """Real cyclic n=300 at s = 1: the reduction of B with the decoding with all n workers
    (27 ms) and the search for row classes (8 ms, all singletons) are most of a budget whose
    rest is half of what the enumeration of its 300 sets is estimated at (with the run's
    start).  The enumeration alone fits that budget, and used to run under it; it is now
    refused in one line naming what the earlier stages used.  A budget that affords them all
    gives the same verdict as before."""
    code = design("cyclic", n=300, s=2, seed=1)
    run_, enum = _enumerated(code, 1)
    checks = checks_work(run_) + cert.row_classes_cost(code)
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


def test_the_checks_exact_decisions_are_held_to_the_rest_and_charged_to_the_enumeration(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The decoding with all n workers charges the run's meter the CPU time of the sets float64
    cannot decide (their exact decisions, as measured): that meter is held to what the
    reduction's estimate left, and what it charged is spent too, so the enumeration gets the
    rest.  Real cyclic n=300 at s = 1, under a budget that affords the checks and 1.5 times
    the enumeration (and the search for row classes before it): a charge of one enumeration's
    estimate during the checks (as exact decisions would make it) has the enumeration refused,
    naming both."""
    from gctool.audit.verify import pipeline

    code = design("cyclic", n=300, s=2, seed=1)
    run_, enum = _enumerated(code, 1)
    checks, classes = checks_work(run_), cert.row_classes_cost(code)
    whole = checks + classes + 1.5 * enum
    assert verify(code, 1, budget=Budget(max_work=_seconds(whole))).ok
    limits: list[tuple[float, float]] = []
    first = pipeline.first_checks

    def charged(r: Run, cheap: bool) -> object:
        limits.append((r.meter.limit, r.budget.work_ns))
        out = first(r, cheap)
        r.meter.charge(enum)  # the exact decisions' CPU time, as ExactClock charges it
        return out

    monkeypatch.setattr(pipeline, "first_checks", charged)
    with pytest.raises(BudgetExceeded) as info:
        verify(code, 1, budget=Budget(max_work=_seconds(whole)))
    assert limits == [(pytest.approx(whole - checks), pytest.approx(whole - checks))]
    text = str(info.value)
    assert "verify (n=300, s=1) of 300 straggler sets" in text, text
    assert f"(about {format_seconds(_seconds(checks + enum + classes))}) left of" in text, text
    assert info.value.budget == pytest.approx(_seconds(whole - checks - enum - classes))


def test_the_enumeration_refusal_on_the_command_line(tmp_path: Path) -> None:
    """The same run from a file: one line on stderr naming ``--max-work`` and the earlier
    parts (its NPZ file, 0.7 MB, is below the size read under any budget)."""
    code = design("cyclic", n=300, s=2, seed=1)
    path = tmp_path / "c.npz"
    path.write_bytes(code_bytes(code, npz=True))
    run_, enum = _enumerated(code, 1)
    whole = checks_work(run_) + cert.row_classes_cost(code) + enum / 2
    refused(run("verify", str(path), "-s", "1", "--max-work", f"{_seconds(whole):.9f}s"),
            "300 straggler sets", "the earlier parts of the run", "--max-work")


def test_an_admitted_certificate_that_does_not_prove_charges_the_reduction() -> None:
    """GF(7) sbc n=28 at s = 2: the row-class certificate is tried (its estimate, about 0.5 ms,
    fits) and does not apply; the reduction of B after it (3 ms) used to get the whole budget
    and answer (the rank bound's counterexample).  Under a budget of the reduction and half
    the certificate, the reduction is now refused, naming what the certificate used; with
    both afforded the verdict is the same."""
    code = design("sbc", n=28, s=3, field="GF(7)", seed=1)
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


def _frc(n: int, group: int) -> GradientCode:
    """A real FRC code (as ``design frc`` builds it: groups of ``group`` workers sharing
    ``group`` partitions), without the design's self-check."""
    B = np.kron(np.eye(n // group), np.ones((group, group)))
    return GradientCode(B, parse_field("real"), group - 1)


def test_the_rotation_detection_leads_to_the_deferred_class_certificate(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Real frc n=1024 (groups of 8) at s = 7: over R auto defers the row-class certificate
    while the reduction of B with the decoding with all n workers (about 1 s) fits the budget.
    The rotation's detection (57 ms, above what runs under any budget) fits too and is spent;
    what it leaves no longer affords the reduction, so the deferred certificate is tried and
    proves the code: the verdict the enumeration would give, by the certificate."""
    code = _frc(1024, 8)
    run_ = Run(code, VerifyRequest(s=7), 7, 1)
    detection, checks = symmetry.rotation_work(code), checks_work(run_)
    classes = cert.class_cost(code)
    assert detection >= symmetry.ROTATION_FREE_NS  # held to the budget, and spent
    whole = checks + detection / 2
    assert detection < enumeration_work(run_, None)  # (auto looks for it)
    assert whole - detection < checks and classes <= whole - detection
    seen: list[Any] = []
    deferred = shortcuts.deferred_certificate

    def spy(r: Run, rot: symmetry.Rotation | None) -> object:
        seen.append((r.certificates, rot))
        out = deferred(r, rot)
        seen.append(out)
        return out

    monkeypatch.setattr(shortcuts, "deferred_certificate", spy)
    monkeypatch.setattr(nullspace, "reduce_float", forbid)  # the reduction never starts
    report = verify(code, 7, budget=Budget(max_work=_seconds(whole)))
    assert report.ok and report.verdict == "ok" and report.exact
    assert report.method == "certificate:classes", report.reason
    assert report.certificate is not None and "128 classes of proportional rows" in \
        report.certificate
    status, rot = seen[0]
    assert status == "deferred" and rot is not None and rot.t == 8
    assert seen[1] is report  # the deferred attempt gave the report
    # the detection's spend is what leads there: free (as below ROTATION_FREE_NS), the same
    # budget affords the reduction, and the run goes on to it (stopped here by ``forbid``)
    monkeypatch.setattr(symmetry, "ROTATION_FREE_NS", 2 * detection)
    seen.clear()
    with pytest.raises(AssertionError, match="expensive step ran"):
        verify(_frc(1024, 8), 7, budget=Budget(max_work=_seconds(whole)))
    assert len(seen) == 2 and seen[0][0] == "deferred" and seen[1] is None


def _count_classes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the searches for row classes (:func:`gctool.row_classes.find_row_classes`,
    wherever verify's modules import it from)."""
    from gctool.audit.verify import classes as stage

    calls: list[int] = []
    found = row_classes.find_row_classes

    def spy(code: GradientCode) -> Any:
        calls.append(code.n)
        return found(code)

    monkeypatch.setattr(row_classes, "find_row_classes", spy)
    monkeypatch.setattr(stage, "find_row_classes", spy, raising=False)
    return calls


def _spends(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Record what each stage spends (:meth:`Run.spend`)."""
    spent: list[float] = []
    spend = Run.spend

    def spy(r: Run, work: float) -> None:
        spent.append(work)
        spend(r, work)

    monkeypatch.setattr(Run, "spend", spy)
    return spent


def test_the_class_patterns_reuse_the_classes_the_certificate_found(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """GF(7) cyclic-MDS n=6 with every row repeated (n = 12, six classes of two proportional
    rows with overlapping supports) at s = 3: the row-class certificate is tried, finds the
    classes and does not prove; the class patterns then verify the code.  They used to find
    the classes again and charge their estimate a second time; they are found once per run,
    and :func:`~gctool.audit.certificates.class_cost` is spent once.  The verdict is the
    exhaustive enumeration's."""
    base = design("cyclic-mds", n=6, s=2, field="GF(7)")
    code = GradientCode(np.repeat(np.asarray(base.B), 2, axis=0), base.field, 3)
    calls, spent = _count_classes(monkeypatch), _spends(monkeypatch)
    checked: list[float] = []
    check = Budget.check_work

    def spy(b: Budget, what: str, work: float, *args: Any, **kw: Any) -> None:
        if "row-class pattern" in what:
            checked.append(work)
        check(b, what, work, *args, **kw)

    monkeypatch.setattr(Budget, "check_work", spy)
    report = verify(code, 3)
    assert report.method == "row-classes" and report.ok, report.reason
    assert calls == [12]
    assert spent.count(cert.class_cost(code)) == 1, spent
    # the patterns are admitted on their sets alone (one per pattern, GF(q): no diagnostics)
    run_ = Run(code, VerifyRequest(s=3), 3, 1)
    patterns = report.reduction["checked"]
    kernel = run_.make_kernel(run_.reduction())
    assert checked == [pytest.approx(patterns * kernel.given_time(3, patterns))]
    assert report.verdict == verify(code, 3, method="exhaustive").verdict == "ok"
    worse = verify(code, 6)  # three repeated rows: three of the six lost
    assert not worse.ok and worse.verdict == verify(code, 6, method="exhaustive").verdict


def test_the_classes_are_looked_for_only_when_their_estimate_fits(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Real cyclic n=600 at s = 1: auto defers the class certificate (the reduction fits), so
    the class patterns are the first to look for row classes.  Under a budget whose rest after
    the reduction affords the enumeration of the 600 sets but not the search for classes
    (O(n K), its cost per row raised here above the enumeration's per set: 36 ms), the classes
    were found anyway, unestimated; they are now not looked for (a note says so) and the
    enumeration gives the verdict.  With their estimate afforded too, they are found once
    (all singletons) and spent, and the verdict is the same."""
    monkeypatch.setattr(cert, "CLASS_ROW_NS", 60_000)  # 36 ms for the 600 rows
    code = design("cyclic", n=600, s=2, seed=1)
    run_, enum = _enumerated(code, 1)
    checks, classes = checks_work(run_), cert.row_classes_cost(code)
    assert symmetry.rotation_work(code) == 0 and 1.5 * enum < classes
    with pytest.MonkeyPatch.context() as mp:
        calls = _count_classes(mp)
        report = verify(code, 1, budget=Budget(max_work=_seconds(checks + 1.5 * enum)))
    assert calls == [] and report.ok and report.method == "enumeration", report.reason
    assert any(note.startswith("row classes not looked for (estimated") and
               "above the work budget" in note for note in report.notes), report.notes
    with pytest.MonkeyPatch.context() as mp:
        calls, spent = _count_classes(mp), _spends(mp)
        again = verify(code, 1, budget=Budget(max_work=_seconds(checks + classes + 1.5 * enum)))
    assert calls == [600] and spent.count(classes) == 1 and again.verdict == report.verdict
    assert not any("row classes not looked for" in note for note in again.notes)


def test_a_verify_inside_a_shared_budget_decides_on_what_the_earlier_parts_left(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Within a run that shares one budget in order (:class:`gctool.budget.SharedWork`, as
    ``design kron`` verifies its factors in it), verify's stages decided whether a certificate
    or the reduction of B fitted against the whole budget, not what the parts before verify
    left: over R, real frc n=512 (groups of 8) at s = 7 deferred its row-class certificate
    because the reduction fitted the whole, then had the reduction refused by the shared
    budget's rest.  It now decides on the rest (:meth:`gctool.budget.Budget.current`): the
    reduction does not fit it, so the certificate is tried and proves the code."""
    from gctool.budget import SharedWork

    code = _frc(512, 8)
    run_ = Run(code, VerifyRequest(s=7), 7, 1)
    checks, classes = checks_work(run_), cert.class_cost(code)
    detection = symmetry.rotation_work(code)
    left = (classes + checks) / 2  # what the earlier parts leave: the certificate, not the rest
    assert detection < symmetry.ROTATION_FREE_NS and classes < left < checks  # (free)
    before = 10 * checks  # the earlier parts: most of the budget
    shared = SharedWork(Budget(max_work=_seconds(before + left)), _seconds(before))
    monkeypatch.setattr(nullspace, "reduce_float", forbid)  # the reduction never starts
    report = verify(code, 7, budget=shared.budget())
    assert report.ok and report.method == "certificate:classes", report.reason
    assert shared.meter.spent == pytest.approx(before + classes)  # charged to the shared run
    # with the whole budget left, the certificate waits and the reduction goes on (forbid)
    with pytest.raises(AssertionError, match="expensive step ran"):
        verify(code, 7, budget=SharedWork(Budget(max_work=_seconds(before + left))).budget())


def test_design_kron_verifies_its_factor_on_what_the_design_left(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``design kron`` of real frc n=512 (groups of 8, its threshold too costly to search, so
    verify proves its s) and uncoded n=4 under a budget whose rest after the design's earlier
    parts (the 2048 x 2048 product's entries) affords the factor's class certificate but not
    its reduction: the design was refused ("reducing B and decoding with
    all n workers"), since the factor's verify deferred the certificate on the whole budget;
    the factor is now certified, and the product declares s = 7."""
    from gctool.audit import verify as verify_module
    from gctool.budget import SharedWork

    big, small = _frc(512, 8), design("uncoded", n=4)
    run_ = Run(big, VerifyRequest(s=7), 7, 1)
    checks, classes = checks_work(run_), cert.class_cost(big)
    spent: list[float] = []
    real = verify_module.verify

    def seen(code: GradientCode, s: int, budget: Budget, **kw: Any) -> Any:
        assert isinstance(budget.run, SharedWork)
        spent.append(budget.run.meter.spent)
        return real(code, s, budget=budget, **kw)

    monkeypatch.setattr(verify_module, "verify", seen)
    product = design("kron", file1=big, file2=small, budget=Budget(max_work=60.0))
    assert product.s == 7 and len(spent) == 1  # (only the frc factor is verified)
    before = spent[0]
    spent.clear()
    left = (classes + 3 * checks) / 4
    assert before + left > checks  # (the whole budget affords the reduction)
    monkeypatch.setattr(nullspace, "reduce_float", forbid)
    again = design("kron", file1=big, file2=small,
                   budget=Budget(max_work=_seconds(before + left)))
    assert again.s == 7 and spent == [pytest.approx(before)]
    assert np.array_equal(np.asarray(again.B), np.asarray(product.B))


def _rational(n: int) -> GradientCode:
    """A real n x n code whose entries are n^2 distinct non-integer fractions (p/1000)."""
    rng = np.random.default_rng(5)
    values = rng.choice(np.arange(1, 10**6)[np.arange(1, 10**6) % 1000 != 0], n * n,
                        replace=False)
    return GradientCode((values / 1000).reshape(n, n), parse_field("real"), 1)


def test_the_exact_input_check_is_held_to_the_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """``exact`` reads every distinct non-integer entry of B as a fraction (2-9 us each) before
    anything else: it ran under any budget, unestimated (only the reduction after it was
    refused).  It is estimated (:func:`gctool.audit.rational.input_work`, one exact rational
    operation a value) and refused in one line above the budget, having read one entry; its
    estimate is spent, and the verdict under a budget that affords it is the same."""
    from gctool.audit import rational

    code = _rational(12)
    work = rational.input_work(144)
    assert work == 144 * 10_000
    read: list[float] = []
    fraction = rational._fraction

    def spy(x: float) -> Any:
        read.append(x)
        return fraction(x)

    monkeypatch.setattr(rational, "_fraction", spy)
    with pytest.raises(BudgetExceeded) as info:
        verify(code, 1, exact=True, budget=Budget(max_work=_seconds(work / 2)))
    text = str(info.value)
    assert "\n" not in text and info.value.param == "max_work", text
    assert ("verify (n=12, k*m=12, real) with `exact`: reading the 144 distinct non-integer "
            "entries of B as fractions needs about 1.4 ms") in text, text
    assert len(read) == 1  # the first entry only (a random real code: not rational)
    spent = _spends(monkeypatch)
    report = verify(code, 1, exact=True)
    assert spent[0] == work and report.arithmetic == "rational"
    assert report.verdict == verify(code, 1).verdict
    # a code that is not rational is still refused as such, under any budget
    bad = GradientCode(np.asarray(code.B) + 1e-9, code.field, 1)
    with pytest.raises(InvalidInput, match="integer or rational entries"):
        verify(bad, 1, exact=True, budget=Budget(max_work=1e-6))
    assert rational.check_exact_input(design("frc", n=6, s=1), Budget(max_work=1e-9)) == 0


def test_the_exact_input_refusal_on_the_command_line(tmp_path: Path) -> None:
    from gctool.audit import rational
    from gctool.io import write_code

    path = tmp_path / "q.json"
    write_code(_rational(12), path)
    work = rational.input_work(144)
    refused(run("verify", str(path), "--exact", "-s", "1", "--max-work",
                f"{_seconds(work / 2):.9f}s"), "as fractions", "--max-work")


def test_a_run_left_to_the_timed_probe_is_not_refused_by_its_pilot(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """rs real n=36 s=6 at a budget of 3 s (one job): its calibrated estimate (about 20 s) is
    above the budget and within TIMED_SPAN of it, so the timed probe decides.  Its pilot, the
    first sets in lex order, has sets float64 cannot decide, whose exact decisions it charges
    to the run's meter: that meter, charged up to the budget with the calibrated estimate,
    refused the run there ('would take about 3 s or more', the budget itself, for a run of
    13 s).  The pilot now reaches the probe."""
    from gctool.audit.verify import enumeration

    class Probed(Exception):
        pass

    def probe(*args: Any, **kw: Any) -> Any:
        raise Probed

    monkeypatch.setenv("GCTOOL_COMPILED", "1")
    monkeypatch.setattr(enumeration, "_check_timed", probe)
    code = built("rs", 36, 6, field="real")
    run_, work = _enumerated(code, 6)
    assert 3.0 < _seconds(work) <= 30.0  # left to the probe (TIMED_SPAN = 10)
    with pytest.raises(Probed):
        verify(code, 6, budget=Budget(max_work=3.0), jobs=1)


def test_the_timed_probe_is_held_to_the_work_its_walk_hands_on() -> None:
    """rs real n=36 s=6 (one job, a budget of 3 s): the sets its walk hands on (4.7 % to the
    compensated residual and the QR certificate, about 23 us each where the walk costs 1-2;
    they went to the direct decoder, three quarters of its CPU) cluster along the lex order,
    and the probe's window from the middle held few of them: it read 0.35-0.45 of the run (a
    budget of 5 s on 2 jobs admitted a run of 7 s a job).  The refusal states at least their
    time at their share of random sets (FloatNullKernel.spread_time), at SPREAD_FLOOR of it:
    an estimate that read 1.7x the walk."""
    from gctool.audit.verify import enumeration

    code = built("rs", 36, 6, field="real")
    run_, _ = _enumerated(code, 6)
    floor = _seconds(run_.make_kernel(run_.reduction()).spread_time(6) * run_.total)
    assert floor > 3.0
    with pytest.raises(BudgetExceeded) as refusal:
        verify(code, 6, budget=Budget(max_work=3.0), jobs=1)
    assert "timed on" in str(refusal.value)
    assert refusal.value.needed >= enumeration.SPREAD_FLOOR * floor
