"""CodedReduce trees as code files: the per-level codes a file records, the leaf code they
make, and the tree's own verify (every parent decodes) and communication bounds.  The scheme
itself (its ``build`` and family) is :mod:`gctool.sequential.coded_reduce`."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from gctool._lazy import numpy as np
from gctool.algebra.fields import Field
from gctool.errors import CodeFileError
from gctool.sequential.reports import LevelCheck, SequentialBoundReport, TreeVerifyReport

if TYPE_CHECKING:
    from gctool.model import GradientCode
    from gctool.request import VerifyRequest


def kron_levels(levels: list[np.ndarray], field: Field) -> np.ndarray:
    out = levels[0]
    for B in levels[1:]:
        if field.is_finite:
            out = np.asarray(np.kron(field.to_galois(out), field.to_galois(B)).view(np.ndarray))
        else:
            out = np.kron(out, B)
    return np.asarray(out).astype(field.dtype)


def levels_of(code: GradientCode) -> list[GradientCode]:
    """The per-level codes recorded in a coded-reduce file."""
    from gctool.io import decode_matrix
    from gctool.model import GradientCode

    p = code.params
    try:
        fanout, depth, tol = int(p["fanout"]), int(p["depth"]), list(p["tolerance"])
        mats = [decode_matrix(rows, code.field, f"params.levels[{i}]")
                for i, rows in enumerate(p["levels"])]
    except (KeyError, TypeError, ValueError) as exc:
        raise CodeFileError(f"coded-reduce file: params need fanout, depth, tolerance and "
                            f"levels ({exc})") from None
    if len(mats) != depth or len(tol) != depth or any(M.shape != (fanout, fanout) for M in mats):
        raise CodeFileError(f"coded-reduce file: expected {depth} level matrices of shape "
                            f"{fanout}x{fanout}")
    return [GradientCode(M, code.field, int(s_l), "coded-reduce-level")
            for M, s_l in zip(mats, tol, strict=True)]


def verify_tree(code: GradientCode, request: VerifyRequest | None = None) -> TreeVerifyReport:
    """Check every parent of a CodedReduce tree (all parents of a level share its code, so
    each level's code is verified once, at its tolerance, with the request's tolerance, budget
    and executor: ``jobs`` local processes or ``runner``)."""
    from gctool.sequential.verify import _request, level_verify

    r = _request(request)
    start = time.perf_counter()
    levels = levels_of(code)
    fanout, depth = levels[0].n, len(levels)
    checks = []
    for lv, level in enumerate(levels, start=1):
        rep = level_verify(level, r)
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


def tree_report(code: GradientCode) -> SequentialBoundReport:
    """Communication of a coded-reduce file against master-worker GC and ring all-reduce."""
    from gctool.sequential.bounds import tree_bounds

    p = code.params
    try:
        fanout, depth = int(p["fanout"]), int(p["depth"])
        tolerance = [int(t) for t in p["tolerance"]]
    except (KeyError, TypeError, ValueError) as exc:
        raise CodeFileError(f"coded-reduce file: bad params ({exc})") from None
    return tree_bounds(fanout, depth, tolerance)
