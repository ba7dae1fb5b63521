"""Sequential schemes stored in code files, and realised schedules.

An SR-SGC or M-SGC design is a gctool code file (``format = "gctool.code"``, version 1) whose
``B`` is the per-round gradient code (SR-SGC: the (n, s)-GC every task is a row of; M-SGC: the
(n, λ)-GC of the D2 groups, or the identity when λ = n and there is no D2) and whose ``params``
hold the model (``burst``, ``window``, ``lambda``), ``delay`` (T, rounds), ``load`` (fraction of
a job's data per worker per round), the periodic slot table ``schedule`` and the ``decoding``
rule.  The schedule is adaptive (reattempts depend on past stragglers), so the file records the
rule; :func:`realise` plays it on a given straggler pattern and returns the table of which
mini-task of which job every worker ran in every round.  No new file format is needed: every
other command reads such a file as the per-round gradient code.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from gctool.errors import CodeFileError, InvalidInput
from gctool.limits import DEFAULT_TOL
from gctool.model import GradientCode
from gctool.sequential.model import BurstyModel, History, members, popcount
from gctool.sequential.sgc import MSGC, SRSGC, Decodes

if TYPE_CHECKING:
    from gctool.sequential.formulas import SchemeFigures


@runtime_checkable
class Scheduled(Protocol):
    """A family of sequential schedules (:class:`gctool.sequential.design.ScheduleFamily`):
    the state machine of a file and the closed-form figures of a design."""

    def schedule(self, code: GradientCode, model: BurstyModel, decodes: Decodes,
                 selection: str | None = None) -> SRSGC | MSGC: ...

    def figures(self, n: int, burst: int, window: int, lam: int) -> SchemeFigures: ...


def schedule_family(scheme: str) -> Scheduled:
    """The sequential family named ``scheme`` (:class:`InvalidInput` when it is not one)."""
    from gctool.registry import SCHEMES

    family = SCHEMES.get(scheme)
    if not isinstance(family, Scheduled):
        known = [name for name, other in SCHEMES.items() if isinstance(other, Scheduled)]
        raise InvalidInput(f"{scheme!r} is not a sequential scheme ({', '.join(known)})")
    return family


def _int_param(code: GradientCode, key: str) -> int:
    value = code.params.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise CodeFileError(f"{code.scheme} file: params.{key} must be an integer, got {value!r}")
    return value


def model_of(code: GradientCode, lam: int | None = None) -> BurstyModel:
    """The (B, W, λ) model recorded in a sequential code file (``lam`` overrides λ)."""
    lam = _int_param(code, "lambda") if lam is None else lam
    try:
        return BurstyModel(code.n, _int_param(code, "burst"), _int_param(code, "window"), lam)
    except InvalidInput as exc:
        raise CodeFileError(f"{code.scheme} file: {exc}") from None


def gc_decodes(code: GradientCode, s: int, verified: bool, tol: float = DEFAULT_TOL) -> Decodes:
    """Decodability of a set of delivering workers (a mask) by the per-round code.

    With ``verified`` (the code is known to tolerate s stragglers) any n - s workers decode
    without computation; smaller sets are decoded once and cached.
    """
    from gctool.decode import Decoder

    decoder = Decoder(code, tol)
    cache: dict[int, bool] = {}
    n = code.n

    def decodes(mask: int) -> bool:
        if verified and popcount(mask) >= n - s:
            return True
        hit = cache.get(mask)
        if hit is None:
            hit = bool(decoder.decode(members(mask)).ok) if mask else False
            cache[mask] = hit
        return hit

    return decodes


def scheme_of(code: GradientCode, decodes: Decodes, lam: int | None = None,
              selection: str | None = None) -> SRSGC | MSGC:
    """The state machine of a sequential code file."""
    family = schedule_family(code.scheme)
    return family.schedule(code, model_of(code, lam), decodes, selection)


def realise(scheme: SRSGC | MSGC, pattern: Sequence[int]) -> list[dict[str, Any]]:
    """Play ``pattern`` (one straggler mask per round) and return, per round, the stragglers,
    every worker's tasks (``[job, part, index]`` per slot, None = idle) and the deadlines met
    or missed in that round."""
    state: Any = scheme.initial()
    history: History = ()
    rounds = []
    for r, S in enumerate(pattern):
        plan = scheme.plan(r, state, history)
        state, done = scheme.step(r, state, history, S)
        rounds.append({
            "round": r,
            "stragglers": members(S),
            "tasks": [[None if t is None else t.to_list() for t in row] for row in plan],
            "deadlines": [{"job": j, "decoded": ok} for j, ok, _ in done],
        })
        history = scheme.model.push(history, S)
    return rounds


def slot_table(scheme: SRSGC | MSGC) -> list[dict[str, Any]]:
    """The periodic part of the schedule: what slot m of round r runs by default."""
    if isinstance(scheme, SRSGC):
        return [{"slot": 0, "job": "r", "task": "worker i computes row i of B for job r",
                 "reattempt": f"job r-{scheme.burst}: if it was missed by v > s = {scheme.s} "
                              f"workers in round r-{scheme.burst}, v-s of them redo it now "
                              f"instead ({scheme.selection})"}]
    table: list[dict[str, Any]] = []
    for m in range(scheme.slots):
        if m < scheme.d1:
            table.append({"slot": m, "job": f"r-{m}" if m else "r", "part": "D1",
                          "task": "the worker's next own D1 mini-task (uncoded)"})
        else:
            g = m - scheme.d1
            table.append({"slot": m, "job": f"r-{m}", "part": "D2", "group": g,
                          "task": f"row i of B on D2 group {g}, if the worker finished its "
                                  f"{scheme.d1} D1 mini-tasks of that job; else its next "
                                  "missing D1 mini-task (reattempt)"})
    return table
