"""Load bounds that depend only on (n, k, s, m), and on a given load d (reference §1.3, §2.3,
§6.2).

Sources: [TLDK17] Tandon et al., ICML 2017, Theorem 1; [YA18] Ye & Abbe, ICML 2018;
[D] derived in gctool's reference note (shared/reference/gradient-codes.md) and checked there by
brute force; the derivations are repeated in the statements below.
"""

from __future__ import annotations

from math import ceil, floor

from gctool.errors import InvalidInput
from gctool.reports import Bound


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
    is floor(n d / k) - s.  The rows are named ``replication``, ``total_load``,
    ``balanced_load``, ``max_load`` (and ``given_load``, ``max_m_for_load`` with d).
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
