"""``verify partial W``: partial stragglers of a multi-message code (:mod:`gctool.order`).

A *profile* says that worker i finished its first c_i partitions (in its processing order); its
*missing work* is ``sum_i (d_i - c_i)`` partitions.  The master holds every message (group)
that ends at or before position c_i, i.e. the rows ``B[i, group]`` (zero elsewhere), and
decodes when the all-ones vector lies in their span.  ``verify_partial(code, W)`` decides
whether every profile with missing work at most W decodes.

Reductions (both exact):

* decodability only grows with the c_i, so only the *minimal* feasible profiles matter: if
  worker i has completed g_i of its G_i groups, the least missing work that keeps it there is
  ``cost_i(g_i) = d_i - e_i(g_i + 1) + 1`` (it stopped one partition short of the end e_i of
  its next group; 0 when g_i = G_i), and a profile is checked only when lowering any g_i would
  exceed W.  These are enumerated depth-first and decided in batches by the ordinary decoder
  (:class:`gctool.decode.Decoder`, exact over GF(q), within ``tol * k`` over the reals) on the
  code whose rows are the messages.
* **certificate** when every message is one partition: a message is a non-zero multiple of one
  g_j, so a profile decodes exactly when every partition has been finished by one of its
  holders.  Keeping partition j from everyone costs ``W_j = sum_{i holds j} (d_i - pos_i(j))``
  (pos_i(j) = partitions before j in i's order), so every profile with missing work below
  ``W* = min_j W_j`` decodes and one with W* does not: exact over every field, no enumeration.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from dataclasses import field as dc_field
from typing import Any

import numpy as np

from gctool.budget import Budget, Meter
from gctool.decode import DEFAULT_TOL, Decoder, check_tol
from gctool.decode.cost import call_time, decode_time
from gctool.errors import BudgetExceeded, InvalidInput, SearchInterrupted
from gctool.limits import DEFAULT_MAX_PROFILES
from gctool.model import GradientCode
from gctool.numerics import check_tol_applies
from gctool.order import Order
from gctool.reports import Report
from gctool.wording import counted

Progress = Callable[[int, int], None]
_BATCH = 4096


@dataclass
class PartialReport(Report):
    ok: bool
    verdict: str  # "ok" or "fail"
    missing: int  # W: the largest missing work certified
    scheme: str
    n: int
    k: int
    field: str
    messages: int  # messages per round over all workers
    work: int  # total partitions computed per round (sum of loads)
    exact: bool
    method: str  # "certificate" or "exhaustive"
    checked: int  # minimal profiles decided (0 for the certificate)
    counterexample: list[int] | None  # c_i: partitions finished by each worker
    counterexample_missing: int | None
    breaking_work: int | None  # W*: least missing work that breaks decoding, when known
    arithmetic: str
    tolerance: float | None
    reason: str
    elapsed_s: float = 0.0
    notes: list[str] = dc_field(default_factory=list)


def _order_of(code: GradientCode) -> Order:
    if code.m != 1:
        raise InvalidInput("partial stragglers need a one-piece code (params.m = 1)")
    if code.order is None:
        raise InvalidInput("the code has no processing order (one message per worker): design "
                           "it with `order`=natural|rotated [`message_size` G], or add an "
                           "'order' to the file")
    order: Order = code.order
    return order


def message_code(code: GradientCode, order: Order) -> tuple[GradientCode, list[int]]:
    """The code whose rows are the messages (worker-major, in order), and each worker's first
    row."""
    B = np.asarray(code.B)
    rows: list[np.ndarray] = []
    first: list[int] = []
    for i, groups in enumerate(order):
        first.append(len(rows))
        for g in groups:
            r = np.zeros_like(B[i])
            r[list(g)] = B[i, list(g)]
            rows.append(r)
    if not rows:
        raise InvalidInput("the code has no messages (every worker is idle)")
    first.append(len(rows))
    return GradientCode(np.array(rows), code.field, 0, code.scheme), first


def _ends(order: Order) -> list[list[int]]:
    """e_i(g): partitions finished when group g (1-based) of worker i ends."""
    out = []
    for groups in order:
        acc, ends = 0, []
        for g in groups:
            acc += len(g)
            ends.append(acc)
        out.append(ends)
    return out


def _costs(order: Order) -> list[list[int]]:
    """cost_i(g) for g = 0..G_i: least missing work with exactly g groups delivered."""
    out = []
    for ends in _ends(order):
        d = ends[-1] if ends else 0
        out.append([d - ends[g] + 1 for g in range(len(ends))] + [0])
    return out


def _profile(order: Order, g: list[int]) -> list[int]:
    """A partition count c_i realising the group counts g_i at the least missing work."""
    ends = _ends(order)
    return [e[-1] if gi == len(e) else e[gi] - 1 for gi, e in zip(g, ends, strict=True)]


def certificate(code: GradientCode, order: Order) -> tuple[int, int, list[int]] | None:
    """(W*, the partition j reaching it, the profile keeping j from everyone) when every
    message is one partition; None otherwise."""
    if any(len(g) != 1 for groups in order for g in groups):
        return None
    best: tuple[int, int, list[int]] | None = None
    d = [len(groups) for groups in order]
    for j in range(code.k):
        c = list(d)
        cost = 0
        for i, groups in enumerate(order):
            pos = next((p for p, grp in enumerate(groups) if grp[0] == j), None)
            if pos is not None:
                cost += d[i] - pos
                c[i] = pos
        if best is None or cost < best[0]:
            best = (cost, j, c)
    return best


def _minimal_profiles(costs: list[list[int]], budget: int) -> Iterator[list[int]]:
    """Group counts g with sum cost_i(g_i) <= budget that are minimal (lowering any g_i
    exceeds the budget), depth-first, lexicographically from small g."""
    n = len(costs)
    g = [0] * n

    def rec(i: int, used: int) -> Iterator[list[int]]:
        if i == n:
            if all(gi == 0 or used - costs[w][gi] + costs[w][gi - 1] > budget
                   for w, gi in enumerate(g)):
                yield list(g)
            return
        for gi in range(len(costs[i])):
            c = used + costs[i][gi]
            if c <= budget:
                g[i] = gi
                yield from rec(i + 1, c)

    yield from rec(0, 0)


def count_minimal_profiles(costs: list[list[int]], budget: int) -> float:
    """How many profiles :func:`_minimal_profiles` yields (float64: beyond 2^53 approximately,
    inf beyond its range), by dynamic programming over the workers instead of enumeration.

    A profile g is feasible when T = sum_i cost_i(g_i) <= budget and minimal when, for every i
    with g_i > 0, T + delta_i(g_i) > budget, delta_i(g) = cost_i(g - 1) - cost_i(g) (> 0).
    The state after some workers is (T, the smallest delta among them with g_i > 0); deltas
    are group sizes (and 1 for the last group), so the states are few.  Work:
    :func:`count_work`."""
    width = budget + 1
    cap = budget + 1  # a smallest delta above the budget never binds
    states: dict[int, np.ndarray] = {cap: np.zeros(width)}
    states[cap][0] = 1.0
    with np.errstate(over="ignore", invalid="ignore"):
        for c in costs:
            new: dict[int, np.ndarray] = {}
            for m, counts in states.items():
                for g, cost in enumerate(c):
                    if cost >= width:
                        continue
                    key = m if g == 0 else min(m, c[g - 1] - cost, cap)
                    into = new.setdefault(key, np.zeros(width))
                    into[cost:] += counts[: width - cost]
            states = new
        total = 0.0
        for m, counts in states.items():
            total += float(counts[max(0, width - m):].sum())  # T > budget - m
    return total


def count_work(costs: list[list[int]], budget: int) -> int:
    """Work of :func:`count_minimal_profiles`: one pass over budget + 1 counts per worker, group
    count and state (at most the distinct group sizes plus two)."""
    sizes = {c[g - 1] - c[g] for c in costs for g in range(1, len(c))}
    return sum(len(c) for c in costs) * (len(sizes) + 2) * (budget + 1)


def profile_work(mcode: GradientCode, f: int) -> float:
    """Work of deciding one profile whose delivered messages are f rows of the message code:
    one least-squares or elimination system of a batch (:func:`gctool.decode.cost.decode_time`;
    each batch's call on each of its sizes apart, :func:`_batch_work`)."""
    return decode_time(mcode, max(1, f))


def _calls_work(mcode: GradientCode, profiles: int, missing: int, size: int) -> float:
    """The decoder's calls of a search over ``profiles`` minimal profiles, ``size`` a batch:
    one per batch and size of profile in it (a profile delivers mcode.n - missing to mcode.n
    messages), each :func:`gctool.decode.cost.call_time` of the largest."""
    calls = min(profiles, -(-profiles // max(1, size)) * (min(missing, mcode.n) + 1))
    return calls * call_time(mcode, mcode.n)


def _first_failing(dec: Decoder, first: list[int], batch: list[list[int]]) -> list[int] | None:
    """The first profile of ``batch`` (messages finished per worker) whose messages, rows
    ``first[w] + t`` of the message code, do not decode; None when all decode."""
    bad = np.zeros(len(batch), dtype=bool)
    sizes: dict[int, list[int]] = {}
    for idx, g in enumerate(batch):
        sizes.setdefault(sum(g), []).append(idx)
    for f, idxs in sizes.items():
        if f == 0:
            bad[idxs] = True
            continue
        F = np.array([[first[w] + t for w, gw in enumerate(batch[idx]) for t in range(gw)]
                      for idx in idxs], dtype=np.intp)
        bad[idxs] = ~dec.evaluate(F).ok
    hit = np.flatnonzero(bad)
    return batch[int(hit[0])] if hit.size else None


#: what a profile search over budget suggests
SMALLER = "verify a smaller `partial` W, or raise `max_work`"


def _spending(code: GradientCode, mcode: GradientCode, missing: int, costs: list[list[int]],
              max_sets: int, budget: Budget, size: int) -> tuple[Meter, int]:
    """The meter of the profile search and the count of its minimal profiles (0: not
    counted).  The minimal profiles are counted and priced (the largest system each) before
    the first is decided, and refused above the budget; each batch is charged with its own
    systems before it runs, so a search whose count could not be afforded (a huge budget of
    missing work) stops at the work budget with one line."""
    what = f"verify `partial` {missing} (n={code.n}, k={code.k}, {mcode.n:,} messages)"
    total = 0
    top = min(missing, sum(c[0] for c in costs))  # beyond, the budget never binds
    if count_work(costs, top) <= budget.work_ns / 10:
        count = count_minimal_profiles(costs, top)
        shown = f"{count:,.0f}" if count < 1e15 else f"{count:.2g}"
        if count > max_sets:
            raise BudgetExceeded(f"{what} needs {shown} minimal profiles, above the budget of "
                                 f"{max_sets:,}; raise it with `max_sets`", kind="sets",
                                 needed=count, budget=max_sets, param="max_sets")
        total = int(count)
        budget.check_work(f"{what}: {shown} minimal profiles, each one system of up to "
                          f"{mcode.n} x {mcode.B.shape[1]}",
                          count * profile_work(mcode, mcode.n) + count_work(costs, top)
                          + _calls_work(mcode, int(count), missing, size),
                          SMALLER)
    return budget.meter(what, SMALLER), total


def _batch_work(mcode: GradientCode, batch: list[list[int]]) -> float:
    """A batch's systems and its decoder's calls, one per size of profile in it."""
    sizes = [sum(g) for g in batch]
    return (sum(profile_work(mcode, f) for f in sizes)
            + sum(call_time(mcode, max(1, f)) for f in set(sizes)))


def verify_partial(code: GradientCode, missing: int, *, tol: float | None = None,
                   max_sets: int = DEFAULT_MAX_PROFILES, method: str = "auto",
                   progress: Progress | None = None, budget: Budget | None = None
                   ) -> PartialReport:
    """Does every profile with missing work <= ``missing`` decode?  (module docstring)
    ``tol`` (None: the default) is the tolerance of real and complex codes, refused when given
    for a code over a finite field; ``budget`` (default :meth:`Budget.default`) holds the
    search's work and memory."""
    budget = Budget.default() if budget is None else budget
    if isinstance(missing, bool) or not isinstance(missing, int) or missing < 0:
        raise InvalidInput(f"the missing work must be an integer >= 0, got {missing!r}")
    if method not in ("auto", "exhaustive"):
        raise InvalidInput("`method` must be auto or exhaustive")
    check_tol_applies(code.field, tol)
    tol = check_tol(DEFAULT_TOL if tol is None else tol)
    order = _order_of(code)
    t0 = time.perf_counter()
    messages = sum(len(groups) for groups in order)
    budget.check_memory(f"verify `partial` (n={code.n}, k={code.k}): the {messages:,} x "
                        f"{code.k} matrix of the messages", 2 * messages * code.k * 8,
                        "use a code with fewer or larger messages")
    mcode, first = message_code(code, order)
    numeric = code.field.kind != "gf"
    arith = "float64" if numeric else f"exact {code.field}"
    work = sum(len(x) for groups in order for x in groups)
    base: dict[str, Any] = dict(missing=missing, scheme=code.scheme, n=code.n, k=code.k,
                                field=str(code.field), messages=mcode.n, work=work,
                                tolerance=tol if numeric else None)
    cert = certificate(code, order) if method == "auto" else None
    if cert is not None:
        wstar, j, c = cert
        ok = missing < wstar
        reason = (f"every message is one partition, so a profile decodes exactly when every "
                  f"partition is finished by a holder; keeping partition {j} from all its "
                  f"holders takes {counted(wstar, 'partition')} of missing work, the least over "
                  "partitions")
        return PartialReport(
            ok=ok, verdict="ok" if ok else "fail", **base, exact=True, method="certificate",
            checked=0, counterexample=None if ok else c,
            counterexample_missing=None if ok else wstar, breaking_work=wstar,
            arithmetic="none (a coverage argument)", reason=reason,
            elapsed_s=time.perf_counter() - t0)
    dec = Decoder(mcode, tol)
    costs = _costs(order)
    checked = 0
    failing: list[int] | None = None
    chunk: list[list[int]] = []
    size = min(_BATCH, dec.chunk_size(mcode.n))  # at most 2 M entries of message rows
    spend, total = _spending(code, mcode, missing, costs, max_sets, budget, size)

    try:
        for g in _minimal_profiles(costs, missing):
            chunk.append(g)
            if len(chunk) + checked > max_sets:
                raise BudgetExceeded(f"verify `partial` needs more than {max_sets:,} minimal "
                                     "profiles; raise it with `max_sets`", kind="sets",
                                     budget=max_sets, param="max_sets")
            if len(chunk) == size:
                spend.charge(_batch_work(mcode, chunk),
                             f"more than the {checked:,} minimal profiles decided")
                failing = _first_failing(dec, first, chunk)
                checked += len(chunk)
                chunk = []
                if progress is not None:
                    progress(checked, total)
                if failing is not None:
                    break
        if failing is None and chunk:
            spend.charge(_batch_work(mcode, chunk),
                         f"more than the {checked:,} minimal profiles decided")
            failing = _first_failing(dec, first, chunk)
            checked += len(chunk)
    except KeyboardInterrupt:
        raise SearchInterrupted(f"interrupted after {checked:,} minimal profiles; no "
                                "verdict") from None
    ok = failing is None
    profile = None if failing is None else _profile(order, failing)
    miss = None if profile is None else sum(len([x for grp in groups for x in grp]) - ci
                                            for groups, ci in zip(order, profile, strict=True))
    if ok:
        reason = (f"all {checked:,} minimal profiles with missing work <= {missing} decode "
                  "(any profile with less missing work finishes more messages)")
    else:
        reason = (f"workers finishing {profile} partitions ({miss} missing) leave messages that do "
                  "not span the all-ones vector")
    return PartialReport(
        ok=ok, verdict="ok" if ok else "fail", **base, exact=True, method="exhaustive",
        checked=checked, counterexample=profile, counterexample_missing=miss, breaking_work=None,
        arithmetic=arith,
        reason=reason, elapsed_s=time.perf_counter() - t0,
        notes=[] if not numeric else [f"over the reals a profile decodes when its squared "
                                      f"error is <= tol*k (tol {tol:g})"])
