"""Verify a sequential schedule against the (B, W, λ)-bursty straggler model.

Exact method (small n): breadth-first search over the *reachable states* of the schedule.  A
state is the scheme's bookkeeping of the jobs in progress plus the straggler sets of the last
W - 1 rounds; both transition rules are time-invariant (:mod:`gctool.sequential.sgc`), so two
patterns reaching the same state have the same futures and are merged.  From every state every
admissible straggler set of the next round is tried.  When no new state appears, every
admissible pattern of *every* length has been covered (``method = "reachable-states"``, exact
for all horizons); with ``horizon`` the search stops after that many rounds (exact within the
horizon).  BFS order makes a reported counterexample a shortest one.

Budget: ``max_sets`` counts transitions of unit cost; a transition of a schedule over n workers
with delay T updates n(T + 1) worker slots and counts :func:`step_weight` = ceil(n(T+1)/4) units,
so the budget bounds the time whatever the window (an M-SGC file with W = 10,000 meets it after
a few hundred transitions instead of running for hours).  It is checked after every transition.

Heuristic method (when the exact search exceeds ``max_sets`` transitions): seeded random
adversarial roll-outs of 4(W + T) rounds, for max(1000, max_sets / 10) more transitions. Each
round the adversary draws maximal admissible straggler sets and keeps the one that leaves the
most work undone in the jobs in progress (with probability 0.2 it keeps a random one). A
counterexample it finds is real (it is replayed); finding none proves nothing, and the report
says ``exact = false``.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from gctool.errors import BudgetExceeded, CodeFileError, InvalidInput, SearchInterrupted
from gctool.limits import DEFAULT_SCHEDULE_TRANSITIONS
from gctool.sequential.model import BurstyModel, History, members, popcount
from gctool.sequential.reports import SequentialVerifyReport
from gctool.sequential.schedule import realise
from gctool.sequential.sgc import MSGC, SRSGC
from gctool.wording import counted

if TYPE_CHECKING:
    from gctool.model import GradientCode
    from gctool.reports import VerifyReport
    from gctool.request import VerifyRequest

Progress = Callable[[int, int], None]
Trace = tuple[int, Any] | None  # linked list (S, parent)


class _Failure(Exception):
    def __init__(self, pattern: list[int], job: int, round_: int, states: int = 0,
                 transitions: int = 0) -> None:
        super().__init__("deadline missed")
        self.pattern, self.job, self.round = pattern, job, round_
        self.states, self.transitions = states, transitions


def _unroll(trace: Trace) -> list[int]:
    out: list[int] = []
    while trace is not None:
        out.append(trace[0])
        trace = trace[1]
    return out[::-1]


#: worker-slot updates that one unit of the transition budget pays for
UNIT_UPDATES = 4


def step_weight(scheme: SRSGC | MSGC) -> int:
    """Budget units one transition of ``scheme`` costs (see the module docs)."""
    return max(1, -(-scheme.model.n * (scheme.delay + 1) // UNIT_UPDATES))


def explore(scheme: SRSGC | MSGC, horizon: int | None, max_transitions: int,
            progress: Progress | None = None) -> tuple[str, int, int, int, _Failure | None]:
    """Exact BFS.  Returns (status, rounds, states, transitions, failure); status is "closed",
    "horizon" or "budget"."""
    model = scheme.model
    cap = max_transitions // step_weight(scheme)
    empty: History = ()
    start = (scheme.initial(), empty)
    seen: set[tuple[Any, History]] = {start}
    frontier: list[tuple[Any, History, Trace]] = [(start[0], (), None)]
    transitions, r = 0, 0
    while frontier and (horizon is None or r < horizon):
        nxt: list[tuple[Any, History, Trace]] = []
        for state, history, trace in frontier:
            for S in model.next_sets(history):
                transitions += 1
                if transitions > cap:
                    return "budget", r, len(seen), transitions, None
                new_state, done = scheme.step(r, state, history, S)
                for job, ok, _ in done:
                    if not ok:
                        raise _Failure(_unroll((S, trace)), job, r, len(seen), transitions)
                key = (new_state, model.push(history, S))
                if key not in seen:
                    seen.add(key)
                    nxt.append((new_state, key[1], (S, trace)))
        if progress is not None:
            progress(transitions, cap)
        frontier, r = nxt, r + 1
    return ("closed" if not frontier else "horizon"), r, len(seen), transitions, None


def _damage(scheme: SRSGC | MSGC, state: Any) -> int:
    """Work still missing in the jobs in progress (larger = closer to a missed deadline)."""
    total = 0
    for entry in state:
        if entry is None:
            continue
        if isinstance(scheme, SRSGC):
            total += popcount(scheme.model.full & ~entry)
        else:
            counts, masks = entry
            total += sum(scheme.d1 - c for c in counts)
            total += sum(scheme.n - popcount(m) for m in masks)
    return total


def _random_set(model: BurstyModel, history: History, rng: random.Random) -> int:
    union, old = model._split(history)
    again = [i for i in members(union & ~old & model.full) if rng.random() < 0.7]
    fresh = members(model.full & ~union & ~old)
    budget = max(0, model.lam - popcount(union))
    pick = rng.sample(fresh, min(budget, len(fresh)))
    mask = 0
    for i in again + pick:
        mask |= 1 << i
    return mask


def adversary(scheme: SRSGC | MSGC, rounds: int, budget: int, seed: int,
              candidates: int = 8) -> tuple[int, int, _Failure | None]:
    """Random greedy roll-outs; returns (roll-outs, transitions, failure)."""
    rng = random.Random(seed)
    model, transitions, rollouts = scheme.model, 0, 0
    budget //= step_weight(scheme)
    while transitions < budget:
        rollouts += 1
        state: Any = scheme.initial()
        history: History = ()
        pattern: list[int] = []
        for r in range(rounds):
            if transitions >= budget:
                break
            options = [_random_set(model, history, rng) for _ in range(candidates)]
            scored = []
            for S in options:
                transitions += 1
                new_state, done = scheme.step(r, state, history, S)
                if any(not ok for _, ok, _ in done):
                    job = next(j for j, ok, _ in done if not ok)
                    return rollouts, transitions, _Failure(pattern + [S], job, r)
                scored.append((_damage(scheme, new_state), S, new_state))
            pick = rng.choice(scored) if rng.random() < 0.2 else max(scored, key=lambda x: x[0])
            state, S = pick[2], pick[1]
            pattern.append(S)
            history = model.push(history, S)
    return rollouts, transitions, None


def verify_schedule(
    scheme: SRSGC | MSGC,
    *,
    load: float,
    horizon: int | None = None,
    max_sets: int = DEFAULT_SCHEDULE_TRANSITIONS,
    seed: int = 0,
    progress: Progress | None = None,
    component: dict[str, Any] | None = None,
) -> SequentialVerifyReport:
    """Check that every job meets its deadline under every admissible straggler pattern."""
    model, start = scheme.model, time.perf_counter()
    base = dict(scheme=scheme.name, n=model.n, burst=model.burst, window=model.window,
                lam=model.lam, delay=scheme.delay, load=load, component=component,
                selection=getattr(scheme, "selection", None))
    seen = [0]  # transitions so far, for the interrupted line

    def tick(done: int, total: int) -> None:
        seen[0] = done
        if progress is not None:
            progress(done, total)

    try:
        status, rounds, states, transitions, _ = explore(scheme, horizon, max_sets, tick)
        failure = None
    except _Failure as exc:
        status, failure, rounds = "failed", exc, len(exc.pattern)
        states, transitions = exc.states, exc.transitions
    except KeyboardInterrupt:
        raise SearchInterrupted(f"interrupted during the exhaustive schedule search after "
                                f"{seen[0]:,} transitions; no verdict") from None
    method, heur_seed = "reachable-states", None
    if status == "horizon":
        method = "horizon"
    if status == "budget":
        method, heur_seed = "heuristic", seed
        span = horizon or 4 * (model.window + scheme.delay)
        try:
            rollouts, transitions, failure = adversary(scheme, span, max(1000, max_sets // 10),
                                                       seed)
        except KeyboardInterrupt:
            raise SearchInterrupted("interrupted during the adversarial schedule search; "
                                    "no verdict") from None
        rounds, states = span, rollouts
    base["seed"] = heur_seed  # the adversary's seed (None for the exhaustive search)
    return _report(scheme, base, failure, method, rounds, states, transitions, start)


def _report(scheme: SRSGC | MSGC, base: dict[str, Any], failure: _Failure | None, method: str,
            rounds: int, states: int, transitions: int, start: float) -> SequentialVerifyReport:
    """The report of a search (``method``: reachable-states and horizon are exact, heuristic is
    not); ``base`` holds the scheme's figures and the seed."""
    comp_ok = base["component"] is None or base["component"].get("ok", True)
    counter = None
    if failure is not None:
        counter = {"pattern": [members(S) for S in failure.pattern], "job": failure.job,
                   "deadline_round": failure.round,
                   "schedule": realise(scheme, failure.pattern)}
        reason = (f"job {failure.job} misses its deadline (end of round {failure.round}) under "
                  f"the admissible pattern of {counted(len(failure.pattern), 'round')} shown")
    elif method == "reachable-states":
        reason = (f"every admissible pattern of every length meets every deadline "
                  f"({states:,} reachable states, closed after {rounds} rounds)")
    elif method == "horizon":
        reason = f"every admissible pattern of {rounds} rounds meets every deadline"
    else:
        reason = (f"no deadline missed in {states:,} adversarial roll-outs of {rounds} rounds "
                  "(heuristic: the exhaustive search exceeded `max_sets`)")
    if not comp_ok:
        reason = "the per-round gradient code fails its own tolerance; " + reason
    horizon = None if method == "reachable-states" and failure is None else rounds
    return SequentialVerifyReport(
        ok=failure is None and comp_ok, exact=method != "heuristic" or failure is not None,
        method=method, horizon=horizon, states=states, transitions=transitions,
        counterexample=counter, reason=reason, elapsed_s=time.perf_counter() - start, **base)


