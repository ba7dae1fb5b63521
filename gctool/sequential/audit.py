"""``verify`` and ``bound`` for code files of the schemes in this package.

``gctool verify`` and ``gctool bound`` hand a file to these functions when its scheme is one of
:data:`VERIFY_SCHEMES` / :data:`BOUND_SCHEMES` (the dispatch is in
:mod:`gctool.cli.sequential_dispatch`); every other file keeps the core behaviour.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from gctool.audit.engine import DEFAULT_MAX_SETS
from gctool.errors import BudgetExceeded, CodeFileError, InvalidInput
from gctool.model import GradientCode
from gctool.reports import Report
from gctool.sequential.reports import LevelCheck, SequentialBoundReport, TreeVerifyReport

SGC_SCHEMES = ("sr-sgc", "m-sgc")
VERIFY_SCHEMES = SGC_SCHEMES + ("coded-reduce",)
BOUND_SCHEMES = SGC_SCHEMES + ("coded-reduce", "bcc")


def _component(code: GradientCode, tol: float, max_sets: int) -> tuple[dict[str, Any] | None, bool]:
    """Exact verify of the per-round GC (None when there is none: M-SGC with λ = n)."""
    from gctool.audit import verify

    if code.scheme == "m-sgc" and code.params.get("lambda") == code.n:
        return None, False
    try:
        rep = verify(code, code.s, tol=tol, max_sets=max_sets)
    except BudgetExceeded as exc:
        return {"ok": True, "exact": False, "s": code.s,
                "reason": f"not checked ({exc}); decodability is computed set by set"}, False
    return rep.to_dict(), bool(rep.ok)


def verify_sequential(code: GradientCode, lam: int | None = None, *, tol: float = 1e-9,
                      max_sets: int = DEFAULT_MAX_SETS, horizon: int | None = None,
                      seed: int = 0, progress: Any = None) -> Report:
    """Verify an SR-SGC/M-SGC schedule (``lam`` checks it against a different λ)."""
    from gctool.sequential.schedule import gc_decodes, scheme_of
    from gctool.sequential.verify import verify_schedule

    component, verified = _component(code, tol, max_sets)
    scheme = scheme_of(code, gc_decodes(code, code.s, verified, tol), lam)
    load = code.params.get("load")
    if not isinstance(load, int | float):
        raise CodeFileError(f"{code.scheme} file: params.load must be a number")
    return verify_schedule(scheme, load=float(load), horizon=horizon, max_sets=max_sets,
                           seed=seed, progress=progress, component=component)


def verify_tree(code: GradientCode, *, tol: float = 1e-9,
                max_sets: int = DEFAULT_MAX_SETS) -> TreeVerifyReport:
    """Check every parent of a CodedReduce tree (all parents of a level share its code)."""
    from gctool.audit import verify
    from gctool.sequential.coded_reduce import kron_levels, levels_of

    start = time.perf_counter()
    levels = levels_of(code)
    fanout, depth = levels[0].n, len(levels)
    checks = []
    for lv, level in enumerate(levels, start=1):
        rep = verify(level, level.s, tol=tol, max_sets=max_sets)
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


def verify_code(code: GradientCode, stragglers: int | None = None, **kwargs: Any
                ) -> Report | None:
    """The multi-round verify of a file, or None when the core verify applies (other schemes,
    and coded-reduce with an explicit -s, which checks the flat leaf code)."""
    if code.scheme in SGC_SCHEMES:
        return verify_sequential(code, stragglers, **kwargs)
    if code.scheme == "coded-reduce" and stragglers is None:
        kwargs.pop("progress", None)
        kwargs.pop("seed", None)
        kwargs.pop("horizon", None)
        return verify_tree(code, **kwargs)
    return None


def bound_code(code: GradientCode) -> SequentialBoundReport | None:
    from gctool.sequential.bounds import bcc_bounds, sgc_code_bounds, tree_bounds

    if code.scheme in SGC_SCHEMES:
        return sgc_code_bounds(code)
    if code.scheme == "coded-reduce":
        p = code.params
        try:
            return tree_bounds(int(p["fanout"]), int(p["depth"]), [int(t) for t in p["tolerance"]])
        except (KeyError, TypeError, ValueError) as exc:
            raise CodeFileError(f"coded-reduce file: bad params ({exc})") from None
    if code.scheme == "bcc":
        return bcc_bounds(code)
    return None


def check_lambda(value: int | None, n: int) -> None:
    if value is not None and not 0 <= value <= n:
        raise InvalidInput(f"-s (lambda for a sequential schedule) must be in 0..n = {n}")
