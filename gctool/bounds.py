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


def load_bounds(n: int, k: int, s: int, m: int = 1, d: int | None = None) -> list[Bound]:
    """Bounds that depend only on (n, k, s, m), and on a given load d when one is given.

    With m pieces per gradient (communication-efficient codes, messages 1/m as long) every
    partition needs s+m holders, so the load is d >= k(s+m)/n (YA18 for k = n; the same
    counting argument for any k, reference §2.3 / §6.2); for a load d the largest feasible m
    is floor(n d / k) - s.
    """
    _check(n, k, s, m)
    r = s + m
    piece = "" if m == 1 else f" (with m = {m} pieces, s+m replaces s+1)"
    src = "TLDK17 Thm 1" if m == 1 else "YA18 (k = n); [D] for general k"
    items = [
        Bound("replication", r,
              f"every partition must be held by >= s+{m} = {r} workers{piece}",
              "[D] reference §1.3 / §2.3: straggle all holders of a partition"),
        Bound("total_load", k * r, f"nnz(B) >= k(s+{m}) = {k * r}", "[D] sum of column weights"),
        Bound("balanced_load", k * r / n,
              f"with equal row loads, every worker computes d >= k(s+{m})/n = {k * r / n:g} "
              "partitions", src),
        Bound("max_load", ceil(k * r / n),
              f"the largest worker load is >= ceil(k(s+{m})/n) = {ceil(k * r / n)}",
              "[D] pigeonhole on nnz(B)"),
    ]
    return items if d is None else items + _given_load(n, k, s, m, d)


def _given_load(n: int, k: int, s: int, m: int, d: int) -> list[Bound]:
    """What a (maximum) load of d partitions per worker allows."""
    if isinstance(d, bool) or not isinstance(d, int) or not 1 <= d <= k:
        raise InvalidInput(f"the load d must be an integer between 1 and k = {k}, got {d!r}")
    need = k * (s + m) / n
    m_max = max(0, floor(n * d / k) - s)
    src = "[D] reference §2.3 / §6.2 (YA18 for k = n)"
    allows = (f"the largest m is floor(n d / k) - s = {m_max}" if m_max >= 1 else
              f"no m >= 1 works: d = {d} < k(s+1)/n = {k * (s + 1) / n:g} even without "
              "splitting")
    return [
        Bound("given_load", d,
              f"load d = {d} {'meets' if n * d >= k * (s + m) else 'is below'} the bound "
              f"d >= k(s+{m})/n = {need:g} for s = {s}, m = {m}", src, n * d >= k * (s + m)),
        Bound("max_m_for_load", m_max,
              f"with load d = {d} and s = {s} stragglers {allows} (messages 1/m as long)", src,
              m_max >= m),
    ]


def bounds(
    code: GradientCode | None = None,
    *,
    n: int | None = None,
    k: int | None = None,
    s: int | None = None,
    m: int | None = None,
    d: int | None = None,
    epsilon: float | None = None,
) -> BoundReport:
    """Report the load bounds for (n, k, s, m) and, for a code, whether it meets them.

    ``d`` (a load per worker) adds whether it suffices and the largest m it allows; for an
    m-piece code it defaults to the code's largest load.  ``epsilon`` (with a code) is the
    error level ε of the threshold rows T_ε of the approximate-code table (default 1).
    """
    if code is not None:
        n, k = code.n, code.k
        s = code.s if s is None else s
        m = code.m
        if d is None and m > 1:
            d = int(code.loads.max())
    if n is None or k is None or s is None:
        raise InvalidInput("give a code file, or all of -n, -k and -s")
    m = 1 if m is None else m
    items = load_bounds(n, k, s, m, d)
    if code is None:
        return BoundReport(n, k, s, m, items, None, None, [], True)
    return _code_report(code, s, items, epsilon)


def _rank(code: GradientCode) -> int:
    from gctool.algebra.linalg import matrix_rank  # the rank verify and attack use
    from gctool.limits import check_work, solve_cost

    n, K = code.B.shape
    check_work(f"bound (n={n}, k*m={K}, {code.field}): the rank of B",
               solve_cost(n, K, code.field.is_finite),
               f"use the formula bounds without a file (bound -n {n} -k {code.k} -s {code.s}), "
               "or raise --max-work")
    return matrix_rank(code.field, code.B)


def _rank_witness_fails(code: GradientCode, s: int, rank: int) -> bool:
    """Does the rank-bound witness for s stragglers really fail?  Always over GF(q) (exact
    argument); over R/C the argument is exact-arithmetic only, so the witness is decoded under
    the tolerance rule (rows that are only nearly dependent can decode within tol * k), the
    confirmation verify uses too."""
    if code.field.is_finite or not 0 < s < code.n or rank <= code.n - s:
        return True
    import numpy as np

    from gctool.audit.certificates import rank_bound
    from gctool.decode import Decoder

    f = rank_bound(code, s, rank)
    if f is None:
        return False
    F = np.array([[i for i in range(code.n) if i not in set(f.stragglers)]], dtype=np.intp)
    return not bool(Decoder(code).evaluate(F).ok[0])


def _code_report(code: GradientCode, s: int, items: list[Bound],
                 epsilon: float | None = None) -> BoundReport:
    n, k, m = code.n, code.k, code.m
    loads, rep = code.loads, code.replication
    rank = _rank(code)
    # over R/C a numerical rank above n - s only matters when its witness fails to decode
    rank_fails = rank > n - s and _rank_witness_fails(code, s, rank)
    by_rank_holds = _rank_witness_fails(code, n - rank + 1, rank)
    dmax = int(loads.max())
    findings: list[str] = []
    weak = [int(j) for j in (rep <= s).nonzero()[0]]
    if weak:
        findings.append(f"partition(s) {weak[:10]}{'...' if len(weak) > 10 else ''} held by "
                        f"<= s = {s} workers (min replication {int(rep.min())})")
    if rank_fails:
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
              f"rank(B) <= n - s" + ("" if by_rank_holds else
                                     "; not a bound for this code: some rows are only nearly "
                                     "dependent and the rank witness decodes within the "
                                     "tolerance"), "[D] reference §0.3 (Singleton-type)"),
        Bound("max_s_for_load", floor(n * dmax / k) - m,
              f"with max load d = {dmax}, no code tolerates more than floor(n d / k) - {m} = "
              f"{floor(n * dmax / k) - m} stragglers", "[D] reference §1.3 / §6.2"),
    ]
    items[-3].holds = t_col > s
    items[-2].holds = t_rank > s or not rank_fails
    items[-1].holds = items[-1].value >= s  # type: ignore[operator]
    stats = {
        "load_min": int(loads.min()), "load_max": dmax, "load_mean": float(loads.mean()),
        "replication_min": int(rep.min()), "replication_max": int(rep.max()),
        "replication": rep.tolist(), "loads": loads.tolist(), "rank": rank,
        "nnz": int(rep.sum()), "field": str(code.field), "scheme": code.scheme,
    }
    from gctool.codes.closed_forms import scheme_bounds

    items += scheme_bounds(code, s, epsilon=epsilon)
    meets = dmax == items[3].value
    return BoundReport(n, k, s, m, items, stats, meets, findings, not findings)