# -- verify of a sequential code file (SR-SGC, M-SGC) -------------------------------------
def _request(request: VerifyRequest | None) -> VerifyRequest:
    from gctool.request import VerifyRequest

    return VerifyRequest() if request is None else request


def _budget(request: VerifyRequest) -> int:
    """The transition budget of a schedule or tree audit: the budget's ``max_sets``, else its
    own default."""
    return request.effective_budget.max_sets or DEFAULT_SCHEDULE_TRANSITIONS


def level_verify(code: GradientCode, request: VerifyRequest) -> VerifyReport:
    """The matrix verify of a code the schedule or tree is built from, at its own s, with the
    request's tolerance, budget and executor (``jobs`` local processes or ``runner``)."""
    from gctool.audit.verify import verify

    return verify(code, code.s, tol=request.tol, budget=request.effective_budget,
                  jobs=request.jobs, runner=request.runner)


def _component(code: GradientCode, request: VerifyRequest, per_round: bool
               ) -> tuple[dict[str, Any] | None, bool]:
    """Exact verify of the per-round GC (None when there is none: ``per_round`` False)."""
    if not per_round:
        return None, False
    try:
        rep = level_verify(code, request)
    except BudgetExceeded as exc:
        return {"ok": True, "exact": False, "s": code.s,
                "reason": f"not checked ({exc}); decodability is computed set by set"}, False
    return rep.to_dict(), bool(rep.ok)


