"""Fresh seeds.

A seed gctool draws itself (a randomized design without ``seed``, ``verify sample``,
``simulate``) is below 2**53, so every JSON reader reads it back exactly: jq 1.6, JavaScript
and other readers that hold numbers as IEEE doubles round larger integers, and a rounded seed
rebuilds another code.  Seeds given by the user may be up to 2**63 - 1 (older files).
"""

from __future__ import annotations

import secrets

#: fresh seeds are drawn from 0 .. 2**FRESH_SEED_BITS - 1
FRESH_SEED_BITS = 53
#: largest seed accepted from the user
MAX_SEED = 2**63 - 1


def fresh_seed() -> int:
    """A random seed below 2**53 (exact in every JSON reader)."""
    return secrets.randbits(FRESH_SEED_BITS)
