"""The schemes ``gctool simulate`` races, and when the master stops waiting in each of them.

Waiting rules (gctool's, documented in docs/sequential.md; they are the same principle
for every scheme: stop at the earliest arrival after which the scheme can do its job):

* ``uncoded``: wait for all n workers (k = n partitions, one each).
* ``ignore-stragglers``: use the fastest n - s workers and rescale their sum by n/(n - s).
* a gradient code file: stop at the earliest arrival after which the arrived rows decode
  exactly, or at the (n - s)-th arrival; if they do not decode exactly then (approximate codes)
  the optimal least-squares decoder is used on them.  BCC files follow this rule too: they
  decode exactly once every batch is covered.
* coded-reduce: every parent stops at the earliest arrival of its children that decodes its
  level code; the master is the root.
* sr-sgc / m-sgc: a round ends at the earliest arrival (at least one) after which declaring every
  worker still running a straggler keeps the straggler pattern inside the (B, W, λ) model; the
  verifier guarantees that such patterns meet every deadline, and the simulator checks it again
  (``deadline_misses``).  The authors' simulator instead declares stragglers the workers slower
  than (1 + μ) x the fastest and waits for everyone when that pattern leaves the model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gctool.model import GradientCode


@dataclass
class Run:
    """What one scheme did over the iterations (rounds) of a simulation."""

    durations: np.ndarray  # (iterations,)
    used: list[np.ndarray] = field(default_factory=list)  # workers the master used, per round
    exact: np.ndarray | None = None  # decoded exactly, per round
    #: sequential schemes: (job, round it was due, decoded, what was delivered)
    jobs: list[tuple[int, int, bool, Any]] = field(default_factory=list)
    deadline_misses: int = 0


@dataclass
class Contender:
    name: str
    kind: str  # uncoded | ignore | code | tree | sgc
    n: int
    loads: np.ndarray  # per-worker fraction of a job's data
    delay: int = 0
    s: int = 0
    code: GradientCode | None = None

    @property
    def load(self) -> float:
        return float(np.max(self.loads))

    def run(self, times: np.ndarray) -> Run:
        return {"uncoded": _uncoded, "ignore": _ignore, "code": _code, "tree": _tree,
                "sgc": _sgc}[self.kind](self, times)


def uncoded(n: int) -> Contender:
    return Contender("uncoded", "uncoded", n, np.full(n, 1.0 / n))


def ignore_stragglers(n: int, s: int) -> Contender:
    return Contender(f"ignore-stragglers s={s}", "ignore", n, np.full(n, 1.0 / n), s=s)


def from_code(code: GradientCode, label: str) -> Contender:
    """A contender for a code file (any scheme gctool can write)."""
    kind = {"sr-sgc": "sgc", "m-sgc": "sgc", "coded-reduce": "tree"}.get(code.scheme, "code")
    if kind == "sgc":
        loads = np.full(code.n, float(code.params.get("load", 0.0)))
        return Contender(label, kind, code.n, loads, int(code.params.get("delay", 0)), code.s,
                         code)
    loads = code.loads / code.k
    return Contender(label, kind, code.n, loads.astype(np.float64), 0, code.s, code)


def _uncoded(c: Contender, times: np.ndarray) -> Run:
    everyone = np.arange(c.n)
    return Run(times.max(axis=1), [everyone] * len(times), np.ones(len(times), bool))


def _ignore(c: Contender, times: np.ndarray) -> Run:
    keep = c.n - c.s
    order = np.argsort(times, axis=1, kind="stable")[:, :keep]
    durations = np.take_along_axis(times, order[:, -1:], axis=1)[:, 0]
    return Run(durations, list(order), np.zeros(len(times), bool))


class PrefixDecoder:
    """Earliest decodable prefix of an arrival order (decodability is monotone in the set)."""

    def __init__(self, code: GradientCode, tol: float = 1e-9) -> None:
        from gctool.decode import Decoder

        self.decoder = Decoder(code, tol)
        self.cache: dict[frozenset[int], bool] = {}

    def ok(self, workers: np.ndarray) -> bool:
        key = frozenset(int(i) for i in workers)
        hit = self.cache.get(key)
        if hit is None:
            hit = bool(self.decoder.decode(sorted(key)).ok) if key else False
            if len(self.cache) < 200_000:
                self.cache[key] = hit
        return hit

    def earliest(self, order: np.ndarray, cap: int) -> tuple[int, bool]:
        """(p, exact): smallest p <= cap whose prefix decodes, else (cap, False)."""
        if not self.ok(order[:cap]):
            return cap, False
        lo, hi = 1, cap
        while lo < hi:
            mid = (lo + hi) // 2
            if self.ok(order[:mid]):
                hi = mid
            else:
                lo = mid + 1
        return lo, True


def _code(c: Contender, times: np.ndarray) -> Run:
    assert c.code is not None
    pd = PrefixDecoder(c.code)
    cap = c.n - c.s
    durations = np.empty(len(times))
    used, exact = [], np.empty(len(times), bool)
    for t, row in enumerate(times):
        order = np.argsort(row, kind="stable")
        p, ok = pd.earliest(order, cap)
        durations[t], exact[t] = row[order[p - 1]], ok
        used.append(order[:p])
    return Run(durations, used, exact)


def _tree(c: Contender, times: np.ndarray) -> Run:
    from gctool.sequential.coded_reduce import levels_of

    assert c.code is not None
    levels = levels_of(c.code)
    deciders = [PrefixDecoder(lv) for lv in levels]
    f = levels[0].n
    durations = np.empty(len(times))
    used, exact = [], np.ones(len(times), bool)
    for t, row in enumerate(times):
        ready = row.astype(np.float64)
        for pd in reversed(deciders):  # deepest parents first
            groups = ready.reshape(-1, f)
            nxt = np.empty(len(groups))
            for p, kids in enumerate(groups):
                order = np.argsort(kids, kind="stable")
                q, ok = pd.earliest(order, f)
                nxt[p] = kids[order[q - 1]] if ok else np.inf
            ready = nxt
        durations[t] = ready[0]
        exact[t] = bool(np.isfinite(ready[0]))
        used.append(np.flatnonzero(row <= ready[0]))
    return Run(durations, used, exact)


def _sgc(c: Contender, times: np.ndarray) -> Run:
    from gctool.sequential.model import earliest_admissible, to_mask
    from gctool.sequential.schedule import gc_decodes, scheme_of

    assert c.code is not None
    scheme = scheme_of(c.code, gc_decodes(c.code, c.code.s, verified=False))
    model = scheme.model
    state: Any = scheme.initial()
    history: tuple[int, ...] = ()
    run = Run(np.empty(len(times)), exact=np.ones(len(times), bool))
    for r, row in enumerate(times):
        order = np.argsort(row, kind="stable")
        p = max(1, earliest_admissible(model, history, order.tolist()))
        run.durations[r] = row[order[p - 1]]
        S = model.full & ~to_mask(order[:p].tolist())
        state, done = scheme.step(r, state, history, S)
        history = model.push(history, S)
        run.used.append(order[:p])
        for job, ok, entry in done:
            run.jobs.append((job, r, ok, entry))
            run.deadline_misses += not ok
    return run
