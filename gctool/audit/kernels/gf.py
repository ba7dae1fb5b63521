"""Compiled exact elimination over GF(p) and GF(2^m): is ``[N[:, S]^T | W_S]`` consistent?
(:class:`gctool.audit.nullspace.GFNullKernel`'s test, set by set.)

Elimination is fraction free (``x <- p x - f r`` with p the non-zero pivot), so no inverses
are needed: GF(p) multiplies modulo p (p < 2^31: products fit in int64), GF(2^m) through
log/antilog tables and adds with XOR.

Walking a rank range, consecutive sets share their first s - 1 stragglers; those rows are
brought to echelon form once, and each set only reduces its last row against them: the system
is inconsistent exactly when a row with zero coefficients keeps a non-zero right-hand side."""

from __future__ import annotations

from contextlib import nullcontext
from typing import Any

import numpy as np

from gctool.audit.kernels import private
from gctool.audit.kernels.shared import HALT_EVERY, WARM
from gctool.compiled import compile_notice
from gctool.compiled._jit import njit
from gctool.compiled.walk import successor

PRIME, CHAR2 = 0, 1


@njit
def _mul(a: int, b: int, kind: int, p: int, exp: Any, log: Any) -> int:
    if kind == PRIME:
        return (a * b) % p
    if a == 0 or b == 0:
        return 0
    return exp[log[a] + log[b]]


@njit
def _sub(a: int, b: int, kind: int, p: int) -> int:
    if kind == PRIME:
        return (a - b) % p
    return a ^ b


@njit
def _reduce(x: Any, E: Any, piv: Any, rows: int, kind: int, p: int, exp: Any, log: Any) -> None:
    """Reduce the row x against the echelon rows E[:rows] (pivot columns piv, -1: none)."""
    C = x.shape[0]
    for r in range(rows):
        c = piv[r]
        if c < 0 or x[c] == 0:
            continue
        f, pv = x[c], E[r, c]
        for j in range(C):
            x[j] = _sub(_mul(pv, x[j], kind, p, exp, log), _mul(f, E[r, j], kind, p, exp, log),
                        kind, p)


@njit
def _add_row(x: Any, E: Any, piv: Any, rows: int, d: int) -> tuple[int, bool]:
    """Append the reduced row x to the echelon E; returns (rows, consistent so far)."""
    c = -1
    for j in range(d):
        if x[j] != 0:
            c = j
            break
    ok = True
    if c < 0:
        for j in range(d, x.shape[0]):
            if x[j] != 0:
                ok = False
    for j in range(x.shape[0]):
        E[rows, j] = x[j]
    piv[rows] = c
    return rows + 1, ok


@njit
def _echelon(S: Any, upto: int, NT: Any, W: Any, E: Any, piv: Any, x: Any, kind: int, p: int,
             exp: Any, log: Any) -> bool:
    """Echelon form of the rows of S[:upto]; False when they are already inconsistent."""
    d, m = NT.shape[1], W.shape[1]
    rows = 0
    ok = True
    for i in range(upto):
        for j in range(d):
            x[j] = NT[S[i], j]
        for j in range(m):
            x[d + j] = W[S[i], j]
        _reduce(x, E, piv, rows, kind, p, exp, log)
        rows, good = _add_row(x, E, piv, rows, d)
        ok = ok and good
    return ok


@njit
def gf_range(S: Any, n: int, count: int, NT: Any, W: Any, kind: int, p: int, exp: Any,
             log: Any, E: Any, piv: Any, x: Any, halt: Any) -> int:
    """Walk ``count`` sets from S (in place); returns the offset of the first set whose
    system is inconsistent (it fails), or -1.  E (s x (d + m)), piv (s) and x (d + m) are
    scratch.  Ends, its result not to be read, once ``halt[0]`` is set (read at each new
    prefix and every HALT_EVERY sets: :func:`gctool.engine.threads.halt_flag`)."""
    s = S.shape[0]
    d, m = NT.shape[1], W.shape[1]
    fresh = True
    prefix_ok = True
    for done in range(count):
        if (fresh or done % HALT_EVERY == HALT_EVERY - 1) and halt[0] != 0:
            return -1
        if fresh:
            prefix_ok = _echelon(S, s - 1, NT, W, E, piv, x, kind, p, exp, log)
            fresh = False
        if not prefix_ok:
            return done
        last = S[s - 1]
        for j in range(d):
            x[j] = NT[last, j]
        for j in range(m):
            x[d + j] = W[last, j]
        _reduce(x, E, piv, s - 1, kind, p, exp, log)
        _, ok = _add_row(x, E, piv, s - 1, d)
        if not ok:
            return done
        if successor(S, n) < s - 1:
            fresh = True
    return -1


