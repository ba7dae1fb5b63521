"""Tandon et al.'s scheme for partial stragglers (Tandon, Lei, Dimakis, Karampatziakis, ICML
2017; the talk's outlook; ``partial_coded.py`` in rashisht1/gradient_coding).

Partial stragglers are slow, not dead: every worker finishes a first part of its work, and at
most s workers fail to finish the rest.  With P partitions per worker the data is cut into
k = n (P - s) partitions:

* ``n (P - s - 1)`` *separate* partitions, P - s - 1 per worker and held by that worker alone
  (worker i: partitions ``i (P-s-1), ..., (i+1)(P-s-1) - 1``);
* n *coded* partitions ``n (P-s-1) + j``, j = 0..n-1, held s + 1 at a time by the cyclic
  repetition code of Tandon's Algorithm 2 (:mod:`gctool.codes.cyclic`; worker i holds
  ``j = i, ..., i+s (mod n)``), its rows scaled so that all n of them add up to the all-ones
  vector (a row scaling keeps the span of any n - s rows).

Every worker first computes its separate partitions and sends their plain sum (message 1), then
its coded partitions and sends its row of the cyclic code on them (message 2): the file's
processing order (:mod:`gctool.order`) has these two groups.  The master decodes from all n
first messages and any n - s second messages.  A worker that is at most P/(P - s - 1) times
slower than the others still delivers its first message in time, which is the scheme's
straggler model (the authors' code prints this bound).

As a one-message code (every worker sends its whole row at the end) the scheme tolerates no
full straggler: a worker that never answers takes its separate partitions with it, so the file
records ``s = 0`` (with every worker it decodes: the messages add up to the full gradient);
its guarantee is for partial stragglers (``params.partial_stragglers``),
which ``gctool verify`` (``partial`` W) certifies for any W <= s missing partitions in total and the
test suite checks in the scheme's own terms (any s workers delivering only message 1).
"""

from __future__ import annotations

from typing import Any

from gctool._lazy import numpy as np
from gctool.algebra.fields import Field
from gctool.budget import Budget
from gctool.errors import DesignError
from gctool.family import Family
from gctool.params import LABEL, Int
from gctool.registry.info import Param

#: random all-worker weights tried (:func:`_all_workers_weights`)
WEIGHT_TRIES = 64

#: the smallest spread min |w| / max |w| of the all-worker weights accepted: they scale the
#: second messages, so decoding them may lose up to log10(1 / spread) digits (6 of float64's
#: 16).  The best of the tries is about 0.3 / n (the smallest of n comparable draws): 6e-3 at
#: n = 50, 1.4e-5 at n = 1000 (the previous floor, 1e-3, refused most seeds from n = 150 on)
MIN_SPREAD = 1e-6


def layout(n: int, s: int, partitions: int) -> tuple[list[list[int]], list[list[int]]]:
    """(separate partitions, coded partitions) of every worker."""
    sep = partitions - s - 1
    separate = [list(range(i * sep, (i + 1) * sep)) for i in range(n)]
    coded = [[n * sep + (i + t) % n for t in range(s + 1)] for i in range(n)]
    return separate, coded


def _all_workers_weights(crc: np.ndarray, rng: Any) -> np.ndarray:
    """Weights w (no entry near 0) with ``sum_i w_i crc_i = 1``: the rows scaled by them add up
    to the all-ones vector, so the file also decodes as a one-message code with every worker
    (any n - s rows still span the same space).

    The solutions are the least-squares one plus the left null space (dimension s); the best
    spread ``min |w| / max |w|`` of :data:`WEIGHT_TRIES` random ones is kept.  The steps are
    scaled to the weights' own size, which the cyclic code's conditioning makes grow with n
    (max |w| is about 400 at n = 50, s = 3): unit steps left every try where it started."""
    n = crc.shape[0]
    a = np.linalg.lstsq(crc.T, np.ones(crc.shape[1], dtype=crc.dtype), rcond=None)[0]
    U, S, _ = np.linalg.svd(crc)
    # left null space: u^H crc = 0 for U's trailing columns u, so crc^T conj(u) = 0
    null = U[:, int(np.sum(S > S[0] * n * np.finfo(float).eps)):].conj()
    scale = float(np.max(np.abs(a)))
    best, spread = a, _spread(a)
    for _ in range(WEIGHT_TRIES):
        w = a + null @ (rng.standard_normal(null.shape[1]) * scale)
        if _spread(w) > spread:
            best, spread = w, _spread(w)
    if spread < MIN_SPREAD:
        raise DesignError(f"tandon-partial: no all-worker weights away from 0 were found "
                          f"(best min|w|/max|w| {spread:.1e}); try another `seed`")
    return np.asarray(best)


