"""Closed-form parameters of the sequential schemes (reference §5.2, [KEK23]).

Everything here is exact rational arithmetic (:class:`fractions.Fraction`), converted to float
only for display.

* SR-SGC: per-round (n, s)-GC with ``s = ceil(B λ / (W - 1 + B))``; delay ``T = B``; load
  ``(s + 1) / n``.  The authors' simulator requires ``B | (W - 1)``; gctool does too.
* M-SGC: delay ``T = W - 2 + B``; load ``(λ+1)(W-1+B) / (n (B + (W-1)(λ+1)))`` for λ < n and
  ``(W-1+B) / (n (W-1))`` for λ = n.  D1 fraction ``α = (λ+1)(W-1) / (B + (λ+1)(W-1))`` (equal
  mini-task sizes; the reference re-derives it).  M-SGC needs W >= 2 (it has W - 1 D1 slots).
* Plain GC for the same model: every round may have λ stragglers, so it needs an (n, λ)-GC:
  load ``(λ + 1) / n``, delay 0; impossible when λ = n.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from math import ceil

from gctool.errors import DesignError


@dataclass(frozen=True)
class SchemeFigures:
    scheme: str
    load: Fraction | None  # None: infeasible
    delay: int | None
    s: int | None  # per-round GC tolerance (SR-SGC: s; M-SGC: λ on D2; GC: λ)
    note: str = ""


def check_params(n: int, burst: int, window: int, lam: int) -> None:
    for name, value, low in (("n", n, 2), ("`burst`", burst, 1), ("`window`", window, 2),
                             ("`lam`", lam, 1)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise DesignError(f"{name} must be an integer >= {low}, got {value!r}")
    if burst >= window:
        raise DesignError(f"the burst B = {burst} must be smaller than the window W = {window} "
                          f"(use `window` {burst + 1} or more)")
    if lam > n:
        raise DesignError(f"`lam` = {lam} cannot exceed n = {n}")


def srsgc_s(burst: int, window: int, lam: int) -> int:
    return ceil(Fraction(burst * lam, window - 1 + burst))


def srsgc(n: int, burst: int, window: int, lam: int) -> SchemeFigures:
    check_params(n, burst, window, lam)
    if (window - 1) % burst:
        return SchemeFigures("sr-sgc", None, None, None,
                             f"SR-SGC needs B | W-1 (B = {burst}, W - 1 = {window - 1})")
    s = srsgc_s(burst, window, lam)
    if s >= n:
        return SchemeFigures("sr-sgc", None, None, None, f"needs s = {s} < n = {n}")
    return SchemeFigures("sr-sgc", Fraction(s + 1, n), burst, s)


def msgc_alpha(n: int, burst: int, window: int, lam: int) -> Fraction:
    """Fraction of each job's data in the uncoded part D1."""
    if lam == n:
        return Fraction(1)
    return Fraction((lam + 1) * (window - 1), burst + (lam + 1) * (window - 1))


def msgc(n: int, burst: int, window: int, lam: int) -> SchemeFigures:
    check_params(n, burst, window, lam)
    if lam == n:
        load = Fraction(window - 1 + burst, n * (window - 1))
    else:
        load = Fraction((lam + 1) * (window - 1 + burst), n * (burst + (window - 1) * (lam + 1)))
    return SchemeFigures("m-sgc", load, window - 2 + burst, lam if lam < n else None)


def plain_gc(n: int, lam: int) -> SchemeFigures:
    if lam >= n:
        return SchemeFigures("gc", None, 0, None, f"no gradient code tolerates lambda = {lam} = n "
                             "stragglers in one round")
    return SchemeFigures("gc", Fraction(lam + 1, n), 0, lam)


def minitask_size(n: int, burst: int, window: int, lam: int) -> Fraction:
    """Size of one M-SGC mini-task, as a fraction of one job's data."""
    return msgc_alpha(n, burst, window, lam) / (n * (window - 1))