@njit
def gf_sets(Sets: Any, NT: Any, W: Any, kind: int, p: int, exp: Any, log: Any, ok: Any,
            E: Any, piv: Any, x: Any) -> None:
    """Consistency of the system of every row of Sets (E, piv, x: scratch)."""
    s = Sets.shape[1]
    for b in range(Sets.shape[0]):
        ok[b] = _echelon(Sets[b], s, NT, W, E, piv, x, kind, p, exp, log)


#: the time of :func:`gf_range` per straggler set, in ns: a fixed part (the next set, its last
#: row copied and appended) ...
GF_SET_NS = 45
#: ... plus this much per row the new row is reduced against (the set's s - 1 others; a row
#: whose pivot entry of the new row is zero is skipped, so they count with the density of N,
#: the share of its non-zero entries; with s/n of the sets the first s - 1 rows change and
#: are brought to echelon again, (s - 1)(s - 2)/2 such rows), with the table arithmetic of
#: GF(2^m) ...
GF_ROW_NS = 16
#: ... or the modular arithmetic of GF(p) ...
PRIME_ROW_NS = 45
#: ... plus this much per entry of the s x (d + m) system copied when it is brought to echelon
#: again.  Fitted to the CPU time per set of the walk on 85 codes (cyclic-MDS, rs and random
#: dense over GF(2^4)-GF(2^16), GF(43)-GF(2^31 - 1); n = 21-255, s = 3-11, d = 3-50, density
#: 0.03-0.99, one core of the 2-core development machine): measured / estimated 0.84-1.25
#: (cyclic-MDS GF(2^6) n=63 s=6: 127 ns; rs GF(2^7) n=50 s=5, d=27, density 0.11: 104 ns;
#: random dense GF(65521) n=40 s=6 d=7: 313 ns; random dense GF(65521) n=26 s=11 d=12: 1.2 us)
GF_ECHELON_NS = 2.25


def walk_cost(s: int, d: int, m: int, prime: bool = False, n: int | None = None,
              density: float = 1.0) -> float:
    """Estimated time of the compiled test per set of size s among the s-subsets of n workers
    (d = dim null(B), m targets, ``density``: the share of non-zero entries of N; n None:
    a prefix that never changes), in ns."""
    changes = s / n if n else 0.0  # the share of sets whose first s - 1 rows change
    rows = density * ((s - 1) + changes * (s - 1) * (s - 2) / 2)
    return (GF_SET_NS + rows * (PRIME_ROW_NS if prime else GF_ROW_NS)
            + GF_ECHELON_NS * changes * s * (d + m))


#: the compiled test on given sets (:func:`gf_sets`: one set per rotation orbit) brings each
#: set's s rows to echelon whole, as a walk does for a set whose rows all change; it took
#: 1.3-3.3x :func:`walk_cost` of such a set (CPU time per set, best of 3, of 8,192 random sets:
#: cyclic-MDS GF(2^6) n=63 at s = 4, 6 (643, 1,081 ns), rs GF(2^7) n=50 s=5 (485 ns), rs
#: GF(65537) n=48 s=6 (1.5 us), cyclic codes over GF(97) n=48 s=5 and GF(61) n=60 s=6 (0.9-1.4,
#: 2.0 us), where the walk's rate says 84-309 ns), so this many times it
#: (:func:`given_cost`: measured / estimated 0.5-1.3)
GIVEN_FACTOR = 2.5


