"""``bound`` for the multi-round and topology schemes.

* SGC: SR-SGC, M-SGC and plain GC for the same (n, B, W, λ): load, delay and load ratio to plain
  GC (reference §5.2, formulas in :mod:`gctool.sequential.formulas`).
* CodedReduce: communication per node against master–worker GC (same leaves, same tolerance)
  and ring all-reduce, in units of one gradient vector.  gctool's cost model (documented in
  docs/sequential.md): a node receives its incoming vectors one after another over its
  link, levels of the tree run one after another.  Busiest link: CR f vectors per parent, GC n
  into the master, ring all-reduce 2(n-1)/n per node (Patarasuk & Yuan 2009) over 2(n-1) steps.
* BCC: expected number of workers to wait for, ``b·H_b`` (reference §6.5), next to FRC with the
  same number of groups and, exactly, the realised assignment under a random completion order.
"""

from __future__ import annotations

from fractions import Fraction
from math import prod
from typing import Any

from gctool.model import GradientCode
from gctool.sequential import formulas
from gctool.sequential.reports import ComparisonRow, SequentialBoundReport


def _row(fig: formulas.SchemeFigures, base: Fraction | None) -> ComparisonRow:
    ratio = None if fig.load is None or base is None else float(fig.load / base)
    return ComparisonRow(fig.scheme, None if fig.load is None else float(fig.load), fig.delay,
                         ratio, fig.s, None if fig.load is None else str(fig.load), fig.note)


def sgc_bounds(n: int, burst: int, window: int, lam: int) -> SequentialBoundReport:
    """SR-SGC vs M-SGC vs plain GC for (B, W, λ)-bursty stragglers among n workers."""
    gc, sr, m = (formulas.plain_gc(n, lam), formulas.srsgc(n, burst, window, lam),
                 formulas.msgc(n, burst, window, lam))
    rows = [_row(f, gc.load).to_dict() for f in (gc, sr, m)]
    statements = [
        "plain GC: every round may have lambda stragglers, so an (n, lambda)-GC: load "
        "(lambda+1)/n, delay 0",
        "SR-SGC: s = ceil(B lambda / (W-1+B)), load (s+1)/n, delay B (needs B | W-1) [KEK23]",
        "M-SGC: load (lambda+1)(W-1+B) / (n (B + (W-1)(lambda+1))) (lambda < n), "
        "(W-1+B)/(n(W-1)) (lambda = n), delay W-2+B [KEK23; re-derived in reference §5.2]",
    ]
    return SequentialBoundReport("sgc", n, {"burst": burst, "window": window, "lambda": lam},
                                 rows, "gc", [], statements, True)


def sgc_code_bounds(code: GradientCode) -> SequentialBoundReport:
    """:func:`sgc_bounds` for a sequential code file, plus checks of its recorded figures."""
    from gctool.sequential.schedule import model_of

    model = model_of(code)
    report = sgc_bounds(code.n, model.burst, model.window, model.lam)
    row = next(r for r in report.rows if r["scheme"] == code.scheme)
    for key, want in (("load", row["load"]), ("delay", row["delay"])):
        got = code.params.get(key)
        if want is not None and (not isinstance(got, int | float) or abs(got - want) > 1e-12):
            report.findings.append(f"params.{key} = {got!r} but the formula gives {want}")
    if row["s"] is not None and code.s < row["s"]:
        report.findings.append(f"the per-round code has s = {code.s} < {row['s']} required")
    report.ok = not report.findings
    return report


