"""Number theory for fields and constructions: primality, prime factors, prime powers,
primitive roots modulo a prime, and the primes the constructions need (pure Python; the orders
here are below 2^31, so trial division suffices)."""

from __future__ import annotations

from gctool.limits import MAX_FIELD_ORDER


def _smallest_prime_factor(q: int) -> int:
    if q % 2 == 0:
        return 2
    f = 3
    while f * f <= q:
        if q % f == 0:
            return f
        f += 2
    return q


def is_prime(p: int) -> bool:
    """Primality by trial division (orders here are below 2^31, so at most ~23,000 steps)."""
    return p >= 2 and _smallest_prime_factor(p) == p


def prime_factors(x: int) -> list[int]:
    """The distinct prime factors of x >= 1, increasing (trial division)."""
    out, f = [], 2
    while f * f <= x:
        if x % f == 0:
            out.append(f)
            while x % f == 0:
                x //= f
        f += 1
    return out + ([x] if x > 1 else [])


def primitive_root(p: int) -> int:
    """The smallest primitive root modulo the prime p (a generator of GF(p)^*)."""
    if p == 2:
        return 1
    factors = prime_factors(p - 1)
    g = 2
    while any(pow(g, (p - 1) // f, p) == 1 for f in factors):
        g += 1
    return g


def prime_power(q: int) -> tuple[int, int] | None:
    """(p, m) with q = p^m, or None if q is not a prime power."""
    if q < 2:
        return None
    p = _smallest_prime_factor(q)
    m, r = 0, q
    while r % p == 0:
        r //= p
        m += 1
    return (p, m) if r == 1 else None


def primes_1_mod(n: int, count: int) -> list[int]:
    """The ``count`` smallest primes p with n | p - 1 (below 2^31)."""
    out: list[int] = []
    p = n + 1
    while len(out) < count and p < MAX_FIELD_ORDER:
        if is_prime(p):
            out.append(p)
        p += n
    return out


def binary_degree(n: int) -> int | None:
    """Smallest m <= 31 with n | 2^m - 1 (n odd), else None."""
    if n % 2 == 0:
        return None
    if n == 1:
        return 1
    for m in range(1, 32):
        if (2**m - 1) % n == 0:
            return m
    return None


def smallest_prime_at_least(x: int) -> int:
    p = max(2, x)
    while not is_prime(p):
        p += 1
    return p
