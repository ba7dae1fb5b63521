"""The capability hooks of the schemes in this package: ``verify`` and ``bound`` of their files.

``verify_srsgc``, ``verify_msgc`` and ``verify_tree_code`` are the ``verifier`` hooks of
``sr-sgc``, ``m-sgc`` and ``coded-reduce``; ``bound_schedule`` and ``bound_bcc`` the ``bounder``
hooks of ``sr-sgc``/``m-sgc`` and ``bcc`` (``coded-reduce``'s bounder,
:func:`gctool.sim.comm.bound_tree`, starts from :func:`bound_tree`).  They are declared in the
schemes' SchemeInfo; :mod:`gctool.api` calls them for files of those schemes."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import numpy as np

from gctool.errors import BudgetExceeded, CodeFileError, InvalidInput
from gctool.limits import DEFAULT_SCHEDULE_TRANSITIONS
from gctool.model import GradientCode
from gctool.reports import Report
from gctool.sequential.reports import LevelCheck, SequentialBoundReport, TreeVerifyReport

if TYPE_CHECKING:
    from gctool.api import BoundRequest, VerifyRequest


def _request(request: VerifyRequest | None) -> VerifyRequest:
    from gctool.api import VerifyRequest

    return VerifyRequest() if request is None else request


def _budget(request: VerifyRequest) -> int:
    """The transition budget of a schedule or tree audit (None: its own default)."""
    return request.max_sets or DEFAULT_SCHEDULE_TRANSITIONS


def _level_verify(code: GradientCode, request: VerifyRequest) -> Any:
    """The matrix verify of a code the schedule or tree is built from, at its own s, with the
    request's tolerance, budget and executor (``jobs`` local processes or ``runner``)."""
    from gctool.audit.verify import verify

    return verify(code, code.s, tol=request.tol, max_sets=_budget(request), jobs=request.jobs,
                  runner=request.runner)


def _component(code: GradientCode, request: VerifyRequest, per_round: bool
               ) -> tuple[dict[str, Any] | None, bool]:
    """Exact verify of the per-round GC (None when there is none: ``per_round`` False)."""
    if not per_round:
        return None, False
    try:
        rep = _level_verify(code, request)
    except BudgetExceeded as exc:
        return {"ok": True, "exact": False, "s": code.s,
                "reason": f"not checked ({exc}); decodability is computed set by set"}, False
    return rep.to_dict(), bool(rep.ok)


def verify_sequential(code: GradientCode, request: VerifyRequest | None = None, *,
                      horizon: int | None = None, per_round: bool = True) -> Report:
    """Verify an SR-SGC/M-SGC schedule: ``request.s`` (None: the file's λ) checks it against
    another λ; ``request.tol``, ``max_sets`` (the transition budget), ``seed`` (of the heuristic
    adversary) and ``progress`` as for ``gctool.verify``.  ``per_round=False``: the schedule
    has no per-round GC to verify (M-SGC with λ = n).

    ``jobs`` and ``runner`` run the per-round GC's verify, the one straggler-set enumeration
    here.  The schedule search itself (:func:`gctool.sequential.verify.verify_schedule`) runs
    in this process: it is a breadth-first search whose next frontier depends on every state
    seen so far (states are merged as they are found, and the BFS order makes a counterexample
    a shortest one), not a sweep of independent ranges that a runner could fold in order.
    """
    from gctool.sequential.schedule import gc_decodes, scheme_of
    from gctool.sequential.verify import verify_schedule

    r = _request(request)
    check_lambda(r.s, code.n)
    component, verified = _component(code, r, per_round)
    scheme = scheme_of(code, gc_decodes(code, code.s, verified, r.tol), r.s)
    load = code.params.get("load")
    if not isinstance(load, int | float):
        raise CodeFileError(f"{code.scheme} file: params.load must be a number")
    return verify_schedule(scheme, load=float(load), horizon=horizon, max_sets=_budget(r),
                           seed=r.seed or 0, progress=r.progress, component=component)


