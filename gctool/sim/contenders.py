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
  (``deadline_misses``).

The authors' protocol (``mu`` set; ``gctool simulate --protocol authors --mu MU``), as in
Krishnan et al.'s simulator [C: mamaj/Sequential-Gradient-Coding-2,
``gradient_coding.py``/``multiplexed_sgc.py``/``selective_repeat_sgc.py``, ``perform_round``]:
every round the master waits until (1 + μ) x the fastest worker's time and declares the
workers still running stragglers.  If that straggler set stays inside the scheme's model the
round lasts exactly (1 + μ) x the fastest time; otherwise the master waits for everyone (the
slowest time) and nobody straggles.  "Inside the model" is, for a gradient code file, that the
workers that arrived decode exactly (the authors' GC baseline checks "fewer than s
stragglers", one fewer than an s-tolerant code needs; gctool uses the code's own
decodability), and for SR-SGC / M-SGC that the pattern stays (B, W, λ)-admissible.  The other
contenders under the authors' protocol (``mu_rule`` says which rule a contender follows):

* ignore-stragglers: inside the model when at most s workers are late; it then uses every
  worker that arrived by the wait (rescaled), else it waits for everyone;
* partial work and nested codes: at the wait the master holds every message sent by then
  (partial messages of late workers too); inside the model when they decode exactly, else it
  waits for everyone (every message).  A nested round's level is the smallest level whose
  messages received by then decode;
* heterogeneous codes (one-step approximate decoding, no model to leave): the master stops
  at the wait and sums what arrived (the per-worker straggler flags of ``bernoulli`` are not
  used: the late workers are the stragglers); the error is reported per round;
* ErasureHead (approximate, no model to leave): the master stops at the wait or at its K-th
  arrival, whichever is first, and decodes the groups that arrived;
* CodedReduce (with or without ``--link``): every parent applies the rule to its children's
  arrivals (the wait is (1 + μ) x its first child's arrival; it waits for all its children
  when those that arrived do not decode its level code); the parameter server applies it to
  the arrivals at the master;
