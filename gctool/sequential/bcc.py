"""Batched coupon collector (BCC): Li, Kalan, Avestimehr, Soltanolkotabi, "Near-Optimal
Straggler Mitigation for Distributed Gradient Methods" (2018); reference §6.5.

Follows the paper: the k partitions are grouped into b batches; every worker picks one batch
uniformly at random and sends the plain sum of its batch's partial gradients; the master waits
until every batch has been received from some worker and adds one result per batch.  The
expected number of workers to wait for, over the random choices and a random completion order
with unlimited workers, is the coupon-collector number ``b·H_b``.

gctool's choices: batches are contiguous and their sizes differ by at most one
(``numpy.array_split``); a draw that leaves a batch with no worker can never decode, so it is
redrawn (up to 64 times, the number used is ``params.attempts``); without ``batches`` gctool
takes the largest b with ``b·H_b <= n`` (and b <= k).  The file's ``s`` is the exact worst-case
tolerance of the realised draw: (fewest workers holding one batch) - 1.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from math import comb
from typing import TYPE_CHECKING, Any

from gctool._lazy import numpy as np
from gctool.algebra.fields import Field
from gctool.budget import Budget
from gctool.errors import CodeFileError, DesignError, InvalidInput
from gctool.family import Family
from gctool.params import LABEL, Int, List, Num
from gctool.registry.info import Param

if TYPE_CHECKING:
    from gctool.model import GradientCode
    from gctool.request import BoundRequest
    from gctool.sequential.reports import SequentialBoundReport

MAX_ATTEMPTS = 64
MAX_EXACT_BATCHES = 20  # inclusion-exclusion over subsets of batches


def harmonic(b: int) -> Fraction:
    return sum((Fraction(1, i) for i in range(1, b + 1)), Fraction(0))


def coupon_wait(b: int) -> Fraction:
    """b·H_b: expected draws to see all b batches (reference §6.5)."""
    return b * harmonic(b)


def default_batches(n: int, k: int) -> int:
    """The most batches b with b·H_b <= n (H_b kept as it grows: n = 4096 takes 590 steps)."""
    b, h = 1, Fraction(1)
    while b + 1 <= min(n, k) and (b + 1) * (h + Fraction(1, b + 1)) <= n:
        b, h = b + 1, h + Fraction(1, b + 1)
    return b


def wait_for_counts(n: int, counts: list[int]) -> Fraction:
    """Exact E[workers heard from until every group is covered], completion order uniformly
    random, when group g is held by counts[g] of the n workers (inclusion-exclusion)."""
    g = len(counts)
    total = Fraction(0)
    for t in range(n):
        p = Fraction(0)
        for J in range(1, 1 << g):
            held = sum(c for idx, c in enumerate(counts) if (J >> idx) & 1)
            sign = 1 if bin(J).count("1") % 2 else -1
            p += sign * Fraction(comb(n - held, t), comb(n, t))
        total += p
    return total


def frc_wait(n: int, groups: int) -> Fraction | None:
    """E[T] of FRC with ``groups`` groups of n/groups workers (reference §6.5); None when
    groups does not divide n."""
    if groups < 1 or n % groups:
        return None
    return wait_for_counts(n, [n // groups] * groups)


def build(n: int, s: int | None, k: int | None, field: Field, rng: np.random.Generator,
          batches: int | None = None, *, budget: Budget, **_: Any
          ) -> tuple[np.ndarray, dict[str, Any]]:
    k = n if k is None else k
    b = default_batches(n, k) if batches is None else batches
    if not 1 <= b <= min(n, k):
        raise DesignError(f"`batches` must be between 1 and min(n, k) = {min(n, k)}, got {b}")
    parts = np.array_split(np.arange(k), b)
    batch_of = np.empty(k, dtype=np.int64)
    for g, idx in enumerate(parts):
        batch_of[idx] = g
    attempt = 0
    while attempt < MAX_ATTEMPTS:
        attempt += 1
        choice = rng.integers(0, b, size=n)
        counts = np.bincount(choice, minlength=b)
        if counts.min() > 0:
            break
    if counts.min() == 0:
        raise DesignError(f"in {MAX_ATTEMPTS} draws some batch got no worker (n = {n}, b = {b}); "
                          f"use fewer batches (b·H_b should be well below n; try `batches` "
                          f"{default_batches(n, k)})")
    B = (batch_of[None, :] == choice[:, None]).astype(np.int64)
    params: dict[str, Any] = {
        "batches": b, "batch_of_worker": choice.tolist(), "batch_sizes": [len(p) for p in parts],
        "holders": counts.tolist(), "attempts": attempt,
        "expected_wait": float(coupon_wait(b)), "expected_wait_exact": str(coupon_wait(b)),
        "s": int(counts.min()) - 1,
        "decoding": "wait until every batch was received from some worker; add one result "
                    "per batch (gctool's optimal decoder finds the same vector)",
    }
    return B.astype(field.dtype), params


def check_batches(p: Mapping[str, Any], n: int, k: int) -> None:
    """Cross-field rule of a bcc file: one holder list and size per batch, and every worker's
    batch among them."""
    b = p.get("batches")
    for key in ("holders", "batch_sizes"):
        if b is not None and key in p and len(p[key]) != b:
            raise CodeFileError(f"params.{key} must have one entry per batch ({b})")
    if b is not None and any(x >= b for x in p.get("batch_of_worker", [])):
        raise CodeFileError(f"params.batch_of_worker names a batch outside 0..{b - 1}")


class BCCFamily(Family):
    name = "bcc"
    bound_takes = frozenset()  # the coupon-collector wait of the file's batches
    build = staticmethod(build)
    summary = "Batched coupon collector: each worker computes one random batch (seeded)."
    description = (
        "The k partitions form b batches; each worker picks a batch uniformly at random and "
        "sends its sum; the master waits until every batch is covered. Expected wait "
        "b·H_b workers (coupon collector). Without `batches`, b is the largest with "
        "b·H_b <= n. A draw leaving a batch uncovered is redrawn."
    )
    reference = "Li, Kalan, Avestimehr, Soltanolkotabi 2018 (BCC); reference §6.5"
    randomized = True
    uses = frozenset({"n", "k", "field", "seed"})
    params = (Param("batches", "int", "Number of batches b (default: largest b with "
                    "b·H_b <= n)."),)
    report_keys = ("batches", "expected_wait")
    examples = ("gctool design bcc -n 12 `seed` 1 -o bcc.json",
                "gctool design bcc -n 20 -k 40 `batches` 5 `seed` 2 | gctool bound -")
    file_params = {"batches": Int(1, "k"), "holders": List(Int(0, "n"), 1, "k"),
                   "batch_of_worker": List(Int(0, "k"), "n", "n"),
                   "batch_sizes": List(Int(0, "k")), "expected_wait": Num(0),
                   "expected_wait_exact": LABEL, "decoding": LABEL}
    check_params = staticmethod(check_batches)

    def bound(self, code: GradientCode, request: BoundRequest) -> SequentialBoundReport:
        """The coupon-collector wait (:func:`bcc_bounds`)."""
        if request.link is not None or request.delay is not None:
            raise InvalidInput("`link` and `delay` apply to CodedReduce files only")
        return bcc_bounds(code)


def bcc_bounds(code: GradientCode) -> SequentialBoundReport:
    """Expected workers to wait for: BCC (b·H_b and the realised draw) vs FRC and uncoded."""
    from gctool.sequential.reports import SequentialBoundReport

    n = code.n
    b = int(code.params.get("batches", 0)) or int(code.support.any(axis=0).sum())
    counts = [int(c) for c in code.params.get("holders", [])]
    coupon, frc = coupon_wait(b), frc_wait(n, b)
    realised = (wait_for_counts(n, counts) if counts and len(counts) <= MAX_EXACT_BATCHES
                else None)

    def row(scheme: str, value: Fraction | int | None, note: str) -> dict[str, Any]:
        return {"scheme": scheme, "expected_wait": None if value is None else float(value),
                "exact": None if value is None else str(value), "note": note}

    rows = [
        row("bcc", coupon, f"b·H_b with b = {b} batches (random batch per worker, unlimited "
            "workers)"),
        row("bcc (this draw)", realised,
            "this file's assignment, uniformly random completion order (exact)"
            if realised is not None else f"not computed (more than {MAX_EXACT_BATCHES} batches)"),
        row("frc", frc, f"{b} groups of n/{b} workers, uniformly random completion order"
            if frc is not None else f"needs b = {b} to divide n = {n}"),
        row("uncoded", n, "wait for every worker"),
    ]
    statements = ["BCC: E[workers to wait for] = b·H_b [LKAS18; reference §6.5]",
                  "FRC: E[T] = sum_t P(T > t), P(T > t) = sum_j (-1)^(j+1) C(g,j) "
                  "C(n-jd, t)/C(n, t) [reference §6.5]"]
    findings = []
    if counts and min(counts) == 0:
        findings.append("some batch has no worker: this code can never decode")
    return SequentialBoundReport("bcc", n, {"batches": b}, rows, "uncoded", findings, statements,
                                 not findings)