def verify_tree(code: GradientCode, request: VerifyRequest | None = None) -> TreeVerifyReport:
    """Check every parent of a CodedReduce tree (all parents of a level share its code, so
    each level's code is verified once, at its tolerance, with the request's tolerance, budget
    and executor: ``jobs`` local processes or ``runner``)."""
    from gctool.sequential.coded_reduce import kron_levels, levels_of

    r = _request(request)
    start = time.perf_counter()
    levels = levels_of(code)
    fanout, depth = levels[0].n, len(levels)
    checks = []
    for lv, level in enumerate(levels, start=1):
        rep = _level_verify(level, r)
        checks.append(LevelCheck(lv, fanout ** (lv - 1), fanout, level.s, bool(rep.ok),
                                 rep.exact, rep.counterexample, rep.checked, rep.total))
    leaf = kron_levels([np.asarray(c.B) for c in levels], code.field)
    same = leaf.shape == code.B.shape and (
        bool(np.array_equal(leaf, code.B)) if code.field.is_finite
        else bool(np.allclose(leaf, code.B, rtol=0, atol=1e-12)))
    ok = all(c.ok for c in checks) and same
    bad = [c for c in checks if not c.ok]
    reason = (f"every one of the {sum(c.parents for c in checks)} parents recovers its subtree "
              "from any children within its tolerance" if ok else
              f"level {bad[0].level}: children {bad[0].counterexample} straggling leave the "
              "parent unable to decode" if bad else
              "B is not the Kronecker product of the recorded level codes")
    tol_list = [c.s for c in checks]
    leaf_tol = int(np.prod([t + 1 for t in tol_list])) - 1
    return TreeVerifyReport(ok, code.scheme, fanout, depth, tol_list,
                            sum(c.parents for c in checks), checks, same, leaf_tol,
                            all(c.exact for c in checks), reason,
                            time.perf_counter() - start)


def verify_srsgc(code: GradientCode, request: VerifyRequest) -> Report:
    """``verifier`` hook of sr-sgc: the schedule against the (B, W, λ) model."""
    return verify_sequential(code, request)


def verify_msgc(code: GradientCode, request: VerifyRequest) -> Report:
    """``verifier`` hook of m-sgc (with λ = n the D2 code is the identity: no per-round GC)."""
    return verify_sequential(code, request, per_round=code.params.get("lambda") != code.n)


def verify_tree_code(code: GradientCode, request: VerifyRequest) -> Report:
    """``verifier`` hook of coded-reduce: every parent of the tree; with an explicit ``s``
    the flat leaf code (the matrix verify)."""
    if request.s is not None:
        from gctool.api import matrix_verify

        return matrix_verify(code, request)
    return verify_tree(code, request)


def bound_schedule(code: GradientCode, request: BoundRequest) -> SequentialBoundReport:
    """``bounder`` hook of sr-sgc and m-sgc: the schedule against M-SGC and plain GC."""
    from gctool.sequential.bounds import sgc_code_bounds

    return sgc_code_bounds(code)


def bound_tree(code: GradientCode, request: BoundRequest) -> SequentialBoundReport:
    """Communication of a coded-reduce file against master-worker GC and ring all-reduce (the
    ``bounder`` hook, :func:`gctool.sim.comm.bound_tree`, adds the time per round)."""
    from gctool.sequential.bounds import tree_bounds

    p = code.params
    try:
        fanout, depth = int(p["fanout"]), int(p["depth"])
        tolerance = [int(t) for t in p["tolerance"]]
    except (KeyError, TypeError, ValueError) as exc:
        raise CodeFileError(f"coded-reduce file: bad params ({exc})") from None
    return tree_bounds(fanout, depth, tolerance)


def bound_bcc(code: GradientCode, request: BoundRequest) -> SequentialBoundReport:
    """``bounder`` hook of bcc: the coupon-collector wait."""
    from gctool.sequential.bounds import bcc_bounds

    return bcc_bounds(code)


def check_lambda(value: int | None, n: int) -> None:
    if value is not None and not 0 <= value <= n:
        raise InvalidInput(f"-s (lambda for a sequential schedule) must be in 0..n = {n}")
