"""The stages of ``verify`` before any enumeration: answers that need no search (a partition
whose holders all straggle, a structural certificate, all n workers, s = 0, the rank bound),
and the work check of the reduction of B that every later stage needs.  Each returns the
report when it answers, else None; every counterexample is confirmed by the direct decoder."""

from __future__ import annotations

import numpy as np

from gctool.audit import certificates as cert
from gctool.audit import nullspace as ns
from gctool.audit.symmetry import Rotation, count_orbits
from gctool.audit.verify.run import Run
from gctool.budget import START_NS
from gctool.decode.cost import decoder_set_time, single_call_time
from gctool.exactls import Undecided
from gctool.numerics import exact_limit
from gctool.reports import VerifyReport


def lost_partition(run: Run) -> VerifyReport | None:
    """The column-support counterexample when every holder of a partition straggles: its
    m pieces are then zero columns of B_F, so each target keeps an error of at least 1 on
    them, a failure over GF(q) and over R/C whenever the tolerance tol * k is below 1 (no
    decoder needed; checked before the work budget, so huge codes get it too)."""
    f = cert.column_support(run.code, run.s)
    if f is None:
        return None
    j = int(np.argmin(run.code.replication))
    if int(run.code.replication[j]) > run.s:
        return None  # fewer than m pieces left: the decoder decides (first_checks)
    if not (run.finite or run.exact or exact_limit(run.code.k, run.tol) < 1):
        return None
    return run.finding(f)


def certificate(run: Run, rot: Rotation | None) -> VerifyReport | None:
    """Structural certificates (proofs that also show that all n workers decode), tried
    before anything that costs O(n^3), each when its estimate fits (:func:`tried`): the BCH
    bound (a 4095-worker cyclic-MDS code answers in 0.1 s) and disjoint row classes (FRC
    groups: a 4096-worker FRC code in about 0.1 s).  Over R/C with ``method=auto`` the
    enumeration also reports the decoding systems' condition numbers (gates need them): the
    class certificate stands in for it only when what every enumeration starts with (the
    reduction of B and the decoding with all n workers, :func:`checks_work`) is over the
    work budget; while it fits, the certificate waits for :func:`deferred_certificate`."""
    run.certificates = "tried"
    name, statement = "bch", None
    if not run.exact and tried(run, "the BCH certificate", cert.bch_cost(run.code, run.s, rot),
                               rot):
        statement = cert.bch_certificate(run.code, run.s, rot)
    if statement is None:
        if run.numeric and run.method != "structural" and run.budget.affords(checks_work(run)):
            run.certificates = "deferred"
            return None
        name, statement = "classes", _classes(run, rot)
    return _certified(run, name, statement)


def deferred_certificate(run: Run, rot: Rotation | None) -> VerifyReport | None:
    """The class certificate that :func:`certificate` deferred, tried when what the earlier
    stages left of the budget (the rotation's detection spends its estimate) no longer affords
    the reduction of B and the decoding with all n workers (:func:`checks_work`)."""
    if run.certificates != "deferred" or run.budget.affords(checks_work(run)):
        return None
    run.certificates = "tried"
    return _certified(run, "classes", _classes(run, rot))


def _classes(run: Run, rot: Rotation | None) -> str | None:
    """The class certificate's statement when it is tried (:func:`tried`) and proves; the row
    classes it finds are the run's (:meth:`Run.row_classes`: the class patterns reuse them)."""
    sample = cert.class_sample(run.code)  # (read once: the estimate's and the certificate's)
    if tried(run, "the row-class certificate", cert.class_cost(run.code, sample), rot):
        return cert.class_certificate(run.code, run.s, run.row_classes, sample)
    return None


def _certified(run: Run, name: str, statement: str | None) -> VerifyReport | None:
    if statement is None:
        return None
    return run.report(True, f"certificate:{name}", f"structural certificate: {statement}",
                      certificate=statement, represented=run.total, kernel="none")


def enumeration_work(run: Run, rot: Rotation | None) -> float:
    """An estimate of the enumeration known before B is reduced, in ns of one core: the
    reduction, then one set per orbit of ``rot`` (every set without it) at the direct
    decoder's time per set (the kernels that decide them are faster), and the run's start."""
    n, s = run.code.n, run.s
    count = count_orbits(n, s, rot.t) if rot is not None else run.total
    return run.reduction_work() + count * decoder_set_time(run.code, s) + START_NS