def _spread(w: np.ndarray) -> float:
    return float(np.min(np.abs(w)) / np.max(np.abs(w)))


def build(n: int, s: int, k: int | None, field: Field, rng: Any, partitions: int | None = None,
          *, budget: Budget) -> tuple[np.ndarray, dict[str, Any]]:
    from gctool.codes import cyclic

    P = s + 2 if partitions is None else partitions
    if isinstance(P, bool) or not isinstance(P, int) or P < s + 2:
        raise DesignError(f"tandon-partial needs partitions P >= s + 2 per worker (P - s - 1 "
                          f"separate ones and s + 1 coded ones); got P = {P} with s = {s}")
    if s < 1:
        raise DesignError("tandon-partial needs s >= 1 partial stragglers")
    if k is not None and k != n * (P - s):
        raise DesignError(f"tandon-partial has k = n (P - s) = {n * (P - s)} partitions; "
                          "drop -k")
    if field.is_finite:
        raise DesignError(f"tandon-partial is built over the reals or the complex numbers, "
                          f"not {field}")
    # Tandon's Algorithm 2 on the coded block
    crc, _ = cyclic.build(n, s, None, field, rng, budget=budget)
    crc = crc * _all_workers_weights(crc, rng)[:, None]
    separate, coded = layout(n, s, P)
    sep = P - s - 1
    B = np.zeros((n, n * (P - s)), dtype=field.dtype)
    for i in range(n):
        B[i, separate[i]] = 1
        B[i, n * sep:] = crc[i]
    order = [[separate[i], coded[i]] for i in range(n)]
    return B, {"s": 0, "partial_stragglers": s, "partitions": P,
               "layout": f"worker i: separate partitions i*{sep}..(i+1)*{sep}-1 (message 1, "
                         f"their sum), then coded partitions {n * sep}+(i..i+{s} mod n) "
                         "(message 2, row i of Tandon's cyclic code)",
               "slowdown_tolerated": P / sep, "_order": order}


class TandonPartialFamily(Family):
    name = "tandon-partial"
    build = staticmethod(build)
    summary = (
        "Tandon et al.'s partial-straggler scheme: separate partitions first, then a "
        "cyclic code on the rest; two messages per worker."
    )
    description = (
        "P partitions per worker, k = n(P-s): P-s-1 held by the worker alone (sent first, as "
        "their sum) and s+1 coded by Tandon's cyclic repetition code (sent second). The "
        "master decodes from every first message and any n-s second messages, so s workers "
        "at most P/(P-s-1) times slower do not delay it. The file is a two-message code "
        "(its order holds the two groups); as a one-message code it tolerates no full "
        "straggler (s = 0): use verify `partial` and simulate (partial work)."
    )
    reference = (
        "Tandon, Lei, Dimakis, Karampatziakis, ICML 2017 (TLDK17), partial stragglers "
        "(partial_coded.py in rashisht1/gradient_coding)"
    )
    fields = "real, complex"
    randomized = True
    best_of = False
    orderable = False
    uses = frozenset({"n", "s", "field", "seed"})
    params = (Param("partitions", "int", "Partitions per worker P (>= s+2): P-s-1 separate, s+1 "
                    "coded.", default=None, short="-P"),)
    report_keys = ("partial_stragglers", "partitions", "slowdown_tolerated")
    examples = ("gctool design tandon-partial -n 8 -s 2 `partitions` 5 `seed` 1",)
    file_params = {"partial_stragglers": Int(1, "n"), "partitions": Int(1, "k"),
                   "layout": LABEL}