def verify_sequential(code: GradientCode, request: VerifyRequest | None = None, *,
                      horizon: int | None = None, per_round: bool = True
                      ) -> SequentialVerifyReport:
    """Verify an SR-SGC/M-SGC schedule: ``request.s`` (None: the file's λ) checks it against
    another λ; ``request.tol``, ``max_sets`` (the transition budget), ``seed`` (of the heuristic
    adversary) and ``progress`` as for ``gctool.verify``.  ``per_round=False``: the schedule
    has no per-round GC to verify (M-SGC with λ = n).

    ``jobs`` and ``runner`` run the per-round GC's verify, the one straggler-set enumeration
    here.  The schedule search itself (:func:`gctool.sequential.verify.verify_schedule`) runs
    in this process: it is a breadth-first search whose next frontier depends on every state
    seen so far (states are merged as they are found, and the BFS order makes a counterexample
    a shortest one), not a sweep of independent ranges that a runner could fold in order.
    """
    from gctool.sequential.schedule import gc_decodes, scheme_of
    from gctool.sequential.verify import verify_schedule

    r = _request(request)
    check_lambda(r.s, code.n)
    component, verified = _component(code, r, per_round)
    scheme = scheme_of(code, gc_decodes(code, code.s, verified, r.tolerance), r.s)
    load = code.params.get("load")
    if not isinstance(load, int | float):
        raise CodeFileError(f"{code.scheme} file: params.load must be a number")
    return verify_schedule(scheme, load=float(load), horizon=horizon, max_sets=_budget(r),
                           seed=r.seed or 0, progress=r.progress, component=component)


def check_lambda(value: int | None, n: int) -> None:
    if value is not None and not 0 <= value <= n:
        raise InvalidInput(f"-s (lambda for a sequential schedule) must be in 0..n = {n}")