def tried(run: Run, what: str, cost: float, rot: Rotation | None) -> bool:
    """Is a structural certificate estimated at ``cost`` (ns of one core: :func:`gctool.audit.
    certificates.bch_cost`, :func:`~gctool.audit.certificates.class_cost`) tried?  With
    ``method=auto`` when it fits the work budget and costs less than the enumeration would
    (:func:`enumeration_work`; a BCH certificate in a splitting field GF(q^e) costs seconds of
    galois): a skipped certificate costs no verdict, the enumeration then decides, and refuses
    in one line above the budget.  With ``method=structural`` (no enumeration follows) one
    above the budget is refused.  A cost of 0 (the certificate does not apply) is tried.
    Admitted, its estimate is spent whether it proves or not: the later stages (the other
    certificate, the reduction of B, the enumeration) are held to what it leaves
    (:meth:`Run.spend`), as after the rotation's detection."""
    if cost == 0:
        return True
    n, q = run.code.n, run.code.field
    what = f"verify (n={n}, s={run.s}, {q}): {what}"
    if run.method == "structural":
        run.budget.check_work(what, cost, "use `method`=auto (enumeration), or raise "
                              "`max_work`")
    elif not run.budget.affords(cost) or cost >= enumeration_work(run, rot):
        return False
    else:
        run.budget.check_work(what, cost, "raise `max_work`")  # admitted (counted as checked)
    run.spend(cost)
    return True


def check_reduction_work(run: Run, rot: Rotation | None) -> VerifyReport | None:
    """Refuse, before it starts, a reduction of B (which every method but a certificate
    needs), with the decoding with all n workers that follows it over R/C
    (:func:`checks_work`), above the work budget; the class certificate that
    :func:`certificate` deferred is tried first (:func:`deferred_certificate`), and its
    proof is returned instead.  Admitted, the estimate is spent (:meth:`Run.spend`): the
    exact decisions of the checks (the run's meter) and the stages after them (the class
    patterns, the enumeration) are held to what it leaves, and their refusals name it."""
    early = deferred_certificate(run, rot)
    if early is not None:
        return early
    n, K = run.code.B.shape
    full = " and decoding with all n workers" if run.numeric else ""
    work = checks_work(run)
    run.budget.check_work(f"verify (n={n}, k*m={K}, {run.code.field}): reducing B{full}",
                          work, f"{_untried(run)}verify a smaller code, or raise `max_work`")
    # B and its factors (U, V^T, the null space and W): about five n x K arrays (objects
    # of ~100 bytes per fraction with ``exact``)
    item = 100 if run.exact else np.dtype(run.code.field.dtype).itemsize
    run.budget.check_memory(f"verify (n={n}, k*m={K}, {run.code.field}): reducing B",
                            5 * n * K * item, "verify a smaller code")
    run.spend(work)
    return None


def _untried(run: Run) -> str:
    """What the reduction's refusal says of the structural certificates (:attr:`Run.
    certificates`): none applies or fits only when each was tried or did not fit."""
    if run.certificates == "tried":
        return ("no structural certificate (BCH bound, disjoint row classes) applies or fits "
                "the budget; ")
    if run.method == "exhaustive":
        return "`method`=exhaustive tries no structural certificate (`method`=auto does); "
    if run.sample is not None:
        return "a sample tries no structural certificate; "
    return ""


def checks_work(run: Run) -> float:
    """Estimated work of what every enumeration follows, in ns of one core: the reduction of
    B (:meth:`Run.reduction_work`) and, over R/C, :func:`first_checks`' decoding with all n
    workers (one call of the direct decoder: a thin SVD, a quarter of the reduction's at
    n x K = 2048 x 512, whose U is square)."""
    full = single_call_time(run.code, run.code.n) if run.numeric else 0.0
    return run.reduction_work() + full


def first_checks(run: Run, cheap: bool) -> VerifyReport | None:
    """Column support, all n workers, and s = 0."""
    if cheap:
        f = cert.column_support(run.code, run.s)
        if f is not None and run.fails(f.stragglers):
            return run.finding(f)
    if run.exact or run.finite:
        full = run.reduction().consistent
    else:
        try:
            full = bool(run.decoder.evaluate(np.arange(run.code.n)[None]).ok[0])
        except Undecided as exc:  # a clearly failing s-set is still a finding: look for one
            if run.s == 0:  # (pipeline.settle: nothing else is concluded)
                raise
            run.undecided_full, full = exc, True
    if not full:
        return run.finding(cert.Finding(
            "full-set" if cheap else "exhaustive", list(range(run.s)),
            "even all n workers cannot decode (a target is outside the row space of B), "
            "so every straggler set fails"))
    if run.s == 0:
        run.state.checked = run.state.represented = 1
        return run.report(True, "full-set", "all n workers decode (s = 0)", kernel="direct")
    return None


def rank_bound(run: Run, red: ns.Reduction) -> VerifyReport | None:
    """Rank bound (a counterexample)."""
    f = cert.rank_bound(run.code, run.s, red.rank)
    if f is not None and run.fails(f.stragglers):
        return run.finding(f)
    return None
