"""Cyclic-MDS gradient codes (Raviv, Tamo, Tandon, Dimakis 2018; reference §2.1).

Row i of B is the coefficient vector of ``x^i g(x) mod (x^n - 1)``, i.e. ``B[i, j] =
g[(j - i) mod n]``: worker i computes the cyclic window {i, ..., i+s} (load s+1, k = n).  The
generator ``g(x) = prod_{j in J} (x - w^j)`` has its zeros at powers of a primitive n-th root of
unity w with 0 not in J (so 1 lies in the code), |J| = s.

* GF(q): w = alpha, a primitive n-th root of unity (needs n | q - 1), J = {1..s} (an RS code,
  hence MDS).  ``field auto`` picks the smallest field: a prime p with n | p - 1 or GF(2^m).
* complex: w = exp(2 pi i / n), J = {1..s} (BCH bound: MDS; DFT structure, well conditioned).
* real: J must be closed under j -> -j.  When n - s is odd the consecutive symmetric set
  J = {(n-s+1)/2, ..., (n+s-1)/2} works (MDS).  When n - s is even no consecutive symmetric J
  exists; gctool then searches every symmetric J (for n <= MAX_REAL_SEARCH_N) and keeps the
  one that tolerates s stragglers with the smallest worst-case condition number, judged by the
  exhaustive verifier (MDS is sufficient, not necessary: n = 6, s = 2, J = {2, 4} works with
  d(C) = 2).  For odd n with n - s even no symmetric J of odd size s avoids 0, so no real
  cyclic code of this form exists.

Recorded params: ``zeros`` (J), ``root`` (``alpha`` = integer representation of w over GF(q),
or ``"exp(2 pi i/n)"``), and for the real search ``search`` (candidates examined / valid).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from math import comb
from typing import Any

from gctool._lazy import numpy as np
from gctool.algebra.fields import Field
from gctool.budget import Budget
from gctool.errors import DesignError, InvalidInput
from gctool.family import Family
from gctool.params import Int, List, Str
from gctool.registry.info import CONDITION_KEYS, StructuredDecoder

#: largest n for which the real search over symmetric zero sets runs (n - s even)
MAX_REAL_SEARCH_N = 20
ALTERNATIVES = ("use `field`=complex, a finite field (`field`=auto), or the real schemes "
                "'cyclic' (random, any n, s) or 'rs' (Reed-Solomon, any n, k, s)")


def choose_field(n: int | None, s: int | None = None, k: int | None = None,
                 **params: Any) -> Field:
    """``field auto``: the smallest GF(q) with n | q - 1, a prime p or GF(2^m)."""
    from gctool.codes._algebra import root_of_unity_fields

    if n is None:
        raise DesignError("`field`=auto needs -n")
    return root_of_unity_fields(n)[1]


def circulant(g: Any, n: int, zero: Any) -> np.ndarray:
    """B[i, j] = g[(j - i) mod n] (rows = cyclic shifts of the coefficient vector g)."""
    row = np.concatenate([g, np.repeat(zero, n - g.shape[0])])
    twice = np.concatenate([row, row])  # row i is twice[n - i : 2n - i]
    windows = np.lib.stride_tricks.sliding_window_view(twice, n)
    return np.ascontiguousarray(windows[n:0:-1])


def consecutive_real_zeros(n: int, s: int) -> list[int]:
    """J = {(n-s+1)/2, ..., (n+s-1)/2} for n - s odd (symmetric and consecutive)."""
    lo = (n - s + 1) // 2
    return list(range(lo, lo + s))


def real_generator(n: int, zeros: list[int]) -> np.ndarray:
    """g(x) for a symmetric zero set, multiplied out in real quadratic factors."""
    g = np.ones(1)
    for j in zeros:
        if 2 * j == n:
            g = np.convolve(g, [1.0, 1.0])  # (x + 1), coefficients ascending
        elif j < n - j:
            g = np.convolve(g, [1.0, -2.0 * np.cos(2.0 * np.pi * j / n), 1.0])
    return g


def complex_generator(n: int, zeros: list[int]) -> np.ndarray:
    from gctool.codes._algebra import poly_from_roots

    roots = np.exp(2j * np.pi * np.asarray(zeros, dtype=float) / n)
    return poly_from_roots(roots, np.ones(1, dtype=complex))


def _build_gf(n: int, s: int, field: Field) -> tuple[np.ndarray, dict[str, Any]]:
    from gctool.algebra.gf import plain_arith, powers_of
    from gctool.codes._algebra import root_of_unity
    from gctool.codes.vandermonde import poly_from_roots_batch

    ar = plain_arith(field)
    alpha = root_of_unity(n, field)
    roots = powers_of(ar, np.int64(alpha), s + 1, np.int64)[1:]  # alpha^1..alpha^s
    g = poly_from_roots_batch(roots[None, :], ar)[0]
    B = circulant(g, n, np.zeros(1, dtype=np.int64))
    return B, {"zeros": list(range(1, s + 1)), "root": alpha}


def symmetric_zero_sets(n: int, s: int) -> list[list[int]]:
    """Every J in Z_n \\ {0} with |J| = s and J = -J (lexicographic)."""
    pairs = [(j, n - j) for j in range(1, (n + 1) // 2)]
    single = [n // 2] if n % 2 == 0 else []
    out: list[list[int]] = []
    for use_single in ([False, True] if single else [False]):
        rest = s - (1 if use_single else 0)
        if rest < 0 or rest % 2:
            continue
        for chosen in itertools.combinations(pairs, rest // 2):
            J = sorted([x for pair in chosen for x in pair] + (single if use_single else []))
            out.append(J)
    return sorted(out)


def _sets_with_zero(n: int, s: int) -> np.ndarray:
    """Straggler sets containing worker 0, in a fixed pseudo-random order (seed 0).

    B is circulant, so straggling S and S + 1 give the same B_F up to a column shift: these
    sets represent every rotation class.  The shuffled order makes a failing zero set fail
    fast (failing candidates fail on >= 0.4% of the sets for n <= 18); a valid one is still
    checked on every set, so the verdict does not depend on the order.
    """
    S = np.array([(0, *c) for c in itertools.combinations(range(1, n), s - 1)], dtype=np.intp)
    return S[np.random.default_rng(0).permutation(S.shape[0])]


class _ConditionIfDecodes:
    """cond(B_F) of each straggler set whose survivors decode, +inf where they do not (the
    direct decoder of :mod:`gctool.decode`)."""

    def __init__(self, code: Any) -> None:
        from gctool.decode import Decoder

        self.decoder = Decoder(code)
        self.n = code.n

    def errors(self, S: np.ndarray) -> np.ndarray:
        from gctool.engine.enumeration import survivors_of

        r = self.decoder.evaluate(survivors_of(S, self.n))
        return np.where(r.ok, r.cond, np.inf)


def _check_real(n: int, s: int, zeros: list[int], S: np.ndarray
                ) -> tuple[np.ndarray, float | None]:
    """B for J and its worst condition number over the straggler sets S (all sets containing
    worker 0), or None if one fails: the enumeration engine (:mod:`gctool.engine.sweep`), a
    PeakWorker over :class:`_ConditionIfDecodes` stopping at the first failing set; a first
    batch of 128 fails fast."""
    from gctool.engine.sweep import ListSource, PeakWorker, WorstFold, rank_tasks, run_folded
    from gctool.model import GradientCode

    B = circulant(real_generator(n, zeros), n, np.zeros(1))
    kernel = _ConditionIfDecodes(GradientCode(B, Field("real"), s))
    first = min(128, S.shape[0])
    tasks = [(0, 0, first), *rank_tasks(S.shape[0], kernel.decoder.chunk_size(n - s), first, 1)]
    fold = WorstFold(stop_above=float(np.finfo(np.float64).max))
    run_folded(PeakWorker(ListSource(n, S), kernel), tasks, fold)
    if not fold.error < np.inf:
        return B, None
    return B, max(0.0, fold.error)


def _search_real(n: int, s: int) -> tuple[np.ndarray, dict[str, Any]]:
    if n % 2:
        raise DesignError(
            f"no real cyclic-MDS code exists for n = {n}, s = {s}: a real generator needs a zero "
            f"set closed under j -> -j, which for odd n has even size, but s = {s} is odd; "
            + ALTERNATIVES)
    if n > MAX_REAL_SEARCH_N:
        raise DesignError(
            f"real cyclic-MDS with n - s even (n = {n}, s = {s}) needs a search over "
            f"{comb(n // 2 - 1, s // 2):,} symmetric zero sets, done only for n <= "
            f"{MAX_REAL_SEARCH_N}; " + ALTERNATIVES)
    candidates = symmetric_zero_sets(n, s)
    best: tuple[float, list[int], np.ndarray] | None = None
    valid = 0
    S = _sets_with_zero(n, s)
    for J in candidates:
        B, cond = _check_real(n, s, J, S)
        if cond is not None:
            valid += 1
            if best is None or cond < best[0]:
                best = (cond, J, B)
    if best is None:
        raise DesignError(
            f"no real cyclic code exists for n = {n}, s = {s}: none of the {len(candidates)} "
            f"conjugation-closed zero sets tolerates {s} stragglers; " + ALTERNATIVES)
    method = (f"exact: maximum over all {comb(n - 1, s - 1):,} straggler sets containing worker "
              "0 (rotations have equal conditioning), computed by the zero-set search")
    return best[2], {"zeros": best[1], "root": "exp(2 pi i/n)",
                     "search": {"candidates": len(candidates), "valid": valid},
                     "worst_condition": best[0], "worst_condition_method": method,
                     "worst_condition_kind": "exact",
                     "worst_condition_sets": [comb(n, s), comb(n, s)]}


def build(n: int, s: int, k: int | None, field: Field, rng: Any, *, budget: Budget
          ) -> tuple[np.ndarray, dict[str, Any]]:
    from gctool.codes.conditioning import record

    if k is not None and k != n:
        raise DesignError(f"cyclic-mds needs k = n (got k = {k}, n = {n}); use 'rs' for any k")
    if s == 0:  # g = 1: every worker computes its own partition
        B = np.eye(n, dtype=field.dtype)
        return B, {"zeros": [], "root": None, **record(B, field, 0, budget=budget)}
    if field.is_finite:
        return _build_gf(n, s, field)
    if field.kind == "real" and (n - s) % 2 == 0:
        return _search_real(n, s)
    if field.kind == "complex":
        zeros = list(range(1, s + 1))
        B = circulant(complex_generator(n, zeros), n, np.zeros(1, dtype=complex))
    else:
        zeros = consecutive_real_zeros(n, s)
        B = circulant(real_generator(n, zeros), n, np.zeros(1))
    return B, {"zeros": zeros, "root": "exp(2 pi i/n)",
               **record(B, field, s, cyclic=True, budget=budget)}


# -- structured decoding -----------------------------------------------------------------------
def _interval_start(T: list[int], n: int) -> int | None:
    """t0 with T = {t0, t0+1, ...} mod n, or None when T is not a cyclic interval."""
    members = set(T)
    starts = [t for t in T if (t - 1) % n not in members]
    if len(starts) != 1:
        return None
    t0 = starts[0]
    return t0 if all((t0 + u) % n in members for u in range(len(T))) else None


def decode_batch(code: Any, U: np.ndarray) -> np.ndarray:
    """Structured decoding vectors by evaluation at the n-th roots of unity (reference §2.1),
    for survivor sets U of shape (b, L), L = n - s: shape (b, 1, L).

    ``a^T B_F = 1^T`` iff ``a(x) g(x) = 1 + x + ... + x^(n-1) mod (x^n - 1)`` iff ``a(w^t) = 0``
    for t not in J, t != 0, and ``a(1) = n / g(1)``.  When T = Z_n minus J is a cyclic interval
    {t0, ..., t0 + L - 1} (every MDS choice of gctool: J = {1..s}, or the symmetric consecutive
    J over the reals), with x_i = w^i this is a Vandermonde system in ``b_i = a_i x_i^t0``
    whose solution is row u0 = -t0 mod n of the inverse Vandermonde: O(L^2) per set.
    """
    from gctool.algebra.gf import plain_arith, powers_of, prod_last
    from gctool.codes.vandermonde import lagrange_top

    n, s, L = code.n, code.s, code.n - code.s
    if s == 0:
        return np.ones((U.shape[0], 1, L), dtype=code.field.dtype)
    J = [int(j) for j in code.params.get("zeros", [])]
    t0 = _interval_start(sorted(set(range(n)) - set(J)), n)
    if t0 is None or len(J) != s or not all(0 < j < n for j in J):
        raise InvalidInput(f"no structured decoder for the zero set {J}: its complement is not "
                           "a cyclic interval containing 0; use the generic decoder")
    ar = plain_arith(code.field)
    if code.field.is_finite:
        w = _gf_root(code, J, ar)
        pw = powers_of(ar, np.int64(w), n, np.int64)
        x = pw[U]
        scale = ar.mul(np.int64(n % code.field.p), ar.inv(prod_last(ar, ar.sub(1, pw[J]))))
    else:
        x = np.exp(2j * np.pi * U / n)
        scale = n / np.prod(1 - np.exp(2j * np.pi * np.asarray(J, dtype=float) / n))
    u0 = (-t0) % n  # < L, since 0 lies in the interval T
    ell = lagrange_top(x, L - u0, lowest_only=True, ar=ar)[:, 0, :]  # coefficient of x^u0
    a = ar.mul(ar.mul(scale, ell), _power(ar, x, u0))
    if code.field.kind == "real":
        a = a.real
    return np.asarray(a, dtype=code.field.dtype)[:, None, :]


def _gf_root(code: Any, J: list[int], ar: Any) -> int:
    """The recorded w over GF(q), checked to be an element with g(1) != 0."""
    root = code.params.get("root")
    q = code.field.order
    if isinstance(root, bool) or not isinstance(root, int) or not 0 < root < q:
        raise InvalidInput(f"the recorded root {root!r} is not a non-zero element of "
                           f"{code.field}")
    if any(ar.power(root, j) == 1 for j in J):
        raise InvalidInput(f"the recorded root {root} is not a primitive {code.n}-th root of "
                           "unity (g(1) = 0)")
    return root


def _power(ar: Any, x: Any, e: int) -> np.ndarray:
    """Elementwise x^e (square and multiply)."""
    result, base = np.ones_like(x), x
    while e:
        if e & 1:
            result = ar.mul(result, base)
        base = ar.mul(base, base)
        e >>= 1
    return result


def _root(value: Any, where: str, dims: Mapping[str, int]) -> None:
    """params.root: the root of unity, an element of GF(q) (an integer), a label over R/C
    ("exp(2 pi i/n)"), or null (s = 0)."""
    if value is not None and not isinstance(value, str):
        Int(0, 2**31)(value, where, dims)
    elif isinstance(value, str):
        Str()(value, where, dims)


class CyclicMDSFamily(Family):
    name = "cyclic-mds"
    build = staticmethod(build)
    summary = "Cyclic-MDS code: the n cyclic shifts of a generator polynomial (load s+1)."
    description = (
        "Row i is x^i g(x) mod x^n - 1 with g(x) = prod_{j in J} (x - w^j), w a primitive "
        "n-th root of unity, 0 not in J, |J| = s; worker i computes the window {i..i+s}. "
        "GF(q): needs n | q-1, J = {1..s} (Reed-Solomon, MDS); `field`=auto picks the "
        "smallest such field (a prime p = 1 mod n, or GF(2^m)). Complex: J = {1..s} (DFT "
        "zeros, well conditioned). Real: J must be closed under j -> -j; for n-s odd the "
        "consecutive J = {(n-s+1)/2..(n+s-1)/2} is MDS; for n-s even every symmetric J is "
        "searched (n <= 20) and the best-conditioned one that the exhaustive verifier "
        "accepts is kept (MDS is sufficient, not necessary). Needs k = n. Real and complex "
        "designs record the worst-case condition number of the decoding systems."
    )
    reference = "Raviv, Tamo, Tandon, Dimakis, ICML 2018 (RTTD18); reference §2.1"
    fields = (
        "GF(q) with n | q-1 (or `field` auto), complex (any n, s), real (n-s odd; "
        "n-s even by search for n <= 20)"
    )
    report_keys = ("zeros", "root", *CONDITION_KEYS)
    examples = (
        "gctool design cyclic-mds -n 6 -s 2 `field` 'GF(7)'",
        "gctool design cyclic-mds -n 10 -s 3 `field` auto -o mds.json",
        "gctool design cyclic-mds -n 7 -s 2 `field` real",
        "gctool design cyclic-mds -n 8 -s 2 `field` complex",
    )
    choose_field = staticmethod(choose_field)
    records_conditioning = True

    def own_conditioning(self, field: Field | None, n: int | None, s: int | None
                         ) -> str | None:
        if field is not None and field.kind == "real" and n is not None and s and (n - s) % 2 == 0:
            return ("a real cyclic-mds design with n - s even records the conditioning of "
                    "its zero-set search")
        return None
    self_checked = True
    structured_decoder = StructuredDecoder(
          decode_batch, "cyclic-mds: one row of the inverse Vandermonde at the n-th roots of unity")
    file_params = {"zeros": List(Int(0, 2**31), 0, "n"), "root": _root}