* not applied, and said so in the report: uncoded and ring all-reduce (they wait for every
  worker under both rules, so the two coincide) and encoded optimization (its estimate uses
  the fastest n - s workers by design; the μ rule would change the frame's guarantee).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gctool.errors import InvalidInput
from gctool.limits import DEFAULT_TOL
from gctool.model import GradientCode
from gctool.registry.info import SimulationTraits


@dataclass
class Run:
    """What one scheme did over the iterations (rounds) of a simulation."""

    durations: np.ndarray  # (iterations,)
    used: list[np.ndarray] = field(default_factory=list)  # workers the master used, per round
    exact: np.ndarray | None = None  # decoded exactly, per round
    #: sequential schemes: (job, round it was due, decoded, what was delivered)
    jobs: list[tuple[int, int, bool, Any]] = field(default_factory=list)
    deadline_misses: int = 0
    #: ErasureHead: fraction of the k partitions the decoded gradient misses, per round
    lost: np.ndarray | None = None
    #: one-step (heterogeneous) decoding: the error ||c - 1||^2 / k of the round's sum
    error: np.ndarray | None = None
    #: nested codes: the level the round decoded at (0: not exactly), per round
    levels: np.ndarray | None = None
    #: scheme-specific figures copied into the report row (e.g. CodedReduce's levels)
    info: dict[str, Any] = field(default_factory=dict)


@dataclass
class Contender:
    name: str
    kind: str  # uncoded | ignore | code | tree | sgc
    n: int
    loads: np.ndarray  # per-worker fraction of a job's data
    delay: int = 0
    s: int = 0
    code: GradientCode | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # kind-specific data (partial work)
    mu: float | None = None  # the authors' (1 + mu) x fastest straggler rule; None: gctool's

    @property
    def load(self) -> float:
        return float(np.max(self.loads))

    def run(self, times: np.ndarray) -> Run:
        if self.kind == "partial":  # multi-message code using partial work
            from gctool.sim.partial import run_partial

            return run_partial(self, times)
        if self.kind == "encoded":  # encoded optimization: the fastest n - s workers
            from gctool.sim.encoded import run_encoded

            return run_encoded(self, times)
        if self.kind == "nested":  # nested code decoding at the level the stragglers allow
            from gctool.sim.nested import run_nested

            return run_nested(self, times)
        if self.kind in ("ps", "ring") or (self.kind == "tree" and "link" in self.extra):
            from gctool.sim import comm

            if self.kind == "tree":
                return comm.tree_with_link(self, times, self.extra["link"])
            return (comm.run_ps if self.kind == "ps" else comm.run_ring)(self, times)
        if self.mu is not None and self.kind in ("code", "sgc", "ignore"):
            return {"code": _code_mu, "sgc": _sgc_mu, "ignore": _ignore_mu}[self.kind](self, times)
        return {"uncoded": _uncoded, "ignore": _ignore, "code": _code, "tree": _tree,
                "sgc": _sgc, "erasurehead": _erasurehead, "hetero": _hetero}[self.kind](self, times)


#: contender kinds the authors' (1 + μ) rule does not change (see the module docstring)
MU_NOT_APPLIED = {"uncoded": "waits for every worker under both rules",
                  "ring": "waits for every worker under both rules",
                  "encoded": "its estimate uses the fastest n - s workers by design"}


def mu_rule(c: Contender) -> str:
    """Which waiting rule ``c`` follows: ``"authors"`` or ``"gctool"``."""
    return "authors" if c.mu is not None and c.kind not in MU_NOT_APPLIED else "gctool"


def uncoded(n: int) -> Contender:
    return Contender("uncoded", "uncoded", n, np.full(n, 1.0 / n))


def ignore_stragglers(n: int, s: int) -> Contender:
    return Contender(f"ignore-stragglers s={s}", "ignore", n, np.full(n, 1.0 / n), s=s)


def traits(code: GradientCode) -> SimulationTraits:
    """How the simulator runs files of the code's scheme (``SchemeInfo.simulation``; the
    defaults for a scheme name gctool does not know)."""
    from gctool.registry import feature

    found: SimulationTraits = feature(code.scheme, "simulation", SimulationTraits())
    return found


def from_code(code: GradientCode, label: str) -> Contender:
    """A contender for a code file (any scheme gctool can write)."""
    kind = traits(code).kind
    if kind == "encoded":  # data encoding: wait for the fastest n - s
        from gctool.sim.encoded import encoded_contender

        return encoded_contender(code, label)
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


def _ignore_mu(c: Contender, times: np.ndarray) -> Run:
    assert c.mu is not None
    wait = times.min(axis=1) * (1.0 + c.mu)
    arrived = times <= wait[:, None]
    inside = (~arrived).sum(axis=1) <= c.s
    everyone = np.arange(c.n)
    return Run(np.where(inside, wait, times.max(axis=1)),
               [np.flatnonzero(arrived[t]) if inside[t] else everyone for t in range(len(times))],
               np.zeros(len(times), bool))


def level_stop(rule: Any, kids: np.ndarray, mu: float | None) -> tuple[np.ndarray, np.ndarray]:
    """(ready, used) per row of ``kids`` (arrival times of one parent's children, inf: a child
    that never delivered): when the parent has decoded its level code and how many children it
    used; inf when it cannot.  ``mu`` None: the earliest decodable arrival; else the authors'
    rule (wait (1 + mu) x the first arrival, then everyone if that does not decode)."""
    from gctool.sequential.model import from_bits

    rows, f = kids.shape
    if mu is None:
        order, q, ok = rule.earliest(kids, f)
        first = kids[np.arange(rows), order[np.arange(rows), q - 1]]
        return np.where(ok, first, np.inf), np.asarray(q)
    finite = np.isfinite(kids)
    ready, used = np.full(rows, np.inf), np.zeros(rows, np.int64)
    for r in range(rows):
        if not finite[r].any():
            continue
        wait = float(kids[r][finite[r]].min()) * (1.0 + mu)
        got = kids[r] <= wait
        if rule.decodes_mask(from_bits(got)):
            ready[r], used[r] = wait, int(got.sum())
        elif rule.decodes_mask(from_bits(finite[r])):
            ready[r], used[r] = float(kids[r][finite[r]].max()), int(finite[r].sum())
    return ready, used


def _code(c: Contender, times: np.ndarray) -> Run:
    from gctool.sim.stopping import StopRule

    assert c.code is not None
    order, p, exact = StopRule(c.code).earliest(times, c.n - c.s)
    R = len(times)
    durations = times[np.arange(R), order[np.arange(R), p - 1]]
    return Run(durations, [order[t, :p[t]] for t in range(R)], exact)


def erasurehead(code: GradientCode, label: str, arrivals: int) -> Contender:
    """ErasureHead (Wang et al. 2019) on a code of the group shape (FRC): the master stops at
    the exact decoding or at the ``arrivals``-th arrival, whichever comes first, and sums one
    message per group that arrived (the least-squares decoder gives exactly that sum); the
    partitions of the groups with no arrival are lost that round."""
    from gctool.sim.stopping import group_labels

    if group_labels(code) is None:
        raise InvalidInput(f"{label}: ErasureHead needs a code of the group shape (FRC: rows "
                           "constant on disjoint supports that cover every partition)")
    if not 1 <= arrivals <= code.n:
        raise InvalidInput(f"ErasureHead arrivals must be between 1 and n = {code.n}")
    loads = (code.loads / code.k).astype(np.float64)
    return Contender(f"erasurehead {label} stop={arrivals}", "erasurehead", code.n, loads, 0,
                     code.n - arrivals, code)


def _erasurehead(c: Contender, times: np.ndarray) -> Run:
    from gctool.sim.stopping import StopRule

    assert c.code is not None
    rule = StopRule(c.code)
    order, p_exact, _ = rule.earliest(times, c.n)
    stop = c.n - c.s
    p = np.minimum(p_exact, stop)
    R = len(times)
    if c.mu is not None:  # the authors' rule: the wait or the K-th arrival, whichever is first
        kth = times[np.arange(R), order[np.arange(R), stop - 1]]
        durations = np.minimum(times.min(axis=1) * (1.0 + c.mu), kth)
        p = (times <= durations[:, None]).sum(axis=1)
    else:
        durations = times[np.arange(R), order[np.arange(R), p - 1]]
    used = [order[t, :p[t]] for t in range(R)]
    assert rule.labels is not None
    B = np.asarray(c.code.B) != 0
    lost = np.empty(R)
    for t in range(R):
        covered = B[used[t]].any(axis=0)
        lost[t] = 1.0 - covered.mean()
    return Run(durations, used, lost == 0.0, lost=lost)


def _hetero(c: Contender, times: np.ndarray) -> Run:
    """A heterogeneous code (one-step decoding: the master sums what arrived).

    Under a delay model with straggler flags (``bernoulli``, ``markov``) the master waits until
    every worker that does not straggle this round has arrived and sums the messages received
    by then; the error of that round is ``||sum_i W_i - 1||^2 / k`` over the received rows.
    Under other models there are no flags and the file is raced as an ordinary code.
    """
    assert c.code is not None
    bad = c.extra.get("bad")
    R = len(times)
    if c.mu is not None:  # the authors' rule: the late workers are the stragglers
        stop = times.min(axis=1) * (1.0 + c.mu)
    elif bad is None:
        return _code(c, times)
    else:
        good = ~bad[:, : c.n]
        stop = np.where(good.any(axis=1), np.where(good, times, -np.inf).max(axis=1),
                        times.min(axis=1))
    W = np.asarray(c.code.B, dtype=np.float64)
    used = [np.flatnonzero(times[t] <= stop[t]) for t in range(R)]
    error = np.array([float(np.sum((W[u].sum(axis=0) - 1.0) ** 2)) / c.code.k for u in used])
    return Run(stop, used, error <= DEFAULT_TOL, error=error)


def _code_mu(c: Contender, times: np.ndarray) -> Run:
    from gctool.sequential.model import from_bits
    from gctool.sim.stopping import StopRule

    assert c.code is not None and c.mu is not None
    rule = StopRule(c.code)
    wait = times.min(axis=1) * (1.0 + c.mu)
    durations = times.max(axis=1)
    used: list[np.ndarray] = []
    everyone = np.arange(c.n)
    for t, row in enumerate(times):
        arrived = row <= wait[t]
        if rule.decodes_mask(from_bits(arrived)):
            durations[t] = wait[t]
            used.append(np.flatnonzero(arrived))
        else:
            used.append(everyone)
    return Run(durations, used, np.ones(len(times), bool))


def _code_naive(c: Contender, times: np.ndarray) -> Run:
    """The reference path: binary search with the generic decoder, round by round."""
    from gctool.sim.stopping import PrefixDecoder

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
    from gctool.sim.stopping import StopRule

    assert c.code is not None
    levels = levels_of(c.code)
    rules = [StopRule(lv) for lv in levels]
    f = levels[0].n
    R = len(times)
    ready = times.astype(np.float64)
    for rule in reversed(rules):  # deepest parents first
        kids = ready.reshape(-1, f)  # (rounds x parents, f); inf: a child that never decoded
        ready = level_stop(rule, kids, c.mu)[0].reshape(R, -1)
    durations = ready[:, 0]
    exact = np.isfinite(durations)
    used = [np.flatnonzero(times[t] <= durations[t]) for t in range(R)]
    return Run(durations, used, exact)


def _sgc(c: Contender, times: np.ndarray) -> Run:
    from gctool.sequential.model import earliest_admissible_sorted, from_bits
    from gctool.sequential.schedule import scheme_of
    from gctool.sim.stopping import StopRule

    assert c.code is not None
    scheme = scheme_of(c.code, StopRule(c.code).decodes_mask)
    _check_schedule_work(c, scheme, len(times))
    model = scheme.model
    state: Any = scheme.initial()
    history: tuple[int, ...] = ()
    run = Run(np.empty(len(times)), exact=np.ones(len(times), bool))
    order = np.argsort(times, axis=1, kind="stable")
    for r, row in enumerate(times):
        p = max(1, earliest_admissible_sorted(model, history, order[r]))
        run.durations[r] = row[order[r, p - 1]]
        late = np.ones(c.n, bool)
        late[order[r, :p]] = False
        S = from_bits(late)
        state, done = scheme.step(r, state, history, S)
        history = model.push(history, S)
        run.used.append(order[r, :p])
        for job, ok, entry in done:
            run.jobs.append((job, r, ok, entry))
            run.deadline_misses += not ok
    return run


def _check_schedule_work(c: Contender, scheme: Any, rounds: int) -> None:
    """Refuse, before it starts, a schedule simulation above the work budget: every round
    updates the entries of the jobs in flight (the delay T + 1 of them) for every worker, in
    Python (``PY_OP_COST`` per update)."""
    from gctool.limits import PY_OP_COST, check_work

    updates = rounds * (int(getattr(scheme, "delay", 0)) + 1) * c.n
    check_work(f"simulating the {c.name} schedule ({rounds:,} rounds x {c.n} workers x "
               f"{int(getattr(scheme, 'delay', 0)) + 1:,} jobs in flight)", updates * PY_OP_COST,
               "simulate fewer --iterations or a smaller window, or raise --max-work")


def _sgc_mu(c: Contender, times: np.ndarray) -> Run:
    from gctool.sequential.model import from_bits
    from gctool.sequential.schedule import scheme_of
    from gctool.sim.stopping import StopRule

    assert c.code is not None and c.mu is not None
    scheme = scheme_of(c.code, StopRule(c.code).decodes_mask)
    _check_schedule_work(c, scheme, len(times))
    model = scheme.model
    state: Any = scheme.initial()
    history: tuple[int, ...] = ()
    run = Run(np.empty(len(times)), exact=np.ones(len(times), bool))
    everyone = np.arange(c.n)
    for r, row in enumerate(times):
        wait = float(row.min()) * (1.0 + c.mu)
        late = row > wait
        S = from_bits(late)
        if model.allows(history, S):
            run.durations[r] = wait
            run.used.append(np.flatnonzero(~late))
        else:  # the pattern would leave the model: wait for everyone
            S = 0
            run.durations[r] = float(row.max())
            run.used.append(everyone)
        state, done = scheme.step(r, state, history, S)
        history = model.push(history, S)
        for job, ok, entry in done:
            run.jobs.append((job, r, ok, entry))
            run.deadline_misses += not ok
    return run


def _sgc_naive(c: Contender, times: np.ndarray) -> Run:
    """The reference path: the model checked arrival by arrival, the generic decoder."""
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


def run_naive(c: Contender, times: np.ndarray) -> Run:
    """The same run by the naive reference paths (tests and benchmarks compare the two)."""
    if c.kind == "code":
        return _code_naive(c, times)
    if c.kind == "sgc":
        return _sgc_naive(c, times)
    return c.run(times)
