"""Cheap checks and structural certificates for ``verify``.

Cheap checks find a counterexample without enumerating (each one is then confirmed by the
direct decoder, so it is a finding under the same tolerance policy as everything else):

* **column support** - a partition held by at most s workers is lost when they all straggle
  (reference §1.3).  For m-piece codes the master needs m independent pieces of every
  partition, so at most s + m - 1 holders already fail (straggle s of them).
* **rank bound** - rank(B) > n - s fails (reference §0.3); the witness is
  :func:`gctool.bounds.rank.witness`.

Structural certificate (a proof for every straggler set without enumerating them):

* **BCH bound** (GF(q), cyclic codes).  If B is cyclic up to row scaling (rows are the scaled
  shifts of g(x), after relabelling columns by a unit c), its row space is the cyclic code
  C = <gcd(g, x^n - 1)> of length n.  If g(1) != 0 then 1 lies in C, and if g vanishes on
  ``alpha^(b + i c')`` for i = 0..s-1 (alpha a primitive n-th root of unity, gcd(c', n) = 1),
  the BCH bound gives d(C) >= s + 1.  By the witness lemma (§0.3) a failing straggler set S
  carries a non-zero codeword ``y = Bx`` with ``supp(y) in S``, so |S| >= d(C) > s: every set
  of s stragglers decodes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from math import gcd
from typing import TYPE_CHECKING, Any

import numpy as np

from gctool.audit.symmetry import Rotation
from gctool.model import GradientCode
from gctool.wording import counted

if TYPE_CHECKING:  # pragma: no cover
    from gctool.algebra.gf import GFArith

MAX_EXTENSION_ORDER = 2**48  # largest splitting field GF(q^e) built for the BCH check
#: largest GF(p^m), m > 1, whose copy inside a splitting field is searched for a root of its
#: polynomial (q - 1 evaluations) to embed it there; above it no BCH certificate is tried
MAX_SUBFIELD_SEARCH = 2**16


@dataclass(frozen=True)
class Finding:
    """A counterexample found by a cheap check, with the reason it fails."""

    method: str
    stragglers: list[int]
    reason: str


def column_support(code: GradientCode, s: int) -> Finding | None:
    """A partition with too few holders (<= s, or <= s + m - 1 for m-piece codes)."""
    rep = code.replication
    limit = s + code.m - 1
    j = int(np.argmin(rep))
    if rep[j] > limit:
        return None
    holders = np.flatnonzero(code.support[:, j]).tolist()
    S = holders[:s]
    if len(holders) <= s:
        why = f"partition {j} is held by only {counted(len(holders), 'worker')} <= s = {s}; " \
              "straggling them loses it"
    else:
        why = (f"partition {j} is held by only {counted(len(holders), 'worker')} < s + m = "
               f"{s + code.m}; "
               f"straggling {S} leaves fewer than m = {code.m} of its pieces")
    from gctool.engine.enumeration import pad_to

    return Finding("column-support", pad_to(S, s, code.n), why)


def rank_bound(code: GradientCode, s: int, rank: int) -> Finding | None:
    """Witness that rank(B) > n - s breaks decoding (None when the rank is small enough):
    the rank bound's witness (:func:`gctool.bounds.rank.witness`) as a finding."""
    from gctool.bounds.rank import witness

    found = witness(code, s, rank)
    return None if found is None else Finding("rank-bound", *found)


# -- BCH certificate -------------------------------------------------------------------------


def _mult_order(q: int, n: int) -> int:
    e, x = 1, q % n
    while x != 1 % n:
        x = (x * q) % n
        e += 1
        if e > n:
            return 0
    return e


