"""Lower bounds and necessary conditions (reference §1.3, §6), each citing its source.

Sources: [TLDK17] Tandon et al., ICML 2017, Theorem 1; [YA18] Ye & Abbe, ICML 2018;
[D] derived in gctool's reference note (shared/reference/gradient-codes.md) and checked there by
brute force; the derivations are repeated in the statements below.
"""

from __future__ import annotations

from math import ceil, floor

from gctool.errors import InvalidInput
from gctool.model import GradientCode
from gctool.reports import Bound, BoundReport


def _check(n: int, k: int, s: int, m: int) -> None:
    from gctool.limits import MAX_FORMULA_VALUE as top  # exact in float64 arithmetic

    for name, value, low in (("n", n, 1), ("k", k, 1), ("s", s, 0), ("m", m, 1)):
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= top:
            raise InvalidInput(f"{name} must be an integer between {low} and {top:.0e}, "
                               f"got {value!r}"[:200])
    if s >= n:
        raise InvalidInput(f"s = {s} must be smaller than n = {n}")


def load_bounds(n: int, k: int, s: int, m: int = 1) -> list[Bound]:
    """Bounds that depend only on (n, k, s, m)."""
    _check(n, k, s, m)
    r = s + m
    piece = "" if m == 1 else f" (with m = {m} pieces, s+m replaces s+1)"
    src = "TLDK17 Thm 1" if m == 1 else "YA18 (k = n); [D] for general k"
    return [
        Bound("replication", r,
              f"every partition must be held by >= s+{m} = {r} workers{piece}",
              "[D] reference §1.3 / §2.3: straggle all holders of a partition"),
        Bound("total_load", k * r, f"nnz(B) >= k(s+{m}) = {k * r}", "[D] sum of column weights"),
        Bound("balanced_load", k * r / n,
              f"with equal row loads, every worker computes >= k(s+{m})/n = {k * r / n:g} "
              "partitions", src),
        Bound("max_load", ceil(k * r / n),
              f"the largest worker load is >= ceil(k(s+{m})/n) = {ceil(k * r / n)}",
              "[D] pigeonhole on nnz(B)"),
    ]


def bounds(
    code: GradientCode | None = None,
    *,
    n: int | None = None,
    k: int | None = None,
    s: int | None = None,
    m: int | None = None,
) -> BoundReport:
    """Report the load bounds for (n, k, s, m) and, for a code, whether it meets them."""
    if code is not None:
        n, k = code.n, code.k
        s = code.s if s is None else s
        m = code.m
    if n is None or k is None or s is None:
        raise InvalidInput("give a code file, or all of -n, -k and -s")
    m = 1 if m is None else m
    items = load_bounds(n, k, s, m)
    if code is None:
        return BoundReport(n, k, s, m, items, None, None, [], True)
    return _code_report(code, s, items)


def _rank(code: GradientCode) -> int:
    import numpy as np

    if code.field.is_finite:
        return int(np.linalg.matrix_rank(code.field.to_galois(np.asarray(code.B))))
    return int(np.linalg.matrix_rank(code.B))


def _code_report(code: GradientCode, s: int, items: list[Bound]) -> BoundReport:
    n, k, m = code.n, code.k, code.m
    loads, rep = code.loads, code.replication
    rank = _rank(code)
    dmax = int(loads.max())
    findings: list[str] = []
    weak = [int(j) for j in (rep <= s).nonzero()[0]]
    if weak:
        findings.append(f"partition(s) {weak[:10]}{'...' if len(weak) > 10 else ''} held by "
                        f"<= s = {s} workers (min replication {int(rep.min())})")
    if rank > n - s:
        findings.append(f"rank(B) = {rank} > n - s = {n - s}: no code of this rank tolerates "
                        f"{s} stragglers")
    items[0].holds = not weak
    items[1].holds = int(rep.sum()) >= items[1].value  # type: ignore[operator]
    items[3].holds = dmax >= items[3].value  # type: ignore[operator]
    t_col, t_rank = int(rep.min()), n - rank + 1
    items += [
        Bound("threshold_by_replication", t_col,
              f"exact threshold T_0 <= min_j c_j = {t_col}: straggling every holder of the least "
              "replicated partition breaks exact recovery", "[D] reference §0.3"),
        Bound("threshold_by_rank", t_rank,
              f"T_0 <= n - rank(B) + 1 = {t_rank} (rank(B) = {rank}); s-robust needs "
              f"rank(B) <= n - s", "[D] reference §0.3 (Singleton-type)"),
        Bound("max_s_for_load", floor(n * dmax / k) - m,
              f"with max load d = {dmax}, no code tolerates more than floor(n d / k) - {m} = "
              f"{floor(n * dmax / k) - m} stragglers", "[D] reference §1.3 / §6.2"),
    ]
    items[-3].holds = t_col > s
    items[-2].holds = t_rank > s
    items[-1].holds = items[-1].value >= s  # type: ignore[operator]
    stats = {
        "load_min": int(loads.min()), "load_max": dmax, "load_mean": float(loads.mean()),
        "replication_min": int(rep.min()), "replication_max": int(rep.max()),
        "replication": rep.tolist(), "loads": loads.tolist(), "rank": rank,
        "nnz": int(rep.sum()), "field": str(code.field), "scheme": code.scheme,
    }
    from gctool.codes.closed_forms import scheme_bounds

    items += scheme_bounds(code, s)
    meets = dmax == items[3].value
    return BoundReport(n, k, s, m, items, stats, meets, findings, not findings)