def tree_bounds(fanout: int, depth: int, tolerance: list[int]) -> SequentialBoundReport:
    """Communication of CodedReduce vs master–worker GC and ring all-reduce (the time per
    round with compute and stragglers: :func:`gctool.sim.comm.add_time_per_round`).

    ``critical_path_vectors`` counts the vectors a receiver takes before it may decode under the
    simulator's rule (stop at the earliest decodable arrival): a CodedReduce parent at level l-1
    by its (f - s_l)-th child (any f - s_l decode), levels one after another, so
    sum_l (f - s_l); the GC master by its (n - s)-th arrival; ring all-reduce 2(n-1)/n.  With
    zero compute time and stragglers that never send, the time per round of ``gctool simulate``
    ``link`` is at most ``latency_terms`` x latency + path / bandwidth for every straggler
    pattern the scheme survives, with equality in the worst arrival order."""
    n = fanout**depth
    s = prod(t + 1 for t in tolerance) - 1
    load = Fraction(s + 1, n)
    rar = Fraction(2 * (n - 1), n)
    cr_path, gc_path = sum(fanout - t for t in tolerance), n - s
    rows: list[dict[str, Any]] = [
        {"scheme": "coded-reduce", "compute_nodes": n, "load": float(load), "tolerates": s,
         "busiest_link_vectors": fanout, "sent_per_node": 1, "sequential_steps": depth,
         "critical_path_vectors": cr_path,
         "total_messages": sum(fanout**lv for lv in range(1, depth + 1)),
         "note": f"any {s} leaf stragglers; each parent decodes by its (f - s_l)-th child"},
        {"scheme": "gc", "compute_nodes": n, "load": float(load), "tolerates": s,
         "busiest_link_vectors": n, "sent_per_node": 1, "sequential_steps": 1,
         "critical_path_vectors": gc_path, "total_messages": n,
         "note": "master-worker GC with the same leaves and leaf code; the master decodes by its "
                 "(n - s)-th arrival"},
        {"scheme": "ring-all-reduce", "compute_nodes": n, "load": float(Fraction(1, n)),
         "tolerates": 0, "busiest_link_vectors": float(rar), "sent_per_node": float(rar),
         "sequential_steps": 2 * (n - 1), "critical_path_vectors": float(rar),
         "total_messages": 2 * n * (n - 1), "note": "no straggler tolerance: waits for all"},
    ]
    for row, lat in zip(rows, (depth, 1, 2 * (n - 1)), strict=True):
        row["latency_terms"] = lat
        row["speedup_vs_gc"] = gc_path / row["critical_path_vectors"]
    ring_path = float(rar)
    cross = (cr_path - ring_path) / (2 * (n - 1) - depth) if 2 * (n - 1) > depth else None
    ring_vs_cr = ("" if cross is None else
                  "; ring all-reduce is never faster than coded-reduce" if cross < 0 else
                  f"; ring all-reduce is slower than coded-reduce once a/t > {cross:.3g}")
    statements = [
        "units: one gradient vector; a node receives its incoming vectors one after another, "
        "tree levels run one after another (gctool's cost model)",
        f"coded-reduce: busiest link f = {fanout} vectors per level, {depth} levels; path "
        f"sum_l (f - s_l) = " + " + ".join(str(fanout - t) for t in tolerance)
        + f" = {cr_path} vectors (a parent may decode from any f - s_l children)",
        f"master-worker GC: the master's link carries up to n = {n} vectors; path n - s = "
        f"{gc_path} (it may decode from any n - s)",
        f"ring all-reduce: 2(n-1)/n = {float(rar):.4g} vectors per node in 2(n-1) = "
        f"{2 * (n - 1)} steps (reduce-scatter + all-gather)",
        "with latency a per message and t per vector on a link: critical path = latency_terms "
        "x a + path x t; 'vs gc' counts transfers only (a = 0)" + ring_vs_cr,
        "path assumes stragglers never send and compute takes no time: every receiver decodes "
        "by the arrival above (sooner when its first arrivals already decode, e.g. one per FRC "
        "group), so the time is at most the critical path, equal in the worst arrival order; "
        f"waiting for all children instead: f x L = {fanout * depth} (coded-reduce) and n = "
        f"{n} (gc) vectors",
    ]
    params: dict[str, Any] = {"fanout": fanout, "depth": depth, "tolerance": tolerance}
    return SequentialBoundReport("tree", n, params, rows, "gc", [], statements, True)
