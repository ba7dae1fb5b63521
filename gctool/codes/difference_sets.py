"""A catalogue of (v, κ, λ) difference sets: symmetric block designs for the ``bibd`` scheme.

A (v, κ, λ) *difference set* D in an abelian group G of order v is a κ-subset such that every
non-zero g in G is a difference d - d' of exactly λ ordered pairs of D.  Its translates
``D + g`` are the blocks of a symmetric (v, κ, λ) design (Kadhe, Koyluoglu, Ramchandran 2019 use
them as gradient codes: workers = blocks, partitions = points; reference §3.5).

Groups are products ``Z_{m_1} x ... x Z_{m_r}``; an element is stored by its mixed-radix index
``sum_t c_t * (m_1 ... m_{t-1})`` (little-endian, so for ``Z_p^e`` it is the usual integer
representation of GF(p^e): base-p digits = polynomial coefficients).  Small fields are built
here (:class:`~gctool.algebra.gf.GFArith` tables, no galois).  Every family below is checked
against the definition after it is built (:func:`check`), so a wrong construction can never
reach a code file.

Families (names accepted by :func:`by_name`):

* ``fano``: (7, 3, 1), D = {0, 1, 3} mod 7 (the reference's example).
* ``pgN-q``: hyperplanes of PG(N, q) (Singer 1938), q a prime power, N >= 2:
  v = (q^{N+1}-1)/(q-1), κ = (q^N-1)/(q-1), λ = (q^{N-1}-1)/(q-1).  ``pg2-q`` is the projective
  plane of order q (λ = 1).
* ``paley-q``: non-zero squares of GF(q), q ≡ 3 (mod 4) a prime power (Paley / quadratic
  residues): (q, (q-1)/2, (q-3)/4), group = the additive group of GF(q).
* ``biquadratic-p``: fourth powers mod a prime p = 4t² + 1 with t odd (Chowla 1944):
  (p, (p-1)/4, (p-5)/16), e.g. (37, 9, 2).
* ``twin-p``: twin primes p, p+2 (Stanton–Sprott 1958):
  (p(p+2), (v-1)/2, (v-3)/4) in Z_p x Z_{p+2}.
* ``bent-V``: V = 4^m, the support of the bent function x·y on F_2^m x F_2^m (a Hadamard/Menon
  difference set): (4^m, 2^{2m-1} - 2^{m-1}, 2^{2m-2} - 2^{m-1}), e.g. (16, 6, 2).
* ``identity-v``: D = {0}, the trivial (v, 1, 0) design (the uncoded scheme).
* ``biplane-V`` (λ = 2) for V in 4, 7, 11, 16, 37: aliases of complement(identity-4),
  complement(fano), paley-11, bent-16 and biquadratic-37.

The complement G \\ D of a (v, κ, λ) difference set is a (v, v-κ, v-2κ+λ) difference set;
:func:`by_params` also searches complements.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from math import isqrt, prod

import numpy as np

from gctool.algebra.fields import Field
from gctool.algebra.gf import GFArith
from gctool.algebra.polynomials import irreducible_poly
from gctool.algebra.primes import is_prime, prime_power
from gctool.errors import DesignError

MAX_V = 4096  # B is v x v; gctool's code size limit


@dataclass(frozen=True)
class DifferenceSet:
    """A (v, κ, λ) difference set ``D`` in ``Z_{moduli[0]} x Z_{moduli[1]} x ...``."""

    name: str
    moduli: tuple[int, ...]
    D: tuple[int, ...]
    lam: int
    family: str

    @property
    def v(self) -> int:
        return prod(self.moduli)

    @property
    def kappa(self) -> int:
        return len(self.D)

    def complement(self) -> DifferenceSet:
        inside = set(self.D)
        rest = tuple(x for x in range(self.v) if x not in inside)
        return DifferenceSet(f"complement of {self.name}", self.moduli, rest,
                             self.v - 2 * self.kappa + self.lam, self.family + " (complement)")


# ---------------------------------------------------------------------------------------------
# group arithmetic on mixed-radix indices
# ---------------------------------------------------------------------------------------------
def digits(x: np.ndarray, moduli: tuple[int, ...]) -> np.ndarray:
    """Mixed-radix digits of group elements given by index (shape ``x.shape + (r,)``)."""
    out = np.empty(x.shape + (len(moduli),), dtype=np.int64)
    for t, m in enumerate(moduli):
        out[..., t] = x % m
        x = x // m
    return out


def encode(d: np.ndarray, moduli: tuple[int, ...]) -> np.ndarray:
    """Inverse of :func:`digits` (digits are reduced mod their moduli first)."""
    weights = np.cumprod((1,) + moduli[:-1]).astype(np.int64)
    out: np.ndarray = (d % np.array(moduli)) @ weights
    return out


#: :func:`incidence` costs this per point of each block and coordinate of the group, in ns,
#: besides the entries of B (:func:`gctool.budget.entries_cost`): the design's CPU time less its
#: entries (6 ns each, pg2-61's) and its check, per point and coordinate: 11 ns for paley-4091
#: (one coordinate, blocks of 2,045 points), 8 for bent-4096 (12 coordinates), best of 5,
#: loaded 2-core machine
INCIDENCE_NS = 8


def incidence_cost(ds: DifferenceSet) -> int:
    """:func:`incidence` of ``ds``, in ns, besides the entries of B."""
    return INCIDENCE_NS * ds.v * len(ds.D) * len(ds.moduli)


def incidence(ds: DifferenceSet) -> np.ndarray:
    """0/1 matrix with ``B[g, x] = 1`` iff ``x - g`` is in D: row g is the block ``D + g``."""
    v = ds.v
    B = np.zeros((v, v), dtype=np.int64)
    D = digits(np.array(ds.D, dtype=np.int64), ds.moduli)  # (κ, r)
    G = digits(np.arange(v, dtype=np.int64), ds.moduli)  # (v, r)
    for lo in range(0, v, 256):
        rows = np.arange(lo, min(v, lo + 256))
        blocks = encode(G[rows, None, :] + D[None, :, :], ds.moduli)  # (b, κ)
        B[rows[:, None], blocks] = 1
    return B


#: pairs (d, d') of :func:`difference_counts` encoded at once (a block of rows of D at a time:
#: the whole κ x κ x r array of bent-4096 is 390 MB)
PAIRS_CHUNK = 1 << 18
#: :func:`check` costs this per pair (d, d') of D and coordinate of the group, in ns ...
CHECK_PAIR_NS = 8
#: ... plus this per pair (the count of its difference)
CHECK_COUNT_NS = 4


def check_cost(ds: DifferenceSet) -> int:
    """:func:`check` of ``ds``, in ns (0.54 s for bent-4096, 4.1 M pairs of 12 coordinates,
    and 54 ms for paley-4091, 4.2 M pairs of one, on the loaded 2-core machine)."""
    pairs = len(ds.D) ** 2
    return pairs * (CHECK_PAIR_NS * len(ds.moduli) + CHECK_COUNT_NS)


def difference_counts(ds: DifferenceSet) -> np.ndarray:
    """How often each group element is a difference d - d' (d ≠ d') of D."""
    D = digits(np.array(ds.D, dtype=np.int64), ds.moduli)
    kappa = len(ds.D)
    counts = np.zeros(ds.v, dtype=np.int64)
    step = max(1, PAIRS_CHUNK // max(1, kappa))
    for lo in range(0, kappa, step):
        diff = encode(D[lo:lo + step, None, :] - D[None, :, :], ds.moduli)
        counts += np.bincount(diff.ravel(), minlength=ds.v)
    counts[0] -= kappa  # the pairs d = d'
    return counts


def check(ds: DifferenceSet) -> None:
    """Raise if ``ds`` is not a (v, κ, λ) difference set (the definition, checked in full)."""
    counts = difference_counts(ds)
    if len(set(ds.D)) != len(ds.D) or np.any(counts[1:] != ds.lam):
        raise DesignError(f"internal check failed: {ds.name} is not a "
                          f"({ds.v}, {ds.kappa}, {ds.lam}) difference set")


# ---------------------------------------------------------------------------------------------
# number theory and small finite fields
# ---------------------------------------------------------------------------------------------
def small_field(q: int) -> Field:
    """GF(q) with the first irreducible polynomial of :func:`irreducible_poly` (a fixed
    labelling of the elements, independent of galois' Conway polynomials)."""
    pe = prime_power(q)
    if pe is None:
        raise DesignError(f"{q} is not a prime power")
    p, e = pe
    return Field("gf", p, e, irreducible_poly(p, e) if e > 1 else None)


def field_tables(q: int) -> tuple[np.ndarray, np.ndarray]:
    """Addition and multiplication tables of GF(q) (small q only: q^2 entries)."""
    F = GFArith(small_field(q))
    a = np.arange(q, dtype=np.int64)
    return F.add(a[:, None], a[None, :]), F.mul(a[:, None], a[None, :])


def additive_moduli(q: int) -> tuple[int, ...]:
    p, e = prime_power(q) or (q, 1)
    return (p,) * e


def nonzero_squares(q: int) -> tuple[int, ...]:
    x = np.arange(1, q, dtype=np.int64)
    return tuple(int(v) for v in np.unique(GFArith(small_field(q)).mul(x, x)))


# ---------------------------------------------------------------------------------------------
# families
# ---------------------------------------------------------------------------------------------
def fano() -> DifferenceSet:
    return DifferenceSet("fano", (7,), (0, 1, 3), 1, "projective plane of order 2")


def identity(v: int) -> DifferenceSet:
    return DifferenceSet(f"identity-{v}", (v,), (0,), 0, "trivial")


def paley(q: int) -> DifferenceSet:
    if prime_power(q) is None or q % 4 != 3 or q < 7:
        raise DesignError(f"paley-{q}: needs a prime power q ≡ 3 (mod 4), q >= 7 "
                          "(e.g. 7, 11, 19, 23, 27, 31, 43)")
    return DifferenceSet(f"paley-{q}", additive_moduli(q), nonzero_squares(q), (q - 3) // 4,
                         "Paley (quadratic residues)")


def biquadratic(p: int) -> DifferenceSet:
    t = isqrt((p - 1) // 4)
    if not (is_prime(p) and 4 * t * t + 1 == p and t % 2 == 1 and t > 1):
        raise DesignError(f"biquadratic-{p}: needs a prime p = 4t^2 + 1 with t odd, t > 1 "
                          "(37, 101, 197, ...)")
    D = tuple(sorted({pow(x, 4, p) for x in range(1, p)}))
    return DifferenceSet(f"biquadratic-{p}", (p,), D, (p - 5) // 16, "biquadratic residues")


def twin(p: int) -> DifferenceSet:
    if not (is_prime(p) and is_prime(p + 2)):
        raise DesignError(f"twin-{p}: needs twin primes p and p+2 (3, 5, 11, 17, 29, ...)")
    r = p + 2

    def chi(x: int, m: int) -> int:
        return 0 if x % m == 0 else (1 if pow(x, (m - 1) // 2, m) == 1 else -1)

    D = [x for x in range(p)]  # (x, 0): index x + p*0
    D += [x + p * y for x in range(1, p) for y in range(1, r) if chi(x, p) * chi(y, r) == 1]
    v = p * r
    return DifferenceSet(f"twin-{p}", (p, r), tuple(sorted(D)), (v - 3) // 4, "twin primes")


def bent(v: int) -> DifferenceSet:
    m = (v.bit_length() - 1) // 2
    if v < 16 or 4**m != v:
        raise DesignError(f"bent-{v}: needs v = 4^m >= 16 (16, 64, 256, 1024, 4096)")
    half = 1 << m
    D = tuple(x + half * y for y in range(half) for x in range(half) if bin(x & y).count("1") % 2)
    return DifferenceSet(f"bent-{v}", (2,) * (2 * m), tuple(sorted(D)),
                         2 ** (2 * m - 2) - 2 ** (m - 1), "bent function (Menon/Hadamard)")


def singer(N: int, q: int) -> DifferenceSet:
    """Hyperplanes of PG(N, q) as a cyclic difference set (Singer's theorem).

    GF(q^{N+1}) is built as GF(q)[x]/(f) for a monic f of degree N+1; α = x must have
    projective order v = (q^{N+1}-1)/(q-1) (first power of α inside GF(q)* is α^v).  Then
    ``{i mod v : α^i lies in the hyperplane "coefficient of x^N is 0"}`` is the difference set.
    Candidates f are tried in a fixed order; the result is checked against the definition.
    """
    if prime_power(q) is None or N < 2:
        raise DesignError(f"pg{N}-{q}: needs a prime power q and N >= 2 (e.g. pg2-3, pg3-2)")
    m = N + 1
    v = (q**m - 1) // (q - 1)
    if v > MAX_V:
        raise DesignError(f"pg{N}-{q} has v = {v} points, above gctool's limit of {MAX_V}")
    add, mul = field_tables(q)
    for tail in _candidate_tails(q, m):
        D = _singer_set(tail, m, v, add, mul)
        if D is not None:
            ds = DifferenceSet(f"pg{N}-{q}", (v,), D, (q ** (N - 1) - 1) // (q - 1),
                               f"Singer: hyperplanes of PG({N},{q})")
            if len(D) == (q**N - 1) // (q - 1) and np.all(difference_counts(ds)[1:] == ds.lam):
                return ds
    raise DesignError(f"pg{N}-{q}: no Singer cycle found (internal error)")


def _candidate_tails(q: int, m: int) -> Iterator[list[int]]:
    """Coefficients (c_0..c_{m-1}) of x^m = sum c_t x^t, with c_0 ≠ 0, in a fixed order."""
    rng = np.random.default_rng(12345)
    for _ in range(20000):
        tail = [int(c) for c in rng.integers(0, q, size=m)]
        if tail[0] != 0:
            yield tail


def _singer_set(tail: list[int], m: int, v: int, add: np.ndarray, mul: np.ndarray
                ) -> tuple[int, ...] | None:
    vec = [1] + [0] * (m - 1)  # α^0 in the basis 1, x, ..., x^{m-1}
    D: list[int] = []
    for i in range(v):
        if i and not any(vec[1:]):
            return None  # α^i in GF(q)* too early: projective order < v
        if vec[m - 1] == 0:
            D.append(i)
        carry = vec[m - 1]
        vec = [0] + vec[:-1]
        for t in range(m):
            vec[t] = int(add[vec[t], mul[carry, tail[t]]])
    if any(vec[1:]) or vec[0] == 0:
        return None
    return tuple(D)


# ---------------------------------------------------------------------------------------------
# lookup
# ---------------------------------------------------------------------------------------------
_BIPLANES: dict[int, Callable[[], DifferenceSet]] = {
    4: lambda: identity(4).complement(),
    7: lambda: fano().complement(),
    11: lambda: paley(11),
    16: lambda: bent(16),
    37: lambda: biquadratic(37),
}
NAMES_HELP = ("fano, biplane-V (V = 4, 7, 11, 16, 37), pg2-Q / pgN-Q (PG(N,Q), Q a prime power), "
              "paley-Q (Q ≡ 3 mod 4), biquadratic-P, twin-P, bent-V (V = 4^m), identity-V")


def _by_name(name: str) -> DifferenceSet:
    key = name.strip().lower()
    if key == "fano":
        return fano()
    match = re.fullmatch(r"([a-z]+?)(\d*)-(\d+)", key)
    if not match:
        raise DesignError(f"unknown design {name!r}; known: {NAMES_HELP}")
    family, order, number = match.group(1), match.group(2), int(match.group(3))
    if family == "pg" and order:
        return singer(int(order), number)
    if order:
        raise DesignError(f"unknown design {name!r}; known: {NAMES_HELP}")
    if family == "biplane":
        if number not in _BIPLANES:
            raise DesignError(f"biplane-{number}: gctool knows biplanes (λ = 2) with v in "
                              f"{sorted(_BIPLANES)}")
        return _BIPLANES[number]()
    makers: dict[str, Callable[[int], DifferenceSet]] = {
        "paley": paley, "biquadratic": biquadratic, "twin": twin, "bent": bent,
        "identity": identity,
    }
    if family not in makers:
        raise DesignError(f"unknown design {name!r}; known: {NAMES_HELP}")
    if number > MAX_V:
        raise DesignError(f"{name}: v = {number} is above gctool's limit of {MAX_V}")
    return makers[family](number)


def by_name(name: str, checked: bool = True) -> DifferenceSet:
    """The named difference set, checked against the definition (unless not ``checked``:
    the caller checks it, :func:`check`, once its budget admits :func:`check_cost`)."""
    ds = _by_name(name)
    if checked:
        check(ds)
    return ds


def candidates(v: int) -> Iterator[tuple[str, int, int]]:
    """Names and (κ, λ) of the catalogue's difference sets with v points (no construction)."""
    if v >= 2:
        yield f"identity-{v}", 1, 0
    for N in range(2, 13):
        for q in range(2, isqrt(v) + 1):
            if prime_power(q) and (q ** (N + 1) - 1) // (q - 1) == v:
                yield (f"pg{N}-{q}", (q**N - 1) // (q - 1), (q ** (N - 1) - 1) // (q - 1))
    if v == 7:
        yield "fano", 3, 1
    if v >= 7 and v % 4 == 3 and prime_power(v):
        yield f"paley-{v}", (v - 1) // 2, (v - 3) // 4
    t = isqrt((v - 1) // 4) if v > 1 else 0
    if t > 1 and t % 2 and 4 * t * t + 1 == v and is_prime(v):
        yield f"biquadratic-{v}", (v - 1) // 4, (v - 5) // 16
    p = isqrt(v + 1) - 1
    if p >= 3 and p * (p + 2) == v and is_prime(p) and is_prime(p + 2):
        yield f"twin-{p}", (v - 1) // 2, (v - 3) // 4
    m = (v.bit_length() - 1) // 2
    if v >= 16 and 4**m == v:
        yield f"bent-{v}", 2 ** (2 * m - 1) - 2 ** (m - 1), 2 ** (2 * m - 2) - 2 ** (m - 1)


def by_params(v: int, kappa: int, lam: int, checked: bool = True) -> DifferenceSet:
    """A catalogue difference set with parameters (v, κ, λ), or its complement's (``checked``:
    as :func:`by_name`)."""
    _check_params(v, kappa, lam)
    for name, k2, l2 in candidates(v):
        if (k2, l2) == (kappa, lam):
            return by_name(name, checked)
        if (v - k2, v - 2 * k2 + l2) == (kappa, lam):
            return by_name(name, checked).complement()
    raise DesignError(_unknown_message(v, kappa, lam))


def _check_params(v: int, kappa: int, lam: int) -> None:
    for label, value, low in (("v", v, 2), ("kappa", kappa, 1), ("lambda", lam, 0)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise DesignError(f"{label} must be an integer >= {low}, got {value!r}")
    if v > MAX_V:
        raise DesignError(f"v = {v} is above gctool's limit of {MAX_V}")
    if kappa >= v:
        raise DesignError(f"kappa = {kappa} must be smaller than v = {v}")
    if lam * (v - 1) != kappa * (kappa - 1):
        raise DesignError(
            f"(v, kappa, lambda) = ({v}, {kappa}, {lam}) is not a symmetric design: it needs "
            f"lambda(v-1) = kappa(kappa-1), here {lam * (v - 1)} != {kappa * (kappa - 1)}"
        )


def _unknown_message(v: int, kappa: int, lam: int) -> str:
    n = kappa - lam
    if v % 2 == 0 and isqrt(n) ** 2 != n:
        why = (f"no such design exists (Bruck-Ryser-Chowla: for even v, kappa - lambda = {n} "
               "must be a square)")
    else:
        why = "no such difference set is in gctool's catalogue (existence unknown to gctool)"
    known = [f"{name} ({w}, {k2}, {l2})" for w in range(max(2, v - 10), v + 11)
             for name, k2, l2 in candidates(w) if not name.startswith("identity")]
    hint = "; nearby designs: " + ", ".join(known) if known else ""
    return f"(v, kappa, lambda) = ({v}, {kappa}, {lam}): {why}{hint}; names: {NAMES_HELP}"
