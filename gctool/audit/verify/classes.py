"""Row-class reduction for ``verify`` (FRC groups and any other proportional rows).

Whether survivors decode depends only on which classes of proportional rows they miss
entirely (:mod:`gctool.audit.symmetry`).  For each class pattern K (total size <= s) that some
straggler set realises, this module builds one such set S_K (the classes of K plus members of
other classes, never a whole one) and decides it; S_K stands for every s-set whose killed
classes are exactly K.  The sets S_K are real straggler sets, so the diagnostics computed on
them are diagnostics of actual decoding systems (other sets with the same pattern have the
same row space but may differ in cond and ||a||, which the report says).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from gctool.audit.certificates import row_classes_cost
from gctool.audit.chunks import WEAKEST, Accumulator, summarise
from gctool.audit.symmetry import (
    Rotation,
    class_pattern_weight,
    class_patterns,
    count_class_patterns,
    count_orbits,
)
from gctool.audit.verify.enumeration import INSTEAD, enumeration_report
from gctool.budget import NS_PER_S, format_seconds
from gctool.decode.cost import call_time, decode_time
from gctool.limits import MAX_CLASS_PATTERNS

if TYPE_CHECKING:  # pragma: no cover
    from gctool.audit.chunks import Kernel
    from gctool.audit.nullspace import Reduction
    from gctool.audit.verify.run import Run
    from gctool.reports import VerifyReport



def pattern_set(classes: list[list[int]], killed: list[int], s: int) -> list[int] | None:
    """A straggler set of size s whose fully straggled classes are exactly ``killed``."""
    S = [i for c in killed for i in classes[c]]
    dead = set(killed)
    for c, members in enumerate(classes):
        if len(S) >= s:
            break
        if c not in dead:
            S.extend(members[: min(len(members) - 1, s - len(S))])
    return sorted(S) if len(S) == s else None


def patterns_work(run: Run, kernel: Kernel, patterns: int) -> float:
    """Estimated work of verifying through ``patterns`` class patterns once the row classes are
    found (:func:`find_classes`), in ns of one core: one straggler set per pattern decided
    with ``kernel`` (given sets, in one batch) and, over R/C, the report's re-evaluation of
    the weakest of them (up to :data:`gctool.audit.chunks.WEAKEST` and the largest decoder
    norm) by the direct decoder, in one call."""
    s, f = run.s, run.code.n - run.s
    work = patterns * kernel.given_time(s, patterns)
    if run.numeric:
        work += call_time(run.code, f) + min(patterns, WEAKEST + 1) * decode_time(run.code, f)
    return work


def find_classes(run: Run) -> list[list[int]] | None:
    """The code's row classes for the class patterns, their note added to the report's: the
    ones the class certificate found (:meth:`Run.row_classes`, already charged), else found
    when their estimate (:func:`gctool.audit.certificates.row_classes_cost`) fits what the stages
    before left of the budget, and spent (:meth:`Run.spend`); None above it (a note says so:
    the enumeration then decides, on its own estimate)."""
    if run.classes is None:
        work = row_classes_cost(run.code)
        if not run.budget.affords(work):
            run.symmetry_notes.append(
                f"row classes not looked for (estimated {format_seconds(work / NS_PER_S)}, "
                "above the work budget)")
            return None
        run.budget.check_work(f"{run.what}: finding the row classes", work,
                              "raise `max_work`")  # admitted (a shared run is charged)
        run.row_classes()
        run.spend(work)
    assert run.classes is not None
    classes, note = run.classes
    run.symmetry_notes.extend([note] if note else [])
    return classes


def try_classes(run: Run, red: Reduction, rot: Rotation | None) -> VerifyReport | None:
    """Verify through class patterns (of the row classes, :func:`find_classes`) when that is
    the smallest enumeration, else None; above the work budget (:func:`patterns_work`) it is
    refused in one line."""
    code, s = run.code, run.s
    classes = find_classes(run)
    if classes is None or len(classes) == code.n:
        return None
    sizes = [len(c) for c in classes]
    patterns = count_class_patterns(sizes, s)
    other = count_orbits(code.n, s, rot.t) if rot is not None else run.total
    if patterns > min(MAX_CLASS_PATTERNS, run.budget.max_sets or MAX_CLASS_PATTERNS) or \
            patterns >= other:
        return None
    kernel = run.make_kernel(red)
    # the smallest enumeration: above the budget, every other one is too; held to what the
    # checks before it left (frc n=2048 s=7: 3 s of reduction, 2.5 of full set), which
    # :func:`~gctool.audit.verify.shortcuts.check_reduction_work` spent
    work = patterns_work(run, kernel, patterns)
    run.budget.check_work(f"verify (n={code.n}, s={s}) of {patterns:,} straggler sets (one "
                          "per row-class pattern)", work, f"raise `max_work`, {INSTEAD}")
    # its estimate is spent: the exact decisions of its sets get the rest (as an enumeration's)
    run.meter.charge(min(work, run.meter.remaining))
    sets, weights = [], []
    for killed in class_patterns(sizes, s):
        S = pattern_set(classes, killed, s)
        if S is not None:
            sets.append(S)
            weights.append(class_pattern_weight(sizes, killed, s))
    S_arr = np.array(sets, dtype=np.intp).reshape(len(sets), s)
    w = np.array(weights, dtype=object)  # weights can exceed int64 (C(100, 49) ~ 1e29)
    assert int(w.sum()) == run.total
    acc = Accumulator()
    r = kernel.evaluate(S_arr)
    run.fold(acc, summarise(0, S_arr, w, r, run.numeric))
    reduction = {"kind": "row-classes", "classes": len(classes), "class_sizes": sizes,
                 "checked": len(sets), "represents": run.total,
                 "factor": round(run.total / max(1, len(sets)), 2)}
    run.notes.append("row classes: diagnostics are those of one straggler set per pattern")
    return enumeration_report(run, acc, red, None, kernel, None, reduction, "row-classes")