def _longest_progression(zero: np.ndarray) -> tuple[int, int, int]:
    """Longest cyclic run of zeros along steps c coprime to n: (length, start, step)."""
    n = zero.size
    best = (0, 0, 1)
    for c in range(1, n // 2 + 1 if n > 2 else 2):
        if gcd(c, n) != 1:
            continue
        seq = zero[(np.arange(n) * c) % n]
        if seq.all():
            return n, 0, c
        pos = np.flatnonzero(~seq)
        starts = np.roll(pos, 1)  # previous non-zero position, cyclically
        gaps = (pos - starts - 1) % n
        if pos.size == 1:
            gaps = np.array([n - 1])
        i = int(np.argmax(gaps))
        if gaps[i] > best[0]:
            best = (int(gaps[i]), int(((starts[i] + 1) * c) % n), c)
    return best


def _embedding(code: GradientCode, e: int) -> tuple[Any, Any] | None:
    """The splitting field GF(q^e) and a map from GF(q) elements into it (None when galois
    knows no polynomial for GF(q^e): its Conway table stops at some degrees of large p)."""
    import galois

    p, m = code.field.p, code.field.m
    if e == 1:
        big = code.field.galois()
        return big, lambda v: big(np.asarray(v, dtype=np.int64))
    try:
        big = galois.GF(p, m * e)
    except LookupError:
        return None
    if m == 1:
        return big, lambda v: big(np.asarray(v, dtype=np.int64))
    small = code.field.galois()
    f = galois.Poly(small.irreducible_poly.coeffs.view(np.ndarray), field=big)
    # f's roots lie in the copy of GF(q) in GF(q^e), the powers of delta below: q - 1
    # candidates (Poly.roots would try all q^e elements, hours for GF(2^17) in GF(2^34))
    q = code.field.order
    delta = big.primitive_element ** ((q**e - 1) // (q - 1))
    subfield = delta ** np.arange(q - 1)
    beta = subfield[np.asarray(f(subfield).view(np.ndarray)) == 0][0]
    powers = beta ** np.arange(m)  # image of x^i

    def embed(v: Any) -> np.ndarray:
        v = np.asarray(v, dtype=np.int64)
        digits = (v[..., None] // (p ** np.arange(m))) % p
        return np.sum(big(digits) * powers, axis=-1)

    return big, embed


def _zeros_in_field(code: GradientCode, g: np.ndarray) -> np.ndarray:
    """``g(alpha^j) == 0`` for j = 0..n-1 when n | q - 1 (arithmetic of GF(q) itself)."""
    from gctool.algebra.gf import GFArith

    arith, n = GFArith(code.field), g.size
    alpha = arith.power(arith.primitive(), (code.field.order - 1) // n)
    points = np.ones(n, dtype=np.int64)  # alpha^j by doubling: log2(n) vector products
    filled = 1
    while filled < n:
        k = min(filled, n - filled)
        points[filled:filled + k] = arith.mul(points[:k], np.int64(arith.power(alpha, filled)))
        filled += k
    nonzero = np.flatnonzero(g)
    value = np.zeros(n, dtype=np.int64)
    for lam in range(int(nonzero[-1]) if nonzero.size else -1, -1, -1):  # Horner at every
        value = arith.add(arith.mul(value, points), np.int64(g[lam]))  # n-th root at once
    return value == 0


def _zeros_in_extension(code: GradientCode, g: np.ndarray, e: int) -> np.ndarray | None:
    """Same in the splitting field GF(q^e) (galois; None: no such field here)."""
    found = _embedding(code, e)
    if found is None:
        return None
    big, embed = found
    n = g.size
    alpha = big.primitive_element ** ((code.field.order**e - 1) // n)
    points = alpha ** np.arange(n)
    coeffs = embed(g)
    value = big.Zeros(n)
    for lam in range(n - 1, -1, -1):
        value = value * points + coeffs[lam]
    return np.asarray(value.view(np.ndarray)) == 0


def _splitting_degree(code: GradientCode, s: int, rot: Rotation | None) -> int:
    """The degree e of the splitting field GF(q^e) in which the BCH certificate looks for the
    zeros of ``code``'s generator (1: GF(q) itself), 0 when the certificate does not apply."""
    n = code.n
    if not code.field.is_finite or rot is None or rot.t != 1 or code.m != 1 or code.k != n:
        return 0
    if gcd(rot.c, n) != 1 or gcd(n, code.field.p) != 1 or s == 0:
        return 0
    q = code.field.order
    e = _mult_order(q, n)
    if e == 0 or q**e > MAX_EXTENSION_ORDER or (e > 1 and code.field.m > 1
                                                  and q > MAX_SUBFIELD_SEARCH):
        return 0
    return e


#: what a splitting field GF(q^e), e > 1, costs the BCH certificate, in ns of one core: galois
#: builds its class (EXTENSION_CLASS_NS), then its arithmetic, compiled on first use in each
#: process: up to galois' lookup limit (2^20 elements) LOOKUP_ELEMENT_NS per element for the
#: tables plus EXTENSION_COMPILE_NS, above it EXTENSION_COMPILE_NS in characteristic 2 and
#: CALCULATE_COMPILE_NS in odd characteristic.  Measured (CPU time of a fresh process, the
#: field built and 6 powers of its primitive element multiplied, one core of the 2-core
#: development machine under load): GF(2^6) 1.8 s, GF(3^4) 2.7 s, GF(101^2) 3.5 s, GF(2^20)
#: 10.2 s, GF(2^34) 2.1 s, GF(46337^2) 9.0 s, GF(7^8) 11.1 s, GF(3^14) 12.9 s.  (GF(q) itself
#: never asks galois: :class:`gctool.algebra.gf.GFArith`)
EXTENSION_CLASS_NS = 2e9
EXTENSION_COMPILE_NS = 1e9
CALCULATE_COMPILE_NS = 10e9
LOOKUP_ELEMENT_NS = 10_000
GALOIS_LOOKUP_LIMIT = 2**20
#: the zeros of g and their longest progression (:func:`bch_certificate`), in ns: BCH_FIXED_NS
#: (the field's arithmetic and n-th roots of unity), a vector step of BCH_STEP_NS plus
#: BCH_POINT_NS per point for each coefficient of g (Horner's rule at the n roots at once),
#: and PROGRESSION_STEP_NS plus PROGRESSION_POINT_NS per point for each step c < n/2 coprime
#: to n (the longest run of zeros along it).  Measured (thread CPU time, median of 3, one core
#: of the 2-core development machine under load; cyclic-MDS codes over GF(2^8), GF(2^12),
#: GF(2^16), GF(7681) and GF(65537), n = 15-4096, s = 2 to n/4): 0.16 ms (n = 16) to 67 ms
#: (n = 4096, s = 1024); the tables of GF(2^8) or GF(2^16) add 0.3-1.3 ms
BCH_FIXED_NS = 300_000
BCH_STEP_NS = 5_000
BCH_POINT_NS = 5
PROGRESSION_STEP_NS = 10_000
PROGRESSION_POINT_NS = 10


def _galois_cost(order: int, p: int) -> float:
    """galois' field of ``order`` elements (characteristic ``p``) and its compiled arithmetic,
    in ns (:data:`EXTENSION_CLASS_NS`)."""
    if order <= GALOIS_LOOKUP_LIMIT:
        arithmetic = order * LOOKUP_ELEMENT_NS + EXTENSION_COMPILE_NS
    else:
        arithmetic = EXTENSION_COMPILE_NS if p == 2 else CALCULATE_COMPILE_NS
    return EXTENSION_CLASS_NS + arithmetic


def bch_cost(code: GradientCode, s: int, rot: Rotation | None) -> float:
    """Estimated work of :func:`bch_certificate` on ``code`` at s stragglers, in ns: the
    zeros of the generator and their longest progression (:data:`BCH_FIXED_NS`; above the
    tables, GF(q)'s products cost :func:`~gctool.algebra.gf.calc_call_ns` per call, the
    powers of alpha included, and :func:`~gctool.algebra.gf.calc_entry_ns` per point), plus
    galois' field in the splitting field GF(q^e) when e > 1
    (:func:`_galois_cost`); 0 when the certificate does not apply (deciding that costs a few
    comparisons)."""
    from gctool.algebra.gf import calc_call_ns, calc_entry_ns

    e = _splitting_degree(code, s, rot)
    if e == 0:
        return 0.0
    assert rot is not None
    n, q = code.n, code.field.order
    g = np.flatnonzero(np.asarray(code.B)[0][(np.arange(n) * rot.c) % n])
    degree = int(g[-1]) + 1 if g.size else 0
    steps = int(np.count_nonzero(np.gcd(np.arange(1, n // 2 + 1 if n > 2 else 2), n) == 1))
    # GF(q)'s own arithmetic above the tables: each product costs a call and its points
    call, point = calc_call_ns(code.field), calc_entry_ns(code.field) or 0.0
    work = (BCH_FIXED_NS + 64 * call + degree * (BCH_STEP_NS + call + (BCH_POINT_NS + point) * n)
            + steps * (PROGRESSION_STEP_NS + PROGRESSION_POINT_NS * n))
    if e > 1:
        return work + _galois_cost(q**e, code.field.p)
    return float(work)


def bch_certificate(code: GradientCode, s: int, rot: Rotation | None) -> str | None:
    """The BCH-bound certificate statement when it applies to ``code`` at s stragglers (at
    the cost :func:`bch_cost`)."""
    e = _splitting_degree(code, s, rot)
    if e == 0:
        return None
    assert rot is not None
    n, q = code.n, code.field.order
    g = np.asarray(code.B)[0][(np.arange(n) * rot.c) % n]  # row i ~ x^i g(x) after relabel
    zero = _zeros_in_field(code, g) if e == 1 else _zeros_in_extension(code, g, e)
    if zero is None or zero[0]:
        return None  # 1 is not in the code; the full-set check reports it
    run, start, step = _longest_progression(zero)
    if run < s:
        return None
    exps = ", ".join(str((start + i * step) % n) for i in range(min(run, 6)))
    more = ", ..." if run > 6 else ""
    return (f"B is cyclic up to row scaling (column shift {rot.c}); its generator g(x) has "
            f"{run} zeros alpha^j, j = {exps}{more} (step {step}, coprime to n = {n}, alpha a "
            f"primitive {n}-th root of unity in GF({q}^{e})), so by the BCH bound the row space "
            f"has minimum distance >= {run + 1} > s = {s}; g(1) != 0 puts 1 in it, and a "
            "failing set would carry a non-zero codeword inside the stragglers (reference §0.3)")


#: the row-class certificate (:func:`class_certificate`) and the row classes
#: (:func:`row_classes_cost`), in ns.  Its sample (:func:`class_sample`): per row keyed
#: CLASS_SAMPLE_ROW_NS, per entry CLASS_SAMPLE_ENTRY_NS (CLASS_COMPLEX_ENTRY_NS more over C), per
#: non-zero entry its normal form, CLASS_KEY_NS over R (CLASS_COMPLEX_KEY_NS more over C) or
#: CLASS_GF_KEY_NS over GF(q).  When the sample holds a witness (two rows of one support, not
#: proportional) the certificate fails on it: CLASS_REJECT_NS (mostly first calls in a fresh
#: process) and the sample.  Else the classes: CLASS_FIXED_NS, per row of B CLASS_ROW_NS over
#: R/C (its key, a Python step) or CLASS_GF_ROW_NS over GF(q), per entry CLASS_ENTRY_NS (its
#: support, in blocks; CLASS_COMPLEX_ENTRY_NS more over C), per non-zero entry CLASS_NONZERO_NS
#: over R/C (its normal form to 11 digits, each part's over C: CLASS_COMPLEX_NONZERO_NS more;
#: over R its exact confirmation in float64 pairs) or CLASS_GF_NONZERO_NS over GF(q)
#: (exactly), and over C CLASS_CROSS_NS per non-zero entry of a row proportional to its class's
#: first row by a factor other than +-1 (its exact confirmation:
#: :func:`gctool.numerics.proportional_pairs`, 8 exact products and an exact sum per part),
#: CLASS_HUGE_NS instead (over R too) when the sampled rows hold entries beyond 2^+-400 (the
#: products on frexp mantissas: 2048 x 512 real scaled classes times 2^500, about 0.55 us per
#: such entry), and over R/C CLASS_HELD_SCAN_NS per entry of a row of each class (the supports
#: of the classes' first rows, for their exact confirmation); then the certificate's checks:
#: per row CLASS_CHECK_ROW_NS and per entry CLASS_CHECK_ENTRY_NS (CLASS_COMPLEX_CHECK_ENTRY_NS
#: more over C: the supports and their quick rejection), and CLASS_SCAN_NS
#: (CLASS_COMPLEX_SCAN_NS more over C) per entry of a row of each class (its support, for the
#: targets' check, all classes of one support size at once).  The non-zero entries, the
#: classes and the scaled rows are estimated on the sample (a row permutation moves the
#: estimate by at most 1.4x on the benchmark's codes, where reading consecutive rows alone read
#: spread classes 0.44-2.6 of their measure).  Fitted by benchmarks/fit_classes.py (thread
#: CPU time of the sample, the estimate and the certificate, first called in a fresh process,
#: median of 3 processes, one core of the 2-core development machine at load 4-7: 0.64-1.77
#: of the estimate on 32 codes; the classes alone, warm, 0.54-2.02 of row_classes_cost; see
#: docs/performance.md for the cases)
CLASS_FIXED_NS = 500_000
CLASS_ROW_NS = 3_200
CLASS_GF_ROW_NS = 1_400
CLASS_ENTRY_NS = 0.6
CLASS_COMPLEX_ENTRY_NS = 1.8
CLASS_NONZERO_NS = 31
CLASS_COMPLEX_NONZERO_NS = 30
CLASS_GF_NONZERO_NS = 35
CLASS_CROSS_NS = 290
CLASS_HUGE_NS = 550
CLASS_HELD_SCAN_NS = 3
CLASS_CHECK_ROW_NS = 800
CLASS_CHECK_ENTRY_NS = 0.8
CLASS_COMPLEX_CHECK_ENTRY_NS = 0.7
CLASS_SCAN_NS = 5.5
CLASS_COMPLEX_SCAN_NS = 2.5
CLASS_SAMPLE_ROWS = 128
CLASS_REJECT_NS = 1_500_000
CLASS_SAMPLE_ROW_NS = 1_500
CLASS_SAMPLE_ENTRY_NS = 1.4
CLASS_KEY_NS = 15
CLASS_COMPLEX_KEY_NS = 60
CLASS_GF_KEY_NS = 35
#: candidate pairs of sampled rows (one support, other keys) that :func:`class_sample` confirms
#: exactly, at most, looking for a rejection of the certificate (over R/C a pair of keys that
#: differ only by round-off is exactly proportional: the next is tried)
CLASS_WITNESS_TRIES = 8


@dataclass(frozen=True)
class ClassSample:
    """What :func:`class_sample` reads of B's rows: the number of rows it keyed (``rows``),
    estimates of B's non-zero entries, of its row classes and of the share of rows whose exact
    confirmation multiplies their entries (``scaled``), whether such entries lie beyond
    :data:`gctool.numerics.PRODUCT_RANGE` (``huge``), and ``witness``: two rows of B with one
    support that are not proportional (exactly), when the sample holds such rows (None
    otherwise).  A witness proves the row-class certificate fails (the two rows lie in classes
    whose supports overlap), which it then says first (:func:`class_certificate`)."""

    rows: int
    nonzeros: float
    classes: float
    scaled: float
    huge: bool
    witness: tuple[int, int] | None


def class_sample(code: GradientCode) -> ClassSample:
    """The class keys (:func:`gctool.row_classes.row_keys`) of at most
    :data:`CLASS_SAMPLE_ROWS` rows drawn at random (seed 0) and of the row after each, and
    what they show (:class:`ClassSample`).  The non-zero entries: the sampled rows' mean scaled
    to n (exact when every row has the same weight, as in frc codes).  Two readings of the
    classes, each blind where the other sees, the smaller taken: runs (one class per row whose
    next row is of another class: exact when classes are runs of consecutive rows, as frc
    codes' are) and pairs of sampled rows of one key (a class of c rows holds c (c - 1) of the
    n (n - 1) ordered pairs: classes of many rows spread over B, e.g. interleaved).  The scaled
    share (rows proportional to their class's first row by a factor other than +-1, over C, or
    over R when entries lie beyond the product range; 0 otherwise): the rows in classes beyond
    their first (n less the classes) times the share of the matching pairs seen whose rows are
    not equal up to sign.  The witness: sampled rows of one support and different keys,
    confirmed exactly (:func:`_rejects`, at most :data:`CLASS_WITNESS_TRIES` pairs).  A
    heuristic but for the witness: the classes are known only once found."""
    from gctool.numerics import PRODUCT_RANGE, _in_product_range
    from gctool.row_classes import row_keys

    B = np.asarray(code.B)
    n, K = B.shape
    rng = np.random.default_rng(0)  # random rows: evenly spaced ones can all be first in
    m = min(CLASS_SAMPLE_ROWS, n - 1)  # their class (every other row, classes of 2)
    at = np.sort(rng.choice(n - 1, m, replace=False)) if m > 0 else np.zeros(0, np.int64)
    rows = np.concatenate([at, at + 1]) if m > 0 else np.arange(n)
    # what the sample reads of its rows' non-zero entries, block by block as row_keys keys
    # them, keeping none (256 dense rows over GF(2^16), n = K = 2000: 4 MB beside B): their
    # count and, over R/C, each row's first (unread for a zero row) and per part (real,
    # imaginary) each block's largest magnitude and smallest non-zero one, all that
    # _in_product_range reads of the entries
    finite = code.field.is_finite
    held = [0]
    leads: list[np.ndarray] = []
    reach: tuple[list[float], list[float]] = ([], [])

    def keep(vals: np.ndarray, counts: np.ndarray) -> None:
        held[0] += int(counts.sum())
        if finite:
            return
        if not vals.size:
            leads.append(np.zeros(counts.size, vals.dtype))
            return
        leads.append(vals[np.minimum(np.cumsum(counts) - counts, vals.size - 1)])
        parts = (vals.real, vals.imag) if np.iscomplexobj(vals) else (vals,)
        for p, part in enumerate(parts):
            mag = np.abs(part)
            reach[p].extend([mag.max(), np.where(mag == 0, PRODUCT_RANGE[0], mag).min()])

    keys = list(row_keys(code, rows, keep))
    nonzeros = float(held[0]) * n / rows.size
    witness = _sampled_witness(code, rows, keys)
    if m == 0:
        return ClassSample(rows.size, nonzeros, float(n), 0.0, False, witness)
    pairs = [(i, m + i) for i in range(m) if keys[i] == keys[m + i]]  # (positions in rows)
    runs = n * (1 - len(pairs) / m)
    seen: dict[bytes | int, list[int]] = {}
    for i in range(m):
        seen.setdefault(keys[i], []).append(i)
    together = [(g[a], g[b]) for g in seen.values() for a in range(len(g))
                for b in range(a + 1, len(g))]  # the sample's pairs of one key
    lucky = max(0, len(together) - 1)  # (one pair may be luck: classes of 2, n = 4096)
    spread = n / (1 + lucky * (n - 1) / (m * (m - 1) / 2)) if m > 1 else float(n)
    pairs += together
    classes = max(1.0, min(runs, spread))
    if finite:
        return ClassSample(rows.size, nonzeros, classes, 0.0, False, witness)
    huge = not _in_product_range(*map(np.array, reach))  # (the sampled rows' entries)
    if not (huge or np.iscomplexobj(B)) or not pairs:
        return ClassSample(rows.size, nonzeros, classes, 0.0, huge, witness)
    # rows of one key: equal up to sign when their first non-zero entries are (keys of one
    a, b = np.concatenate(leads)[np.array(pairs).T]  # key: both rows non-zero)
    scaled = float((n - classes) / n * np.mean((a != b) & (a != -b)))
    return ClassSample(rows.size, nonzeros, classes, scaled, huge, witness)


def _sampled_witness(code: GradientCode, rows: np.ndarray,
                     keys: list[bytes | int]) -> tuple[int, int] | None:
    """Two of the sampled ``rows`` (keys ``keys``) with one support that are not proportional,
    exactly (:func:`_rejects`), or None: per support seen, its first row against the first row
    of each other key, at most :data:`CLASS_WITNESS_TRIES` pairs in all."""
    width = -(-np.shape(code.B)[1] // 8)  # a key starts with the row's packed support
    supports: dict[bytes, dict[bytes, int]] = {}
    for p, key in enumerate(keys):
        if isinstance(key, bytes):  # (a zero row's key is an int)
            supports.setdefault(key[:width], {}).setdefault(key, p)
    tries = [(firsts[0], p) for kinds in supports.values() if len(kinds) > 1
             for firsts in [list(kinds.values())] for p in firsts[1:]]
    ar = _arith(code) if tries else None
    for p, q in tries[:CLASS_WITNESS_TRIES]:
        pair = int(rows[p]), int(rows[q])
        if _rejects(code, pair, ar):
            return pair
    return None


def _rejects(code: GradientCode, pair: tuple[int, int], ar: GFArith | None = None) -> bool:
    """Are the rows ``pair`` of B two different rows with one non-empty support that are not
    proportional (exactly: :func:`_proportional` on the support)?  They then lie in different
    row classes whose supports overlap: the row-class certificate fails."""
    B = np.asarray(code.B)
    i, j = pair
    if i == j or not (0 <= i < B.shape[0] and 0 <= j < B.shape[0]):
        return False
    held = B[i] != 0
    if not held.any() or not np.array_equal(held, B[j] != 0):
        return False
    return not bool(_proportional(code, B[i][None, held], B[j][None, held], ar)[0])


def sampled_nonzeros(code: GradientCode) -> float:
    """The non-zero entries of B, estimated on the rows of :func:`class_sample`."""
    return class_sample(code).nonzeros


def sampled_classes(code: GradientCode) -> tuple[float, float, bool]:
    """The classes, the scaled share and whether entries lie beyond the product range, as
    :func:`class_sample` estimates them."""
    sample = class_sample(code)
    return sample.classes, sample.scaled, sample.huge


def _sample_cost(code: GradientCode, sample: ClassSample) -> float:
    """Reading ``sample`` (:func:`class_sample`), in ns: per row :data:`CLASS_SAMPLE_ROW_NS`,
    per entry :data:`CLASS_SAMPLE_ENTRY_NS` and per non-zero entry its normal form
    (:data:`CLASS_KEY_NS`, ...)."""
    n, K = np.shape(code.B)
    entry, key = CLASS_SAMPLE_ENTRY_NS, CLASS_GF_KEY_NS if code.field.is_finite else CLASS_KEY_NS
    if np.iscomplexobj(code.B):
        entry, key = entry + CLASS_COMPLEX_ENTRY_NS, key + CLASS_COMPLEX_KEY_NS
    r = sample.rows
    return CLASS_SAMPLE_ROW_NS * r + entry * r * K + key * sample.nonzeros * r / n


def row_classes_cost(code: GradientCode, sample: ClassSample | None = None) -> float:
    """Estimated work of finding ``code``'s row classes (:func:`gctool.row_classes.
    find_row_classes`) and of reading ``sample`` (default: :func:`class_sample`'s:
    :func:`_sample_cost`), in ns (:data:`CLASS_FIXED_NS`, ...)."""
    sample = class_sample(code) if sample is None else sample
    n, K = np.shape(code.B)
    finite = code.field.is_finite
    row = CLASS_GF_ROW_NS if finite else CLASS_ROW_NS
    nonzero = CLASS_GF_NONZERO_NS if finite else CLASS_NONZERO_NS
    entry = CLASS_ENTRY_NS
    if np.iscomplexobj(code.B):
        entry, nonzero = entry + CLASS_COMPLEX_ENTRY_NS, nonzero + CLASS_COMPLEX_NONZERO_NS
    cross = CLASS_HUGE_NS if sample.huge else CLASS_CROSS_NS
    held = 0.0 if finite else CLASS_HELD_SCAN_NS * sample.classes * K
    return float(CLASS_FIXED_NS + _sample_cost(code, sample) + row * n + entry * n * K
                 + nonzero * sample.nonzeros + cross * sample.scaled * sample.nonzeros + held)


def class_cost(code: GradientCode, sample: ClassSample | None = None) -> float:
    """Estimated work of :func:`class_certificate` on ``code`` and of reading ``sample``
    (default: :func:`class_sample`'s), in ns: when the sample holds a witness (two rows of one
    support that are not proportional) the certificate fails at once
    (:data:`CLASS_REJECT_NS` and :func:`_sample_cost`), else it finds the row classes
    (:func:`row_classes_cost`) and checks them (:data:`CLASS_CHECK_ROW_NS`, ...; its quick
    rejection of such rows that the sample missed only saves work)."""
    sample = class_sample(code) if sample is None else sample
    if sample.witness is not None:
        return float(CLASS_REJECT_NS + _sample_cost(code, sample))
    n, K = np.shape(code.B)
    entry, scan = CLASS_CHECK_ENTRY_NS, CLASS_SCAN_NS
    if np.iscomplexobj(code.B):
        entry, scan = entry + CLASS_COMPLEX_CHECK_ENTRY_NS, scan + CLASS_COMPLEX_SCAN_NS
    return float(row_classes_cost(code, sample) + CLASS_CHECK_ROW_NS * n + entry * n * K
                 + scan * sample.classes * K)


def class_certificate(code: GradientCode, s: int,
                      find: Callable[[], list[list[int]]] | None = None,
                      sample: ClassSample | None = None) -> str | None:
    """Disjoint row classes (FRC groups and any block-diagonal code): a proof, or None.

    If the classes of proportional non-zero rows have pairwise disjoint supports, every
    target is a combination of one row per class exactly when its restriction to each class
    support is a multiple of that class's row (and it vanishes off every support).  A set of
    s stragglers then decodes whenever it leaves a member of each class the targets need, which
    holds for every such set when s is below the smallest of those classes.  Costs O(n K)
    (:func:`class_cost`).  ``find``: what finds the code's row classes (default
    :func:`gctool.row_classes.row_classes`; ``verify`` finds them once per run,
    :meth:`gctool.audit.verify.run.Run.row_classes`), called only past the quick rejections:
    the witness of ``sample`` (default: :func:`class_sample`'s, the one :func:`class_cost`
    read), confirmed again, then the first two rows of each support (:func:`_shared_support`)."""
    from gctool.row_classes import row_classes, support_groups

    if s < 1:
        return None
    sample = class_sample(code) if sample is None else sample
    ar = _arith(code)
    if sample.witness is not None and _rejects(code, sample.witness, ar):
        return None
    B = np.asarray(code.B)
    nz = B != 0
    if _shared_support(code, nz, ar):
        return None
    found = row_classes(code) if find is None else find()
    classes = [c for c in found if nz[c[0]].any()]
    if not classes:
        return None
    reps = nz[[c[0] for c in classes]]
    if int(reps.sum(axis=0).max()) > 1:
        return None  # supports overlap
    T = code.targets()
    if np.any(T[:, ~reps.any(axis=0)] != 0):
        return None  # a target needs a column no row holds
    lead = np.array([c[0] for c in classes], dtype=np.int64)
    uses = np.zeros(len(classes), dtype=bool)
    groups = support_groups(B, lead)
    for t in T:  # each target's part on each class's support: a multiple of its row?
        for at, cols in groups:
            part = t[cols]
            used = np.any(part != 0, axis=1)
            if not np.all(_proportional(code, B[lead[at[used], None], cols[used]], part[used],
                                        ar)):
                return None
            uses[at[used]] = True
    needed = [len(classes[g]) for g in np.flatnonzero(uses)]
    if not needed or s >= min(needed):
        return None
    return (f"the non-zero rows form {len(classes):,} classes of proportional rows with disjoint "
            f"supports, every target is a combination of one row per class, and each of the "
            f"{len(needed):,} classes it needs has at least {min(needed)} > s = {s} members, so "
            "every set of s stragglers leaves a decoding row in each")


def _shared_support(code: GradientCode, nz: np.ndarray, ar: GFArith | None = None) -> bool:
    """Do two rows with the same non-empty support fail to be proportional?  They then lie
    in different classes whose supports overlap: no certificate.  A quick rejection (the
    first two rows of each support compared, all at once) before every row is classified,
    e.g. for a dense random B."""
    B = np.asarray(code.B)
    first: dict[bytes, int] = {}  # support -> its first row
    pairs: dict[bytes, tuple[int, int]] = {}  # support -> its first two rows
    for j, row in enumerate(np.packbits(nz, axis=1)):
        key = row.tobytes()
        i = first.setdefault(key, j)
        if i != j and key not in pairs:
            pairs[key] = (i, j)
    if not pairs:
        return False
    from gctool.row_classes import support_groups

    two = np.array(list(pairs.values()), dtype=np.int64)
    for at, cols in support_groups(B, two[:, 0]):
        if cols.shape[1] and not np.all(_proportional(code, B[two[at, 0, None], cols],
                                                      B[two[at, 1, None], cols], ar)):
            return True
    return False


def _arith(code: GradientCode) -> GFArith | None:
    """The code's GF(q) arithmetic (None over R/C), built once per certificate: its tables
    cost 0.3 ms for GF(2^8), once per class when :func:`_proportional` built them."""
    if not code.field.is_finite:
        return None
    from gctool.algebra.gf import GFArith

    return GFArith(code.field)


def _proportional(code: GradientCode, rows: np.ndarray, t: np.ndarray,
                  ar: GFArith | None = None) -> np.ndarray:
    """Is ``t[r] = c_r rows[r]`` exactly (c_r non-zero) over the code's field, for each row r
    of the equal-shaped ``rows`` and ``t`` (``ar``: the arithmetic, :func:`_arith`, over
    GF(q))?  One bool per row, all rows at once."""
    rows, t = np.asarray(rows), np.asarray(t)
    if not code.field.is_finite:
        from gctool.numerics import proportional_pairs

        return proportional_pairs(t, rows)
    same = np.all((rows != 0) == (t != 0), axis=1)
    if not rows.shape[1] or not same.any():
        return same
    ar = _arith(code) if ar is None else ar
    assert ar is not None
    rows, t = rows.astype(np.int64), t.astype(np.int64)
    j = np.argmax(rows != 0, axis=1)[:, None]  # each row's first non-zero (0 for zero rows)
    c = ar.mul(np.take_along_axis(t, j, 1), ar.inv(np.take_along_axis(rows, j, 1)))
    return same & np.all(ar.mul(rows, c) == t, axis=1)