def given_cost(s: int, d: int, m: int, prime: bool = False, density: float = 1.0) -> float:
    """Estimated time of the compiled test on one given set of size s, in ns
    (:data:`GIVEN_FACTOR`)."""
    return GIVEN_FACTOR * walk_cost(s, d, m, prime, max(1, s), density)


def compiles(fld: Any) -> bool:
    """Has GF(q) compiled arithmetic here (:func:`for_arith` gives a test)?  GF(p), and GF(2^m)
    with exp/log tables (:data:`~gctool.algebra.gf.TABLE_LIMIT`)."""
    from gctool.algebra.gf import TABLE_LIMIT

    return (fld.m == 1 and fld.p < 2**31) or (fld.p == 2 and fld.order <= TABLE_LIMIT)


class GFTest:
    """The compiled consistency test of one reduction over GF(p) or GF(2^m)."""

    def __init__(self, NT: np.ndarray, W: np.ndarray, kind: int, p: int,
                 exp: np.ndarray | None, log: np.ndarray | None) -> None:
        self.NT = np.ascontiguousarray(NT, dtype=np.int64)
        self.W = np.ascontiguousarray(W, dtype=np.int64)
        self.kind, self.p = kind, p
        self.exp = np.ascontiguousarray(exp if exp is not None else np.zeros(1), dtype=np.int64)
        self.log = np.ascontiguousarray(log if log is not None else np.zeros(1), dtype=np.int64)
        self.n = self.NT.shape[0]

    def warm(self, s: int, given: bool = False) -> None:
        """Compile (or load from the cache) the entry point a run calls, before its threads
        need it: the walk of rank ranges (:meth:`walk`) or, ``given``, the test of given sets
        (:meth:`sets`: a run of one set per rotation orbit never walks), as
        :meth:`gctool.audit.kernels.real.RealScreen.warm` does."""
        key = ("gf-given",) if given else ("gf",)
        if key in WARM:
            return
        WARM.add(key)
        with compile_notice("finite-field audit"):
            if given:
                self.sets(np.arange(s, dtype=np.int64)[None])
            else:
                self.walk(np.arange(s, dtype=np.int64), 1)

    def _work(self, s: int) -> tuple[np.ndarray, ...]:
        """Scratch (allocated here: allocations inside a kernel cost compile time; private to
        the walking thread and kept by it, :func:`.private.scratch`)."""
        w = self.NT.shape[1] + self.W.shape[1]
        E, piv, x = private.scratch(((max(s, 1), w), np.int64), (max(s, 1), np.int64),
                                    (w, np.int64))
        piv[:] = -1
        return E, piv, x

    def sets(self, S: np.ndarray) -> np.ndarray:
        ok = np.zeros(S.shape[0], dtype=bool)
        key = ("gf-sets",)
        with compile_notice("finite-field audit") if key not in WARM else nullcontext():
            WARM.add(key)
            gf_sets(np.ascontiguousarray(S, dtype=np.int64), self.NT, self.W, self.kind,
                    self.p, self.exp, self.log, ok, *self._work(S.shape[1]))
        return ok

    def walk(self, S: np.ndarray, count: int) -> int:
        """See :func:`gf_range`.  In a pool thread whose run has stopped it raises
        :class:`~gctool.engine.threads.Cancelled` (:func:`~gctool.engine.threads.halt_flag`)."""
        from gctool.engine.threads import halt_flag, raise_if_halted

        halt = halt_flag()
        fail = int(gf_range(S, self.n, count, self.NT, self.W, self.kind, self.p, self.exp,
                            self.log, *self._work(S.shape[0]), halt))
        raise_if_halted(halt)
        return fail


def for_arith(NT: np.ndarray, W: np.ndarray, arith: Any) -> GFTest | None:
    """The compiled test for the field of ``arith`` (a GFArith), or None when it has no
    compiled arithmetic here (odd-characteristic extension fields, fields above the tables)."""
    fld = arith.fld
    if fld.m == 1 and fld.p < 2**31:
        return GFTest(NT, W, PRIME, fld.p, None, None)
    exp, log = getattr(arith, "_exp", None), getattr(arith, "_log", None)
    if fld.p == 2 and exp is not None and log is not None:
        return GFTest(NT, W, CHAR2, 2, exp, log)
    return None
